"""The parts of ``jax.extend.core`` about traces, effects and value checks, mapped onto
xjax's trace model (one current trace per thread, each pointing to its parent)."""

from __future__ import annotations

import collections.abc
import contextlib
import weakref

from xjax._src.core import dtypes, errors
from xjax._src.core.ad_util import get_aval
from xjax._src.core.jaxpr import NO_EFFECTS, ClosedJaxpr, Jaxpr
from xjax._src.core.trace import Tracer, current_trace, set_current_trace  # noqa: F401


class Effect:
    """Base class of the side effects a primitive may declare (JAX's effect types)."""


Effects = collections.abc.Set
no_effects: frozenset = NO_EFFECTS


class OpaqueTraceState:
    """The trace current when it was taken: equal to another exactly when both were taken
    under the same trace. Libraries use it to tell whether they still run where an object
    was made (Flax's trace-level checks)."""

    __slots__ = ("_trace",)
    __hash__ = None  # as JAX's: compared, never hashed

    def __init__(self, trace):
        self._trace = weakref.ref(trace)

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace() is other._trace()

    def __repr__(self):
        return f"OpaqueTraceState({type(self._trace()).__name__})"


def get_opaque_trace_state(convention: str | None = None) -> OpaqueTraceState:
    """An opaque token of the current trace (see :class:`OpaqueTraceState`)."""
    return OpaqueTraceState(current_trace())


def find_top_trace(xs):
    """The innermost trace among the tracers in ``xs`` (the current trace if none)."""
    top = None
    for x in xs:
        if isinstance(x, Tracer) and x._trace.active and (
                top is None or top.is_ancestor_of(x._trace)):
            top = x._trace
    return current_trace() if top is None else top


@contextlib.contextmanager
def take_current_trace():
    """The current trace, for the block (as JAX's context manager yields it)."""
    yield current_trace()


def valid_jaxtype(x) -> bool:
    """Whether ``x`` is a value JAX can hold as an array (arrays, tracers, scalars)."""
    if isinstance(x, (list, tuple, dict)):
        return False  # containers are pytrees of values, not values
    try:
        aval = get_aval(x)
    except (TypeError, ValueError):
        return False
    return dtypes.is_valid_dtype(aval.dtype)


def concrete_or_error(force, val, context=""):
    """``val``'s concrete value (passed through ``force`` when given) or a
    ``ConcretizationTypeError`` naming ``context`` when it is traced."""
    force = force if force is not None else (lambda v: v)
    if isinstance(val, Tracer):
        concrete = val.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(val, context)
        return force(concrete)
    return force(val)


def jaxprs_in_params(params) -> list:
    """The jaxprs among ``params`` (closed ones opened), in order, lists and tuples searched."""
    found = []
    for value in params.values():
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, ClosedJaxpr):
                found.append(v.jaxpr)
            elif isinstance(v, Jaxpr):
                found.append(v)
    return found


def subjaxprs(jaxpr: Jaxpr):
    """The jaxprs directly inside the equations of ``jaxpr`` (not recursively)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)
