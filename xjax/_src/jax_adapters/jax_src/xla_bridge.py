"""``jax._src.xla_bridge`` under the import hook: the backends, from xjax's runtime.

``_backends`` (read by Chex to see whether backends are initialized) is the platforms whose
client exists, each as a :class:`~xjax.extend.backend.Backend`.
"""

from __future__ import annotations

from xjax._src.jax_adapters.extend.backend import (  # noqa: F401
    backends, get_backend, get_default_device)
from xjax._src.jax_adapters.extend.backend import Backend
from xjax._src.runtime import client as _client
from xjax._src.api.devices import (  # noqa: F401
    default_backend, device_count, devices, local_device_count, local_devices, process_count,
    process_index)


def __getattr__(name):
    if name == "_backends":
        return {platform: Backend(c) for platform, c in _client._clients.items()}
    raise AttributeError(f"module 'jax._src.xla_bridge' has no attribute {name!r}")
