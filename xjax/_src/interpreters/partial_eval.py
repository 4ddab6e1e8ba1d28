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

from typing import NamedTuple

from xjax._src.core.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from xjax._src.core.trace import set_current_trace
from xjax._src.interpreters.staging import StagingTrace, StagingTracer
from xjax._src.lowering.effects import EFFECTFUL_PRIMITIVES, has_effects

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
    jaxprs split by their ``partial_eval_jaxpr_rules``. Both sides are freed of dead code
    (side effects stay).
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
    unknown_out = [v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if u]
    # Unknown work no unknown output reads (a tangent that meets stop_gradient) is dropped
    # first, so the known values only it read are neither residuals nor computed, as JAX.
    unknown_eqns, _ = dce_eqns(unknown_eqns, unknown_out)
    # Residuals: known variables the unknown side reads.
    residuals, seen = [], set()
    for eqn in unknown_eqns:
        for a in eqn.invars:
            if type(a) is not Literal and a not in unknown_vars and a not in seen:
                seen.add(a)
                residuals.append(a)
    known_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if not u]
    known_out = [v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if not u]
    known_eqns, _ = dce_eqns(known_eqns, known_out + residuals)
    known = Jaxpr([], known_in, known_out + residuals, known_eqns)
    unknown_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u]
    # Fresh binders for the residuals so the unknown jaxpr's inputs are its own.
    unknown = _rename_inputs(Jaxpr([], residuals + unknown_in, unknown_out, unknown_eqns))
    return known, unknown, out_unknowns, len(residuals)


def _rename_inputs(jaxpr: Jaxpr) -> Jaxpr:
    """Give every input its own Var (an input may also be an output or read twice)."""
    mapping = {v: Var(v.aval) for v in jaxpr.invars}

    def sub(a):
        return a if type(a) is Literal else mapping.get(a, a)

    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.invars], e.outvars, e.params,
                     e.source_info) for e in jaxpr.eqns]
    return Jaxpr([], [mapping[v] for v in jaxpr.invars], [sub(v) for v in jaxpr.outvars],
                 eqns)


def closed(jaxpr: Jaxpr) -> ClosedJaxpr:
    return ClosedJaxpr(jaxpr, [])


# -- policy-driven partial evaluation (checkpoint / remat) --

class RecomputeType:
    """A checkpoint policy's answer: recompute this equation's outputs in the backward
    pass (``jax.ad_checkpoint.Recompute`` is its one instance)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Recompute"


class SaveableType:
    """A checkpoint policy's answer: save this equation's outputs as residuals
    (``jax.ad_checkpoint.Saveable`` is its one instance)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Saveable"


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """A checkpoint policy's answer: save the outputs in memory space ``dst`` (moved back
    to ``src`` for the backward pass). xjax has one memory space, so this saves them."""

    src: str
    dst: str


def ensure_enum(case):
    """A policy's answer as ``Saveable``, ``Recompute`` or an ``Offloadable`` (booleans are
    ``Saveable``/``Recompute``); anything else is JAX's TypeError."""
    if isinstance(case, bool):
        return Saveable if case else Recompute
    if not isinstance(case, (RecomputeType, SaveableType, Offloadable)):
        msg = ("Value returned by a remat policy should be a bool or `ad_checkpoint.Recompute`,"
               " `ad_checkpoint.Saveable` or `ad_checkpoint.Offloadable(...)`. Got "
               f"{case} of type {type(case)}.")
        if case is Offloadable:
            msg += " Did you return `Offloadable` instead of an instantiated `Offloadable(...)`?"
        raise TypeError(msg)
    return case


def everything_saveable(*_, **__) -> bool:
    """Save every intermediate, as if ``checkpoint`` were not used (the policy of a plain
    ``grad``)."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save nothing but the inputs: recompute every intermediate in the backward pass (the
    default policy of ``checkpoint``)."""
    return False


def _is_effectful(eqn) -> bool:
    return eqn.primitive.name in EFFECTFUL_PRIMITIVES or any(
        has_effects(p) for p in eqn.params.values())


def partial_eval_jaxpr_policy(jaxpr: Jaxpr, in_unknowns, policy):
    """Split ``jaxpr`` (no constvars) by which inputs are unknown, saving for the unknown
    side only what ``policy`` allows.

    Like :func:`partial_eval_jaxpr`, but an equation whose operands are all known is asked
    of ``policy(primitive, *in_avals, **params)``: when it may be saved, its outputs become
    residuals if the unknown side reads them; otherwise the unknown side recomputes it (from
    the known inputs and the saved values). Side-effecting equations are never recomputed.
    Nested ``jit`` and ``checkpoint`` equations are inlined first, so the policy sees their
    equations (JAX likewise applies the outer policy inside them). Both sides are freed of
    dead code.

    Returns ``(known, unknown, out_unknowns, num_residuals)`` with the same layout as
    :func:`partial_eval_jaxpr`; a residual may be a known input forwarded unchanged.
    """
    if jaxpr.constvars:
        raise ValueError("partial_eval_jaxpr_policy expects a jaxpr whose consts are arguments")
    jaxpr = inline_calls(jaxpr)
    unknown_vars = {v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u}
    recomputed = set()  # known values the unknown side computes again itself
    known_eqns, unknown_eqns = [], []

    def add_known(eqn):
        known_eqns.append(eqn)
        if _is_effectful(eqn):
            return
        decision = ensure_enum(policy(eqn.primitive, *[a.aval for a in eqn.invars],
                                      **eqn.params))
        if decision is Recompute:
            unknown_eqns.append(eqn)
            recomputed.update(eqn.outvars)

    for eqn in jaxpr.eqns:
        eqn_unknowns = [type(a) is not Literal and a in unknown_vars for a in eqn.invars]
        if not any(eqn_unknowns):
            add_known(eqn)
            continue
        rule = partial_eval_jaxpr_rules.get(eqn.primitive)
        if rule is None or all(eqn_unknowns):
            unknown_eqns.append(eqn)
            unknown_vars.update(v for v in eqn.outvars if type(v) is not DropVar)
            continue
        known_eqn, unknown_eqn, out_unknowns, _ = rule(eqn, eqn_unknowns)
        if known_eqn is not None:
            add_known(known_eqn)
        if unknown_eqn is not None:
            unknown_eqns.append(unknown_eqn)
        unknown_vars.update(v for v, u in zip(eqn.outvars, out_unknowns, strict=True)
                            if u and type(v) is not DropVar)
    out_unknowns = [type(v) is not Literal and v in unknown_vars for v in jaxpr.outvars]
    unknown_out = [v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if u]
    unknown_eqns, needed = dce_eqns(unknown_eqns, unknown_out)
    # Residuals: known values the (pruned) unknown side reads but does not compute, in the
    # order the known side defines them.
    residuals = [v for v in _definition_order(jaxpr.invars, known_eqns)
                 if v in needed and v not in unknown_vars and v not in recomputed]
    known_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if not u]
    known_out = [v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if not u]
    known_eqns, _ = dce_eqns(known_eqns, known_out + residuals)
    known = Jaxpr([], known_in, known_out + residuals, known_eqns)
    unknown_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u]
    unknown = _rename_inputs(Jaxpr([], residuals + unknown_in, unknown_out, unknown_eqns))
    return known, unknown, out_unknowns, len(residuals)


def _definition_order(invars, eqns):
    yield from invars
    for eqn in eqns:
        yield from eqn.outvars


def dce_eqns(eqns, outvars):
    """The equations needed for ``outvars`` (and side effects), and the variables they and
    ``outvars`` read."""
    needed = {v for v in outvars if type(v) is not Literal}
    kept = []
    for eqn in reversed(eqns):
        if not _is_effectful(eqn) and not any(v in needed for v in eqn.outvars):
            continue
        kept.append(eqn)
        needed.update(a for a in eqn.invars if type(a) is not Literal)
    kept.reverse()
    return kept, needed


def inline_calls(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` with its ``jit`` and ``checkpoint`` equations (without consts of their own)
    replaced by their bodies, recursively; inlined bodies get fresh variables (one body may
    be called twice)."""
    if not any(_inlinable(e) for e in jaxpr.eqns):
        return jaxpr
    eqns = []
    outs = _inline_into(jaxpr, list(jaxpr.invars), eqns, fresh=False)
    return Jaxpr([], jaxpr.invars, outs, eqns, jaxpr.debug_info)


def _inlinable(eqn) -> bool:
    if eqn.primitive.name not in ("jit", "checkpoint"):
        return False
    body = eqn.params["jaxpr"]
    return isinstance(body, ClosedJaxpr) and not body.consts and not body.jaxpr.constvars


def _inline_into(jaxpr, args, eqns, fresh):
    """Append ``jaxpr``'s equations, applied to ``args``, to ``eqns``; return its outputs."""
    env = dict(zip(jaxpr.invars, args, strict=True))

    def read(a):
        return a if type(a) is Literal else env.get(a, a)

    for eqn in jaxpr.eqns:
        invars = [read(a) for a in eqn.invars]
        if _inlinable(eqn):
            outs = _inline_into(eqn.params["jaxpr"].jaxpr, invars, eqns, fresh=True)
            env.update(zip(eqn.outvars, outs, strict=True))
            continue
        outvars = [Var(v.aval) if fresh and type(v) is not DropVar else v
                   for v in eqn.outvars]
        env.update(zip(eqn.outvars, outvars, strict=True))
        eqns.append(JaxprEqn(eqn.primitive, invars, outvars, eqn.params, eqn.source_info))
    return [read(v) for v in jaxpr.outvars]
