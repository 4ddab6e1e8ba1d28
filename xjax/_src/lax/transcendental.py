"""Elementwise exponentials, logarithms, roots and trigonometric functions.

Impls are NumPy's ufuncs (float16 computes in float32 inside NumPy, bfloat16 inside ml_dtypes,
rounding once, as XLA's CPU backend does). Lowerings use the StableHLO op where one exists and
CHLO otherwise (XLA expands CHLO), or JAX's own expansion where JAX emits one.
"""

from __future__ import annotations

import numpy as np

from xjax._src.lax import complex_numpy as cn, cpu_math
from xjax._src.lax.elementwise import add, div, integer_pow, mul, neg, parts, square, sub
from xjax._src.lax.naryop import (FLOATING, INEXACT, batch_naryop, binary_wrapper, by_kind,
                                  lower_composite, lower_single, lower_single_in_float32,
                                  naryop, real_dtype, scalar_like, unary_wrapper, via_float32)


def _unary(name, impl, lower_op, doc, jvp, accepted=INEXACT):
    """A unary primitive and its wrapper; ``jvp(t, ans, x)`` is its tangent rule (JAX's
    formulas, holomorphic for complex ``x``)."""
    primitive = naryop(name, accepted, impl=impl,
                       lower=lower_single(lower_op) if isinstance(lower_op, str) else lower_op,
                       jvp=parts(name, jvp), batch=batch_naryop(name))
    return primitive, unary_wrapper(primitive, doc)


def _one(x):
    return scalar_like(x, 1)


# -- exponentials and logarithms --

exp_p, exp = _unary("exp", by_kind(np.exp, cn.exp), "stablehlo.exponential",
                    """Elementwise exponential
:math:`e^x`.

Examples
--------
>>> from xjax import lax
>>> lax.exp(0.0)
Array(1., dtype=float32, weak_type=True)
""", jvp=lambda t, ans, x: mul(t, ans))


def _exp2_build(em, dtype, x):
    # JAX lowers exp2(x) as exp(log(2) * x)
    log2 = em.const(np.log(2.0), real_dtype(dtype))
    if dtype.kind == "c":
        log2 = em.convert(log2, dtype)
    return em.op("stablehlo.exponential", [em.op("stablehlo.multiply", [log2, x], dtype)], dtype)


def _exp2_impl(x):
    # as JAX's lowering: exp(log(2) * x), rounding the product to x's dtype (complex: taken
    # in XLA's complex arithmetic)
    log2 = np.asarray(np.log(2.0), x.dtype)
    if x.dtype.kind == "c":
        return cn.exp(cn.multiply(log2, x))
    return np.exp(np.multiply(log2, x))


exp2_p, exp2 = _unary("exp2", _exp2_impl, lower_composite(_exp2_build),
                      "Elementwise base-2 exponential :math:`2^x`.",
                      # JAX's rule: log(2) taken by the program, then log(2) * (t * ans)
                      jvp=lambda t, ans, x: mul(log(scalar_like(x, 2.0)), mul(t, ans)))
log_p, log = _unary("log", by_kind(np.log, cn.log), "stablehlo.log",
                    "Elementwise natural logarithm.", jvp=lambda t, ans, x: div(t, x))
log1p_p, log1p = _unary("log1p", by_kind(np.log1p, cn.log1p),
                        cpu_math.cpu_float32_lowering(
                            cpu_math.log1p_float32,
                            lower_single_in_float32("stablehlo.log_plus_one")),
                        "Elementwise :math:`\\log(1 + x)`, accurate for small ``x``.",
                        jvp=lambda t, ans, x: div(t, add(x, _one(x))))
expm1_p, expm1 = _unary("expm1", by_kind(np.expm1, cn.expm1),
                        "stablehlo.exponential_minus_one",
                        "Elementwise :math:`e^x - 1`, accurate for small ``x``.",
                        jvp=lambda t, ans, x: mul(t, add(ans, _one(ans))))
# tanh' = (1 + tanh)(1 - tanh), logistic' = logistic (1 - logistic): from the result
tanh_p, tanh = _unary("tanh", by_kind(np.tanh, cn.tanh), "stablehlo.tanh",
                      "Elementwise hyperbolic tangent.",
                      jvp=lambda t, ans, x: mul(add(t, mul(t, ans)), sub(_one(x), ans)))


def _logistic(x):
    if x.dtype.kind == "c":
        return cn.divide(np.ones((), x.dtype), np.ones((), x.dtype) + cn.exp(-x))
    return np.reciprocal(np.exp(np.negative(x)) + np.ones((), x.dtype))


def _logistic_build(em, dtype, x):
    # JAX lowers logistic(x) as 1 / (1 + exp(-x))
    e = em.op("stablehlo.exponential", [em.op("stablehlo.negate", [x], dtype)], dtype)
    one = em.const(1, dtype)
    return em.op("stablehlo.divide", [em.const(1, dtype),
                                      em.op("stablehlo.add", [one, e], dtype)], dtype)


logistic_p, logistic = _unary("logistic", _logistic,
                              lower_composite(_logistic_build),
                              "Elementwise logistic sigmoid :math:`1 / (1 + e^{-x})`.",
                              jvp=lambda t, ans, x: mul(t, mul(ans, sub(_one(ans), ans))))

# -- roots --

# sqrt' = 0.5 / sqrt(x): inf at 0, as in JAX
sqrt_p, sqrt = _unary("sqrt", by_kind(np.sqrt, cn.sqrt), "stablehlo.sqrt",
                      "Elementwise square root.",
                      jvp=lambda t, ans, x: mul(t, div(scalar_like(x, 0.5), ans)))


def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


rsqrt_p, rsqrt = _unary("rsqrt", by_kind(via_float32(_rsqrt), cn.rsqrt),
                        lower_single_in_float32("stablehlo.rsqrt"),
                        "Elementwise reciprocal square root :math:`1 / \\sqrt{x}`.",
                        jvp=lambda t, ans, x: mul(t, mul(scalar_like(x, -0.5), div(ans, x))))
cbrt_p, cbrt = _unary("cbrt", np.cbrt, lower_single_in_float32("stablehlo.cbrt"),
                      "Elementwise cube root.",
                      jvp=lambda t, ans, x: mul(t, mul(scalar_like(x, 1 / 3),
                                                       integer_pow(ans, -2))),
                      accepted=FLOATING)

# -- trigonometry --

def _sin_cos_build(is_sin):
    """JAX's lowering of complex sin/cos through sinh and cosh of the imaginary part (built
    from expm1); real operands use the StableHLO op."""

    def build(em, dtype, z):
        if dtype.kind != "c":
            return em.op("stablehlo.sine" if is_sin else "stablehlo.cosine", [z], dtype)
        part = real_dtype(dtype)

        def op(name, *args):
            return em.op(f"stablehlo.{name}", list(args), part)

        a, b = op("real", z), op("imag", z)
        a_is_zero = em.compare(a, em.const(0, part), "EQ", "FLOAT")
        sin_a, cos_a = op("sine", a), op("cosine", a)
        up, down = op("exponential_minus_one", b), op("exponential_minus_one", op("negate", b))
        two = em.const(2, part)
        sinh_b = op("divide", op("subtract", up, down), two)
        cosh_b = op("divide", op("add", op("add", up, down), two), two)
        zero = em.const(0, part)
        if is_sin:
            re, im = op("multiply", sin_a, cosh_b), op("multiply", cos_a, sinh_b)
            special = em.op("stablehlo.complex", [zero, im], dtype)
        else:
            re, im = op("multiply", cos_a, cosh_b), op("multiply", op("negate", sin_a), sinh_b)
            special = em.op("stablehlo.complex", [re, zero], dtype)
        general = em.op("stablehlo.complex", [re, im], dtype)
        return em.select(a_is_zero, special, general, dtype)

    return lower_composite(build)


def _one_minus_square(x):
    return sub(_one(x), square(x))


sin_p, sin = _unary("sin", by_kind(np.sin, cn.sin), _sin_cos_build(True), "Elementwise sine.",
                    jvp=lambda t, ans, x: mul(t, cos(x)))
cos_p, cos = _unary("cos", by_kind(np.cos, cn.cos), _sin_cos_build(False),
                    "Elementwise cosine.", jvp=lambda t, ans, x: neg(mul(t, sin(x))))
tan_p, tan = _unary("tan", by_kind(np.tan, cn.tan), "stablehlo.tan", "Elementwise tangent.",
                    jvp=lambda t, ans, x: mul(t, add(_one(x), square(ans))))
asin_p, asin = _unary("asin", by_kind(np.arcsin, cn.asin), "chlo.asin",
                      "Elementwise arc sine.",
                      jvp=lambda t, ans, x: mul(t, rsqrt(_one_minus_square(x))))
acos_p, acos = _unary("acos", by_kind(np.arccos, cn.acos), "chlo.acos",
                      "Elementwise arc cosine.",
                      jvp=lambda t, ans, x: mul(t, neg(rsqrt(_one_minus_square(x)))))
atan_p, atan = _unary("atan", np.arctan, "chlo.atan",
                      "Elementwise arc tangent.",
                      jvp=lambda t, ans, x: div(t, add(_one(x), square(x))))
sinh_p, sinh = _unary("sinh", by_kind(np.sinh, cn.sinh), "chlo.sinh",
                      "Elementwise hyperbolic sine.", jvp=lambda t, ans, x: mul(t, cosh(x)))
cosh_p, cosh = _unary("cosh", by_kind(np.cosh, cn.cosh), "chlo.cosh",
                      "Elementwise hyperbolic cosine.", jvp=lambda t, ans, x: mul(t, sinh(x)))
asinh_p, asinh = _unary("asinh", by_kind(np.arcsinh, cn.asinh), cpu_math.cpu_float32_lowering(
                            cpu_math.asinh_float32, lower_single("chlo.asinh"), low_floats=False),
                        "Elementwise inverse hyperbolic sine.",
                        jvp=lambda t, ans, x: mul(t, rsqrt(add(square(x), _one(x)))))
acosh_p, acosh = _unary("acosh", by_kind(np.arccosh, cn.acosh), cpu_math.cpu_float32_lowering(
                            cpu_math.acosh_float32, lower_single("chlo.acosh"), low_floats=False),
                        "Elementwise inverse hyperbolic cosine.",
                        jvp=lambda t, ans, x: mul(t, rsqrt(sub(square(x), _one(x)))))
atanh_p, atanh = _unary("atanh", by_kind(np.arctanh, cn.atanh), cpu_math.cpu_float32_lowering(
                            cpu_math.atanh_float32, lower_single("chlo.atanh"), low_floats=False),
                        "Elementwise inverse hyperbolic tangent.",
                        jvp=lambda t, ans, x: mul(integer_pow(add(_one(x), x), -1),
                                                  div(t, sub(_one(x), x))))


def _atan2_impl(y, x):
    return cn.atan2(y, x) if y.dtype.kind == "c" else np.arctan2(y, x)


def _atan2_jvp(numerator_part):
    """d/dx atan2(x, y) = y / (x^2 + y^2); d/dy = -x / (x^2 + y^2)."""

    def rule(t, ans, x, y):
        scale = div(y if numerator_part else neg(x), add(square(x), square(y)))
        return mul(t, scale)

    return rule


atan2_p = naryop("atan2", INEXACT, impl=_atan2_impl, lower=lower_single("stablehlo.atan2"),
                 jvp=parts("atan2", _atan2_jvp(True), _atan2_jvp(False)),
                 batch=batch_naryop("atan2"))
atan2 = binary_wrapper(atan2_p, """Elementwise arc tangent of ``x / y`` with the quadrant of
``(y, x)`` (``atan2(x, y)`` in lax's argument order: numerator first).""")

__all__ = ["exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sqrt", "rsqrt", "cbrt",
           "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
           "atanh", "atan2",
           "exp_p", "exp2_p", "log_p", "log1p_p", "expm1_p", "tanh_p", "logistic_p", "sqrt_p",
           "rsqrt_p", "cbrt_p", "sin_p", "cos_p", "tan_p", "asin_p", "acos_p", "atan_p",
           "sinh_p", "cosh_p", "asinh_p", "acosh_p", "atanh_p", "atan2_p"]
