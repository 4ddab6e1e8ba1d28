"""``xjax.extend.random``: the threefry hash behind xjax's default PRNG, as
``jax.extend.random``.
"""

from xjax._src.lax.prng import (  # noqa: F401
    threefry2x32_p as threefry2x32_p,
)
from xjax._src.random.threefry import (  # noqa: F401
    threefry_2x32 as threefry_2x32,
)
from xjax._src.jax_adapters.extend.random import __all__ as __all__  # noqa: F401
