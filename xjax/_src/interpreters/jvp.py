"""Forward mode: the JVP interpreter, with symbolic zero tangents (DESIGN.md §5).

A ``JVPTracer`` carries a primal (a value of the parent trace) and a tangent (a value of the
parent trace, or ``Zero``). Applying a primitive runs its ``jvp`` rule with the parent trace
current. Integer and boolean primals have ``float0`` tangents, which are always ``Zero``.
"""

from __future__ import annotations

from xjax._src.core.ad_util import (Zero, get_aval, is_differentiable,  # noqa: F401  (re-exported)
                               tangent_aval)
from xjax._src.core.array import Array
from xjax._src.core.primitive import NOT_DIFFERENTIABLE, Absent
from xjax._src.core.trace import Trace, Tracer, set_current_trace
from xjax._src.lax.ad_rules import add_tangents, instantiate, zeros_like_aval  # noqa: F401
from xjax._src.lax.operands import to_operand
from xjax._src.core.trace import current_trace


def _rule_tangent(primitive, tangent):
    """A jvp rule's tangent output as an array. jvp keeps the Python scalars and NumPy
    arrays it is given, and a rule may pass such a tangent on unchanged (``add``'s, when the
    other operand's tangent is zero); a primitive's outputs are arrays, so it is converted
    here. Primitives whose rule is the user's (``custom_jvp_call``, those made with
    ``jax.extend.core.Primitive``: marked with ``keeps_rule_values``) keep its values as
    they are, as JAX does."""
    if type(tangent) is Array or type(tangent) is Zero or isinstance(tangent, Tracer):
        return tangent
    if getattr(primitive, "keeps_rule_values", False):
        return tangent
    return to_operand(tangent)


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return get_aval(self.primal)

    def to_concrete_value(self):
        primal = self.primal
        if type(primal) is Array:
            return primal._value()
        if isinstance(primal, Tracer):
            return primal.to_concrete_value()
        return primal


class JVPTrace(Trace):
    """Applies primitives to (primal, tangent) pairs with their jvp rules."""

    __slots__ = ()

    def unpack(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero(tangent_aval(get_aval(x)))

    def process_primitive(self, primitive, args, params):
        primals, tangents = [], []
        for x in args:
            primal, tangent = self.unpack(x)
            primals.append(primal)
            tangents.append(tangent)
        with set_current_trace(self.parent):
            if all(type(t) is Zero for t in tangents):
                return primitive.bind(*primals, **params)
            rule = primitive.jvp
            if rule is NOT_DIFFERENTIABLE:  # integer/boolean outputs: zero tangents
                return primitive.bind(*primals, **params)
            if isinstance(rule, Absent):
                raise NotImplementedError(
                    f"Differentiation rule for '{primitive.name}' not implemented: "
                    f"{rule.reason}")
            primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.wrap(p, _rule_tangent(primitive, t))
                    for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.wrap(primal_out, _rule_tangent(primitive, tangent_out))

    def wrap(self, primal, tangent):
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)


def jvp_flat(flat_fun, primals, tangents):
    """Evaluate ``flat_fun`` (flat list in, flat list out) on primals and tangents under a new
    JVP trace whose parent is the current trace. Returns (primal outs, tangent outs), tangent
    outs possibly ``Zero``."""
    trace = JVPTrace(current_trace())
    tracers = [trace.wrap(p, t) for p, t in zip(primals, tangents, strict=True)]
    try:
        with set_current_trace(trace):
            outs = flat_fun(*tracers)
    finally:
        trace.active = False
    primal_outs, tangent_outs = [], []
    for out in outs:
        primal, tangent = trace.unpack(out)
        primal_outs.append(primal)
        tangent_outs.append(tangent)
    return primal_outs, tangent_outs
