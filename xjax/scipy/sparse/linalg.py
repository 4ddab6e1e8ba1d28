"""Iterative solvers of ``scipy.sparse.linalg`` as JAX 0.10.2 has them: ``cg`` and
``bicgstab``, each a ``lax.while_loop`` wrapped in ``lax.custom_linear_solve``, so their
derivatives come from another solve (implicit differentiation), never from differentiating
the loop. ``A`` may be a function, a square matrix, or anything with ``@``; ``b`` any pytree
of arrays. Tolerances follow SciPy's non-legacy rule ``norm(r) <= max(tol*norm(b), atol)``;
the second result (``info``) is ``None``, as in JAX.

``gmres`` (restarted GMRES with Givens rotations or batched least squares) is not written
yet and raises NotImplementedError.
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


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """GMRES: not implemented in xjax yet.

    Raises
    ------
    NotImplementedError
        Always; use :func:`bicgstab` for non-symmetric systems meanwhile.
    """
    raise NotImplementedError("xjax.scipy.sparse.linalg.gmres is not implemented yet; "
                              "bicgstab solves non-symmetric systems")
