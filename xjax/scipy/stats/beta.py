"""``xjax.scipy.stats.beta``: the beta distribution with shapes ``a``, ``b`` on
``[loc, loc + scale]``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import beta
>>> beta.cdf(jnp.array([0.5]), 2., 2.)
Array([0.5], dtype=float32)
"""

from xjax._src.scipy.stats.beta import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
from xjax._src.scipy.stats.beta import __all__ as __all__  # noqa: F401
