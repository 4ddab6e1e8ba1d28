"""``xjax.extend.backend``: the XLA client behind a platform, as ``jax.extend.backend``.

>>> from xjax.extend import backend
>>> backend.get_backend("cpu").platform
'cpu'
"""

from xjax._src.jax_adapters.extend.backend import (  # noqa: F401
    Backend as Backend, backends as backends, clear_backends as clear_backends,
    get_backend as get_backend, get_default_device as get_default_device,
)
from xjax._src.jax_adapters.extend.backend import __all__ as __all__  # noqa: F401
