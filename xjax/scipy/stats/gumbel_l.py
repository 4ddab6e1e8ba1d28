"""``xjax.scipy.stats.gumbel_l``: the left-skewed Gumbel (minimum extreme value)
distribution with location ``loc`` and scale ``scale``; NaN for ``scale <= 0``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import gumbel_l
>>> gumbel_l.sf(jnp.array([0.]))
Array([0.36787942], dtype=float32)
"""

from xjax._src.scipy.stats.gumbel_l import (  # noqa: F401
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, ppf as ppf,
    sf as sf,
)
from xjax._src.scipy.stats.gumbel_l import __all__ as __all__  # noqa: F401
