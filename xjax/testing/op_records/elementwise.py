"""Rule-check records of the elementwise primitives."""

from xjax import lax
from xjax.testing.op_table import COMPLEX, FLOATS, NUMERIC, OpRecord

RECORDS = [
    OpRecord("add", lax.add, [(3, 4), (3, 4)], NUMERIC),
    OpRecord("sub", lax.sub, [(3, 4), (3, 4)], NUMERIC),
    OpRecord("mul", lax.mul, [(3, 4), (3, 4)], NUMERIC),
    OpRecord("exp", lax.exp, [(5,)], FLOATS + COMPLEX, tol=1e-5),
    OpRecord("sin", lax.sin, [(5,)], FLOATS + COMPLEX, tol=1e-5),
]
