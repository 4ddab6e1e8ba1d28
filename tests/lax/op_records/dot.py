"""Rule-check records of dot_general: plain matrix products, batch dimensions anywhere,
several contracting dimensions, preferred_element_type and mixed input dtypes."""

import numpy as np

from xjax import lax
from xjax._src.core import dtypes
from op_records.shape import by_precision
from op_table import BOOL, INTS, SIGNED, OpRecord, random_array


def _dot(dims, **kw):
    return lambda x, y: lax.dot_general(x, y, dims, **kw)


_MATMUL = (((1,), (0,)), ((), ()))
_BATCHED = (((2,), (1,)), ((0,), (0,)))
# batch dims in the middle of lhs and last in rhs; two contracting dims in swapped order
_SCRAMBLED = (((3, 0), (1, 0)), ((1,), (3,)))


def _mixed(other_dtype):
    """lhs of the record's dtype, rhs of ``other_dtype``."""

    def make(rng, shapes, dtype):
        return [random_array(rng, shapes[0], dtype), random_array(rng, shapes[1], other_dtype)]
    return make


def _small_ints(rng, shapes, dtype):
    """Integers whose products and sums stay within int8 (no wrap-around in either impl)."""
    return [random_array(rng, s, dtype, -3, 3) if dtype != np.bool_ else rng.random(s) < 0.5
            for s in shapes]


RECORDS = [
    *by_precision("dot_general", _dot(_MATMUL), [(3, 4), (4, 5)], name="matmul",
                  exact_dtypes=INTS + BOOL),
    OpRecord("dot_general", _dot(_MATMUL), [(3, 4), (4, 5)], INTS, name="wrapping"),
    *by_precision("dot_general", _dot(_BATCHED), [(2, 3, 4), (2, 4, 5)], name="batched",
                  exact_dtypes=INTS + BOOL),
    *by_precision("dot_general", _dot(_SCRAMBLED), [(2, 3, 4, 5), (2, 5, 6, 3)],
                  name="scrambled", exact_dtypes=INTS + BOOL),
    *by_precision("dot_general", _dot((((0,), (0,)), ((), ()))), [(4,), (4,)], name="vector",
                  exact_dtypes=INTS + BOOL),
    *by_precision("dot_general", _dot((((), ()), ((), ()))), [(2, 3), (4,)], name="outer",
                  exact_dtypes=INTS + BOOL),
    OpRecord("dot_general", _dot(_MATMUL, preferred_element_type=np.int32), [(3, 4), (4, 5)],
             SIGNED + (np.uint8, np.uint16) + BOOL, name="pref-int32"),
    OpRecord("dot_general", _dot(_BATCHED, preferred_element_type=np.float32),
             [(2, 3, 4), (2, 4, 5)], (np.float16, dtypes.bfloat16), tol=1e-5,
             name="pref-float32"),
    OpRecord("dot_general", _dot(_MATMUL, preferred_element_type=np.float32), [(3, 4), (4, 5)],
             (np.int8, np.int16), make_args=_small_ints, name="int-pref-float32"),
    OpRecord("dot_general", _dot(_MATMUL, precision=lax.Precision.HIGHEST), [(3, 4), (4, 5)],
             (np.float32,), tol=1e-5, name="precision"),
    OpRecord("dot_general", _dot(_MATMUL), [(3, 4), (4, 5)], (np.float16, dtypes.bfloat16),
             make_args=_mixed(np.float32), tol=1e-5, name="mixed-float32"),
    OpRecord("dot_general", _dot(_MATMUL), [(3, 4), (4, 5)], (np.int8,),
             make_args=_mixed(np.int32), name="mixed-int32"),
]
