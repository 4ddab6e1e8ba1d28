"""``xjax.scipy``: SciPy's API on xjax arrays (JAX's ``jax.scipy``)."""

from xjax.scipy import linalg  # noqa: F401
from xjax.scipy import special, stats  # noqa: F401
from xjax.scipy import sparse  # noqa: F401
