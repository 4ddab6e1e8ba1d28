"""``xjax.scipy.stats.multivariate_normal``: the normal distribution in ``n`` dimensions with
mean ``mean`` (last axis) and covariance ``cov`` (a matrix, or a scalar for ``cov * I``).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import multivariate_normal
>>> multivariate_normal.logpdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2))
Array(-1.837877, dtype=float32)
"""

from __future__ import annotations

import math
from functools import partial


from xjax._src.higher_order.linalg import api as lax_linalg
from xjax._src import numpy as jnp
from xjax._src.numpy._promotion import promote_dtypes_inexact

_LOG_2PI = math.log(2 * math.pi)

# solve L y = b for a lower-triangular L, batched over leading axes
_forward_substitute = jnp.vectorize(
    partial(lax_linalg.triangular_solve, lower=True, transpose_a=True),
    signature="(n,n),(n)->(n)")


def logpdf(x, mean, cov, allow_singular=None):
    """The log of the multivariate normal density at ``x`` (points along the last axis).

    A scalar ``mean`` makes a univariate normal with variance ``cov``; a scalar ``cov`` with a
    vector ``mean`` is the isotropic covariance ``cov * I``; otherwise ``cov`` is a (batch of)
    ``(n, n)`` positive-definite matrix, factored by Cholesky.

    Raises
    ------
    NotImplementedError
        If ``allow_singular`` is given.
    ValueError
        If ``cov`` is not ``(..., n, n)`` for a mean with ``n`` entries.
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if mean.ndim == 0:
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (_LOG_2PI + jnp.log(cov))
    n = mean.shape[-1]
    if cov.ndim == 0:
        centered = x - mean
        sq_norm = jnp.einsum("...i,...i->...", centered, centered)
        return -0.5 * sq_norm / cov - n / 2 * (_LOG_2PI + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax_linalg.cholesky(cov)
    whitened = _forward_substitute(chol, x - mean)
    log_det_half = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return (-0.5 * jnp.einsum("...i,...i->...", whitened, whitened) - n / 2 * _LOG_2PI
            - log_det_half)


def pdf(x, mean, cov):
    """The multivariate normal density at ``x``."""
    return jnp.exp(logpdf(x, mean, cov))


__all__ = ["logpdf", "pdf"]
