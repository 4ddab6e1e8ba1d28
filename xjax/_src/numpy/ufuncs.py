"""Elementwise arithmetic with NumPy's names: +, -, *, /, //, %, **, exponentials and
logarithms, trigonometry, rounding, signs and complex parts.

Each function promotes its arguments NumPy-style (JAX's lattice, weak types) and calls lax.
Eager calls on Arrays that need no promotion take a fast path straight to lax: the benchmark
of one ``jnp.exp`` on a small array is dominated by this overhead.
"""

from __future__ import annotations

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, check_arraylike, convert_element_type,
                                        dtype_and_weak, lax_convert, promote_args,
                                        promote_args_inexact, promote_args_numeric,
                                        promote_dtypes_inexact, scalar_aval, to_jax)
from xjax._src.lax.naryop import scalar_like
from xjax._src.numpy.creation import full_like
from xjax._src.numpy.extended import is_extended
from xjax._src.transformations.custom_derivatives import custom_jvp
from xjax._src.numpy.nested_jit import inline_jit, jit_when_staged

_INEXACT = frozenset(dtypes._float_dtypes + dtypes._complex_dtypes)
_FLOATS = frozenset(dtypes._float_dtypes)
_NUMERIC = frozenset(dtypes._int_dtypes + dtypes._float_dtypes + dtypes._complex_dtypes)
_ALL = frozenset(dtypes.ALL_DTYPES)
_PY_NUMBERS = frozenset((int, float))


def const(x, value):
    """A rank-0 Array of ``value`` with ``x``'s dtype and weak type (so a weakly typed ``x``
    stays weak, like a Python scalar would)."""
    aval = aval_of(x)
    return Array._from_numpy(np.asarray(value, aval.dtype), scalar_aval(aval.dtype,
                                                                      aval.weak_type))


def strong_const(x, value):
    """A rank-0 Array of ``value`` with ``x``'s dtype and no weak type: where JAX builds a
    constant with ``_constant_like`` or ``asarray(value, dtype)``, its result loses the weak
    type too. (Where JAX uses ``lax._const``, ``scalar_like`` follows its rule.)"""
    dtype = aval_of(x).dtype
    return Array._from_numpy(np.asarray(value, dtype), scalar_aval(dtype, False))


def _dtype(x):
    return aval_of(x).dtype


def _operand_aval(x, t):
    """The aval of an Array or tracer (``t`` is its type), else None."""
    if t is Array:
        return x._aval
    return x.aval if isinstance(x, Tracer) else None


def _fast_scalar(aval, y, allowed):
    """For ``array op Python int/float`` (``aval``: the array's): the scalar as an Array of
    the array's dtype when no other promotion is needed, else None."""
    dt = aval.dtype
    if dt not in allowed:
        return None
    if type(y) is float:
        if dt not in _INEXACT:
            return None
        npy = np.asarray(y, dt)
    elif dt in _INEXACT:
        npy = np.asarray(y, dt)
    elif dt.kind in "iu":
        npy = np.asarray(dtypes.coerce_python_int(y, dt))
    else:
        return None
    return Array._from_numpy(npy, scalar_aval(dt, aval.weak_type))


# --------------------------------------------------------------------------------------------
# factories


def unary_inexact(name: str, lax_fn, doc: str):
    """A unary function computing in a floating/complex dtype (ints are promoted)."""

    direct = getattr(lax_fn, "bind_operand", lax_fn)  # skips a frame on the eager hot path

    def fn(x, /):
        aval = _operand_aval(x, type(x))
        if aval is not None and aval.dtype in _INEXACT:
            return direct(x)
        x, = promote_args_inexact(name, x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def binary(name: str, lax_fn, doc: str, *, fast=_NUMERIC, promote=promote_args,
           bool_fn=None, extended_fn=None):
    """A binary function with NumPy promotion. ``fast`` are the dtypes for which two Arrays
    of that same dtype go straight to ``lax_fn``; ``bool_fn`` replaces ``lax_fn`` for bools;
    ``extended_fn(name, x1, x2)`` takes calls with extended arrays (PRNG keys), which are
    otherwise refused."""

    direct = getattr(lax_fn, "bind_operands", lax_fn)  # skips a frame on the eager hot path

    def fn(x1, x2, /):
        # Operands that need no promotion go straight to lax, eager or traced (the same
        # equations as the promoting path: a traced pair must also agree on weak types, or
        # promotion would stage a conversion).
        t1, t2 = type(x1), type(x2)
        a1 = _operand_aval(x1, t1)
        if a1 is not None:
            a2 = _operand_aval(x2, t2)
            if a2 is not None:
                if (a1.dtype is a2.dtype and a1.dtype in fast
                        and (len(a1.shape) == len(a2.shape) or not a1.shape or not a2.shape)
                        and (a1.weak_type == a2.weak_type or t1 is t2 is Array)):
                    return direct(x1, x2)
            elif t2 in _PY_NUMBERS:
                y = _fast_scalar(a1, x2, fast)
                if y is not None:
                    return direct(x1, y)
        elif t1 in _PY_NUMBERS:
            a2 = _operand_aval(x2, t2)
            if a2 is not None:
                y = _fast_scalar(a2, x1, fast)
                if y is not None:
                    return direct(y, x2)
        if extended_fn is not None and (is_extended(x1) or is_extended(x2)):
            return extended_fn(name, x1, x2)
        return promoted(x1, x2)

    @inline_jit()  # a large eager call: promotions and the operation in one program, as JAX
    def promoted(x1, x2):
        x1, x2 = promote(name, x1, x2)
        if bool_fn is not None and _dtype(x1) == dtypes.bool_:
            return bool_fn(x1, x2)
        return lax_fn(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# --------------------------------------------------------------------------------------------
# arithmetic

add = binary("add", lax.add, "Elementwise ``x1 + x2`` (logical or for bools).",
             fast=_NUMERIC, bool_fn=lax.bitwise_or)
subtract = binary("subtract", lax.sub, "Elementwise ``x1 - x2``.")
multiply = binary("multiply", lax.mul, "Elementwise ``x1 * x2`` (logical and for bools).",
                  bool_fn=lax.bitwise_and)
true_divide = binary("true_divide", lax.div,
                     "Elementwise ``x1 / x2``; integers are divided as floats.",
                     fast=_INEXACT, promote=promote_args_inexact)
divide = binary("divide", lax.div, "Elementwise ``x1 / x2``; integers are divided as floats.",
                fast=_INEXACT, promote=promote_args_inexact)
maximum = binary("maximum", lax.max, "Elementwise maximum (NaN propagates).", fast=_ALL)
minimum = binary("minimum", lax.min, "Elementwise minimum (NaN propagates).", fast=_ALL)
arctan2 = binary("arctan2", lax.atan2, "Elementwise arc tangent of ``x1 / x2`` (quadrant-aware).",
                 fast=_FLOATS, promote=promote_args_inexact)
atan2 = arctan2
nextafter = binary("nextafter", lax.nextafter,
                   "The next floating-point value after ``x1`` towards ``x2``.",
                   fast=_FLOATS, promote=promote_args_inexact)


def negative(x, /):
    """Elementwise ``-x``."""
    if type(x) is not Array:
        x, = promote_args("negative", x)
    return lax.neg(x)


def positive(x, /):
    """Elementwise ``+x`` (the value itself)."""
    x, = promote_args("positive", x)
    return x


def absolute(x, /):
    """Elementwise absolute value (unsigned and bool values are returned as they are;
    complex values give their magnitude)."""
    if type(x) is not Array:
        x, = promote_args("absolute", x)
    dt = _dtype(x)
    if dt == dtypes.bool_ or dtypes.is_unsigned(dt):
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001


def fabs(x, /):
    """Elementwise absolute value, computed in a floating dtype."""
    x, = promote_args_inexact("fabs", x)
    return lax.abs(x)


def sign(x, /):
    """Elementwise sign: -1, 0 or 1 (``x / |x|`` for complex values)."""
    if type(x) is not Array:
        x, = promote_args("sign", x)
    return lax.sign(x)


def reciprocal(x, /):
    """Elementwise ``1 / x`` in a floating dtype."""
    x, = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def square(x, /):
    """Elementwise ``x * x``."""
    x, = promote_args_numeric("square", x)
    return lax.square(x)


@jit_when_staged()
def floor_divide(x1, x2, /):
    """Elementwise floor division ``x1 // x2`` with Python's rounding toward -inf.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.floor_divide(jnp.array([7, -7]), 2)
    Array([ 3, -4], dtype=int32)
    """
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dt = _dtype(x1)
    if dtypes.is_unsigned(dt):
        return lax.div(x1, x2)
    if dtypes.is_integer(dt):
        quotient = lax.div(x1, x2)
        signs_differ = lax.ne(lax.sign(x1), lax.sign(x2))
        inexact = lax.ne(lax.rem(x1, x2), const(x1, 0))
        fix = lax.bitwise_and(signs_differ, inexact)
        return _select(fix, lax.sub(quotient, const(quotient, 1)), quotient)
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def _select(pred, on_true, on_false):
    """``where`` for operands lax accepts as they are (broadcast to one shape)."""
    from xjax._src.numpy.logic import where  # logic imports this module
    return where(pred, on_true, on_false)


def _float_divmod(x1, x2):
    """Floor quotient and modulus of floats, as Python's ``divmod`` defines them."""
    mod = lax.rem(x1, x2)
    # x % 0 is NaN: divide x itself so that x // 0 is +-inf (NaN for 0 // 0), as JAX does
    dividend = _select(lax.eq(x2, const(x2, 0)), x1, lax.sub(x1, mod))
    quotient = lax.div(dividend, x2)
    fix = lax.bitwise_and(lax.ne(mod, const(mod, 0)), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = _select(fix, lax.add(mod, x2), mod)
    quotient = _select(fix, lax.sub(quotient, const(quotient, 1)), quotient)
    return lax.round(quotient, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def _int_divisor(x2):
    """Integer divisors with 0 replaced by 1, so ``x % 0`` is 0 as in JAX."""
    return _select(lax.eq(x2, const(x2, 0)), const(x2, 1), x2)


@jit_when_staged()
def remainder(x1, x2, /):
    """Elementwise remainder with the sign of the divisor (Python's ``%``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.remainder(jnp.array([7, -7]), 3)
    Array([1, 2], dtype=int32)
    """
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    dt = _dtype(x1)
    if dtypes.is_complex(dt):
        raise TypeError("remainder does not support complex-valued inputs")
    if dtypes.is_integer(dt):
        x2 = _int_divisor(x2)
    trunc_mod = lax.rem(x1, x2)
    if dtypes.is_unsigned(dt):
        return trunc_mod
    zero = const(trunc_mod, 0)
    nonzero = lax.ne(trunc_mod, zero)
    signs_differ = lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, const(x2, 0)))
    return _select(lax.bitwise_and(signs_differ, nonzero), lax.add(trunc_mod, x2), trunc_mod)


mod = remainder


@jit_when_staged()
def fmod(x1, x2, /):
    """Elementwise remainder with the sign of the dividend (C's ``fmod``)."""
    x1, x2 = promote_args_numeric("fmod", x1, x2)
    if dtypes.is_integer(_dtype(x1)):
        x2 = _int_divisor(x2)
    return lax.rem(x1, x2)


@jit_when_staged()
def divmod(x1, x2, /):  # noqa: A001
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if dtypes.is_inexact(_dtype(x1)) and not dtypes.is_complex(_dtype(x1)):
        return _float_divmod(x1, x2)
    return floor_divide(x1, x2), remainder(x1, x2)


def power(x1, x2, /):
    """Elementwise ``x1 ** x2``.

    A Python int exponent uses ``lax.integer_pow`` (repeated multiplication); integer arrays
    raised to integer arrays use binary exponentiation.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.power(jnp.array([2, 3]), 2)
    Array([4, 9], dtype=int32)
    """
    check_arraylike("power", x1, x2)
    if type(x2) is int:
        if type(x1) is not Array or x1._aval.dtype == dtypes.bool_:
            x1, = promote_args_numeric("power", x1)
        return lax.integer_pow(x1, x2)
    x1, x2 = promote_args_numeric("power", x1, x2)
    if dtypes.is_integer(_dtype(x1)):
        return _integer_power(x1, x2)
    return lax.pow(x1, x2)


pow = power  # noqa: A001


def _integer_power(base, exponent):
    """``base ** exponent`` for integer arrays as JAX computes it: binary exponentiation
    over the exponent's low 6 bits (more would overflow for any base above 1), wrapping on
    overflow; a negative exponent is not an error (its low bits are used, as in JAX)."""
    from xjax._src.numpy.shape_ops import broadcast_arrays  # shape_ops imports this module
    zero, one = const(exponent, 0), const(exponent, 1)
    # pow(0, e) is 0 for e != 0 and 1 for e == 0; computed first, as JAX does, so that shapes
    # that do not broadcast are lax's TypeError
    zero_base = lax.bitwise_and(lax.eq(base, zero), lax.ne(exponent, zero))
    base, exponent = broadcast_arrays(base, exponent)
    acc = _select(zero_base, zero, one)
    for _ in range(6):
        acc = _select(lax.bitwise_and(exponent, one), lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        exponent = lax.shift_right_logical(exponent, one)
    return acc


def float_power(x1, x2, /):
    """``x1 ** x2`` in the promoted inexact dtype: unlike NumPy's, JAX's ``float_power``
    does not widen (float16 stays float16)."""
    return lax.pow(*promote_args_inexact("float_power", x1, x2))


# --------------------------------------------------------------------------------------------
# exponentials, logarithms, roots and trigonometry

exp = unary_inexact("exp", lax.exp, "Elementwise exponential.")
exp2 = unary_inexact("exp2", lax.exp2, "Elementwise ``2 ** x``.")
expm1 = unary_inexact("expm1", lax.expm1, "Elementwise ``exp(x) - 1``, accurate near 0.")
log = unary_inexact("log", lax.log, "Elementwise natural logarithm.")
log1p = unary_inexact("log1p", lax.log1p, "Elementwise ``log(1 + x)``, accurate near 0.")
sqrt = unary_inexact("sqrt", lax.sqrt, "Elementwise square root.")
cbrt = unary_inexact("cbrt", lax.cbrt, "Elementwise cube root.")
sin = unary_inexact("sin", lax.sin, "Elementwise sine.")
cos = unary_inexact("cos", lax.cos, "Elementwise cosine.")
tan = unary_inexact("tan", lax.tan, "Elementwise tangent.")
arcsin = unary_inexact("arcsin", lax.asin, "Elementwise inverse sine.")
arccos = unary_inexact("arccos", lax.acos, "Elementwise inverse cosine.")
arctan = unary_inexact("arctan", lax.atan, "Elementwise inverse tangent.")
sinh = unary_inexact("sinh", lax.sinh, "Elementwise hyperbolic sine.")
cosh = unary_inexact("cosh", lax.cosh, "Elementwise hyperbolic cosine.")
tanh = unary_inexact("tanh", lax.tanh, "Elementwise hyperbolic tangent.")
arcsinh = unary_inexact("arcsinh", lax.asinh, "Elementwise inverse hyperbolic sine.")
arccosh = jit_when_staged()(
    unary_inexact("arccosh", lax.acosh, "Elementwise inverse hyperbolic cosine."))
arctanh = unary_inexact("arctanh", lax.atanh, "Elementwise inverse hyperbolic tangent.")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _scale_log(name, x, scale):
    """``scale(log(x))``; a complex logarithm's real and imaginary parts are scaled apart,
    as JAX's base-2 and base-10 logarithms do (not by a complex division)."""
    x, = promote_args_inexact(name, x)
    log_x = lax.log(x)
    if dtypes.is_complex(_dtype(x)):
        real, imag = lax.real(log_x), lax.imag(log_x)
        return lax.complex(scale(real), scale(imag))
    return scale(log_x)


def log2(x, /):
    """Elementwise base-2 logarithm: ``log(x) / log(2)``, as JAX computes it."""
    return _scale_log("log2", x, lambda part: lax.div(part, lax.log(strong_const(part, 2))))


def log10(x, /):
    """Elementwise base-10 logarithm: ``log(x)`` times the rounded ``1 / log(10)``, as JAX
    computes it (so its bits are JAX's, not those of a division by ``log(10)``)."""
    return _scale_log("log10", x,
                      lambda part: lax.mul(part, strong_const(part, 0.4342944819032518)))


@jit_when_staged()
def hypot(x1, x2, /):
    """Elementwise ``sqrt(x1**2 + x2**2)`` without intermediate overflow."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if dtypes.is_complex(_dtype(x1)):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    x1, x2 = lax.abs(x1), lax.abs(x2)
    infinite = lax.bitwise_or(isinf(x1), isinf(x2))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    is_zero = lax.eq(big, const(big, 0))
    safe_big = _select(is_zero, const(big, 1), big)
    ratio = lax.div(small, safe_big)
    scaled = lax.mul(big, lax.sqrt(lax.add(const(ratio, 1), lax.mul(ratio, ratio))))
    return _select(infinite, scalar_like(big, np.inf), _select(is_zero, big, scaled))


@jit_when_staged()
def sinc(x, /):
    """Normalized sinc: ``sin(pi x) / (pi x)``, 1 at 0."""
    x, = promote_args_inexact("sinc", x)
    is_zero = lax.eq(x, scalar_like(x, 0))
    pi_x = lax.mul(scalar_like(x, np.pi), _select(is_zero, scalar_like(x, 1), x))
    return _select(is_zero, scalar_like(x, 1), lax.div(lax.sin(pi_x), pi_x))


def deg2rad(x, /):
    """Convert angles from degrees to radians."""
    x, = promote_args_inexact("deg2rad", x)
    return lax.mul(x, scalar_like(x, np.pi / 180))


def rad2deg(x, /):
    """Convert angles from radians to degrees."""
    x, = promote_args_inexact("rad2deg", x)
    return lax.mul(x, scalar_like(x, 180 / np.pi))


radians = deg2rad
degrees = rad2deg


def logaddexp(x1, x2, /):
    """Elementwise ``log(exp(x1) + exp(x2))`` without overflow.

    Like JAX's, it carries a custom derivative: ``exp(x1 - out)`` and ``exp(x2 - out)``,
    which splits ties evenly (0.5 each at ``x1 == x2``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.grad(jnp.logaddexp)(1.0, 1.0)
    Array(0.5, dtype=float32, weak_type=True)
    """
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp_with_jvp(False)(x1, x2)


def logaddexp2(x1, x2, /):
    """Elementwise ``log2(2**x1 + 2**x2)`` without overflow (custom derivative as
    :func:`logaddexp`'s, in base 2)."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp_with_jvp(True)(x1, x2)


def _wrap_between(x, bound):
    """``x`` wrapped into ``[-bound, bound)``."""
    period = const(x, 2 * bound)
    shifted = lax.rem(lax.add(x, const(x, bound)), period)
    shifted = _select(lax.lt(shifted, const(x, 0)), lax.add(shifted, period), shifted)
    return lax.sub(shifted, const(x, bound))


def _logaddexp_value(x1, x2, base2):
    x1, x2 = to_jax(x1), to_jax(x2)  # the custom rule may be handed NumPy primals
    amax = lax.max(x1, x2)
    exp = lax.exp2 if base2 else lax.exp
    scale = (lambda v: lax.mul(v, const(v, 1 / np.log(2)))) if base2 else (lambda v: v)
    if dtypes.is_complex(_dtype(x1)):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, const(amax, 2)))
        out = lax.add(amax, scale(lax.log1p(exp(delta))))
        bound = np.pi / np.log(2) if base2 else np.pi
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), bound))
    delta = lax.sub(x1, x2)
    # NaNs, or infinities of one sign: the plain sum gives the right NaN or infinity
    is_nan, plain = lax.ne(delta, delta), lax.add(x1, x2)
    stable = lax.add(amax, scale(lax.log1p(exp(lax.neg(lax.abs(delta))))))
    return lax.select(is_nan, plain, stable)  # one shape already: JAX's lax.select


def _finite_or_zero(x):
    """``x`` with +inf replaced by 0 (keeps the custom derivative finite at infinities)."""
    real = lax.real(x) if dtypes.is_complex(_dtype(x)) else x
    return lax.select(lax.eq(real, const(real, np.inf)), lax.full_like(x, 0), x)


_LOGADDEXP_CACHE = {}


def _logaddexp_with_jvp(base2):
    """``logaddexp`` (or ``logaddexp2``) as a ``custom_jvp`` function, built on first use:
    xjax.custom_derivatives sits beside this layer and imports it (see
    docs/design-notes.md)."""
    fun = _LOGADDEXP_CACHE.get(base2)
    if fun is not None:
        return fun

    def logaddexp(x1, x2):
        return _logaddexp_value(x1, x2, base2)

    def logaddexp2(x1, x2):
        return _logaddexp_value(x1, x2, base2)

    fun = custom_jvp(logaddexp2 if base2 else logaddexp)
    exp = lax.exp2 if base2 else lax.exp

    @fun.defjvp
    def _logaddexp_jvp(primals, tangents):
        x1, x2 = to_jax(primals[0]), to_jax(primals[1])  # NumPy primals pass through, as JAX
        t1, t2 = tangents
        out = fun(x1, x2)
        weight1 = exp(lax.sub(_finite_or_zero(x1), _finite_or_zero(out)))
        weight2 = exp(lax.sub(_finite_or_zero(x2), _finite_or_zero(out)))
        return out, lax.add(lax.mul(t1, weight1), lax.mul(t2, weight2))

    _LOGADDEXP_CACHE[base2] = fun
    return fun


@jit_when_staged()
def heaviside(x1, x2, /):
    """Heaviside step: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0``."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero, one = scalar_like(x1, 0), scalar_like(x1, 1)
    return _select(lax.lt(x1, zero), zero, _select(lax.gt(x1, zero), one, x2))


@jit_when_staged()
def copysign(x1, x2, /):
    """``|x1|`` with the sign (bit) of ``x2``."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    magnitude = lax.abs(x1)
    return _select(signbit(x2), lax.neg(magnitude), magnitude)


_SIGNED_OF_WIDTH = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


@jit_when_staged()
def signbit(x, /):
    """Whether the sign bit is set (True for -0.0 and negative NaNs)."""
    x, = promote_args("signbit", x)
    dt = _dtype(x)
    if dt == dtypes.bool_:
        return full_like(x, False, dtype=dtypes.bool_)
    if dtypes.is_integer(dt):
        return lax.lt(x, strong_const(x, 0))
    if dtypes.is_complex(dt):
        raise TypeError("signbit does not support complex-valued inputs")
    as_int = _SIGNED_OF_WIDTH.get(dt.itemsize)
    if as_int is None:
        return lax.lt(lax_convert_float32(x), Array._from_numpy(
            np.zeros((), np.float32), scalar_aval(np.dtype(np.float32), False)))
    bits = lax.bitcast_convert_type(x, as_int)
    return lax.lt(bits, Array._from_numpy(np.zeros((), as_int), scalar_aval(as_int, False)))


def lax_convert_float32(x):
    return lax_convert(x, np.dtype(np.float32), False)


def ldexp(x1, x2, /):
    """``x1 * 2 ** x2`` (``x2`` integer)."""
    check_arraylike("ldexp", x1, x2)
    if not (dtypes.is_integer(dtype_and_weak(x2)[0]) or dtype_and_weak(x2)[0] == dtypes.bool_):
        raise ValueError(f"ldexp: x2 must be an integer array, got {dtype_and_weak(x2)[0]}")
    x1, = promote_args_inexact("ldexp", x1)
    scale = lax.exp2(convert_element_type(to_jax(x2), _dtype(x1), False))
    x1, scale = promote_args("ldexp", x1, scale)
    return lax.mul(x1, scale)


# --------------------------------------------------------------------------------------------
# rounding


def _integral_passthrough(name, x):
    """Integers and bools are already integral: returned as they are (weak type kept)."""
    x, = promote_args(name, x)
    dt = _dtype(x)
    return x, dt == dtypes.bool_ or dtypes.is_integer(dt)


def floor(x, /):
    """Elementwise floor (integers are returned as they are)."""
    x, integral = _integral_passthrough("floor", x)
    return x if integral else lax.floor(x)


def ceil(x, /):
    """Elementwise ceiling (integers are returned as they are)."""
    x, integral = _integral_passthrough("ceil", x)
    return x if integral else lax.ceil(x)


@jit_when_staged()
def trunc(x, /):
    """Round toward zero (integers are returned as they are)."""
    x, integral = _integral_passthrough("trunc", x)
    if integral:
        return x
    return _select(lax.lt(x, const(x, 0)), lax.ceil(x), lax.floor(x))




@jit_when_staged()
def modf(x, /, out=None):
    """The fractional and integral parts of ``x`` (both with the sign of ``x``)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    x, = promote_args_inexact("modf", x)
    whole = trunc(x)
    return lax.sub(x, whole), whole


def _round_half_even(x):
    if dtypes.is_complex(_dtype(x)):
        re = lax.round(lax.real(x), lax.RoundingMethod.TO_NEAREST_EVEN)
        im = lax.round(lax.imag(x), lax.RoundingMethod.TO_NEAREST_EVEN)
        return lax.complex(re, im)
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@jit_when_staged()
def rint(x, /):
    """Round to the nearest integer, halves to even; integers become floats (as NumPy)."""
    check_arraylike("rint", x)
    if dtypes.is_integer(dtype_and_weak(x)[0]) or dtype_and_weak(x)[0] == dtypes.bool_:
        x, = promote_dtypes_inexact(x)
        return _strong(x)
    x, = promote_args_inexact("rint", x)
    return _round_half_even(x)


@jit_when_staged(static_argnames=('decimals',))
def round(a, decimals: int = 0, out=None):  # noqa: A001
    """Round to ``decimals`` decimal places, halves to even (as NumPy).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.round(jnp.array([0.5, 1.5, 2.5]))
    Array([0., 2., 2.], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    decimals = int(decimals)
    a, = promote_args("round", a)
    dt = _dtype(a)
    if dt == dtypes.bool_:
        raise ValueError(f"data type {np.bool_} not inexact")  # JAX's error for booleans
    if dtypes.is_integer(dt):
        if decimals >= 0:
            return a
        raise NotImplementedError("integer np.round not implemented for decimals < 0")
    if decimals == 0:
        return _round_half_even(a)
    factor = scalar_like(a, 10.0 ** decimals)
    return lax.div(_round_half_even(lax.mul(a, factor)), factor)


around = jit_when_staged("around", static_argnames=("decimals",))(round.__wrapped__)
round_ = round


# --------------------------------------------------------------------------------------------
# complex parts


def real(val, /):
    """The real part (real values are returned as they are)."""
    val, = promote_args("real", val)
    return lax.real(val) if dtypes.is_complex(_dtype(val)) else val


def imag(val, /):
    """The imaginary part (zeros for real values)."""
    val, = promote_args("imag", val)
    if dtypes.is_complex(_dtype(val)):
        return lax.imag(val)
    return full_like(val, 0)


def conjugate(x, /):
    """The complex conjugate (real values are returned as they are)."""
    x, = promote_args("conjugate", x)
    return lax.conj(x) if dtypes.is_complex(_dtype(x)) else x


conj = conjugate


@jit_when_staged(static_argnames=('deg',))
def angle(z, deg: bool = False):
    """The argument of complex values (``arctan2(imag, real)``), in radians or degrees."""
    z, = promote_args("angle", z)
    dt = _dtype(z)
    if dtypes.is_complex(dt):
        re, im = lax.real(z), lax.imag(z)
    else:
        re, = promote_dtypes_inexact(z)
        re = _strong(re)
        im = full_like(re, 0)
    out = lax.atan2(im, re)
    return rad2deg(out) if deg else out


def _strong(x):
    aval = aval_of(x)
    if not aval.weak_type:
        return x
    return lax_convert(x, aval.dtype, False)


@jit_when_staged()
def isinf(x, /):
    """Elementwise test for +-inf (False for integers)."""
    x, = promote_args("isinf", x)
    dt = _dtype(x)
    if dtypes.is_complex(dt):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    if dtypes.is_float(dt):
        return lax.eq(lax.abs(x), strong_const(x, np.inf))
    return full_like(x, False, dtype=dtypes.bool_)


# Re-exported by xjax.numpy: the predicates and logic functions live in logic.py.
__all__ = ["add", "subtract", "multiply", "true_divide", "divide", "floor_divide", "remainder",
           "mod", "fmod", "divmod", "power", "pow", "float_power", "negative", "positive",
           "absolute", "abs", "fabs", "sign", "reciprocal", "square", "maximum", "minimum",
           "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin", "cos",
           "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
           "arctanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arctan2", "atan2",
           "hypot", "sinc", "deg2rad", "rad2deg", "radians", "degrees", "logaddexp",
           "logaddexp2", "heaviside", "copysign", "signbit", "ldexp", "nextafter", "floor",
           "ceil", "trunc", "modf", "rint", "round", "around", "real", "imag", "conjugate",
           "conj", "angle", "isinf"]
