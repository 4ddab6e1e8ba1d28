"""``xjax.scipy.stats.norm``: the normal distribution with location ``loc`` and scale
``scale`` (SciPy's parametrization): densities, distribution functions and quantiles.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import norm
>>> norm.cdf(jnp.array([0.]))
Array([0.5], dtype=float32)
"""

from xjax._src.scipy.stats.norm import (  # noqa: F401
    cdf as cdf, isf as isf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf,
    ppf as ppf, sf as sf,
)
from xjax._src.scipy.stats.norm import __all__ as __all__  # noqa: F401
