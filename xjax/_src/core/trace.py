"""Traces and tracers: the current-trace model of DESIGN.md §3.

One *current* trace lives in a thread-local context; each trace points to its parent.
``Primitive.bind`` hands the application to the current trace. A trace that computes on its
inner values makes its parent current while it does. A tracer of another, still-active trace
is an ordinary constant to this one; a tracer whose trace has ended is an escaped tracer.
"""

from __future__ import annotations

import contextlib
import threading

from xjax._src.core import errors


class Trace:
    """Base of every interpreter. Subclasses implement ``process_primitive``."""

    __slots__ = ("parent", "active", "__weakref__")

    def __init__(self, parent: "Trace | None"):
        self.parent = parent
        self.active = True

    def process_primitive(self, primitive, args, params):
        raise NotImplementedError

    @property
    def main(self) -> "Trace":
        """This trace: what JAX calls a trace's ``main`` (its identity, for ``is`` tests)."""
        return self

    def is_ancestor_of(self, other: "Trace") -> bool:
        trace = other
        while trace is not None:
            if trace is self:
                return True
            trace = trace.parent
        return False


class _Context(threading.local):
    trace: Trace = None  # the root eval trace is installed by xjax.interpreters.eval


ctx = _Context()


def current_trace() -> Trace:
    return ctx.trace


def set_root_trace(trace: Trace) -> None:
    """Install the root (eval) trace; called once by the interpreters layer."""
    _Context.trace = trace
    ctx.trace = trace


@contextlib.contextmanager
def set_current_trace(trace: Trace):
    """Make ``trace`` current for the duration of the block."""
    previous = ctx.trace
    ctx.trace = trace
    try:
        yield trace
    finally:
        ctx.trace = previous


class Tracer:
    """A stand-in for an array during a transformation. Operators and methods are installed
    on this class and on ``Array`` alike by the numpy layer, so user code cannot tell them
    apart except through concreteness."""

    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    # Shape-like attributes read from the aval.
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    @property
    def weak_type(self):
        return self.aval.weak_type

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    # Concreteness: a tracer may know its value (a jvp tracer of a concrete primal).
    def to_concrete_value(self):
        return None

    def __bool__(self):
        value = self.to_concrete_value()
        if value is None:
            raise errors.TracerBoolConversionError(self)
        return bool(value)

    def __int__(self):
        value = self.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(self, "The problem arose with the `int` function.")
        return int(value)

    def __float__(self):
        value = self.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(self,
                                                 "The problem arose with the `float` function.")
        return float(value)

    def __complex__(self):
        value = self.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(self,
                                                 "The problem arose with the `complex` function.")
        return complex(value)

    def __index__(self):
        value = self.to_concrete_value()
        if value is None:
            raise errors.TracerIntegerConversionError(self)
        return int(value)

    def __array__(self, dtype=None, copy=None):
        value = self.to_concrete_value()
        if value is None:
            raise errors.TracerArrayConversionError(self)
        import numpy as np
        return np.asarray(value, dtype=dtype)

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def unsafe_buffer_pointer(self):
        """A traced value has no buffer: JAX's ConcretizationTypeError."""
        raise errors.ConcretizationTypeError(
            self, f"The unsafe_buffer_pointer() method was called on traced array with shape "
                  f"{self.aval.str_short()}.")

    def __setitem__(self, index, value):
        raise TypeError(immutable_message(self))

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __repr__(self):
        trace_type = type(self._trace)
        return f"Traced<{self.aval!r}>with<{getattr(trace_type, 'repr_name', trace_type.__name__)}>"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)


def immutable_message(x) -> str:
    """The TypeError text for item assignment (seed 003)."""
    return (f"'{type(x)}' object does not support item assignment. JAX arrays are immutable. "
            "Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] method: "
            "https://jax.readthedocs.io/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def define_tracer_methods(members: dict, properties: dict) -> None:
    """Give ``Tracer`` its operators, methods and properties (the extension point through
    which the numpy layer makes ``x + y`` and ``x.sum()`` work on traced values)."""
    for name, fn in members.items():
        setattr(Tracer, name, fn)
    for name, getter in properties.items():
        setattr(Tracer, name, property(getter))
