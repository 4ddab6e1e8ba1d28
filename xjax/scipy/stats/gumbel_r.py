"""``xjax.scipy.stats.gumbel_r``: the right-skewed Gumbel (maximum extreme value)
distribution with location ``loc`` and scale ``scale``; NaN for ``scale <= 0``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import gumbel_r
>>> gumbel_r.cdf(jnp.array([0.]))
Array([0.36787942], dtype=float32)
"""

from xjax._src.scipy.stats.gumbel_r import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, ppf as ppf,
    sf as sf,
)
from xjax._src.scipy.stats.gumbel_r import __all__ as __all__  # noqa: F401
