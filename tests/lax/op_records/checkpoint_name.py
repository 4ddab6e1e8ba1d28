"""Rule-check records of ``name`` (``checkpoint_name``: an identity carrying a name)."""

from xjax._src.transformations.checkpoint import checkpoint_name
from op_table import ALL, OpRecord

RECORDS = [
    OpRecord("name", lambda x: checkpoint_name(x, "a"), [(3, 4)], ALL),
]
