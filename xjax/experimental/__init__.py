"""``xjax.experimental``: JAX's experimental namespace (what xjax has of it).
"""

from xjax._src.higher_order.callbacks import (  # noqa: F401
    io_callback as io_callback,
)
from xjax._src.experimental import __all__ as __all__  # noqa: F401
