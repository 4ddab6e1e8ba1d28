"""``xjax.scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom, location
``loc`` and scale ``scale``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import t
>>> t.pdf(jnp.array([0.]), 1.)
Array([0.31830993], dtype=float32)
"""

from xjax._src.scipy.stats.t import (  # noqa: F401
    logpdf as logpdf, pdf as pdf,
)
from xjax._src.scipy.stats.t import __all__ as __all__  # noqa: F401
