"""``xjax.scipy.stats.pareto``: the Pareto distribution with shape ``b`` on
``[loc + scale, inf)``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import pareto
>>> pareto.cdf(jnp.array([0.5, 2.]), 1.)
Array([0. , 0.5], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.stats._common import (bad_probability, neg_inf_where, promote_args_inexact,
                                           standardize)


def _promoted(name, x, b, loc, scale):
    x, b, loc, scale = promote_args_inexact(name, x, b, loc, scale)
    return standardize(x, loc, scale), b, x < loc + scale


def logpdf(x, b, loc=0, scale=1):
    """The log of the density ``b / (scale z**(b + 1))``, ``z = (x - loc) / scale``;
    ``-inf`` below ``loc + scale``."""
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = standardize(x, loc, scale)
    log_density = -(jnp.log(scale / b) + (b + 1) * jnp.log(z))
    return neg_inf_where(x < loc + scale, log_density)


def pdf(x, b, loc=0, scale=1):
    """The Pareto density at ``x``."""
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """``P(X <= x) = 1 - z**-b``, 0 below the support."""
    z, b, below = _promoted("pareto.cdf", x, b, loc, scale)
    return jnp.where(below, jnp.zeros_like(z), 1 - z ** -b)


def logcdf(x, b, loc=0, scale=1):
    """The log of :func:`cdf`, ``log1p(-z**-b)``; ``-inf`` below the support."""
    z, b, below = _promoted("pareto.logcdf", x, b, loc, scale)
    return neg_inf_where(below, jnp.log1p(-(z ** -b)))


def logsf(x, b, loc=0, scale=1):
    """The log of :func:`sf`, ``-b log z``; 0 below the support."""
    z, b, below = _promoted("pareto.logsf", x, b, loc, scale)
    return jnp.where(below, jnp.zeros_like(z), -b * jnp.log(z))


def sf(x, b, loc=0, scale=1):
    """``P(X > x) = z**-b``, 1 below the support."""
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """The quantile function ``loc + scale (1 - q)**(-1 / b)``; NaN outside ``[0, 1]``."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    return jnp.where(bad_probability(q), np.nan, loc + scale * (1 - q) ** (-1 / b))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
