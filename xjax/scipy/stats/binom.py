"""``xjax.scipy.stats.binom``: the binomial distribution (successes in ``n`` trials of
probability ``p``), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import binom
>>> binom.pmf(jnp.array([0., 1., 2.]), 2., 0.5)
Array([0.25, 0.5 , 0.25], dtype=float32)
"""

from xjax._src.scipy.stats.binom import (  # noqa: F401
    logpmf as logpmf, pmf as pmf,
)
from xjax._src.scipy.stats.binom import __all__ as __all__  # noqa: F401
