"""``xjax.experimental.compilation_cache.compilation_cache``: set up xjax's persistent
compilation cache (``xjax.runtime.compilation_cache``), as JAX 0.10.2's module of the
same name: ``set_cache_dir`` and ``reset_cache``.
"""

from xjax._src.experimental.compilation_cache.compilation_cache import (  # noqa: F401
    reset_cache as reset_cache, set_cache_dir as set_cache_dir,
)
from xjax._src.experimental.compilation_cache.compilation_cache import __all__ as __all__  # noqa: F401
