"""Example first-order optimizers (mirrors ``jax.example_libraries.optimizers``).

The implementation and its full description: :mod:`xjax._src.example_libraries.optimizers`."""

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
