"""``jaxlib.version`` under the import hook."""

from xjax._src.core.version import jax_version as __version__  # noqa: F401
from xjax._src.core.version import jax_version_info as __version_info__  # noqa: F401

_version = __version__
