"""Rule-check records of comparisons, select_n and clamp."""

import numpy as np

from xjax import lax
from xjax._src.lax.compare import eq_to_p, le_to_p, lt_to_p
from op_records.elementwise import (F32, exact, grad_record, no_grad,
                                                      with_specials)
from op_table import ALL, BOOL, COMPLEX, FLOATS, INTS, OpRecord, random_array


def _repeating(rng, shapes, dtype):
    """Operands drawn from a few values (specials included) so that ties are common."""
    (pool,) = with_specials(rng, [(8,)], dtype)
    return [rng.choice(pool, size=shape) for shape in shapes]


def _which(low, high, which_dtype=np.int32, n_cases=3):
    def make(rng, shapes, dtype):
        which = rng.integers(low, high, shapes[0], endpoint=True).astype(which_dtype)
        return [which] + [random_array(rng, shapes[0], dtype) for _ in range(n_cases)]

    return make


def _bool_which(rng, shapes, dtype):
    return [rng.random(shapes[0]) < 0.5] + [random_array(rng, shapes[0], dtype)
                                            for _ in range(2)]


def _clamp_args(rng, shapes, dtype):
    low, x, high = with_specials(rng, shapes, dtype)
    return [low, x, high]


def _inside_and_out(rng, shapes, dtype):
    """low < high, and x at least 0.1 away from both (below, inside or above)."""
    low = rng.uniform(-2.0, -0.5, shapes[0])
    high = low + rng.uniform(1.0, 3.0, shapes[2])
    where = rng.integers(0, 3, shapes[1])
    x = np.choose(where, [low - rng.uniform(0.1, 1.0, shapes[1]),
                          low + (high - low) * rng.uniform(0.1, 0.9, shapes[1]),
                          high + rng.uniform(0.1, 1.0, shapes[1])])
    return [np.asarray(a).astype(dtype) for a in (low, x, high)]


_ORDERED = FLOATS + INTS + BOOL

RECORDS = [
    *exact("eq", lax.eq, [(4, 5), (4, 5)], ALL, make_args=_repeating),
    *exact("ne", lax.ne, [(4, 5), (4, 5)], ALL, make_args=_repeating),
    *exact("lt", lax.lt, [(4, 5), (4, 5)], _ORDERED, make_args=_repeating),
    *exact("le", lax.le, [(4, 5), (4, 5)], _ORDERED, make_args=_repeating),
    *exact("gt", lax.gt, [(4, 5), (4, 5)], _ORDERED, make_args=_repeating),
    *exact("ge", lax.ge, [(4, 5), (4, 5)], _ORDERED, make_args=_repeating),
    OpRecord("eq", lax.eq, [(4, 1), (1, 5)], F32, make_args=_repeating, name="broadcast"),
    OpRecord("eq_to", eq_to_p.bind, [(4, 5), (4, 5)], FLOATS + INTS + BOOL,
             make_args=_repeating),
    OpRecord("le_to", le_to_p.bind, [(4, 5), (4, 5)], _ORDERED, make_args=_repeating),
    OpRecord("lt_to", lt_to_p.bind, [(4, 5), (4, 5)], _ORDERED, make_args=_repeating),
    OpRecord("select_n", lax.select_n, [(4, 5)], ALL, make_args=_bool_which, name="bool"),
    OpRecord("select_n", lax.select_n, [(4, 5)], F32 + INTS, make_args=_which(-2, 4),
             name="int32"),
    OpRecord("select_n", lax.select_n, [(4, 5)], F32, make_args=_which(0, 5, np.uint8, 5),
             name="uint8-5cases"),
    OpRecord("select_n", lambda w, *cases: lax.select_n(w[0, 0], *cases), [(4, 5)], F32,
             make_args=_which(-1, 3), name="scalar_which"),
    *no_grad(exact("clamp", lax.clamp, [(4, 5)] * 3, FLOATS + INTS + BOOL,
                   make_args=_clamp_args)),
    *no_grad([OpRecord("clamp", lax.clamp, [(), (4, 5), ()], F32 + INTS, make_args=_clamp_args,
                       name="scalar_bounds")]),
    grad_record("clamp", lax.clamp, [(4, 5)] * 3, make_args=_inside_and_out),
    grad_record("clamp", lax.clamp, [(), (4, 5), ()], make_args=_inside_and_out,
                name="scalar_bounds-grad"),
    # no derivative: JAX's rule (and ours) compares the operands, which complex ones refuse
    *no_grad([OpRecord("clamp", lax.clamp, [(4, 5)] * 3, COMPLEX, make_args=_clamp_args,
                       tol=1e-6, name="complex")]),
]
