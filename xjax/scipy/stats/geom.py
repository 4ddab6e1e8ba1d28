"""``xjax.scipy.stats.geom``: the geometric distribution (the trial of the first success,
success probability ``p``), shifted by ``loc``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import geom
>>> geom.pmf(jnp.array([1., 2.]), 0.5)
Array([0.5 , 0.25], dtype=float32)
"""

from xjax._src.scipy.stats.geom import (  # noqa: F401
    logpmf as logpmf, pmf as pmf,
)
from xjax._src.scipy.stats.geom import __all__ as __all__  # noqa: F401
