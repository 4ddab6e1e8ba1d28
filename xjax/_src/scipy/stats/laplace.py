"""``xjax.scipy.stats.laplace``: the Laplace (double exponential) distribution with location
``loc`` and scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import laplace
>>> laplace.cdf(jnp.array([0.]))
Array([0.5], dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.scipy.stats._common import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
    """The log of the density ``exp(-|x - loc| / scale) / (2 scale)``."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
    """The Laplace density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``P(X <= x)``: ``exp(z) / 2`` for ``z <= 0``, ``1 - exp(-z) / 2`` above."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    z = standardize(x, loc, scale)
    return jnp.where(z <= 0, 0.5 * jnp.exp(z), 1 - 0.5 * jnp.exp(-z))


__all__ = ["cdf", "logpdf", "pdf"]
