"""Complex elementwise functions in NumPy with XLA's conventions, for the eager impls.

NumPy follows C99 Annex G at infinities, NaNs and signed zeros; XLA (and so JAX) does not
everywhere: its ``exp`` keeps a zero imaginary part, ``sqrt`` and the inverse functions put
both signed zeros on the same side of their branch cuts, ``abs`` is NaN when either part is,
``rsqrt`` and ``sign`` are computed in polar form. These helpers reproduce XLA's results,
measured against JAX 0.10.2 on a grid of special values; they compute in the operand's own
precision, as XLA does. Known remaining differences: which part holds a NaN in the inverse
trigonometric and hyperbolic functions at infinite or NaN operands, some signs of zero in
``atan``, and last-bit differences where XLA fuses a multiply-add.
"""

from __future__ import annotations

import numpy as np


def compose(re, im, dtype):
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def _nan_pair(z):
    """Both parts NaN wherever either is (XLA's rule for several functions)."""
    any_nan = np.isnan(np.real(z)) | np.isnan(np.imag(z))
    return np.where(any_nan, np.asarray(complex(np.nan, np.nan), z.dtype), z)


def _zero_sign_free(z):
    """``z`` with -0 parts made +0 (``-0 + 0 == +0``)."""
    return z + np.zeros((), z.dtype)


def _plus_zero(part, where):
    """``part`` with its zeros made +0 where ``where`` holds: XLA's expansions give +0 for
    the parts that come from a zero input part, whatever its sign."""
    return np.where(where & (part == 0), np.zeros((), part.dtype), part)


def _fix_zeros(out, z, real_when=None, imag_when=None):
    re, im = np.real(out), np.imag(out)
    if real_when is not None:
        re = _plus_zero(re, real_when)
    if imag_when is not None:
        im = _plus_zero(im, imag_when)
    return compose(re, im, out.dtype)


def multiply(x, y):
    """The schoolbook product, as XLA computes it (no C99 infinity recovery)."""
    xr, xi, yr, yi = np.real(x), np.imag(x), np.real(y), np.imag(y)
    return compose(xr * yr - xi * yi, xr * yi + xi * yr, np.result_type(x, y))


def divide(a, b):
    """XLA's complex division: Smith's algorithm, then, where both parts came out NaN, the
    C99 Annex G special cases (zero denominator, infinite numerator or denominator)."""
    with np.errstate(all="ignore"):  # both branches of each where are computed: no warnings
        return _divide(a, b)


def _divide(a, b):
    a, b = np.broadcast_arrays(a, b)
    ar, ai, br, bi = np.real(a), np.imag(a), np.real(b), np.imag(b)
    real_larger = np.abs(br) >= np.abs(bi)
    ratio = np.where(real_larger, bi / br, br / bi)
    denom = np.where(real_larger, br + bi * ratio, bi + br * ratio)
    out_r = np.where(real_larger, ar + ai * ratio, ar * ratio + ai) / denom
    out_i = np.where(real_larger, ai - ar * ratio, ai * ratio - ar) / denom
    one, zero, inf = (np.ones((), ar.dtype), np.zeros((), ar.dtype),
                      np.asarray(np.inf, ar.dtype))
    special_r, special_i = out_r, out_i
    # finite numerator over an infinite denominator: signed zeros
    finite_num = np.isfinite(ar) & np.isfinite(ai)
    inf_den = np.isinf(br) | np.isinf(bi)
    br_unit = np.copysign(np.where(np.isinf(br), one, zero), br)
    bi_unit = np.copysign(np.where(np.isinf(bi), one, zero), bi)
    case = finite_num & inf_den
    special_r = np.where(case, zero * (ar * br_unit + ai * bi_unit), special_r)
    special_i = np.where(case, zero * (ai * br_unit - ar * bi_unit), special_i)
    # infinite numerator over a finite denominator: signed infinities
    inf_num = np.isinf(ar) | np.isinf(ai)
    finite_den = np.isfinite(br) & np.isfinite(bi)
    ar_unit = np.copysign(np.where(np.isinf(ar), one, zero), ar)
    ai_unit = np.copysign(np.where(np.isinf(ai), one, zero), ai)
    case = inf_num & finite_den
    special_r = np.where(case, inf * (ar_unit * br + ai_unit * bi), special_r)
    special_i = np.where(case, inf * (ai_unit * br - ar_unit * bi), special_i)
    # zero denominator: infinity with the sign of b's real part, times a
    case = (br == 0) & (bi == 0) & ~(np.isnan(ar) & np.isnan(ai))
    signed_inf = np.copysign(inf, br)
    special_r = np.where(case, signed_inf * ar, special_r)
    special_i = np.where(case, signed_inf * ai, special_i)
    both_nan = np.isnan(out_r) & np.isnan(out_i)
    out = np.empty(out_r.shape, a.dtype)
    out.real = np.where(both_nan, special_r, out_r)
    out.imag = np.where(both_nan, special_i, out_i)
    return out


def exp(z):
    a, b = np.real(z), np.imag(z)
    e = np.exp(a)
    out = compose(e * np.cos(b), np.where(b == 0, b, e * np.sin(b)), z.dtype)
    return _fix_zeros(out, z, imag_when=b == 0)


def expm1(z):
    out = np.expm1(z)
    a, b = np.real(z), np.imag(z)
    out = compose(np.real(out), np.where(b == 0, b, np.imag(out)), z.dtype)
    return _fix_zeros(out, z, real_when=a == 0, imag_when=b == 0)


def _hyperbolic(fn, real_zero_from, imag_zero_from):
    def apply(z):
        out = _nan_pair(fn(z))
        a, b = np.real(z), np.imag(z)
        out = compose(np.real(out), np.where(b == 0, b, np.imag(out)), z.dtype)
        real_when = None if real_zero_from is None else real_zero_from(a, b)
        return _fix_zeros(out, z, real_when, imag_zero_from(a, b))

    apply.__name__ = fn.__name__
    return apply


sinh = _hyperbolic(np.sinh, lambda a, b: a == 0, lambda a, b: b == 0)
cosh = _hyperbolic(np.cosh, None, lambda a, b: (a == 0) | (b == 0))
tanh = _hyperbolic(np.tanh, None, lambda a, b: b == 0)


def tan(z):
    out = _nan_pair(np.tan(z))
    a = np.real(z)
    out = compose(np.where(a == 0, a, np.real(out)), np.imag(out), z.dtype)
    return _fix_zeros(out, z, real_when=a == 0)


def _sinh_cosh(b):
    """sinh and cosh from expm1, as JAX's lowering of complex sin and cos computes them."""
    up, down = np.expm1(b), np.expm1(-b)
    two = np.asarray(2, b.dtype)
    return (up - down) / two, (up + down + two) / two


def sin(z):
    a, b = np.real(z), np.imag(z)
    sinh_b, cosh_b = _sinh_cosh(b)
    re = np.where(a == 0, np.zeros((), a.dtype), np.sin(a) * cosh_b)
    return compose(re, np.cos(a) * sinh_b, z.dtype)


def cos(z):
    a, b = np.real(z), np.imag(z)
    sinh_b, cosh_b = _sinh_cosh(b)
    im = np.where(a == 0, np.zeros((), a.dtype), -np.sin(a) * sinh_b)
    return compose(np.cos(a) * cosh_b, im, z.dtype)


def log(z):
    return _nan_pair(np.log(z))


def log1p(z):
    return _nan_pair(np.log1p(z))


def sqrt(z):
    # a NaN in either part makes both parts NaN, even where C99 gives sqrt(x + inf i) = inf
    return _nan_pair(np.sqrt(_zero_sign_free(_nan_pair(z))))


def asin(z):
    # the branch cuts (real axis, |x| > 1) ignore the sign of a zero imaginary part
    return np.arcsin(compose(np.real(z), _plus_zero(np.imag(z), True), z.dtype))


def acos(z):
    return np.arccos(_zero_sign_free(z))


def asinh(z):
    # the branch cuts (imaginary axis, |y| > 1) ignore the sign of a zero real part
    return np.arcsinh(compose(_plus_zero(np.real(z), True), np.imag(z), z.dtype))


def acosh(z):
    return np.arccosh(_zero_sign_free(z))


def abs(z):  # noqa: A001 - XLA's name for the operation
    """|z|, NaN when either part is NaN (XLA's hypot takes a NaN-propagating max)."""
    a, b = np.real(z), np.imag(z)
    return np.where(np.isnan(a) | np.isnan(b), np.asarray(np.nan, a.dtype), np.abs(z))


def sign(z):
    r = abs(z)
    out = compose(np.real(z) / r, np.imag(z) / r, z.dtype)
    return np.where(z == 0, z, out)


def rsqrt(z):
    """Polar form: |z|^-1/2 (cos(-t/2) + i sin(-t/2)), t = arg z, with XLA's special cases."""
    a, b = np.real(z), np.imag(z)
    one, zero = np.ones((), a.dtype), np.zeros((), a.dtype)
    r = one / np.sqrt(abs(z))
    t = np.arctan2(b, a) * np.asarray(-0.5, a.dtype)
    re, im = r * np.cos(t), r * np.sin(t)
    zero_zero = (a == 0) & (b == 0)
    infinite = (np.isinf(b) & np.isnan(a)) | np.isinf(a)
    re = np.where(zero_zero, np.asarray(np.inf, a.dtype),
                  np.where(infinite, np.copysign(zero, a), re))
    im = np.where(zero_zero, np.asarray(np.nan, a.dtype),
                  np.where(infinite, -np.copysign(zero, b), im))
    return compose(re, im, z.dtype)


def square(z):
    a, b = np.real(z), np.imag(z)
    out = compose((a - b) * (a + b), np.asarray(2, a.dtype) * a * b, z.dtype)
    return _fix_zeros(out, z, real_when=True)


def atanh(z):
    return _fix_zeros(np.arctanh(z), z, real_when=np.real(z) == 0)


# -- XLA's complex atan2 builds on its older elemental sqrt and log, not on the sqrt and log
# -- operations above: their special cases differ (e.g. atan2(0, -1j) is +pi, not -pi)


def _hypot_parts(z):
    """(min, max, 1 + (min/max)^2) of |re|, |im|, NaN-propagating as XLA's max/min are."""
    a, b = np.abs(np.real(z)), np.abs(np.imag(z))
    nan = np.isnan(a) | np.isnan(b)
    nan_value = np.asarray(np.nan, a.dtype)
    low = np.where(nan, nan_value, np.minimum(a, b))
    high = np.where(nan, nan_value, np.maximum(a, b))
    ratio = low / high
    return low, high, np.ones((), a.dtype) + ratio * ratio


def _elemental_abs(z):
    low, high, one_plus = _hypot_parts(z)
    r = high * np.sqrt(one_plus)
    return np.where(np.isnan(r), low, r)


def _elemental_sqrt(z):
    a, b = np.real(z), np.imag(z)
    low, high, one_plus = _hypot_parts(z)
    r = np.sqrt(high) * np.power(one_plus, np.asarray(0.25, a.dtype))
    r = np.where(np.isnan(r), low, r)
    half_angle = np.arctan2(b, a) * np.asarray(0.5, a.dtype)
    c, s = np.cos(half_angle), np.sin(half_angle)
    inf, zero = np.asarray(np.inf, a.dtype), np.zeros((), a.dtype)
    b_inf = np.abs(b) == inf
    re = np.where(b_inf | (a == inf), inf, np.where((a == -inf) & ~b_inf, zero, r * c))
    im = np.where(b_inf | (a == -inf), np.copysign(inf, b),
                  np.where(np.isnan(r), np.asarray(np.nan, a.dtype),
                           np.where(s == 0, s, r * s)))
    return np.where(r == 0, np.zeros((), z.dtype), compose(re, im, z.dtype))


def _elemental_log(z):
    return compose(np.log(_elemental_abs(z)), np.arctan2(np.imag(z), np.real(z)), z.dtype)


def atan2(y, x):
    """-i log((x + i y) / sqrt(x^2 + y^2)) in XLA's complex arithmetic."""
    unit = np.asarray(1j, y.dtype)
    squares = multiply(x, x) + multiply(y, y)
    quotient = divide(x + multiply(unit, y), _elemental_sqrt(squares))
    return multiply(-unit, _elemental_log(quotient))
