"""``xjax.dlpack``: exchanging arrays through DLPack (JAX's ``jax.dlpack``).
"""

from xjax._src.api.dlpack import (  # noqa: F401
    from_dlpack as from_dlpack, is_supported_dtype as is_supported_dtype,
)
from xjax._src.api.dlpack import __all__ as __all__  # noqa: F401
