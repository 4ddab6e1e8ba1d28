"""``xjax.scipy.stats.dirichlet``: the Dirichlet distribution on the simplex, with
concentrations ``alpha`` (one-dimensional, ``K`` entries).

``x`` holds the ``K`` coordinates along its first axis (or ``K - 1`` of them, the last being
``1 - sum``); further axes of ``x`` are batch axes.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import dirichlet
>>> dirichlet.pdf(jnp.array([0.2, 0.3, 0.5]), jnp.array([1., 1., 1.]))
Array(2., dtype=float32)
"""

from xjax._src.scipy.stats.dirichlet import (  # noqa: F401
    logpdf as logpdf, pdf as pdf,
)
from xjax._src.scipy.stats.dirichlet import __all__ as __all__  # noqa: F401
