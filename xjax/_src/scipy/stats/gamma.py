"""``xjax.scipy.stats.gamma``: the gamma distribution with shape ``a`` on ``[loc, inf)``
with scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import gamma
>>> gamma.cdf(jnp.array([-1., 0.]), 1.)
Array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.special import gammainc, gammaincc, gammaln, xlogy
from xjax._src.scipy.stats._common import clamp, neg_inf_where, promote_args_inexact, standardize


def logpdf(x, a, loc=0, scale=1):
    """The log of the gamma density; ``-inf`` below ``loc``."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    inside = x >= loc
    # a harmless point off the support keeps the masked branch (and its gradient) finite
    y = jnp.where(inside, standardize(x, loc, scale), 1)
    log_density = xlogy(a - 1, y) - y - gammaln(a) - jnp.log(scale)
    return neg_inf_where(~inside, log_density)


def pdf(x, a, loc=0, scale=1):
    """The gamma density at ``x``."""
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """``P(X <= x)``: the regularized lower incomplete gamma function, 0 below ``loc``."""
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, clamp(0, standardize(x, loc, scale), np.inf))


def logcdf(x, a, loc=0, scale=1):
    """The log of :func:`cdf`."""
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """``P(X > x)``: the regularized upper incomplete gamma function, 1 below ``loc``."""
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = standardize(x, loc, scale)
    return jnp.where(y < 0, 1, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """The log of :func:`sf`."""
    return jnp.log(sf(x, a, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
