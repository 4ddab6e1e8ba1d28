"""Forward mode: the JVP interpreter, with symbolic zero tangents (DESIGN.md §5).

A ``JVPTracer`` carries a primal (a value of the parent trace) and a tangent (a value of the
parent trace, or ``Zero``). Applying a primitive runs its ``jvp`` rule with the parent trace
current. Integer and boolean primals have ``float0`` tangents, which are always ``Zero``.
"""

from __future__ import annotations

import numpy as np

from xjax.core import dtypes
from xjax.core.array import Array
from xjax.core.avals import ShapedArray
from xjax.core.primitive import Absent
from xjax.core.trace import Trace, Tracer, set_current_trace


class Zero:
    """A tangent known to be zero, standing for an array of ``aval``."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


def get_aval(x) -> ShapedArray:
    """The aval of an operand: Arrays and tracers carry one; others are concrete values."""
    aval = getattr(x, "aval", None)
    if type(aval) is ShapedArray:
        return aval
    from xjax.interpreters.eval import concrete_operand
    return concrete_operand(x)[1]


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of inexact values share their dtype; integers and booleans get float0."""
    if dtypes.is_float(aval.dtype) or dtypes.is_complex(aval.dtype):
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    return ShapedArray(aval.shape, dtypes.float0, False)


def is_differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_float(aval.dtype) or dtypes.is_complex(aval.dtype)


def zeros_like_aval(aval: ShapedArray):
    """An array of zeros of ``aval`` (built with lax so staging records a broadcast)."""
    if aval.dtype == dtypes.float0:
        return Array._from_numpy(np.zeros(aval.shape, dtypes.float0), aval)
    from xjax import lax
    return lax.full(aval.shape, 0, aval.dtype)


def instantiate(tangent, aval=None):
    """Replace a symbolic zero by zeros."""
    if type(tangent) is Zero:
        return zeros_like_aval(tangent.aval)
    return tangent


def add_tangents(x, y):
    """Sum of two tangents, either of which may be Zero."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    from xjax import lax
    return lax.add(x, y)


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
            if isinstance(rule, Absent):
                raise NotImplementedError(
                    f"Differentiation rule for '{primitive.name}' not implemented: "
                    f"{rule.reason}")
            primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.wrap(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.wrap(primal_out, tangent_out)

    def wrap(self, primal, tangent):
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)


# -- building jvp rules --

def jvp_by_parts(primitive, *rules):
    """A jvp rule from one rule per operand, ``rule(t, ans, *primals, **params)``, giving that
    operand's contribution to the output tangent (None: the operand is not differentiable).
    Contributions are summed; Zero tangents are skipped."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        total = Zero(tangent_aval(get_aval(ans)))
        for rule, t in zip(rules, tangents, strict=True):
            if type(t) is Zero or rule is None:
                continue
            total = add_tangents(total, rule(t, ans, *primals, **params))
        return ans, total

    return jvp


def linear_jvp(primitive):
    """The jvp rule of a primitive linear in all its operands: apply it to the tangents."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return ans, Zero(tangent_aval(get_aval(ans)))
        return ans, primitive.bind(*[instantiate(t) for t in tangents], **params)

    return jvp


def zero_jvp(primitive):
    """The jvp rule of a primitive whose output has no derivative (integer/bool outputs, or
    piecewise-constant functions like floor): the tangent is zero."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return ans, [Zero(tangent_aval(get_aval(a))) for a in ans]
        return ans, Zero(tangent_aval(get_aval(ans)))

    return jvp


def jvp_flat(flat_fun, primals, tangents):
    """Evaluate ``flat_fun`` (flat list in, flat list out) on primals and tangents under a new
    JVP trace whose parent is the current trace. Returns (primal outs, tangent outs), tangent
    outs possibly ``Zero``."""
    from xjax.core.trace import current_trace
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
