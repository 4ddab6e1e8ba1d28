"""Rule-check records of the differentiation primitives."""

from xjax import lax
from op_table import ALL, OpRecord

# stop_gradient's derivative is zero by definition, not the identity finite differences see:
# its rule is checked in tests/interpreters/test_autodiff.py instead.
RECORDS = [OpRecord("stop_gradient", lax.stop_gradient, [(3, 2)], ALL, grad_order=0)]
