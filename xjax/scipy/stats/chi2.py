"""``xjax.scipy.stats.chi2``: the chi-squared distribution with ``df`` degrees of freedom,
location ``loc`` and scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import chi2
>>> chi2.sf(jnp.array([2.]), 2.)
Array([0.36787945], dtype=float32)
"""

from xjax._src.scipy.stats.chi2 import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
from xjax._src.scipy.stats.chi2 import __all__ as __all__  # noqa: F401
