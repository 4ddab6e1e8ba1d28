"""``xjax.version``: the library's version (as ``jax.version.__version__``).
"""

from xjax._src.core.version import __version__ as __version__  # noqa: F401
from xjax._src.core.version import _version as _version  # noqa: F401
