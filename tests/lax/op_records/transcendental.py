"""Rule-check records of the exponentials, logarithms, roots and trigonometric functions."""

from xjax import lax
from op_records.elementwise import (by_precision, grad_record, no_grad, uniform,
                                                      with_specials)
from op_table import FLOATS, OpRecord

_UNARY = {
    # name: (wrapper, input generator, accepts complex)
    "exp": (lax.exp, None, True),
    "exp2": (lax.exp2, None, True),
    "log": (lax.log, uniform(0.05, 5.0), True),
    "log1p": (lax.log1p, uniform(-0.9, 3.0), True),
    "expm1": (lax.expm1, None, True),
    "tanh": (lax.tanh, None, True),
    "logistic": (lax.logistic, uniform(-8.0, 8.0), True),
    "sqrt": (lax.sqrt, uniform(0.0, 5.0), True),
    "rsqrt": (lax.rsqrt, uniform(0.05, 5.0), True),
    "cbrt": (lax.cbrt, None, False),
    "sin": (lax.sin, None, True),
    "cos": (lax.cos, None, True),
    "tan": (lax.tan, uniform(-1.4, 1.4), True),
    "asin": (lax.asin, uniform(-0.99, 0.99), True),
    "acos": (lax.acos, uniform(-0.99, 0.99), True),
    "atan": (lax.atan, None, True),
    "sinh": (lax.sinh, None, True),
    "cosh": (lax.cosh, None, True),
    "asinh": (lax.asinh, None, True),
    "acosh": (lax.acosh, uniform(1.05, 5.0), True),
    "atanh": (lax.atanh, uniform(-0.95, 0.95), True),
}

# Derivative domains of the functions whose rule-check domain reaches a pole or branch
# point within the finite-difference step (or whose slope changes too fast there).
_GRAD_DOMAINS = {
    "log": uniform(0.5, 5.0),
    "log1p": uniform(-0.5, 3.0),
    "sqrt": uniform(0.5, 5.0),
    "rsqrt": uniform(0.5, 5.0),
    "asin": uniform(-0.8, 0.8),
    "acos": uniform(-0.8, 0.8),
    "acosh": uniform(1.3, 5.0),
    "atanh": uniform(-0.8, 0.8),
}

RECORDS = [
    record
    for name, (fun, make_args, with_complex) in _UNARY.items()
    for record in by_precision(name, fun, [(4, 5)], make_args=make_args,
                               with_complex=with_complex)
] + [
    # IEEE specials (NaN, ±inf, ±0) in real arithmetic
    *[OpRecord(name, fun, [(4, 5)], FLOATS, make_args=with_specials, tol=2e-2, name="specials")
      for name, (fun, _, _) in _UNARY.items()],
    *by_precision("atan2", lax.atan2, [(4, 5), (4, 5)]),
    OpRecord("atan2", lax.atan2, [(4, 5), (4, 5)], FLOATS, make_args=with_specials, tol=2e-2,
             name="specials"),
]
no_grad([r for r in RECORDS if r.name == "specials" or
         (r.primitive in _GRAD_DOMAINS and r.name == "f32")])
RECORDS += [grad_record(name, _UNARY[name][0], [(4, 5)], make_args=make_args, tol=1e-5)
            for name, make_args in _GRAD_DOMAINS.items()]
