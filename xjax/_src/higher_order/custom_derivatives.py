"""Primitives behind ``custom_jvp``, ``custom_vjp`` and ``checkpoint``.

- ``custom_jvp_call`` holds the primal function's jaxpr and the user's jvp function (a
  hashable Python callable param). Evaluated or staged, it is the primal; under a JVP trace
  its rule calls the user's jvp.
- ``custom_vjp_call`` holds the primal jaxpr, ``fwd`` and ``bwd``. Its jvp rule runs ``fwd``
  and returns as tangent a ``custom_lin`` application: linear in the tangents, staged by
  linearize, and transposed by calling ``bwd``. Forward mode alone reaches ``custom_lin``'s
  impl, which raises JAX's error.
- ``checkpoint`` (remat) holds a jaxpr; its partial evaluation keeps only the inputs as
  residuals, so the backward pass recomputes the forward intermediates.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.ad_util import UndefinedPrimal, Zero, get_aval, tangent_aval
from xjax._src.core.array import Array
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from xjax._src.core.primitive import NONLINEAR, Absent
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.trace import Tracer, set_current_trace
from xjax._src.higher_order.jit_call import _derived, _jit_partial_eval, _trace_flat
from xjax._src.higher_order.primitive import ALL_UNKNOWN, HigherOrderPrimitive
from xjax._src.interpreters.batching import batch_flat
from xjax._src.interpreters.jvp import jvp_flat
from xjax._src.interpreters.partial_eval import (
    dce_eqns,
    everything_saveable,
    nothing_saveable,
    partial_eval_jaxpr,
    partial_eval_jaxpr_policy,
)
from xjax._src.interpreters.staging import StagingTrace
from xjax._src.interpreters.transpose import backward_pass, is_undefined
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, not_mapped
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.lowering.stablehlo import aval_type


def _call_abstract_eval(*avals, call_jaxpr: ClosedJaxpr, num_consts, **_):
    return call_jaxpr.out_avals


def _call_impl(*values, call_jaxpr: ClosedJaxpr, num_consts, **_):
    return eval_jaxpr(call_jaxpr.jaxpr, [], *values)


def _call_lower(ctx, *operands, call_jaxpr: ClosedJaxpr, num_consts, **_):
    return lower_jaxpr_body(ctx.builder, call_jaxpr.jaxpr, [], list(operands))


def _check_const_tangents(tangents, num_consts, kind):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise TypeError(f"Detected differentiation of a {kind} function with respect to a "
                        f"closed-over value. That isn't supported because the custom rule "
                        f"only specifies how to differentiate the {kind} function with "
                        "respect to explicit input parameters. Pass the value as an "
                        "argument instead of closing over it.")


def _inline_batch(trace, vals, dims, call_jaxpr):
    """Batch by evaluating the primal body under the vmap (drops the custom rule)."""
    return batch_flat(lambda *xs: eval_jaxpr(call_jaxpr.jaxpr, [], *xs), vals, dims,
                      trace.axis_name, trace.axis_size)


# -- custom_jvp --

def _custom_jvp_jvp(primals, tangents, *, call_jaxpr, num_consts, jvp, symbolic_zeros):
    _check_const_tangents(tangents, num_consts, "custom_jvp")
    return apply_custom_jvp(primals[num_consts:], tangents[num_consts:], jvp, symbolic_zeros)


def apply_custom_jvp(primals, tangents, jvp, symbolic_zeros):
    """A custom_jvp call's outputs and tangents from its flat rule ``jvp``, which sees zero
    arrays for ``Zero`` tangents unless ``symbolic_zeros``. ``custom_jvp`` calls it directly
    under a JVP trace (without tracing the primal function, as JAX)."""
    if not symbolic_zeros:
        tangents = [instantiate(t) for t in tangents]
    primal_out, tangent_out = jvp(list(primals), list(tangents))
    return list(primal_out), list(tangent_out)


def _batched_body(kind, trace, call_jaxpr, consts, args, num_consts, in_batched):
    """The primal body vmapped over the leading axis of the ``args`` flagged in
    ``in_batched`` (consts and the other args unbatched), as a closed jaxpr and the extra
    leading operands it takes."""
    size, name = trace.axis_size, trace.axis_name
    in_dims = [0 if b else not_mapped for b in in_batched]

    def make():
        def batched(*xs):
            cs, ys = xs[:num_consts], xs[num_consts:]
            outs, out_dims = batch_flat(
                lambda *zs: eval_jaxpr(call_jaxpr.jaxpr, [], *cs, *zs), ys, in_dims, name,
                size)
            return [bdim_at_front(o, d, size) for o, d in zip(outs, out_dims, strict=True)]
        return _trace_flat(batched, [get_aval(v) for v in list(consts) + args], kind)

    return _derived(kind + "_batch", call_jaxpr, (name, size, num_consts, in_batched), make)


def _batch_custom_call(kind, primitive, trace, vals, dims, call_jaxpr, num_consts, params,
                       batched_params, keep_unbatched=False):
    """Batch a custom-derivative call keeping its rule: rebind with the vmapped body and
    the params ``batched_params(axis_name, axis_size, in_batched)`` gives (rules vmapped
    over the operands flagged in ``in_batched``, whose batch axes are moved first). With
    ``keep_unbatched`` unbatched operands stay so (a predicate the body branches on stays a
    ``cond``, as in JAX); otherwise every operand is batched. Batched closed-over values
    inline the body."""
    if all(d is not_mapped for d in dims):
        outs = primitive.bind(*vals, call_jaxpr=call_jaxpr, num_consts=num_consts, **params)
        return outs, [not_mapped] * len(outs)
    if any(d is not not_mapped for d in dims[:num_consts]):
        return _inline_batch(trace, vals, dims, call_jaxpr)
    size = trace.axis_size
    consts = list(vals[:num_consts])
    in_batched = tuple(not keep_unbatched or d is not not_mapped for d in dims[num_consts:])
    args = [bdim_at_front(v, d, size) if b else v
            for v, d, b in zip(vals[num_consts:], dims[num_consts:], in_batched, strict=True)]
    closed, extra = _batched_body(kind, trace, call_jaxpr, consts, args, num_consts,
                                  in_batched)
    outs = primitive.bind(*extra, *consts, *args, call_jaxpr=closed,
                          num_consts=len(extra) + num_consts,
                          **batched_params(trace.axis_name, size, in_batched))
    return outs, [0] * len(outs)


def _vmapped(fun, name, size, in_axes=0):
    """``fun`` vmapped over the leading axis of its arguments (those ``in_axes`` maps;
    unbatched outputs broadcast)."""
    from xjax._src.transformations.vmap import vmap  # a higher layer
    return vmap(fun, in_axes=in_axes, axis_name=name, axis_size=size)


def _unbatched(zero):
    """The per-example zero of a ``Zero`` batched along its leading axis."""
    return Zero(zero.aval.update(shape=zero.aval.shape[1:]))


def _batched(zero, size):
    """A per-example ``Zero`` batched along a new leading axis of ``size`` (None stays)."""
    if zero is None:
        return None
    return Zero(zero.aval.update(shape=(size, *zero.aval.shape)))


def _custom_jvp_batch(trace, vals, dims, *, call_jaxpr, num_consts, jvp, symbolic_zeros):
    def batched_params(name, size, in_batched):
        return {"jvp": _batched_jvp(jvp, name, size, in_batched),
                "symbolic_zeros": symbolic_zeros}

    return _batch_custom_call("custom_jvp", custom_jvp_call_p, trace, vals, dims, call_jaxpr,
                              num_consts, {"jvp": jvp, "symbolic_zeros": symbolic_zeros},
                              batched_params, keep_unbatched=True)


def _batched_jvp(jvp, name, size, in_batched):
    """``jvp`` vmapped over the primals flagged in ``in_batched`` and their non-zero
    tangents (batched first; a tangent is batched as its primal is). Zero tangents stay
    symbolic: the rule sees per-example ``Zero``s, and its ``Zero`` outputs leave as
    batched ``Zero``s."""
    def batched_jvp(primals, tangents):
        n = len(primals)
        out_zero = []

        def per_example(*args):
            nonzero = iter(args[n:])
            ts = [(_unbatched(t) if b else t) if type(t) is Zero else next(nonzero)
                  for t, b in zip(tangents, in_batched, strict=True)]
            outs, t_outs = jvp(list(args[:n]), ts)
            out_zero[:] = [type(t) is Zero for t in t_outs]
            return list(outs), [t for t in t_outs if type(t) is not Zero]

        axes = [0 if b else None for b in in_batched]
        tangent_axes = [a for a, t in zip(axes, tangents, strict=True) if type(t) is not Zero]
        outs, nz_t_outs = _vmapped(per_example, name, size, tuple(axes + tangent_axes))(
            *primals, *[t for t in tangents if type(t) is not Zero])
        nonzero_out = iter(nz_t_outs)
        return outs, [Zero(tangent_aval(get_aval(o))) if z else next(nonzero_out)
                      for o, z in zip(outs, out_zero, strict=True)]
    return batched_jvp


class _PrimalBody:
    """The primal jaxpr of a ``custom_jvp_call`` as a function of all its operands (the
    closed-over values first), the first of the subfunctions ``get_bind_params`` gives."""

    __slots__ = ("call_jaxpr",)

    def __init__(self, call_jaxpr):
        self.call_jaxpr = call_jaxpr

    def __call__(self, *operands):
        return eval_jaxpr(self.call_jaxpr.jaxpr, self.call_jaxpr.consts, *operands)


class _FlatJvpRule:
    """A ``custom_jvp_call``'s jvp rule in JAX's flat subfunction convention: called with
    every operand's primal then every operand's tangent (the closed-over values' ones are
    dropped, as they have none), it returns the output primals then their tangents."""

    __slots__ = ("jvp", "num_consts")

    def __init__(self, jvp, num_consts):
        self.jvp, self.num_consts = jvp, num_consts

    def __call__(self, *primals_and_tangents):
        n = len(primals_and_tangents) // 2
        outs, tangent_outs = self.jvp(list(primals_and_tangents[self.num_consts:n]),
                                      list(primals_and_tangents[n + self.num_consts:]))
        return [*outs, *tangent_outs]


class CustomJvpCallPrimitive(HigherOrderPrimitive):
    """``custom_jvp_call``, which rebinds from subfunctions as JAX's does: its
    ``get_bind_params`` replaces the primal jaxpr and the jvp rule with ``subfuns``
    (wrapped functions that programs transforming jaxprs may call to inline the primal),
    and ``bind`` takes them back."""

    __slots__ = ()
    # The jvp trace keeps the values the user's rule returns (a Python scalar stays one).
    keeps_rule_values = True

    def get_bind_params(self, params) -> dict:
        from xjax._src.transformations.api_util import wrap_init  # a higher layer
        bind_params = dict(params)
        call_jaxpr = bind_params.pop("call_jaxpr")
        rule = _FlatJvpRule(bind_params.pop("jvp"), bind_params.pop("num_consts"))
        bind_params["subfuns"] = (wrap_init(_PrimalBody(call_jaxpr)), wrap_init(rule))
        return bind_params

    def bind(self, *args, **params):
        if "subfuns" in params:
            params = _params_of_subfuns(params)
        return super().bind(*args, **params)

    def printed_params(self, params) -> dict:
        """The params as JAX prints the equation: the function's name, the rule by its
        name, and the count of consts only when there are some."""
        jvp = params["jvp"]
        printed = {"name": getattr(jvp, "primal_name", None), "call_jaxpr": params["call_jaxpr"],
                   "jvp": jvp, "symbolic_zeros": params["symbolic_zeros"]}
        if params["num_consts"]:
            printed["num_consts"] = params["num_consts"]
        return printed


def _params_of_subfuns(params) -> dict:
    """The equation params that the ``subfuns`` of ``get_bind_params`` stand for."""
    params = dict(params)
    fun, jvp = params.pop("subfuns")
    body, rule = getattr(fun, "f", None), getattr(jvp, "f", None)
    if not (isinstance(body, _PrimalBody) and isinstance(rule, _FlatJvpRule)):
        # Other subfunctions would have to be traced to a jaxpr here; custom_jvp does that.
        raise NotImplementedError("custom_jvp_call binds subfuns only as its get_bind_params "
                                  "gives them; define new rules with jax.custom_jvp")
    return {**params, "call_jaxpr": body.call_jaxpr, "num_consts": rule.num_consts,
            "jvp": rule.jvp}


custom_jvp_call_p = CustomJvpCallPrimitive(
    "custom_jvp_call", abstract_eval=_call_abstract_eval, impl=_call_impl, lower=_call_lower,
    jvp=_custom_jvp_jvp, transpose=NONLINEAR, batch=NeedsTrace(_custom_jvp_batch),
    multiple_results=True, hidden_params=("name",),
    partial_eval=ALL_UNKNOWN, partial_eval_jaxpr=ALL_UNKNOWN)


# -- custom_vjp --
#
# ``fwd(primals, perturbed) -> (outs, residuals)`` takes the flat primals and, for each,
# whether its tangent is nonzero; ``bwd(residuals, cts) -> cts_in`` takes the flat output
# cotangents (``Zero`` where none reaches an output) and gives one cotangent per primal:
# a value, ``Zero`` or None (zero).

def _custom_vjp_jvp(primals, tangents, *, call_jaxpr, num_consts, fwd, bwd):
    _check_const_tangents(tangents, num_consts, "custom_vjp")
    return apply_custom_vjp(primals[num_consts:], tangents[num_consts:], fwd, bwd)


def apply_custom_vjp(primals, tangents, fwd, bwd):
    """A custom_vjp call's outputs (``fwd``'s) and tangents (a ``custom_lin`` of the nonzero
    ``tangents``, transposed by ``bwd``). ``custom_vjp`` calls it directly under a JVP
    trace (without tracing the primal function, as JAX)."""
    in_zeros = tuple(type(t) is Zero for t in tangents)
    outs, residuals = fwd(list(primals), [not z for z in in_zeros])
    res_tree, flat_res = _split_residuals(residuals)
    out_avals = tuple(tangent_aval(get_aval(o)) for o in outs)
    tangent_outs = custom_lin_p.bind(*flat_res, *[t for t in tangents if type(t) is not Zero],
                                     num_res=len(flat_res), res_tree=res_tree, bwd=bwd,
                                     out_avals=out_avals, in_zeros=in_zeros)
    return list(outs), list(tangent_outs)


class _Operand:
    """Marks the place of a residual passed as an operand (an array)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


_OPERAND = _Operand()


def _split_residuals(residuals):
    """``((treedef, statics), operands)``: a fwd rule's residuals whose arrays become
    operands, while other leaves (Python scalars such as ``perturbed`` flags) stay Python
    values, as JAX keeps them, in ``statics`` (``_OPERAND`` at the arrays' places)."""
    leaves, tree = tree_flatten(residuals)
    statics = tuple(_OPERAND if _is_array(r) else r for r in leaves)
    return (tree, statics), [r for r in leaves if _is_array(r)]


def _join_residuals(res_tree, operands):
    tree, statics = res_tree
    operands = iter(operands)
    return tree_unflatten(tree, [next(operands) if s is _OPERAND else s for s in statics])


def _is_array(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic))


def _custom_vjp_batch(trace, vals, dims, *, call_jaxpr, num_consts, fwd, bwd):
    """vmap keeps the custom rule (so ``grad(vmap(f))`` runs the user's bwd): a vmapped fwd
    (outputs and residuals batched first) and a vmapped bwd. Every operand is batched, so
    that each cotangent bwd gives is per example."""
    def batched_params(name, size, in_batched):
        return {"fwd": _batched_fwd(fwd, name, size), "bwd": _batched_bwd(bwd, name, size)}

    return _batch_custom_call("custom_vjp", custom_vjp_call_p, trace, vals, dims, call_jaxpr,
                              num_consts, {"fwd": fwd, "bwd": bwd}, batched_params)


def _batched_fwd(fwd, name, size):
    def batched_fwd(primals, perturbed):
        res_trees = []

        def per_example(*args):
            outs, residuals = fwd(list(args), perturbed)
            res_tree, operands = _split_residuals(residuals)
            res_trees[:] = [res_tree]
            return list(outs), operands

        outs, operands = _vmapped(per_example, name, size)(*primals)
        return outs, _join_residuals(res_trees[0], operands)
    return batched_fwd


def _batched_bwd(bwd, name, size):
    """``bwd`` vmapped over residuals and non-zero cotangents; zero cotangents stay
    symbolic (per-example ``Zero``s inside), zero results too (None, or batched ``Zero``)."""
    def batched_bwd(residuals, cts):
        res_tree, operands = _split_residuals(residuals)
        zeros = []

        def per_example(res, nonzero_cts):
            nonzero = iter(nonzero_cts)
            result = bwd(_join_residuals(res_tree, res),
                         [_unbatched(c) if type(c) is Zero else next(nonzero) for c in cts])
            zeros[:] = [c if c is None or type(c) is Zero else False for c in result]
            return [c for c, z in zip(result, zeros, strict=True) if z is False]

        nonzero_out = iter(_vmapped(per_example, name, size)(
            operands, [c for c in cts if type(c) is not Zero]))
        return [next(nonzero_out) if z is False else _batched(z, size) for z in zeros]
    return batched_bwd


class CustomVjpCallPrimitive(HigherOrderPrimitive):
    """``custom_vjp_call``, printed as JAX prints it."""

    __slots__ = ()

    def printed_params(self, params) -> dict:
        """The function's name, the rules by their names, whether they take symbolic
        zeros, and the count of consts only when there are some."""
        fwd = params["fwd"]
        printed = {"name": getattr(fwd, "primal_name", None), "call_jaxpr": params["call_jaxpr"],
                   "fwd": fwd, "bwd": params["bwd"],
                   "symbolic_zeros": getattr(fwd, "symbolic_zeros", False)}
        if params["num_consts"]:
            printed["num_consts"] = params["num_consts"]
        return printed


custom_vjp_call_p = CustomVjpCallPrimitive(
    "custom_vjp_call", abstract_eval=_call_abstract_eval, impl=_call_impl, lower=_call_lower,
    jvp=_custom_vjp_jvp, transpose=NONLINEAR, batch=NeedsTrace(_custom_vjp_batch),
    multiple_results=True, hidden_params=("name",),
    partial_eval=ALL_UNKNOWN, partial_eval_jaxpr=ALL_UNKNOWN)


def _custom_lin_abstract_eval(*avals, num_res, res_tree, bwd, out_avals, in_zeros):
    return list(out_avals)


def _custom_lin_impl(*args, **params):
    """custom_lin only runs (eagerly, compiled or batched) when a custom_vjp function's
    tangents are asked for, not transposed: forward mode, which JAX refuses."""
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_transpose(cts, *operands, num_res, res_tree, bwd, out_avals, in_zeros):
    """Calls ``bwd``; the cotangents of the nonzero tangents (the operands after the
    residuals) are its results for the primals whose tangents were not zero."""
    result = bwd(_join_residuals(res_tree, operands[:num_res]), list(cts))
    nonzero = [c for c, z in zip(result, in_zeros, strict=True) if not z]
    return [None] * num_res + [_linear_ct(op, c) for op, c in zip(operands[num_res:], nonzero,
                                                                   strict=True)]


def _linear_ct(operand, ct):
    if not is_undefined(operand):
        return None
    return Zero(operand.aval) if ct is None else ct


custom_lin_p = HigherOrderPrimitive(
    "custom_lin", abstract_eval=_custom_lin_abstract_eval, impl=_custom_lin_impl,
    lower=_custom_lin_impl,
    jvp=Absent("the tangent map of a custom_vjp function has no jvp of its own"),
    transpose=_custom_lin_transpose,
    batch=_custom_lin_impl,
    multiple_results=True,
    partial_eval=ALL_UNKNOWN, partial_eval_jaxpr=ALL_UNKNOWN)


# -- checkpoint (remat) --

# Params: ``jaxpr``; ``policy`` (None: save nothing); ``prevent_cse`` (a bool, or one bool
# per operand); ``differentiated`` (True for the checkpoint partial evaluation stages into
# the backward pass: its lowering puts the ``prevent_cse`` operands through an optimization
# barrier so that XLA cannot share the recomputation with the forward pass, as in JAX).

def _cse_select(prevent_cse, keep):
    """``prevent_cse`` of a checkpoint taking the operands where ``keep`` is True."""
    if isinstance(prevent_cse, bool):
        return prevent_cse
    return tuple(f for f, k in zip(prevent_cse, keep, strict=True) if k)


def _cse_extend(prevent_cse, before=(), after=()):
    """``prevent_cse`` of a checkpoint taking operands ``before`` + these + ``after``."""
    if isinstance(prevent_cse, bool):
        return prevent_cse
    return tuple(before) + tuple(prevent_cse) + tuple(after)


def _remat_abstract_eval(*avals, jaxpr: ClosedJaxpr, **params):
    return jaxpr.out_avals


def _remat_impl(*values, jaxpr: ClosedJaxpr, **params):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *values)


def _remat_lower(ctx, *operands, jaxpr: ClosedJaxpr, prevent_cse, differentiated, **params):
    operands = list(operands)
    flags = ((prevent_cse,) * len(operands) if isinstance(prevent_cse, bool)
             else prevent_cse)
    guarded = [i for i, f in enumerate(flags) if f] if differentiated else []
    if guarded:
        outs = ctx.builder.op("stablehlo.optimization_barrier", [operands[i] for i in guarded],
                              [aval_type(ctx.avals_in[i]) for i in guarded])
        for i, out in zip(guarded, outs, strict=True):
            operands[i] = out
    return lower_jaxpr_body(ctx.builder, jaxpr.jaxpr, [], operands)


def _remat_jvp(primals, tangents, *, jaxpr: ClosedJaxpr, prevent_cse, **params):
    nonzero = tuple(type(t) is not Zero for t in tangents)
    n = len(primals)

    def make():
        in_avals = [get_aval(p) for p in primals]
        t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzero, strict=True) if nz]
        out_nonzero = []

        def jvp_fun(*args):
            ps, ts_iter = args[:n], iter(args[n:])
            ts = [next(ts_iter) if nz else Zero(tangent_aval(a))
                  for a, nz in zip(in_avals, nonzero, strict=True)]
            outs, out_ts = jvp_flat(lambda *xs: eval_jaxpr(jaxpr.jaxpr, [], *xs), ps, ts)
            out_nonzero.extend(type(t) is not Zero for t in out_ts)
            return list(outs) + [t for t in out_ts if type(t) is not Zero]

        closed, consts = _trace_flat(jvp_fun, in_avals + t_avals, "checkpoint")
        return closed, consts, tuple(out_nonzero)

    closed, consts, out_nonzero = _derived("remat_jvp", jaxpr, nonzero, make)
    cse = _cse_extend(prevent_cse, (False,) * len(consts), (True,) * sum(nonzero))
    outs = checkpoint_p.bind(*consts, *primals, *[t for t in tangents if type(t) is not Zero],
                             jaxpr=closed, prevent_cse=cse, **params)
    n_out = len(jaxpr.out_avals)
    t_iter = iter(outs[n_out:])
    return outs[:n_out], [next(t_iter) if nz else Zero(tangent_aval(a))
                          for a, nz in zip(jaxpr.out_avals, out_nonzero, strict=True)]


def _restrict_outputs(jaxpr: ClosedJaxpr, keep) -> ClosedJaxpr:
    inner = jaxpr.jaxpr
    return ClosedJaxpr(Jaxpr([], inner.invars, [v for v, k in zip(inner.outvars, keep,
                                                                   strict=True) if k],
                             inner.eqns), [])


def _remat_partial_eval(trace, args, params):
    """Known outputs now, unknown ones staged as a checkpoint whose residuals are what the
    policy saves. ``nothing_saveable`` (the default) stages the whole body, its residuals
    being the known inputs; ``everything_saveable`` splits like ``jit``; any other policy
    goes through :func:`partial_eval_jaxpr_policy`."""
    policy = params["policy"]
    if policy is None or policy is nothing_saveable:
        return _remat_partial_eval_nothing_saved(trace, args, params)
    if policy is everything_saveable:
        return _jit_partial_eval(trace, args, {"jaxpr": params["jaxpr"], "name": "checkpoint"})
    return _remat_partial_eval_policy(trace, args, params)


def _remat_partial_eval_nothing_saved(trace, args, params):
    """Known outputs now; the unknown ones staged as a checkpoint of the whole body, whose
    residuals are only its known inputs: the backward pass recomputes the rest."""
    jaxpr = params["jaxpr"]
    unknowns = tuple(trace.is_unknown(x) for x in args)
    out_unknowns = _derived("remat_pe", jaxpr, unknowns,
                            lambda: partial_eval_jaxpr(jaxpr.jaxpr, unknowns)[2])
    unknown_part = _derived("remat_unknown", jaxpr, unknowns,
                            lambda: _restrict_outputs(jaxpr, out_unknowns))
    known_args = [x for x, u in zip(args, unknowns, strict=True) if not u]
    with set_current_trace(trace.parent):
        if any(not u for u in out_unknowns):
            known_outs = _known_outputs(jaxpr, unknowns, known_args, out_unknowns)
        else:
            known_outs = []
    unknown_outs = StagingTrace.process_primitive(
        trace, checkpoint_p, list(args),
        {**params, "jaxpr": unknown_part, "differentiated": True})
    k_iter, u_iter = iter(known_outs), iter(unknown_outs)
    return [next(u_iter) if u else next(k_iter) for u in out_unknowns]


def _known_outputs(jaxpr, unknowns, known_args, out_unknowns):
    """The known outputs alone (the residuals the split would save are not computed)."""

    def make():
        known, _, _, n_res = partial_eval_jaxpr(jaxpr.jaxpr, unknowns)
        outs = known.outvars[:len(known.outvars) - n_res]
        return Jaxpr([], known.invars, outs, dce_eqns(known.eqns, outs)[0])

    known = _derived("remat_known_jaxpr", jaxpr, tuple(unknowns), make)
    return eval_jaxpr(known, [], *known_args)


def _policy_split(jaxpr: ClosedJaxpr, unknowns, policy):
    """``partial_eval_jaxpr_policy`` of the body, memoized per (unknowns, policy) when the
    policy is hashable."""
    if not callable(policy):
        raise TypeError(f"checkpoint policy must be a callable (one of "
                        f"jax.checkpoint_policies or a function of a primitive, its input "
                        f"avals and params), got {policy!r} of type {type(policy).__name__}")

    def make():
        known, unknown, out_unknowns, n_res = partial_eval_jaxpr_policy(
            jaxpr.jaxpr, unknowns, policy)
        return known, ClosedJaxpr(unknown, []), out_unknowns, n_res

    try:
        hash(policy)
    except TypeError:
        return make()
    return _derived("remat_policy_pe", jaxpr, (tuple(unknowns), policy), make)


def _remat_partial_eval_policy(trace, args, params):
    unknowns = tuple(trace.is_unknown(x) for x in args)
    known, unknown, out_unknowns, n_res = _policy_split(params["jaxpr"], unknowns,
                                                        params["policy"])
    known_args = [x for x, u in zip(args, unknowns, strict=True) if not u]
    with set_current_trace(trace.parent):
        known_outs = eval_jaxpr(known, [], *known_args)
    n_known = len(known_outs) - n_res
    unknown_args = [x for x, u in zip(args, unknowns, strict=True) if u]
    cse = _cse_extend(_cse_select(params["prevent_cse"], unknowns), before=(True,) * n_res)
    unknown_outs = StagingTrace.process_primitive(
        trace, checkpoint_p, [*known_outs[n_known:], *unknown_args],
        {**params, "jaxpr": unknown, "prevent_cse": cse, "differentiated": True})
    k_iter, u_iter = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(u_iter) if u else next(k_iter) for u in out_unknowns]


def _remat_partial_eval_jaxpr(eqn, unknowns):
    """Split a checkpoint equation of a jaxpr: a known checkpoint computing the known outputs
    and the residuals the policy saves, and an unknown one recomputing the rest (a residual
    that is a known input is passed as that input)."""
    jaxpr, policy = eqn.params["jaxpr"], eqn.params["policy"]
    known, unknown, out_unknowns, n_res = _policy_split(jaxpr, tuple(unknowns),
                                                        policy or nothing_saveable)
    known_invars = [a for a, u in zip(eqn.invars, unknowns, strict=True) if not u]
    forwarded = dict(zip(known.invars, known_invars, strict=True))
    res_vars = known.outvars[len(known.outvars) - n_res:]
    residuals = [forwarded[v] if v in forwarded else Var(v.aval) for v in res_vars]
    computed = [(v, r) for v, r in zip(res_vars, residuals, strict=True) if v not in forwarded]
    known_outvars = [v for v, u in zip(eqn.outvars, out_unknowns, strict=True) if not u]
    known_body = Jaxpr([], known.invars, known.outvars[:len(known_outvars)] +
                       [v for v, _ in computed], known.eqns)
    cse = eqn.params["prevent_cse"]
    known_eqn = JaxprEqn(checkpoint_p, known_invars, known_outvars + [r for _, r in computed],
                         {**eqn.params, "jaxpr": ClosedJaxpr(known_body, []),
                          "prevent_cse": _cse_select(cse, [not u for u in unknowns])}, source_info=eqn.source_info)
    unknown_invars = [a for a, u in zip(eqn.invars, unknowns, strict=True) if u]
    unknown_outvars = [v for v, u in zip(eqn.outvars, out_unknowns, strict=True) if u]
    unknown_eqn = JaxprEqn(checkpoint_p, residuals + unknown_invars, unknown_outvars,
                           {**eqn.params, "jaxpr": unknown, "differentiated": True,
                            "prevent_cse": _cse_extend(_cse_select(cse, unknowns),
                                                       before=(True,) * n_res)}, source_info=eqn.source_info)
    return known_eqn, unknown_eqn, out_unknowns, residuals


def _remat_transpose(cts, *operands, jaxpr: ClosedJaxpr, prevent_cse, **params):
    """A checkpoint of the transposed body (as in JAX, so that the recomputation stays
    behind the ``prevent_cse`` barrier when compiled): it recomputes the non-linear part of
    the body from the known operands, then transposes the linear part."""
    undefined = tuple(is_undefined(o) for o in operands)
    defined = [o for o, u in zip(operands, undefined, strict=True) if not u]
    ct_avals = tuple(None if type(c) is Zero else get_aval(c) for c in cts)
    op_avals = tuple(o.aval if u else get_aval(o) for o, u in zip(operands, undefined,
                                                                   strict=True))

    def make():
        zero_results = []

        def transposed(*args):
            results = _transpose_body(jaxpr, undefined, op_avals, ct_avals, args)
            zero_results.extend(type(r) is Zero for r in results)
            return [r for r in results if type(r) is not Zero]

        in_avals = [a for a, u in zip(op_avals, undefined, strict=True) if not u]
        closed, consts = _trace_flat(transposed, in_avals + [a for a in ct_avals if a],
                                     "checkpoint")
        return closed, consts, tuple(zero_results)

    closed, consts, zero_results = _derived("remat_transpose", jaxpr,
                                            (undefined, ct_avals, op_avals), make)
    nonzero_cts = [c for c in cts if type(c) is not Zero]
    cse = _cse_extend(_cse_select(prevent_cse, [not u for u in undefined]),
                      (False,) * len(consts), (True,) * len(nonzero_cts))
    outs = iter(checkpoint_p.bind(*consts, *defined, *nonzero_cts, jaxpr=closed,
                                  prevent_cse=cse, **{**params, "differentiated": True})
                if len(zero_results) > sum(zero_results) else [])
    results = iter(Zero(a) if z else next(outs) for a, z in zip(
        [a for a, u in zip(op_avals, undefined, strict=True) if u], zero_results, strict=True))
    return [next(results) if u else None for u in undefined]


def _transpose_body(jaxpr, undefined, op_avals, ct_avals, args):
    """Cotangents of the undefined operands (Zero where none reaches them), from ``args``:
    the defined operands, then the non-zero output cotangents."""
    known, linear, out_linear, n_res = _derived(
        "remat_transpose_split", jaxpr, undefined,
        lambda: _split_for_transpose(jaxpr, undefined))
    n_defined = len(undefined) - sum(undefined)
    residuals = eval_jaxpr(known, [], *args[:n_defined])
    ct_iter = iter(args[n_defined:])
    cts = [Zero(tangent_aval(o)) if a is None else next(ct_iter)
           for a, o in zip(ct_avals, jaxpr.out_avals, strict=True)]
    linear_cts = [c for c, lin in zip(cts, out_linear, strict=True) if lin]
    linear_args = [UndefinedPrimal(a) for a, u in zip(op_avals, undefined, strict=True) if u]
    results = backward_pass(linear, [], [*residuals, *linear_args], linear_cts)
    return results[n_res:]


def _split_for_transpose(jaxpr: ClosedJaxpr, undefined):
    """``(known, linear, out_linear, n_res)``: ``known`` maps the defined operands to the
    residuals only (no dead primal outputs), ``linear`` maps residuals and the undefined
    operands to the linear outputs."""
    known, linear, out_linear, n_res = partial_eval_jaxpr(jaxpr.jaxpr, undefined)
    res_out = known.outvars[len(known.outvars) - n_res:]
    eqns, _ = dce_eqns(known.eqns, res_out)
    return Jaxpr([], known.invars, res_out, eqns), linear, out_linear, n_res


def _remat_batch(trace, vals, dims, *, jaxpr: ClosedJaxpr, prevent_cse, **params):
    """Batch the body under this vmap and checkpoint the batched body."""
    size, name = trace.axis_size, trace.axis_name
    moved = [bdim_at_front(v, d, size) for v, d in zip(vals, dims, strict=True)]

    def make():
        def batched(*xs):
            outs, out_dims = batch_flat(lambda *ys: eval_jaxpr(jaxpr.jaxpr, [], *ys), xs,
                                        [0] * len(xs), name, size)
            return [bdim_at_front(o, d, size) for o, d in zip(outs, out_dims, strict=True)]
        return _trace_flat(batched, [get_aval(m) for m in moved], "checkpoint")

    closed, consts = _derived("remat_batch", jaxpr, (name, size), make)
    if consts:  # constants the batched body needs become leading operands
        closed = ClosedJaxpr(closed.jaxpr, [])
    outs = checkpoint_p.bind(*consts, *moved, jaxpr=closed,
                             prevent_cse=_cse_extend(prevent_cse, (False,) * len(consts)),
                             **params)
    return outs, [0] * len(outs)




checkpoint_p = HigherOrderPrimitive(
    "checkpoint", abstract_eval=_remat_abstract_eval, impl=_remat_impl, lower=_remat_lower,
    jvp=_remat_jvp, transpose=_remat_transpose, batch=NeedsTrace(_remat_batch),
    multiple_results=True,
    partial_eval=_remat_partial_eval, partial_eval_jaxpr=_remat_partial_eval_jaxpr)


