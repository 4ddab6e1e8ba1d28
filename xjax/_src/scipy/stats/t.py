"""``xjax.scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom, location
``loc`` and scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import t
>>> t.pdf(jnp.array([0.]), 1.)
Array([0.31830993], dtype=float32)
"""

from __future__ import annotations

import math

from xjax._src import numpy as jnp
from xjax._src.scipy.special import gammaln
from xjax._src.scipy.stats._common import promote_args_inexact, standardize


def logpdf(x, df, loc=0, scale=1):
    """The log of the t density
    ``Gamma((df+1)/2) / (Gamma(df/2) sqrt(pi df) scale) (1 + z**2/df)**(-(df+1)/2)``."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = standardize(x, loc, scale)
    half_df = df / 2
    half_df_plus_half = half_df + 0.5
    log_norm = (gammaln(half_df) - gammaln(half_df_plus_half)
                + 0.5 * jnp.log(scale * scale * math.pi * df))
    return -(log_norm + half_df_plus_half * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """The t density at ``x``."""
    return jnp.exp(logpdf(x, df, loc, scale))


__all__ = ["logpdf", "pdf"]
