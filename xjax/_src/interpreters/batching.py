"""Batching: the vmap interpreter (DESIGN.md §5).

A ``BatchTracer`` carries a value of the parent trace and the axis of it that is mapped
(or ``not_mapped``). Applying a primitive runs its ``batch`` rule with the parent trace
current; the rule returns the batched output and where its batch axis is.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

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
        fancy = fancy_primitive_batchers.get(primitive) if fancy_primitive_batchers else None
        with set_current_trace(self.parent):
            if fancy is not None:  # JAX's table: called even when nothing is mapped
                out, out_dim = fancy(self.axis_data, tuple(vals), tuple(dims), **params)
            elif type(rule) is NeedsTrace:
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

    @property
    def axis_data(self) -> AxisData:
        """The mapped axis as JAX's batching rules receive it."""
        return AxisData(self.axis_name, self.axis_size)

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
from xjax._src.lax.shape import broadcast_in_dim

# primitive -> rule(axis_data, args, dims, **params) -> (out, out_dim), JAX's table of rules
# that see the mapped axis. ``BatchTrace`` consults it before the primitive's own rule, and
# calls its rules even when no operand is mapped (as JAX does).
fancy_primitive_batchers: dict = {}


class _BatchRuleTable(RuleTable):
    """``primitive_batchers``: setting a rule installs it on the primitive and replaces an
    entry of :data:`fancy_primitive_batchers` (in JAX both write the one table)."""

    def __setitem__(self, primitive, rule):
        super().__setitem__(primitive, rule)
        fancy_primitive_batchers.pop(primitive, None)


# ``primitive_batchers[p] = rule`` installs ``rule(args, dims, **params) -> (out, out_dim)``
# (xjax's convention, JAX's too) on ``p``.
primitive_batchers = _BatchRuleTable("batch", "batching.primitive_batchers")


class _AxisPrimitiveBatchers:
    """``axis_primitive_batchers[p] = rule``: JAX's older rules, ``rule(axis_size, axis_name,
    trace_type, args, dims, **params) -> (out, out_dim)``, registered in
    :data:`fancy_primitive_batchers` (``trace_type`` is None, as in JAX). Write-only, as
    JAX's."""

    __slots__ = ()

    def __setitem__(self, primitive, rule) -> None:
        if not callable(rule):
            raise TypeError(f"axis_primitive_batchers[{primitive!r}] must be callable, "
                            f"got {rule!r}")

        def fancy(axis_data, args, dims, **params):
            return rule(axis_data.size, axis_data.name, None, args, dims, **params)
        fancy_primitive_batchers[primitive] = fancy


axis_primitive_batchers = _AxisPrimitiveBatchers()


@dataclasses.dataclass(frozen=True)
class AxisData:
    """The mapped axis, as the rules of :data:`fancy_primitive_batchers` receive it (JAX's
    ``batching.AxisData``).

    Attributes
    ----------
    name : hashable or None
        ``vmap``'s ``axis_name`` (None when the axis is unnamed).
    size : int
        The size of the mapped axis.
    spmd_name, explicit_mesh_axis : None
        xjax's ``vmap`` does not shard the mapped axis over devices.
    """

    name: Any
    size: Any
    spmd_name: Any = None
    explicit_mesh_axis: Any = None


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


def defreducer(primitive) -> None:
    """Batch ``primitive``, a reduction of one operand over the dims in its ``axes`` parameter
    (and ``input_shape``, when it has one, the operand's shape): the reduced axes are
    renumbered around the batch axis. Registered in :data:`fancy_primitive_batchers`, as
    JAX's."""
    fancy_primitive_batchers[primitive] = functools.partial(_reduce_batch, primitive)


def _reduce_batch(primitive, axis_data, args, dims, *, axes, **params):
    (operand,), (dim,) = args, dims
    if dim is not_mapped:
        return primitive.bind(operand, axes=axes, **params), not_mapped
    axes = tuple(int(a) + (int(a) >= dim) for a in axes)
    shape = get_aval(operand).shape
    if "input_shape" in params:
        params = dict(params, input_shape=shape)
    kept = [d for d in range(len(shape)) if d not in axes]
    return primitive.bind(operand, axes=axes, **params), kept.index(dim)


def broadcast(x, sz, axis, mesh_axis=None):
    """``x`` with a new axis of size ``sz`` at position ``axis`` (its values repeated).

    Parameters
    ----------
    x : array
    sz : int
    axis : int
        Where the new axis goes in the result (negative: counted from its end).
    mesh_axis : None
        JAX's mesh axis for the new dim; xjax does not shard it.
    """
    shape = list(get_aval(x).shape)
    axis = axis % (len(shape) + 1)
    shape.insert(axis, sz)
    dims = tuple(d for d in range(len(shape)) if d != axis)
    return broadcast_in_dim(x, tuple(shape), dims)


# -- custom vmappable types --

vmappables: dict = {}  # data type -> (spec type, axis size type)
spec_types: set = set()
to_elt_handlers: dict = {}  # data type -> to_elt(cont, get_idx, x, spec)
from_elt_handlers: dict = {}  # data type -> from_elt(cont, axis_size, x, spec)
make_iota_handlers: dict = {}  # axis size type -> make_iota(axis_size)


def register_vmappable(data_type, spec_type, axis_size_type, to_elt, from_elt,
                       make_iota) -> None:
    """Let ``vmap`` take and return values of ``data_type`` as single leaves (JAX's vmappable
    protocol).

    Parameters
    ----------
    data_type, spec_type, axis_size_type : type
        The value's type, the type of its ``in_axes``/``out_axes`` entries and of its axis
        size.
    to_elt : callable
        ``to_elt(cont, get_idx, x, spec)``: ``x`` as one example; ``cont(y, axis)`` batches
        its part ``y`` along ``axis`` (None: not mapped), ``get_idx()`` is the example's
        index.
    from_elt : callable
        ``from_elt(cont, axis_size, elt, spec)``: an example back as a batch;
        ``cont(axis_size, y, axis)`` puts the batch axis of its part ``y`` at ``axis``.
    make_iota : callable or None
        ``make_iota(axis_size)`` for ``get_idx``, for axis sizes of ``axis_size_type``.
    """
    vmappables[data_type] = (spec_type, axis_size_type)
    spec_types.add(spec_type)
    to_elt_handlers[data_type] = to_elt
    from_elt_handlers[data_type] = from_elt
    if make_iota:
        make_iota_handlers[axis_size_type] = make_iota


def unregister_vmappable(data_type) -> None:
    """Does nothing, as in JAX 0.10: a registration stays."""
    del data_type


def is_vmappable(x) -> bool:
    """Whether ``x``'s type was registered with :func:`register_vmappable`."""
    return type(x) in vmappables


__all__ = ["Array", "BatchTrace", "BatchTracer", "axis_primitive_batchers", "batch_flat",
           "bdim_at_front", "broadcast", "defbroadcasting", "defreducer", "defvectorized",
           "fancy_primitive_batchers", "not_mapped", "primitive_batchers",
           "register_vmappable", "unregister_vmappable"]
