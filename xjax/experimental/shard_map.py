"""``xjax.experimental.shard_map``: the legacy ``shard_map(f, mesh, in_specs, out_specs,
check_rep=True)``.

As in JAX 0.10.2 it is kept as a deprecated alias of ``xjax.shard_map``: reading
``shard_map`` from this module warns ``DeprecationWarning``, ``check_rep`` is
``check_vma``, and ``f`` is manual over every mesh axis.
"""

from xjax._src.experimental.shard_map import (  # noqa: F401
    annotations as annotations,
)
from xjax._src.experimental.shard_map import __getattr__ as __getattr__  # noqa: F401
