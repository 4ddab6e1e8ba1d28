"""Example first-order optimizers (mirrors ``jax.example_libraries.optimizers``).

Like JAX's module this is a teaching example; a full optimizer library is Optax. Each
optimizer is an ``(init_fun, update_fun, get_params)`` triple:

- ``init_fun(params)`` takes a pytree of parameter arrays and returns the optimizer state
  (an :class:`OptimizerState`), holding the parameters and any moments.
- ``update_fun(step, grads, opt_state)`` takes the integer step index, a gradient pytree of
  the parameters' structure and a state, and returns the next state.
- ``get_params(opt_state)`` returns the parameters: ``get_params(init_fun(p))`` is ``p``.

The state is a pytree of arrays, so ``update_fun`` can be jitted. Step sizes are a scalar or
a schedule (a function of the step index, see :func:`exponential_decay` and friends).

Examples
--------
>>> import xjax as jax
>>> import xjax.numpy as jnp
>>> from xjax.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.sgd(0.1)
>>> state = opt_init({"w": jnp.array([1.0, -2.0])})
>>> grads = jax.grad(lambda p: jnp.sum(p["w"] ** 2))(get_params(state))
>>> get_params(opt_update(0, grads, state))["w"]
Array([ 0.8, -1.6], dtype=float32)
"""

from xjax._src.example_libraries.optimizers import (  # noqa: F401
    Any as Any, Array as Array, Callable as Callable, InitFn as InitFn, JoinPoint as JoinPoint,
    NamedTuple as NamedTuple, Optimizer as Optimizer, OptimizerState as OptimizerState,
    Params as Params, ParamsFn as ParamsFn, Schedule as Schedule, State as State, Step as Step,
    UpdateFn as UpdateFn, Updates as Updates, adagrad as adagrad, adam as adam,
    adamax as adamax, annotations as annotations, clip_grads as clip_grads,
    constant as constant, exponential_decay as exponential_decay,
    inverse_time_decay as inverse_time_decay, l2_norm as l2_norm,
    make_schedule as make_schedule, map as map, momentum as momentum, namedtuple as namedtuple,
    nesterov as nesterov, optimizer as optimizer, pack_optimizer_state as pack_optimizer_state,
    partial as partial, piecewise_constant as piecewise_constant,
    polynomial_decay as polynomial_decay, rmsprop as rmsprop,
    rmsprop_momentum as rmsprop_momentum, safe_zip as safe_zip, sgd as sgd, sm3 as sm3,
    unpack_optimizer_state as unpack_optimizer_state, unzip2 as unzip2, zip as zip,
)
from xjax._src.transformations.api_util import (  # noqa: F401
    safe_map as safe_map,
)
import xjax as jax  # noqa: F401
import xjax.numpy as jnp  # noqa: F401
import functools as functools  # noqa: F401  (a name JAX's module shows too)
