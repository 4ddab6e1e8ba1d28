"""Batching: the vmap interpreter (DESIGN.md §5).

A ``BatchTracer`` carries a value of the parent trace and the axis of it that is mapped
(or ``not_mapped``). Applying a primitive runs its ``batch`` rule with the parent trace
current; the rule returns the batched output and where its batch axis is.
"""

from __future__ import annotations

from xjax._src.core.ad_util import get_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Absent
from xjax._src.core.trace import Trace, Tracer, set_current_trace
from xjax._src.lax.batch_rules import NeedsTrace, not_mapped
from xjax._src.core.trace import current_trace


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self):
        aval = get_aval(self.val)
        if self.batch_dim is not_mapped:
            return aval
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def to_concrete_value(self):
        return None  # a batch of values has no single concrete value


class BatchTrace(Trace):
    """Applies primitives to batched values with their batching rules."""

    __slots__ = ("axis_name", "axis_size")

    def __init__(self, parent, axis_name, axis_size):
        super().__init__(parent)
        self.axis_name = axis_name
        self.axis_size = axis_size

    def unpack(self, x):
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped

    def process_primitive(self, primitive, args, params):
        vals, dims = [], []
        for x in args:
            val, dim = self.unpack(x)
            vals.append(val)
            dims.append(dim)
        rule = primitive.batch
        with set_current_trace(self.parent):
            if type(rule) is NeedsTrace:
                out, out_dim = rule(self, vals, dims, **params)
            elif all(d is not_mapped for d in dims):
                return primitive.bind(*vals, **params)
            else:
                if isinstance(rule, Absent):
                    raise NotImplementedError(f"Batching rule for '{primitive.name}' not "
                                              f"implemented: {rule.reason}")
                # Type-check the per-example application first, so a bad program fails
                # with the shapes the user wrote (as in JAX), not the batched ones.
                primitive.abstract_eval(*[_unbatched_aval(x) for x in args], **params)
                out, out_dim = rule(vals, dims, **params)
        if primitive.multiple_results:
            return [self.wrap(o, d) for o, d in zip(out, out_dim, strict=True)]
        return self.wrap(out, out_dim)

    def wrap(self, val, dim):
        if dim is not_mapped:
            return val
        return BatchTracer(self, val, dim)


def _unbatched_aval(x):
    return x.aval if isinstance(x, Tracer) else get_aval(x)


def batch_flat(flat_fun, args, in_dims, axis_name, axis_size):
    """Evaluate ``flat_fun`` on batched ``args`` under a new BatchTrace; return the output
    values and their batch dims."""
    trace = BatchTrace(current_trace(), axis_name, axis_size)
    tracers = [trace.wrap(a, d) for a, d in zip(args, in_dims, strict=True)]
    try:
        with set_current_trace(trace):
            outs = flat_fun(*tracers)
    finally:
        trace.active = False
    vals, dims = [], []
    for out in outs:
        val, dim = trace.unpack(out)
        vals.append(val)
        dims.append(dim)
    return vals, dims


# -- JAX's public batching API (``jax.interpreters.batching``) --

from xjax._src.interpreters._rule_registry import RuleTable  # noqa: E402
from xjax._src.lax.batch_rules import batch_elementwise, bdim_at_front  # noqa: E402,F401

# ``primitive_batchers[p] = rule`` installs ``rule(args, dims, **params) -> (out, out_dim)``
# (xjax's convention, JAX's too) on ``p``.
primitive_batchers = RuleTable("batch", "batching.primitive_batchers")


def defvectorized(primitive) -> None:
    """Batch ``primitive`` by applying it to the batched operands as they are: it acts on
    each element independently, so the output is batched where the operands are."""

    def batch(args, dims, **params):
        mapped = {d for d in dims if d is not not_mapped}
        if len(mapped) == 1:
            dim = mapped.pop()
        else:
            size = next(get_aval(x).shape[d] for x, d in zip(args, dims)
                        if d is not not_mapped)
            args, dim = [bdim_at_front(x, d, size) for x, d in zip(args, dims)], 0
        out = primitive.bind(*args, **params)
        return (out, [dim] * len(out)) if primitive.multiple_results else (out, dim)
    primitive_batchers[primitive] = batch


def defbroadcasting(primitive) -> None:
    """Batch ``primitive``, which broadcasts its operands against each other (rank-0
    operands and size-1 dims): operands batched at the same axis pass as they are;
    otherwise the batch axis goes first and unbatched operands get a size-1 axis."""
    general = batch_elementwise(primitive)

    def batch(args, dims, **params):
        ranked = [(get_aval(x).shape, d) for x, d in zip(args, dims)
                  if len(get_aval(x).shape)]
        if ranked and all(d is not not_mapped for _, d in ranked) and \
                len(set(ranked)) == 1:
            out = primitive.bind(*args, **params)
            dim = ranked[0][1]
            return (out, [dim] * len(out)) if primitive.multiple_results else (out, dim)
        return general(args, dims, **params)
    primitive_batchers[primitive] = batch


__all__ = ["BatchTrace", "BatchTracer", "batch_flat", "not_mapped",
           "Array", "bdim_at_front", "defbroadcasting", "defvectorized",
           "primitive_batchers"]
