"""``HigherOrderPrimitive``: a primitive that holds jaxprs. Besides the six rules of every
primitive it takes its partial-evaluation rules, required like the others: how an application
splits into a known part, computed now, and an unknown part, staged, when only some operands
are known (without one, every output is unknown as soon as one operand is)."""

from __future__ import annotations

from xjax._src.core.ad_util import get_aval
from xjax._src.core.jaxpr import DropVar, JaxprEqn, Literal, Var
from xjax._src.core.primitive import FROM_ABSTRACT_EVAL, Absent, Primitive
from xjax._src.core.trace import set_current_trace
from xjax._src.core import source_info
from xjax._src.interpreters.partial_eval import partial_eval_jaxpr_rules, partial_eval_rules
from xjax._src.interpreters.staging import StagingTrace

# ``partial_eval=FROM_JAXPR_RULE``: the online rule runs the jaxpr-level rule on the one
# equation being applied (known part now, unknown part staged).
FROM_JAXPR_RULE = object()
# The partial evaluation of a primitive without a rule of its own.
ALL_UNKNOWN = Absent("every output is unknown when any operand is")


class HigherOrderPrimitive(Primitive):
    """A primitive holding jaxprs, with all its rules.

    Parameters
    ----------
    name : str
        The name jaxprs print.
    partial_eval : callable, FROM_JAXPR_RULE or Absent
        ``rule(trace, args, params)`` for the online partial evaluator
        (``PartialStagingTrace``), or ``FROM_JAXPR_RULE`` to derive it from
        ``partial_eval_jaxpr``, or ``Absent(reason)``: every output unknown when any
        operand is.
    partial_eval_jaxpr : callable or Absent
        ``rule(eqn, in_unknowns) -> (known_eqn, unknown_eqn, out_unknowns, residuals)``,
        splitting an equation of a jaxpr.
    **rules
        The six rules and options of :class:`~xjax._src.core.primitive.Primitive`.
    """

    __slots__ = ("partial_eval", "partial_eval_jaxpr")

    def __init__(self, name: str, *, partial_eval, partial_eval_jaxpr, **rules):
        rules.setdefault("sharding_rule", FROM_ABSTRACT_EVAL)  # typed by their jaxprs
        super().__init__(name, **rules)
        if partial_eval is FROM_JAXPR_RULE:
            if not callable(partial_eval_jaxpr):
                raise TypeError(f"primitive {name}: FROM_JAXPR_RULE needs partial_eval_jaxpr")
            partial_eval = online_partial_eval(self, partial_eval_jaxpr)
        for slot, rule, table in (("partial_eval", partial_eval, partial_eval_rules),
                                  ("partial_eval_jaxpr", partial_eval_jaxpr,
                                   partial_eval_jaxpr_rules)):
            if not (callable(rule) or isinstance(rule, Absent)):
                raise TypeError(f"primitive {name}: rule {slot} must be callable or Absent, "
                                f"got {rule!r}")
            setattr(self, slot, rule)
            if callable(rule):
                table[self] = rule


def online_partial_eval(primitive, jaxpr_rule):
    """A ``partial_eval_rules`` entry (for the online ``PartialStagingTrace``) made from the
    primitive's jaxpr-level rule: the known equation runs now with the parent trace, the
    unknown one is staged."""

    def rule(trace, args, params):
        unknowns = [trace.is_unknown(x) for x in args]
        invars = [Var(get_aval(x)) for x in args]
        out_avals = primitive.abstract_eval(*[v.aval for v in invars], **params)
        outvars = [Var(a) for a in out_avals]
        eqn = JaxprEqn(primitive, invars, outvars, params, source_info.current())
        known_eqn, unknown_eqn, _, _ = jaxpr_rule(eqn, unknowns)
        env = dict(zip(invars, args, strict=True))

        def read(atom):
            return atom.val if type(atom) is Literal else env[atom]

        if known_eqn is not None:
            with set_current_trace(trace.parent):
                outs = known_eqn.primitive.bind(*[read(a) for a in known_eqn.invars],
                                                **known_eqn.params)
            env.update(zip(known_eqn.outvars, outs, strict=True))
        if unknown_eqn is not None:
            outs = StagingTrace.process_primitive(trace, unknown_eqn.primitive,
                                                  [read(a) for a in unknown_eqn.invars],
                                                  unknown_eqn.params)
            env.update((v, o) for v, o in zip(unknown_eqn.outvars, outs, strict=True)
                       if type(v) is not DropVar)
        return [env[v] for v in outvars]

    return rule
