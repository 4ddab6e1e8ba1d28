"""``xjax.scipy.stats.gamma``: the gamma distribution with shape ``a`` on ``[loc, inf)``
with scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import gamma
>>> gamma.cdf(jnp.array([-1., 0.]), 1.)
Array([0., 0.], dtype=float32)
"""

from xjax._src.scipy.stats.gamma import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
from xjax._src.scipy.stats.gamma import __all__ as __all__  # noqa: F401
