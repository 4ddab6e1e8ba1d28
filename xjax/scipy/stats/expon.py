"""``xjax.scipy.stats.expon``: the exponential distribution on ``[loc, inf)`` with scale
``scale`` (rate ``1 / scale``).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import expon
>>> expon.ppf(jnp.array([0., 0.5]), scale=2.)
Array([0.       , 1.3862944], dtype=float32)
"""

from xjax._src.scipy.stats.expon import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, ppf as ppf,
    sf as sf,
)
from xjax._src.scipy.stats.expon import __all__ as __all__  # noqa: F401
