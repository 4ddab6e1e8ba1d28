"""``xjax.scipy.stats.laplace``: the Laplace (double exponential) distribution with location
``loc`` and scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import laplace
>>> laplace.cdf(jnp.array([0.]))
Array([0.5], dtype=float32)
"""

from xjax._src.scipy.stats.laplace import (  # noqa: F401
    cdf as cdf, logpdf as logpdf, pdf as pdf,
)
from xjax._src.scipy.stats.laplace import __all__ as __all__  # noqa: F401
