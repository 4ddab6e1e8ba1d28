"""Iterative solvers of ``scipy.sparse.linalg`` as JAX 0.10.2 has them: ``cg``,
``bicgstab`` and ``gmres``, each a ``lax.while_loop`` wrapped in
``lax.custom_linear_solve``, so their derivatives come from another solve (implicit
differentiation), never from differentiating the loop. ``A`` may be a function, a square
matrix, or anything with ``@``; ``b`` any pytree of arrays. Tolerances follow SciPy's
non-legacy rule ``norm(r) <= max(tol*norm(b), atol)``; the second result (``info``) is
``None`` for ``cg``/``bicgstab`` and 0 or -1 (NaN solution) for ``gmres``, as in JAX.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from xjax import lax
import xjax.numpy as jnp
from xjax.core import dtypes
from xjax.core.array import Array
from xjax.core.pytree import tree_leaves, tree_map, tree_structure

__all__ = ["bicgstab", "cg", "gmres"]

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)
_vdot = partial(jnp.vdot, precision=lax.Precision.HIGHEST)


# -- pytree vector algebra -------------------------------------------------------------------

def _vdot_real(x, y):
    """The real part of ``x^H y`` without the real-imaginary cross terms: the solvers only
    take it of ``z^H M z`` with ``M`` Hermitian positive definite, which is real."""
    result = _vdot(jnp.real(x), jnp.real(y))
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result = result + _vdot(jnp.imag(x), jnp.imag(y))
    return result


def _vdot_real_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot_real, x, y)))


def _vdot_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _scale(scalar, tree):
    return tree_map(lambda leaf: scalar * leaf, tree)


_add = partial(tree_map, operator.add)
_sub = partial(tree_map, operator.sub)


def _identity(x):
    return x


def _as_matvec(f):
    """``A`` as a function: callables pass through, square matrices multiply."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array)) or hasattr(f, "__matmul__"):
        shape = getattr(f, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError("linear operator must be a square matrix, but has shape: "
                             f"{shape}")
        if isinstance(f, (np.ndarray, Array)):
            return partial(_dot, f)
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


# -- the solves (run by custom_linear_solve, never differentiated) ---------------------------

def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    # https://en.wikipedia.org/wiki/Conjugate_gradient_method (preconditioned form)
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(z0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

    def cond_fun(state):
        _, r, gamma, _, k = state
        rs = jnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(state):
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / _vdot_real_tree(p, ap).astype(dtype)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, ap))
        z = M(r)
        gamma_next = _vdot_real_tree(r, z).astype(dtype)
        p = _add(z, _scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    return lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    # https://en.wikipedia.org/wiki/Biconjugate_gradient_stabilized_method (preconditioned);
    # k < 0 marks a breakdown (rho == 0: -10; omega or alpha == 0: -11) and stops the loop
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))

    def cond_fun(state):
        r, k = state[1], state[-1]
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = _vdot_tree(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_next / _vdot_tree(rhat, q)
        s = _sub(r, _scale(alpha, q))
        done = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_half = _add(x, _scale(alpha, phat))
        x = tree_map(partial(jnp.where, done), x_half, _add(x_half, _scale(omega, shat)))
        r = tree_map(partial(jnp.where, done), s, _sub(s, _scale(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    r0 = _sub(b, A(x0))
    dtype = dtypes.result_type(*tree_leaves(b))
    one = lax.convert_element_type(1, dtype)
    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(cond_fun, body_fun, state)[0]


def _shapes(tree):
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _isolve(solve, A, b, x0, *, tol, atol, maxiter, M, check_symmetric):
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = tree_map(jnp.asarray, (b, x0))
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))  # SciPy's default
    A = _as_matvec(A)
    M = _identity if M is None else _as_matvec(M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError("arrays in x0 and b must have matching shapes: "
                         f"{_shapes(x0)} vs {_shapes(b)}")
    run = partial(solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # a real positive-definite operator is symmetric: the transpose solve is the solve
    symmetric = check_symmetric and not any(jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=run, transpose_solve=run, symmetric=symmetric)
    return x, None


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
    >>> from xjax.scipy.sparse.linalg import cg
    >>> a = jnp.array([[4., 1.], [1., 3.]])
    >>> x, _ = cg(a, jnp.array([1., 2.]))
    >>> bool(jnp.allclose(x, jnp.array([1 / 11, 7 / 11]), atol=1e-5))
    True
    """
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


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
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=False)


# -- GMRES ---------------------------------------------------------------------------------

def _norm(x):
    leaves = tree_leaves(x)
    return jnp.sqrt(sum(_vdot_real(v, v) for v in leaves))


def _safe_normalize(x, thresh=None):
    """``(x / norm(x), norm(x))``, or zeros and 0 when the norm is below ``thresh`` (the
    dtype's epsilon by default)."""
    norm = _norm(x)
    dtype = dtypes.result_type(*tree_leaves(x))
    if thresh is None:
        thresh = jnp.finfo(norm.dtype).eps
    thresh = jnp.real(jnp.asarray(thresh).astype(dtype))
    use = norm > thresh
    norm_cast = norm.astype(dtype)
    unit = tree_map(lambda y: jnp.where(use, y / norm_cast, 0.0), x)
    return unit, jnp.where(use, norm, 0.0)


def _project_on_columns(Q, v):
    """``Q^H v`` for a pytree of column blocks ``Q`` (last axis: the columns)."""
    parts = tree_map(lambda X, y: jnp.einsum("...n,...->n", jnp.conj(X), y,
                                             precision=lax.Precision.HIGHEST), Q, v)
    return sum(tree_leaves(parts))


def _gram_schmidt(Q, x, xnorm, max_iterations=2):
    """Orthogonalize ``x`` against ``Q``'s columns by classical Gram-Schmidt, repeated (up to
    ``max_iterations`` times) while the overlap removed is large; returns ``(q, overlaps)``."""
    r = jnp.zeros(tree_leaves(Q)[0].shape[-1], dtype=tree_leaves(Q)[0].dtype)

    def body(carry):
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        q = _sub(q, tree_map(lambda X: _dot(X, h), Q))
        r = r + h

        def again(c):
            return jnp.logical_and(c[1], c[0] < max_iterations - 1)

        def renorm(c):
            _, qnorm = _safe_normalize(c[2])
            return c[0], False, c[2], qnorm / jnp.sqrt(2.0)

        _, _, q, qnorm_scaled = lax.while_loop(again, renorm, (k, True, q, qnorm_scaled))
        return k + 1, q, r, qnorm_scaled

    def cond(carry):
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < max_iterations - 1, rnorm < qnorm_scaled)

    carry = body((0, x, r, xnorm / jnp.sqrt(2.0)))
    _, q, r, _ = lax.while_loop(cond, body, carry)
    return q, r


def _arnoldi_step(k, A, M, V, H):
    """Add the ``k+1``-th orthonormal Krylov vector ``M(A(V[:, k]))`` to ``V`` and its
    overlaps to row ``k`` of ``H``; a vector below epsilon means an invariant subspace
    (breakdown), and is taken as zero."""
    dtype = dtypes.result_type(*tree_leaves(V))
    v = M(A(tree_map(lambda X: X[..., k], V)))
    _, v_norm0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v, v_norm0)
    unit, v_norm1 = _safe_normalize(v, thresh=jnp.finfo(dtype).eps * v_norm0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    h = h.at[k + 1].set(v_norm1.astype(dtype))
    return V, H.at[k, :].set(h), v_norm1 == 0.0


def _rotate(H, i, cs, sn):
    x1, y1 = H[i], H[i + 1]
    H = H.at[i].set(jnp.conj(cs) * x1 - jnp.conj(sn) * y1)
    return H.at[i + 1].set(sn * x1 + cs * y1)


def _givens(a, b):
    b_zero = jnp.abs(b) == 0
    a_lt_b = jnp.abs(a) < jnp.abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + jnp.abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _krylov_basis(unit_residual, restart):
    return tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                    unit_residual)


def _finish_restart(A, b, x0, V, y, M):
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart, factoring the Hessenberg matrix by Givens rotations as it grows, which
    gives the residual for free and lets the restart stop early."""
    from xjax.scipy.linalg import solve_triangular
    V = _krylov_basis(unit_residual, restart)
    dtype = dtypes.result_type(*tree_leaves(b))
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def cond(carry):
        return jnp.logical_and(carry[0] < restart, carry[1] > ptol)

    def step(carry):
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), H[k, :])
        factors = _givens(row[k], row[k + 1])
        givens = givens.at[k, :].set(jnp.stack(factors))
        R = R.at[k, :].set(_rotate(row, k, *factors))
        beta = _rotate(beta, k, *factors)
        return k + 1, jnp.abs(beta[k + 1]), V, R, beta, givens

    _, _, V, R, beta, _ = lax.while_loop(cond, step, (0, residual_norm, V, R, beta, givens))
    y = solve_triangular(R[:, :-1].T, beta[:-1])
    return _finish_restart(A, b, x0, V, y, M)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart: the whole Arnoldi process, then the least-squares problem solved at
    once (by its normal equations), as JAX does for GPUs."""
    from xjax.scipy.linalg import solve
    V = _krylov_basis(unit_residual, restart)
    dtype = dtypes.result_type(*tree_leaves(b))
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def cond(carry):
        return jnp.logical_and(carry[3] < restart, jnp.logical_not(carry[2]))

    def step(carry):
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(cond, step, (V, H, False, 0))
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    ht = H.T
    y = solve(_dot(jnp.conj(ht.T), ht), _dot(jnp.conj(ht.T), beta), assume_a="pos")
    return _finish_restart(A, b, x0, V, y, M)


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, restart_fun):
    """Restart GMRES from the previous solution until the residual is below ``atol`` or
    ``maxiter`` restarts have run."""
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond(state):
        return jnp.logical_and(state[1] < maxiter, state[3] > atol)

    def body(state):
        x, k, unit_residual, residual_norm = state
        x, unit_residual, residual_norm = restart_fun(A, b, x, unit_residual, residual_norm,
                                                      ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    return lax.while_loop(cond, body, (x0, 0, unit_residual, residual_norm))[0]


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
        The starting guess (zeros by default), with ``b``'s structure.
    tol, atol : float
        Stop when ``norm(r) <= max(tol * norm(b), atol)`` (SciPy's non-legacy rule).
    restart : int
        The Krylov subspace's size between restarts (at most ``b``'s size).
    maxiter : int, optional
        At most this many restarts (default ``10 * b.size``).
    M : ndarray, callable, or object with ``@``, optional
        A preconditioner approximating the inverse of ``A``.
    solve_method : {'batched', 'incremental'}
        ``'incremental'`` factors the Krylov problem by Givens rotations as it grows and
        may stop a restart early; ``'batched'`` solves it at the end of each restart.

    Returns
    -------
    x : array or pytree of arrays
        The solution, with ``b``'s structure.
    info : Array
        0, or -1 when the solution holds NaN (as JAX reports).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.sparse.linalg import gmres
    >>> a = jnp.array([[4., 1.], [2., 3.]])
    >>> x, info = gmres(a, jnp.array([1., 2.]))
    >>> bool(jnp.allclose(x, jnp.array([0.1, 0.6]), atol=1e-5)), int(info)
    (True, 0)
    """
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    M = _identity if M is None else _as_matvec(M)
    A = _as_matvec(A)
    b, x0 = tree_map(jnp.asarray, (b, x0))
    size = sum(leaf.size for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
    if solve_method == "incremental":
        restart_fun = _gmres_incremental
    elif solve_method == "batched":
        restart_fun = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")

    def run(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, restart_fun)

    x = lax.custom_linear_solve(A, b, solve=run, transpose_solve=run)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info
