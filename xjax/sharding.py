"""``xjax.sharding``: meshes, partition specs and shardings, as ``jax.sharding``.

Arrays with a multi-device ``NamedSharding`` hold one buffer per device and run through
XLA's SPMD partitioner; splits over Explicit mesh axes are part of their types
(``xjax.typeof``), as in JAX.
"""

from xjax._src.core.sharding_types import (  # noqa: F401
    AbstractMesh as AbstractMesh, AxisType as AxisType, Mesh as Mesh,
    NamedSharding as NamedSharding, PartitionSpec as PartitionSpec, Sharding as Sharding,
    SingleDeviceSharding as SingleDeviceSharding, get_abstract_mesh as get_abstract_mesh,
    get_mesh as get_mesh, set_mesh as set_mesh,
)
from xjax._src.api.sharding import (  # noqa: F401
    auto_axes as auto_axes, make_single_device_sharding as make_single_device_sharding,
    reshard as reshard,
)
from xjax._src.api.sharding import __all__ as __all__  # noqa: F401
