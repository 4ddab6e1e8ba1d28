"""``xjax.scipy.stats.wrapcauchy``: the wrapped Cauchy distribution on ``[0, 2 pi]`` with
shape ``c`` (``0 < c < 1``).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import wrapcauchy
>>> wrapcauchy.pdf(jnp.array([1.]), 0.5)
Array([0.16819303], dtype=float32)
"""

from xjax._src.scipy.stats.wrapcauchy import (  # noqa: F401
    logpdf as logpdf, pdf as pdf,
)
from xjax._src.scipy.stats.wrapcauchy import __all__ as __all__  # noqa: F401
