"""Batching rules of slice, dynamic_slice, dynamic_update_slice, gather and the scatters
(DESIGN.md §4). Batched operands and indices pair up through the ``operand_batching_dims``
of the gather/scatter dimension numbers, so every rule is one application on the batch;
dynamic slices with batched starts become gathers/scatters.

Imports of lax functions are local: the modules defining the primitives import this one.
"""

from __future__ import annotations

import numpy as np

from xjax.core.ad_util import get_aval
from xjax.lax.batch_rules import batch_size, bdim_at_front, move_axis, not_mapped


def _shift(axes) -> tuple:
    return tuple(a + 1 for a in axes)


def slice_batch(args, dims, *, start_indices, limit_indices, strides):
    from xjax.lax.slicing import slice_p
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    size = get_aval(x).shape[0]
    return slice_p.bind(x, start_indices=(0, *start_indices),
                        limit_indices=(size, *limit_indices),
                        strides=None if strides is None else (1, *strides)), 0


def _index_vectors(starts, dims, size):
    """The start indices as one ``(size, n)`` array of a common integer dtype."""
    from xjax import lax
    from xjax.core import dtypes
    dtype = np.dtype(np.int32)
    if starts:
        dtype = get_aval(starts[0]).dtype
        for s in starts[1:]:
            dtype = dtypes.promote_types(dtype, get_aval(s).dtype)
    columns = []
    for s, d in zip(starts, dims, strict=True):
        s = lax.convert_element_type(s, dtype)
        columns.append(lax.reshape(bdim_at_front(s, d, size), (size, 1)))
    if not columns:
        return lax.full((size, 0), 0, dtype)
    return lax.concatenate(columns, 1)


def _zero_start(starts):
    from xjax import lax
    dtype = get_aval(starts[0]).dtype if starts else np.dtype(np.int32)
    return lax.full((), 0, dtype)


def dynamic_slice_batch(args, dims, *, slice_sizes):
    """Unbatched starts: one more start (0) for the batch axis. Batched starts: a gather
    whose index vectors are the starts (clamped, as dynamic_slice clamps)."""
    from xjax.lax.gather_scatter import GatherDimensionNumbers, GatherScatterMode, gather
    from xjax.lax.slicing import dynamic_slice_p
    x, *starts = args
    dx, *dstarts = dims
    size = batch_size(args, dims)
    rank = len(slice_sizes)
    if all(d is not_mapped for d in dstarts):
        x = move_axis(x, dx, 0)
        return dynamic_slice_p.bind(x, _zero_start(starts), *starts,
                                    slice_sizes=(size, *slice_sizes)), 0
    indices = _index_vectors(starts, dstarts, size)
    offset_dims = tuple(range(1, rank + 1))
    if dx is not_mapped:
        dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=(),
                                       start_index_map=tuple(range(rank)))
        sizes = tuple(slice_sizes)
    else:
        x = move_axis(x, dx, 0)
        dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=(),
                                       start_index_map=tuple(range(1, rank + 1)),
                                       operand_batching_dims=(0,),
                                       start_indices_batching_dims=(0,))
        sizes = (1, *slice_sizes)
    return gather(x, indices, dnums, sizes, mode=GatherScatterMode.CLIP), 0


def dynamic_update_slice_batch(args, dims):
    """Unbatched starts: one more start (0) for the batch axis. Batched starts: a scatter
    of each example's update into its operand (clamped, as dynamic_update_slice clamps)."""
    from xjax.lax.gather_scatter import GatherScatterMode, ScatterDimensionNumbers, scatter
    from xjax.lax.slicing import dynamic_update_slice_p
    x, update, *starts = args
    dx, du, *dstarts = dims
    size = batch_size(args, dims)
    x, update = bdim_at_front(x, dx, size), bdim_at_front(update, du, size)
    if all(d is not_mapped for d in dstarts):
        return dynamic_update_slice_p.bind(x, update, _zero_start(starts), *starts), 0
    rank = len(get_aval(x).shape) - 1
    indices = _index_vectors(starts, dstarts, size)
    dnums = ScatterDimensionNumbers(update_window_dims=tuple(range(1, rank + 1)),
                                    inserted_window_dims=(),
                                    scatter_dims_to_operand_dims=tuple(range(1, rank + 1)),
                                    operand_batching_dims=(0,),
                                    scatter_indices_batching_dims=(0,))
    return scatter(x, indices, update, dnums, indices_are_sorted=True, unique_indices=True,
                   mode=GatherScatterMode.CLIP), 0


def gather_batch(args, dims, *, dimension_numbers, slice_sizes, **params):
    """Batch axes first. A batched operand alone: the batch is a full window dimension.
    Batched indices alone: one more batch dimension of the indices. Both: a paired
    operand/indices batching dimension."""
    from xjax.lax.gather_scatter import gather_p
    (x, indices), (dx, di) = args, dims
    dn = dimension_numbers
    offset_dims = _shift(dn.offset_dims)
    collapsed = _shift(dn.collapsed_slice_dims)
    index_map = _shift(dn.start_index_map)
    operand_batching = _shift(dn.operand_batching_dims)
    indices_batching = dn.start_indices_batching_dims
    if dx is not not_mapped and di is not_mapped:
        x = move_axis(x, dx, 0)
        offset_dims = (0, *offset_dims)
        slice_sizes = (get_aval(x).shape[0], *slice_sizes)
    elif dx is not_mapped:
        indices = move_axis(indices, di, 0)
        collapsed, index_map = dn.collapsed_slice_dims, dn.start_index_map
        operand_batching = dn.operand_batching_dims
        indices_batching = _shift(dn.start_indices_batching_dims)
    else:
        x, indices = move_axis(x, dx, 0), move_axis(indices, di, 0)
        operand_batching = (0, *operand_batching)
        indices_batching = (0, *_shift(indices_batching))
        slice_sizes = (1, *slice_sizes)
    new_dn = type(dn)(offset_dims=offset_dims, collapsed_slice_dims=collapsed,
                      start_index_map=index_map, operand_batching_dims=operand_batching,
                      start_indices_batching_dims=indices_batching)
    return gather_p.bind(x, indices, dimension_numbers=new_dn,
                         slice_sizes=tuple(slice_sizes), **params), 0


def scatter_batch(name):
    """The rule of the scatter primitive ``name``: the operand (broadcast if unmapped) and
    the updates get the batch axis first; with unbatched indices it is a window dimension
    of the updates, with batched ones a paired operand/indices batching dimension."""

    def batch(args, dims, *, dimension_numbers, **params):
        from xjax.core.primitive import registry
        (x, indices, updates), (dx, di, du) = args, dims
        size = batch_size(args, dims)
        x, updates = bdim_at_front(x, dx, size), bdim_at_front(updates, du, size)
        dn = dimension_numbers
        inserted = _shift(dn.inserted_window_dims)
        to_operand = _shift(dn.scatter_dims_to_operand_dims)
        operand_batching = _shift(dn.operand_batching_dims)
        if di is not_mapped:
            window = (0, *_shift(dn.update_window_dims))
            indices_batching = dn.scatter_indices_batching_dims
        else:
            indices = move_axis(indices, di, 0)
            window = _shift(dn.update_window_dims)
            operand_batching = (0, *operand_batching)
            indices_batching = (0, *_shift(dn.scatter_indices_batching_dims))
        new_dn = type(dn)(update_window_dims=window, inserted_window_dims=inserted,
                          scatter_dims_to_operand_dims=to_operand,
                          operand_batching_dims=operand_batching,
                          scatter_indices_batching_dims=indices_batching)
        return registry[name].bind(x, indices, updates, dimension_numbers=new_dn,
                                   **params), 0

    return batch
