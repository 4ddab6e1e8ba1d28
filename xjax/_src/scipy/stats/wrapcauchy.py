"""``xjax.scipy.stats.wrapcauchy``: the wrapped Cauchy distribution on ``[0, 2 pi]`` with
shape ``c`` (``0 < c < 1``).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import wrapcauchy
>>> wrapcauchy.pdf(jnp.array([1.]), 0.5)
Array([0.16819303], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.stats._common import neg_inf_where, promote_args_inexact


def logpdf(x, c):
    """The log of the density ``(1 - c**2) / (2 pi (1 + c**2 - 2 c cos x))``; ``-inf`` off
    ``[0, 2 pi]``, NaN unless ``0 < c < 1``."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    log_density = (jnp.log(1 - c * c) - math.log(2 * math.pi)
                   - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    # NaN x is off the support too (-inf, as in JAX)
    log_density = neg_inf_where(~((x >= 0) & (x <= 2 * math.pi)), log_density)
    return jnp.where((c > 0) & (c < 1), log_density, np.nan)


def pdf(x, c):
    """The wrapped Cauchy density at ``x``."""
    return jnp.exp(logpdf(x, c))


__all__ = ["logpdf", "pdf"]
