"""Rule-check records of the bit operations."""

import numpy as np

from xjax import lax
from op_records.elementwise import full_range_ints
from op_table import BOOL, INTS, OpRecord


def _shift_args(rng, shapes, dtype):
    """Full-range values shifted by amounts in [-2, bits + 2] (out-of-range ones included)."""
    (x,) = full_range_ints(rng, shapes[:1], dtype)
    bits = np.dtype(dtype).itemsize * 8
    amount = rng.integers(-2, bits + 2, shapes[1], endpoint=True)
    return [x, amount.astype(np.int64).astype(dtype)]


def _bool_or_ints(rng, shapes, dtype):
    if np.dtype(dtype) == np.bool_:
        return [rng.random(shape) < 0.5 for shape in shapes]
    return full_range_ints(rng, shapes, dtype)


RECORDS = [
    OpRecord("not", lax.bitwise_not, [(4, 5)], INTS + BOOL, make_args=_bool_or_ints),
    OpRecord("and", lax.bitwise_and, [(4, 5), (4, 5)], INTS + BOOL, make_args=_bool_or_ints),
    OpRecord("or", lax.bitwise_or, [(4, 5), (4, 5)], INTS + BOOL, make_args=_bool_or_ints),
    OpRecord("xor", lax.bitwise_xor, [(4, 5), (4, 5)], INTS + BOOL, make_args=_bool_or_ints),
    OpRecord("shift_left", lax.shift_left, [(6, 7), (6, 7)], INTS, make_args=_shift_args),
    OpRecord("shift_right_logical", lax.shift_right_logical, [(6, 7), (6, 7)], INTS,
             make_args=_shift_args),
    OpRecord("shift_right_arithmetic", lax.shift_right_arithmetic, [(6, 7), (6, 7)], INTS,
             make_args=_shift_args),
    OpRecord("population_count", lax.population_count, [(4, 5)], INTS,
             make_args=full_range_ints),
    OpRecord("clz", lax.clz, [(4, 5)], INTS, make_args=full_range_ints),
    OpRecord("mulhi", lax.mulhi, [(4, 5), (4, 5)], INTS, make_args=full_range_ints),
]
