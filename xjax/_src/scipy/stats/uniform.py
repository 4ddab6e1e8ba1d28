"""``xjax.scipy.stats.uniform``: the uniform distribution on ``[loc, loc + scale]``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import uniform
>>> uniform.cdf(jnp.array([-1., 0.25, 2.]))
Array([0.  , 0.25, 1.  ], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.stats._common import bad_probability, neg_inf_where, promote_args_inexact


def logpdf(x, loc=0, scale=1):
    """``-log(scale)`` on ``[loc, loc + scale]``, ``-inf`` off it."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    outside = (x < loc) | (x > loc + scale)
    return neg_inf_where(outside, -jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The uniform density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``P(X <= x)``: 0 below ``loc``, 1 above ``loc + scale``, linear between (and, as in
    JAX, 0 where ``x`` is NaN)."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    zero, one = jnp.zeros((), x.dtype), jnp.ones((), x.dtype)
    end = loc + scale
    return jnp.select([x < loc, x > end, (x >= loc) & (x <= end)],
                      [zero, one, (x - loc) / scale])


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + scale q``; NaN outside ``[0, 1]``."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return jnp.where(bad_probability(q), np.nan, loc + scale * q)


__all__ = ["cdf", "logpdf", "pdf", "ppf"]
