"""Numerical helpers: ``gradient``, ``trapezoid``, ``interp``, ``unwrap``, ``frexp``,
``spacing``, ``i0``, the window functions (``bartlett``, ``blackman``, ``hamming``,
``hanning``, ``kaiser``), ``cov``, ``corrcoef``, ``matvec`` and ``vecmat``.
"""

from __future__ import annotations

import operator

import numpy as np

import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        convert_element_type, promote_args_inexact,
                                        promote_dtypes_inexact, to_jax)
from xjax._src.numpy.nested_jit import jit_when_staged


def _shape(x):
    return tuple(aval_of(x).shape)


def _dtype(x):
    return aval_of(x).dtype


# -- calculus --

def _gradient_along(a, h, axis):
    """Central differences inside, one-sided at the ends (second-order accurate for
    uneven coordinates ``h`` too, as NumPy's)."""
    def part(start, stop):
        return lax.slice_in_dim(a, start, stop, axis=axis)

    n = _shape(a)[axis]
    if n < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least 2 elements are required.")
    first = part(1, 2) - part(0, 1)
    last = part(n - 1, n) - part(n - 2, n - 1)
    if np.ndim(h) == 0:
        inner = (part(2, n) - part(0, n - 2)) * 0.5 / h
        return jnp.concatenate([first / h, inner, last / h], axis)
    if len(_shape(h)) != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if _shape(h)[0] != n:
        raise ValueError("Spacing arrays must have the same length as the dimension along "
                         "which the gradient is calculated.")
    coordinate_shape = [1] * len(_shape(a))
    coordinate_shape[axis] = n
    x = jnp.reshape(h, coordinate_shape)

    def xs(start, stop):
        return lax.slice_in_dim(x, start, stop, axis=axis)

    first = first / (xs(1, 2) - xs(0, 1))
    last = last / (xs(n - 1, n) - xs(n - 2, n - 1))
    dx1 = xs(1, n - 1) - xs(0, n - 2)
    dx2 = xs(2, n) - xs(1, n - 1)
    inner = (-dx2 / (dx1 * (dx1 + dx2)) * part(0, n - 2) +
             (dx2 - dx1) / (dx1 * dx2) * part(1, n - 1) +
             dx1 / (dx2 * (dx1 + dx2)) * part(2, n))
    return jnp.concatenate([first, inner, last], axis)


@jit_when_staged(static_argnames=('axis', 'edge_order'))
def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled ``f`` along each axis (a list for several axes).

    ``varargs``: one spacing for all axes, or one per axis (a scalar step or 1-D
    coordinates). Only first-order edges (JAX has no ``edge_order``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.gradient(jnp.array([1., 2., 4., 7.]))
    Array([1. , 1.5, 2.5, 3. ], dtype=float32)
    """
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    check_arraylike("gradient", f, *varargs)
    (a,) = promote_dtypes_inexact(to_jax(f))
    ndim = len(_shape(a))
    if axis is None:
        axes = tuple(range(ndim))
    elif isinstance(axis, int):
        axes = (canonicalize_axis(axis, ndim),)
    else:
        axes = tuple(canonicalize_axis(ax, ndim) for ax in axis)
    if not axes:
        return []
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments")
    spacings = [h if isinstance(h, (int, float)) else
                convert_element_type(to_jax(h), _dtype(a)) for h in spacings]
    out = [_gradient_along(a, h, ax) for ax, h in zip(axes, spacings, strict=True)]
    return out[0] if len(axes) == 1 else out


@jit_when_staged(static_argnames=('axis',))
def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule (at coordinates ``x``,
    or spaced ``dx``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.trapezoid(jnp.array([1., 2., 3.]))
    Array(4., dtype=float32)
    """
    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = promote_dtypes_inexact(to_jax(y))
        widths = dx
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(to_jax(y), to_jax(x))
    y = jnp.moveaxis(y, axis, -1)
    if x is not None:
        if len(_shape(x)) == 1:
            widths = jnp.diff(x)
        else:
            widths = jnp.moveaxis(jnp.diff(x, axis=axis), axis, -1)
    return 0.5 * jnp.sum(widths * (y[..., 1:] + y[..., :-1]), axis=-1)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``; ``left``/``right`` (default ``fp[0]``/``fp[-1]``, or ``'extrapolate'``) outside;
    ``period`` for periodic coordinates.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.interp(jnp.array([0.5, 2.]), jnp.array([0., 1., 3.]), jnp.array([0., 10., 20.]))
    Array([ 5., 15.], dtype=float32)
    """
    check_arraylike("interp", x, xp, fp)
    x, xp = promote_dtypes_inexact(to_jax(x), to_jax(xp))
    (fp,) = promote_dtypes_inexact(to_jax(fp))
    if len(_shape(xp)) != 1 or len(_shape(fp)) != 1:
        raise ValueError("xp and fp must be one-dimensional")
    if _shape(xp)[0] != _shape(fp)[0]:
        raise ValueError("xp and fp must be of the same size")
    if dtypes.is_complex(_dtype(x)) or dtypes.is_complex(_dtype(xp)):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = jnp.abs(convert_element_type(to_jax(period), _dtype(x)))
        x = jnp.mod(x, period)
        xp = jnp.mod(xp, period)
        order = jnp.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = jnp.concatenate([fp[-1:], fp, fp[:1]])
    n = _shape(xp)[0]
    i = jnp.clip(jnp.searchsorted(xp, x, side="right"), 1, n - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    tiny = np.spacing(np.finfo(dtypes.finfo(_dtype(xp)).dtype).eps)
    flat = jnp.abs(dx) <= tiny  # equal neighbours: no slope (and no NaN gradient)
    f = jnp.where(flat, fp[i - 1], fp[i - 1] + (delta / jnp.where(flat, 1, dx)) * df)
    if period is None:
        if isinstance(left, str):
            if left != "extrapolate":
                raise ValueError(f"the only valid string value of `left` is 'extrapolate', "
                                 f"but got: {left!r}")
            slope = (fp[1] - fp[0]) / (xp[1] - xp[0])
            below = fp[0] + (x - xp[0]) * slope
        else:
            below = fp[0] if left is None else left
        if isinstance(right, str):
            if right != "extrapolate":
                raise ValueError(f"the only valid string value of `right` is 'extrapolate', "
                                 f"but got: {right!r}")
            slope = (fp[-1] - fp[-2]) / (xp[-1] - xp[-2])
            above = fp[-1] + (x - xp[-1]) * slope
        else:
            above = fp[-1] if right is None else right
        f = jnp.where(x < xp[0], below, f)
        f = jnp.where(x > xp[-1], above, f)
    return f


@jit_when_staged(static_argnames=('axis',))
def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) along ``axis``
    replaced by their complement modulo ``period``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.unwrap(jnp.array([0., 6.]))
    Array([ 0.      , -0.283185], dtype=float32)
    """
    check_arraylike("unwrap", p)
    (p,) = promote_dtypes_inexact(to_jax(p))
    if dtypes.is_complex(_dtype(p)):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if _shape(p)[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period / 2
    dd = jnp.diff(p, axis=axis)
    ddmod = jnp.mod(dd + interval, period) - interval
    ddmod = jnp.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correction = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
    axis = canonicalize_axis(axis, len(_shape(p)))
    n = _shape(p)[axis]
    rest = lax.slice_in_dim(p, 1, n, axis=axis) + jnp.cumsum(correction, axis=axis)
    return jnp.concatenate([lax.slice_in_dim(p, 0, 1, axis=axis), rest], axis)


# -- floating-point structure --

_BITS = {2: (np.int16, np.uint16), 4: (np.int32, np.uint32), 8: (np.int64, np.uint64)}


@jit_when_staged()
def frexp(x, /):
    """Mantissa in ``[0.5, 1)`` (with ``x``'s sign) and int32 exponent with
    ``x == mantissa * 2**exponent``; zeros, infinities and NaN give themselves and 0.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.frexp(jnp.array([1.5, 8.]))
    (Array([0.75, 0.5 ], dtype=float32), Array([1, 4], dtype=int32))
    """
    check_arraylike("frexp", x)
    (x,) = promote_dtypes_inexact(to_jax(x))
    dtype = _dtype(x)
    if dtypes.is_complex(dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    info = dtypes.finfo(dtype)
    nmant = int(info.nmant)
    bias = 1 - int(info.minexp)  # the exponent field of 1.0 (127 for float32)
    signed, _ = _BITS[np.dtype(dtype).itemsize]
    # scale subnormals into the normal range first
    tiny = np.asarray(info.smallest_normal, dtype) if hasattr(info, "smallest_normal") \
        else np.asarray(info.tiny, dtype)
    subnormal = jnp.logical_and(jnp.abs(x) < tiny, x != 0)
    scale = np.asarray(2.0 ** nmant, dtype)
    scaled = jnp.where(subnormal, x * scale, x)
    bits = lax.bitcast_convert_type(scaled, signed)
    exponent_mask = (1 << (np.dtype(dtype).itemsize * 8 - 1 - nmant)) - 1
    field = lax.bitwise_and(lax.shift_right_logical(bits, jnp.full_like(bits, nmant)),
                            jnp.full_like(bits, exponent_mask))
    # x = 1.f * 2**(field - bias) = 0.1f * 2**(field - bias + 1)
    exponent = convert_element_type(field, np.int32) - (bias - 1)
    exponent = jnp.where(subnormal, exponent - nmant, exponent)
    # the mantissa keeps sign and fraction bits with the exponent field of 0.5
    cleared = lax.bitwise_and(bits, jnp.full_like(bits, ~(exponent_mask << nmant)))
    half = lax.bitwise_or(cleared, jnp.full_like(bits, (bias - 1) << nmant))
    mantissa = lax.bitcast_convert_type(half, dtype)
    special = jnp.isinf(x) | jnp.isnan(x) | (x == 0)
    return jnp.where(special, x, mantissa), jnp.where(special, 0, exponent)


def spacing(x, /):
    """The distance from ``x`` to the next representable value away from zero (negative
    for negative ``x``), never 0: where XLA flushes a subnormal result to zero, the
    smallest subnormal with ``x``'s sign. As JAX (following NumPy's float16 kernel), float16
    steps toward +inf instead, so its spacing of a negative ``x`` is positive.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.spacing(jnp.float32(1.))
    Array(1.1920929e-07, dtype=float32)
    """
    (arr,) = promote_args_inexact("spacing", x)
    if dtypes.is_complex(_dtype(arr)):
        raise ValueError("spacing is not defined for complex inputs.")
    inf = jnp.full_like(arr, np.inf)
    if _dtype(arr) == np.float16:
        return jnp.nextafter(arr, inf) - arr
    result = jnp.nextafter(arr, jnp.copysign(inf, arr)) - arr
    # the subnormal is a NumPy scalar, as in JAX: strong, so the result is strong
    tiny = jnp.copysign(dtypes.finfo(_dtype(arr)).smallest_subnormal, arr)
    return jnp.where(result == 0, tiny, result)


@jit_when_staged()
def i0(x):
    """The modified Bessel function of the first kind, order 0.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.i0(jnp.array([1.]))
    Array([1.266066], dtype=float32)
    """
    (x,) = promote_args_inexact("i0", x)
    if not dtypes.is_float(_dtype(x)):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {_dtype(x)}")
    magnitude = lax.abs(x)
    return lax.mul(lax.exp(magnitude), lax.bessel_i0e(magnitude))


# -- windows --

def _window(M, name, formula):
    M = operator.index(M)
    dtype = dtypes.default_float_dtype()
    if M <= 1:
        return jnp.ones((max(M, 0),), dtype)
    n = jnp.arange(M, dtype=dtype)
    return formula(n, M)


def bartlett(M: int):
    """The Bartlett (triangular) window of ``M`` points."""
    return _window(M, "bartlett", lambda n, M: 1 - jnp.abs(2 * n + 1 - M) / (M - 1))


def blackman(M: int):
    """The Blackman window of ``M`` points."""
    return _window(M, "blackman", lambda n, M: 0.42 - 0.5 * jnp.cos(2 * np.pi * n / (M - 1))
                   + 0.08 * jnp.cos(4 * np.pi * n / (M - 1)))


def hamming(M: int):
    """The Hamming window of ``M`` points."""
    return _window(M, "hamming", lambda n, M: 0.54 - 0.46 * jnp.cos(2 * np.pi * n / (M - 1)))


def hanning(M: int):
    """The Hann window of ``M`` points."""
    return _window(M, "hanning", lambda n, M: 0.5 - 0.5 * jnp.cos(2 * np.pi * n / (M - 1)))


def kaiser(M: int, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta``."""
    check_arraylike("kaiser", beta)

    def formula(n, M):
        alpha = (M - 1) / 2.0
        return i0(beta * jnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)

    return _window(M, "kaiser", formula)


# -- statistics --

@jit_when_staged(static_argnames=('rowvar', 'bias', 'ddof', 'dtype'))
def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None, dtype=None):
    """The covariance matrix of the variables in the rows of ``m`` (columns when
    ``rowvar=False``), optionally with ``y``'s; ``fweights``/``aweights`` weight the
    observations.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.cov(jnp.array([[0., 1., 2.], [2., 1., 0.]]))
    Array([[ 1., -1.],
           [-1.,  1.]], dtype=float32)
    """
    check_arraylike("cov", m)
    if y is not None:
        check_arraylike("cov", y)
    m = to_jax(m)
    if len(_shape(m)) > 2:
        raise ValueError("m has more than 2 dimensions")
    x = jnp.atleast_2d(m)
    if not rowvar and _shape(x)[0] != 1:
        x = x.T
    if _shape(x)[0] == 0:
        return jnp.array([]).reshape(0, 0)
    if y is not None:
        y = jnp.atleast_2d(to_jax(y))
        if not rowvar and _shape(y)[0] != 1:
            y = y.T
        x = jnp.concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    if dtype is None:
        (x,) = promote_dtypes_inexact(x)
    else:
        x = convert_element_type(x, dtypes.check_and_canonicalize_user_dtype(dtype, "cov"))
    n = _shape(x)[1]
    weights = None
    if fweights is not None:
        check_arraylike("cov", fweights)
        fweights = to_jax(fweights)
        if len(_shape(fweights)) > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if _shape(fweights)[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.is_integer(_dtype(fweights)):
            raise TypeError("fweights must be integer.")
        weights = convert_element_type(fweights, _dtype(x))
    if aweights is not None:
        check_arraylike("cov", aweights)
        aweights = convert_element_type(to_jax(aweights), _dtype(x))
        if len(_shape(aweights)) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if _shape(aweights)[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        mean = jnp.mean(x, axis=1)
        factor = jnp.asarray(n - ddof, jnp.real(x).dtype)
    else:
        total = jnp.sum(weights)
        mean = jnp.sum(x * weights, axis=1) / total
        if ddof == 0:
            factor = total
        elif aweights is None:
            factor = total - ddof
        else:
            factor = total - ddof * jnp.sum(weights * aweights) / total
    factor = jnp.maximum(factor, 0)
    centered = x - mean[:, None]
    weighted = centered if weights is None else centered * weights
    c = jnp.matmul(centered, jnp.conj(weighted).T) / factor
    return jnp.squeeze(c)


@jit_when_staged(static_argnames=('rowvar', 'dtype'))
def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients of the variables (see :func:`cov`)."""
    check_arraylike("corrcoef", x)
    c = cov(x, y, rowvar, dtype=dtype)
    if len(_shape(c)) == 0:
        return c / c
    d = jnp.diag(c)
    stddev = jnp.sqrt(jnp.real(d)).astype(_dtype(c))
    c = c / stddev[:, None] / stddev[None, :]
    if dtypes.is_complex(_dtype(c)):
        return jnp.clip(jnp.real(c), -1, 1) + 1j * jnp.clip(jnp.imag(c), -1, 1)
    return jnp.clip(c, -1, 1)


# -- matrix-vector products --

@jit_when_staged()
def matvec(x1, x2, /):
    """Batched matrix-vector products ``x1 @ x2`` over the last axes (broadcasting the
    rest)."""
    check_arraylike("matvec", x1, x2)
    return jnp.matmul(x1, to_jax(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    """Batched vector-matrix products ``conj(x1) @ x2`` over the last axes."""
    check_arraylike("vecmat", x1, x2)
    return jnp.matmul(jnp.conj(to_jax(x1))[..., None, :], x2)[..., 0, :]


__all__ = ["gradient", "trapezoid", "interp", "unwrap", "frexp", "spacing", "i0",
           "bartlett", "blackman", "hamming", "hanning", "kaiser", "cov", "corrcoef",
           "matvec", "vecmat"]
