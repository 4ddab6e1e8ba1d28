"""Where a mutable array reference (``xjax.ref.Ref``) may be read and written while tracing.

xjax discharges Refs at trace time: a Ref holds its current value (an Array eagerly, a
tracer while being traced) and every write replaces that value with a functional update.
A value is only meaningful in the trace it belongs to, so each Ref also remembers its *home*:
the trace (and the ref scope, below) where its value lives. A write must store a value that
is valid at home: concrete, or a tracer of the home trace or of one of its ancestors.

Functions traced into a body (``jit``, ``scan``, ``while_loop``, ``cond``) open a *ref
scope*. When the body touches a Ref whose home is outside, the scope records it:

- a **lifting** scope (``jit``, ``make_jaxpr``) turns the Ref's value into a new input of its
  jaxpr on first access and returns the final value as an extra output, so one trace
  suffices and cached executables read the Ref's current value on every call;
- a **discovery** scope (control-flow bodies) lets the trace run, restores every Ref it saw
  when the body ends, and raises :class:`RefsWritten` naming the Refs the body wrote. The
  control-flow function then retraces with those Refs threaded through explicitly (as loop
  carries, or as cond operands and outputs): see ``xjax/control_flow/ref_threading.py``.

Transformations that do not thread Refs (``grad``, ``jvp``, ``vmap``, ``custom_jvp`` ...)
may read outer Refs (their values are constants there) but not store their own tracers into
them: that raises JAX's error.
"""

from __future__ import annotations

import contextlib
import threading

from xjax._src.core.ref_avals import AbstractRef, is_ref
from xjax._src.core.trace import Tracer, current_trace
from xjax._src.interpreters.batching import BatchTrace
from xjax._src.core import errors
from xjax._src.core.ad_util import get_aval
from xjax._src.lax.convert import _convert_element_type
from xjax._src.lax.operands import to_operand


def arg_operand(x):
    """A transformation's flat argument as a primitive operand; a Ref stays a Ref."""
    return x if is_ref(x) else to_operand(x)


def arg_aval(x):
    """The aval of a transformation's flat argument: a Ref's is its AbstractRef."""
    return x._aval if is_ref(x) else get_aval(x)


class RefsWritten(NotImplementedError):
    """A traced body wrote Refs that live outside it; the control-flow function that traced
    it catches this and retraces with ``refs`` threaded through. Raised where nobody catches
    it, it is a NotImplementedError naming what is not supported."""

    def __init__(self, refs, traced_for):
        super().__init__(
            f"a mutable array reference created outside of {traced_for} was written inside "
            f"it; xjax threads Refs through jit, scan, fori_loop, while_loop, cond and switch "
            f"bodies only")
        self.refs = refs


class RefScope:
    """One traced body's record of the outer Refs it touched."""

    __slots__ = ("trace", "lifting", "saved", "written", "lifted", "traced_for")

    def __init__(self, trace, lifting: bool, traced_for: str):
        self.trace = trace  # the body's trace (values of this trace are valid inside)
        self.lifting = lifting
        self.saved: dict = {}  # ref -> (value, scope, trace) before the body touched it
        self.written: dict = {}  # refs written, in order (a dict as an ordered set)
        self.lifted: dict = {}  # ref -> the input tracer a lifting scope made for it
        self.traced_for = traced_for

    def record(self, ref, writing: bool):
        if ref not in self.saved:
            self.saved[ref] = (ref._value, ref._scope, ref._trace)
            if self.lifting:  # the value becomes a new input of this body's jaxpr
                ref._value = self.lifted[ref] = self.trace.new_arg(ref._aval.inner_aval)
                ref._scope, ref._trace = self, self.trace
        if writing:
            self.written[ref] = None

    def restore(self):
        for ref, (value, scope, trace) in self.saved.items():
            ref._value, ref._scope, ref._trace = value, scope, trace


class _Scopes(threading.local):
    def __init__(self):
        self.stack: list[RefScope] = []


_scopes = _Scopes()


def innermost_scope() -> RefScope | None:
    stack = _scopes.stack
    return stack[-1] if stack else None


@contextlib.contextmanager
def ref_scope(traced_for: str, lifting: bool = False):
    """Open a ref scope for the body being traced now (its trace is the current one)."""
    scope = RefScope(current_trace(), lifting, traced_for)
    _scopes.stack.append(scope)
    try:
        yield scope
    finally:
        _scopes.stack.pop()
        if not lifting:
            scope.restore()


def discovering(traced_for: str, threads_refs: bool):
    """A discovery scope for a control-flow body: on a normal exit, raise
    :class:`RefsWritten` if the body wrote outer Refs (a NotImplementedError when the caller
    cannot thread them)."""
    return _Discovery(traced_for, threads_refs)


class _Discovery:
    __slots__ = ("_cm", "_scope", "traced_for", "threads_refs")

    def __init__(self, traced_for, threads_refs):
        self.traced_for = traced_for
        self.threads_refs = threads_refs

    def __enter__(self):
        self._cm = ref_scope(self.traced_for)
        self._scope = self._cm.__enter__()
        return self._scope

    def __exit__(self, exc_type, exc, tb):
        self._cm.__exit__(exc_type, exc, tb)
        if exc_type is None and self._scope.written:
            refs = list(self._scope.written)
            error = RefsWritten(refs, self.traced_for)
            if not self.threads_refs:
                raise NotImplementedError(str(error))
            raise error
        return False


def access(ref, writing: bool):
    """Record an access to ``ref`` in every open scope it is outer to; return the trace a
    value written now must be valid in."""
    stack = _scopes.stack
    if not stack:
        return ref._trace
    home_depth = -1
    scope = ref._scope
    if scope is not None:
        for depth, s in enumerate(stack):
            if s is scope:
                home_depth = depth
                break
    if home_depth == len(stack) - 1:
        return ref._trace
    for s in stack[home_depth + 1:]:  # outermost first: lifting scopes rebind the Ref
        s.record(ref, writing)
    innermost = stack[-1]
    return innermost.trace if not innermost.lifting else ref._trace


def read_value(ref):
    """The Ref's current value, as seen by the code running now."""
    access(ref, False)
    return ref._value


def write_value(ref, value, op: str = "swap"):
    """Replace the Ref's value (``value`` has the Ref's shape and dtype already); ``op``
    (``"swap"`` or ``"addupdate"``) names the write in errors."""
    home = access(ref, True)
    _check_not_batched_away(ref, op)
    if isinstance(value, Tracer):
        check_write(ref, value, home)
    ref._value = value


def write_back(ref, value):
    """Store a transformation's result for ``ref`` (a final value or a tangent), converted
    to the Ref's dtype and weak type (a Ref's type is fixed)."""
    aval = ref._aval
    value_aval = value.aval
    if value_aval.dtype != aval.dtype or value_aval.weak_type != aval.weak_type:
        value = _convert_element_type(value, aval.dtype, weak_type=aval.weak_type)
    write_value(ref, value)


def _check_not_batched_away(ref, op):
    """JAX's error for any write, batched value or not, made under a ``vmap`` that the Ref
    is not an argument of: its value would have to be one for all batch elements."""
    trace, home = current_trace(), ref._trace
    while trace is not None and trace is not home:
        if type(trace) is BatchTrace:
            what = "an addupdate operation" if op == "addupdate" else "a set/swap operation"
            raise Exception(  # noqa: TRY002  (JAX raises a bare Exception)
                f"performing {what} with vmapped value on an unbatched array reference of "
                f"type {ref._aval}. Move the array reference to be an argument to the "
                "vmapped function?")
        trace = trace.parent


def check_write(ref, value, home):
    """Raise JAX's error if ``value`` (a tracer) would not be valid where ``ref`` lives."""
    trace = value._trace
    if trace is home or (trace.active and trace.is_ancestor_of(home)):
        return
    kind = type(trace).__name__
    aval = ref._aval
    if kind == "JVPTrace" or kind == "PartialStagingTrace":
        raise Exception(  # noqa: TRY002  (JAX raises a bare Exception)
            "performing a set/swap operation with a differentiated value on a "
            f"non-differentiated array reference of type {aval}. Move the array reference to "
            "be an argument of the differentiated function?")
    if kind == "BatchTrace":
        raise Exception(  # noqa: TRY002
            f"performing a set/swap operation with vmapped value on an unbatched array "
            f"reference of type {aval}. Move the array reference to be an argument to the "
            "vmapped function?")
    if not trace.active:
        raise errors.UnexpectedTracerError(
            f"Encountered an unexpected tracer: {value}, written into a mutable array "
            f"reference of type {aval} after the transformation it belongs to ended.")
    raise NotImplementedError(
        f"a mutable array reference of type {aval} created outside of a traced function "
        "was written inside it; xjax threads Refs through jit, scan, fori_loop, "
        "while_loop, cond and switch only (not custom_jvp/custom_vjp, checkpoint, "
        "linear_solve or other traced functions)")


@contextlib.contextmanager
def bound(refs, values, avals=None):
    """Make each Ref's value the body's input ``values`` for the duration of the block (the
    Refs live in the innermost scope and the current trace meanwhile, typed ``avals`` when
    given: vmap's per-element types), then restore them."""
    scope, trace = innermost_scope(), current_trace()
    saved = [(r._value, r._scope, r._trace, r._aval) for r in refs]
    for r, v in zip(refs, values, strict=True):
        r._value, r._scope, r._trace = v, scope, trace
    if avals is not None:
        for r, aval in zip(refs, avals, strict=True):
            r._aval = aval
    try:
        yield
    finally:
        for r, (value, s, t, aval) in zip(refs, saved, strict=True):
            r._value, r._scope, r._trace, r._aval = value, s, t, aval


class RefArgs:
    """Refs among the flat arguments of a transformation that threads them through (vmap,
    jvp, linearize, vjp). The function is called with the Ref objects themselves, bound to
    the transformation's inputs (their current values), and the final values of the Refs it
    wrote come back as trailing outputs, for the caller to write back.

    Examples
    --------
    ``flat_fun`` sees ``refs.refs[k]`` at ``refs.positions[k]``::

        refs = RefArgs(leaves, positions)
        outs = transform(refs.threading(flat_fun), refs.values(leaves))
        own, finals = refs.split(outs)  # finals: one per refs.written
    """

    __slots__ = ("positions", "refs", "written", "n_out")

    def __init__(self, leaves, positions):
        self.positions = positions
        self.refs = [leaves[i] for i in positions]
        self.written: list = []  # indices into refs, of the Refs the function wrote
        self.n_out = 0

    def values(self, leaves) -> list:
        """``leaves`` with each Ref replaced by its current value."""
        values = list(leaves)
        for i, ref in zip(self.positions, self.refs, strict=True):
            values[i] = read_value(ref)
        return values

    def threading(self, flat_fun, avals=None):
        """``flat_fun`` taking the Refs' values and returning the written Refs' final values
        after its own outputs. ``avals``: the Refs' types inside (vmap's per-element types;
        None for a Ref that is passed as it is, not bound)."""
        def fun(*xs):
            args = list(xs)
            for i, ref in zip(self.positions, self.refs, strict=True):
                args[i] = ref
            bind = [k for k in range(len(self.refs)) if avals is None or avals[k] is not None]
            inputs = [xs[self.positions[k]] for k in bind]
            refs = [self.refs[k] for k in bind]
            with bound(refs, inputs, None if avals is None else [avals[k] for k in bind]):
                outs = list(flat_fun(*args))
                written = [k for k, r, x in zip(bind, refs, inputs, strict=True)
                           if r._value is not x]
                finals = [self.refs[k]._value for k in written]
            self.written, self.n_out = written, len(outs)
            return outs + finals
        return fun

    def split(self, outs):
        """The function's own outputs and the written Refs' final values."""
        return list(outs[:self.n_out]), list(outs[self.n_out:])

    def written_refs(self) -> list:
        return [self.refs[k] for k in self.written]


def check_distinct_refs(leaves, positions, names, func_name, location, traced_for):
    """JAX's ValueError when one Ref is passed twice among a function's flat arguments
    (``names``: one per flat argument)."""
    seen = {}
    for i in positions:
        first = seen.setdefault(id(leaves[i]), i)
        if first != i:
            def name(k):
                return names[k] if k < len(names) else f"args[{k}]"
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but when tracing {func_name} at {location} for {traced_for} the "
                f"mutable array reference of type {leaves[i].aval} appeared at both "
                f"{name(first)} and {name(i)}.")


def lifted_input(scope: RefScope, ref):
    """The jaxpr input a lifting scope made for ``ref``."""
    return scope.lifted.get(ref)


def check_no_ref_outputs(leaves, where: str, traced_for: str, paths=None):
    """JAX's ValueError for a traced function (``where``: "name at file:line") that returns
    a Ref."""
    for i, leaf in enumerate(leaves):
        if is_ref(leaf):
            at = f" at output tree path {paths[i]}" if paths else ""
            raise ValueError(
                f"function {where} traced for {traced_for} returned a mutable array "
                f"reference of type {leaf.aval}{at}, but mutable array references cannot be "
                "returned.")


__all__ = ["AbstractRef", "RefArgs", "RefsWritten", "RefScope", "access", "bound",
           "check_distinct_refs", "check_no_ref_outputs", "check_write", "discovering",
           "innermost_scope", "lifted_input", "read_value", "ref_scope", "write_back",
           "write_value"]
