"""``lax.cond`` and ``lax.switch``: the ``cond`` primitive, which applies one of several
branch jaxprs chosen by an int32 index. It lowers to ``stablehlo.case``; under ``vmap`` with
a batched index it becomes a ``select_n`` of every branch's outputs, as in JAX."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xjax._src.core.array import as_numpy
from xjax._src.core import dtypes
from xjax._src.core.ad_util import UndefinedPrimal, Zero, get_aval, tangent_aval
from xjax._src.core.config import config
from xjax._src.core.jaxpr import Jaxpr, JaxprEqn, Var, eval_jaxpr
from xjax._src.higher_order.primitive import FROM_JAXPR_RULE, HigherOrderPrimitive
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.higher_order import ref_threading
from xjax._src.higher_order.common import (check_branch_outputs, closed, derived, join_consts,
                                           partial_eval_jaxpr_forced, trace_flat, trace_function,
                                           typematch, with_invars, zeros_literal_or_eqn)
from xjax._src.higher_order.rules_common import (batch_jaxpr, jvp_jaxpr, move_to_front,
                                                 nonzero_mask, run_jaxpr, undefined_mask)
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lowering import effects
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.lowering.stablehlo import aval_type
from xjax._src.core.trace import Tracer
from xjax._src.interpreters.batching import batch_flat
from xjax._src.interpreters.transpose import backward_pass
from xjax._src.lax.compare import clamp, select_n
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.shape import broadcast_in_dim

_no_operand = object()


# -- the primitive ---------------------------------------------------------------------------

def _cond_abstract_eval(index, *operands, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for branch in branches:
        if len(branch.in_avals) != len(operands) or not all(
                typematch(a, b) for a, b in zip(branch.in_avals, operands, strict=True)):
            raise TypeError("cond branches take operands of types "
                            f"{[a.str_short() for a in branch.in_avals]}, got "
                            f"{[a.str_short() for a in operands]}")
    return list(branches[0].out_avals)


def _cond_impl(index, *operands, branches):
    branch = branches[int(np.clip(int(index), 0, len(branches) - 1))]
    outs = eval_jaxpr(branch.jaxpr, branch.consts, *operands)
    return [as_numpy(o) for o in outs]


def _cond_lower(ctx, index, *operands, branches):
    # with side effects, each branch continues the outer token chain and returns its token
    token = effects.current_token(ctx.builder) if effects.has_effects(branches) else None

    def body(branch, b):
        if token is None:
            return lower_jaxpr_body(b, branch.jaxpr, [], list(operands))
        effects.set_token(b, token)
        outs = lower_jaxpr_body(b, branch.jaxpr, [], list(operands))
        return outs + [effects.current_token(b)]

    def region(branch):
        return ctx.builder.region([], lambda b, _: body(branch, b))

    out_types = [aval_type(a) for a in ctx.avals_out]
    if token is not None:
        out_types.append(effects.TOKEN_TYPE)
    outs = ctx.builder.op("stablehlo.case", [index], out_types,
                          regions=[region(b) for b in branches])
    if token is not None:
        effects.set_token(ctx.builder, outs[-1])
        outs = outs[:-1]
    return outs


def _cond_jvp(primals, tangents, *, branches):
    index, operands = primals[0], primals[1:]
    nonzero = nonzero_mask(tangents[1:])

    def make():
        out_nz = [False] * len(branches[0].out_avals)
        for branch in branches:
            _, _, nz = jvp_jaxpr(branch.jaxpr, nonzero, out_nz)
            out_nz = [a or b for a, b in zip(out_nz, nz, strict=True)]
        traced = []
        for branch in branches:
            jaxpr, consts, _ = jvp_jaxpr(branch.jaxpr, nonzero, out_nz)
            traced.append((jaxpr, consts))
        jaxprs, consts = join_consts(traced)
        return tuple(closed(j) for j in jaxprs), consts, out_nz

    new_branches, consts, out_nz = derived("cond_jvp", branches, nonzero, make)
    tangents_nz = [t for t in tangents[1:] if type(t) is not Zero]
    outs = cond_p.bind(index, *consts, *operands, *tangents_nz, branches=new_branches)
    n = len(branches[0].out_avals)
    primal_out, tangent_iter = outs[:n], iter(outs[n:])
    tangent_out = [next(tangent_iter) if nz else Zero(tangent_aval(a))
                   for a, nz in zip(branches[0].out_avals, out_nz, strict=True)]
    return primal_out, tangent_out


def _cond_transpose(cts, index, *operands, branches):
    undefined = undefined_mask(operands)
    ct_nonzero = nonzero_mask(cts)
    out_avals = branches[0].out_avals

    def make():
        known_avals = [get_aval(o) for o, u in zip(operands, undefined, strict=True) if not u]
        ct_avals = [a for a, nz in zip(out_avals, ct_nonzero, strict=True) if nz]
        n_known = len(known_avals)
        traced = []
        for branch in branches:
            def transpose_fun(*args, branch=branch):
                known_iter, ct_iter = iter(args[:n_known]), iter(args[n_known:])
                linear_args = [UndefinedPrimal(a) if u else next(known_iter)
                               for a, u in zip(branch.in_avals, undefined, strict=True)]
                cts_full = [next(ct_iter) if nz else Zero(a)
                            for a, nz in zip(out_avals, ct_nonzero, strict=True)]
                results = backward_pass(branch.jaxpr, [], linear_args, cts_full)
                return [instantiate(r) for r, u in zip(results, undefined, strict=True) if u]

            closed_t, consts = trace_flat(transpose_fun, known_avals + ct_avals)
            traced.append((closed_t.jaxpr, consts))
        jaxprs, consts = join_consts(traced)
        return tuple(closed(j) for j in jaxprs), consts

    new_branches, consts = derived("cond_transpose", branches, (undefined, ct_nonzero), make)
    known = [o for o, u in zip(operands, undefined, strict=True) if not u]
    cts_nz = [c for c in cts if type(c) is not Zero]
    outs = iter(cond_p.bind(index, *consts, *known, *cts_nz, branches=new_branches))
    return [None] + [next(outs) if u else None for u in undefined]


def _cond_batch(trace, vals, dims, *, branches):
    size, axis_name = trace.axis_size, trace.axis_name
    index, operands = vals[0], vals[1:]
    if dims[0] is not not_mapped:
        return _cond_batched_index(index, dims[0], operands, dims[1:], branches, axis_name,
                                   size)
    operands, in_batched = move_to_front(operands, dims[1:])
    in_batched = tuple(in_batched)

    def make():
        n_out = len(branches[0].out_avals)
        out_b = [False] * n_out
        for branch in branches:
            _, _, b = batch_jaxpr(branch.jaxpr, in_batched, axis_name, size, [False] * n_out)
            out_b = [x or y for x, y in zip(out_b, b, strict=True)]
        traced = []
        for branch in branches:
            jaxpr, consts, _ = batch_jaxpr(branch.jaxpr, in_batched, axis_name, size, out_b)
            traced.append((jaxpr, consts))
        jaxprs, consts = join_consts(traced)
        return tuple(closed(j) for j in jaxprs), consts, out_b

    new_branches, consts, out_b = derived("cond_batch", branches,
                                          (in_batched, axis_name, size), make)
    outs = cond_p.bind(index, *consts, *operands, branches=new_branches)
    return outs, [0 if b else not_mapped for b in out_b]


def _cond_batched_index(index, index_dim, operands, dims, branches, axis_name, size):
    """A batched predicate: every branch runs on the whole batch; each lane's outputs are
    selected by its index (``select_n``), as JAX does."""
    index = bdim_at_front(index, index_dim, size)
    branch_outs = []
    for branch in branches:
        outs, out_dims = batch_flat(run_jaxpr(branch.jaxpr), list(operands), list(dims),
                                    axis_name, size)
        branch_outs.append([bdim_at_front(o, d, size) for o, d in zip(outs, out_dims,
                                                                       strict=True)])
    results = []
    for cases in zip(*branch_outs, strict=True):
        shape = get_aval(cases[0]).shape
        which = broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
        results.append(select_n(which, *cases))
    return results, [0] * len(results)




# -- partial evaluation ----------------------------------------------------------------------

def _cond_partial_eval_jaxpr(eqn, unknowns):
    """Split a cond equation whose index is known: a known cond computes the known outputs
    and the residuals (each branch fills its own residual slots, zeros in the others'); an
    unknown cond computes the rest from them."""
    branches = eqn.params["branches"]
    n_out = len(eqn.outvars)
    if unknowns[0]:
        return None, eqn, [True] * n_out, []
    ops_unknown = tuple(unknowns[1:])

    def make():
        out_uk = [False] * n_out
        for branch in branches:
            _, _, uk, _ = partial_eval_jaxpr_forced(branch.jaxpr, ops_unknown, [False] * n_out)
            out_uk = [a or b for a, b in zip(out_uk, uk, strict=True)]
        splits = [partial_eval_jaxpr_forced(b.jaxpr, ops_unknown, out_uk) for b in branches]
        return _assemble_branches(splits, out_uk)

    known_branches, unknown_branches, out_uk = derived("cond_pe", branches, ops_unknown, make)
    index = eqn.invars[0]
    ops = eqn.invars[1:]
    known_ops = [a for a, u in zip(ops, ops_unknown, strict=True) if not u]
    unknown_ops = [a for a, u in zip(ops, ops_unknown, strict=True) if u]
    known_outvars = [v for v, u in zip(eqn.outvars, out_uk, strict=True) if not u]
    unknown_outvars = [v for v, u in zip(eqn.outvars, out_uk, strict=True) if u]
    n_known = len(known_outvars)
    residuals = [Var(a) for a in known_branches[0].out_avals[n_known:]]
    known_eqn = None
    if known_outvars or residuals:
        known_eqn = JaxprEqn(cond_p, [index] + known_ops, known_outvars + residuals,
                             {"branches": known_branches}, source_info=eqn.source_info)
    unknown_eqn = None
    if unknown_outvars:
        unknown_eqn = JaxprEqn(cond_p, [index] + residuals + unknown_ops, unknown_outvars,
                               {"branches": unknown_branches}, source_info=eqn.source_info)
    return known_eqn, unknown_eqn, out_uk, residuals


def _assemble_branches(splits, out_uk):
    """Give every branch the same residual signature: the union of all branches' residual
    slots."""
    slot_avals, offsets = [], []
    for known, _, _, n_res in splits:
        offsets.append(len(slot_avals))
        n_known_out = len(known.outvars) - n_res
        slot_avals.extend(v.aval for v in known.outvars[n_known_out:])
    if not any(out_uk):  # nothing unknown: no residuals needed
        slot_avals = []
    known_branches, unknown_branches = [], []
    for (known, unknown, _, n_res), offset in zip(splits, offsets, strict=True):
        n_known_out = len(known.outvars) - n_res
        eqns = list(known.eqns)
        slots = []
        for j, aval in enumerate(slot_avals):
            if offset <= j < offset + n_res:
                slots.append(known.outvars[n_known_out + j - offset])
            else:
                atom, zero_eqns = zeros_literal_or_eqn(aval)
                eqns.extend(zero_eqns)
                slots.append(atom)
        known_branches.append(closed(Jaxpr([], known.invars, known.outvars[:n_known_out] + slots,
                                           eqns)))
        res_vars = unknown.invars[:n_res]
        slot_vars = [res_vars[j - offset] if offset <= j < offset + n_res else Var(a)
                     for j, a in enumerate(slot_avals)]
        unknown_branches.append(closed(with_invars(unknown, slot_vars +
                                                   unknown.invars[n_res:])))
    return tuple(known_branches), tuple(unknown_branches), out_uk


cond_p = HigherOrderPrimitive(
    "cond",
    abstract_eval=_cond_abstract_eval,
    impl=_cond_impl,
    lower=_cond_lower,
    jvp=_cond_jvp,
    transpose=_cond_transpose,
    batch=NeedsTrace(_cond_batch),
    multiple_results=True,
    partial_eval=FROM_JAXPR_RULE,
    partial_eval_jaxpr=_cond_partial_eval_jaxpr,
)


# -- the public functions --------------------------------------------------------------------

@ref_threading.threads_refs(ref_threading.cond, ref_threading.prepare_cond)
def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
    """Apply ``true_fun`` or ``false_fun`` to ``operands`` depending on ``pred``.

    Both branches are traced; only one runs (an XLA conditional). Under ``vmap`` with a
    batched predicate both run and the results are selected per example.

    Parameters
    ----------
    pred : bool or number scalar
        Which branch to apply (numbers are compared with zero).
    true_fun, false_fun : callable
        Functions of ``*operands`` returning pytrees of equal structure and types.
    *operands : pytrees
        The branches' arguments.

    Returns
    -------
    The applied branch's output.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.cond(True, lambda x: x + 1, lambda x: x - 1, 10)
    Array(11, dtype=int32, weak_type=True)
    """
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operands(operands, operand)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of " +
                        (f"type {type(pred)}" if isinstance(pred, Sequence)
                         else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = pred != 0
    if config.jax_disable_jit and _is_concrete(pred):
        return true_fun(*operands) if pred else false_fun(*operands)
    flat, in_tree = tree_flatten(operands)
    flat = [to_operand(x) for x in flat]
    avals = [get_aval(x) for x in flat]
    true_traced = trace_function(true_fun, in_tree, avals, "cond", threads_refs=True,
                                 reuse=True)
    false_traced = trace_function(false_fun, in_tree, avals, "cond", threads_refs=True,
                                  reuse=True)
    check_branch_outputs("cond", "true_fun", "false_fun", true_fun, false_fun,
                         true_traced.out_tree, true_traced.out_avals,
                         false_traced.out_tree, false_traced.out_avals)
    index = convert_element_type(pred, np.int32)
    outs = _bind_cond(index, [false_traced, true_traced], flat)
    return tree_unflatten(true_traced.out_tree, outs)


@ref_threading.threads_refs(ref_threading.switch, ref_threading.prepare_switch)
def switch(index, branches, *operands, operand=_no_operand):
    """Apply ``branches[index]`` to ``operands``; ``index`` is clamped into range.

    Parameters
    ----------
    index : integer scalar
    branches : sequence of callables
        Functions of ``*operands`` returning pytrees of equal structure and types.
    *operands : pytrees

    Examples
    --------
    >>> from xjax import lax
    >>> lax.switch(5, [lambda x: x, lambda x: -x], 1.0)
    Array(-1., dtype=float32, weak_type=True)
    """
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _operands(operands, operand)
    if len(np.shape(index)) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    try:
        index_dtype = dtypes.result_type(index)
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.array(0, np.int32), index, np.array(len(branches) - 1, np.int32))
    if config.jax_disable_jit and _is_concrete(index):
        return branches[int(index)](*operands)
    flat, in_tree = tree_flatten(operands)
    flat = [to_operand(x) for x in flat]
    avals = [get_aval(x) for x in flat]
    traced = [trace_function(b, in_tree, avals, "switch", threads_refs=True, reuse=True)
              for b in branches]
    for i, t in enumerate(traced[1:]):
        check_branch_outputs("switch", "branch 0", f"branch{i + 1}", branches[0],
                             branches[i + 1], traced[0].out_tree, traced[0].out_avals,
                             t.out_tree, t.out_avals)
    outs = _bind_cond(index, traced, flat)
    return tree_unflatten(traced[0].out_tree, outs)


def _operands(operands, operand):
    if operand is _no_operand:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                        f"passed, got operand={operand!r} and positional operands {operands}")
    return (operand,)


def _is_concrete(x) -> bool:
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def _bind_cond(index, traced, flat_operands):
    """Bind ``cond`` over the traced branches (consts joined, outputs every branch merely
    forwards from an input pruned, as JAX does)."""
    jaxprs, consts = join_consts([(t.jaxpr.jaxpr, t.consts) for t in traced])
    all_inputs = list(consts) + list(flat_operands)
    forwarded = _forwarded_outputs(jaxprs)
    keep = [f is None for f in forwarded]
    branches = tuple(closed(Jaxpr([], j.invars, [v for v, k in zip(j.outvars, keep, strict=True)
                                                 if k], j.eqns)) for j in jaxprs)
    outs = iter(cond_p.bind(index, *all_inputs, branches=branches))
    return [next(outs) if f is None else all_inputs[f] for f in forwarded]


def _forwarded_outputs(jaxprs):
    """For each output: the input position every branch returns unchanged, or None."""
    result = []
    for k in range(len(jaxprs[0].outvars)):
        positions = set()
        for jaxpr in jaxprs:
            out = jaxpr.outvars[k]
            try:
                positions.add(jaxpr.invars.index(out) if isinstance(out, Var) else None)
            except ValueError:
                positions.add(None)
        result.append(positions.pop() if len(positions) == 1 else None)
    return result


__all__ = ["cond", "switch", "cond_p"]
