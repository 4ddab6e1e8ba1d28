"""``jax.version`` under the import hook: the JAX release xjax matches, not xjax's own."""

from xjax._src.core.version import __version__ as xjax_version  # noqa: F401
from xjax._src.core.version import jax_version as __version__
from xjax._src.core.version import jax_version_info as __version_info__  # noqa: F401

_version = __version__
_minimum_jaxlib_version = __version__
