"""``xjax.experimental.pjit``: the deprecated ``pjit``, ``jit`` with shardings.

As in JAX 0.10.2, reading ``pjit`` from this module warns ``DeprecationWarning`` (use
``xjax.jit``). xjax keeps every array whole on its one device, so ``in_shardings`` and
``out_shardings`` are validated (types, tree structure, shapes they must divide, a mesh for
PartitionSpecs) and then only place values, as ``device_put`` does.
"""

from xjax._src.core.sharding_types import (  # noqa: F401
    NamedSharding as NamedSharding, PartitionSpec as PartitionSpec, Sharding as Sharding,
    get_mesh as get_mesh,
)
from xjax._src.transformations.jit_shardings import (  # noqa: F401
    UNSPECIFIED as UNSPECIFIED,
)
from xjax._src.core.pytree import (  # noqa: F401
    tree_unflatten as tree_unflatten,
)
from xjax._src.core.tree_util import (  # noqa: F401
    tree_flatten as tree_flatten,
)
from xjax._src.experimental.pjit import __getattr__ as __getattr__  # noqa: F401
