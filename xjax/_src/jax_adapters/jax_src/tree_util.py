"""``jax._src.tree_util`` under the import hook: xjax's pytree functions, and ``_registry``
(the custom node types, which Flax tests membership in)."""

from xjax._src.core.pytree import _registry  # noqa: F401
from xjax._src.core.tree_util import *  # noqa: F401,F403
