"""``lax.while_loop`` and ``lax.fori_loop``: the ``while`` primitive (a predicate jaxpr and
a body jaxpr over a carry), lowered to ``stablehlo.while``. Forward-mode differentiable;
reverse mode raises JAX's error. ``fori_loop`` with static bounds is a ``scan``."""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes, errors
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core import purity
from xjax._src.core.config import config
from xjax._src.core.jaxpr import DropVar, Jaxpr, JaxprEqn, Var, eval_jaxpr
from xjax._src.higher_order.primitive import FROM_JAXPR_RULE, HigherOrderPrimitive
from xjax._src.core.pytree import tree_flatten, tree_map, tree_unflatten
from xjax._src.core.trace import Tracer
from xjax._src.higher_order import ref_threading
from xjax._src.higher_order.common import (check_carry_type, closed, derived, pad_inputs,
                                           promote_weak_carries, split_list, trace_flat,
                                           trace_function, typematch, with_invars, with_outvars)
from xjax._src.higher_order.rules_common import (batch_fixed_point, batch_jaxpr,
                                                 jvp_fixed_point, move_to_front, nonzero_mask,
                                                 run_jaxpr)
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lowering import effects
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.lowering.stablehlo import aval_type
from xjax._src.core.array import Array, as_numpy
from xjax._src.core.pytree import treedef_is_leaf
from xjax._src.interpreters.partial_eval import partial_eval_jaxpr
from xjax._src.lax.compare import lt, select_n
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.elementwise import add
from xjax._src.lax.reduce import reduce_or
from xjax._src.lax.shape import broadcast_in_dim
from xjax._src.higher_order.scan import scan

REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
    "start/stop.")


# -- the primitive ---------------------------------------------------------------------------

def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = split_list(avals, [cond_nconsts, body_nconsts])
    _check_inputs("while cond", cond_jaxpr.in_avals, cond_consts + carry)
    _check_inputs("while body", body_jaxpr.in_avals, body_consts + carry)
    _check_inputs("while body output", body_jaxpr.out_avals, carry)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError(f"while cond_jaxpr must return a boolean scalar, got {pred}")
    return list(body_jaxpr.out_avals)


def _check_inputs(what, expected, got):
    if len(expected) != len(got) or not all(typematch(a, b) for a, b in
                                            zip(expected, got, strict=True)):
        raise TypeError(f"{what} takes types {[a.str_short() for a in expected]}, got "
                        f"{[a.str_short() for a in got]}")


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = split_list(args, [cond_nconsts, body_nconsts])
    while bool(as_numpy(eval_jaxpr(cond_jaxpr.jaxpr, [], *cond_consts, *carry)[0])):
        carry = eval_jaxpr(body_jaxpr.jaxpr, [], *body_consts, *carry)
    return [as_numpy(c) for c in carry]


def _while_lower(ctx, *operands, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    types = [aval_type(a) for a in ctx.avals_in]
    n_consts = cond_nconsts + body_nconsts

    def cond_region(b, args):
        cond_consts, _, carry = split_list(args, [cond_nconsts, body_nconsts])
        return lower_jaxpr_body(b, cond_jaxpr.jaxpr, [], cond_consts + carry)

    def body_region(b, args):
        consts, carry = list(args[:n_consts]), list(args[n_consts:])
        body_consts = consts[cond_nconsts:]
        return consts + lower_jaxpr_body(b, body_jaxpr.jaxpr, [], body_consts + carry)

    builder = ctx.builder
    if effects.has_effects(cond_jaxpr, body_jaxpr):  # carry the side-effect token
        plain_cond, plain_body = cond_region, body_region
        types = types + [effects.TOKEN_TYPE]
        operands = list(operands) + [effects.current_token(builder)]

        def cond_region(b, args):
            effects.set_token(b, args[-1])
            return plain_cond(b, args[:-1])

        def body_region(b, args):
            effects.set_token(b, args[-1])
            outs = plain_body(b, args[:-1])
            return outs + [effects.current_token(b)]

    outs = builder.op("stablehlo.while", operands, types,
                      regions=[builder.region(types, cond_region),
                               builder.region(types, body_region)])
    if types[-1] == effects.TOKEN_TYPE:
        effects.set_token(builder, outs[-1])
        outs = outs[:-1]
    return outs[n_consts:]


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = split_list(primals, [cond_nconsts, body_nconsts])
    _, body_consts_t, carry_t = split_list(tangents, [cond_nconsts, body_nconsts])
    nb, nk = body_nconsts, len(carry)
    const_nz, init_nz = nonzero_mask(body_consts_t), nonzero_mask(carry_t)

    def make():
        body, consts, in_nz, _ = jvp_fixed_point(body_jaxpr.jaxpr, const_nz + init_nz,
                                                 range(nb, nb + nk), range(nk))
        carry_nz = in_nz[nb:]
        # jvp inputs: (consts, body consts, carry, body-const tangents, carry tangents)
        n_c, n_ct = len(consts), sum(const_nz)
        head, bc, cr, bct, crt = split_list(body.invars, [n_c, nb, nk, n_ct])
        new_body = with_invars(body, head + bc + bct + cr + crt)
        t_avals = [tangent_aval(a) for a, nz in zip(body_jaxpr.in_avals[nb:], carry_nz,
                                                    strict=True) if nz]
        new_cond = pad_inputs(cond_jaxpr.jaxpr, [], t_avals)
        return closed(new_cond), closed(new_body), consts, tuple(carry_nz)

    new_cond, new_body, consts, carry_nz = derived(
        "while_jvp", (cond_jaxpr, body_jaxpr), (const_nz, init_nz), make)
    consts_t = [t for t in body_consts_t if type(t) is not Zero]
    init_t = [instantiate(t) for t, nz in zip(carry_t, carry_nz, strict=True) if nz]
    outs = while_p.bind(*cond_consts, *consts, *body_consts, *consts_t, *carry, *init_t,
                        cond_jaxpr=new_cond, body_jaxpr=new_body, cond_nconsts=cond_nconsts,
                        body_nconsts=len(consts) + nb + len(consts_t))
    primal_out, tangent_iter = outs[:nk], iter(outs[nk:])
    tangent_out = [next(tangent_iter) if nz else Zero(tangent_aval(get_aval(p)))
                   for p, nz in zip(primal_out, carry_nz, strict=True)]
    return primal_out, tangent_out


def _while_transpose(cts, *operands, **params):
    raise ValueError(REVERSE_MODE_ERROR)


def _while_batch(trace, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size, axis_name = trace.axis_size, trace.axis_name
    vals, batched = move_to_front(vals, dims)
    nc, nb = cond_nconsts, body_nconsts
    key = (tuple(batched), axis_name, size)
    plan = derived("while_batch", (cond_jaxpr, body_jaxpr), key,
                   lambda: _while_batch_plan(cond_jaxpr, body_jaxpr, nc, nb, batched,
                                             axis_name, size))
    new_cond, new_body, carry_b, c_head, b_head, b_mid, pred_batched = plan
    cc, bc, carry = split_list(vals, [nc, nb])
    carry = [bdim_at_front(c, not_mapped, size) if b and not was else c
             for c, b, was in zip(carry, carry_b, batched[nc + nb:], strict=True)]
    c_ops = list(c_head) + cc
    b_ops = list(b_head) + (cc if pred_batched else []) + list(b_mid) + bc
    outs = while_p.bind(*c_ops, *b_ops, *carry, cond_jaxpr=new_cond, body_jaxpr=new_body,
                        cond_nconsts=len(c_ops), body_nconsts=len(b_ops))
    return outs, [0 if b else not_mapped for b in carry_b]


def _while_batch_plan(cond_jaxpr, body_jaxpr, nc, nb, batched, axis_name, size):
    """The batched cond and body, and what leads their operands. A batched predicate runs the
    loop while any lane's does, and lanes that are done keep their carry (a select per
    carry)."""
    cc_b, bc_b, init_b = split_list(batched, [nc, nb])
    nk = len(init_b)
    body, body_consts, in_b, _ = batch_fixed_point(
        body_jaxpr.jaxpr, bc_b + init_b, range(nb, nb + nk), range(nk), axis_name, size)
    carry_b = in_b[nb:]
    cond, cond_consts, pred_b = batch_jaxpr(cond_jaxpr.jaxpr, cc_b + carry_b, axis_name,
                                            size, [False])
    if not pred_b[0]:
        return closed(cond), closed(body), carry_b, cond_consts, [], body_consts, False
    carry_b = [True] * nk
    body, body_consts, _, _ = batch_fixed_point(
        body_jaxpr.jaxpr, bc_b + carry_b, range(nb, nb + nk), range(nk), axis_name, size)
    cond, cond_consts, _ = batch_jaxpr(cond_jaxpr.jaxpr, cc_b + carry_b, axis_name, size,
                                       [False])
    n_cc = len(cond_consts) + nc
    n_bc = len(body_consts) + nb

    def any_lane(*args):
        return [reduce_or(run_jaxpr(cond)(*args)[0], (0,))]

    def step(*args):
        c_args, b_args, carry = split_list(args, [n_cc, n_bc])
        pred = run_jaxpr(cond)(*c_args, *carry)[0]
        new = run_jaxpr(body)(*b_args, *carry)
        out = []
        for old, value in zip(carry, new, strict=True):
            shape = get_aval(old).shape
            which = pred if len(shape) == 1 else broadcast_in_dim(pred, shape, (0,))
            out.append(select_n(which, old, value))
        return out

    carry_avals = body.in_avals[n_bc:]
    new_cond, extra_c = trace_flat(any_lane, cond.in_avals)
    new_body, extra_b = trace_flat(step, cond.in_avals[:n_cc] + body.in_avals[:n_bc] +
                                   carry_avals)
    # Operands: (captured, cond consts, cond's operands) for the predicate; (captured, cond
    # consts, cond's operands, body consts, body's operands) for the step.
    return (new_cond, new_body, carry_b, list(extra_c) + list(cond_consts),
            list(extra_b) + list(cond_consts), body_consts, True)




# -- partial evaluation ----------------------------------------------------------------------

def _while_partial_eval_jaxpr(eqn, unknowns):
    """Carries that stay known (the predicate reading only known ones) are computed by a
    known loop; the unknown outputs come from the whole loop, staged (so a linearized loop
    can be evaluated, while transposing it raises JAX's error)."""
    params = eqn.params
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cc_uk, bc_uk, carry_uk = split_list(list(unknowns), [nc, nb])
    nk = len(carry_uk)
    everything = (None, eqn, [True] * nk, [])
    if any(cc_uk):
        return everything
    while True:
        known_body, _, out_uk, _ = partial_eval_jaxpr(body_jaxpr.jaxpr, bc_uk + carry_uk)
        grown = [o and not c for o, c in zip(out_uk, carry_uk, strict=True)]
        if not any(grown):
            break
        carry_uk = [o or c for o, c in zip(out_uk, carry_uk, strict=True)]
    if all(carry_uk):
        return everything
    known_cond, _, pred_uk, _ = partial_eval_jaxpr(cond_jaxpr.jaxpr, cc_uk + carry_uk)
    if pred_uk[0]:
        return everything
    known_outs = [v for v, u in zip(body_jaxpr.jaxpr.outvars, out_uk, strict=True) if not u]
    # known_body's outputs: the known outputs (in order), then residuals; keep the carries
    # that are known.
    kept, known_iter = [], iter(known_body.outvars[:len(known_outs)])
    for o_uk, c_uk in zip(out_uk, carry_uk, strict=True):
        if not o_uk:
            atom = next(known_iter)
            if not c_uk:
                kept.append(atom)
    known_body = with_outvars(known_body, kept)
    known_cond = with_outvars(known_cond, known_cond.outvars[:1])
    cc, bc, init = split_list(eqn.invars, [nc, nb])
    known_bc = [a for a, u in zip(bc, bc_uk, strict=True) if not u]
    known_init = [a for a, u in zip(init, carry_uk, strict=True) if not u]
    known_outvars = [v for v, u in zip(eqn.outvars, carry_uk, strict=True) if not u]
    known_eqn = JaxprEqn(while_p, cc + known_bc + known_init, known_outvars,
                         {"cond_jaxpr": closed(known_cond), "body_jaxpr": closed(known_body),
                          "cond_nconsts": nc, "body_nconsts": len(known_bc)}, source_info=eqn.source_info)
    unknown_outvars = [v if u else DropVar(v.aval)
                       for v, u in zip(eqn.outvars, carry_uk, strict=True)]
    unknown_eqn = JaxprEqn(while_p, eqn.invars, unknown_outvars, params, source_info=eqn.source_info)
    return known_eqn, unknown_eqn, carry_uk, []


while_p = HigherOrderPrimitive(
    "while",
    abstract_eval=_while_abstract_eval,
    impl=_while_impl,
    lower=_while_lower,
    jvp=_while_jvp,
    transpose=_while_transpose,
    batch=NeedsTrace(_while_batch),
    multiple_results=True,
    partial_eval=FROM_JAXPR_RULE,
    partial_eval_jaxpr=_while_partial_eval_jaxpr,
)


# -- the public functions --------------------------------------------------------------------

@purity.checks_loop_body("while_loop", 0, 1)
@ref_threading.threads_refs(ref_threading.while_loop)
def while_loop(cond_fun, body_fun, init_val):
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)`` is true.

    The carry must keep its pytree structure, shapes and dtypes (a weakly typed initial
    value, such as a Python scalar, is promoted to what the body makes of it). Reverse-mode
    differentiation is not supported (use :func:`scan` or :func:`fori_loop` with static
    bounds); forward mode is.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.while_loop(lambda c: c < 10, lambda c: c * 2, 1)
    Array(16, dtype=int32, weak_type=True)
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.jax_disable_jit:
        try:
            val = tree_map(to_operand, init_val)
            while cond_fun(val):
                val = tree_map(to_operand, body_fun(val))
            return val
        except errors.ConcretizationTypeError:
            pass  # e.g. under vmap: fall back to the primitive
    flat, in_tree = tree_flatten((init_val,))
    flat = [to_operand(x) for x in flat]
    carry_tree = tree_flatten(init_val)[1]
    avals = [get_aval(x) for x in flat]
    cond_t, body_t = _trace_while(cond_fun, body_fun, in_tree, avals)
    if len(body_t.out_avals) != len(avals):
        check_carry_type("while_loop body", body_fun, carry_tree, avals, body_t.out_tree,
                         body_t.out_avals)
    flat, changed = promote_weak_carries(flat, avals, body_t.out_avals)
    if changed:
        avals = [get_aval(x) for x in flat]
        cond_t, body_t = _trace_while(cond_fun, body_fun, in_tree, avals)
    check_carry_type("while_loop body", body_fun, carry_tree, avals, body_t.out_tree,
                     body_t.out_avals)
    outs = _bind_while(cond_t, body_t, flat)
    return tree_unflatten(body_t.out_tree, outs)


def _bind_while(cond_t, body_t, init):
    """Bind ``while``, as JAX does: a carry the body returns unchanged and the predicate
    does not read becomes a body const."""
    cond, body = cond_t.jaxpr.jaxpr, body_t.jaxpr.jaxpr
    n_cc, n_bc = len(cond_t.consts), len(body_t.consts)
    read_by_cond = _read_vars(cond)
    moved = [body.outvars[k] is body.invars[n_bc + k] and
             cond.invars[n_cc + k] not in read_by_cond for k in range(len(init))]
    if any(moved):
        def kept(values):
            return [v for v, m in zip(values, moved, strict=True) if not m]

        c_consts, c_carry = split_list(cond.invars, [n_cc])[:2]
        b_consts, b_carry = split_list(body.invars, [n_bc])[:2]
        cond = with_invars(cond, c_consts + kept(c_carry))
        body = Jaxpr([], [v for v, m in zip(b_carry, moved, strict=True) if m] + b_consts +
                     kept(b_carry), kept(body.outvars), body.eqns)
    body_consts = [x for x, m in zip(init, moved, strict=True) if m] + list(body_t.consts)
    carry = [x for x, m in zip(init, moved, strict=True) if not m]
    outs = iter(while_p.bind(*cond_t.consts, *body_consts, *carry, cond_jaxpr=closed(cond),
                             body_jaxpr=closed(body), cond_nconsts=n_cc,
                             body_nconsts=len(body_consts)))
    return [x if m else next(outs) for x, m in zip(init, moved, strict=True)]


def _read_vars(jaxpr) -> set:
    """The variables a jaxpr's equations and outputs read."""
    read = {a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)}
    read.update(a for a in jaxpr.outvars if isinstance(a, Var))
    return read


def _trace_while(cond_fun, body_fun, in_tree, avals):
    cond_t = trace_function(cond_fun, in_tree, avals, "while_cond", threads_refs=True,
                            reuse=True)
    body_t = trace_function(body_fun, in_tree, avals, "while_body", threads_refs=True,
                            reuse=True)
    if cond_t.out_tree.num_leaves != 1 or _is_node(cond_t.out_tree):
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree "
                        f"{cond_t.out_tree}.")
    pred = cond_t.out_avals[0]
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"{list(cond_t.out_avals)}.")
    return cond_t, body_t


def _is_node(treedef) -> bool:
    return not treedef_is_leaf(treedef)


@purity.checks_loop_body("fori_loop", 2)
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``; returns ``val``.

    With static bounds (Python ints or concrete values) the loop is a :func:`scan` of
    ``upper - lower`` steps, so it is reverse-differentiable; traced bounds make it a
    :func:`while_loop`. The body is traced once.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> array = jnp.arange(10)
    >>> lax.fori_loop(0, 10, lambda i, x: x + array[i], 0)
    Array(45, dtype=int32)
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _bounds_dtype(lower, upper)
    static = _static_bounds(lower, upper)
    if static is not None:
        lower_, upper_ = static
        length = max(upper_ - lower_, 0)
        if config.jax_disable_jit and length == 0:
            return init_val

        def scan_body(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None

        (_, result), _ = scan(scan_body, (lower_, init_val), None, length=length,
                              unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    lower = to_operand(lower)
    upper = to_operand(upper)
    if get_aval(lower).dtype != dtype:
        lower = convert_element_type(lower, dtype)
    if get_aval(upper).dtype != dtype:
        upper = convert_element_type(upper, dtype)

    def while_cond(carry):
        i, stop, _ = carry
        return lt(i, stop)

    def while_body(carry):
        i, stop, x = carry
        return add(i, _one_like(i)), stop, body_fun(i, x)

    _, _, result = while_loop(while_cond, while_body, (lower, upper, init_val))
    return result


def _one_like(i):
    aval = get_aval(i)
    return Array._from_numpy(np.ones((), aval.dtype), ShapedArray((), aval.dtype, aval.weak_type))


def _bounds_dtype(lower, upper):
    lower_dtype = dtypes.dtype(lower, canonicalize=True)
    upper_dtype = dtypes.dtype(upper, canonicalize=True)
    if lower_dtype == upper_dtype:
        return lower_dtype
    if dtypes.is_signed_integer(lower_dtype) and dtypes.is_signed_integer(upper_dtype):
        lower_weak, upper_weak = dtypes.is_weakly_typed(lower), dtypes.is_weakly_typed(upper)
        if lower_weak and not upper_weak:
            return upper_dtype
        if upper_weak and not lower_weak:
            return lower_dtype
    raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                    f"{lower_dtype.name} and {upper_dtype.name}")


def _static_bounds(lower, upper):
    """``(int(lower), int(upper))`` when both are known now, else None."""
    for x in (lower, upper):
        if isinstance(x, Tracer) and x.to_concrete_value() is None:
            return None
    try:
        return int(lower), int(upper)
    except (TypeError, errors.ConcretizationTypeError):
        return None


__all__ = ["while_loop", "fori_loop", "while_p"]
