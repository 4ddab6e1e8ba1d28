"""``xjax.sharding``: meshes, partition specs and shardings, as ``jax.sharding``.

xjax runs SPMD programs (``xjax.shard_map``, ``xjax.pmap``) with its vmap machinery, so
arrays live whole on one device; these types carry layouts for validation and semantics.
Shardings in types (``AxisType.Explicit`` propagation through ``jax.typeof``) are not
tracked.
"""

from xjax._src.core.sharding_types import (AbstractMesh, AxisType, Mesh, NamedSharding,  # noqa: F401
                                      PartitionSpec, Sharding, SingleDeviceSharding,
                                      get_abstract_mesh, get_mesh, set_mesh)
from xjax._src.transformations.pmap import reshard as _reshard


def make_single_device_sharding(device, *, memory_kind=None):
    """A ``SingleDeviceSharding`` on ``device``."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def reshard(xs, out_shardings):
    """See ``xjax.reshard``."""
    return _reshard(xs, out_shardings)


__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "make_single_device_sharding",
           "reshard", "set_mesh"]
