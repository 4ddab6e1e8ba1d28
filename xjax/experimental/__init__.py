"""``xjax.experimental``: JAX's experimental namespace (what xjax has of it)."""

from xjax.callback import io_callback

__all__ = ["io_callback"]
