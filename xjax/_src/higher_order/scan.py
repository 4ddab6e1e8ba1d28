"""``lax.scan``: the ``scan`` primitive, a body jaxpr over (consts, carry, one slice of each
xs) giving (new carry, one slice of each ys). It lowers to a ``stablehlo.while`` over an
int32 counter that reads xs with ``dynamic_slice`` and writes ys with
``dynamic_update_slice``. Its derivative rules (jvp, partial evaluation, transpose) are here
too, after the other rules."""

from __future__ import annotations

import numpy as np

from xjax._src.core.array import as_numpy
from xjax._src.core import errors
from xjax._src.core.ad_util import get_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core import purity
from xjax._src.core.config import config
from xjax._src.core.jaxpr import Jaxpr, Var, eval_jaxpr
from xjax._src.higher_order.primitive import FROM_JAXPR_RULE, HigherOrderPrimitive
from xjax._src.core.pytree import tree_flatten, tree_map, tree_structure, tree_unflatten
from xjax._src.higher_order import ref_threading
from xjax._src.higher_order.common import (ShortAval, check_carry_type, closed, derived,
                                           promote_weak_carries, reuse_tracing, split_list,
                                           trace_function, typematch)
from xjax._src.higher_order.rules_common import batch_fixed_point
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, move_axis, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lowering import effects
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type
from xjax._src.lax.concat_pad import concatenate
from xjax._src.lax.shape import reshape
from xjax._src.lax.slicing import index_in_dim
from xjax._src.core.ad_util import UndefinedPrimal, Zero, is_undefined, tangent_aval
from xjax._src.core.jaxpr import DropVar, JaxprEqn, Literal
from xjax._src.higher_order.common import partial_eval_jaxpr_forced, trace_flat, with_outvars
from xjax._src.higher_order.rules_common import jvp_fixed_point, nonzero_mask
from xjax._src.lax.ad_rules import add_tangents, instantiate, zeros_like_aval
from xjax._src.interpreters.transpose import backward_pass


def stacked_aval(aval, length):
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


# -- the primitive ---------------------------------------------------------------------------

def _scan_abstract_eval(*avals, reverse, length, jaxpr, num_consts, num_carry, unroll):
    consts, carry, xs = split_list(avals, [num_consts, num_carry])
    expected = jaxpr.in_avals
    got = consts + carry + [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    if len(expected) != len(got) or not all(typematch(a, b) for a, b in
                                            zip(expected, got, strict=True)):
        raise TypeError(f"scan body takes types {[a.str_short() for a in expected]}, got "
                        f"{[a.str_short() for a in got]}")
    if any(x.shape[:1] != (length,) for x in xs):
        raise TypeError(f"scan of length {length} got xs of types "
                        f"{[x.str_short() for x in xs]}")
    carry_out, ys = split_list(jaxpr.out_avals, [num_carry])[:2]
    if not all(typematch(a, b) for a, b in zip(carry, carry_out, strict=True)):
        raise TypeError(f"scan carry types {[a.str_short() for a in carry]} differ from the "
                        f"body's carry outputs {[a.str_short() for a in carry_out]}")
    return list(carry_out) + [stacked_aval(a, length) for a in ys]


def _scan_impl(*args, reverse, length, jaxpr, num_consts, num_carry, unroll):
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    n_ys = len(jaxpr.out_avals) - num_carry
    ys = [[None] * length for _ in range(n_ys)]
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = eval_jaxpr(jaxpr.jaxpr, [], *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for buffer, y in zip(ys, outs[num_carry:], strict=True):
            buffer[i] = as_numpy(y)
    y_avals = jaxpr.out_avals[num_carry:]
    stacked = [np.stack(b).astype(a.dtype, copy=False) if length else
               np.zeros((0, *a.shape), a.dtype) for b, a in zip(ys, y_avals, strict=True)]
    return [as_numpy(c) for c in carry] + stacked


def _scan_lower(ctx, *operands, reverse, length, jaxpr, num_consts, num_carry, unroll):
    """A while loop over (counter, consts, xs, carry, ys buffers), ``unroll`` body copies per
    iteration, the remaining steps after the loop."""
    b = ctx.builder
    consts, carry, xs = split_list(list(operands), [num_consts, num_carry])
    y_avals = jaxpr.out_avals[num_carry:]
    ys = []
    for aval in y_avals:
        zero = b.constant(np.zeros((), aval.dtype))
        ys.append(b.op1("stablehlo.broadcast_in_dim", [zero],
                        tensor_type((length, *aval.shape), aval.dtype),
                        {"broadcast_dimensions": i64_array([])}))
    counter = b.constant(np.zeros((), np.int32))
    step = _StepEmitter(jaxpr, length, reverse, num_consts, num_carry, len(xs))
    unroll = max(int(unroll), 1)
    n_blocks, remainder = divmod(length, unroll)
    state = [counter, *consts, *xs, *carry, *ys]
    if n_blocks == 1 and remainder == 0 or n_blocks == 0:
        n_straight = length
    else:
        n_straight = remainder
        state = _emit_loop(b, state, step, unroll, n_blocks * unroll,
                           effects.has_effects(jaxpr))
    for _ in range(n_straight):
        state = step(b, state)
    return state[1 + num_consts + len(xs):]  # the carry and the ys buffers


def _emit_loop(b, state, step, unroll, stop, with_effects=False):
    if with_effects:  # carry the side-effect token as the last loop value
        state = [*state, effects.current_token(b)]
    types = [b.types[v] for v in state]

    def cond_region(rb, args):
        limit = rb.constant(np.array(stop, np.int32))
        return [rb.op1("stablehlo.compare", [args[0], limit], "tensor<i1>",
                       {"comparison_direction": "#stablehlo<comparison_direction LT>",
                        "compare_type": "#stablehlo<comparison_type SIGNED>"})]

    def body_region(rb, args):
        values = list(args)
        if with_effects:
            effects.set_token(rb, values.pop())
        for _ in range(unroll):
            values = step(rb, values)
        return values + [effects.current_token(rb)] if with_effects else values

    outs = b.op("stablehlo.while", state, types,
                regions=[b.region(types, cond_region), b.region(types, body_region)])
    if with_effects:
        effects.set_token(b, outs[-1])
        outs = outs[:-1]
    return outs


class _StepEmitter:
    """Emits one scan step on the loop state (counter, consts, xs, carry, ys buffers)."""

    def __init__(self, jaxpr, length, reverse, num_consts, num_carry, num_xs):
        self.jaxpr = jaxpr
        self.length = length
        self.reverse = reverse
        self.sizes = [num_consts, num_xs, num_carry]

    def __call__(self, b, state):
        counter = state[0]
        consts, xs, carry, ys = split_list(state[1:], self.sizes)
        i32 = "tensor<i32>"
        index = counter
        if self.reverse:
            last = b.constant(np.array(self.length - 1, np.int32))
            index = b.op1("stablehlo.subtract", [last, counter], i32)
        zero = b.constant(np.zeros((), np.int32))
        x_slices = []
        for x, aval in zip(xs, self.jaxpr.in_avals[len(consts) + len(carry):], strict=True):
            starts = [index] + [zero] * len(aval.shape)
            piece = b.op1("stablehlo.dynamic_slice", [x, *starts],
                          tensor_type((1, *aval.shape), aval.dtype),
                          {"slice_sizes": i64_array([1, *aval.shape])})
            x_slices.append(b.op1("stablehlo.reshape", [piece], aval_type(aval)))
        outs = lower_jaxpr_body(b, self.jaxpr.jaxpr, [], consts + carry + x_slices)
        new_carry, new_ys = outs[:len(carry)], outs[len(carry):]
        updated = []
        for buffer, y, aval in zip(ys, new_ys, self.jaxpr.out_avals[len(carry):], strict=True):
            block = b.op1("stablehlo.reshape", [y], tensor_type((1, *aval.shape), aval.dtype))
            starts = [index] + [zero] * len(aval.shape)
            updated.append(b.op1("stablehlo.dynamic_update_slice", [buffer, block, *starts],
                                 b.types[buffer]))
        one = b.constant(np.ones((), np.int32))
        counter = b.op1("stablehlo.add", [counter, one], i32)
        return [counter, *consts, *xs, *new_carry, *updated]


def _scan_batch(trace, vals, dims, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
    size, axis_name = trace.axis_size, trace.axis_name
    nc, nk = num_consts, num_carry
    consts, init, xs = split_list(vals, [nc, nk])
    c_dims, k_dims, x_dims = split_list(dims, [nc, nk])
    consts = [c if d is not_mapped else move_axis(c, d, 0)
              for c, d in zip(consts, c_dims, strict=True)]
    init = [c if d is not_mapped else move_axis(c, d, 0)
            for c, d in zip(init, k_dims, strict=True)]
    xs = [x if d is not_mapped else move_axis(x, d, 1) for x, d in zip(xs, x_dims, strict=True)]
    in_batched = tuple(d is not not_mapped for d in dims)

    def make():
        body, body_consts, in_b, out_b = batch_fixed_point(
            jaxpr.jaxpr, in_batched, range(nc, nc + nk), range(nk), axis_name, size)
        return closed(body), body_consts, in_b[nc:nc + nk], out_b[nk:]

    body, body_consts, carry_b, ys_b = derived("scan_batch", jaxpr,
                                               (in_batched, axis_name, size), make)
    init = [bdim_at_front(c, d, size) if b and d is not_mapped else c
            for c, d, b in zip(init, k_dims, carry_b, strict=True)]
    outs = scan_p.bind(*body_consts, *consts, *init, *xs, reverse=reverse, length=length,
                       jaxpr=body, num_consts=len(body_consts) + nc, num_carry=nk,
                       unroll=unroll)
    out_dims = [0 if b else not_mapped for b in carry_b] + [1 if b else not_mapped
                                                            for b in ys_b]
    return outs, out_dims


# -- derivative rules: jvp (a scan of the body's jvp, with a fixed point on which carries
# have nonzero tangents), partial evaluation (a known scan stacking residuals as extra
# outputs, an unknown scan reading them as extra xs) and transpose (a scan of the transposed
# body run in the opposite direction, accumulating the consts' cotangents in its carry) --

def _stacked(aval, length):
    return stacked_aval(aval, length)


# -- jvp -------------------------------------------------------------------------------------

def scan_jvp(primals, tangents, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    nx = len(primals) - nc - nk
    ny = len(jaxpr.out_avals) - nk
    nonzero = nonzero_mask(tangents)

    def make():
        body, consts, in_nz, out_nz = jvp_fixed_point(jaxpr.jaxpr, nonzero,
                                                      range(nc, nc + nk), range(nk))
        const_nz, carry_nz, xs_nz = split_list(in_nz, [nc, nk])
        ys_nz = out_nz[nk:]
        n_ct, n_kt = sum(const_nz), sum(carry_nz)
        head, c, k, x, ct, kt, xt = split_list(body.invars, [len(consts), nc, nk, nx, n_ct,
                                                             n_kt])
        p_carry, p_ys, t_carry, t_ys = split_list(body.outvars, [nk, ny, n_kt])
        new = Jaxpr([], head + c + ct + k + kt + x + xt, p_carry + t_carry + p_ys + t_ys,
                    body.eqns)
        return closed(new), consts, tuple(carry_nz), tuple(ys_nz)

    body, consts, carry_nz, ys_nz = derived("scan_jvp", jaxpr, nonzero, make)
    c, k, x = split_list(primals, [nc, nk])
    ct, kt, xt = split_list(tangents, [nc, nk])
    ct = [t for t in ct if type(t) is not Zero]
    xt = [t for t in xt if type(t) is not Zero]
    kt = [instantiate(t) for t, nz in zip(kt, carry_nz, strict=True) if nz]
    outs = scan_p.bind(*consts, *c, *ct, *k, *kt, *x, *xt, reverse=reverse, length=length,
                        jaxpr=body, num_consts=len(consts) + nc + len(ct),
                        num_carry=nk + len(kt), unroll=unroll)
    carry_out, carry_t, ys, ys_t = split_list(outs, [nk, len(kt), ny])
    carry_t_iter, ys_t_iter = iter(carry_t), iter(ys_t)
    tangent_carry = [next(carry_t_iter) if nz else Zero(tangent_aval(get_aval(p)))
                     for p, nz in zip(carry_out, carry_nz, strict=True)]
    tangent_ys = [next(ys_t_iter) if nz else Zero(tangent_aval(get_aval(p)))
                  for p, nz in zip(ys, ys_nz, strict=True)]
    return carry_out + ys, tangent_carry + tangent_ys


# -- partial evaluation ----------------------------------------------------------------------

def scan_partial_eval_jaxpr(eqn, unknowns):
    """Split a scan equation by which operands are unknown (see the module docstring).

    Residuals the unknown body reads are classified: a known const or a known xs operand is
    passed to the unknown scan as it is; anything else the known scan stacks as extra ys.
    """
    params = eqn.params
    jaxpr, length = params["jaxpr"], params["length"]
    nc, nk = params["num_consts"], params["num_carry"]
    ny = len(jaxpr.out_avals) - nk

    def make():
        return _split_scan_body(jaxpr.jaxpr, list(unknowns), nc, nk, ny)

    split = derived("scan_pe", jaxpr, tuple(unknowns), make)
    known_body, unknown_body, carry_uk, ys_uk, residual_kinds = split
    const_uk, _, xs_uk = split_list(list(unknowns), [nc, nk])
    c, k, x = split_list(eqn.invars, [nc, nk])
    out_carry, out_ys = split_list(eqn.outvars, [nk])[:2]

    stacked = [Var(_stacked(a, length)) for kind, a in residual_kinds if kind == "stacked"]
    known_outvars = ([v for v, u in zip(out_carry, carry_uk, strict=True) if not u] +
                     [v for v, u in zip(out_ys, ys_uk, strict=True) if not u] + stacked)
    known_eqn = None
    if known_outvars:
        known_in = ([a for a, u in zip(c, const_uk, strict=True) if not u] +
                    [a for a, u in zip(k, carry_uk, strict=True) if not u] +
                    [a for a, u in zip(x, xs_uk, strict=True) if not u])
        known_eqn = JaxprEqn(scan_p, known_in, known_outvars, dict(
            params, jaxpr=known_body, num_consts=sum(not u for u in const_uk),
            num_carry=sum(not u for u in carry_uk)), source_info=eqn.source_info)
    unknown_outvars = ([v for v, u in zip(out_carry, carry_uk, strict=True) if u] +
                       [v for v, u in zip(out_ys, ys_uk, strict=True) if u])
    if not unknown_outvars:
        return known_eqn, None, [False] * (nk + ny), stacked
    res_consts, res_xs = [], []
    stacked_iter = iter(stacked)
    for kind, ref in residual_kinds:
        if kind == "const":
            res_consts.append(c[ref])
        elif kind == "literal":
            res_consts.append(ref)
        elif kind == "xs":
            res_xs.append(x[ref])
        else:
            res_xs.append(next(stacked_iter))
    # residual_kinds are ordered: consts and literals, then stacked, then xs (see below)
    unknown_in = (res_consts + [a for a, u in zip(c, const_uk, strict=True) if u] +
                  [a for a, u in zip(k, carry_uk, strict=True) if u] +
                  [a for a, u in zip(x, xs_uk, strict=True) if u] + res_xs)
    unknown_eqn = JaxprEqn(scan_p, unknown_in, unknown_outvars, dict(
        params, jaxpr=unknown_body, num_consts=len(res_consts) + sum(const_uk),
        num_carry=sum(carry_uk)), source_info=eqn.source_info)
    return known_eqn, unknown_eqn, list(carry_uk) + list(ys_uk), stacked


def _split_scan_body(body: Jaxpr, unknowns, nc, nk, ny):
    const_uk, init_uk, xs_uk = split_list(unknowns, [nc, nk])
    carry_uk = list(init_uk)
    while True:
        in_uk = const_uk + carry_uk + xs_uk
        known, unknown, out_uk, n_res = partial_eval_jaxpr_forced(
            body, in_uk, carry_uk + [False] * ny)
        grown = [o and not c for o, c in zip(out_uk[:nk], carry_uk, strict=True)]
        if not any(grown):
            break
        carry_uk = [o or c for o, c in zip(out_uk[:nk], carry_uk, strict=True)]
    ys_uk = out_uk[nk:]
    n_known_out = len(known.outvars) - n_res
    residuals = known.outvars[n_known_out:]
    res_vars = unknown.invars[:n_res]
    known_positions = {v: i for i, v in enumerate(body.invars)}

    def classify(atom):
        if type(atom) is Literal:
            return "literal", atom
        i = known_positions.get(atom)
        if i is not None and i < nc:
            return "const", i
        if i is not None and i >= nc + nk:
            return "xs", i - nc - nk
        return "stacked", atom.aval

    kinds = [classify(r) for r in residuals]
    kinds, residuals, res_vars, prelude = _rematerialize_invariants(
        known, residuals, res_vars, kinds, body.invars[:nc])
    order = ([j for j, (kind, _) in enumerate(kinds) if kind in ("const", "literal")] +
             [j for j, (kind, _) in enumerate(kinds) if kind == "stacked"] +
             [j for j, (kind, _) in enumerate(kinds) if kind == "xs"])
    kinds = [kinds[j] for j in order]
    residuals = [residuals[j] for j in order]
    res_vars = [res_vars[j] for j in order]
    n_front = sum(kind in ("const", "literal") for kind, _ in kinds)
    n_stacked = sum(kind == "stacked" for kind, _ in kinds)
    stacked_res = [r for r, (kind, _) in zip(residuals, kinds, strict=True) if kind == "stacked"]
    known_body = with_outvars(known, known.outvars[:n_known_out] + stacked_res)
    front, mid, back = split_list(res_vars, [n_front, n_stacked])
    unknown_in = unknown.invars[n_res:]
    n_cu, n_ku = sum(const_uk), sum(carry_uk)
    cu, ku, xu = split_list(unknown_in, [n_cu, n_ku])
    unknown_body = Jaxpr([], front + cu + ku + xu + mid + back, unknown.outvars,
                         prelude + list(unknown.eqns))
    return closed(known_body), closed(unknown_body), tuple(carry_uk), tuple(ys_uk), kinds


def _rematerialize_invariants(known, residuals, res_vars, kinds, const_vars):
    """Residuals computed from the consts alone (loop invariants, e.g. ``exp(w)``) are not
    stacked per iteration: the unknown body recomputes them from the consts (compiled, XLA
    hoists them out of the loop). Returns the new (kinds, residuals, res_vars) and the
    equations the unknown body runs first."""
    const_vars = list(const_vars)
    const_set = set(const_vars)
    varying = {v for v in known.invars if v not in const_set}
    producer = {}
    for eqn in known.eqns:
        if any(isinstance(a, Var) and a in varying for a in eqn.invars):
            varying.update(eqn.outvars)
        for v in eqn.outvars:
            producer[v] = eqn
    chosen = [kind == "stacked" and r not in varying and r in producer
              for r, (kind, _) in zip(residuals, kinds, strict=True)]
    if not any(chosen):
        return kinds, residuals, res_vars, []
    needed, stack = set(), [r for r, c in zip(residuals, chosen, strict=True) if c]
    while stack:
        eqn = producer.get(stack.pop())
        if eqn is not None and id(eqn) not in needed:
            needed.add(id(eqn))
            stack.extend(a for a in eqn.invars if isinstance(a, Var))
    rename = {r: v for r, v, c in zip(residuals, res_vars, chosen, strict=True) if c}
    const_inputs = {}

    def read(atom):
        if not isinstance(atom, Var):
            return atom
        if atom in const_set:
            return const_inputs.setdefault(atom, Var(atom.aval))
        return rename[atom]

    prelude = []
    for eqn in known.eqns:
        if id(eqn) not in needed:
            continue
        invars = [read(a) for a in eqn.invars]
        outvars = []
        for v in eqn.outvars:
            if type(v) is not DropVar and v not in rename:
                rename[v] = Var(v.aval)
            outvars.append(v if type(v) is DropVar else rename[v])
        prelude.append(JaxprEqn(eqn.primitive, invars, outvars, eqn.params, source_info=eqn.source_info))
    keep = [not c for c in chosen]
    kinds = [k for k, m in zip(kinds, keep, strict=True) if m]
    residuals = [r for r, m in zip(residuals, keep, strict=True) if m]
    res_vars = [v for v, m in zip(res_vars, keep, strict=True) if m]
    for var, new in const_inputs.items():
        kinds.append(("const", const_vars.index(var)))
        residuals.append(var)
        res_vars.append(new)
    return kinds, residuals, res_vars, prelude


# -- transpose -------------------------------------------------------------------------------

def scan_transpose(cts, *args, reverse, length, jaxpr, num_consts, num_carry, unroll):
    """The transposed scan runs backwards: carry (const cotangent sums, carry cotangents),
    xs (residual xs, ys cotangents), ys (cotangents of the linear xs)."""
    nc, nk = num_consts, num_carry
    consts, init, xs = split_list(args, [nc, nk])
    ct_carry, ct_ys = split_list(list(cts), [nk])[:2]
    const_lin = tuple(is_undefined(a) for a in consts)
    xs_lin = tuple(is_undefined(a) for a in xs)
    ys_nz = nonzero_mask(ct_ys)
    in_avals = jaxpr.in_avals
    c_avals, k_avals, x_avals = split_list(in_avals, [nc, nk])
    y_avals = jaxpr.out_avals[nk:]

    def make():
        res_c = [a for a, lin in zip(c_avals, const_lin, strict=True) if not lin]
        lin_c = [tangent_aval(a) for a, lin in zip(c_avals, const_lin, strict=True) if lin]
        res_x = [a for a, lin in zip(x_avals, xs_lin, strict=True) if not lin]
        ct_y = [a for a, nz in zip(y_avals, ys_nz, strict=True) if nz]
        sizes = [len(res_c), len(lin_c), nk, len(res_x)]

        def body_t(*args):
            rc, acc, ck, rx, cy = split_list(args, sizes)
            rc_iter, rx_iter, cy_iter = iter(rc), iter(rx), iter(cy)
            linear_args = ([UndefinedPrimal(a) if lin else next(rc_iter)
                            for a, lin in zip(c_avals, const_lin, strict=True)] +
                           [UndefinedPrimal(a) for a in k_avals] +
                           [UndefinedPrimal(a) if lin else next(rx_iter)
                            for a, lin in zip(x_avals, xs_lin, strict=True)])
            cts_out = list(ck) + [next(cy_iter) if nz else Zero(a)
                                  for a, nz in zip(y_avals, ys_nz, strict=True)]
            results = backward_pass(jaxpr.jaxpr, [], linear_args, cts_out)
            r_c, r_k, r_x = split_list(results, [nc, nk])
            lin_ct = [r for r, lin in zip(r_c, const_lin, strict=True) if lin]
            new_acc = [instantiate(add_tangents(a, r)) for a, r in zip(acc, lin_ct, strict=True)]
            ct_xs = [instantiate(r) for r, lin in zip(r_x, xs_lin, strict=True) if lin]
            return new_acc + [instantiate(r) for r in r_k] + ct_xs

        body, extra = trace_flat(body_t, res_c + lin_c + list(k_avals) + res_x + ct_y)
        return body, extra, lin_c

    body, extra, lin_c = derived("scan_transpose", jaxpr, (const_lin, xs_lin, ys_nz), make)
    res_c = [a for a, lin in zip(consts, const_lin, strict=True) if not lin]
    res_x = [a for a, lin in zip(xs, xs_lin, strict=True) if not lin]
    acc0 = [zeros_like_aval(a) for a in lin_c]
    ck0 = [instantiate(c) for c in ct_carry]
    cy = [c for c in ct_ys if type(c) is not Zero]
    outs = scan_p.bind(*extra, *res_c, *acc0, *ck0, *res_x, *cy, reverse=not reverse,
                        length=length, jaxpr=body, num_consts=len(extra) + len(res_c),
                        num_carry=len(acc0) + nk, unroll=unroll)
    acc, ct_init, ct_xs = split_list(outs, [len(acc0), nk])
    acc_iter, xs_iter = iter(acc), iter(ct_xs)
    return ([next(acc_iter) if lin else None for lin in const_lin] +
            [c if is_undefined(a) else None for c, a in zip(ct_init, init, strict=True)] +
            [next(xs_iter) if lin else None for lin in xs_lin])


scan_p = HigherOrderPrimitive(
    "scan",
    abstract_eval=_scan_abstract_eval,
    impl=_scan_impl,
    lower=_scan_lower,
    jvp=scan_jvp,
    transpose=scan_transpose,
    batch=NeedsTrace(_scan_batch),
    multiple_results=True,
    partial_eval=FROM_JAXPR_RULE,
    partial_eval_jaxpr=scan_partial_eval_jaxpr,
)


# -- the public function ---------------------------------------------------------------------

@purity.checks_loop_body("scan", 0)
@ref_threading.threads_refs(ref_threading.scan)
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``, stacking the ``y``.

    Semantics::

        def scan(f, init, xs, length=None):
            if xs is None:
                xs = [None] * length
            carry = init
            ys = []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, np.stack(ys)

    Parameters
    ----------
    f : callable
        ``(carry, x) -> (carry, y)``; the carry keeps its structure, shapes and dtypes.
    init : pytree
        The initial carry.
    xs : pytree of arrays, optional
        Scanned along their leading axis (None: scan ``length`` steps over nothing).
    length : int, optional
        The number of steps (required when ``xs`` has no leaves).
    reverse : bool
        Scan from the end (``ys`` keep their positions).
    unroll : int or bool
        Body copies per compiled loop iteration (True: the whole loop).

    Returns
    -------
    (carry, ys)

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> carry, ys = lax.scan(lambda c, x: (c + x, c * 2), jnp.float32(0), jnp.arange(4.0))
    >>> carry, ys
    (Array(6., dtype=float32), Array([0., 0., 2., 6.], dtype=float32))
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be callable.")
    init_flat, init_tree = tree_flatten(init)
    xs_flat, xs_tree = tree_flatten(xs)
    init_flat = [to_operand(x) for x in init_flat]
    length = _infer_length(xs_flat, length)
    xs_flat = [to_operand(x) for x in xs_flat]
    if config.jax_disable_jit:
        return _scan_in_python(f, init_tree, init_flat, xs_tree, xs_flat, length, reverse)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype, get_aval(x).weak_type)
               for x in xs_flat]
    init_avals = [get_aval(x) for x in init_flat]
    traced, trees = _trace_body(f, init_tree, xs_tree, init_avals, x_avals)
    carry_tree, y_tree = trees
    n_carry = len(init_flat)
    if len(traced.out_avals[:carry_tree.num_leaves]) != n_carry or carry_tree != init_tree:
        check_carry_type("scan body", f, init_tree, init_avals, carry_tree,
                         traced.out_avals[:carry_tree.num_leaves])
    init_flat, changed = promote_weak_carries(init_flat, init_avals,
                                              traced.out_avals[:n_carry])
    if changed:
        init_avals = [get_aval(x) for x in init_flat]
        traced, (carry_tree, y_tree) = _trace_body(f, init_tree, xs_tree, init_avals, x_avals)
    check_carry_type("scan body", f, init_tree, init_avals, carry_tree,
                     traced.out_avals[:n_carry])
    unroll = _check_unroll(unroll, length)
    outs = _bind_scan(traced.jaxpr.jaxpr, list(traced.consts), init_flat, xs_flat,
                      reverse=bool(reverse), length=length, unroll=unroll)
    return (tree_unflatten(init_tree, outs[:n_carry]),
            tree_unflatten(y_tree, outs[n_carry:]))


def _bind_scan(body, consts, init, xs, **params):
    """Bind ``scan``, as JAX does: a carry the body returns unchanged becomes a const, and a
    ys output that is merely an xs slice is the xs operand itself."""
    nc, nk = len(consts), len(init)
    invars, outvars = body.invars, body.outvars
    moved = [outvars[k] is invars[nc + k] for k in range(nk)]
    xs_positions = {v: j for j, v in enumerate(invars[nc + nk:])}
    y_fwd = [xs_positions.get(v) if isinstance(v, Var) else None for v in outvars[nk:]]
    c_vars, k_vars, x_vars = split_list(invars, [nc, nk])
    new_invars = ([v for v, m in zip(k_vars, moved, strict=True) if m] + c_vars +
                  [v for v, m in zip(k_vars, moved, strict=True) if not m] + x_vars)
    new_outvars = ([v for v, m in zip(outvars[:nk], moved, strict=True) if not m] +
                   [v for v, f in zip(outvars[nk:], y_fwd, strict=True) if f is None])
    jaxpr = closed(Jaxpr([], new_invars, new_outvars, body.eqns, body.debug_info))
    new_consts = [x for x, m in zip(init, moved, strict=True) if m] + consts
    carry = [x for x, m in zip(init, moved, strict=True) if not m]
    outs = scan_p.bind(*new_consts, *carry, *xs, jaxpr=jaxpr, num_consts=len(new_consts),
                       num_carry=len(carry), **params)
    carry_out, ys = iter(outs[:len(carry)]), iter(outs[len(carry):])
    return ([x if m else next(carry_out) for x, m in zip(init, moved, strict=True)] +
            [next(ys) if f is None else xs[f] for f in y_fwd])


def _trace_body(f, init_tree, xs_tree, init_avals, x_avals):
    box = {}

    def pair_fun(carry, x):
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            shown = tree_map(lambda leaf: ShortAval(get_aval(to_operand(leaf))), out)
            raise TypeError(f"scan body output must be a pair, got {shown}.")
        box["trees"] = (tree_structure(out[0]), tree_structure(out[1]))
        return out[0], out[1]

    in_tree = tree_structure((tree_unflatten(init_tree, init_avals),
                              tree_unflatten(xs_tree, x_avals)))

    def trace():
        traced = trace_function(pair_fun, in_tree, init_avals + x_avals, "scan",
                                threads_refs=True)
        return traced, box["trees"]

    return reuse_tracing(f, (in_tree, tuple(init_avals), tuple(x_avals)), trace)


def _infer_length(xs_flat, length):
    try:
        lengths = [x.shape[0] for x in xs_flat]
    except AttributeError:
        missing = ", ".join(str(x) for x in xs_flat if not hasattr(x, "shape"))
        raise ValueError(f"scan got value with no leading axis to scan over: {missing}.") \
            from None
    if length is not None:
        try:
            length = int(length)
        except errors.ConcretizationTypeError:
            raise errors.ConcretizationTypeError(
                length, "The `length` argument to `scan` expects a concrete `int` value. For "
                "scan-like iteration with a dynamic length, use `while_loop` or "
                "`fori_loop`.") from None
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    unique = set(lengths)
    if len(unique) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in lengths)}.")
    if not unique:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def _check_unroll(unroll, length):
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    try:
        unroll = int(unroll)
    except (TypeError, errors.ConcretizationTypeError):
        raise errors.ConcretizationTypeError(
            unroll, "The `unroll` argument to `scan` expects a concrete `int` or `bool` "
            "value.") from None
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return unroll


def _scan_in_python(f, init_tree, init_flat, xs_tree, xs_flat, length, reverse):
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry = tree_unflatten(init_tree, init_flat)
    ys = []
    order = reversed(range(length)) if reverse else range(length)
    for i in order:
        x = tree_unflatten(xs_tree, [index_in_dim(v, i, keepdims=False) for v in xs_flat])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()

    def stack(*leaves):
        leaves = [to_operand(v) for v in leaves]
        return concatenate([reshape(v, (1, *get_aval(v).shape)) for v in leaves], 0)

    return carry, tree_map(stack, *ys)


__all__ = ["scan", "scan_p"]
