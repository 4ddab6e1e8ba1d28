"""``xjax.extend.source_info_util``: what xjax knows of source files (as
``jax.extend.source_info_util``)."""

from xjax._src.jax_adapters.extend.source_info_util import (  # noqa: F401
    register_exclusion as register_exclusion, register_inclusion as register_inclusion,
    is_user_filename as is_user_filename, extend_name_stack as extend_name_stack,
    reset_name_stack as reset_name_stack, user_context as user_context,
)
