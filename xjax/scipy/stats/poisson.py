"""``xjax.scipy.stats.poisson``: the Poisson distribution with mean ``mu``, shifted by
``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import poisson
>>> poisson.pmf(jnp.array([-1., 0.5]), 1.)  # off the support
Array([0., 0.], dtype=float32)
"""

from xjax._src.scipy.stats.poisson import (  # noqa: F401
    cdf as cdf, entropy as entropy, logpmf as logpmf, pmf as pmf,
)
from xjax._src.scipy.stats.poisson import __all__ as __all__  # noqa: F401
