"""``xjax.scipy.stats.gennorm``: the generalized normal distribution with shape ``beta``
(density proportional to ``exp(-|x|**beta)``; 2 is a normal, 1 a Laplace distribution).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import gennorm
>>> gennorm.cdf(jnp.array([0.]), 2.)
Array([0.5], dtype=float32)
"""

from __future__ import annotations

from xjax._src import lax, numpy as jnp
from xjax._src.scipy.special import gammaln
from xjax._src.scipy.stats._common import promote_args_inexact


def logpdf(x, beta):
    """The log of the density ``beta / (2 Gamma(1 / beta)) exp(-|x|**beta)``."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - gammaln(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    """The generalized normal density at ``x``."""
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """``P(X <= x) = (1 + sign(x) P(1 / beta, |x|**beta)) / 2`` with ``P`` the regularized
    lower incomplete gamma function."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + jnp.sign(x) * lax.igamma(1 / beta, jnp.abs(x) ** beta))


__all__ = ["cdf", "logpdf", "pdf"]
