"""``xjax.scipy.stats.pareto``: the Pareto distribution with shape ``b`` on
``[loc + scale, inf)``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import pareto
>>> pareto.cdf(jnp.array([0.5, 2.]), 1.)
Array([0. , 0.5], dtype=float32)
"""

from xjax._src.scipy.stats.pareto import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, ppf as ppf,
    sf as sf,
)
from xjax._src.scipy.stats.pareto import __all__ as __all__  # noqa: F401
