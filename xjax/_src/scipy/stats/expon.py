"""``xjax.scipy.stats.expon``: the exponential distribution on ``[loc, inf)`` with scale
``scale`` (rate ``1 / scale``).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import expon
>>> expon.ppf(jnp.array([0., 0.5]), scale=2.)
Array([0.       , 1.3862944], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.stats._common import bad_probability, neg_inf_where, promote_args_inexact


def logpdf(x, loc=0, scale=1):
    """The log of the density ``exp(-(x - loc) / scale) / scale``; ``-inf`` below ``loc``."""
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    return neg_inf_where(x < loc, -(x - loc) / scale - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The exponential density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``P(X <= x) = 1 - exp(-(x - loc) / scale)`` (via ``expm1``), 0 below ``loc``."""
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    minus_z = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(minus_z), -jnp.expm1(minus_z))


def logcdf(x, loc=0, scale=1):
    """The log of :func:`cdf`, as ``log1p(-sf)``."""
    return jnp.log1p(-sf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """The log of :func:`sf`: ``-(x - loc) / scale``, 0 below ``loc``."""
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)  # JAX's name
    minus_z = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(minus_z), minus_z)


def sf(x, loc=0, scale=1):
    """``P(X > x)``."""
    return jnp.exp(logsf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc - scale log(1 - q)``; NaN outside ``[0, 1]``."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return jnp.where(bad_probability(q), np.nan, loc - scale * jnp.log1p(-q))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
