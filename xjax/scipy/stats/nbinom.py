"""``xjax.scipy.stats.nbinom``: the negative binomial distribution (failures before the
``n``-th success, success probability ``p``), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import nbinom
>>> nbinom.pmf(jnp.array([0., 1.]), 1., 0.5)
Array([0.5 , 0.25], dtype=float32)
"""

from xjax._src.scipy.stats.nbinom import (  # noqa: F401
    logpmf as logpmf, pmf as pmf,
)
from xjax._src.scipy.stats.nbinom import __all__ as __all__  # noqa: F401
