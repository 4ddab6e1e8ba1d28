"""``xjax.scipy.stats.norm``: the normal distribution with location ``loc`` and scale
``scale`` (SciPy's parametrization): densities, distribution functions and quantiles.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import norm
>>> norm.cdf(jnp.array([0.]))
Array([0.5], dtype=float32)
"""

from __future__ import annotations

import math


from xjax._src import lax, numpy as jnp
from xjax._src.numpy._promotion import promote_args_inexact
from xjax._src.scipy.special import log_ndtr, ndtr, ndtri

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _standardized(name, x, loc, scale):
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    """The log of the normal density at ``x``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import norm
    >>> norm.logpdf(jnp.array([0.]))
    Array([-0.9189385], dtype=float32)
    """
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """The normal density at ``x``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import norm
    >>> norm.pdf(jnp.array([0.]))
    Array([0.3989423], dtype=float32)
    """
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The normal cumulative distribution function ``P(X <= x)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import norm
    >>> norm.cdf(jnp.array([1.]), loc=1., scale=2.)
    Array([0.5], dtype=float32)
    """
    z, _ = _standardized("norm.cdf", x, loc, scale)
    return ndtr(z)


def logcdf(x, loc=0, scale=1):
    """The log of :func:`cdf`, accurate far into the lower tail."""
    z, _ = _standardized("norm.logcdf", x, loc, scale)
    return log_ndtr(z)


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf(x)``, accurate in the upper tail."""
    z, _ = _standardized("norm.sf", x, loc, scale)
    return ndtr(-z)


def logsf(x, loc=0, scale=1):
    """The log of :func:`sf`, accurate far into the upper tail."""
    z, _ = _standardized("norm.logsf", x, loc, scale)
    return log_ndtr(-z)


def ppf(q, loc=0, scale=1):
    """The quantile function (inverse of :func:`cdf`); NaN outside ``[0, 1]``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import norm
    >>> norm.ppf(jnp.array([0.5]), loc=3.)
    Array([3.], dtype=float32)
    """
    q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
    return ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse survival function: ``ppf(1 - q)``, accurate for small ``q``."""
    q, loc, scale = promote_args_inexact("norm.isf", q, loc, scale)
    return -ndtri(q) * scale + loc


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

