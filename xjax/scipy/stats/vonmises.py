"""``xjax.scipy.stats.vonmises``: the von Mises distribution on the circle with
concentration ``kappa`` (centered at 0).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.stats import vonmises
>>> vonmises.pdf(jnp.array([0.]), 1e-6)  # nearly uniform on the circle
Array([0.15915512], dtype=float32)
"""

from xjax._src.scipy.stats.vonmises import (  # noqa: F401
    logpdf as logpdf, pdf as pdf,
)
from xjax._src.scipy.stats.vonmises import __all__ as __all__  # noqa: F401
