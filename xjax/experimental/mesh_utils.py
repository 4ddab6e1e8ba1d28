"""``xjax.experimental.mesh_utils``: device arrays for ``xjax.sharding.Mesh``.

JAX orders devices along physical torus axes on TPUs; xjax has one CPU device, so a
mesh is the device list reshaped (JAX's non-TPU, non-GPU path).
"""

from xjax._src.experimental.mesh_utils import (  # noqa: F401
    create_device_mesh as create_device_mesh,
    create_hybrid_device_mesh as create_hybrid_device_mesh,
    device_kind_handler_dict as device_kind_handler_dict,
)
from xjax._src.experimental.mesh_utils import __all__ as __all__  # noqa: F401
