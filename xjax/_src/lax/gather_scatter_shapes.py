"""Shape rules of gather and scatter: the checks of their dimension numbers, with JAX's
messages (which follow XLA's shape inference), the shapes they imply, and the windows
their NumPy impls read and write."""

from __future__ import annotations

import math

import numpy as np

from xjax._src.core import dtypes


def _is_sorted(dims, op_name, name):
    if list(dims) != sorted(dims):
        raise TypeError(f"{name} in {op_name} op must be sorted; got {dims}")


def _no_duplicate_dims(dims, op_name, name):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op_name} op must not repeat; got: {dims}.")


def _sorted_dims_in_range(dims, rank, op_name, name):
    if dims and (dims[0] < 0 or dims[-1] >= rank):
        bad = dims[0] if dims[0] < 0 else dims[-1]
        raise TypeError(f"Invalid {name} set in {op_name} op; valid range is [0, {rank}); "
                        f"got: {bad}.")


def _dims_in_range(dims, rank, op_name, name):
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {name} set in {op_name} op; valid range is [0, {rank}); "
                            f"got: {d}.")


def _disjoint_dims(dims1, dims2, op_name, name1, name2):
    if set(dims1) & set(dims2):
        raise TypeError(f"{name1} and {name2} in {op_name} op must be disjoint; got: {dims1} "
                        f"and {dims2}.")


def _check_operand_batching(op, operand, operand_dims):
    _no_duplicate_dims(operand_dims, op, "operand_batching_dims")
    _is_sorted(operand_dims, op, "operand_batching_dims")
    _sorted_dims_in_range(operand_dims, operand.ndim, op, "operand_batching_dims")


def _check_indices_batching(op, operand, indices, operand_dims, indices_dims, indices_name):
    cap = op.capitalize()
    _no_duplicate_dims(indices_dims, op, indices_name)
    _dims_in_range(indices_dims, indices.ndim, op, indices_name)
    if indices.ndim - 1 in indices_dims:
        raise TypeError(f"{cap} op cannot have the index vector dimension as a batching "
                        f"dimension; got {indices_dims}.")
    if len(operand_dims) != len(indices_dims):
        sep = "" if op == "gather" else " "
        raise TypeError(f"{cap} op requires equal numbers of operand_batching_dims and "
                        f"{indices_name}, got {operand_dims} and{sep}{indices_dims}.")
    operand_batch = tuple(operand.shape[d] for d in operand_dims)
    indices_batch = tuple(indices.shape[d] for d in indices_dims)
    if operand_batch != indices_batch:
        raise TypeError(f"{cap} op requires operand batching dimensions and indices batching "
                        f"dimensions to have the same shape, got {operand_batch} and "
                        f"{indices_batch}.")
    return operand_batch


def _check_index_dtype(indices):
    if not dtypes.is_integer(indices.dtype):
        raise ValueError("indices must have an integer type")


def _check_index_map(op, operand, indices, index_map, name):
    if len(index_map) != indices.shape[-1]:
        dim = indices.ndim - 1
        end = "." if op == "gather" else ""
        raise TypeError(f"{op.capitalize()} op has {len(index_map)} elements in {name} and the "
                        f"bound of dimension index_vector_dim={dim} of indices is "
                        f"{indices.shape[-1]}. These two numbers must be equal{end}")
    for i, d in enumerate(index_map):
        if not 0 <= d < operand.ndim:
            what = "start_index_map" if op == "gather" else \
                "scatter_dims_to_operand_dims mapping"
            raise TypeError(f"Invalid {what}; domain is [0, {operand.ndim}), got: {i}->{d}.")
    _no_duplicate_dims(index_map, op, name)


def gather_shape(operand, indices, dn, slice_sizes) -> tuple:
    """The result shape of a gather; JAX's TypeError for inconsistent dimension numbers."""
    _check_index_dtype(indices)
    if indices.ndim < 1:
        raise TypeError("Gather index leaf dimension must be within [0, rank(indices) + 1). "
                        f"rank(indices) is {indices.ndim} and gather index leaf dimension "
                        "is -1.")
    _is_sorted(dn.offset_dims, "gather", "offset_dims")
    _no_duplicate_dims(dn.offset_dims, "gather", "offset_dims")
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    for i, d in enumerate(dn.offset_dims):
        if not 0 <= d < out_rank:
            raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, but "
                            f"should have been in [0, {out_rank})")
    _check_index_map("gather", operand, indices, dn.start_index_map, "start_index_map")
    _is_sorted(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
    _sorted_dims_in_range(dn.collapsed_slice_dims, operand.ndim, "gather",
                          "collapsed_slice_dims")
    _no_duplicate_dims(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
    _check_operand_batching("gather", operand, dn.operand_batching_dims)
    _disjoint_dims(dn.collapsed_slice_dims, dn.operand_batching_dims, "gather",
                   "collapsed_slice_dims", "operand_batching_dims")
    _disjoint_dims(dn.start_index_map, dn.operand_batching_dims, "gather",
                   "start_index_map", "operand_batching_dims")
    _check_indices_batching("gather", operand, indices, dn.operand_batching_dims,
                            dn.start_indices_batching_dims, "start_indices_batching_dims")
    if operand.ndim != len(slice_sizes):
        raise TypeError("Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, "
                        f"input_shape.rank={operand.ndim}")
    dropped = len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims)
    if len(slice_sizes) != len(dn.offset_dims) + dropped:
        raise TypeError("All components of the offset index in a gather op must either be a "
                        "offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes="
                        f"{dn.offset_dims}, collapsed_slice_dims={dn.collapsed_slice_dims}, "
                        f"operand_batching_dims={dn.operand_batching_dims}.")
    if indices.size:
        for i, (size, bound) in enumerate(zip(slice_sizes, operand.shape, strict=True)):
            if not 0 <= size <= bound:
                raise TypeError(f"Slice size at index {i} in gather op is out of range, must "
                                f"be within [0, {bound} + 1), got {size}.")
    for i, d in enumerate(dn.collapsed_slice_dims):
        if slice_sizes[d] != 1:
            raise TypeError("Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {slice_sizes[d]} for index {d} at position {i}.")
    for i, d in enumerate(dn.operand_batching_dims):
        if slice_sizes[d] > 1:
            raise TypeError("Gather op can only have operand batching dims with bound 0/1, "
                            f"but bound is {slice_sizes[d]} for index {d} at position {i}.")
    return _gather_shape(indices.shape, dn, slice_sizes)


def _gather_shape(indices_shape, dn, slice_sizes):
    batch = iter(indices_shape[:-1])
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = iter(s for d, s in enumerate(slice_sizes) if d not in dropped)
    out_rank = len(dn.offset_dims) + len(indices_shape) - 1
    return tuple(next(offsets) if d in dn.offset_dims else next(batch) for d in range(out_rank))


def scatter_window_shape(operand_shape, updates_shape, dn):
    """The window in operand coordinates: 1 in inserted and batching dims."""
    sizes = iter(updates_shape[d] for d in dn.update_window_dims)
    skipped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    return tuple(1 if d in skipped else next(sizes) for d in range(len(operand_shape)))


def check_scatter(operand, indices, updates, dn) -> None:
    """JAX's TypeError for scatter operands and dimension numbers that do not fit."""
    _check_index_dtype(indices)
    if operand.dtype != updates.dtype:
        raise TypeError(f"lax.scatter requires arguments to have the same dtypes, got "
                        f"{operand.dtype.name}, {updates.dtype.name}.")
    if indices.ndim < 1:
        raise TypeError("Scatter index leaf dimension must be within [0, rank(indices) + 1). "
                        f"rank(indices) is {indices.ndim} and scatter index leaf dimension "
                        "is -1.")
    expected_rank = indices.ndim - 1 + len(dn.update_window_dims)
    if updates.ndim != expected_rank:
        raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}.")
    for dims, rank, label in ((dn.update_window_dims, updates.ndim, "update_window_dims"),
                              (dn.inserted_window_dims, operand.ndim, "inserted_window_dims")):
        _is_sorted(dims, "scatter", label)
        _no_duplicate_dims(dims, "scatter", label)
        _sorted_dims_in_range(dims, rank, "scatter", label)
    _is_sorted(dn.operand_batching_dims, "scatter", "operand_batching_dims")
    _check_operand_batching("scatter", operand, dn.operand_batching_dims)
    _disjoint_dims(dn.inserted_window_dims, dn.operand_batching_dims, "scatter",
                   "inserted_window_dims", "operand_batching_dims")
    _disjoint_dims(dn.scatter_dims_to_operand_dims, dn.operand_batching_dims, "scatter",
                   "scatter_dims_to_operand_dims", "operand_batching_dims")
    operand_batch = _check_indices_batching(
        "scatter", operand, indices, dn.operand_batching_dims,
        dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    updates_batch = tuple(updates.shape[scatter_dims[d]]
                          for d in dn.scatter_indices_batching_dims if d < len(scatter_dims))
    if dn.operand_batching_dims and operand_batch != updates_batch:
        raise TypeError("Scatter op requires operand batching dimensions and updates batching "
                        f"dimensions to have the same shape, got {operand_batch} and "
                        f"{updates_batch}.")
    window_size = (len(dn.update_window_dims) + len(dn.inserted_window_dims)
                   + len(dn.operand_batching_dims))
    if operand.ndim != window_size:
        raise TypeError(f"Scatter op has window of size {window_size}; doesn't match operand "
                        f"of rank {operand.ndim}.")
    _check_index_map("scatter", operand, indices, dn.scatter_dims_to_operand_dims,
                     "scatter_dims_to_operand_dims")
    skipped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    max_sizes = [s for d, s in enumerate(operand.shape) if d not in skipped]
    for bound, d in zip(max_sizes, dn.update_window_dims, strict=True):
        if bound < updates.shape[d]:
            raise TypeError("Bounds of the window dimensions of updates must not exceed the "
                            "bounds of the corresponding dimensions of operand. For dimension "
                            f"{d}, updates bound is {updates.shape[d]}, operand bound is "
                            f"{bound}.")
    for i, d in enumerate(scatter_dims):
        if updates.shape[d] != indices.shape[i]:
            raise TypeError("Bounds of the scatter dimensions of updates must be the same as "
                            "the bounds of the corresponding dimensions of scatter indices. "
                            f"For scatter dimension {d}, updates bound is {updates.shape[d]}, "
                            f"indices bound is {indices.shape[i]}.")


# -- the NumPy core of the impls: window starts of every index vector --

def window_starts(operand_shape, indices, index_map, operand_batching_dims,
                   indices_batching_dims):
    """(n, rank) int64 window starts, one row per index vector (before clamping)."""
    indices = np.asarray(indices)
    batch_shape = indices.shape[:-1]
    n = math.prod(batch_shape)
    starts = np.zeros((n, len(operand_shape)), np.int64)
    if index_map:
        starts[:, list(index_map)] = indices.reshape(n, indices.shape[-1]).astype(np.int64)
    if operand_batching_dims:
        coords = np.unravel_index(np.arange(n), batch_shape)
        for od, idim in zip(operand_batching_dims, indices_batching_dims, strict=True):
            starts[:, od] = coords[idim]
    return starts


def window_index(starts, window_shape):
    """Index arrays selecting, for each start row, the window ``window_shape`` at it:
    together they have shape ``(n, *window_shape)``."""
    rank = len(window_shape)
    index = []
    for d, size in enumerate(window_shape):
        shape = [1] * (rank + 1)
        shape[d + 1] = size
        index.append(starts[:, d].reshape([-1] + [1] * rank) + np.arange(size).reshape(shape))
    return tuple(index)


def windows_in_bounds(starts, dims, operand_shape, window_shape):
    upper = np.asarray(operand_shape, np.int64) - np.asarray(window_shape, np.int64)
    dims = list(dims)
    return np.all((starts[:, dims] >= 0) & (starts[:, dims] <= upper[dims]), axis=1)


def clamp_starts(starts, operand_shape, window_shape):
    upper = np.asarray(operand_shape, np.int64) - np.asarray(window_shape, np.int64)
    return np.clip(starts, 0, np.maximum(upper, 0))
