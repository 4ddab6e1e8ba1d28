"""Elementwise arithmetic primitives: add ... pow, rounding, max/min, complex parts.

Exponentials, logarithms and trigonometry are in ``transcendental``; comparisons, select and
clamp in ``compare``; bit operations in ``bitwise``; dtype conversions in ``convert``; special
functions in ``special``. Impls follow XLA's semantics where NumPy's differ: integer division
truncates (and ``x / 0`` is -1), ``round`` rounds half away from zero, ``max``/``min``
propagate NaN and order signed zeros, ``sign(-0.) == -0.``.
"""

from __future__ import annotations

import builtins
import enum
import math

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.primitive import NOT_DIFFERENTIABLE
from xjax._src.lax import complex_numpy
from xjax._src.lax.ad_helpers import late_rule, linear_jvp_of
from xjax._src.lax.ad_rules import transpose_by_parts, unbroadcast, zero_jvp
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.naryop import (ANY, COMPLEX, F32_COMPLEX_F64, F32_F64, FLOATING, INEXACT,
                                  NUMERIC, REAL_NUMERIC, SIGNED_OR_INEXACT, batch_naryop,
                                  binary_wrapper, broadcast_args, by_kind, check_accepted,
                                  complex_dtype, elementwise_result, lower_composite,
                                  lower_single, naryop, real_dtype, result_shape, scalar_like,
                                  unary_wrapper)
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import broadcast_in_dim, broadcast_to, full_like_shape, reshape
from xjax._src.lowering.stablehlo import aval_type, tensor_type, type_shape

# -- derivative rules of the family (transcendental and special use ``parts`` too): ``parts``
# rules are ``rule(t, ans, *primals, **params)``, one per operand; transpose rules
# ``rule(ct, *operands, **params)`` for each linear (undefined) operand --


def elementwise_jvp(primitive, rules):
    """The jvp rule summing (``add_any``, as JAX's ``defjvp``) per-operand contributions
    ``rule(t, ans, *primals, **params)``, each broadcast to the result's shape (lax
    broadcasts rank-0 and size-1 operands)."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        shape = tuple(get_aval(ans).shape)
        total = None
        for rule, t in zip(rules, tangents, strict=True):
            if type(t) is Zero or rule is None:
                continue
            part = rule(t, ans, *primals, **params)
            if type(part) is Zero:
                continue
            part = _explicit_broadcast(part, shape)
            total = part if total is None else add_any_p.bind(total, part)
        return ans, Zero(tangent_aval(get_aval(ans))) if total is None else total

    return jvp


def _explicit_broadcast(x, shape):
    """``x`` broadcast to ``shape`` as JAX's derivative rules make lax's implicit
    broadcasting explicit: size-1 dimensions reshaped away, then ``broadcast_in_dim``."""
    x_shape = tuple(get_aval(x).shape)
    if x_shape == shape:
        return x
    if not x_shape:
        return broadcast_to(x, shape)
    kept = tuple(i for i, (a, b) in enumerate(zip(x_shape, shape, strict=True)) if a == b)
    return broadcast_in_dim(reshape(x, tuple(x_shape[i] for i in kept)), shape, kept)


def _add_or_sub_jvp(primitive, negate_y):
    """JAX's rules for add and sub: one tangent alone is broadcast (negated for sub's
    ``y``); two are added or subtracted by the primitive itself."""

    def jvp(primals, tangents):
        ans = primitive.bind(*primals)
        tx, ty = tangents
        if type(tx) is Zero and type(ty) is Zero:
            return ans, Zero(tangent_aval(get_aval(ans)))
        shape = tuple(get_aval(ans).shape)
        if type(ty) is Zero:
            return ans, _explicit_broadcast(tx, shape)
        if type(tx) is Zero:
            return ans, _explicit_broadcast(neg(ty) if negate_y else ty, shape)
        return ans, primitive.bind(tx, ty)

    return jvp


def parts(name: str, *rules):
    """The jvp rule of the elementwise primitive ``name``, given per operand: ``rule(t, ans,
    *primals, **params)`` is that operand's contribution to the output tangent (None: the
    operand is not differentiable, e.g. an integer exponent). See :func:`elementwise_jvp`."""
    return late_rule(lambda primitive: elementwise_jvp(primitive, rules), name)


def replace_zero(x):
    """``x`` with its zeros replaced by ones (a safe divisor or logarithm argument)."""
    return compare.select(compare.eq(x, scalar_like(x, 0)), full_like_shape(x, 1), x)


def _tangent(t, ans, *primals, **params):
    return t


def _ct_of_operand(position, transform=None):
    """A transpose rule: the cotangent (transformed), summed down to operand ``position``'s
    shape (undoing lax's implicit broadcasting)."""

    def rule(ct, *operands, **params):
        return unbroadcast(ct if transform is None else transform(ct), operands[position].aval)

    return rule


# -- add, sub, mul, neg --

add_p = naryop("add", NUMERIC, impl=np.add, lower=lower_single("stablehlo.add"),
               jvp=late_rule(lambda p: _add_or_sub_jvp(p, False), "add"),
               transpose=transpose_by_parts(_ct_of_operand(0), _ct_of_operand(1)),
               batch=batch_naryop("add"))
add = binary_wrapper(add_p, """Elementwise addition ``x + y``.

Unlike ``jnp.add``, no type promotion: both operands must have the same dtype (Python
scalars take the other operand's dtype only through ``jnp``).

Examples
--------
>>> from xjax import lax
>>> lax.add(1.0, 2.0)
Array(3., dtype=float32, weak_type=True)
""")

# The sum of two tangents or cotangents, as JAX's ``add_any`` (its ``add_jaxvals_p``): an
# ``add`` that jaxprs of derivatives print as ``add_any`` (not public in lax, as in JAX).
add_any_p = naryop("add_any", NUMERIC, impl=np.add, lower=lower_single("stablehlo.add"),
                   jvp=parts("add_any", _tangent, _tangent),
                   transpose=transpose_by_parts(_ct_of_operand(0), _ct_of_operand(1)),
                   batch=batch_naryop("add_any"))

sub_p = naryop("sub", NUMERIC, impl=np.subtract, lower=lower_single("stablehlo.subtract"),
               jvp=late_rule(lambda p: _add_or_sub_jvp(p, True), "sub"),
               transpose=transpose_by_parts(_ct_of_operand(0),
                                            _ct_of_operand(1, lambda ct: neg(ct))),
               batch=batch_naryop("sub"))
sub = binary_wrapper(sub_p, "Elementwise subtraction ``x - y`` (no type promotion).")


def _mul_transpose_x(ct, x, y):
    return unbroadcast(mul(ct, y), x.aval)


def _mul_transpose_y(ct, x, y):
    return unbroadcast(mul(x, ct), y.aval)


# linear in each operand separately (complex-linear: no conjugation, as in JAX)
mul_p = naryop("mul", NUMERIC, impl=np.multiply, lower=lower_single("stablehlo.multiply"),
               jvp=parts("mul", lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t)),
               transpose=transpose_by_parts(_mul_transpose_x, _mul_transpose_y),
               batch=batch_naryop("mul"))
mul = binary_wrapper(mul_p, "Elementwise multiplication ``x * y`` (no type promotion).")

neg_p = naryop("neg", NUMERIC, impl=np.negative, lower=lower_single("stablehlo.negate"),
               jvp=linear_jvp_of("neg"), transpose=transpose_by_parts(lambda ct, x: neg(ct)),
               batch=batch_naryop("neg"))
neg = unary_wrapper(neg_p, "Elementwise negation ``-x`` (integers wrap around).")

# -- div, rem: integer semantics of XLA --


def _all_ones(dtype):
    """-1 for signed integers, the maximum for unsigned ones: XLA's ``x / 0``."""
    return np.asarray(-1, np.int64).astype(dtype)


# Real floats whose division by a broadcast divisor XLA (in JAX) computes as multiplication
# by the reciprocal; the impl and the lowering below both follow it.
_RECIPROCAL_DIVISION = {np.dtype(t) for t in (np.float16, np.float32, np.float64, dtypes.bfloat16)}


def _divide_by_broadcast(x, y):
    """``x / y`` for a divisor ``y`` smaller than ``x`` (a scalar or a broadcast row...): as
    JAX computes it, ``x * (1 / y)``, bfloat16 in float32 rounded once."""
    if x.dtype == dtypes.bfloat16:
        x32, y32 = x.astype(np.float32), y.astype(np.float32)
        return np.multiply(x32, np.divide(np.float32(1), y32)).astype(x.dtype)
    return np.multiply(x, np.divide(np.ones((), x.dtype), y))


def _div_impl(x, y):
    if x.dtype.kind == "c":
        return complex_numpy.divide(x, y)
    if x.dtype.kind not in "iu":
        if (x.dtype in _RECIPROCAL_DIVISION and x.shape != y.shape
                and y.size < math.prod(np.broadcast_shapes(x.shape, y.shape))):
            return _divide_by_broadcast(x, y)
        return np.divide(x, y)
    zero = y == 0
    safe_y = np.where(zero, np.ones((), y.dtype), y)
    remainder = np.fmod(x, safe_y)
    # exact division of x - remainder, which truncates toward zero; INT_MIN / -1 wraps
    quotient = np.floor_divide(x - remainder, safe_y)
    return np.where(zero, _all_ones(x.dtype), quotient)


def _rem_impl(x, y):
    if x.dtype.kind not in "iu":
        return np.fmod(x, y)
    zero = y == 0
    safe_y = np.where(zero, np.ones((), y.dtype), y)
    return np.where(zero, x, np.fmod(x, safe_y))


def _div_jvp_y(t, ans, x, y):
    return mul(mul(neg(t), x), integer_pow(y, -2))


def _div_transpose_x(ct, x, y):
    return unbroadcast(div(ct, y), x.aval)


def _lower_div(ctx, x, y):
    """``x / broadcast(b)`` lowers to ``x * broadcast(1 / b)`` for real floats, as JAX's
    XLA rewrites it after its algebraic simplifier: one division per element of ``b``
    instead of per element of the result (JAX's compiled quotients, within an ulp of the
    exact ones). The simplifier first folds single-use quotients into the division that
    reads them ((a/b)/c = a/(b*c), ...), so such a division and its quotient operands stay
    divisions, for XLA to simplify. bfloat16 computes in float32 and rounds once, as JAX's
    CPU compiler does."""
    out = ctx.avals_out[0]
    b = ctx.builder
    x, y = broadcast_args(ctx, (x, y))
    if out.dtype not in _RECIPROCAL_DIVISION:
        return b.op1("stablehlo.divide", [x, y], aval_type(out))
    folded = [_is_quotient(b, v) and b.value_uses.get(v, 0) == 1 for v in (x, y)]
    if any(folded):
        x, y = (_exact_quotient(b, v) if f else v for v, f in zip((x, y), folded))
    else:
        y_origin = b.origin(y)
        if (y_origin and y_origin[0] == "broadcast"
                and np.prod(type_shape(b.types[y_origin[1][0]])) < np.prod(out.shape)):
            product = _reciprocal_product(b, x, y_origin[1][0], y_origin[2], out)
            b.note_origin(product, "quotient", [x, y])
            return product
    quotient = b.op1("stablehlo.divide", [x, y], aval_type(out))
    b.note_origin(quotient, "quotient", [x, y])
    return quotient


def _is_quotient(b, value) -> bool:
    origin = b.origin(value)
    return origin is not None and origin[0] == "quotient"


def _exact_quotient(b, value):
    """The plain division a (possibly rewritten) quotient stands for."""
    operands = b.origin(value)[1]
    quotient = b.op1("stablehlo.divide", operands, b.types[value])
    b.note_origin(quotient, "quotient", operands)
    return quotient


def _reciprocal_product(b, x, operand, dims, out):
    """``x * broadcast(1 / operand)`` (in float32 for bfloat16)."""
    dtype = np.dtype(np.float32) if out.dtype == dtypes.bfloat16 else out.dtype
    if dtype != out.dtype:
        x = b.op1("stablehlo.convert", [x], tensor_type(out.shape, dtype))
        operand = b.op1("stablehlo.convert", [operand],
                        tensor_type(type_shape(b.types[operand]), dtype))
    one = b.op1("stablehlo.broadcast_in_dim", [b.constant(np.ones((), dtype))],
                b.types[operand], "broadcast_dimensions = array<i64>")
    inverse = b.op1("stablehlo.divide", [one, operand], b.types[operand])
    inverse = b.op1("stablehlo.broadcast_in_dim", [inverse], tensor_type(out.shape, dtype), dims)
    product = b.op1("stablehlo.multiply", [x, inverse], tensor_type(out.shape, dtype))
    if dtype == out.dtype:
        return product
    return b.op1("stablehlo.convert", [product], aval_type(out))


# linear in the numerator
div_p = naryop("div", NUMERIC, impl=_div_impl, lower=_lower_div,
               jvp=parts("div", lambda t, ans, x, y: div(t, y), _div_jvp_y),
               transpose=transpose_by_parts(_div_transpose_x, None), batch=batch_naryop("div"))
div = binary_wrapper(div_p, """Elementwise division ``x / y``.

Integer division rounds toward zero (C semantics, not Python's floor); as in XLA an
integer divided by zero gives -1 (all bits set), and ``INT_MIN / -1`` wraps to ``INT_MIN``.

Examples
--------
>>> import numpy as np
>>> from xjax import lax
>>> lax.div(np.int32(-7), np.int32(2))
Array(-3, dtype=int32)
""")

def _rem_jvp_y(t, ans, x, y):
    # rem(x, y) = x - y * trunc(x / y): d/dy is -trunc(x / y); JAX's equations, the
    # quotient twice included
    negated = neg(t)
    return mul(negated, mul(sign(div(x, y)), floor(abs(div(x, y)))))


rem_p = naryop("rem", REAL_NUMERIC, impl=_rem_impl, lower=lower_single("stablehlo.remainder"),
               jvp=parts("rem", _tangent, _rem_jvp_y), batch=batch_naryop("rem"))
rem = binary_wrapper(rem_p, """Elementwise remainder of :func:`div`, with the sign of ``x``
(C's ``fmod``); ``x rem 0`` is ``x`` for integers and NaN for floats.""")

# -- pow, integer_pow, square --


def _pow_abstract_eval(x, y):
    shape = result_shape("pow", (x, y))
    check_accepted("pow", (x, y), (INEXACT, NUMERIC))
    y_inexact = dtypes.is_float(y.dtype) or dtypes.is_complex(y.dtype)
    if y_inexact and y.dtype != x.dtype:
        raise TypeError("the first argument to pow must have an inexact dtype (float or "
                        "complex), and the second argument must have an inexact or integer "
                        "dtype, and two inexact dtypes must match, but got "
                        f"{x.dtype.name} and {y.dtype.name} respectively.")
    return elementwise_result((x, y), shape)


def _complex_power(x, y):
    """XLA's complex power: |x|^c e^(-d arg x) (cos q + i sin q) with q = c arg x + d log|x|
    (y = c + di), and its special cases: x**0 = 1, 1**y = 1, 0**c = 0 and inf**c for real
    c >= 0. NumPy's cpow differs at many of these."""
    x, y = np.broadcast_arrays(x, y)
    a, b, c, d = np.real(x), np.imag(x), np.real(y), np.imag(y)
    norm2 = a * a + b * b
    arg = np.arctan2(b, a)
    coeff = np.power(norm2, c * 0.5) * np.exp(-d * arg)
    q = c * arg + d * 0.5 * np.log(norm2)
    re, im = coeff * np.cos(q), coeff * np.sin(q)
    zero = np.zeros((), a.dtype)
    zero_base = (norm2 == 0) & (d == 0) & (c >= 0)
    re = np.where(zero_base, np.where(c == 0, np.ones((), a.dtype), zero), re)
    inf_base = (a == np.inf) & (b == 0) & (d == 0)
    re = np.where(inf_base, np.power(a, c), re)
    out = np.empty(x.shape, x.dtype)
    out.real, out.imag = re, np.where(zero_base | inf_base, zero, im)
    return np.where((y == 0) | (x == 1), np.ones((), x.dtype), out)


def _pow_impl(x, y):
    if y.dtype != x.dtype:  # an integer exponent: XLA converts it to the base's dtype
        y = y.astype(x.dtype)
    if x.dtype.kind == "c":
        return _complex_power(x, y)
    return np.power(x, y)


def _pow_lower(ctx, x, y):
    x_aval, y_aval = ctx.avals_in
    out = ctx.avals_out[0]
    x, y = broadcast_args(ctx, (x, y))
    if y_aval.dtype != x_aval.dtype:
        y = ctx.builder.op1("stablehlo.convert", [y], aval_type(out))
    return ctx.builder.op1("stablehlo.power", [x, y], aval_type(out))


def _pow_jvp_x(t, ans, x, y):
    if dtypes.is_integer(get_aval(y).dtype):
        # y * x ** (y - 1), and 0 where y == 0 (not 0 * x ** -1, NaN at x == 0)
        shape = result_shape("pow", (get_aval(x), get_aval(y)))
        x_dtype = get_aval(x).dtype
        x, y = broadcast_to(x, shape), broadcast_to(convert_element_type(y, x_dtype), shape)
        power = pow(x, sub(y, full_like_shape(y, 1)))  # JAX's _ones(y): y's weak type
        jacobian = compare.select(compare.eq(y, scalar_like(y, 0)), full_like_shape(y, 0),
                                  mul(replace_zero(y), power))
    else:
        jacobian = mul(y, pow(x, sub(y, full_like_shape(y, 1))))
    return mul(t, jacobian)


def _pow_jvp_y(t, ans, x, y):
    # log(x) * x ** y, taking log(1) = 0 where x == 0 (JAX's convention: no NaN at 0 ** y)
    return mul(t, mul(transcendental.log(replace_zero(x)), ans))


pow_p = naryop("pow", None, abstract_eval=_pow_abstract_eval, impl=_pow_impl, lower=_pow_lower,
               jvp=parts("pow", _pow_jvp_x, _pow_jvp_y), batch=batch_naryop("pow"))
pow = binary_wrapper(pow_p, """Elementwise power ``x ** y``.

``x`` must be floating or complex; ``y`` has ``x``'s dtype or is an integer.""")


def _integer_pow_abstract_eval(x, *, y):
    check_accepted("integer_pow", (x,), (NUMERIC,))
    if y < 0 and x.dtype.kind in "iu":
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short()}, {y})")
    return x


def _binary_powering(x, y, multiply):
    """``x ** y`` (y > 0) by repeated squaring, in the order XLA's lowering multiplies."""
    acc = None
    while y > 0:
        if y & 1:
            acc = x if acc is None else multiply(acc, x)
        y >>= 1
        if y > 0:
            x = multiply(x, x)
    return acc


def _integer_pow_impl(x, *, y):
    if y == 0:
        return np.ones_like(x)
    acc = _binary_powering(x, builtins.abs(y), np.multiply)
    return _div_impl(np.ones((), x.dtype), acc) if y < 0 else acc


def _integer_pow_build(em, dtype, x, *, y):
    if y == 0:
        return em.const(1, dtype)

    def multiply(a, b):
        return em.op("stablehlo.multiply", [a, b], dtype)

    acc = _binary_powering(x, builtins.abs(y), multiply)
    if y < 0:
        acc = em.op("stablehlo.divide", [em.const(1, dtype), acc], dtype)
    return acc


def _integer_pow_jvp(t, ans, x, *, y):
    if y == 0:
        return full_like_shape(t, 0)
    if y == 1:
        return t
    power = x if y == 2 else integer_pow(x, y - 1)
    return mul(t, mul(scalar_like(x, y), power))


integer_pow_p = naryop("integer_pow", None, abstract_eval=_integer_pow_abstract_eval,
                       impl=_integer_pow_impl, lower=lower_composite(_integer_pow_build),
                       jvp=parts("integer_pow", _integer_pow_jvp),
                       batch=batch_naryop("integer_pow"))


def integer_pow(x, y: int):
    """Elementwise ``x ** y`` for a static Python integer ``y``.

    Computed by repeated multiplication (integers wrap around); a negative ``y`` gives
    ``1 / x ** -y`` and is refused for integer ``x``.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.integer_pow(2.0, -2)
    Array(0.25, dtype=float32, weak_type=True)
    """
    return integer_pow_p.bind(to_operand(x), y=int(y))


def _square_lower(ctx, x):
    dtype = ctx.avals_in[0].dtype
    if dtype.kind in "iu":  # chlo.square is for inexact types
        return ctx.builder.op1("stablehlo.multiply", [x, x], aval_type(ctx.avals_out[0]))
    return ctx.builder.op1("chlo.square", [x], aval_type(ctx.avals_out[0]))


square_p = naryop("square", NUMERIC, impl=by_kind(np.square, complex_numpy.square),
                  lower=_square_lower,
                  jvp=parts("square", lambda t, ans, x: mul(t, mul(scalar_like(x, 2), x))),
                  batch=batch_naryop("square"))
square = unary_wrapper(square_p, "Elementwise square ``x * x``.")


def reciprocal(x):
    """Elementwise reciprocal ``1 / x`` (the ``integer_pow`` primitive with ``y=-1``)."""
    return integer_pow(x, -1)


# -- sign, abs, rounding --


def _sign_impl(x):
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        return np.copysign(np.sign(x), x)  # sign(-0.) is -0. as in XLA
    if x.dtype.kind == "c":
        return complex_numpy.sign(x)
    return np.sign(x)


def _sign_build(em, dtype, x):
    if dtype.kind != "u":
        return em.op("stablehlo.sign", [x], dtype)
    # stablehlo.sign has no unsigned form: 0 stays 0, everything else is 1
    is_zero = em.compare(x, em.const(0, dtype), "EQ", "UNSIGNED")
    return em.select(is_zero, em.const(0, dtype), em.const(1, dtype), dtype)


sign_p = naryop("sign", NUMERIC, impl=_sign_impl, lower=lower_composite(_sign_build),
                jvp=late_rule(zero_jvp, "sign"), batch=batch_naryop("sign"))
sign = unary_wrapper(sign_p, """Elementwise sign: -1, 0 or 1 (``x / |x|`` for complex).

Signed zeros and NaN are returned unchanged; unsigned integers give 0 or 1.""")

def _abs_jvp(t, ans, x):
    dtype = get_aval(x).dtype
    if dtypes.is_complex(dtype):
        # Re(t * conj(x) / |x|), with |x| = 0 replaced by 1 (JAX's rule)
        magnitude = replace_zero(convert_element_type(ans, dtype))
        return real(mul(t, div(conj(x), magnitude)))
    return compare.select(compare.ge(x, scalar_like(x, 0)), t, neg(t))  # slope 1 at 0, as JAX


abs_p = naryop("abs", SIGNED_OR_INEXACT, impl=by_kind(np.abs, complex_numpy.abs),
               lower=lower_single("stablehlo.abs"),
               result_dtype=real_dtype, jvp=parts("abs", _abs_jvp), batch=batch_naryop("abs"))
abs = unary_wrapper(abs_p, "Elementwise absolute value; complex operands give their real "
                           "dtype. ``abs(INT_MIN)`` wraps to ``INT_MIN``.")

floor_p = naryop("floor", FLOATING, impl=np.floor, lower=lower_single("stablehlo.floor"),
                 jvp=late_rule(zero_jvp, "floor"), batch=batch_naryop("floor"))
floor = unary_wrapper(floor_p, "Elementwise floor.")

ceil_p = naryop("ceil", FLOATING, impl=np.ceil, lower=lower_single("stablehlo.ceil"),
                jvp=late_rule(zero_jvp, "ceil"), batch=batch_naryop("ceil"))
ceil = unary_wrapper(ceil_p, "Elementwise ceiling.")


class RoundingMethod(enum.IntEnum):
    """How :func:`round` breaks ties."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_away_from_zero(x):
    whole = np.trunc(x)
    fraction = x - whole  # exact; NaN for infinities, which then keep ``whole``
    up = np.abs(fraction) >= 0.5
    return np.where(up, whole + np.sign(x), whole)


def _round_impl(x, *, rounding_method):
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return np.rint(x)
    return _round_away_from_zero(x)


def _round_lower(ctx, x, *, rounding_method):
    op = ("stablehlo.round_nearest_even" if rounding_method == RoundingMethod.TO_NEAREST_EVEN
          else "stablehlo.round_nearest_afz")
    return ctx.builder.op1(op, [x], aval_type(ctx.avals_out[0]))


round_p = naryop("round", FLOATING, impl=_round_impl, lower=_round_lower,
                 jvp=late_rule(zero_jvp, "round"), batch=batch_naryop("round"))


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise round to the nearest integer.

    Parameters
    ----------
    x : array_like
        A floating-point operand.
    rounding_method : RoundingMethod or int
        ``AWAY_FROM_ZERO`` (0, the default: 2.5 -> 3.) or ``TO_NEAREST_EVEN`` (1: 2.5 -> 2.).

    Examples
    --------
    >>> from xjax import lax
    >>> lax.round(2.5), lax.round(2.5, lax.RoundingMethod.TO_NEAREST_EVEN)
    (Array(3., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
    """
    return round_p.bind(to_operand(x), rounding_method=int(RoundingMethod(rounding_method)))


is_finite_p = naryop("is_finite", FLOATING, impl=np.isfinite,
                     lower=lower_single("stablehlo.is_finite"), jvp=NOT_DIFFERENTIABLE,
                     result_dtype=lambda _: np.dtype(np.bool_), batch=batch_naryop("is_finite"))
is_finite = unary_wrapper(is_finite_p, "Elementwise test: neither infinite nor NaN.")

# -- max, min: NaN propagates; +0 > -0 --


def _zero_order_fix(result, swapped, combine):
    """NumPy's max/min return the first of two equal zeros; XLA orders -0 < +0. The two
    argument orders differ only there, so combining their bits picks the right zero."""
    unsigned = np.dtype(f"u{result.dtype.itemsize}")
    return combine(result.view(unsigned), swapped.view(unsigned)).view(result.dtype)


def _complex_greater(x, y):
    """XLA's order on complex numbers: lexicographic (real part, then imaginary)."""
    xr, yr = np.real(x), np.real(y)
    return np.where(xr == yr, np.imag(x) > np.imag(y), xr > yr)


def _max_impl(x, y):
    if x.dtype.kind == "c":
        return np.where(_complex_greater(x, y), x, y)
    out = np.maximum(x, y)
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        return _zero_order_fix(np.asarray(out), np.asarray(np.maximum(y, x)), np.bitwise_and)
    return out


def _min_impl(x, y):
    if x.dtype.kind == "c":
        return np.where(_complex_greater(y, x), x, y)
    out = np.minimum(x, y)
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        return _zero_order_fix(np.asarray(out), np.asarray(np.minimum(y, x)), np.bitwise_or)
    return out


def _complex_order_build(greater_first: bool):
    def build(em, dtype, x, y):
        part = real_dtype(dtype)
        xr, yr = em.op("stablehlo.real", [x], part), em.op("stablehlo.real", [y], part)
        xi, yi = em.op("stablehlo.imag", [x], part), em.op("stablehlo.imag", [y], part)
        if not greater_first:
            xr, yr, xi, yi = yr, xr, yi, xi
        real_eq = em.compare(xr, yr, "EQ", "FLOAT")
        real_gt = em.compare(xr, yr, "GT", "FLOAT")
        imag_gt = em.compare(xi, yi, "GT", "FLOAT")
        pick_x = em.select(real_eq, imag_gt, real_gt, np.bool_)
        return em.select(pick_x, x, y, dtype)

    return build


def _max_min_lower(op_name, greater_first):
    plain, complex_build = lower_single(op_name), lower_composite(
        _complex_order_build(greater_first))

    def lower(ctx, x, y):
        if ctx.avals_in[0].dtype.kind == "c":
            return complex_build(ctx, x, y)
        return plain(ctx, x, y)

    return lower


def _balanced_share(x, ans, y):
    """1 where ``x`` is the result, halved where ``y`` is too (ties split the derivative
    evenly, as in JAX); 0 elsewhere. Of the result's shape."""
    # JAX's order of equations: each comparison, then its constants
    where_x = compare.eq(x, ans)
    chosen = compare.select(where_x, full_like_shape(ans, 1), full_like_shape(ans, 0))
    where_y = compare.eq(y, ans)
    return div(chosen, compare.select(where_y, full_like_shape(ans, 2),
                                      full_like_shape(ans, 1)))


def _chooser_jvp(name):
    return parts(name, lambda t, ans, x, y: mul(t, _balanced_share(x, ans, y)),
                 lambda t, ans, x, y: mul(t, _balanced_share(y, ans, x)))


max_p = naryop("max", ANY, impl=_max_impl, lower=_max_min_lower("stablehlo.maximum", True),
               jvp=_chooser_jvp("max"), batch=batch_naryop("max"))
max = binary_wrapper(max_p, """Elementwise maximum. NaN propagates; ``max(-0., 0.)`` is
``0.``; complex numbers are ordered lexicographically.""")

min_p = naryop("min", ANY, impl=_min_impl, lower=_max_min_lower("stablehlo.minimum", False),
               jvp=_chooser_jvp("min"), batch=batch_naryop("min"))
min = binary_wrapper(min_p, """Elementwise minimum. NaN propagates; ``min(-0., 0.)`` is
``-0.``; complex numbers are ordered lexicographically.""")

# nextafter(x, y) is x moved by one ulp: slope 1 in x (as finite differences see it), and
# piecewise constant in y (JAX has no rule)
nextafter_p = naryop("nextafter", FLOATING, impl=np.nextafter,
                     lower=lower_single("chlo.next_after"), jvp=parts("nextafter", _tangent, None),
                     batch=batch_naryop("nextafter"))
nextafter = binary_wrapper(nextafter_p, """The next representable value after ``x1`` in the
direction of ``x2`` (denormals included).""", name="nextafter")

# -- complex parts --


def _conj_abstract_eval(x, *, input_dtype):
    check_accepted("conj", (x,), (F32_COMPLEX_F64,))
    return x if x.dtype.kind == "c" else x.update(dtype=complex_dtype(x.dtype))


def _conj_impl(x, *, input_dtype):
    if x.dtype.kind == "c":
        return np.conjugate(x)
    return x.astype(complex_dtype(x.dtype))


def _conj_build(em, dtype, x, *, input_dtype):
    if dtype.kind != "c":
        out = complex_dtype(dtype)
        return em.op("stablehlo.complex", [x, em.const(0, dtype)], out)
    part = real_dtype(dtype)
    real, imag = em.op("stablehlo.real", [x], part), em.op("stablehlo.imag", [x], part)
    return em.op("stablehlo.complex", [real, em.op("stablehlo.negate", [imag], part)], dtype)


def _conj_transpose(ct, x, *, input_dtype):
    if dtypes.is_complex(input_dtype):
        return conj(ct)
    return real(ct)  # a real operand was embedded in the complex plane


conj_p = naryop("conj", None, abstract_eval=_conj_abstract_eval, impl=_conj_impl,
                lower=lower_composite(_conj_build), jvp=linear_jvp_of("conj"),
                transpose=transpose_by_parts(_conj_transpose), batch=batch_naryop("conj"))


def conj(x):
    """Elementwise complex conjugate; a real (float32/float64) operand becomes complex."""
    x = to_operand(x)
    return conj_p.bind(x, input_dtype=x.dtype)


real_p = naryop("real", COMPLEX, impl=np.real, lower=lower_single("stablehlo.real"),
                result_dtype=real_dtype, jvp=linear_jvp_of("real"),
                transpose=transpose_by_parts(
                    lambda ct, x: complex(ct, full_like_shape(ct, 0))),
                batch=batch_naryop("real"))
real = unary_wrapper(real_p, "Elementwise real part of a complex operand.")

imag_p = naryop("imag", COMPLEX, impl=np.imag, lower=lower_single("stablehlo.imag"),
                result_dtype=real_dtype, jvp=linear_jvp_of("imag"),
                transpose=transpose_by_parts(
                    lambda ct, x: complex(full_like_shape(ct, 0), neg(ct))),
                batch=batch_naryop("imag"))
imag = unary_wrapper(imag_p, "Elementwise imaginary part of a complex operand.")


def _complex_impl(x, y):
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, complex_dtype(x.dtype))
    out.real, out.imag = x, y  # not x + 1j * y, which turns inf * 1j into nan
    return out


complex_p = naryop("complex", F32_F64, impl=_complex_impl, result_dtype=complex_dtype,
                   lower=lower_single("stablehlo.complex"), jvp=linear_jvp_of("complex"),
                   transpose=transpose_by_parts(_ct_of_operand(0, lambda ct: real(ct)),
                                                _ct_of_operand(1, lambda ct: imag(neg(ct)))),
                   batch=batch_naryop("complex"))
complex = binary_wrapper(complex_p, "Elementwise ``x + 1j * y`` from two float32 (or float64) "
                                    "operands.")

# -- copy: an identity primitive (jnp.array(x, copy=True)); eager makes a fresh buffer --


def _copy_lower(ctx, x):
    return x


copy_p = naryop("copy", ANY, impl=np.copy, lower=_copy_lower, jvp=linear_jvp_of("copy"),
                transpose=transpose_by_parts(lambda ct, x: copy_p.bind(ct)),
                batch=batch_naryop("copy"))

__all__ = ["add", "sub", "mul", "neg", "div", "rem", "pow", "integer_pow", "square",
           "reciprocal", "sign", "abs", "floor", "ceil", "round", "RoundingMethod", "is_finite",
           "max", "min", "nextafter", "conj", "real", "imag", "complex",
           "add_p", "sub_p", "mul_p", "neg_p", "div_p", "rem_p", "pow_p", "integer_pow_p",
           "square_p", "sign_p", "abs_p", "floor_p", "ceil_p", "round_p", "is_finite_p",
           "max_p", "min_p", "nextafter_p", "conj_p", "real_p", "imag_p", "complex_p", "copy_p"]

# compare and transcendental import this module's names; the rules above use them at call
# time only, so their modules are imported last.
from xjax._src.lax import compare, transcendental  # noqa: E402
