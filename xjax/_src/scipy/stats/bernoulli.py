"""``xjax.scipy.stats.bernoulli``: the Bernoulli distribution, 1 with probability ``p`` and 0
otherwise (shifted by ``loc`` in :func:`logpmf` and :func:`pmf`).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import bernoulli
>>> bernoulli.pmf(jnp.array([0., 1.]), 0.25)
Array([0.75, 0.25], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.special import xlog1py, xlogy
from xjax._src.scipy.stats._common import bad_probability, neg_inf_where, promote_args_inexact


def logpmf(k, p, loc=0):
    """The log of :func:`pmf`: ``k log p + (1 - k) log(1 - p)`` for ``0 <= k - loc <= 1``,
    ``-inf`` outside that interval."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_prob = xlogy(x, p) + xlog1py(1 - x, -p)
    return neg_inf_where((x < 0) | (x > 1), log_prob)


def pmf(k, p, loc=0):
    """The probability mass ``P(X = k)``: ``1 - p`` at ``loc``, ``p`` at ``loc + 1``."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """``P(X <= k)``: 0 below 0, ``1 - p`` on ``[0, 1)``, 1 from 1 on; NaN for NaN inputs or
    ``p`` outside ``[0, 1]``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import bernoulli
    >>> bernoulli.cdf(jnp.array([-1., 0.5, 1.]), 0.25)
    Array([0.  , 0.75, 1.  ], dtype=float32)
    """
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    invalid = jnp.isnan(k) | bad_probability(p)
    value = jnp.where(k < 0, 0, jnp.where(k < 1, 1 - p, 1))
    return jnp.where(invalid, np.nan, value)


def ppf(q, p):
    """The quantile function: 0 for ``q <= 1 - p``, else 1; NaN for NaN inputs or ``q`` or
    ``p`` outside ``[0, 1]``."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    invalid = bad_probability(q) | bad_probability(p)
    return jnp.where(invalid, np.nan, jnp.where(q <= 1 - p, 0, 1))


__all__ = ["cdf", "logpmf", "pmf", "ppf"]
