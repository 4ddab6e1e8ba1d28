"""``xjax.scipy.stats.truncnorm``: the normal distribution with location ``loc`` and scale
``scale`` truncated to ``[loc + a scale, loc + b scale]`` (``a`` and ``b`` count standard
deviations, SciPy's convention).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import truncnorm
>>> truncnorm.cdf(jnp.array([0.]), -1., 1.)
Array([0.5], dtype=float32)
"""

from xjax._src.scipy.stats.truncnorm import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
from xjax._src.scipy.stats.truncnorm import __all__ as __all__  # noqa: F401
