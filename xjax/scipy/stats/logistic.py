"""``xjax.scipy.stats.logistic``: the logistic distribution with location ``loc`` and scale
``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import logistic
>>> logistic.ppf(jnp.array([0.5]), loc=1.)
Array([1.], dtype=float32)
"""

from xjax._src.scipy.stats.logistic import (  # noqa: F401
    cdf as cdf, isf as isf, logpdf as logpdf, pdf as pdf, ppf as ppf, sf as sf,
)
from xjax._src.scipy.stats.logistic import __all__ as __all__  # noqa: F401
