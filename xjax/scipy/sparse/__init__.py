"""``xjax.scipy.sparse``: JAX's ``jax.scipy.sparse`` (its iterative solvers).
"""

from xjax.scipy.sparse import linalg as linalg  # noqa: F401
