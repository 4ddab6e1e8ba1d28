"""``xjax.scipy.stats.multivariate_normal``: the normal distribution in ``n`` dimensions with
mean ``mean`` (last axis) and covariance ``cov`` (a matrix, or a scalar for ``cov * I``).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import multivariate_normal
>>> multivariate_normal.logpdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2))
Array(-1.837877, dtype=float32)
"""

from xjax._src.scipy.stats.multivariate_normal import (  # noqa: F401
    logpdf as logpdf, pdf as pdf,
)
from xjax._src.scipy.stats.multivariate_normal import __all__ as __all__  # noqa: F401
