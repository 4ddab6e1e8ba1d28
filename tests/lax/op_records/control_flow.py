"""Rule-check records of the control-flow primitives (cond, while, scan).

Each record calls the public function with bodies made of primitives that accept every dtype
(structural ones), so the NumPy-evaluated body and the XLA-lowered ``stablehlo.case`` /
``stablehlo.while`` are compared for all dtypes; float records use smooth bodies for the
derivative check (``while`` in forward mode only: reverse mode raises, as in JAX).
"""

import numpy as np

from xjax._src import higher_order as control_flow, lax
from op_table import ALL, FLOATS, OpRecord, random_array

FLOAT_TOL = 1e-5


def _with_pred(value):
    """A boolean predicate, then operands of the record's dtype."""

    def make(rng, shapes, dtype):
        return [np.bool_(value)] + [random_array(rng, s, dtype) for s in shapes]

    return make


def _with_index(value):
    def make(rng, shapes, dtype):
        return [np.int32(value)] + [random_array(rng, s, dtype) for s in shapes]

    return make


def _smooth_args(rng, shapes, dtype):
    return [random_array(rng, s, dtype, -1.0, 1.0) for s in shapes]


def _cond_structural(p, x, y):
    return control_flow.cond(p, lambda a, b: (lax.rev(b, (0,)), a),
                    lambda a, b: (a, lax.concatenate([b[1:], b[:1]], 0)), x, y)


def _cond_smooth(x, y):
    return control_flow.cond(lax.reduce_sum(x, (0,)) > 0, lambda a, b: lax.sin(a) * b,
                    lambda a, b: a * lax.cos(b) + b, x, y)


def _switch_structural(i, x):
    return control_flow.switch(i, [lambda a: a, lambda a: lax.rev(a, (1,)),
                          lambda a: lax.transpose(a, (1, 0))], x)


def _while_structural(x):
    def body(c):
        return lax.rev(c[0], (0,)), c[1] + 1
    return control_flow.while_loop(lambda c: c[1] < 3, body, (x, 0))[0]


def _while_smooth(x):
    def body(c):
        return lax.sin(c[0]) * x + c[0], c[1] + 1
    return control_flow.while_loop(lambda c: c[1] < 3, body, (x, 0))[0]


def _scan_structural(c, xs):
    return control_flow.scan(lambda c, x: (x, lax.rev(c, (0,))), c, xs)


def _scan_smooth(c, xs, w):
    return control_flow.scan(lambda c, x: (lax.tanh(lax.dot(w, c) + x), c * x), c, xs, unroll=2)


def _scan_reverse(c, xs):
    return control_flow.scan(lambda c, x: (lax.sin(c) + x, c), c, xs, reverse=True)


RECORDS = [
    OpRecord("cond", _cond_structural, [(3,), (3,)], ALL, _with_pred(True), name="true"),
    OpRecord("cond", _cond_structural, [(3,), (3,)], ALL, _with_pred(False), name="false"),
    OpRecord("cond", _switch_structural, [(3, 3)], ALL, _with_index(2), name="switch"),
    OpRecord("cond", _cond_smooth, [(3,), (3,)], FLOATS[:1], _smooth_args, FLOAT_TOL,
             name="smooth"),
    OpRecord("while", _while_structural, [(4,)], ALL, grad_modes=("fwd",)),
    OpRecord("while", _while_smooth, [(3,)], FLOATS[:1], _smooth_args, FLOAT_TOL,
             name="smooth", grad_modes=("fwd",)),
    OpRecord("scan", _scan_structural, [(3,), (5, 3)], ALL),
    OpRecord("scan", _scan_smooth, [(3,), (4, 3), (3, 3)], FLOATS[:1], _smooth_args, FLOAT_TOL,
             name="rnn"),
    OpRecord("scan", _scan_reverse, [(2,), (3, 2)], FLOATS[:1], _smooth_args, FLOAT_TOL,
             name="reverse"),
]
