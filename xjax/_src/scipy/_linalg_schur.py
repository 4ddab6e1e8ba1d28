"""The Schur-based functions of ``xjax.scipy.linalg``: ``schur``, ``rsf2csf``, ``sqrtm`` and
``funm``, with JAX's algorithms (CPU only: the Schur decomposition is LAPACK's gees, see
``xjax/lax/linalg_schur.py``).

- ``rsf2csf``: from the bottom up, each 2x2 block of the real Schur form (a subdiagonal
  entry above ``eps`` times its neighbours on the diagonal) is made triangular by a complex
  Givens rotation built from the block's first eigenvalue (``eigvals``, i.e. geev, as JAX);
  the subdiagonal is then zeroed.
- ``sqrtm``: complex Schur form ``T``, then the upper-triangular square root ``U`` of ``T``
  (Björck and Hammarling): ``U_ii = sqrt(T_ii)``, and ``U_ij = (T_ij - s) / (U_ii + U_jj)``
  with ``s = sum_{i<k<j} U_ik U_kj`` (zero where ``T_ij == s``, as JAX), then ``Z U Z^H``.
- ``funm``: complex Schur form, ``F_ii = func(T_ii)``, then Parlett's recurrence (Golub and
  Van Loan, Algorithm 11.1.1) for the rest of ``F``, then ``Z F Z^H``.

Both recurrences fill the matrix one superdiagonal at a time (every entry of a superdiagonal
depends only on the ones below it), each superdiagonal as a few whole-matrix operations: a
loop of ``n - 1`` steps where JAX loops over every entry (``n^2 / 2`` steps).
"""

from __future__ import annotations

import numpy as np

from xjax._src.higher_order.linalg import api as lax_linalg
from xjax._src import higher_order as control_flow, lax
from xjax._src.numpy._promotion import (aval_of, check_arraylike, promote_dtypes_complex,
                                        promote_dtypes_inexact)
import xjax._src.numpy as jnp


def _jnp():
    return jnp


def schur(a, output: str = "real"):
    """Schur decomposition ``a = Z T Z^H`` (CPU only).

    Parameters
    ----------
    a : array (..., n, n)
    output : {'real', 'complex'}
        'real': for real ``a``, ``T`` is quasi-triangular (2x2 blocks for complex-conjugate
        eigenvalue pairs); 'complex': ``a`` is made complex first and ``T`` is triangular.

    Returns
    -------
    [T, Z]

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.linalg as jsl
    >>> a = jnp.array([[1., 2.], [3., 4.]])
    >>> t, z = jsl.schur(a)
    >>> bool(jnp.allclose(z @ t @ z.T, a, atol=1e-5))
    True
    """
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    check_arraylike("jax.scipy.linalg.schur", a)
    (a,) = promote_dtypes_complex(a) if output == "complex" else (a,)
    return lax_linalg.schur(a)


def _check_square(name: str, what: str, x):
    shape = aval_of(x).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{name}: input '{what}' must be square, got shape {shape}.")


def rsf2csf(T, Z, check_finite: bool = True):
    """Complex Schur form ``(T, Z)`` from a real one (as ``scipy.linalg.rsf2csf``); leading
    batch dims are broadcast.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.linalg as jsl
    >>> a = jnp.array([[0., -1.], [1., 0.]])
    >>> t, z = jsl.rsf2csf(*jsl.schur(a))
    >>> t.dtype
    dtype('complex64')
    """
    del check_finite  # unused, as in JAX
    check_arraylike("jax.scipy.linalg.rsf2csf", T, Z)
    t, z = promote_dtypes_complex(T, Z)
    _check_square("rsf2csf", "T", t)
    _check_square("rsf2csf", "Z", z)
    t_shape, z_shape = aval_of(t).shape, aval_of(z).shape
    if t_shape[-1] != z_shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z_shape} vs. T: {t_shape}")
    return _jnp().vectorize(_rsf2csf_matrix, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def _rotate_block(m, t, z):
    """Make the 2x2 block of ``t`` at rows/columns ``m - 1, m`` triangular with a complex
    Givens rotation ``G`` (``T <- G T G^H``, ``Z <- Z G^H``) built from its first eigenvalue."""
    jnp = _jnp()
    n = aval_of(t).shape[-1]
    below = t[m, m - 1]
    mu = jnp.linalg.eigvals(lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))) - t[m, m]
    r = jnp.sqrt(jnp.abs(mu[0]) ** 2 + jnp.abs(below) ** 2).astype(aval_of(t).dtype)
    c, s = mu[0] / r, below / r
    g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
    g_h = jnp.conj(g.T)
    index = jnp.arange(n)
    rows = lax.dynamic_slice_in_dim(t, m - 1, 2, 0)
    t = lax.dynamic_update_slice_in_dim(t, jnp.where(index >= m - 1, g @ rows, rows), m - 1, 0)
    cols = lax.dynamic_slice_in_dim(t, m - 1, 2, 1)
    t = lax.dynamic_update_slice_in_dim(
        t, jnp.where(index[:, None] <= m, cols @ g_h, cols), m - 1, 1)
    z = lax.dynamic_update_slice_in_dim(z, lax.dynamic_slice_in_dim(z, m - 1, 2, 1) @ g_h,
                                        m - 1, 1)
    return t, z


def _rsf2csf_matrix(t, z):
    jnp = _jnp()
    n = aval_of(t).shape[-1]
    if n == 1:
        return t, z
    eps = jnp.finfo(aval_of(t).dtype).eps

    def step(i, tz):
        t, z = tz
        m = n - i
        coupled = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = control_flow.cond(coupled, _rotate_block, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0), z

    return control_flow.fori_loop(1, n, step, (t, z))


def _superdiagonal_tools(n: int):
    """Helpers of the superdiagonal-at-a-time recurrences on (n, n) matrices."""
    jnp = _jnp()
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]

    def column_of_entry(x, p):
        """``w[i, k] = x[k, (i + p) % n]``: row ``i`` holds column ``i + p`` of ``x``."""
        return lax.dynamic_slice_in_dim(jnp.concatenate([x.T, x.T], 0), p, n, 0)

    def entries(x, p):
        """``x[i, (i + p) % n]`` for every ``i``."""
        return jnp.diagonal(lax.dynamic_slice_in_dim(jnp.concatenate([x, x], 1), p, n, 1))

    def between(p):
        """``i < k < i + p``: the inner indices of the sums for entry ``(i, i + p)``."""
        return (cols > rows) & (cols < rows + p)

    def set_superdiagonal(x, p, values):
        return jnp.where(cols == rows + p, values[:, None], x)

    return column_of_entry, entries, between, set_superdiagonal


def _sqrtm_triu(t):
    """The upper-triangular square root of the upper-triangular ``t`` (Björck and
    Hammarling), one superdiagonal per step."""
    jnp = _jnp()
    n = aval_of(t).shape[-1]
    column_of_entry, entries, between, set_superdiagonal = _superdiagonal_tools(n)
    d = jnp.sqrt(jnp.diagonal(t))
    d_twice = jnp.concatenate([d, d])

    def step(p, u):
        s = jnp.sum(jnp.where(between(p), u * column_of_entry(u, p), 0), axis=1)
        t_ij = entries(t, p)
        d_j = lax.dynamic_slice_in_dim(d_twice, p, n, 0)
        return set_superdiagonal(u, p, jnp.where(t_ij == s, 0, (t_ij - s) / (d + d_j)))

    return control_flow.fori_loop(1, n, step, jnp.diag(d))


def _check_matrix(name: str, a):
    shape = aval_of(a).shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} expects a square 2-D matrix, got shape {shape}")


def sqrtm(A, blocksize: int = 1):
    """Principal matrix square root by the complex Schur method (Björck and Hammarling), as
    JAX: ``T, Z = schur(A, 'complex')``, ``U`` the triangular root of ``T``, ``Z U Z^H``.
    The result is complex. CPU only (the Schur decomposition is LAPACK's).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.linalg as jsl
    >>> jsl.sqrtm(jnp.array([[4., 0.], [0., 9.]]))
    Array([[2.+0.j, 0.+0.j],
           [0.+0.j, 3.+0.j]], dtype=complex64)
    """
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    jnp = _jnp()
    check_arraylike("jax.scipy.linalg.sqrtm", A)
    (a,) = promote_dtypes_complex(A)
    _check_matrix("sqrtm", a)
    t, z = schur(a, output="complex")
    u = _sqrtm_triu(t)
    highest = lax.Precision.HIGHEST
    return jnp.matmul(jnp.matmul(z, u, precision=highest), jnp.conj(z.T), precision=highest)


def _parlett(f, t):
    """Parlett's recurrence (Golub and Van Loan, Algorithm 11.1.1) for ``f(T)`` of the
    upper-triangular ``t`` given its diagonal in ``f``, one superdiagonal per step; also the
    smallest ``|T_jj - T_ii|`` (starting from ``|T_00|``, as JAX)."""
    jnp = _jnp()
    n = aval_of(t).shape[-1]
    column_of_entry, entries, between, set_superdiagonal = _superdiagonal_tools(n)
    t_diag = jnp.diagonal(t)
    t_diag_twice = jnp.concatenate([t_diag, t_diag])
    diag_f_twice = jnp.concatenate([jnp.diagonal(f), jnp.diagonal(f)])  # F_jj: fixed
    index = jnp.arange(n)

    def step(p, state):
        f, smallest = state
        inner = between(p)
        s = entries(t, p) * (lax.dynamic_slice_in_dim(diag_f_twice, p, n, 0) - jnp.diagonal(f))
        s = s + (jnp.sum(jnp.where(inner, t * column_of_entry(f, p), 0), axis=1)
                 - jnp.sum(jnp.where(inner, f * column_of_entry(t, p), 0), axis=1))
        den = lax.dynamic_slice_in_dim(t_diag_twice, p, n, 0) - t_diag
        s = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
        on_diagonal = index + p < n
        smallest = jnp.minimum(smallest, jnp.min(jnp.where(on_diagonal, jnp.abs(den), jnp.inf)))
        return set_superdiagonal(f, p, s), smallest

    return control_flow.fori_loop(1, n, step, (f, jnp.abs(t[0, 0])))


def funm(A, func, disp: bool = True):
    """``func`` of the matrix ``A`` by the Schur-Parlett method, as JAX: complex Schur form
    ``T`` (``schur`` then ``rsf2csf``), ``F = func`` on its diagonal, Parlett's recurrence
    above it, ``Z F Z^H``. ``func`` maps an array of eigenvalues elementwise. The result is
    complex; with ``disp=False`` also an estimate of its relative error (JAX's). CPU only.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.linalg as jsl
    >>> jsl.funm(jnp.array([[1., 0.], [0., 2.]]), lambda x: x * x)
    Array([[1.+0.j, 0.+0.j],
           [0.+0.j, 4.+0.j]], dtype=complex64)
    """
    jnp = _jnp()
    check_arraylike("jax.scipy.linalg.funm", A)
    (a,) = promote_dtypes_inexact(A)
    if len(aval_of(a).shape) != 2 or aval_of(a).shape[0] != aval_of(a).shape[1]:
        raise ValueError("expected square array_like input")
    t, z = rsf2csf(*schur(a))
    dtype = aval_of(t).dtype
    f = jnp.diag(jnp.asarray(func(jnp.diagonal(t))).astype(dtype))
    f, smallest = _parlett(f, t)
    f = z @ f @ jnp.conj(z.T)
    if disp:
        return f
    tol = float(np.finfo(np.float32 if dtype == np.complex64 else np.float64).eps)
    smallest = jnp.where(smallest == 0, tol, smallest)
    estimate = jnp.minimum(1, jnp.maximum(tol, (tol / smallest)
                                          * jnp.linalg.norm(jnp.triu(t, 1), 1)))
    return f, jnp.where(jnp.any(jnp.isinf(f)), np.inf, estimate)
