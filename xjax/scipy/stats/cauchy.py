"""``xjax.scipy.stats.cauchy``: the Cauchy distribution with location ``loc`` and scale
``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import cauchy
>>> cauchy.cdf(jnp.array([-1., 0., 1.]))
Array([0.25, 0.5 , 0.75], dtype=float32)
"""

from xjax._src.scipy.stats.cauchy import (  # noqa: F401
    cdf as cdf, isf as isf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf,
    ppf as ppf, sf as sf,
)
from xjax._src.scipy.stats.cauchy import __all__ as __all__  # noqa: F401
