"""Rule-check records of the Threefry-2x32 hash: exact (wrapping uint32 arithmetic), with
full-range words, equal shapes and lax's implicit broadcasting (a rank-0 key, size-1 dims)."""

import numpy as np

from xjax import lax
from xjax.testing.op_records.elementwise import full_range_ints
from xjax.testing.op_table import OpRecord

_U32 = (np.uint32,)

RECORDS = [
    OpRecord("threefry2x32", lax.threefry2x32, [(4, 5)] * 4, _U32, make_args=full_range_ints),
    OpRecord("threefry2x32", lax.threefry2x32, [(), (), (3, 7), (3, 7)], _U32,
             make_args=full_range_ints, name="scalar_key"),
    OpRecord("threefry2x32", lax.threefry2x32, [(1, 6), (4, 1), (4, 6), (1, 1)], _U32,
             make_args=full_range_ints, name="size1_dims"),
]
