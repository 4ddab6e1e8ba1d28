"""Rule-check records of ``optimization_barrier`` (an identity over its operands)."""

import numpy as np

from xjax import lax
from op_table import ALL, FLOATS, OpRecord


def _with_int(x):
    """``x`` through a barrier beside an int32 constant (whose tangent is float0): the
    float output, plus the int one so that a wrong int result shows in the value."""
    out, ints = lax.optimization_barrier((x, np.arange(4, dtype=np.int32)))
    return lax.add(out, lax.convert_element_type(ints, out.dtype))


RECORDS = [
    OpRecord("optimization_barrier", lambda x: lax.optimization_barrier(x), [(3, 4)], ALL),
    OpRecord("optimization_barrier",
             lambda x, y: lax.optimization_barrier((lax.sin(x), {"y": y}))[1]["y"] * 2 + x,
             [(2, 3), (2, 3)], FLOATS, name="pytree-mixed-use"),
    OpRecord("optimization_barrier", _with_int, [(4,)], FLOATS, name="with-int"),
]
