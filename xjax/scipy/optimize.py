"""``xjax.scipy.optimize``: unconstrained minimization (JAX's ``jax.scipy.optimize``).

BFGS and JAX's experimental L-BFGS on a strong-Wolfe line search, each one
``lax.while_loop``: they run eagerly, under ``jit`` and under ``vmap``.
"""

from xjax._src.scipy.optimize._minimize import (  # noqa: F401
    OptimizeResults as OptimizeResults, minimize as minimize,
)
from xjax._src.scipy.optimize import __all__ as __all__  # noqa: F401
