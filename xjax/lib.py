"""``xjax.lib``: public names (the implementation is in ``xjax._src.lib``).
"""

from xjax._src.core.version import __version__ as __version__  # noqa: F401
