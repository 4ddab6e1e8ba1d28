"""``jaxlib`` under the import hook: xjax compiles through its own PJRT runtime, so this holds
only what libraries read of jaxlib, its version."""

from xjax._src.jax_adapters.jaxlib import version  # noqa: F401
from xjax._src.jax_adapters.jaxlib.version import __version__ as __version__  # noqa: F401
