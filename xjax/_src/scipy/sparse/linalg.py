"""Krylov-subspace solvers for ``xjax.scipy.sparse.linalg``: ``cg``, ``bicgstab`` and
``gmres``.

Design
------
Every solver is the ``solve`` (and ``transpose_solve``) callback of
``lax.custom_linear_solve``, so derivatives never flow through the iterations: the
tangent or cotangent of a solve is another solve with the same method (implicit
differentiation). Inside that callback the right-hand side, whatever pytree it is, is laid
out as one flat vector of a single inexact dtype (see :class:`_FlatLayout`); the operator
and the preconditioner are wrapped to act on such vectors. The algorithms below are
therefore written for plain 1-D arrays, each iterating a small ``NamedTuple`` through
``lax.while_loop``.

Stopping follows SciPy's (non-legacy) convention: iterate until
``norm(b - A x) <= max(tol * norm(b), atol)`` or the iteration budget is spent. GMRES
minimises the left-preconditioned residual ``M (b - A x)``, so it measures that residual
against the same target rescaled by ``norm(M b) / norm(b)``.

References: Y. Saad, *Iterative Methods for Sparse Linear Systems* (2nd ed., SIAM 2003),
Algorithms 6.9 (GMRES), 6.18 (CG), 7.7 (BiCGSTAB) and 9.1 (preconditioned CG); H. van der
Vorst, "Bi-CGSTAB", SIAM J. Sci. Stat. Comput. 13 (1992).
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import numpy as np

from xjax._src.higher_order.linalg import api as lax_linalg
from xjax._src import higher_order as control_flow, lax
import xjax._src.numpy as jnp
from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.pytree import (tree_flatten, tree_leaves, tree_map, tree_structure,
                                   tree_unflatten)
from xjax._src.scipy.linalg import solve_triangular

__all__ = ["bicgstab", "cg", "gmres"]

_HIGHEST = lax.Precision.HIGHEST


# -- flat vectors ------------------------------------------------------------------------------

class _FlatLayout:
    """How a pytree of arrays is laid end to end in one 1-D vector.

    Parameters
    ----------
    tree : pytree of arrays
        A template (the right-hand side); its structure, leaf shapes and leaf dtypes are
        recorded. The vector's dtype is the leaves' common dtype.
    """

    def __init__(self, tree):
        leaves, self.treedef = tree_flatten(tree)
        self.shapes = [tuple(np.shape(leaf)) for leaf in leaves]
        self.leaf_dtypes = [leaf.dtype for leaf in leaves]
        self.sizes = [int(np.prod(shape, dtype=np.int64)) for shape in self.shapes]
        self.dtype = dtypes.result_type(*leaves) if leaves else np.dtype(np.float32)

    def pack(self, tree):
        """The leaves of ``tree`` (shaped like the template), raveled and concatenated."""
        parts = [jnp.ravel(leaf).astype(self.dtype) for leaf in tree_leaves(tree)]
        if not parts:
            return jnp.zeros((0,), self.dtype)
        return parts[0] if len(parts) == 1 else jnp.concatenate(parts)

    def unpack(self, vector):
        """The pytree whose leaves are consecutive slices of ``vector``, each reshaped and
        cast back to its template leaf's dtype."""
        leaves, offset = [], 0
        for shape, dtype, size in zip(self.shapes, self.leaf_dtypes, self.sizes):
            piece = vector[offset:offset + size].reshape(shape)
            if jnp.iscomplexobj(piece) and not np.issubdtype(dtype, np.complexfloating):
                piece = jnp.real(piece)
            leaves.append(piece.astype(dtype))
            offset += size
        return tree_unflatten(self.treedef, leaves)

    def lift(self, fun):
        """``fun`` (pytree to pytree) as a map between flat vectors."""
        return lambda vector: self.pack(fun(self.unpack(vector)))


def _inner(u, v):
    """``u^H v`` for flat vectors (conjugating the first argument)."""
    return jnp.vdot(u, v, precision=_HIGHEST)


def _sq_norm(v):
    """``||v||^2`` as a real scalar."""
    return jnp.real(_inner(v, v))


def _norm(v):
    return jnp.sqrt(_sq_norm(v))


def _no_preconditioner(v):
    return v


# -- operators and argument checks -------------------------------------------------------------

def _as_linear_map(op):
    """Turn ``A`` (or ``M``) into a function.

    Parameters
    ----------
    op : callable, ndarray, or object with ``@``
        A function is used as given; an array must be a square matrix and multiplies its
        argument; another object with ``__matmul__`` is applied with ``@``.

    Returns
    -------
    callable
        ``x -> op x``.
    """
    if callable(op):
        return op
    is_array = isinstance(op, (np.ndarray, Array))
    if not (is_array or hasattr(op, "__matmul__")):
        raise TypeError(f"linear operator must be either a function or ndarray: {op}")
    shape = getattr(op, "shape", None)
    if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
        raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")
    if is_array:
        return partial(jnp.dot, op, precision=_HIGHEST)
    return lambda x: op @ x


def _as_inexact(leaf):
    leaf = jnp.asarray(leaf)
    if not jnp.issubdtype(leaf.dtype, jnp.inexact):
        leaf = leaf.astype(dtypes.result_type(leaf.dtype, float))
    return leaf


def _prepare(A, b, x0, M, maxiter, check_shapes):
    """Validate and normalise the common arguments; returns ``(A, b, x0, M, maxiter, n)``
    with ``n`` the total number of unknowns."""
    A = _as_linear_map(A)
    M = _no_preconditioner if M is None else _as_linear_map(M)
    b = tree_map(_as_inexact, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    n = sum(int(np.size(leaf)) for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * n  # SciPy's default
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if check_shapes:
        x0_shapes = [np.shape(leaf) for leaf in tree_leaves(x0)]
        b_shapes = [np.shape(leaf) for leaf in tree_leaves(b)]
        if x0_shapes != b_shapes:
            raise ValueError("arrays in x0 and b must have matching shapes: "
                             f"{x0_shapes} vs {b_shapes}")
    return A, b, x0, M, maxiter, n


def _solve_implicitly(method, A, b, x0, M, symmetric):
    """Run ``method(A_flat, M_flat, b_flat, x0_flat) -> x_flat`` as the (transpose) solve of
    ``lax.custom_linear_solve`` so that ``grad``, ``jvp`` and ``vmap`` see a linear solve."""

    def flat_solve(matvec, rhs):
        layout = _FlatLayout(rhs)
        precondition = M if M is _no_preconditioner else layout.lift(M)
        x = method(layout.lift(matvec), precondition, layout.pack(rhs), layout.pack(x0))
        return layout.unpack(x)

    return control_flow.custom_linear_solve(A, b, solve=flat_solve, transpose_solve=flat_solve,
                                   symmetric=symmetric)


def _squared_target(b, tol, atol):
    """``max(tol * ||b||, atol) ** 2``, the bound on ``||b - A x||^2``."""
    return jnp.maximum(jnp.square(tol) * _sq_norm(b), jnp.square(atol))


# -- conjugate gradients -----------------------------------------------------------------------

class _CGIterate(NamedTuple):
    x: Any          # current approximation
    r: Any          # residual b - A x
    p: Any          # search direction
    r_dot_z: Any    # real(r^H M r), the preconditioned residual energy
    r_sq: Any       # ||r||^2, for the stopping test
    count: Any      # iterations done


def _conjugate_gradients(A, M, b, x0, *, tol, atol, maxiter):
    """Preconditioned conjugate gradients on flat vectors (Saad, Algorithm 9.1)."""
    bound = _squared_target(b, tol, atol)
    r = b - A(x0)
    z = M(r)
    start = _CGIterate(x0, r, z, jnp.real(_inner(r, z)), _sq_norm(r), 0)

    def unfinished(it):
        return (it.r_sq > bound) & (it.count < maxiter)

    def advance(it):
        Ap = A(it.p)
        step = it.r_dot_z / jnp.real(_inner(it.p, Ap))
        x = it.x + step * it.p
        r = it.r - step * Ap
        z = M(r)
        r_dot_z = jnp.real(_inner(r, z))
        p = z + (r_dot_z / it.r_dot_z) * it.p
        return _CGIterate(x, r, p, r_dot_z, _sq_norm(r), it.count + 1)

    return control_flow.while_loop(unfinished, advance, start).x


# -- BiCGSTAB ----------------------------------------------------------------------------------

class _BiCGStabIterate(NamedTuple):
    x: Any          # current approximation
    r: Any          # residual b - A x
    p: Any          # search direction
    Ap: Any         # A M p, kept for the next direction update
    rho: Any        # shadow^H r from the previous sweep
    alpha: Any      # BiCG step length of the previous sweep
    omega: Any      # minimal-residual (stabilising) step length of the previous sweep
    count: Any      # sweeps done
    stuck: Any      # a breakdown (rho == 0 or omega == 0) ended the iteration


def _bicgstab_iterate(A, M, b, x0, *, tol, atol, maxiter):
    """Right-preconditioned BiCGSTAB on flat vectors (van der Vorst 1992; Saad,
    Algorithm 7.7), with the initial residual as the fixed shadow vector."""
    bound = _squared_target(b, tol, atol)
    r0 = b - A(x0)
    shadow = r0
    one = jnp.ones((), r0.dtype)
    nothing = jnp.zeros_like(r0)
    start = _BiCGStabIterate(x0, r0, nothing, nothing, one, one, one, 0, jnp.array(False))

    def unfinished(it):
        return (_sq_norm(it.r) > bound) & (it.count < maxiter) & ~it.stuck

    def advance(it):
        rho = _inner(shadow, it.r)
        beta = (rho / it.rho) * (it.alpha / it.omega)
        p = it.r + beta * (it.p - it.omega * it.Ap)
        p_hat = M(p)
        Ap = A(p_hat)
        alpha = rho / _inner(shadow, Ap)
        x_half = it.x + alpha * p_hat
        s = it.r - alpha * Ap
        # the BiCG half step may already be good enough: then skip the stabilising step
        half_is_enough = _sq_norm(s) <= bound
        s_hat = M(s)
        As = A(s_hat)
        omega = _inner(As, s) / _inner(As, As)
        x = jnp.where(half_is_enough, x_half, x_half + omega * s_hat)
        r = jnp.where(half_is_enough, s, s - omega * As)
        stuck = (rho == 0) | (omega == 0)
        return _BiCGStabIterate(x, r, p, Ap, rho, alpha, omega, it.count + 1, stuck)

    return control_flow.while_loop(unfinished, advance, start).x


# -- GMRES -------------------------------------------------------------------------------------

def _extend_krylov_basis(A, M, basis, j):
    """One Arnoldi step: orthonormalise ``M A basis[j]`` against the basis built so far.

    Parameters
    ----------
    basis : array, shape ``(m + 1, n)``
        Orthonormal rows ``0..j``; rows after ``j`` are zero.
    j : int
        The row to expand.

    Returns
    -------
    basis : array
        With row ``j + 1`` set to the new unit vector (zero on breakdown).
    column : array, shape ``(m + 1,)``
        Column ``j`` of the Hessenberg matrix: the coordinates of ``M A basis[j]`` in the
        extended basis.
    exhausted : bool array
        Whether the new direction vanished (to rounding), i.e. the Krylov space is invariant.
    """
    w = M(A(basis[j]))
    size_before = _norm(w)
    column = jnp.zeros(basis.shape[0], basis.dtype)
    # classical Gram-Schmidt applied twice: the second sweep restores the orthogonality
    # the first loses to cancellation ("twice is enough"); zero rows contribute nothing
    for _ in range(2):
        coords = jnp.dot(jnp.conj(basis), w, precision=_HIGHEST)
        w = w - jnp.dot(coords, basis, precision=_HIGHEST)
        column = column + coords
    size_after = _norm(w)
    exhausted = size_after <= jnp.finfo(basis.dtype).eps * size_before
    unit = w / jnp.where(exhausted, 1, size_after).astype(basis.dtype)
    basis = basis.at[j + 1].set(jnp.where(exhausted, 0, unit))
    column = column.at[j + 1].set(jnp.where(exhausted, 0, size_after).astype(basis.dtype))
    return basis, column, exhausted


def _upper_triangular_solve(R, rhs):
    """``R^{-1} rhs`` for upper-triangular ``R``; all NaN when a diagonal entry is exactly
    zero (the Krylov problem is singular), which ``gmres`` reports as ``info == -1``."""
    y = solve_triangular(R, rhs, lower=False)
    singular = jnp.any(jnp.diagonal(R) == 0)
    return jnp.where(singular, jnp.nan, y).astype(rhs.dtype)


def _start_basis(r, r_norm, m):
    unit = r / jnp.where(r_norm > 0, r_norm, 1).astype(r.dtype)
    return jnp.zeros((m + 1, r.shape[0]), r.dtype).at[0].set(unit)


def _gmres_cycle_batched(A, M, r, r_norm, bound, m):
    """One GMRES cycle that builds the whole ``m``-step Arnoldi factorisation, then solves
    the ``(m + 1) x m`` least-squares problem at once through a dense QR factorisation.

    Returns the correction to add to the current approximation.
    """
    del bound  # the cycle always runs its m steps (unless the Krylov space is exhausted)
    basis = _start_basis(r, r_norm, m)
    # columns never reached (after an early exhaustion) hold e_{j+1}: they decouple from
    # the rest and get a zero coefficient, leaving the leading square block to solve
    hessenberg = jnp.eye(m + 1, m, k=-1, dtype=r.dtype)

    def unfinished(carry):
        j, _, _, exhausted = carry
        return (j < m) & ~exhausted

    def advance(carry):
        j, basis, hessenberg, _ = carry
        basis, column, exhausted = _extend_krylov_basis(A, M, basis, j)
        return j + 1, basis, hessenberg.at[:, j].set(column), exhausted

    _, basis, hessenberg, _ = control_flow.while_loop(
        unfinished, advance, (0, basis, hessenberg, jnp.array(False)))
    q, R = lax_linalg.qr(hessenberg, full_matrices=False)
    # the right-hand side is r_norm * e_0, so Q^H of it is r_norm times Q's first row
    coeffs = _upper_triangular_solve(R, r_norm.astype(r.dtype) * jnp.conj(q[0]))
    return jnp.dot(coeffs, basis[:m], precision=_HIGHEST)


def _givens_pair(a, b):
    """``(c, s)`` with ``[[conj(c), conj(s)], [-s, c]] @ [a, b] == [rho, 0]`` (a unitary
    rotation); the identity when ``a == b == 0``."""
    scale = jnp.maximum(jnp.abs(a), jnp.abs(b))
    empty = scale == 0
    scale = jnp.where(empty, 1, scale)
    a, b = a / scale, b / scale
    length = jnp.sqrt(jnp.square(jnp.abs(a)) + jnp.square(jnp.abs(b))).astype(a.dtype)
    length = jnp.where(empty, 1, length)
    return jnp.where(empty, 1, a / length), jnp.where(empty, 0, b / length)


def _apply_givens(vector, i, c, s):
    """Rotate entries ``i`` and ``i + 1`` of ``vector`` by the pair ``(c, s)``."""
    top, bottom = vector[i], vector[i + 1]
    vector = vector.at[i].set(jnp.conj(c) * top + jnp.conj(s) * bottom)
    return vector.at[i + 1].set(c * bottom - s * top)


class _GivensCycle(NamedTuple):
    j: Any          # Arnoldi steps done in this cycle
    basis: Any      # (m + 1, n) orthonormal Krylov vectors as rows
    R: Any          # (m, m) triangular factor of the Hessenberg matrix (identity beyond j)
    g: Any          # (m + 1,) rotated right-hand side r_norm * e_0
    cos: Any        # (m,) the rotations applied so far (identity beyond j)
    sin: Any
    residual: Any   # |g[j]|: the least-squares residual of the current cycle
    exhausted: Any  # the Krylov space became invariant


def _gmres_cycle_incremental(A, M, r, r_norm, bound, m):
    """One GMRES cycle that triangularises the Hessenberg matrix with Givens rotations as
    each column arrives, which yields the residual norm at every step, so the cycle stops
    as soon as it is small enough.

    Returns the correction to add to the current approximation.
    """
    dtype = r.dtype
    start = _GivensCycle(
        j=0, basis=_start_basis(r, r_norm, m), R=jnp.eye(m, dtype=dtype),
        g=jnp.zeros(m + 1, dtype).at[0].set(r_norm.astype(dtype)),
        cos=jnp.ones(m, dtype), sin=jnp.zeros(m, dtype), residual=r_norm,
        exhausted=jnp.array(False))

    def unfinished(cyc):
        return (cyc.j < m) & (cyc.residual > bound) & ~cyc.exhausted

    def advance(cyc):
        j = cyc.j
        basis, column, exhausted = _extend_krylov_basis(A, M, cyc.basis, j)
        # earlier rotations first (those not yet made are identities, harmless to apply)
        column = control_flow.fori_loop(
            0, m, lambda i, col: _apply_givens(col, i, cyc.cos[i], cyc.sin[i]), column)
        c, s = _givens_pair(column[j], column[j + 1])
        column = _apply_givens(column, j, c, s)
        g = _apply_givens(cyc.g, j, c, s)
        return _GivensCycle(j + 1, basis, cyc.R.at[:, j].set(column[:m]), g,
                            cyc.cos.at[j].set(c), cyc.sin.at[j].set(s),
                            jnp.abs(g[j + 1]), exhausted)

    done = control_flow.while_loop(unfinished, advance, start)
    # only the first j entries of g belong to the columns built; the rest must not leak
    # into the identity columns standing in for the missing ones
    rhs = jnp.where(jnp.arange(m) < done.j, done.g[:m], 0)
    coeffs = _upper_triangular_solve(done.R, rhs)
    return jnp.dot(coeffs, done.basis[:m], precision=_HIGHEST)


class _RestartState(NamedTuple):
    x: Any          # current approximation
    r: Any          # preconditioned residual M (b - A x)
    r_norm: Any     # its norm
    cycles: Any     # restarts done


def _restarted_gmres(A, M, b, x0, *, tol, atol, restart, maxiter, cycle):
    """GMRES(``restart``) with left preconditioning on flat vectors: run ``cycle`` from the
    latest approximation until the preconditioned residual meets its bound or ``maxiter``
    cycles have run."""
    b_norm = _norm(b)
    target = jnp.maximum(tol * b_norm, atol)  # for ||b - A x||
    # the same relative accuracy, measured on the preconditioned residual M (b - A x)
    safe_b_norm = jnp.where(b_norm > 0, b_norm, 1)
    bound = jnp.where(b_norm > 0, _norm(M(b)) * jnp.minimum(1, target / safe_b_norm), target)

    def preconditioned_residual(x):
        r = M(b - A(x))
        return r, _norm(r)

    r, r_norm = preconditioned_residual(x0)

    def unfinished(state):
        return (state.r_norm > bound) & (state.cycles < maxiter)

    def advance(state):
        x = state.x + cycle(A, M, state.r, state.r_norm, bound, restart)
        r, r_norm = preconditioned_residual(x)
        return _RestartState(x, r, r_norm, state.cycles + 1)

    return control_flow.while_loop(unfinished, advance, _RestartState(x0, r, r_norm, 0)).x


_GMRES_CYCLES = {"batched": _gmres_cycle_batched, "incremental": _gmres_cycle_incremental}


# -- public solvers ----------------------------------------------------------------------------

def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by conjugate gradients, ``A`` Hermitian positive definite.

    Derivatives come from implicit differentiation with another ``cg`` solve, not from
    differentiating the iterations: they are accurate when both solves converge.

    Parameters
    ----------
    A : ndarray, callable, or object with ``@``
        The matrix, or a function computing ``A x`` from ``x`` (a pytree like ``b``).
    b : array or pytree of arrays
        The right-hand side.
    x0 : array or pytree of arrays, optional
        The starting guess (zeros by default), with ``b``'s structure and shapes.
    tol, atol : float
        Stop when ``norm(r) <= max(tol * norm(b), atol)`` (SciPy's non-legacy rule).
    maxiter : int, optional
        At most this many iterations (default ``10 * b.size``).
    M : ndarray, callable, or object with ``@``, optional
        A preconditioner approximating the inverse of ``A`` (Hermitian positive definite).

    Returns
    -------
    x : array or pytree of arrays
        The solution, with ``b``'s structure.
    info : None
        A placeholder for convergence information, as in JAX.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.sparse.linalg import cg
    >>> a = jnp.array([[4., 1.], [1., 3.]])
    >>> x, _ = cg(a, jnp.array([1., 2.]))
    >>> bool(jnp.allclose(x, jnp.array([1 / 11, 7 / 11]), atol=1e-5))
    True
    """
    A, b, x0, M, maxiter, _ = _prepare(A, b, x0, M, maxiter, check_shapes=True)
    method = partial(_conjugate_gradients, tol=tol, atol=atol, maxiter=maxiter)
    # a real positive-definite operator is symmetric, so the transposed solve is the solve
    real = not any(jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    return _solve_implicitly(method, A, b, x0, M, symmetric=real), None


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by the biconjugate gradient stabilized method (any nonsingular
    ``A``).

    Derivatives come from implicit differentiation with another ``bicgstab`` solve (of the
    transposed system), not from differentiating the iterations.

    Parameters
    ----------
    A : ndarray, callable, or object with ``@``
        The matrix, or a function computing ``A x`` from ``x`` (a pytree like ``b``).
    b : array or pytree of arrays
        The right-hand side.
    x0 : array or pytree of arrays, optional
        The starting guess (zeros by default), with ``b``'s structure and shapes.
    tol, atol : float
        Stop when ``norm(r) <= max(tol * norm(b), atol)`` (SciPy's non-legacy rule).
    maxiter : int, optional
        At most this many iterations (default ``10 * b.size``).
    M : ndarray, callable, or object with ``@``, optional
        A preconditioner approximating the inverse of ``A``.

    Returns
    -------
    x : array or pytree of arrays
        The solution, with ``b``'s structure.
    info : None
        A placeholder for convergence information, as in JAX.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.sparse.linalg import bicgstab
    >>> a = jnp.array([[4., 1.], [2., 3.]])
    >>> x, _ = bicgstab(a, jnp.array([1., 2.]))
    >>> bool(jnp.allclose(x, jnp.array([0.1, 0.6]), atol=1e-5))
    True
    """
    A, b, x0, M, maxiter, _ = _prepare(A, b, x0, M, maxiter, check_shapes=True)
    method = partial(_bicgstab_iterate, tol=tol, atol=atol, maxiter=maxiter)
    return _solve_implicitly(method, A, b, x0, M, symmetric=False), None


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve ``A x = b`` by restarted GMRES (any nonsingular ``A``).

    Derivatives come from implicit differentiation with another ``gmres`` solve (of the
    transposed system), not from differentiating the iterations.

    Parameters
    ----------
    A : ndarray, callable, or object with ``@``
        The matrix, or a function computing ``A x`` from ``x`` (a pytree like ``b``).
    b : array or pytree of arrays
        The right-hand side.
    x0 : array or pytree of arrays, optional
        The starting guess (zeros by default), with ``b``'s structure and shapes.
    tol, atol : float
        Stop when ``norm(r) <= max(tol * norm(b), atol)`` (SciPy's non-legacy rule). With a
        preconditioner the residual minimised and tested is ``M r``, against that bound
        scaled by ``norm(M b) / norm(b)``.
    restart : int
        The Krylov subspace's size between restarts (at most ``b``'s size).
    maxiter : int, optional
        At most this many restarts (default ``10 * b.size``).
    M : ndarray, callable, or object with ``@``, optional
        A (left) preconditioner approximating the inverse of ``A``.
    solve_method : {'batched', 'incremental'}
        ``'incremental'`` factors the Krylov problem by Givens rotations as it grows and
        may stop a restart early; ``'batched'`` solves it at the end of each restart.

    Returns
    -------
    x : array or pytree of arrays
        The solution, with ``b``'s structure.
    info : Array
        0, or -1 when the solution holds NaN (as JAX reports), e.g. when the operator is
        exactly singular on the Krylov space.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.sparse.linalg import gmres
    >>> a = jnp.array([[4., 1.], [2., 3.]])
    >>> x, info = gmres(a, jnp.array([1., 2.]))
    >>> bool(jnp.allclose(x, jnp.array([0.1, 0.6]), atol=1e-5)), int(info)
    (True, 0)
    """
    A, b, x0, M, maxiter, n = _prepare(A, b, x0, M, maxiter, check_shapes=True)
    if solve_method not in _GMRES_CYCLES:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")
    method = partial(_restarted_gmres, tol=tol, atol=atol, restart=max(min(restart, n), 1),
                     maxiter=maxiter, cycle=_GMRES_CYCLES[solve_method])
    x = _solve_implicitly(method, A, b, x0, M, symmetric=False)
    failed = jnp.array(False)
    for leaf in tree_leaves(x):
        failed = failed | jnp.any(jnp.isnan(leaf))
    return x, jnp.where(failed, -1, 0).astype(np.int32)
