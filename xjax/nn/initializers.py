"""``xjax.nn.initializers``: functions ``init(key, shape, dtype) -> Array`` for parameters.

Each factory (``normal(stddev)``, ``glorot_uniform()``, ...) returns an initializer; ``zeros``
and ``ones`` are initializers themselves. They draw from ``xjax.random`` exactly as JAX's draw
from ``jax.random``, so the same key gives the same numbers.

Examples
--------
>>> import xjax
>>> init = xjax.nn.initializers.glorot_normal()
>>> init(xjax.random.PRNGKey(0), (3, 4)).shape
(3, 4)
"""

from xjax._src.nn.initializers import (  # noqa: F401
    Initializer as Initializer, constant as constant, delta_orthogonal as delta_orthogonal,
    glorot_normal as glorot_normal, glorot_uniform as glorot_uniform, he_normal as he_normal,
    he_uniform as he_uniform, kaiming_normal as kaiming_normal,
    kaiming_uniform as kaiming_uniform, lecun_normal as lecun_normal,
    lecun_uniform as lecun_uniform, normal as normal, ones as ones, orthogonal as orthogonal,
    truncated_normal as truncated_normal, uniform as uniform,
    variance_scaling as variance_scaling, xavier_normal as xavier_normal,
    xavier_uniform as xavier_uniform, zeros as zeros,
)
from xjax._src.nn.initializers import __all__ as __all__  # noqa: F401
