"""Derivative rules of ``scan``: jvp (a scan of the body's jvp, with a fixed point on which
carries have nonzero tangents), partial evaluation (a known scan stacking residuals as extra
outputs, an unknown scan reading them as extra xs) and transpose (a scan of the transposed
body run in the opposite direction, accumulating the consts' cotangents in its carry)."""

from __future__ import annotations

from xjax.core.ad_util import UndefinedPrimal, Zero, get_aval, is_undefined, tangent_aval
from xjax.core.jaxpr import DropVar, Jaxpr, JaxprEqn, Literal, Var
from xjax.control_flow.common import (closed, derived, online_partial_eval,
                                      partial_eval_jaxpr_forced, split_list, trace_flat,
                                      with_invars, with_outvars)
from xjax.control_flow.rules_common import jvp_fixed_point, nonzero_mask
from xjax.lax.ad_rules import add_tangents, instantiate, zeros_like_aval

_scan_p = None  # set by register(): the rules bind the primitive they belong to


def register(primitive):
    global _scan_p
    _scan_p = primitive
    from xjax.interpreters.partial_eval import partial_eval_jaxpr_rules, partial_eval_rules
    partial_eval_jaxpr_rules[primitive] = scan_partial_eval_jaxpr
    partial_eval_rules[primitive] = online_partial_eval(primitive, scan_partial_eval_jaxpr)


def _stacked(aval, length):
    from xjax.control_flow.scan import stacked_aval
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
    outs = _scan_p.bind(*consts, *c, *ct, *k, *kt, *x, *xt, reverse=reverse, length=length,
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
        known_eqn = JaxprEqn(_scan_p, known_in, known_outvars, dict(
            params, jaxpr=known_body, num_consts=sum(not u for u in const_uk),
            num_carry=sum(not u for u in carry_uk)))
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
    unknown_eqn = JaxprEqn(_scan_p, unknown_in, unknown_outvars, dict(
        params, jaxpr=unknown_body, num_consts=len(res_consts) + sum(const_uk),
        num_carry=sum(carry_uk)))
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
        prelude.append(JaxprEqn(eqn.primitive, invars, outvars, eqn.params))
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
    from xjax.interpreters.transpose import backward_pass
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
    outs = _scan_p.bind(*extra, *res_c, *acc0, *ck0, *res_x, *cy, reverse=not reverse,
                        length=length, jaxpr=body, num_consts=len(extra) + len(res_c),
                        num_carry=len(acc0) + nk, unroll=unroll)
    acc, ct_init, ct_xs = split_list(outs, [len(acc0), nk])
    acc_iter, xs_iter = iter(acc), iter(ct_xs)
    return ([next(acc_iter) if lin else None for lin in const_lin] +
            [c if is_undefined(a) else None for c, a in zip(ct_init, init, strict=True)] +
            [next(xs_iter) if lin else None for lin in xs_lin])
