"""``xjax.scipy.stats.truncnorm``: the normal distribution with location ``loc`` and scale
``scale`` truncated to ``[loc + a scale, loc + b scale]`` (``a`` and ``b`` count standard
deviations, SciPy's convention).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import truncnorm
>>> truncnorm.cdf(jnp.array([0.]), -1., 1.)
Array([0.5], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.special import log_ndtr, ndtr
from xjax._src.scipy.stats import norm
from xjax._src.scipy.stats._common import neg_inf_where, promote_args_inexact, standardize


def _log_sub_exp(big, small):
    """``log(exp(big) - exp(small))``: ``big`` when ``small = -inf``, NaN when ``small > big``.

    The NaN is a constant chosen by ``where`` and the log only sees safe arguments, so
    derivatives through a branch that ``logcdf`` discards stay zero (not NaN)."""
    valid = small <= big
    finite_gap = valid & (small > -np.inf)
    gap = jnp.where(finite_gap, small - big, -1)
    log_diff = jnp.where(finite_gap, big + jnp.log(-jnp.expm1(gap)), big)
    return jnp.where(valid, log_diff, np.nan)


def _log_gauss_mass(a, b):
    """``log(Phi(b) - Phi(a))`` for ``a <= b``, from the tail that keeps it accurate."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
    left_tail = b <= 0
    right_tail = a > 0
    # in the right tail use the mirror image: Phi(b) - Phi(a) = Phi(-a) - Phi(-b)
    upper = jnp.where(right_tail, -a, b)
    lower = jnp.where(right_tail, -b, a)
    tail_mass = _log_sub_exp(log_ndtr(upper), log_ndtr(lower))
    # an interval around 0 holds at least a fair share of the mass: subtract both tails
    central_mass = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(left_tail | right_tail, tail_mass, central_mass)


def logpdf(x, a, b, loc=0, scale=1):
    """The log of the truncated normal density; ``-inf`` off ``[a, b]`` (standardized), NaN
    where ``a >= b``."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    log_density = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = standardize(x, loc, scale)
    log_density = neg_inf_where((z < a) | (z > b), log_density)
    return jnp.where(a >= b, np.nan, log_density)


def pdf(x, a, b, loc=0, scale=1):
    """The truncated normal density at ``x``."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """The log of :func:`cdf`; near 1 it is computed from the survival function."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = standardize(x, loc, scale)
    log_total = _log_gauss_mass(a, b)
    log_below = _log_gauss_mass(a, z) - log_total
    log_above = _log_gauss_mass(z, b) - log_total
    result = jnp.select(
        [z >= b, z <= a, log_below > -0.1, z > a],
        [0, -np.inf, jnp.log1p(-jnp.exp(log_above)), log_below])
    return jnp.where(a >= b, np.nan, result)


def cdf(x, a, b, loc=0, scale=1):
    """``P(X <= x)``."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """The log of :func:`sf`: the log cdf of the mirrored distribution at ``-x``."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    """``P(X > x)``."""
    return jnp.exp(logsf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
