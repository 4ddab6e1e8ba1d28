"""``xjax.scipy.stats.betabinom``: the beta-binomial distribution (``n`` trials whose success
probability is beta(``a``, ``b``) distributed), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import betabinom
>>> betabinom.pmf(jnp.array([0., 1., 2.]), 2., 1., 1.)
Array([0.33333334, 0.33333334, 0.33333334], dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.scipy.special import betaln
from xjax._src.scipy.stats._common import nan_unless, neg_inf_where, promote_args_inexact


def logpmf(k, n, a, b, loc=0):
    """The log of :func:`pmf`. ``k`` is floored; ``-inf`` off the support ``0..n`` (after
    the shift), NaN for ``n < 0`` or non-positive ``a`` or ``b``."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = jnp.floor(k) - loc
    log_binomial = -jnp.log1p(n) - betaln(n - y + 1, y + 1)  # log C(n, y)
    log_prob = log_binomial + betaln(y + a, n - y + b) - betaln(a, b)
    # n = 0 is a point mass at y = 0, whatever rounding the beta terms carry
    log_prob = jnp.where((y == 0) & (n == 0), 0., log_prob)
    log_prob = neg_inf_where((y < -loc) | (y > n) | (y + a <= 0), log_prob)
    return nan_unless((n >= 0) & (a > 0) & (b > 0), log_prob)


def pmf(k, n, a, b, loc=0):
    """The probability mass ``P(X = k)``."""
    return jnp.exp(logpmf(k, n, a, b, loc))


__all__ = ["logpmf", "pmf"]
