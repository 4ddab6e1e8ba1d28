"""``xjax.scipy.stats.betabinom``: the beta-binomial distribution (``n`` trials whose success
probability is beta(``a``, ``b``) distributed), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import betabinom
>>> betabinom.pmf(jnp.array([0., 1., 2.]), 2., 1., 1.)
Array([0.33333334, 0.33333334, 0.33333334], dtype=float32)
"""

from xjax._src.scipy.stats.betabinom import (  # noqa: F401
    logpmf as logpmf, pmf as pmf,
)
from xjax._src.scipy.stats.betabinom import __all__ as __all__  # noqa: F401
