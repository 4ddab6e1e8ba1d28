"""Gather and scatter: XLA's general indexing primitives, with JAX's dimension numbers and
out-of-bounds modes (``GatherScatterMode``).

``index_vector_dim`` is always the last dimension of the indices, as in JAX. Semantics:
https://openxla.org/stablehlo/spec#gather and #scatter. XLA clamps gather windows into
bounds and drops whole scatter windows that do not fit; FILL_OR_DROP gathers mask the
out-of-bounds windows with ``fill_value``, and CLIP scatters clamp the indices first.
"""

from __future__ import annotations

import enum
import math
from typing import NamedTuple

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import Jaxpr, JaxprEqn, Var
from xjax._src.core.primitive import NONLINEAR, Primitive, registry
from xjax._src.lax.ad_helpers import late_rule, linear_jvp_of, operand_aval
from xjax._src.lax.ad_rules import (Zero, add_tangents, get_aval, instantiate, is_undefined,
                                    jvp_by_parts)
from xjax._src.lax.batch_rules import batch_size, bdim_at_front, move_axis, not_mapped, shift_axes
from xjax._src.lax.bitwise import bitwise_or
from xjax._src.lax.compare import eq, select_n
from xjax._src.lax.elementwise import add, div, mul, neg
from xjax._src.lax.gather_scatter_shapes import (check_scatter, clamp_starts, gather_shape,
                                                 scatter_window_shape, window_index,
                                                 window_starts, windows_in_bounds)
from xjax._src.lax import sharding_rules
from xjax._src.lax.naryop import combiner_body
from xjax._src.lax.shape import (as_operand, broadcast_in_dim, canonicalize_shape, full, iota,
                                 reshape)
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type


class GatherScatterMode(enum.Enum):
    """How gather and scatter treat out-of-bounds indices.

    CLIP: indices are clamped so the whole window is in bounds.
    FILL_OR_DROP: a gathered window that is partly out of bounds is filled with the fill
    value; a scattered window that is partly out of bounds is dropped.
    PROMISE_IN_BOUNDS: the caller promises in-bounds indices (XLA then clamps gathers and
    drops scatters).
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s) -> "GatherScatterMode":
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')

    def __repr__(self) -> str:  # jaxprs print the mode as JAX's do
        return f"GatherScatterMode.{self.name}"


class GatherDimensionNumbers(NamedTuple):
    """How a gather's indices select windows of the operand (see the StableHLO spec).

    Attributes
    ----------
    offset_dims : tuple of int
        Output dimensions that index into a window (sorted).
    collapsed_slice_dims : tuple of int
        Operand dimensions of size-1 windows that the output drops.
    start_index_map : tuple of int
        For each component of an index vector, the operand dimension it starts.
    operand_batching_dims, start_indices_batching_dims : tuple of int
        Paired batch dimensions of the operand and the indices.
    """

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's indices place windows of ``updates`` into the operand.

    Attributes
    ----------
    update_window_dims : tuple of int
        Dimensions of ``updates`` that index into a window (sorted).
    inserted_window_dims : tuple of int
        Operand dimensions of size-1 windows that ``updates`` leaves out.
    scatter_dims_to_operand_dims : tuple of int
        For each component of an index vector, the operand dimension it starts.
    operand_batching_dims, scatter_indices_batching_dims : tuple of int
        Paired batch dimensions of the operand and the indices.
    """

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _tuples(dnums, cls):
    """Dimension numbers with every field a tuple of ints (so params stay hashable)."""
    if not isinstance(dnums, tuple):
        raise TypeError(f"dimension_numbers must be a {cls.__name__}, got {dnums!r}")
    return cls(*(tuple(int(d) for d in field) for field in dnums))


# -- gather --

def default_fill_value(dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the minimum signed or maximum unsigned
    integer, or True."""
    if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
        return np.nan
    if dtypes.is_unsigned(dtype):
        return int(dtypes.iinfo(dtype).max)
    if dtypes.is_integer(dtype):
        return int(dtypes.iinfo(dtype).min)
    if dtype == np.bool_:
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                          indices_are_sorted, mode, fill_value):
    shape = gather_shape(operand, indices, dimension_numbers, slice_sizes)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _batch_dims_in_output(out_rank, offset_dims):
    return [d for d in range(out_rank) if d not in offset_dims]


def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                 indices_are_sorted, mode, fill_value):
    dn = dimension_numbers
    operand, indices = np.asarray(operand), np.asarray(indices)
    starts = window_starts(operand.shape, indices, dn.start_index_map,
                            dn.operand_batching_dims, dn.start_indices_batching_dims)
    n = starts.shape[0]
    fill = mode == GatherScatterMode.FILL_OR_DROP
    if fill:
        valid = windows_in_bounds(starts, dn.start_index_map, operand.shape, slice_sizes)
    starts = clamp_starts(starts, operand.shape, slice_sizes)
    if operand.ndim:
        windows = operand[window_index(starts, slice_sizes)]
    else:
        windows = np.broadcast_to(operand, (n,))
    if fill and not valid.all():
        windows = np.array(windows, copy=True)
        value = default_fill_value(operand.dtype) if fill_value is None else fill_value
        windows[~valid] = np.asarray(value).astype(operand.dtype)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = [s for d, s in enumerate(slice_sizes) if d not in dropped]
    batch_shape = list(indices.shape[:-1])
    windows = windows.reshape(batch_shape + offset_sizes)
    out_rank = windows.ndim
    nb = len(batch_shape)
    batch_axes = iter(range(nb))
    perm = [nb + dn.offset_dims.index(d) if d in dn.offset_dims else next(batch_axes)
            for d in range(out_rank)]
    return np.transpose(windows, perm)


def _dims_attr(fields) -> str:
    return ", ".join(f"{name} = [{', '.join(str(d) for d in dims)}]"
                     for name, dims in fields if dims)


def _gather_attrs(dn, index_vector_dim, slice_sizes, indices_are_sorted):
    fields = _dims_attr([("offset_dims", dn.offset_dims),
                         ("collapsed_slice_dims", dn.collapsed_slice_dims),
                         ("operand_batching_dims", dn.operand_batching_dims),
                         ("start_indices_batching_dims", dn.start_indices_batching_dims),
                         ("start_index_map", dn.start_index_map)])
    sep = ", " if fields else ""
    return {"dimension_numbers":
            f"#stablehlo.gather<{fields}{sep}index_vector_dim = {index_vector_dim}>",
            "indices_are_sorted": "true" if indices_are_sorted else "false",
            "slice_sizes": i64_array(slice_sizes)}


def _compare(b, x, y, direction: str, shape, compare_type: str) -> str:
    return b.op1("stablehlo.compare", [x, y], tensor_type(shape, np.bool_),
                 {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                  "compare_type": f"#stablehlo<comparison_type {compare_type}>"})


def _splat(b, value, dtype, shape) -> str:
    """A constant of ``shape`` filled with ``value`` (a scalar broadcast, not a big literal)."""
    scalar = b.constant(np.asarray(value, dtype))
    if not shape:
        return scalar
    return b.op1("stablehlo.broadcast_in_dim", [scalar], tensor_type(shape, dtype),
                 {"broadcast_dimensions": i64_array([])})


def _vector_along_last(b, values, dtype, shape) -> str:
    """The vector ``values`` broadcast along the last dimension of ``shape``."""
    vector = b.constant(np.asarray(values, dtype).reshape(len(values)))
    return b.op1("stablehlo.broadcast_in_dim", [vector], tensor_type(shape, dtype),
                 {"broadcast_dimensions": i64_array([len(shape) - 1])})


def _in_bounds_mask(ctx, indices, index_aval, upper_bounds) -> str:
    """Boolean mask over the index batch dims: every component within [0, upper]."""
    b = ctx.builder
    shape = index_aval.shape
    wide = b.op1("stablehlo.convert", [indices], tensor_type(shape, np.int64))
    low_ok = _compare(b, wide, _splat(b, 0, np.int64, shape), "GE", shape, "SIGNED")
    high_ok = _compare(b, wide, _vector_along_last(b, upper_bounds, np.int64, shape), "LE",
                       shape, "SIGNED")
    both = b.op1("stablehlo.and", [low_ok, high_ok], tensor_type(shape, np.bool_))
    scalar_bool = tensor_type((), np.bool_)

    def body(fb, args):
        return [fb.op1("stablehlo.and", args, scalar_bool)]

    region = b.region([scalar_bool, scalar_bool], body)
    return b.op1("stablehlo.reduce", [both, b.constant(np.asarray(True))],
                 tensor_type(shape[:-1], np.bool_), {"dimensions": i64_array([len(shape) - 1])},
                 regions=[region])


def _gather_lower(ctx, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                  indices_are_sorted, mode, fill_value):
    dn = dimension_numbers
    operand_aval, index_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    b = ctx.builder
    if 0 in out_aval.shape:
        # StableHLO rejects a slice size over an empty operand dimension that JAX's shape
        # rule allows (a batching dimension of size 0 keeps slice size 1); nothing is read
        return _splat(b, 0, out_aval.dtype, out_aval.shape)
    out = b.op1("stablehlo.gather", [operand, indices], aval_type(out_aval),
                _gather_attrs(dn, index_aval.ndim - 1, slice_sizes, indices_are_sorted))
    if mode != GatherScatterMode.FILL_OR_DROP:
        return out  # XLA clamps the windows into bounds
    upper = [operand_aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
    mask = _in_bounds_mask(ctx, indices, index_aval, upper)
    mask = b.op1("stablehlo.broadcast_in_dim", [mask], tensor_type(out_aval.shape, np.bool_),
                 {"broadcast_dimensions": i64_array(
                     _batch_dims_in_output(out_aval.ndim, dn.offset_dims))})
    value = default_fill_value(out_aval.dtype) if fill_value is None else fill_value
    fill = _splat(b, np.asarray(value).astype(out_aval.dtype), out_aval.dtype, out_aval.shape)
    return b.op1("stablehlo.select", [mask, out, fill], aval_type(out_aval))


def _gather_jvp_operand(t, ans, operand, indices, *, dimension_numbers, slice_sizes,
                        unique_indices, indices_are_sorted, mode, fill_value):
    """The same gather of the tangent; filled windows have a zero tangent."""
    return gather(t, indices, dimension_numbers, slice_sizes, unique_indices=unique_indices,
                  indices_are_sorted=indices_are_sorted, mode=mode, fill_value=0)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                      indices_are_sorted, mode, fill_value):
    """Scatter-add ``ct`` into zeros at the windows the gather read."""
    dn = dimension_numbers
    if type(ct) is Zero:
        return [Zero(operand.aval), None]
    scatter_dnums = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    zeros = full(operand.aval.shape, 0, operand.aval.dtype)
    return [scatter_add(zeros, indices, ct, scatter_dnums, indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode), None]


def _gather_batch(args, dims, *, dimension_numbers, slice_sizes, **params):
    """Batch axes first. A batched operand alone: the batch is a full window dimension.
    Batched indices alone: one more batch dimension of the indices. Both: a paired
    operand/indices batching dimension."""
    (x, indices), (dx, di) = args, dims
    dn = dimension_numbers
    offset_dims = shift_axes(dn.offset_dims)
    collapsed = shift_axes(dn.collapsed_slice_dims)
    index_map = shift_axes(dn.start_index_map)
    operand_batching = shift_axes(dn.operand_batching_dims)
    indices_batching = dn.start_indices_batching_dims
    if dx is not not_mapped and di is not_mapped:
        x = move_axis(x, dx, 0)
        offset_dims = (0, *offset_dims)
        slice_sizes = (get_aval(x).shape[0], *slice_sizes)
    elif dx is not_mapped:
        indices = move_axis(indices, di, 0)
        collapsed, index_map = dn.collapsed_slice_dims, dn.start_index_map
        operand_batching = dn.operand_batching_dims
        indices_batching = shift_axes(dn.start_indices_batching_dims)
    else:
        x, indices = move_axis(x, dx, 0), move_axis(indices, di, 0)
        operand_batching = (0, *operand_batching)
        indices_batching = (0, *shift_axes(indices_batching))
        # as JAX: an empty batch keeps the slice within the operand's empty dimension
        slice_sizes = (min(1, get_aval(x).shape[0]), *slice_sizes)
    new_dn = type(dn)(offset_dims=offset_dims, collapsed_slice_dims=collapsed,
                      start_index_map=index_map, operand_batching_dims=operand_batching,
                      start_indices_batching_dims=indices_batching)
    return gather_p.bind(x, indices, dimension_numbers=new_dn,
                         slice_sizes=tuple(slice_sizes), **params), 0


gather_p = Primitive("gather", abstract_eval=_gather_abstract_eval, impl=_gather_impl,
                     lower=_gather_lower,
                     jvp=late_rule(lambda p: jvp_by_parts(p, _gather_jvp_operand, None), "gather"),
                     transpose=_gather_transpose, batch=_gather_batch,
                     sharding_rule=sharding_rules.gather)


def _hashable_fill(fill_value):
    if fill_value is None or isinstance(fill_value, (bool, int, float, complex)):
        return fill_value
    value = np.asarray(fill_value)
    if value.shape:
        raise TypeError(f"fill_value must be a scalar, got shape {value.shape}")
    return value.item()


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather: windows of ``operand`` starting at the index vectors of
    ``start_indices`` (whose last dimension is the index vector).

    Parameters
    ----------
    operand : array_like
    start_indices : array_like of integers
    dimension_numbers : GatherDimensionNumbers
    slice_sizes : sequence of int
        The window size in every operand dimension.
    unique_indices, indices_are_sorted : bool
        Promises about the indices that XLA may exploit.
    mode : str or GatherScatterMode, optional
        ``'clip'``, ``'fill'`` (``'drop'``) or ``'promise_in_bounds'`` (the default).
    fill_value : scalar, optional
        The value of out-of-bounds windows in ``'fill'`` mode (default: NaN for inexact
        types, the minimum signed or maximum unsigned integer, True for bool).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> x = jnp.arange(12.).reshape(3, 4)
    >>> dnums = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                                    start_index_map=(0,))
    >>> lax.gather(x, jnp.array([[2], [0]]), dnums, (1, 4))
    Array([[ 8.,  9., 10., 11.],
           [ 0.,  1.,  2.,  3.]], dtype=float32)
    """
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
        GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather mode ONE_HOT is not supported")
    fill_value = _hashable_fill(fill_value) if mode == GatherScatterMode.FILL_OR_DROP else None
    operand = as_operand(operand)
    if mode == GatherScatterMode.FILL_OR_DROP and fill_value is None:
        fill_value = default_fill_value(operand.dtype)
    return gather_p.bind(
        operand, as_operand(start_indices),
        dimension_numbers=_tuples(dimension_numbers, GatherDimensionNumbers),
        slice_sizes=canonicalize_shape(slice_sizes), unique_indices=bool(unique_indices),
        indices_are_sorted=bool(indices_are_sorted), mode=mode, fill_value=fill_value)


# -- scatter --

def _scatter_abstract_eval(operand, indices, updates, dn):
    check_scatter(operand, indices, updates, dn)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_impl(combine, operand, indices, updates, dn, mode):
    """``operand`` with ``updates`` combined in; ``combine`` is None (replace) or a ufunc."""
    operand, updates = np.asarray(operand), np.asarray(updates)
    window = scatter_window_shape(operand.shape, updates.shape, dn)
    starts = window_starts(operand.shape, indices, dn.scatter_dims_to_operand_dims,
                            dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    if mode == GatherScatterMode.CLIP:
        starts = clamp_starts(starts, operand.shape, window)
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    values = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
    values = values.reshape((starts.shape[0],) + window)
    # XLA skips every window that does not fit entirely (the spec leaves it to the backend)
    valid = windows_in_bounds(starts, range(operand.ndim), operand.shape, window)
    if not valid.all():
        starts, values = starts[valid], values[valid]
    out = np.array(operand, copy=True)
    if out.ndim == 0:
        if values.shape[0]:
            out = _combine_scalar(combine, out, values)
        return out
    index = window_index(starts, window)
    if combine is None:
        out[index] = values
    else:
        combine.at(out, index, values)
    return out


def _combine_scalar(combine, out, values):
    if combine is None:
        return np.array(values[-1], copy=True)
    return np.asarray(combine.reduce(np.concatenate([out.reshape(1), values]))).astype(out.dtype)


def _clamped_indices(ctx, indices, dn):
    """CLIP mode: indices clamped so every window fits (in the indices' own dtype)."""
    operand_aval, index_aval, updates_aval = ctx.avals_in
    window = scatter_window_shape(operand_aval.shape, updates_aval.shape, dn)
    top = int(dtypes.iinfo(index_aval.dtype).max)
    upper = [min(operand_aval.shape[d] - window[d], top) for d in dn.scatter_dims_to_operand_dims]
    b = ctx.builder
    high = _vector_along_last(b, upper, index_aval.dtype, index_aval.shape)
    low = b.constant(np.asarray(0, index_aval.dtype))
    return b.op1("stablehlo.clamp", [low, indices, high], aval_type(index_aval))


def _scatter_attrs(dn, index_vector_dim, indices_are_sorted, unique_indices):
    fields = _dims_attr([("update_window_dims", dn.update_window_dims),
                         ("inserted_window_dims", dn.inserted_window_dims),
                         ("input_batching_dims", dn.operand_batching_dims),
                         ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
                         ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims)])
    sep = ", " if fields else ""
    return {"indices_are_sorted": "true" if indices_are_sorted else "false",
            "scatter_dimension_numbers":
            f"#stablehlo.scatter<{fields}{sep}index_vector_dim = {index_vector_dim}>",
            "unique_indices": "true" if unique_indices else "false"}


def _scatter_lowering(kind):
    """Lowering of a scatter whose update region combines with ``kind`` (see
    ``combiner_body``), or replaces when ``kind`` is None."""

    def lower(ctx, operand, indices, updates, *, update_jaxpr, update_consts,
              dimension_numbers, indices_are_sorted, unique_indices, mode):
        dn = dimension_numbers
        index_aval = ctx.avals_in[1]
        if mode == GatherScatterMode.CLIP:
            indices = _clamped_indices(ctx, indices, dn)
        out_aval = ctx.avals_out[0]
        scalar = tensor_type((), out_aval.dtype)
        body = (lambda fb, args: [args[1]]) if kind is None else \
            combiner_body(kind, out_aval.dtype)
        region = ctx.builder.region([scalar, scalar], body)
        return ctx.builder.op1(
            "stablehlo.scatter", [operand, indices, updates], aval_type(out_aval),
            _scatter_attrs(dn, index_aval.ndim - 1, indices_are_sorted, unique_indices),
            regions=[region])

    return lower


_update_jaxprs: dict = {}


def _update_jaxpr(combiner: str | None, dtype):
    """The jaxpr ``lambda a b: combiner(a, b)`` that JAX records on scatter equations
    (None for a plain scatter, or while the combiner's primitive is not defined)."""
    if combiner is None:
        return None
    key = (combiner, dtype)
    jaxpr = _update_jaxprs.get(key)
    if jaxpr is None:
        prim = registry.get(combiner)
        if prim is None:
            return None
        aval = ShapedArray((), dtype)
        a, b, out = Var(aval), Var(aval), Var(aval)
        jaxpr = _update_jaxprs[key] = Jaxpr([], [a, b], [out], [JaxprEqn(prim, [a, b], [out],
                                                                        {})])
    return jaxpr


def _scatter_batch(name):
    """The rule of the scatter primitive ``name``: the operand (broadcast if unmapped) and
    the updates get the batch axis first; with unbatched indices it is a window dimension
    of the updates, with batched ones a paired operand/indices batching dimension."""

    def batch(args, dims, *, dimension_numbers, **params):
        (x, indices, updates), (dx, di, du) = args, dims
        size = batch_size(args, dims)
        x, updates = bdim_at_front(x, dx, size), bdim_at_front(updates, du, size)
        dn = dimension_numbers
        inserted = shift_axes(dn.inserted_window_dims)
        to_operand_dims = shift_axes(dn.scatter_dims_to_operand_dims)
        operand_batching = shift_axes(dn.operand_batching_dims)
        if di is not_mapped:
            window = (0, *shift_axes(dn.update_window_dims))
            indices_batching = dn.scatter_indices_batching_dims
        else:
            indices = move_axis(indices, di, 0)
            window = shift_axes(dn.update_window_dims)
            operand_batching = (0, *operand_batching)
            indices_batching = (0, *shift_axes(dn.scatter_indices_batching_dims))
        new_dn = type(dn)(update_window_dims=window, inserted_window_dims=inserted,
                          scatter_dims_to_operand_dims=to_operand_dims,
                          operand_batching_dims=operand_batching,
                          scatter_indices_batching_dims=indices_batching)
        return registry[name].bind(x, indices, updates, dimension_numbers=new_dn,
                                   **params), 0

    return batch


def _scatter_family(name, combiner, ufunc, kind, bool_ok, jvp, transpose):
    """A scatter primitive and its wrapper. ``combiner`` names the lax primitive of the
    update computation; ``ufunc`` combines in NumPy; ``kind`` in StableHLO."""

    def abstract_eval(operand, indices, updates, *, update_jaxpr, update_consts,
                      dimension_numbers, indices_are_sorted, unique_indices, mode):
        if not bool_ok and operand.dtype == np.bool_:
            raise TypeError(f"{combiner} does not accept dtype bool at position 0. Accepted "
                            "dtypes at position 0 are subtypes of integer, floating, "
                            "complexfloating.")
        return _scatter_abstract_eval(operand, indices, updates, dimension_numbers)

    def impl(operand, indices, updates, *, update_jaxpr, update_consts, dimension_numbers,
             indices_are_sorted, unique_indices, mode):
        return _scatter_impl(ufunc, operand, indices, updates, dimension_numbers, mode)

    prim = Primitive(name, abstract_eval=abstract_eval, impl=impl,
                     lower=_scatter_lowering(kind), jvp=jvp, transpose=transpose,
                     batch=_scatter_batch(name), sharding_rule=sharding_rules.scatter)

    def wrapper(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
        mode = GatherScatterMode.from_any(mode)
        if mode == GatherScatterMode.ONE_HOT:
            raise NotImplementedError("scatter mode ONE_HOT is not supported")
        operand = as_operand(operand)
        return prim.bind(operand, as_operand(scatter_indices), as_operand(updates),
                         update_jaxpr=_update_jaxpr(combiner, operand.dtype), update_consts=(),
                         dimension_numbers=_tuples(dimension_numbers, ScatterDimensionNumbers),
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=mode)

    return prim, wrapper


# -- derivatives of the scatters --
#
# Rules that read values back at the positions a scatter writes use the "inverse gather"
# (same index vectors; window sizes from the updates). Gathers of primal values clamp
# (CLIP, or XLA's clamping for the other modes): an update the scatter drops is dropped
# again by the scatter-add that consumes the value, so what it reads does not matter.

def _inverse_gather(x, indices, dn, updates_shape, mode, fill_value=None,
                    indices_are_sorted=False, unique_indices=False):
    """For every element of the updates, ``x`` (operand-shaped) where the scatter puts it."""
    dnums = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    window = scatter_window_shape(x.shape, updates_shape, dn)
    return gather(x, indices, dnums, window, mode=mode, fill_value=fill_value,
                  indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


def _read_back(x, indices, updates_shape, params):
    """``x`` at each update's position, clamped (for rules on primal values)."""
    mode = params["mode"]
    if mode != GatherScatterMode.CLIP:
        mode = GatherScatterMode.PROMISE_IN_BOUNDS
    return _inverse_gather(x, indices, params["dimension_numbers"], updates_shape, mode)


def _ct_of_updates(ct, indices, updates_shape, params):
    """The cotangent of the updates of a scatter-add: ``ct`` where each update went (zero
    for the windows FILL_OR_DROP drops)."""
    return _inverse_gather(ct, indices, params["dimension_numbers"], updates_shape,
                           params["mode"], fill_value=0,
                           indices_are_sorted=params["indices_are_sorted"],
                           unique_indices=params["unique_indices"])


def _add_into(base, indices, updates, params):
    """``scatter_add`` with a scatter equation's dimension numbers and mode."""
    return scatter_add(base, indices, updates, params["dimension_numbers"],
                       indices_are_sorted=params["indices_are_sorted"],
                       unique_indices=params["unique_indices"], mode=params["mode"])


def _zeros(x):
    aval = operand_aval(x)
    return full(aval.shape, 0, aval.dtype)


def _scatter_add_transpose(negate):
    """scatter-add/sub: the operand's cotangent is ``ct``; the updates' is ``ct`` read back
    where they went (negated for scatter-sub)."""

    def transpose(ct, operand, indices, updates, **params):
        if type(ct) is Zero:
            return [Zero(x.aval) if is_undefined(x) else None for x in (operand, indices, updates)]
        ct_updates = None
        if is_undefined(updates):
            ct_updates = _ct_of_updates(ct, indices, updates.aval.shape, params)
            ct_updates = neg(ct_updates) if negate else ct_updates
        return [ct if is_undefined(operand) else None, None, ct_updates]

    return transpose


def _scatter_jvp(primals, tangents, **params):
    """Where indices may repeat, which update wins is up to XLA: scatter ids of the updates,
    read them back, and keep the tangents of the operand positions no update touched and of
    the updates that won; a scatter-add of those is the tangent (and transposes simply)."""
    operand, indices, updates = primals
    ans = scatter_p.bind(*primals, **params)
    if type(tangents[0]) is Zero and type(tangents[2]) is Zero:
        return ans, Zero(tangents[0].aval)
    t_operand, t_updates = instantiate(tangents[0]), instantiate(tangents[2])
    if params["unique_indices"]:
        return ans, scatter_p.bind(t_operand, indices, t_updates, **params)
    dn = params["dimension_numbers"]
    updates_shape = tuple(updates.shape)
    ids_shape = tuple(1 if d in dn.update_window_dims else s for d, s in enumerate(updates_shape))
    ids = add(reshape(iota(np.int32, math.prod(ids_shape)), ids_shape),
                  np.int32(1))
    update_ids = broadcast_in_dim(ids, updates_shape, tuple(range(len(updates_shape))))
    scattered_ids = scatter(full(operand.shape, 0, np.int32), indices, update_ids, dn,
                            indices_are_sorted=params["indices_are_sorted"],
                            unique_indices=False, mode=params["mode"])
    untouched = eq(scattered_ids, np.int32(0))
    won = eq(update_ids, _read_back(scattered_ids, indices, updates_shape, params))
    t_operand = select_n(untouched, _zeros(t_operand), t_operand)
    t_updates = select_n(won, _zeros(t_updates), t_updates)
    return ans, _add_into(t_operand, indices, t_updates, params)


def _scatter_transpose(ct, operand, indices, updates, **params):
    """Only the unique-indices scatter is linear in a jaxpr (see ``_scatter_jvp``)."""
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None for x in (operand, indices, updates)]
    updates_shape = operand_aval(updates).shape
    ct_operand = ct_updates = None
    if is_undefined(operand):  # the positions the updates overwrite get nothing
        ct_operand = scatter_p.bind(ct, indices, _zeros(updates), **params)
    if is_undefined(updates):
        ct_updates = _ct_of_updates(ct, indices, updates_shape, params)
    return [ct_operand, None, ct_updates]


def _scatter_mul_jvp(primals, tangents, **params):
    """Linear in the operand; in the updates (only where the indices are promised unique,
    as in JAX): the operand times the scatter-add of the updates' tangents."""
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    if type(t_updates) is not Zero and not params["unique_indices"]:
        raise NotImplementedError(
            "scatter_mul gradients are only implemented if `unique_indices=True`")
    ans = scatter_mul_p.bind(*primals, **params)
    out = Zero(tangents[0].aval) if type(t_operand) is Zero else \
        scatter_mul_p.bind(t_operand, indices, updates, **params)
    if type(t_updates) is not Zero:
        scattered = _add_into(_zeros(operand), indices, t_updates, params)
        out = add_tangents(out, mul(operand, scattered))
    return ans, out


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    """Linear only in the operand (the jvp in the updates goes through scatter-add)."""
    if is_undefined(updates):
        raise NotImplementedError("scatter-mul is not linear in its updates; differentiate "
                                  "it with jvp rather than transposing it there")
    if type(ct) is Zero:
        return [Zero(operand.aval), None, None]
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


def _scatter_extremum_jvp(name):
    """scatter-min/max: the tangent at a position is the mean of the tangents of the
    contenders equal to the result there (the operand's value and the updates), as JAX
    splits ties."""

    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        ans = registry[name].bind(*primals, **params)
        if type(tangents[0]) is Zero and type(tangents[2]) is Zero:
            return ans, Zero(tangents[0].aval)
        t_operand, t_updates = instantiate(tangents[0]), instantiate(tangents[2])
        zeros_u, ones_u = _zeros(updates), full(updates.shape, 1, updates.dtype)
        zeros_o, ones_o = _zeros(operand), full(operand.shape, 1, operand.dtype)
        won = eq(updates, _read_back(ans, indices, tuple(updates.shape), params))
        n_won = _add_into(zeros_o, indices, select_n(won, zeros_u, ones_u), params)
        # the operand keeps its share where it equals the result, or where no update won
        # (a NaN result)
        kept = bitwise_or(eq(operand, ans), eq(n_won, zeros_o))
        count = add(select_n(kept, zeros_o, ones_o), n_won)
        total = add(select_n(kept, zeros_o, t_operand),
                        _add_into(zeros_o, indices, select_n(won, zeros_u, t_updates),
                                  params))
        return ans, div(total, count)

    return jvp


scatter_p, scatter = _scatter_family("scatter", None, None, None, True, _scatter_jvp,
                                     _scatter_transpose)
scatter_add_p, scatter_add = _scatter_family(
    "scatter-add", "add", np.add, "add", False, linear_jvp_of("scatter-add", (0, 2)),
    _scatter_add_transpose(negate=False))
scatter_sub_p, scatter_sub = _scatter_family(
    "scatter-sub", "sub", np.subtract, "sub", False, linear_jvp_of("scatter-sub", (0, 2)),
    _scatter_add_transpose(negate=True))
scatter_mul_p, scatter_mul = _scatter_family("scatter-mul", "mul", np.multiply, "mul", False,
                                             _scatter_mul_jvp, _scatter_mul_transpose)
scatter_min_p, scatter_min = _scatter_family("scatter-min", "min", np.minimum, "min", True,
                                             _scatter_extremum_jvp("scatter-min"), NONLINEAR)
scatter_max_p, scatter_max = _scatter_family("scatter-max", "max", np.maximum, "max", True,
                                             _scatter_extremum_jvp("scatter-max"), NONLINEAR)

_SCATTER_DOC = """Scatter ``updates`` into ``operand`` at the windows ``scatter_indices`` select,
{how}.

Parameters
----------
operand : array_like
scatter_indices : array_like of integers
    Index vectors along the last dimension.
updates : array_like
    Same dtype as ``operand``.
dimension_numbers : ScatterDimensionNumbers
indices_are_sorted, unique_indices : bool
    Promises about the indices that XLA may exploit.
mode : str or GatherScatterMode, optional
    ``'clip'`` clamps indices; ``'drop'`` (the default, also ``None`` and ``'fill'``) skips
    windows that are out of bounds.

Returns
-------
Array like ``operand``.
"""
for _fn, _how in ((scatter, "replacing the values there"),
                  (scatter_add, "adding them to the values there"),
                  (scatter_sub, "subtracting them from the values there"),
                  (scatter_mul, "multiplying the values there by them"),
                  (scatter_min, "keeping the minimum"), (scatter_max, "keeping the maximum")):
    _fn.__doc__ = _SCATTER_DOC.format(how=_how)
for _fn, _name in ((scatter, "scatter"), (scatter_add, "scatter_add"),
                   (scatter_sub, "scatter_sub"), (scatter_mul, "scatter_mul"),
                   (scatter_min, "scatter_min"), (scatter_max, "scatter_max")):
    _fn.__name__ = _fn.__qualname__ = _name

__all__ = [
    "GatherScatterMode", "GatherDimensionNumbers", "ScatterDimensionNumbers", "gather",
    "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
    "gather_p", "scatter_p", "scatter_add_p", "scatter_sub_p", "scatter_mul_p", "scatter_min_p",
    "scatter_max_p",
]
