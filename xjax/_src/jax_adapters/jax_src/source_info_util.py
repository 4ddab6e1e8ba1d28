"""``jax._src.source_info_util`` under the import hook (what ``jax.extend`` exposes of it)."""

from xjax._src.jax_adapters.extend.source_info_util import *  # noqa: F401,F403
from xjax._src.jax_adapters.extend.source_info_util import (  # noqa: F401
    _exclude_paths, _include_paths, register_exclusion)
