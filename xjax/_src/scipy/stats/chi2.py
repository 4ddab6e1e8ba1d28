"""``xjax.scipy.stats.chi2``: the chi-squared distribution with ``df`` degrees of freedom,
location ``loc`` and scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import chi2
>>> chi2.sf(jnp.array([2.]), 2.)
Array([0.36787945], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.special import gammainc, gammaincc, gammaln
from xjax._src.scipy.stats._common import clamp, neg_inf_where, promote_args_inexact, standardize


def logpdf(x, df, loc=0, scale=1):
    """The log of the chi-squared density; ``-inf`` below ``loc``."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    y = standardize(x, loc, scale)
    half_df = df / 2
    # as JAX: a plain product, so the density at y = 0 is NaN for df = 2
    kernel = (half_df - 1) * jnp.log(y) - y / 2
    log_norm = gammaln(half_df) + half_df * math.log(2) + jnp.log(scale)
    return neg_inf_where(x < loc, kernel - log_norm)


def pdf(x, df, loc=0, scale=1):
    """The chi-squared density at ``x``."""
    return jnp.exp(logpdf(x, df, loc, scale))


def _half_point(name, x, df, loc, scale):
    # chi2(df) is gamma(df / 2) with scale 2
    x, df, loc, scale = promote_args_inexact(name, x, df, loc, scale)
    return df / 2, clamp(0, (x - loc) / (scale * 2), np.inf)


def cdf(x, df, loc=0, scale=1):
    """``P(X <= x)``: ``gammainc(df / 2, (x - loc) / (2 scale))``, 0 below ``loc``."""
    return gammainc(*_half_point("chi2.cdf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """The log of :func:`cdf`."""
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """``P(X > x)``: ``gammaincc(df / 2, (x - loc) / (2 scale))``, 1 below ``loc``."""
    return gammaincc(*_half_point("chi2.sf", x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """The log of :func:`sf`."""
    return jnp.log(sf(x, df, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
