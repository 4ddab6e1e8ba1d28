"""``xjax.scipy.stats.nbinom``: the negative binomial distribution (failures before the
``n``-th success, success probability ``p``), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import nbinom
>>> nbinom.pmf(jnp.array([0., 1.]), 1., 0.5)
Array([0.5 , 0.25], dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.scipy.special import gammaln, xlogy
from xjax._src.scipy.stats._common import neg_inf_where, promote_args_inexact


def logpmf(k, n, p, loc=0):
    """The log of :func:`pmf`; ``-inf`` below ``loc``."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    log_binomial = gammaln(y + n) - gammaln(n) - gammaln(y + 1)
    return neg_inf_where(k < loc, log_binomial + xlogy(n, p) + xlogy(y, 1 - p))


def pmf(k, n, p, loc=0):
    """The probability mass ``P(X = k)``."""
    return jnp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]
