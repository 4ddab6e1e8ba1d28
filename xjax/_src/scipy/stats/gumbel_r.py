"""``xjax.scipy.stats.gumbel_r``: the right-skewed Gumbel (maximum extreme value)
distribution with location ``loc`` and scale ``scale``; NaN for ``scale <= 0``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import gumbel_r
>>> gumbel_r.cdf(jnp.array([0.]))
Array([0.36787942], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.nn import log1mexp
from xjax._src.scipy.stats._common import nan_unless, promote_args_inexact, standardize


def _standardized(name, x, loc, scale):
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    return standardize(x, loc, scale), scale


def logpdf(x, loc=0, scale=1):
    """The log of the density ``exp(-z - exp(-z)) / scale``, ``z = (x - loc) / scale``."""
    z, scale = _standardized("gumbel_r.logpdf", x, loc, scale)
    return nan_unless(scale > 0, -jnp.log(scale) - (z + jnp.exp(-z)))


def pdf(x, loc=0, scale=1):
    """The Gumbel density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """The log of :func:`cdf`: ``-exp(-z)``."""
    z, scale = _standardized("gumbel_r.logcdf", x, loc, scale)
    return nan_unless(scale > 0, -jnp.exp(-z))


def cdf(x, loc=0, scale=1):
    """``P(X <= x) = exp(-exp(-z))``."""
    return jnp.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """``P(X > x) = 1 - exp(-exp(-z))``."""
    z, scale = _standardized("gumbel_r.sf", x, loc, scale)
    return nan_unless(scale > 0, 1 - jnp.exp(-jnp.exp(-z)))


def logsf(x, loc=0, scale=1):
    """The log of :func:`sf`, ``log(1 - exp(-exp(-z)))`` without cancellation."""
    z, scale = _standardized("gumbel_r.logsf", x, loc, scale)
    return nan_unless(scale > 0, log1mexp(jnp.exp(-z)))


def ppf(p, loc=0, scale=1):
    """The quantile function ``loc - scale log(-log p)``; NaN unless ``0 < p < 1``."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    return jnp.where((p > 0) & (p < 1), loc - scale * jnp.log(-jnp.log(p)), np.nan)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
