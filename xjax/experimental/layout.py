"""``xjax.experimental.layout``: memory layouts, as ``jax.experimental.layout``."""

from xjax._src.experimental.layout import Format as Format  # noqa: F401
from xjax._src.experimental.layout import Layout as Layout  # noqa: F401
from xjax._src.experimental.layout import (  # noqa: F401
    with_layout_constraint as with_layout_constraint,
)
