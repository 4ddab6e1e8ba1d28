"""``xjax.scipy.stats.logistic``: the logistic distribution with location ``loc`` and scale
``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import logistic
>>> logistic.ppf(jnp.array([0.5]), loc=1.)
Array([1.], dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.scipy.special import expit, logit
from xjax._src.scipy.stats._common import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
    """The log of the density ``1 / (scale (e**(z/2) + e**(-z/2))**2)``, computed with
    ``logaddexp`` so that it stays finite far out."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    half_z = standardize(x, loc, scale) / 2
    return -2 * jnp.logaddexp(half_z, -half_z) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """The logistic density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``P(X <= x) = expit((x - loc) / scale)``."""
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit(standardize(x, loc, scale))


def sf(x, loc=0, scale=1):
    """``P(X > x) = expit(-(x - loc) / scale)``."""
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(-standardize(x, loc, scale))


def ppf(x, loc=0, scale=1):
    """The quantile function ``loc + scale logit(x)``."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """The inverse survival function ``loc - scale logit(x)``."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc


__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]
