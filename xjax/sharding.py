"""``xjax.sharding``: meshes, partition specs and shardings, as ``jax.sharding``.

xjax runs SPMD programs (``xjax.shard_map``, ``xjax.pmap``) with its vmap machinery, so
arrays live whole on one device; these types carry layouts for validation and semantics.
Shardings in types (``AxisType.Explicit`` propagation through ``jax.typeof``) are not
tracked.
"""

from xjax._src.core.sharding_types import (  # noqa: F401
    AbstractMesh as AbstractMesh, AxisType as AxisType, Mesh as Mesh,
    NamedSharding as NamedSharding, PartitionSpec as PartitionSpec, Sharding as Sharding,
    SingleDeviceSharding as SingleDeviceSharding, get_abstract_mesh as get_abstract_mesh,
    get_mesh as get_mesh, set_mesh as set_mesh,
)
from xjax._src.api.sharding import (  # noqa: F401
    make_single_device_sharding as make_single_device_sharding, reshard as reshard,
)
from xjax._src.api.sharding import __all__ as __all__  # noqa: F401
