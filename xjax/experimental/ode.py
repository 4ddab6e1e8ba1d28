"""Adaptive Dormand-Prince ODE integration (mirrors ``jax.experimental.ode``).

:func:`odeint` integrates ``dy/dt = func(y, t, *args)`` with the Dormand-Prince 5(4)
embedded Runge-Kutta pair (Dormand and Prince, 1980; Shampine, 1986,
https://doi.org/10.1090/S0025-5718-1986-0815836-3), adapting the step to a local error
tolerance and reading the solution at the requested times off a 4th-order interpolant of
each step. Reverse-mode derivatives solve the adjoint system backwards in time (Chen et al.,
"Neural Ordinary Differential Equations", 2018, appendix C), so they cost one more
integration rather than the memory of differentiating through every solver step.

Examples
--------
>>> import xjax.numpy as jnp
>>> from xjax.experimental.ode import odeint
>>> ys = odeint(lambda y, t, k: -k * y, 1.0, jnp.array([0.0, 1.0]), 2.0)
>>> bool(jnp.allclose(ys[1], jnp.exp(-2.0)))
True
"""

from xjax._src.experimental.ode import (  # noqa: F401
    odeint as odeint,
)
from xjax._src.experimental.ode import __all__ as __all__  # noqa: F401
