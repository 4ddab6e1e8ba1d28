"""``xjax.flatten_util``: ravel a pytree of arrays into one flat vector and back (mirrors
``jax.flatten_util``).

>>> import xjax.numpy as jnp
>>> from xjax.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(3)})
>>> flat
Array([0., 0., 0., 1., 1., 1., 1.], dtype=float32)
>>> unravel(flat)["w"].shape
(2, 2)
"""

from xjax._src.api.flatten_util import (  # noqa: F401
    ravel_pytree as ravel_pytree,
)
from xjax._src.api.flatten_util import __all__ as __all__  # noqa: F401
