"""``xjax.scipy.stats.gennorm``: the generalized normal distribution with shape ``beta``
(density proportional to ``exp(-|x|**beta)``; 2 is a normal, 1 a Laplace distribution).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import gennorm
>>> gennorm.cdf(jnp.array([0.]), 2.)
Array([0.5], dtype=float32)
"""

from xjax._src.scipy.stats.gennorm import (  # noqa: F401
    cdf as cdf, logpdf as logpdf, pdf as pdf,
)
from xjax._src.scipy.stats.gennorm import __all__ as __all__  # noqa: F401
