"""``xjax.scipy.stats.dirichlet``: the Dirichlet distribution on the simplex, with
concentrations ``alpha`` (one-dimensional, ``K`` entries).

``x`` holds the ``K`` coordinates along its first axis (or ``K - 1`` of them, the last being
``1 - sum``); further axes of ``x`` are batch axes.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import dirichlet
>>> dirichlet.pdf(jnp.array([0.2, 0.3, 0.5]), jnp.array([1., 1., 1.]))
Array(2., dtype=float32)
"""

from __future__ import annotations

from xjax._src import numpy as jnp
from xjax._src.numpy._promotion import promote_dtypes_inexact
from xjax._src.scipy.special import gammaln, xlogy
from xjax._src.scipy.stats._common import neg_inf_where

_SIMPLEX_TOLERANCE = 1e-6  # how far from 1 the coordinates may sum (JAX's tolerance)


def _on_simplex(x):
    return jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < _SIMPLEX_TOLERANCE)


def logpdf(x, alpha):
    """The log of the Dirichlet density; ``-inf`` off the open simplex.

    Raises
    ------
    ValueError
        If ``alpha`` is not one-dimensional, or ``x.shape[0]`` is neither ``K`` nor ``K - 1``.
    """
    x, alpha = promote_dtypes_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] == k - 1:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    log_beta = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    alpha = jnp.reshape(alpha, (k,) + (1,) * (x.ndim - 1))  # broadcast over batch axes
    log_density = jnp.sum(xlogy(alpha - 1, x), axis=0) - log_beta
    return neg_inf_where(~_on_simplex(x), log_density)


def pdf(x, alpha):
    """The Dirichlet density at ``x``."""
    return jnp.exp(logpdf(x, alpha))


__all__ = ["logpdf", "pdf"]
