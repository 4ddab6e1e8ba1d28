"""``xjax.scipy.stats.geom``: the geometric distribution (the trial of the first success,
success probability ``p``), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import geom
>>> geom.pmf(jnp.array([1., 2.]), 0.5)
Array([0.5 , 0.25], dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.scipy.special import xlog1py
from xjax._src.scipy.stats._common import neg_inf_where, promote_args_inexact


def logpmf(k, p, loc=0):
    """The log of :func:`pmf`: ``(k - 1) log(1 - p) + log p``; ``-inf`` for ``k - loc <= 0``."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    trials = k - loc
    return neg_inf_where(trials <= 0, xlog1py(trials - 1, -p) + jnp.log(p))


def pmf(k, p, loc=0):
    """The probability mass ``P(X = k)``."""
    return jnp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]
