"""Staging: tracing Python to a jaxpr (the interpreter behind ``jit`` and ``make_jaxpr``)."""

from __future__ import annotations

import inspect


from xjax._src.core import errors
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray, typed_shardings
from xjax._src.core.config import config
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, check_jaxpr
from xjax._src.core.trace import Trace, Tracer, set_current_trace
from xjax._src.interpreters.eval import concrete_operand
from xjax._src.core.trace import current_trace
from xjax._src.core.primitive import abstract_eval_typed, split_by_params
from xjax._src.core import source_info


class DebugInfo:
    """Where a traced function comes from, for error messages: name, file:line, argument names
    for each flat input, and what traced it (``jit``, ``make_jaxpr``, ...)."""

    __slots__ = ("func_name", "location", "arg_names", "traced_for")

    def __init__(self, traced_for: str, fun, arg_names):
        self.traced_for = traced_for
        self.func_name = getattr(fun, "__name__", type(fun).__name__)
        self.location = _source_location(fun)
        self.arg_names = list(arg_names)


def _source_location(fun) -> str:
    try:
        target = inspect.unwrap(fun)
        code = target.__code__
        return f"{code.co_filename}:{code.co_firstlineno}"
    except (AttributeError, ValueError, TypeError):
        return "<unknown>"


class StagingTracer(Tracer):
    """A value being staged: a jaxpr variable with its aval, and no concrete value."""

    # Not named ``var``: tracers share Array's method names (``x.var()`` is the variance).
    __slots__ = ("jaxpr_var",)

    def __init__(self, trace: "StagingTrace", var: Var):
        self._trace = trace
        self.jaxpr_var = var

    @property
    def aval(self):
        return self.jaxpr_var.aval


class StagingTrace(Trace):
    """Records each primitive application as an equation."""

    repr_name = "DynamicJaxprTrace"  # how tracers print, as in JAX and the seeds

    __slots__ = ("eqns", "invars", "constvars", "consts", "_const_ids", "debug_info")

    def __init__(self, parent, debug_info: DebugInfo | None = None):
        super().__init__(parent)
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._const_ids: dict[int, Var] = {}
        self.debug_info = debug_info

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def literal(self, value: Array) -> StagingTracer:
        """A tracer standing for the scalar constant ``value``, staged as a literal (what
        JAX's constant folding leaves of an operation on constants)."""
        return StagingTracer(self, Literal(value, value.aval))

    def to_atom(self, x):
        """The jaxpr atom for an operand: a variable, a literal, or a new constvar."""
        if type(x) is StagingTracer and x._trace is self:
            return x.jaxpr_var
        if isinstance(x, Tracer):
            if not x._trace.active or not x._trace.is_ancestor_of(self):
                raise errors.UnexpectedTracerError(
                    f"Encountered an unexpected tracer: {x}. It belongs to a transformation "
                    "that has already finished: the traced function stored it outside itself "
                    "(a global, a closure, an attribute). Return it instead.")
            return self._constvar(x, x.aval)
        npy, aval = concrete_operand(x)
        if aval.shape == ():
            return Literal(x if type(x) is Array else Array._from_numpy(npy, aval), aval)
        return self._constvar(x if type(x) is Array else Array._from_numpy(npy, aval), aval)

    def _constvar(self, value, aval) -> Var:
        var = self._const_ids.get(id(value))
        if var is None:
            var = Var(aval)
            self._const_ids[id(value)] = var
            self.constvars.append(var)
            self.consts.append(value)
        return var

    def process_primitive(self, primitive, args, params):
        # The hot path of tracing: this trace's own tracers are read inline.
        atoms, avals = [], []
        for x in args:
            atom = (x.jaxpr_var if type(x) is StagingTracer and x._trace is self
                    else self.to_atom(x))
            atoms.append(atom)
            avals.append(atom.aval)
        out_avals = (abstract_eval_typed(primitive, avals, params)
                     if typed_shardings[0] or primitive in split_by_params
                     else primitive.abstract_eval(*avals, **params))
        if primitive.multiple_results:
            outvars = [Var(a) for a in out_avals]
            self.eqns.append(JaxprEqn(primitive, atoms, outvars, params, source_info.current()))
            return [StagingTracer(self, v) for v in outvars]
        var = Var(out_avals)
        self.eqns.append(JaxprEqn(primitive, atoms, [var], params, source_info.current()))
        return StagingTracer(self, var)

    def to_jaxpr(self, outs) -> ClosedJaxpr:
        outvars = [self.to_atom(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns, self.debug_info)
        if config.xjax_check_jaxprs:
            check_jaxpr(jaxpr)
        return ClosedJaxpr(jaxpr, self.consts)

    def describe(self, tracer) -> str:
        """Explain which traced function and which arguments a tracer's value depends on."""
        info = self.debug_info
        if info is None:
            return ""
        text = (f"The error occurred while tracing the function {info.func_name} at "
                f"{info.location} for {info.traced_for}.")
        names = self._argument_names(tracer.jaxpr_var)
        if names:
            which = ("the argument " + names[0] if len(names) == 1 else
                     "the arguments " + ", ".join(names))
            text += (" This concrete value was not available in Python because it depends on "
                     f"the value of {which}.")
        return text

    def _argument_names(self, var) -> list[str]:
        # Built only when an error is reported: tracing keeps no per-variable index.
        producers = {v: eqn for eqn in self.eqns for v in eqn.outvars}
        seen, stack, found = set(), [var], set()
        position = {v: i for i, v in enumerate(self.invars)}
        while stack:
            v = stack.pop()
            if v in seen or type(v) is Literal:
                continue
            seen.add(v)
            if v in position:
                found.add(position[v])
            eqn = producers.get(v)
            if eqn is not None:
                stack.extend(eqn.invars)
        names = self.debug_info.arg_names
        return [names[i] for i in sorted(found) if i < len(names)]


def trace_to_jaxpr(flat_fun, in_avals, debug_info: DebugInfo | None = None):
    """Trace ``flat_fun`` (flat arrays in, flat list out) on ``in_avals`` to a ClosedJaxpr."""
    trace = StagingTrace(current_trace(), debug_info)
    in_tracers = [trace.new_arg(aval) for aval in in_avals]
    try:
        with set_current_trace(trace):
            outs = flat_fun(*in_tracers)
        return trace.to_jaxpr(outs)
    finally:
        trace.active = False
