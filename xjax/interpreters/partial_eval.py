"""Partial evaluation: computing what is known now and staging what is not.

``PartialStagingTrace`` is a staging trace that forwards every primitive whose operands are
all known (none is one of its own tracers) to its parent trace, and stages the rest. Under
a JVP trace whose tangents are its tracers, it splits a program into the primal computation
(done now, by the parent) and the linear tangent computation (a jaxpr whose constvars are
the residuals): that is ``linearize``.

``partial_eval_jaxpr`` does the same split on a jaxpr, for higher-order primitives (``jit``,
control flow) met with some operands known and some not.
"""

from __future__ import annotations

from xjax.core.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from xjax.core.trace import set_current_trace
from xjax.interpreters.staging import StagingTrace, StagingTracer

# primitive -> rule(trace, args, params) staging what is unknown and computing the rest.
partial_eval_rules: dict = {}


class PartialStagingTrace(StagingTrace):
    """A staging trace that evaluates known-only applications with its parent."""

    __slots__ = ()

    def is_unknown(self, x) -> bool:
        return type(x) is StagingTracer and x._trace is self

    def process_primitive(self, primitive, args, params):
        if not any(self.is_unknown(x) for x in args):
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None:
            return rule(self, args, params)
        return super().process_primitive(primitive, args, params)


# primitive -> rule(eqn, in_unknowns) -> (known_eqn, unknown_eqn, out_unknowns, residuals):
# how an equation holding a jaxpr splits when only some operands are known, so that its known
# outputs stay known (without it the whole equation, primal parts too, would be unknown).
partial_eval_jaxpr_rules: dict = {}


def partial_eval_jaxpr(jaxpr: Jaxpr, in_unknowns):
    """Split ``jaxpr`` (no constvars) by which inputs are unknown.

    Returns ``(known, unknown, out_unknowns, num_residuals)``: ``known`` maps the known inputs
    to (known outputs..., residuals...); ``unknown`` maps (residuals..., unknown inputs...)
    to the unknown outputs. An equation is unknown when any operand is; equations holding
    jaxprs split by their ``partial_eval_jaxpr_rules``.
    """
    if jaxpr.constvars:
        raise ValueError("partial_eval_jaxpr expects a jaxpr whose consts are arguments")
    unknown_vars = {v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        eqn_unknowns = [type(a) is not Literal and a in unknown_vars for a in eqn.invars]
        if not any(eqn_unknowns):
            known_eqns.append(eqn)
            continue
        rule = partial_eval_jaxpr_rules.get(eqn.primitive)
        if rule is None or all(eqn_unknowns):
            unknown_eqns.append(eqn)
            unknown_vars.update(v for v in eqn.outvars if type(v) is not DropVar)
            continue
        known_eqn, unknown_eqn, out_unknowns, _ = rule(eqn, eqn_unknowns)
        if known_eqn is not None:
            known_eqns.append(known_eqn)
        if unknown_eqn is not None:
            unknown_eqns.append(unknown_eqn)
        unknown_vars.update(v for v, u in zip(eqn.outvars, out_unknowns, strict=True)
                            if u and type(v) is not DropVar)
    out_unknowns = [type(v) is not Literal and v in unknown_vars for v in jaxpr.outvars]
    # Residuals: known variables the unknown side reads.
    residuals, seen = [], set()
    for eqn in unknown_eqns:
        for a in eqn.invars:
            if type(a) is not Literal and a not in unknown_vars and a not in seen:
                seen.add(a)
                residuals.append(a)
    known_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if not u]
    known_out = [v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if not u]
    known = Jaxpr([], known_in, known_out + residuals, known_eqns)
    unknown_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u]
    unknown_out = [v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if u]
    # Fresh binders for the residuals so the unknown jaxpr's inputs are its own.
    unknown = _rename_inputs(Jaxpr([], residuals + unknown_in, unknown_out, unknown_eqns))
    return known, unknown, out_unknowns, len(residuals)


def _rename_inputs(jaxpr: Jaxpr) -> Jaxpr:
    """Give every input its own Var (an input may also be an output or read twice)."""
    mapping = {v: Var(v.aval) for v in jaxpr.invars}

    def sub(a):
        return a if type(a) is Literal else mapping.get(a, a)

    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.invars], e.outvars, e.params)
            for e in jaxpr.eqns]
    return Jaxpr([], [mapping[v] for v in jaxpr.invars], [sub(v) for v in jaxpr.outvars],
                 eqns)


def closed(jaxpr: Jaxpr) -> ClosedJaxpr:
    return ClosedJaxpr(jaxpr, [])
