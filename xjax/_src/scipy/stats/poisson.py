"""``xjax.scipy.stats.poisson``: the Poisson distribution with mean ``mu``, shifted by
``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import poisson
>>> poisson.pmf(jnp.array([-1., 0.5]), 1.)  # off the support
Array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import math

from xjax._src import numpy as jnp
from xjax._src.transformations.jit import jit
from xjax._src.numpy._promotion import check_arraylike, promote_dtypes_inexact
from xjax._src.scipy.special import entr, gammaincc, gammaln, xlogy
from xjax._src.scipy.stats._common import neg_inf_where, promote_args_inexact

# Below this mean the entropy is summed term by term, above it the asymptotic series is used.
_SUMMED_BELOW = 100.
# Terms summed: k < mu + 10 sqrt(mu) + 20 < 220 covers all but ~1e-20 of the mass for
# mu < 100; a static bound keeps the sum jittable.
_MAX_TERMS = 250


def logpmf(k, mu, loc=0):
    """The log of :func:`pmf`: ``k log mu - log k! - mu``; ``-inf`` for non-integer ``k`` or
    ``k < loc``."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_prob = xlogy(x, mu) - gammaln(x + 1) - mu
    return neg_inf_where((x < 0) | (jnp.round(k) != k), log_prob)


def pmf(k, mu, loc=0):
    """The probability mass ``P(X = k)``."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """``P(X <= k)``: the regularized upper incomplete gamma function
    ``Q(floor(k - loc) + 1, mu)``; 0 below ``loc``."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)  # JAX's name
    x = k - loc
    return jnp.where(x < 0, 0, gammaincc(jnp.floor(1 + x), mu))


def _entropy_summed(mu):
    k = jnp.arange(_MAX_TERMS, dtype=mu.dtype).reshape((_MAX_TERMS,) + (1,) * mu.ndim)
    bound = jnp.ceil(mu + 10 * jnp.sqrt(jnp.maximum(mu, 0)) + 20)
    probs = jnp.where(k < bound, pmf(k, mu), 0)  # a NaN mu keeps its NaN probabilities
    return jnp.sum(entr(probs), axis=0)


def _entropy_asymptotic(mu):
    # H(mu) = log(2 pi e mu) / 2 - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3) + O(mu^-4)
    inv = 1 / mu
    series = inv * (1 / 12 + inv * (1 / 24 + inv * (19 / 360)))
    return 0.5 * jnp.log(2 * math.pi * math.e * mu) - series


@jit
def entropy(mu, loc=0):
    """The entropy (in nats) of the Poisson distribution; ``loc`` does not change it but
    broadcasts with ``mu``.

    Examples
    --------
    >>> from xjax.scipy.stats import poisson
    >>> poisson.entropy(0.)
    Array(0., dtype=float32)
    """
    check_arraylike("poisson.entropy", mu, loc)
    mu, loc = promote_dtypes_inexact(mu, loc)
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    # mu = 0 is a point mass; the summed terms' bound and the series need mu's other branch
    # to be harmless, so each branch gets a safe mean where it is not used
    summed = _entropy_summed(jnp.where(mu < _SUMMED_BELOW, mu, 1))
    asymptotic = _entropy_asymptotic(jnp.where(mu < _SUMMED_BELOW, _SUMMED_BELOW, mu))
    result = jnp.where(mu == 0, 0, jnp.where(mu < _SUMMED_BELOW, summed, asymptotic))
    return jnp.broadcast_to(result, shape)


__all__ = ["cdf", "entropy", "logpmf", "pmf"]
