"""``xjax.scipy.stats.multinomial``: the multinomial distribution of ``n`` draws over
categories of probabilities ``p`` (the last axis).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import multinomial
>>> multinomial.pmf(jnp.array([1, 1]), 2, jnp.array([0.5, 0.5]))
Array(0.5, dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import promote_args_inexact, promote_args_numeric
from xjax._src.scipy.special import gammaln, xlogy
from xjax._src.scipy.stats._common import neg_inf_where


def logpmf(x, n, p):
    """The log of :func:`pmf`; ``-inf`` where the counts ``x`` do not add up to ``n``.

    ``x`` and ``n`` must be integers; the counts of one outcome lie along the last axis of
    ``x`` (as ``p``'s), earlier axes are batch axes (each outcome's counts are checked against
    ``n`` on their own, where JAX 0.10.2 compares the sum of all of ``x``).

    Raises
    ------
    ValueError
        If ``x`` or ``n`` is not of an integer dtype.
    """
    p, = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    counts_match = jnp.sum(x, axis=-1) == n
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_prob = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return neg_inf_where(~counts_match, log_prob)


def pmf(x, n, p):
    """The probability mass of the counts ``x``."""
    return jnp.exp(logpmf(x, n, p))


__all__ = ["logpmf", "pmf"]
