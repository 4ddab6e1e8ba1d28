"""``xjax.scipy.stats.cauchy``: the Cauchy distribution with location ``loc`` and scale
``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import cauchy
>>> cauchy.cdf(jnp.array([-1., 0., 1.]))
Array([0.25, 0.5 , 0.75], dtype=float32)
"""

from __future__ import annotations

import math

from xjax._src import numpy as jnp
from xjax._src.scipy.stats._common import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
    """The log of the Cauchy density ``1 / (pi scale (1 + z**2))``, ``z = (x - loc) / scale``."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = standardize(x, loc, scale)
    return -(jnp.log(math.pi * scale) + jnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """The Cauchy density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``P(X <= x) = 1/2 + arctan(z) / pi``."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + jnp.arctan(standardize(x, loc, scale)) / math.pi


def logcdf(x, loc=0, scale=1):
    """The log of :func:`cdf`."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """``P(X > x)``, the cdf of the mirrored point."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """The log of :func:`sf`."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + scale tan(pi (q - 1/2))``."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    return jnp.tan(math.pi * q - math.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse survival function ``loc + scale tan(pi (1/2 - q))``."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    return jnp.tan(math.pi / 2 - math.pi * q) * scale + loc


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
