"""``xjax.scipy.integrate``: integration of sampled data (JAX's ``jax.scipy.integrate``).

JAX 0.10.2 exposes only :func:`trapezoid` here (SciPy's ODE solvers and quadrature
routines are not part of its API).
"""

from xjax._src.scipy.integrate import (  # noqa: F401
    trapezoid as trapezoid,
)
from xjax._src.scipy.integrate import __all__ as __all__  # noqa: F401
