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

from __future__ import annotations

import builtins
import functools
from collections import namedtuple
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from xjax._src.api import tree as jax_tree
from xjax._src.core import tree_util
import xjax._src.numpy as jnp
from xjax._src.transformations.api_util import safe_map


def safe_zip(*iterables) -> list:
    """``list(zip(*iterables))``, raising ValueError when the lengths differ."""
    return list(builtins.zip(*iterables, strict=True))


def unzip2(pairs) -> tuple[tuple, tuple]:
    """Split an iterable of pairs into a tuple of firsts and a tuple of seconds."""
    firsts, seconds = [], []
    for first, second in pairs:
        firsts.append(first)
        seconds.append(second)
    return tuple(firsts), tuple(seconds)


map = safe_map
zip = safe_zip

# The state of a pytree of parameters is kept two levels deep: the parameters' own
# structure ("outer" treedef) and, per parameter array, the structure of that array's
# state (an "inner" treedef, e.g. (x, m, v) for Adam). Only the flat lists of arrays are
# pytree children; both treedefs are static auxiliary data.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda treedefs, children: OptimizerState(children[0], treedefs[0], treedefs[1]))

Array = Any
Params = Any  # a pytree of arrays
State = Any  # one parameter array's optimizer state
Updates = Params  # gradients share the parameters' structure
InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    """An ``(init_fn, update_fn, params_fn)`` triple."""
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def optimizer(opt_maker: Callable[..., tuple]) -> Callable[..., Optimizer]:
    """Decorator: turn an optimizer written for one array into one for pytrees of arrays.

    Parameters
    ----------
    opt_maker : callable
        Returns an ``(init, update, get_params)`` triple acting on a single array:
        ``init(x0) -> state`` (any pytree of arrays), ``update(i, g, state) -> state`` of the
        same structure, ``get_params(state) -> x``.

    Returns
    -------
    callable
        Takes ``opt_maker``'s arguments and returns an :class:`Optimizer` whose functions
        act on every leaf of a parameter pytree and keep the state as an
        :class:`OptimizerState`.
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_leaves, tree_def = jax_tree.flatten(x0_tree)
            leaf_states = [init(x0) for x0 in x0_leaves]
            flat_states, subtree_defs = unzip2(map(jax_tree.flatten, leaf_states))
            return OptimizerState(flat_states, tree_def, subtree_defs)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            flat_states, tree_def, subtree_defs = opt_state
            grad_leaves, grad_def = jax_tree.flatten(grad_tree)
            if grad_def != tree_def:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    "the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree_def} and grad tree {grad_def}.")
            leaf_states = map(jax_tree.unflatten, subtree_defs, flat_states)
            new_states = map(partial(update, i), grad_leaves, leaf_states)
            new_flat_states, new_subtree_defs = unzip2(map(jax_tree.flatten, new_states))
            for before, after in zip(subtree_defs, new_subtree_defs):
                if after != before:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {before} and output {after}.")
            return OptimizerState(new_flat_states, tree_def, subtree_defs)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            flat_states, tree_def, subtree_defs = opt_state
            leaf_states = map(jax_tree.unflatten, subtree_defs, flat_states)
            return jax_tree.unflatten(tree_def, map(get_params, leaf_states))

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# --------------------------------------------------------------------------------------------
# optimizers (each update rule is written per array; `optimizer` lifts it to pytrees)


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x <- x - step_size(i) * g``.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple.
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """SGD with (heavy-ball) momentum: ``v <- mass * v + g; x <- x - step_size(i) * v``.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    mass : float
        The momentum coefficient.
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, _first


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """SGD with Nesterov momentum: ``v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)``.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    mass : float
        The momentum coefficient.
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi, Hazan and Singer, 2011) with momentum on the scaled gradient.

    The sum of squared gradients ``G`` grows each step; the step follows
    ``m <- (1 - momentum) * g / sqrt(G) + momentum * m`` (0 where ``G`` is 0).

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    momentum : float, optional
        The momentum coefficient (default 0.9).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: divide the step by a running root mean square of the gradients.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    gamma : float, optional
        Decay of the running mean of squared gradients (default 0.9).
    eps : float, optional
        Added under the square root (default 1e-8).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    gamma : float, optional
        Decay of the running mean of squared gradients (default 0.9).
    eps : float, optional
        Added under the square root (default 1e-8).
    momentum : float, optional
        The momentum coefficient (default 0.9).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2015) with bias-corrected moment estimates.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    b1, b2 : float, optional
        Decay rates of the first and second moment estimates (defaults 0.9, 0.999).
    eps : float, optional
        Added to the root of the second moment (default 1e-8).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        # The bias corrections use b1, b2 in the moments' dtype (not float64) to the power
        # of the 1-based step count.
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm in place of the second moment.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    b1, b2 : float, optional
        Decay rates of the first moment and of the infinity norm (defaults 0.9, 0.999).
    eps : float, optional
        Added to the infinity norm (default 1e-8).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        corrected_step = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - corrected_step * m / (u + eps), m, u

    return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., 2019): Adagrad with one accumulator per row, column, ... of each
    parameter instead of one per element, plus momentum.

    Parameters
    ----------
    step_size : float or callable
        A positive scalar, or a schedule mapping the step index to one.
    momentum : float, optional
        The momentum coefficient (default 0.9).
    """
    step_size = make_schedule(step_size)

    def along_axis(ndim, v, axis):
        # View the 1-D accumulator `v` as varying along `axis` of an ndim-array (a scalar
        # parameter's gradient has ndim 0: then `v` itself, of shape (1,)).
        index = [None] * ndim
        index[axis:axis + 1] = [slice(None)]
        return v[tuple(index)]

    def init(x0):
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, x_shape

    def update(i, g, state):
        x, m, accumulators, x_shape = state
        views = [along_axis(g.ndim, v, axis) for axis, v in enumerate(accumulators)]
        accum = functools.reduce(jnp.minimum, views) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        others = lambda axis: tuple(a for a in range(x.ndim) if a != axis)
        accumulators = [accum.max(others(axis)) for axis in range(x.ndim)]
        return x, m, accumulators, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


def _first(state):
    return state[0]


# --------------------------------------------------------------------------------------------
# step-size schedules


def constant(step_size) -> Schedule:
    """The schedule that is ``step_size`` at every step."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)``; with ``staircase`` the ratio
    ``i / decay_steps`` is floored."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` down to ``final_step_size`` at step ``decay_steps`` along
    ``(1 - i / decay_steps) ** power``, then constant."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """``values[k]`` where ``k`` counts the boundaries strictly below the step index.

    Raises
    ------
    ValueError
        Unless ``boundaries`` and ``values`` are sequences with one more value than
        boundaries.
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A callable is a schedule already; a scalar becomes :func:`constant`; anything else
    raises TypeError (naming its type)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --------------------------------------------------------------------------------------------
# utilities


def l2_norm(tree):
    """The l2 norm of all the arrays of a pytree together (useful for weight decay)."""
    leaves = jax_tree.leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale a gradient pytree down so that its :func:`l2_norm` is at most ``max_norm``."""
    norm = l2_norm(grad_tree)
    clip = lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm))
    return jax_tree.map(clip, grad_tree)


# --------------------------------------------------------------------------------------------
# serialization


class JoinPoint:
    """Marks where an inner (per-parameter state) pytree hangs from the outer one."""

    def __init__(self, subtree):
        self.subtree = subtree

    # Iterable like a container, so that serializers walking arrays descend into it.
    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An :class:`OptimizerState` as one pytree of the parameters' structure whose leaves
    are :class:`JoinPoint` s holding each parameter's state (for serialization)."""
    flat_states, tree_def, subtree_defs = opt_state
    leaf_states = map(jax_tree.unflatten, subtree_defs, flat_states)
    return jax_tree.unflatten(tree_def, [JoinPoint(state) for state in leaf_states])


def pack_optimizer_state(marked_pytree):
    """The inverse of :func:`unpack_optimizer_state`: an :class:`OptimizerState` from a
    pytree whose leaves are :class:`JoinPoint` s."""
    join_points, tree_def = jax_tree.flatten(marked_pytree)
    assert all(isinstance(point, JoinPoint) for point in join_points)
    flat_states, subtree_defs = unzip2(jax_tree.flatten(point.subtree) for point in join_points)
    return OptimizerState(flat_states, tree_def, subtree_defs)
