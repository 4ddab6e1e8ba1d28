"""Elementwise exponentials, logarithms, roots and trigonometric functions.

Impls are NumPy's ufuncs (float16 computes in float32 inside NumPy, bfloat16 inside ml_dtypes,
rounding once, as XLA's CPU backend does). Lowerings use the StableHLO op where one exists and
CHLO otherwise (XLA expands CHLO), or JAX's own expansion where JAX emits one.
"""

from __future__ import annotations

import numpy as np

from xjax.lax.naryop import (FLOATING, INEXACT, lower_composite, lower_single, naryop,
                             via_float32)
from xjax.lax.rules import binary_wrapper, unary_wrapper


def _unary(name, impl, lower_op, doc, accepted=INEXACT):
    primitive = naryop(name, accepted, impl=impl,
                       lower=lower_single(lower_op) if isinstance(lower_op, str) else lower_op)
    return primitive, unary_wrapper(primitive, doc)


# -- exponentials and logarithms --

exp_p, exp = _unary("exp", np.exp, "stablehlo.exponential", """Elementwise exponential
:math:`e^x`.

Examples
--------
>>> from xjax import lax
>>> lax.exp(0.0)
Array(1., dtype=float32, weak_type=True)
""")


def _exp2_build(em, dtype, x):
    # JAX lowers exp2(x) as exp(log(2) * x)
    log2 = em.const(np.log(2.0), _real(dtype))
    if dtype.kind == "c":
        log2 = em.convert(log2, dtype)
    return em.op("stablehlo.exponential", [em.op("stablehlo.multiply", [log2, x], dtype)], dtype)


def _real(dtype):
    return {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}.get(dtype, dtype)


exp2_p, exp2 = _unary("exp2", np.exp2, lower_composite(_exp2_build),
                      "Elementwise base-2 exponential :math:`2^x`.")
log_p, log = _unary("log", np.log, "stablehlo.log", "Elementwise natural logarithm.")
log1p_p, log1p = _unary("log1p", np.log1p, "stablehlo.log_plus_one",
                        "Elementwise :math:`\\log(1 + x)`, accurate for small ``x``.")
expm1_p, expm1 = _unary("expm1", np.expm1, "stablehlo.exponential_minus_one",
                        "Elementwise :math:`e^x - 1`, accurate for small ``x``.")
tanh_p, tanh = _unary("tanh", np.tanh, "stablehlo.tanh", "Elementwise hyperbolic tangent.")


def _logistic(x):
    return np.reciprocal(np.exp(np.negative(x)) + np.ones((), x.dtype))


def _logistic_build(em, dtype, x):
    # JAX lowers logistic(x) as 1 / (1 + exp(-x))
    e = em.op("stablehlo.exponential", [em.op("stablehlo.negate", [x], dtype)], dtype)
    one = em.const(1, dtype)
    return em.op("stablehlo.divide", [em.const(1, dtype),
                                      em.op("stablehlo.add", [one, e], dtype)], dtype)


logistic_p, logistic = _unary("logistic", via_float32(_logistic),
                              lower_composite(_logistic_build),
                              "Elementwise logistic sigmoid :math:`1 / (1 + e^{-x})`.")

# -- roots --

sqrt_p, sqrt = _unary("sqrt", np.sqrt, "stablehlo.sqrt", "Elementwise square root.")


def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


rsqrt_p, rsqrt = _unary("rsqrt", via_float32(_rsqrt), "stablehlo.rsqrt",
                        "Elementwise reciprocal square root :math:`1 / \\sqrt{x}`.")
cbrt_p, cbrt = _unary("cbrt", np.cbrt, "stablehlo.cbrt", "Elementwise cube root.",
                      accepted=FLOATING)

# -- trigonometry --

sin_p, sin = _unary("sin", np.sin, "stablehlo.sine", "Elementwise sine.")
cos_p, cos = _unary("cos", np.cos, "stablehlo.cosine", "Elementwise cosine.")
tan_p, tan = _unary("tan", np.tan, "stablehlo.tan", "Elementwise tangent.")
asin_p, asin = _unary("asin", np.arcsin, "chlo.asin", "Elementwise arc sine.")
acos_p, acos = _unary("acos", np.arccos, "chlo.acos", "Elementwise arc cosine.")
atan_p, atan = _unary("atan", np.arctan, "chlo.atan", "Elementwise arc tangent.")
sinh_p, sinh = _unary("sinh", np.sinh, "chlo.sinh", "Elementwise hyperbolic sine.")
cosh_p, cosh = _unary("cosh", np.cosh, "chlo.cosh", "Elementwise hyperbolic cosine.")
asinh_p, asinh = _unary("asinh", np.arcsinh, "chlo.asinh",
                        "Elementwise inverse hyperbolic sine.")
acosh_p, acosh = _unary("acosh", np.arccosh, "chlo.acosh",
                        "Elementwise inverse hyperbolic cosine.")
atanh_p, atanh = _unary("atanh", np.arctanh, "chlo.atanh",
                        "Elementwise inverse hyperbolic tangent.")


def _atan2_impl(y, x):
    if y.dtype.kind != "c":
        return np.arctan2(y, x)
    # XLA's complex atan2: -i * log((x + i y) / sqrt(x^2 + y^2))
    return -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))


atan2_p = naryop("atan2", INEXACT, impl=_atan2_impl, lower=lower_single("stablehlo.atan2"))
atan2 = binary_wrapper(atan2_p, """Elementwise arc tangent of ``x / y`` with the quadrant of
``(y, x)`` (``atan2(x, y)`` in lax's argument order: numerator first).""")

__all__ = ["exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sqrt", "rsqrt", "cbrt",
           "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
           "atanh", "atan2",
           "exp_p", "exp2_p", "log_p", "log1p_p", "expm1_p", "tanh_p", "logistic_p", "sqrt_p",
           "rsqrt_p", "cbrt_p", "sin_p", "cos_p", "tan_p", "asin_p", "acos_p", "atan_p",
           "sinh_p", "cosh_p", "asinh_p", "acosh_p", "atanh_p", "atan2_p"]
