"""``jax._src`` under the import hook: the JAX-internal modules that libraries import (Flax,
Equinox, Chex, Distrax, jaxtyping), each a thin adapter over xjax's own implementation.

A module JAX has but this package lacks fails to import (``ModuleNotFoundError``), as it would
if JAX had removed it; a name a module here lacks raises ``AttributeError``. Nothing here is a
second implementation.
"""

import importlib


def __getattr__(name: str):
    # ``import jax`` loads all of JAX's ``jax._src``, so libraries reach ``jax._src.X`` as an
    # attribute without importing it: import the adapter on first use.
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module 'jax._src' has no attribute {name!r}") from None
