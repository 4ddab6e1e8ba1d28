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

from __future__ import annotations

import operator
import weakref
from functools import partial

import numpy as np

from xjax._src import higher_order as control_flow
import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.transformations.jit import jit
from xjax._src.transformations.grad import vjp
from xjax._src.core import dtypes
from xjax._src.core.pytree import tree_flatten, tree_leaves, tree_map
from xjax._src.transformations.custom_derivatives import closure_convert, custom_vjp
from xjax._src.api.flatten_util import ravel_pytree
from xjax._src.transformations.vmap import vmap
from xjax._src.numpy._promotion import promote_dtypes_inexact
from xjax._src.transformations.config_contexts import default_matmul_precision

__all__ = ["odeint"]

_HIGHEST = lax.Precision.HIGHEST

# The Dormand-Prince tableau: nodes, stage coefficients, the 5th-order solution weights and
# the difference between the 5th- and 4th-order weights (the error estimate).
_NODES = np.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0])
_STAGE_COEFFS = np.array([
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]])
_SOLUTION_WEIGHTS = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_ERROR_WEIGHTS = np.array([
    35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
    -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1. / 60.])
# Weights giving the solution at the middle of a step (Shampine's dense output), halved.
_MIDPOINT_WEIGHTS = np.array([
    6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
    -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
    -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2])


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=jnp.inf, hmax=jnp.inf):
    """Integrate ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``, adaptively.

    Parameters
    ----------
    func : callable
        ``func(y, t, *args)``: the time derivative, a pytree of ``y0``'s structure.
    y0 : array or pytree of arrays
        The state at ``t[0]``.
    t : Array
        Floating-point times, strictly increasing, at which to report the solution.
    *args
        Extra arguments of ``func``: arrays, scalars, or pytrees of them. Derivatives flow
        to them (and to ``y0`` and ``t``) under ``grad``/``vjp``.
    rtol, atol : float, optional
        Relative and absolute local error tolerances (default 1.4e-8).
    mxstep : int, optional
        The most steps (accepted or rejected) taken to reach each time of ``t``.
    hmax : float, optional
        The largest step size.

    Returns
    -------
    pytree of Array
        ``y`` at each time of ``t``: ``y0``'s structure with a new leading axis of
        length ``len(t)``.

    Raises
    ------
    TypeError
        When a leaf of ``args`` is not an array or scalar, or ``t`` is not floating.

    Notes
    -----
    Forward-mode differentiation (``jvp``, ``jacfwd``) is not supported: the derivative
    is defined by a ``custom_vjp``, as in JAX.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax.experimental.ode import odeint
    >>> ts = jnp.linspace(0.0, 1.0, 3)
    >>> ys = odeint(lambda y, t: {"x": y["v"], "v": -y["x"]}, {"x": 1.0, "v": 0.0}, ts)
    >>> bool(jnp.allclose(ys["x"], jnp.cos(ts), atol=1e-6))
    True
    """
    for arg in tree_leaves(args):
        if not _is_array_or_scalar(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = _closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _is_array_or_scalar(x) -> bool:
    """Whether ``x`` can be an argument of a traced function (JAX's ``valid_jaxtype``)."""
    if isinstance(x, (str, bytes, type, np.dtype)):
        return False
    try:
        dtypes.dtype(x)
    except (TypeError, ValueError):
        return False
    return True


# Converted functions of closure-free calls, per function and argument types: reusing one
# lets the jit below find its compiled solver for the same `func` again.
_converted_by_func = weakref.WeakKeyDictionary()


def _closure_convert(func, y0, t0, *args):
    converted, consts = closure_convert(func, y0, t0, *args)
    if consts:  # closes over traced values: specific to this trace, never reused
        return converted, consts
    leaves, tree = tree_flatten((y0, t0, args))
    key = (tree, tuple((tuple(getattr(x, "shape", None) or np.shape(x)),
                        dtypes.dtype(x, canonicalize=True), dtypes.is_weakly_typed(x))
                       for x in leaves))
    try:
        per_types = _converted_by_func.setdefault(func, {})
    except TypeError:  # not weakly referenceable
        return converted, consts
    return per_types.setdefault(key, converted), consts


@partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_wrapper(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    # The solver works on one flat state vector; `func` sees and returns pytrees.
    with default_matmul_precision("highest"):
        y0_flat, unravel = ravel_pytree(y0)
        flat_func = _flat_state_func(func, unravel)
        ys_flat = _odeint(flat_func, rtol, atol, mxstep, hmax, y0_flat, ts, *args)
        return vmap(unravel)(ys_flat)


def _flat_state_func(func, unravel):
    def flat_func(y_flat, t, *args):
        return ravel_pytree(func(unravel(y_flat), t, *args))[0]
    return flat_func


def _dot(a, b):
    return jnp.dot(a, b, precision=_HIGHEST)


def _interp_fit_dopri(y0, y1, k, dt):
    # The quartic through the step's ends, slopes and midpoint value, in `polyval` order.
    mid_weights = jnp.asarray(_MIDPOINT_WEIGHTS, dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * _dot(mid_weights, k)
    return jnp.asarray(_fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def _fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    dt = dt.astype(y0.dtype)
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    d = dt * dy0
    e = y0
    return a, b, c, d, e


def _initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    # Hairer, Norsett and Wanner, Solving Ordinary Differential Equations I, sec. II.4.
    y0, f0 = promote_dtypes_inexact(y0, f0)
    dtype = y0.dtype
    scale = (atol + jnp.abs(y0) * rtol).astype(dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15),
                   jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return jnp.minimum(100. * h0, h1)


def _runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step: the new state and slope, the error estimate, and the seven
    stage slopes (rows of ``k``; the last is the slope at the new state)."""
    nodes = jnp.asarray(_NODES, dtype=dt.dtype)
    stage_coeffs = jnp.asarray(_STAGE_COEFFS, dtype=f0.dtype)
    dt_y = dt.astype(f0.dtype)

    def stage(i, k):
        y_i = y0 + dt_y * _dot(stage_coeffs[i - 1, :], k)
        return k.at[i, :].set(func(y_i, t0 + dt * nodes[i - 1]))

    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = control_flow.fori_loop(1, 7, stage, k)
    y1 = dt_y * _dot(jnp.asarray(_SOLUTION_WEIGHTS, f0.dtype), k) + y0
    y1_error = dt_y * _dot(jnp.asarray(_ERROR_WEIGHTS, f0.dtype), k)
    return y1, k[-1], y1_error, k


def _abs2(x):
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def _mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    err_tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(_abs2(err_ratio)))


def _optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2,
                       order=5.0):
    # Grow by at most `ifactor`; after an accepted step (ratio < 1) never shrink.
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor,
                         jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


@partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    with default_matmul_precision("highest"):
        return _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)


def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    func_ = lambda y, t: func(y, t, *args)

    def step_until(carry, target_t):
        # Step (rejecting steps whose error ratio exceeds 1) until the accepted steps pass
        # target_t, then interpolate within the last accepted step.
        def keep_going(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def attempt(state):
            i, y, f, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = _runge_kutta_step(func_, y, f, t, dt)
            error_ratio = _mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = _interp_fit_dopri(y, next_y, k, dt)
            next_dt = jnp.clip(_optimal_step_size(dt, error_ratio), min=0., max=hmax)
            accepted = [i + 1, next_y, next_f, t + dt, next_dt, t, new_interp_coeff]
            rejected = [i + 1, y, f, t, next_dt, last_t, interp_coeff]
            return [jnp.where(error_ratio <= 1., new, old)
                    for new, old in zip(accepted, rejected, strict=True)]

        _, *carry = control_flow.while_loop(keep_going, attempt, [0] + carry)
        _, _, t, _, last_t, interp_coeff = carry
        relative_time = (target_t - last_t) / (t - last_t)
        y_target = jnp.polyval(interp_coeff, relative_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = func_(y0, ts[0])
    dt = jnp.clip(_initial_step_size(func_, ts[0], y0, 4, rtol, atol, f0), min=0., max=hmax)
    interp_coeff = jnp.array([y0] * 5)
    init_carry = [y0, f0, ts[0], dt, ts[0], interp_coeff]
    _, ys = control_flow.scan(step_until, init_carry, ts[1:])
    return jnp.concatenate((y0[None], ys))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_rev(func, rtol, atol, mxstep, hmax, residuals, g):
    with default_matmul_precision("highest"):
        return _adjoint(func, rtol, atol, mxstep, hmax, residuals, g)


def _adjoint(func, rtol, atol, mxstep, hmax, residuals, g):
    ys, ts, args = residuals

    def aug_dynamics(augmented_state, t, *args):
        # The state, its adjoint, and the accumulating cotangents of t0 and args, run in
        # negated time (the integration below goes from -ts[i] up to -ts[i-1]).
        y, y_bar, *_ = augmented_state
        y_dot, vjp_fun = vjp(func, y, -t, *args)
        return (-y_dot, *vjp_fun(y_bar))

    def back_one_interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        # Moving the measurement time ts[i] moves the output by func there; time is real.
        t_bar = _dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar, args_bar), jnp.array([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(operator.itemgetter(1), (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init_carry = (g[-1], 0., tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = control_flow.scan(
        back_one_interval, init_carry, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)
