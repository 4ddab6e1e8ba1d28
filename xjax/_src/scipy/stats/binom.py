"""``xjax.scipy.stats.binom``: the binomial distribution (successes in ``n`` trials of
probability ``p``), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import binom
>>> binom.pmf(jnp.array([0., 1., 2.]), 2., 0.5)
Array([0.25, 0.5 , 0.25], dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.scipy.special import gammaln, xlog1py, xlogy
from xjax._src.scipy.stats._common import neg_inf_where, promote_args_inexact


def logpmf(k, n, p, loc=0):
    """The log of :func:`pmf`; ``-inf`` unless ``loc <= k < loc + n + 1``."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    log_binomial = gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)
    log_powers = xlogy(y, p) + xlog1py(n - y, -p)
    # a certain outcome (no trials, or p at 0 or 1 with y at the matching end) has mass 1
    # exactly, whatever rounding the gammaln terms carry
    certain = ((y == 0) & (n == 0)) | (log_powers == 0)
    log_prob = jnp.where(certain, 0., log_binomial + log_powers)
    return neg_inf_where(~((k >= loc) & (k < loc + n + 1)), log_prob)


def pmf(k, n, p, loc=0):
    """The probability mass ``P(X = k)``."""
    return jnp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]
