"""``xjax.scipy.stats.beta``: the beta distribution with shapes ``a``, ``b`` on
``[loc, loc + scale]``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import beta
>>> beta.cdf(jnp.array([0.5]), 2., 2.)
Array([0.5], dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.scipy.special import betainc, betaln, xlog1py, xlogy
from xjax._src.scipy.stats._common import (clamp, nan_unless, neg_inf_where, promote_args_inexact,
                                           standardize)


def logpdf(x, a, b, loc=0, scale=1):
    """The log of the beta density; ``-inf`` off ``[loc, loc + scale]``, NaN unless ``a``,
    ``b`` and ``scale`` are positive."""
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    y = standardize(x, loc, scale)
    log_density = xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - jnp.log(scale)
    log_density = neg_inf_where((x < loc) | (x > loc + scale), log_density)
    return nan_unless((a > 0) & (b > 0) & (scale > 0), log_density)


def pdf(x, a, b, loc=0, scale=1):
    """The beta density at ``x``."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _unit_point(name, x, a, b, loc, scale):
    x, a, b, loc, scale = promote_args_inexact(name, x, a, b, loc, scale)
    return clamp(0, standardize(x, loc, scale), 1), a, b


def cdf(x, a, b, loc=0, scale=1):
    """``P(X <= x)``: the regularized incomplete beta function ``I_y(a, b)`` of the point
    ``y = (x - loc) / scale`` clipped to ``[0, 1]``."""
    y, a, b = _unit_point("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, y)


def logcdf(x, a, b, loc=0, scale=1):
    """The log of :func:`cdf`."""
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """``P(X > x)``, computed as ``I_{1-y}(b, a)`` (accurate when the answer is small)."""
    y, a, b = _unit_point("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - y)


def logsf(x, a, b, loc=0, scale=1):
    """The log of :func:`sf`."""
    return jnp.log(sf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
