"""The checkify interpreter: evaluate a jaxpr under the current trace while threading an
:class:`~xjax.experimental.checkify.Error` value through it.

``checkify(f)(*args)`` stages ``f`` (its arguments closed over, so they stay concrete when
they are) to a jaxpr, then evaluates it equation by equation under whatever trace is current
(eager, ``jit``'s staging, ``vmap``, ``jvp``): ``check`` equations are discharged into the
error, enabled automatic checks add functional updates beside the primitives they inspect,
and control-flow primitives are rebuilt with the error among their operands and results
(a carry of loops, an operand and result of branches and calls), so errors flow out of
loops and through ``jit``. Because the result is plain arrays, every transformation
composes with it.
"""

from __future__ import annotations

import numpy as np

import xjax._src.numpy as jnp
from xjax._src.higher_order.common import join_consts, split_list, trace_flat
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import ClosedJaxpr, DropVar, Literal
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.trace import Tracer
from xjax._src.experimental.checkify import (DivisionByZeroError, NaNError, OOBError, _user_frame,
                                             assert_func, init_error, update_error)
from xjax._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from xjax._src.lax.operands import to_operand

# Primitives whose outputs ``nan_checks`` inspects (JAX's list: those that can make a NaN
# from non-NaN operands).
NAN_PRIMITIVES = frozenset("""
    acos acosh add asin asinh atan2 atan atanh bessel_i0e bessel_i1e cbrt
    conv_general_dilated cos cosh cumlogsumexp cummax cummin cumprod cumsum digamma
    dot_general erf_inv erf erfc exp expm1 fft igamma_grad_a igamma igammac integer_pow
    lgamma custom_linear_solve log1p log logistic mul pad pow psum reduce reduce_prod
    reduce_sum reduce_window reduce_window_sum regularized_incomplete_beta rem rng_uniform
    rsqrt sin sinh sqrt sub tan tanh""".split())


def checkify_function(f, enabled, args, kwargs):
    """``checkify(f, errors=enabled)(*args, **kwargs)``. Array arguments are traced (as
    in JAX, where they become tracers: no Python control flow on their values); other
    arguments (Python scalars, strings, functions) stay static."""
    leaves, in_tree = tree_flatten((args, kwargs))
    traced = [isinstance(x, (Array, Tracer)) for x in leaves]
    box = []

    def flat_fun(*tracers):
        it = iter(tracers)
        call_args, call_kwargs = tree_unflatten(
            in_tree, [next(it) if t else x for x, t in zip(leaves, traced, strict=True)])
        out_leaves, out_tree = tree_flatten(f(*call_args, **call_kwargs))
        box.append(out_tree)
        return [to_operand(x) for x in out_leaves]

    dynamic = [x for x, t in zip(leaves, traced, strict=True) if t]
    closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in dynamic],
                            DebugInfo("checkify", f, [f"args[{i}]" for i in range(len(dynamic))]))
    error, outs = checkify_jaxpr(closed.jaxpr, closed.consts, enabled, init_error, *dynamic)
    return error, tree_unflatten(box[0], outs)


def checkify_jaxpr(jaxpr, consts, enabled, error, *args):
    """Evaluate ``jaxpr`` on ``args`` under the current trace, threading ``error``.
    Returns ``(error, outputs)``."""
    env = {}

    def read(atom):
        return atom.val if type(atom) is Literal else env[atom]

    env.update(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        invals = [read(a) for a in eqn.invars]
        rule = _RULES.get(prim.name)
        if rule is not None:
            error, outs = rule(prim, error, enabled, *invals, **eqn.params)
        else:
            outs = prim.bind(*invals, **eqn.params)
            if prim.name in NAN_PRIMITIVES:
                error = _check_nans(prim, error, enabled, outs)
        if not prim.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            if type(var) is not DropVar:
                env[var] = value
    return error, [read(v) for v in jaxpr.outvars]


# -- automatic checks ------------------------------------------------------------------------

def _check_nans(prim, error, enabled, outs):
    if NaNError not in enabled:
        return error
    outs = outs if prim.multiple_results else [outs]
    flags = [jnp.any(jnp.isnan(x)) for x in outs if jnp.issubdtype(get_aval(x).dtype,
                                                                    jnp.inexact)]
    if not flags:
        return error
    any_nan = flags[0] if len(flags) == 1 else jnp.any(jnp.stack(flags))
    return assert_func(error, any_nan, NaNError(_user_frame(), prim.name))


def _div_rule(prim, error, enabled, x, y):
    if DivisionByZeroError in enabled:
        error = assert_func(error, jnp.any(jnp.equal(y, 0)), DivisionByZeroError(_user_frame()))
    out = prim.bind(x, y)
    return _check_nans(prim, error, enabled, out), out


def _oob_payload(oob_mask, indices, dims_map, operand_shape):
    """``[index, axis, axis size]`` of the first out-of-bounds index (int32)."""
    flat = jnp.argmin(jnp.logical_not(oob_mask).ravel())
    position = jnp.unravel_index(flat, np.shape(oob_mask))[-1]
    axis = jnp.asarray(np.asarray(dims_map, np.int32))[position]
    size = jnp.asarray(np.asarray(operand_shape, np.int32))[axis]
    index = jnp.ravel(indices)[flat].astype(np.int32)
    return jnp.stack([index, axis, size.astype(np.int32)])


def _assert_in_bounds(error, prim, oob_mask, indices, dims_map, operand_shape):
    payload = _oob_payload(oob_mask, indices, dims_map, operand_shape)
    return assert_func(error, jnp.any(oob_mask),
                       OOBError(_user_frame(), prim.name, tuple(operand_shape), payload))


def _dynamic_slice_rule(prim, error, enabled, operand, *starts, slice_sizes):
    out = prim.bind(operand, *starts, slice_sizes=slice_sizes)
    if OOBError not in enabled or not starts:
        return error, out
    shape = get_aval(operand).shape
    starts = jnp.stack([jnp.asarray(s) for s in starts])
    mask = (starts < 0) | (starts + np.asarray(slice_sizes) > np.asarray(shape))
    return _assert_in_bounds(error, prim, mask, starts, range(len(shape)), shape), out


def _dynamic_update_slice_rule(prim, error, enabled, operand, update, *starts):
    out = prim.bind(operand, update, *starts)
    if OOBError not in enabled or not starts:
        return error, out
    shape = get_aval(operand).shape
    starts = jnp.stack([jnp.asarray(s) for s in starts])
    mask = (starts < 0) | (starts + np.asarray(get_aval(update).shape) > np.asarray(shape))
    return _assert_in_bounds(error, prim, mask, starts, range(len(shape)), shape), out


def _gather_rule(prim, error, enabled, operand, indices, **params):
    out = prim.bind(operand, indices, **params)
    if OOBError not in enabled:
        return error, out
    dnums, shape = params["dimension_numbers"], get_aval(operand).shape
    index_map = np.asarray(dnums.start_index_map, np.int64)
    upper = (np.asarray(shape)[index_map] - np.asarray(params["slice_sizes"])[index_map])
    upper = upper.astype(get_aval(indices).dtype)
    mask = (indices < 0) | (indices > upper)
    return _assert_in_bounds(error, prim, mask, indices, dnums.start_index_map, shape), out


def _scatter_rule(prim, error, enabled, operand, indices, updates, **params):
    out = prim.bind(operand, indices, updates, **params)
    if OOBError not in enabled:
        return error, out
    dnums, shape = params["dimension_numbers"], get_aval(operand).shape
    update_shape = get_aval(updates).shape
    window, sizes = iter(dnums.update_window_dims), []
    for axis in range(len(shape)):
        sizes.append(1 if axis in dnums.inserted_window_dims else update_shape[next(window)])
    dtype = get_aval(indices).dtype
    upper = np.array([shape[i] - sizes[i] for i in dnums.scatter_dims_to_operand_dims])
    upper = np.minimum(upper, np.iinfo(dtype).max).astype(dtype)
    mask = (indices < 0) | (indices > upper)
    error = _assert_in_bounds(error, prim, mask, indices, dnums.scatter_dims_to_operand_dims,
                              shape)
    return _check_nans(prim, error, enabled, out), out


# -- check itself ----------------------------------------------------------------------------

def _check_rule(prim, error, enabled, *leaves, err_tree, debug):
    """Discharge a ``check``: its error joins ``error`` for the enabled categories (the
    others are dropped, as in JAX)."""
    new = tree_unflatten(err_tree, list(leaves))
    for effect, pred in new._pred.items():
        if effect.error_type in enabled:
            error = update_error(error, pred, new._code[effect], {}, new._payload[effect],
                                 effect)
    return error._replace(_metadata={**new._metadata, **error._metadata}), []


# -- higher-order primitives -----------------------------------------------------------------

class _Checked:
    """A checked function traced to a jaxpr: the jaxpr (consts as leading inputs), the
    consts, and the output error's tree (whose metadata names the checks inside)."""

    __slots__ = ("jaxpr", "consts", "err_tree", "effects")

    def __init__(self, jaxpr, consts, err_tree, effects):
        self.jaxpr, self.consts, self.err_tree, self.effects = jaxpr, consts, err_tree, effects


def _trace_checked(checked_fun, error, avals, err_pos):
    """Trace ``checked_fun(error, *args) -> (error, outs)`` on ``avals`` with the error's
    leaves inserted at ``err_pos`` among the inputs, and first among the outputs."""
    err_leaves, err_tree = tree_flatten(error)
    n = len(err_leaves)
    box = []

    def flat(*args):
        before, leaves, after = split_list(args, [err_pos, n])
        out_err, outs = checked_fun(tree_unflatten(err_tree, leaves), *before, *after)
        out_leaves, out_tree = tree_flatten(out_err)
        box.append((out_tree, set(out_err._pred)))
        return [to_operand(x) for x in out_leaves] + list(outs)

    in_avals = list(avals[:err_pos]) + [get_aval(x) for x in err_leaves] + list(avals[err_pos:])
    closed, consts = trace_flat(flat, in_avals)
    return _Checked(closed, consts, *box[0])


def _with_all_effects(error, checked_fun, avals, err_pos):
    """``error`` with slots for every category ``checked_fun`` can set, so that its input
    and output errors have one structure."""
    effects = _trace_checked(checked_fun, error, avals, err_pos).effects
    return error._add_placeholder_effects(effects)


def _jaxpr_fun(closed, enabled):
    return lambda err, *args: checkify_jaxpr(closed.jaxpr, closed.consts, enabled, err, *args)


def _split_outputs(checked, outs, metadata=None):
    n = checked.err_tree.num_leaves
    error = tree_unflatten(checked.err_tree, list(outs[:n]))
    if metadata is not None:
        error = error._replace(_metadata=metadata)
    return error, list(outs[n:])


def _cond_rule(prim, error, enabled, index, *ops, branches):
    avals = [get_aval(x) for x in ops]
    funs = [_jaxpr_fun(b, enabled) for b in branches]
    effects = set()
    for fun in funs:
        effects |= _trace_checked(fun, error, avals, 0).effects
    error = error._add_placeholder_effects(effects)
    checked = [_trace_checked(fun, error, avals, 0) for fun in funs]
    jaxprs, consts = join_consts([(c.jaxpr.jaxpr, c.consts) for c in checked])
    outs = prim.bind(index, *consts, *tree_flatten(error)[0], *ops,
                     branches=tuple(ClosedJaxpr(j, []) for j in jaxprs))
    metadata = {}
    for c in checked:  # each branch names its own checks
        metadata.update(tree_unflatten(c.err_tree, [0] * c.err_tree.num_leaves)._metadata)
    return _split_outputs(checked[0], outs, metadata)


def _scan_rule(prim, error, enabled, *vals, jaxpr, num_consts, num_carry, **params):
    consts, carry, xs = split_list(vals, [num_consts, num_carry])
    avals = ([get_aval(x) for x in consts + carry]
             + [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in map(get_aval, xs)])
    fun = _jaxpr_fun(jaxpr, enabled)
    error = _with_all_effects(error, fun, avals, num_consts)
    checked = _trace_checked(fun, error, avals, num_consts)
    err_leaves = tree_flatten(error)[0]
    outs = prim.bind(*checked.consts, *consts, *err_leaves, *carry, *xs,
                     jaxpr=checked.jaxpr, num_consts=len(checked.consts) + num_consts,
                     num_carry=len(err_leaves) + num_carry, **params)
    return _split_outputs(checked, outs)


def _while_rule(prim, error, enabled, *vals, cond_jaxpr, body_jaxpr, cond_nconsts,
                body_nconsts):
    c_consts, b_consts, carry = split_list(vals, [cond_nconsts, body_nconsts])
    # the first evaluation of the predicate, before the loop
    error, _ = checkify_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, enabled, error,
                              *c_consts, *carry)

    def step(err, *args):  # the body, then the predicate on its result (checked by the body)
        cs, bs, old = split_list(args, [cond_nconsts, body_nconsts])
        err, new = checkify_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, enabled, err, *bs, *old)
        err, _ = checkify_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, enabled, err, *cs, *new)
        return err, new

    def predicate(err, *args):
        return err, checkify_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, enabled, err,
                                   *args)[1]

    step_avals = [get_aval(x) for x in vals]
    n_consts = cond_nconsts + body_nconsts
    error = _with_all_effects(error, step, step_avals, n_consts)
    body = _trace_checked(step, error, step_avals, n_consts)
    pred = _trace_checked(predicate, error, [get_aval(x) for x in c_consts + carry],
                          cond_nconsts)
    n_err = body.err_tree.num_leaves
    pred_jaxpr = pred.jaxpr.jaxpr  # drop the predicate's error outputs: the body has them
    pred_jaxpr = type(pred_jaxpr)([], pred_jaxpr.invars, pred_jaxpr.outvars[n_err:],
                                  pred_jaxpr.eqns, pred_jaxpr.debug_info)
    outs = prim.bind(*pred.consts, *c_consts, *body.consts, *c_consts, *b_consts,
                     *tree_flatten(error)[0], *carry,
                     cond_jaxpr=ClosedJaxpr(pred_jaxpr, []), body_jaxpr=body.jaxpr,
                     cond_nconsts=len(pred.consts) + cond_nconsts,
                     body_nconsts=len(body.consts) + n_consts)
    return _split_outputs(body, outs)


def _jit_rule(prim, error, enabled, *vals, jaxpr, **params):
    checked = _trace_checked(_jaxpr_fun(jaxpr, enabled), error,
                             [get_aval(x) for x in vals], 0)
    outs = prim.bind(*checked.consts, *tree_flatten(error)[0], *vals, jaxpr=checked.jaxpr,
                     **params)
    return _split_outputs(checked, outs)


def _inline_rule(jaxpr_param):
    """Evaluate a call's body in place (a checkpoint: the same values, recomputation lost)."""
    def rule(prim, error, enabled, *vals, **params):
        closed = params[jaxpr_param]
        return checkify_jaxpr(closed.jaxpr, closed.consts, enabled, error, *vals)
    return rule


def _custom_call_operands(error, enabled, vals, call_jaxpr, num_consts):
    """A custom-derivative call's body checked, the error's leaves entering as the first
    non-const operands (so the custom rule sees them among the primals)."""
    fun = _jaxpr_fun(call_jaxpr, enabled)
    avals = [get_aval(x) for x in vals]
    error = _with_all_effects(error, fun, avals, num_consts)
    checked = _trace_checked(fun, error, avals, num_consts)
    leaves = tree_flatten(error)[0]
    consts, args = split_list(vals, [num_consts])
    operands = [*checked.consts, *consts, *leaves, *args]
    return checked, leaves, operands, len(checked.consts) + num_consts


def _custom_jvp_rule(prim, error, enabled, *vals, call_jaxpr, num_consts, jvp,
                     symbolic_zeros):
    """The body is checked; the user's jvp rule is not (as in JAX): under differentiation
    the error passes through the call unchanged."""
    checked, leaves, operands, n_consts = _custom_call_operands(error, enabled, vals,
                                                                call_jaxpr, num_consts)
    n = len(leaves)

    def jvp_with_error(primals, tangents):
        outs, tangent_outs = jvp(list(primals[n:]), list(tangents[n:]))
        zeros = [Zero(tangent_aval(get_aval(e))) for e in primals[:n]]
        return [*primals[:n], *outs], [*zeros, *tangent_outs]

    outs = prim.bind(*operands, call_jaxpr=checked.jaxpr, num_consts=n_consts,
                     jvp=jvp_with_error, symbolic_zeros=symbolic_zeros)
    return _split_outputs(checked, outs)


def _custom_vjp_rule(prim, error, enabled, *vals, call_jaxpr, num_consts, fwd, bwd):
    """The body is checked; ``fwd`` and ``bwd`` are not (as in JAX)."""
    checked, leaves, operands, n_consts = _custom_call_operands(error, enabled, vals,
                                                                call_jaxpr, num_consts)
    n = len(leaves)

    def fwd_with_error(primals, perturbed):
        outs, residuals = fwd(list(primals[n:]), list(perturbed[n:]))
        return [*primals[:n], *outs], residuals

    def bwd_with_error(residuals, cts):
        return [None] * n + list(bwd(residuals, cts[n:]))

    outs = prim.bind(*operands, call_jaxpr=checked.jaxpr, num_consts=n_consts,
                     fwd=fwd_with_error, bwd=bwd_with_error)
    return _split_outputs(checked, outs)


_RULES = {
    "check": _check_rule,
    "div": _div_rule,
    "dynamic_slice": _dynamic_slice_rule,
    "dynamic_update_slice": _dynamic_update_slice_rule,
    "gather": _gather_rule,
    **{name: _scatter_rule for name in ("scatter", "scatter-add", "scatter-mul", "scatter-min",
                                        "scatter-max")},
    "cond": _cond_rule,
    "scan": _scan_rule,
    "while": _while_rule,
    "jit": _jit_rule,
    "checkpoint": _inline_rule("jaxpr"),
    "custom_jvp_call": _custom_jvp_rule,
    "custom_vjp_call": _custom_vjp_rule,
}
