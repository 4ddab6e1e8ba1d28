"""Elementwise primitives: arithmetic, exponentials and logarithms, trigonometry, ..."""

from __future__ import annotations

import numpy as np

from xjax.lax.rules import (ANY, INEXACT, NUMERIC, binary_wrapper, elementwise_primitive,
                            hlo_elementwise, unary_wrapper)

# -- arithmetic --

add_p = elementwise_primitive("add", impl=np.add, lower=hlo_elementwise("stablehlo.add"),
                              accepted=NUMERIC)
add = binary_wrapper(add_p, "Elementwise addition ``x + y`` (no type promotion).")

sub_p = elementwise_primitive("sub", impl=np.subtract,
                              lower=hlo_elementwise("stablehlo.subtract"), accepted=NUMERIC)
sub = binary_wrapper(sub_p, "Elementwise subtraction ``x - y`` (no type promotion).")

mul_p = elementwise_primitive("mul", impl=np.multiply,
                              lower=hlo_elementwise("stablehlo.multiply"), accepted=NUMERIC)
mul = binary_wrapper(mul_p, "Elementwise multiplication ``x * y`` (no type promotion).")

# -- exponentials --

exp_p = elementwise_primitive("exp", impl=np.exp, lower=hlo_elementwise("stablehlo.exponential"),
                              accepted=INEXACT)
exp = unary_wrapper(exp_p, "Elementwise exponential :math:`e^x`.")

sin_p = elementwise_primitive("sin", impl=np.sin, lower=hlo_elementwise("stablehlo.sine"),
                              accepted=INEXACT)
sin = unary_wrapper(sin_p, "Elementwise sine.")

__all__ = ["add", "sub", "mul", "exp", "sin", "add_p", "sub_p", "mul_p", "exp_p", "sin_p"]
