"""``xjax.scipy.cluster``: SciPy's clustering on xjax arrays (JAX's ``jax.scipy.cluster``).
Only ``vq.vq`` exists, as in JAX.
"""

from xjax.scipy.cluster import vq as vq  # noqa: F401
from xjax._src.scipy.cluster import __all__ as __all__  # noqa: F401
