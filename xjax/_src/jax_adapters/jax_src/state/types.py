"""``jax._src.state.types`` under the import hook: the abstract value of a Ref."""

from xjax._src.core.ref_avals import AbstractRef  # noqa: F401
