"""``xjax.experimental``: JAX's experimental namespace (what xjax has of it)."""

from xjax._src.higher_order.callbacks import io_callback

__all__ = ["io_callback"]
