"""``jax._src.dispatch`` under the import hook."""

from __future__ import annotations

from xjax._src.api.devices import effects_barrier


def wait_for_tokens() -> None:
    """Wait for every ordered side effect (callback) issued so far, as JAX does at exit."""
    effects_barrier()
