"""``xjax.scipy.sparse``: JAX's ``jax.scipy.sparse`` (its iterative solvers)."""

from xjax._src.scipy.sparse import linalg  # noqa: F401
