"""Refs crossing a ``jit`` (or ``make_jaxpr``) boundary: as arguments or closed over.

The traced function sees the caller's Ref objects, rebound to the jaxpr's inputs: a Ref
argument's position becomes an input of the Ref's inner type, and a Ref the function closes
over is lifted into a new trailing input on first access (a lifting ref scope). Every Ref
whose value changed adds a trailing output. A call then passes the Refs' current values
and writes the new values back, so a cached executable always sees the Refs' state.
"""

from __future__ import annotations

from xjax._src.core.ref_avals import AbstractRef, is_ref
from xjax._src.interpreters import refs as ref_scopes
from xjax._src.interpreters.staging import trace_to_jaxpr
from xjax._src.higher_order.jit_call import compile_closed_jaxpr


class RefPlan:
    """How one traced signature threads Refs: which flat argument positions are Refs, which
    Refs it closes over, and which of both come back as trailing outputs."""

    __slots__ = ("ref_positions", "closure_refs", "n_out", "written_args", "written_closure",
                 "compiled", "closed", "name", "donated", "compiler_options")

    def __init__(self, ref_positions):
        self.ref_positions = ref_positions
        self.closure_refs = []
        self.n_out = 0
        self.written_args = []  # flat positions whose Ref the function wrote
        self.written_closure = []  # closed-over Refs the function wrote
        self.compiled = None

    def in_values(self, flat):
        """The operands for one call: Refs replaced by their current values, then the values
        of the closed-over Refs."""
        values = list(flat)
        for i in self.ref_positions:
            if not is_ref(values[i]):
                raise TypeError(f"expected a mutable array reference at flat argument {i}, "
                                f"got {type(values[i])}")
            values[i] = ref_scopes.read_value(values[i])
        values.extend(ref_scopes.read_value(r) for r in self.closure_refs)
        return values

    def write_back(self, flat, outs):
        """Store the Refs' new values (the trailing outputs); return the function's own."""
        outs = list(outs)
        extra = iter(outs[self.n_out:])
        for i in self.written_args:
            ref_scopes.write_value(flat[i], next(extra))
        for ref in self.written_closure:
            ref_scopes.write_value(ref, next(extra))
        return outs[:self.n_out]

    def bind_compile(self, closed, name, donated, compiler_options=None):
        self.closed, self.name, self.donated = closed, name, donated
        self.compiler_options = compiler_options

    def __call__(self, *flat):
        """A top-level call: compile once, run, write the Refs back."""
        if self.compiled is None:
            self.compiled = compile_closed_jaxpr(self.closed, self.name, self.donated,
                                                 self.compiler_options)
        return self.write_back(flat, self.compiled(*self.in_values(flat)))


def trace_with_refs(flat_fun, avals, info, flat_args=None):
    """``trace_to_jaxpr`` for jit and make_jaxpr, threading Refs: returns the ClosedJaxpr and
    a :class:`RefPlan`, or None when no Ref was passed or touched.

    ``flat_args`` (a callable giving the flat arguments) is needed when an aval is an
    AbstractRef: the function receives the caller's Ref objects there.
    """
    positions = [i for i, a in enumerate(avals) if type(a) is AbstractRef]
    arg_refs = flat_args() if positions else None
    if positions:
        _check_distinct(arg_refs, positions, info)
        avals = [a.inner_aval if type(a) is AbstractRef else a for a in avals]
    plan = RefPlan(positions)

    def threaded(*tracers):
        with ref_scopes.ref_scope(info.traced_for if info else "jit", lifting=True) as scope:
            refs = [arg_refs[i] for i in positions]
            inputs = [tracers[i] for i in positions]
            args = list(tracers)
            for i in positions:
                args[i] = arg_refs[i]
            try:
                with ref_scopes.bound(refs, inputs):
                    outs = list(flat_fun(*args))
                    _check_outputs(outs, info)
                    for i, ref, tracer in zip(positions, refs, inputs, strict=True):
                        if ref._value is not tracer:
                            plan.written_args.append(i)
                            outs.append(ref._value)
                plan.closure_refs = list(scope.saved)
                for ref in plan.closure_refs:
                    if ref._value is not ref_scopes.lifted_input(scope, ref):
                        plan.written_closure.append(ref)
                        outs.append(ref._value)
            finally:
                scope.restore()
        plan.n_out = len(outs) - len(plan.written_args) - len(plan.written_closure)
        return outs

    closed = trace_to_jaxpr(threaded, avals, info)
    if not positions and not plan.closure_refs:
        return closed, None
    return closed, plan


def _check_distinct(arg_refs, positions, info):
    names = info.arg_names if info is not None else []
    ref_scopes.check_distinct_refs(arg_refs, positions, names, getattr(info, "func_name", "fun"),
                                   getattr(info, "location", "<unknown>"),
                                   getattr(info, "traced_for", "jit"))


def _check_outputs(outs, info):
    if any(is_ref(x) for x in outs):
        where = f"{info.func_name} at {info.location}" if info else "fun"
        ref_scopes.check_no_ref_outputs(outs, where, info.traced_for if info else "jit")
