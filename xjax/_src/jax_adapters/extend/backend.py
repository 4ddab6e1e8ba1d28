"""``xjax.extend.backend``: the XLA client behind a platform, as ``jax.extend.backend``.

>>> from xjax.extend import backend
>>> backend.get_backend("cpu").platform
'cpu'
"""

from __future__ import annotations

from xjax._src.runtime import client as _client
from xjax._src.api.devices import clear_caches

__all__ = ["Backend", "backends", "clear_backends", "get_backend", "get_default_device"]

_ALIASES = {"cuda": "gpu", "rocm": "gpu"}


class Backend:
    """A platform's client with JAX's ``Client`` methods (``devices()``,
    ``device_count()``, ...)."""

    __slots__ = ("client",)

    def __init__(self, client):
        self.client = client

    @property
    def platform(self) -> str:
        return self.client.platform

    @property
    def platform_version(self) -> str:
        return self.client.plugin_version

    def devices(self) -> list:
        return list(self.client.devices)

    def local_devices(self) -> list:
        return list(self.client.devices)

    def device_count(self) -> int:
        return len(self.client.devices)

    def local_device_count(self) -> int:
        return len(self.client.devices)

    def process_index(self) -> int:
        return 0

    def __eq__(self, other) -> bool:
        return isinstance(other, Backend) and other.client is self.client

    def __hash__(self) -> int:
        return id(self.client)

    def __repr__(self) -> str:
        return f"Backend(platform={self.platform!r}, devices={self.device_count()})"


def get_backend(platform=None) -> Backend:
    """The backend of ``platform`` (a name such as ``"cpu"`` or ``"gpu"``, a Backend, or
    None for the default one).

    Raises
    ------
    RuntimeError
        If the platform is unknown or unavailable.
    """
    if isinstance(platform, Backend):
        return platform
    name = _client.default_backend() if platform is None else str(platform).lower()
    name = _ALIASES.get(name, name)
    try:
        return Backend(_client.get_client(name))
    except Exception as e:
        raise RuntimeError(f"Unknown backend {platform!r}: {e}") from e


def backends() -> dict:
    """The available backends by platform name."""
    out = {"cpu": get_backend("cpu")}
    default = _client.default_backend()
    if default != "cpu":
        out[default] = get_backend(default)
    return out


def get_default_device():
    """The device computations run on by default (``jax_default_device`` when set)."""
    return _client.default_device()


def clear_backends() -> None:
    """Forget compiled executables and traced functions (xjax keeps its clients, which
    outlive their executables)."""
    clear_caches()
