"""``xjax.scipy.stats.multinomial``: the multinomial distribution of ``n`` draws over
categories of probabilities ``p`` (the last axis).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import multinomial
>>> multinomial.pmf(jnp.array([1, 1]), 2, jnp.array([0.5, 0.5]))
Array(0.5, dtype=float32)
"""

from xjax._src.scipy.stats.multinomial import (  # noqa: F401
    logpmf as logpmf, pmf as pmf,
)
from xjax._src.scipy.stats.multinomial import __all__ as __all__  # noqa: F401
