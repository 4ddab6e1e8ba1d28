"""``xjax.extend.random``: the threefry hash behind xjax's default PRNG, as
``jax.extend.random``."""

from xjax._src.lax.prng import threefry2x32_p  # noqa: F401
from xjax._src.random.threefry import threefry_2x32  # noqa: F401

__all__ = ["threefry2x32_p", "threefry_2x32"]
