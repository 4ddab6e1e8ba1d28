"""Rule-check records of the differentiation primitives."""

from xjax import lax
from xjax.testing.op_table import ALL, OpRecord

# its derivative is zero by definition, not the finite differences' 1: checked in
# tests/lax/test_grads_elementwise.py rather than by check_grads
RECORDS = [OpRecord("stop_gradient", lax.stop_gradient, [(3, 2)], ALL, grad_order=0)]
