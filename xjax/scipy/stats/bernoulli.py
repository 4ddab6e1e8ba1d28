"""``xjax.scipy.stats.bernoulli``: the Bernoulli distribution, 1 with probability ``p`` and 0
otherwise (shifted by ``loc`` in :func:`logpmf` and :func:`pmf`).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import bernoulli
>>> bernoulli.pmf(jnp.array([0., 1.]), 0.25)
Array([0.75, 0.25], dtype=float32)
"""

from xjax._src.scipy.stats.bernoulli import (  # noqa: F401
    cdf as cdf, logpmf as logpmf, pmf as pmf, ppf as ppf,
)
from xjax._src.scipy.stats.bernoulli import __all__ as __all__  # noqa: F401
