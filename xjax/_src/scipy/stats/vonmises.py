"""``xjax.scipy.stats.vonmises``: the von Mises distribution on the circle with
concentration ``kappa`` (centered at 0).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import vonmises
>>> vonmises.pdf(jnp.array([0.]), 1e-6)  # nearly uniform on the circle
Array([0.15915512], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.scipy.special import i0e
from xjax._src.scipy.stats._common import promote_args_inexact


def logpdf(x, kappa):
    """The log of the density ``exp(kappa cos x) / (2 pi I0(kappa))``, with the exponentially
    scaled Bessel function so that large ``kappa`` does not overflow; NaN unless
    ``kappa > 0``."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    log_density = kappa * (jnp.cos(x) - 1) - jnp.log(2 * math.pi * i0e(kappa))
    return jnp.where(kappa > 0, log_density, np.nan)


def pdf(x, kappa):
    """The von Mises density at ``x``."""
    return jnp.exp(logpdf(x, kappa))


__all__ = ["logpdf", "pdf"]
