"""``xjax.scipy.cluster.vq``: vector quantization (JAX's ``jax.scipy.cluster.vq``).
"""

from xjax._src.scipy.cluster.vq import (  # noqa: F401
    vq as vq,
)
from xjax._src.scipy.cluster.vq import __all__ as __all__  # noqa: F401
