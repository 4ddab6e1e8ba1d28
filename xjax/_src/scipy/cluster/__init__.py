"""``xjax.scipy.cluster``: SciPy's clustering on xjax arrays (JAX's ``jax.scipy.cluster``).
Only ``vq.vq`` exists, as in JAX."""

from xjax._src.scipy.cluster import vq  # noqa: F401

__all__ = ["vq"]
