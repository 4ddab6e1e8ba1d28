"""``xjax.scipy.optimize``: unconstrained minimization (JAX's ``jax.scipy.optimize``).

BFGS and JAX's experimental L-BFGS on a strong-Wolfe line search, each one
``lax.while_loop``: they run eagerly, under ``jit`` and under ``vmap``.
"""

from xjax._src.scipy.optimize._minimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
