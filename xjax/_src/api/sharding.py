"""``xjax.sharding``: meshes, partition specs and shardings, as ``jax.sharding``.

Arrays with a multi-device ``NamedSharding`` hold one buffer per device and run through
XLA's SPMD partitioner; splits over Explicit mesh axes are part of their types
(``xjax.typeof``), as in JAX.
"""

from xjax._src.core.sharding_types import (AbstractMesh, AxisType, Mesh, NamedSharding,  # noqa: F401
                                      PartitionSpec, Sharding, SingleDeviceSharding,
                                      get_abstract_mesh, get_mesh, set_mesh)
from xjax._src.transformations.auto_axes import auto_axes  # noqa: F401
from xjax._src.transformations.pmap import reshard as _reshard


def make_single_device_sharding(device, *, memory_kind=None):
    """A ``SingleDeviceSharding`` on ``device``."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def reshard(xs, out_shardings):
    """See ``xjax.reshard``."""
    return _reshard(xs, out_shardings)


__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "auto_axes",
           "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "make_single_device_sharding",
           "reshard", "set_mesh"]
