"""Rule-check records of ``name`` (``checkpoint_name``: an identity carrying a name)."""

from xjax.ad_checkpoint import checkpoint_name
from xjax.testing.op_table import ALL, OpRecord

RECORDS = [
    OpRecord("name", lambda x: checkpoint_name(x, "a"), [(3, 4)], ALL),
]
