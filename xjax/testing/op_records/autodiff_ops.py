"""Rule-check records of the differentiation primitives."""

from xjax import lax
from xjax.testing.op_table import ALL, OpRecord

RECORDS = [OpRecord("stop_gradient", lax.stop_gradient, [(3, 2)], ALL)]
