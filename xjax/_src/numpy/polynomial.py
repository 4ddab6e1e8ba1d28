"""Polynomials as coefficient arrays, highest power first: ``poly``, ``polyadd``,
``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``polyfit``, ``roots``,
``vander`` and ``trim_zeros`` (``polyval`` is defined with the control-flow functions).

Results have static sizes: trimming leading zeros needs concrete coefficients
(``trim_leading_zeros``, ``roots(strip_zeros=True)``, ``trim_zeros``), as in JAX. ``roots``,
``polyfit`` and ``poly`` of a matrix use ``jnp.linalg`` (eigenvalues, least squares).
"""

from __future__ import annotations

import operator

import numpy as np

import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, concrete_value, check_arraylike, promote_dtypes,
                                        promote_dtypes_inexact, to_jax)
from xjax._src.numpy.nested_jit import jit_when_staged


def _shape(x):
    return tuple(aval_of(x).shape)


def _one_dim(name, *arrays):
    for a in arrays:
        if len(_shape(a)) != 1:
            raise ValueError(f"jnp.{name} requires 1-D arrays, got shape {_shape(a)}")


def _leading_zero_count(p, context) -> int:
    value = concrete_value(p, context)
    nonzero = np.flatnonzero(value)
    return int(nonzero[0]) if nonzero.size else value.shape[0]


def trim_zeros(filt, trim: str = "fb", axis=None):
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros; for N-D
    input, the all-zero edges along ``axis`` (default: every axis). Needs a concrete
    ``filt``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.trim_zeros(jnp.array([0, 0, 1, 0, 2, 0]))
    Array([1, 0, 2], dtype=int32)
    """
    check_arraylike("trim_zeros", filt)
    arr = to_jax(filt)
    value = concrete_value(arr, "Error arose in the `filt` argument of trim_zeros()")
    trim = trim.lower()
    ndim = value.ndim
    axes = range(ndim) if axis is None else (
        [axis] if isinstance(axis, int) else list(axis))
    index = [slice(None)] * ndim
    for ax in axes:
        ax = ax % ndim
        others = tuple(d for d in range(ndim) if d != ax)
        occupied = np.flatnonzero(np.any(value != 0, axis=others) if others else value != 0)
        if occupied.size == 0:
            index[ax] = slice(0, 0)
            continue
        start = occupied[0] if "f" in trim else 0
        stop = occupied[-1] + 1 if "b" in trim else value.shape[ax]
        index[ax] = slice(int(start), int(stop))
    return arr[tuple(index)]


def _trim_leading(p, context):
    zeros = _leading_zero_count(p, context)
    n = _shape(p)[0]
    return p[min(zeros, n - 1):] if n else p


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or with the
    eigenvalues of a square matrix).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.poly(jnp.array([1, 2]))
    Array([ 1., -3.,  2.], dtype=float32)
    """
    check_arraylike("poly", seq_of_zeros)
    (zeros,) = promote_dtypes_inexact(to_jax(seq_of_zeros))
    shape = _shape(zeros)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros = jnp.linalg.eigvals(zeros)
    elif len(shape) == 1 or len(shape) == 0:
        zeros = jnp.ravel(zeros)
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = aval_of(zeros).dtype
    coefficients = jnp.ones((1,), dtype)
    for k in range(_shape(zeros)[0]):
        factor = jnp.stack([jnp.ones((), dtype), -zeros[k]])
        coefficients = jnp.convolve(coefficients, factor, mode="full")
    return coefficients


def _aligned(a1, a2):
    """The coefficient arrays padded at the front to one length."""
    n1, n2 = _shape(a1)[0], _shape(a2)[0]
    if n1 < n2:
        a1 = jnp.pad(a1, (n2 - n1, 0))
    elif n2 < n1:
        a2 = jnp.pad(a2, (n1 - n2, 0))
    return a1, a2


@jit_when_staged()
def polyadd(a1, a2):
    """The sum of two polynomials.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.polyadd(jnp.array([1, 2]), jnp.array([1, 2, 3]))
    Array([1, 3, 5], dtype=int32)
    """
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(to_jax(a1), to_jax(a2))
    a1, a2 = jnp.atleast_1d(a1), jnp.atleast_1d(a2)
    return jnp.add(*_aligned(a1, a2))


@jit_when_staged()
def polysub(a1, a2):
    """The difference of two polynomials."""
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(to_jax(a1), to_jax(a2))
    a1, a2 = jnp.atleast_1d(a1), jnp.atleast_1d(a2)
    return jnp.subtract(*_aligned(a1, a2))


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials (``trim_leading_zeros`` needs concrete inputs).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.polymul(jnp.array([1, 2]), jnp.array([1, 3]))
    Array([1., 5., 6.], dtype=float32)
    """
    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(to_jax(a1), to_jax(a2))
    a1, a2 = jnp.atleast_1d(a1), jnp.atleast_1d(a2)
    if trim_leading_zeros and (_shape(a1)[0] > 1 or _shape(a2)[0] > 1):
        context = "Error arose in polymul with trim_leading_zeros=True"
        a1, a2 = _trim_leading(a1, context), _trim_leading(a2, context)
    if _shape(a1)[0] == 0:
        a1 = jnp.zeros((1,), aval_of(a1).dtype)
    if _shape(a2)[0] == 0:
        a2 = jnp.zeros((1,), aval_of(a2).dtype)
    return jnp.convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Quotient and remainder of polynomial division ``u / v`` (the remainder keeps
    ``u``'s length unless ``trim_leading_zeros``, which needs concrete inputs).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> q, r = jnp.polydiv(jnp.array([1., 3., 2.]), jnp.array([1., 1.]))
    >>> q
    Array([1., 2.], dtype=float32)
    """
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(to_jax(u), to_jax(v))
    u, v = jnp.atleast_1d(u), jnp.atleast_1d(v)
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = 1.0 / v[0]
    quotient = jnp.zeros((max(m - n + 1, 1),), aval_of(u).dtype)
    remainder = u
    for k in range(m - n + 1):
        d = scale * remainder[k]
        quotient = quotient.at[k].set(d)
        remainder = remainder.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        value = concrete_value(remainder, "Error arose in polydiv with trim_leading_zeros=True")
        tol = np.sqrt(np.finfo(value.dtype).eps)
        nonzero = np.flatnonzero(np.abs(value) > tol)
        remainder = remainder[int(nonzero[0]):] if nonzero.size else remainder[-1:]
    return quotient, remainder


@jit_when_staged(static_argnames=('m',))
def polyder(p, m: int = 1):
    """The ``m``-th derivative of a polynomial.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.polyder(jnp.array([1, 2, 3, 4]), 2)
    Array([6., 4.], dtype=float32)
    """
    check_arraylike("polyder", p)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    (p,) = promote_dtypes_inexact(to_jax(p))
    if m == 0:
        return p
    n = _shape(p)[0]
    dtype = aval_of(p).dtype
    # coefficient of x^(n-1-i) gains the factor (n-1-i)(n-2-i)...(n-m-i)
    powers = np.arange(n - 1, m - 1, -1)
    factors = np.ones(powers.shape, np.float64)
    for j in range(m):
        factors *= powers - j
    return p[:max(n - m, 0)] * jnp.asarray(factors.astype(dtype))


def polyint(p, m: int = 1, k=None):
    """The ``m``-th antiderivative, with integration constants ``k`` (a scalar or ``m``
    values, the first for the first integration).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.polyint(jnp.array([3., 2., 1.]))
    Array([1., 1., 1., 0.], dtype=float32)
    """
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"Order of integral must be positive (see polyder), got m={m}")
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(to_jax(p), to_jax(k))
    if m == 0:
        return p
    if _shape(k) not in ((), (m,)):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    k = jnp.broadcast_to(k, (m,))
    n = _shape(p)[0]
    dtype = aval_of(p).dtype
    # after m integrations the coefficient of x^j (j >= m) is divided by j (j-1)...(j-m+1)
    grid = np.arange(n + m)[::-1][:, None] - np.arange(m)[None, :]
    divisors = np.maximum(grid, 1).prod(axis=1).astype(dtype)
    return jnp.concatenate([p, k]) / jnp.asarray(divisors)


def vander(x, N: int | None = None, increasing: bool = False):
    """The Vandermonde matrix of ``x``: columns are powers of ``x``, decreasing from
    ``N - 1`` (or increasing from 0).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.vander(jnp.array([1, 2, 3]), 3)
    Array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]], dtype=int32)
    """
    check_arraylike("vander", x)
    x = to_jax(x)
    if len(_shape(x)) != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _shape(x)[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = lax.iota(np.int32, n)
    if not increasing:
        powers = lax.sub(lax.full((), n - 1, np.int32), powers)
    return jnp.power(x[:, None], powers[None, :])


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov: bool = False):
    """The least-squares polynomial fit of degree ``deg`` (coefficients highest power
    first; one column per column of a 2-D ``y``). ``full`` also returns residuals, rank,
    singular values and ``rcond``; ``cov`` the covariance of the coefficients."""
    check_arraylike("polyfit", x, y)
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x, y = promote_dtypes_inexact(to_jax(x), to_jax(y))
    if len(_shape(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if _shape(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(_shape(y)) not in (1, 2):
        raise TypeError("expected 1D or 2D array for y")
    if _shape(x)[0] != _shape(y)[0]:
        raise TypeError("expected x and y to have same length")
    order = deg + 1
    dtype = aval_of(x).dtype
    if rcond is None:
        rcond = _shape(x)[0] * float(np.finfo(dtypes.finfo(dtype).dtype).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        check_arraylike("polyfit", w)
        (w,) = promote_dtypes_inexact(to_jax(w))
        if len(_shape(w)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if _shape(w)[0] != _shape(y)[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if len(_shape(rhs)) == 1 else w[:, None])
    scale = jnp.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, residuals, rank, s = jnp.linalg.lstsq(lhs, rhs, rcond=rcond)
    c = (c.T / scale).T
    if full:
        return c, residuals, rank, s, jnp.asarray(rcond)
    if cov:
        inverse = jnp.linalg.inv(jnp.dot(lhs.T, lhs))
        inverse = inverse / jnp.outer(scale, scale)
        if cov == "unscaled":
            factor = jnp.asarray(1.0, dtype)
        else:
            if _shape(x)[0] <= order:
                raise ValueError("the number of data points must exceed order to scale "
                                 "the covariance matrix")
            factor = residuals / (_shape(x)[0] - order)
        if len(_shape(y)) == 1:
            return c, inverse * factor
        return c, inverse[:, :, None] * factor[None, None, :]
    return c


def roots(p, *, strip_zeros: bool = True):
    """The roots of a polynomial, as the eigenvalues of its companion matrix (complex).

    Leading zeros are stripped when ``strip_zeros`` (needs concrete coefficients);
    otherwise each gives a NaN root. Trailing zeros give zero roots.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.roots(jnp.array([1., -3., 2.]))  # doctest: +SKIP
    Array([2.+0.j, 1.+0.j], dtype=complex64)
    """
    check_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(jnp.atleast_1d(to_jax(p)))
    if len(_shape(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    if _shape(p)[0] < 2:
        return jnp.array([], dtype=dtypes.to_complex_dtype(aval_of(p).dtype))
    if strip_zeros:
        value = concrete_value(p, "The error occurred in the jnp.roots() function. To use this "
                             "within a JIT-compiled context, pass strip_zeros=False, but be "
                             "aware that leading zeros will result in some returned roots "
                             "being set to NaN.")
        nonzero = np.flatnonzero(value)
        if nonzero.size == 0:
            return jnp.array([], dtype=dtypes.to_complex_dtype(aval_of(p).dtype))
        trailing = value.shape[0] - 1 - int(nonzero[-1])
        p = p[int(nonzero[0]):value.shape[0] - trailing]
        found = _companion_roots(p)
        zeros = jnp.zeros((trailing,), aval_of(found).dtype)
        return jnp.concatenate([found, zeros])
    return _companion_roots(p)


def _companion_roots(p):
    n = _shape(p)[0] - 1
    if n < 1:
        return jnp.array([], dtype=dtypes.to_complex_dtype(aval_of(p).dtype))
    dtype = aval_of(p).dtype
    first_row = -p[1:] / p[0]
    companion = jnp.concatenate([first_row[None, :],
                                 jnp.eye(n - 1, n, dtype=dtype)], axis=0)
    return jnp.linalg.eigvals(companion)



__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyfit", "roots", "vander", "trim_zeros"]
