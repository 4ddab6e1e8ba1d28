"""Helpers shared by the distribution modules of :mod:`xjax.scipy.stats`."""

from __future__ import annotations

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.numpy._promotion import promote_args_inexact  # noqa: F401  (re-exported)
from xjax._src.numpy._promotion import scalar_array


def standardize(x, loc, scale):
    """``(x - loc) / scale``: the point in the unit (loc 0, scale 1) distribution."""
    return (x - loc) / scale


def clamp(low, y, high):
    """``y`` clipped to ``[low, high]`` by ``lax.clamp``, whose derivative is exactly zero
    outside (``jnp.clip``'s can carry a NaN from further down the chain)."""
    # weakly typed bounds of y's dtype: the result keeps y's dtype and weak type
    return lax.clamp(scalar_array(low, y.dtype, weak=True), y,
                     scalar_array(high, y.dtype, weak=True))


def nan_unless(valid, value):
    """``value`` where ``valid`` holds, NaN elsewhere (invalid parameters)."""
    return jnp.where(valid, value, np.nan)


def neg_inf_where(outside, log_value):
    """``-inf`` where ``outside`` holds (off the support), ``log_value`` elsewhere."""
    return jnp.where(outside, -np.inf, log_value)


def bad_probability(q):
    """True where ``q`` is NaN or outside ``[0, 1]`` (where quantile functions give NaN)."""
    return jnp.isnan(q) | (q < 0) | (q > 1)
