"""``xjax.scipy.stats.uniform``: the uniform distribution on ``[loc, loc + scale]``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import uniform
>>> uniform.cdf(jnp.array([-1., 0.25, 2.]))
Array([0.  , 0.25, 1.  ], dtype=float32)
"""

from xjax._src.scipy.stats.uniform import (  # noqa: F401
    cdf as cdf, logpdf as logpdf, pdf as pdf, ppf as ppf,
)
from xjax._src.scipy.stats.uniform import __all__ as __all__  # noqa: F401
