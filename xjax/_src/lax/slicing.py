"""Slicing primitives: slice, dynamic_slice, dynamic_update_slice, and their wrappers
(index_in_dim, slice_in_dim, dynamic_index_in_dim, ...). Gather and scatter live in
``xjax.lax.gather_scatter`` and are re-exported here, as ``jax.lax`` groups them.

Dynamic starts are clamped so the slice fits (StableHLO ``dynamic_slice`` semantics, which JAX
keeps); the wrappers first map negative starts to ``start + dim`` as JAX does.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Primitive
from xjax._src.lax import sharding_rules
from xjax._src.core.trace import Tracer
from xjax._src.lax import concat_pad  # it imports this module: used at call time only
from xjax._src.lax.ad_helpers import linear_jvp_of, operand_aval
from xjax._src.lax.ad_rules import Zero, get_aval, is_undefined, transpose_by_parts
from xjax._src.lax.batch_rules import batch_size, bdim_at_front, move_axis, not_mapped
from xjax._src.lax.compare import lt, select_n
from xjax._src.lax.convert import convert_element_type, convert_element_type_p
from xjax._src.lax.elementwise import add, rem
from xjax._src.lax.gather_scatter import *  # noqa: F401,F403
from xjax._src.lax.gather_scatter import __all__ as _gather_scatter_all
from xjax._src.lax.gather_scatter import (GatherDimensionNumbers, GatherScatterMode,
                                          ScatterDimensionNumbers, gather, scatter)
from xjax._src.lax.shape import (as_operand, broadcast, canonicalize_axis, canonicalize_shape,
                                 expand_dims, full, index_tuple, reshape, scalar_constant,
                                 squeeze)
from xjax._src.lowering.stablehlo import aval_type, i64_array

# -- slice --


def _slice_abstract_eval(operand, *, start_indices, limit_indices, strides):
    for name, values in (("start_indices", start_indices), ("limit_indices", limit_indices)):
        if any(v < 0 for v in values):
            raise TypeError(f"slice {name} must have every element be nonnegative, got "
                            f"{values}.")
    if operand.ndim != len(start_indices):
        raise TypeError("slice start_indices must have length equal to the number of "
                        f"dimensions of the operand, got indices {start_indices} for operand "
                        f"shape {operand.shape}.")
    if len(start_indices) != len(limit_indices):
        raise TypeError("slice limit_indices must have the same length as start_indices, got "
                        f"start_indices {start_indices} and limit_indices {limit_indices}.")
    if not all(d >= lim for d, lim in zip(operand.shape, limit_indices, strict=True)):
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                        f"limit_indices {limit_indices} for operand shape {operand.shape}.")
    if not all(lim >= s for lim, s in zip(limit_indices, start_indices, strict=True)):
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, "
                        f"got start_indices {start_indices} and limit_indices "
                        f"{limit_indices}.")
    sizes = [lim - s for s, lim in zip(start_indices, limit_indices, strict=True)]
    if strides is not None:
        if len(strides) != operand.ndim:
            raise TypeError("slice strides must have length equal to the number of dimensions "
                            f"of the operand, got strides {strides} for operand shape "
                            f"{operand.shape}.")
        if not all(s > 0 for s in strides):
            raise TypeError(f"slice strides must be positive, got {strides}")
        sizes = [0 if n == 0 else (n - 1) // s + 1 for n, s in zip(sizes, strides, strict=True)]
    return ShapedArray(sizes, operand.dtype, operand.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    steps = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(builtins.slice(s, lim, st) for s, lim, st in
                               zip(start_indices, limit_indices, steps, strict=True))]


def _slice_lower(ctx, x, *, start_indices, limit_indices, strides):
    steps = strides or (1,) * len(start_indices)
    return ctx.builder.op1("stablehlo.slice", [x], aval_type(ctx.avals_out[0]),
                           {"start_indices": i64_array(start_indices),
                            "limit_indices": i64_array(limit_indices),
                            "strides": i64_array(steps)})


def _slice_transpose(ct, operand, *, start_indices, limit_indices, strides):
    """Zeros around the slice, and between its elements where strided."""
    shape = operand.aval.shape
    steps = strides or (1,) * len(shape)
    out_shape = get_aval(ct).shape
    config = []
    for size, start, n, step in zip(shape, start_indices, out_shape, steps, strict=True):
        end = start + (0 if n == 0 else (n - 1) * step + 1)  # one past the last element
        config.append((start, size - end, step - 1))
    return concat_pad.pad(ct, scalar_constant(0, operand.aval.dtype), tuple(config))


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    size = get_aval(x).shape[0]
    return slice_p.bind(x, start_indices=(0, *start_indices),
                        limit_indices=(size, *limit_indices),
                        strides=None if strides is None else (1, *strides)), 0


slice_p = Primitive("slice", abstract_eval=_slice_abstract_eval, impl=_slice_impl,
                    lower=_slice_lower, jvp=linear_jvp_of("slice"),
                    transpose=transpose_by_parts(_slice_transpose), batch=_slice_batch,
                    sharding_rule=sharding_rules.slice_rule)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 (JAX's name)
    """The static slice ``operand[start:limit:stride]`` in every dimension.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.slice(jnp.arange(10), (1,), (8,), (3,))
    Array([1, 4, 7], dtype=int32)
    """
    return slice_p.bind(as_operand(operand), start_indices=index_tuple(start_indices),
                        limit_indices=index_tuple(limit_indices),
                        strides=None if strides is None else index_tuple(strides))


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """``operand[..., start_index:limit_index:stride]`` along ``axis`` (negative indices count
    from the end).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.slice_in_dim(jnp.arange(4), 1, 3)
    Array([1, 2], dtype=int32)
    """
    shape = np.shape(operand)
    axis = operator.index(axis)
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    size = shape[axis]
    lo = 0 if start_index is None else operator.index(start_index)
    hi = size if limit_index is None else operator.index(limit_index)
    start[axis] = lo + size if lo < 0 else lo
    limit[axis] = hi + size if hi < 0 else hi
    strides[axis] = operator.index(stride)
    return slice(operand, start, limit, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """``operand[..., index]`` along ``axis``; keeps a size-1 axis when ``keepdims``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.index_in_dim(jnp.arange(4), 2, keepdims=False)
    Array(2, dtype=int32)
    """
    index, axis = operator.index(index), operator.index(axis)
    size = np.shape(operand)[axis]
    if index < 0:
        index += size
    if not 0 <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# -- dynamic starts --

def _check_indices(name: str, operand, indices, sep: str = ": ") -> None:
    if len(indices) != operand.ndim:
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(indices)} vs {operand.shape})")
    if any(i.dtype != indices[0].dtype or not dtypes.is_integer(i.dtype) for i in indices):
        got = ", ".join(i.dtype.name for i in indices)
        raise TypeError(f"index arguments to {name} must be integers of the same type, "
                        f"got{sep}{got}")
    if any(i.ndim != 0 for i in indices):
        raise TypeError(f"start_indices arguments to {name} must be scalars, "
                        f" got indices {tuple(indices)}")


def _clamped_starts(starts, shape, sizes):
    """Starts clamped into ``[0, dim - size]`` so the window fits (as XLA does)."""
    return [min(max(int(s), 0), d - n) for s, d, n in zip(starts, shape, sizes, strict=True)]


def _dynamic_slice_abstract_eval(operand, *start_indices, slice_sizes):
    _check_indices("dynamic_slice", operand, start_indices)
    if len(slice_sizes) != operand.ndim:
        raise TypeError("dynamic_slice slice_sizes must have the same length as the operand "
                        f"rank, got slice_sizes {slice_sizes} for operand shape "
                        f"{operand.shape}.")
    if not all(d >= s for d, s in zip(operand.shape, slice_sizes, strict=True)):
        raise TypeError("slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    if not all(s >= 0 for s in slice_sizes):
        raise TypeError("slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes of {slice_sizes}.")
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


def _dynamic_slice_impl(x, *start_indices, slice_sizes):
    x = np.asarray(x)
    starts = _clamped_starts(start_indices, x.shape, slice_sizes)
    return x[tuple(builtins.slice(s, s + n) for s, n in zip(starts, slice_sizes, strict=True))]


def _dynamic_slice_lower(ctx, x, *start_indices, slice_sizes):
    return ctx.builder.op1("stablehlo.dynamic_slice", [x, *start_indices],
                           aval_type(ctx.avals_out[0]), {"slice_sizes": i64_array(slice_sizes)})


def _dynamic_slice_transpose(ct, operand, *start_indices, slice_sizes):
    """The slice written into zeros at the same (clamped) starts; none for the starts."""
    if type(ct) is Zero:
        return [Zero(operand.aval)] + [None] * len(start_indices)
    zeros = full(operand.aval.shape, 0, operand.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *start_indices)] + \
        [None] * len(start_indices)


def _index_vectors(starts, dims, size):
    """The start indices as one ``(size, n)`` array of a common integer dtype."""
    dtype = np.dtype(np.int32)
    if starts:
        dtype = get_aval(starts[0]).dtype
        for s in starts[1:]:
            dtype = dtypes.promote_types(dtype, get_aval(s).dtype)
    columns = []
    for s, d in zip(starts, dims, strict=True):
        s = convert_element_type(s, dtype)
        columns.append(reshape(bdim_at_front(s, d, size), (size, 1)))
    if not columns:
        return full((size, 0), 0, dtype)
    return concat_pad.concatenate(columns, 1)


def _zero_start(starts):
    dtype = get_aval(starts[0]).dtype if starts else np.dtype(np.int32)
    return full((), 0, dtype)


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    """Unbatched starts: one more start (0) for the batch axis. Batched starts: a gather
    whose index vectors are the starts (clamped, as dynamic_slice clamps)."""
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
        # as JAX's gather batching: an empty batch keeps the slice within it
        sizes = (min(1, size), *slice_sizes)
    return gather(x, indices, dnums, sizes, mode=GatherScatterMode.CLIP), 0


dynamic_slice_p = Primitive(
    "dynamic_slice", abstract_eval=_dynamic_slice_abstract_eval, impl=_dynamic_slice_impl,
    lower=_dynamic_slice_lower, jvp=linear_jvp_of("dynamic_slice", (0,)),
    transpose=_dynamic_slice_transpose, batch=_dynamic_slice_batch,
    sharding_rule=sharding_rules.dynamic_slice)


def _dynamic_update_slice_abstract_eval(operand, update, *start_indices):
    if operand.dtype != update.dtype:
        raise TypeError("lax.dynamic_update_slice requires arguments to have the same dtypes, "
                        f"got {operand.dtype.name}, {update.dtype.name}.")
    if operand.ndim != update.ndim:
        raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {operand.shape}.")
    _check_indices("dynamic_update_slice", operand, start_indices, sep=" ")
    if not all(d >= u for d, u in zip(operand.shape, update.shape, strict=True)):
        raise TypeError("dynamic_update_slice update shape must be smaller than operand shape, "
                        f"got update shape {update.shape} for operand shape {operand.shape}.")
    weak = all(a.weak_type for a in (operand, update, *start_indices))
    return ShapedArray(operand.shape, operand.dtype, weak)


def _dynamic_update_slice_impl(x, update, *start_indices):
    out = np.array(x, copy=True)
    update = np.asarray(update)
    starts = _clamped_starts(start_indices, out.shape, update.shape)
    out[tuple(builtins.slice(s, s + n) for s, n in zip(starts, update.shape, strict=True))] = \
        update
    return out


def _dynamic_update_slice_lower(ctx, x, update, *start_indices):
    return ctx.builder.op1("stablehlo.dynamic_update_slice", [x, update, *start_indices],
                           aval_type(ctx.avals_out[0]))


def _dynamic_update_slice_transpose(ct, operand, update, *start_indices):
    """Linear jointly in the operand and the update: the operand gets ``ct`` with the
    updated block zeroed, the update gets that block of ``ct``."""
    n_starts = [None] * len(start_indices)
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None for x in (operand, update)] + n_starts
    update_shape = operand_aval(update).shape
    ct_operand = ct_update = None
    if is_undefined(operand):
        zeros = full(update_shape, 0, operand.aval.dtype)
        ct_operand = dynamic_update_slice_p.bind(ct, zeros, *start_indices)
    if is_undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *start_indices, slice_sizes=tuple(update_shape))
    return [ct_operand, ct_update] + n_starts


def _dynamic_update_slice_batch(args, dims):
    """Unbatched starts: one more start (0) for the batch axis. Batched starts: a scatter
    of each example's update into its operand (clamped, as dynamic_update_slice clamps)."""
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


dynamic_update_slice_p = Primitive(
    "dynamic_update_slice", abstract_eval=_dynamic_update_slice_abstract_eval,
    impl=_dynamic_update_slice_impl, lower=_dynamic_update_slice_lower,
    jvp=linear_jvp_of("dynamic_update_slice", (0, 1)),
    transpose=_dynamic_update_slice_transpose, batch=_dynamic_update_slice_batch)


def _split_start_indices(start_indices) -> list:
    """A sequence of scalar starts (a 1-D array is split into its elements)."""
    if isinstance(start_indices, (Array, Tracer, np.ndarray)) and np.ndim(start_indices) == 1:
        n = np.shape(start_indices)[0]
        vector = as_operand(start_indices)
        return [squeeze(slice(vector, (i,), (i + 1,)), (0,)) for i in range(n)]
    return list(start_indices)


def _normalize_index(index, size: int, allow_negative: bool):
    """``index + size`` where ``index`` is negative (JAX's wrappers do this before clamping)."""
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        value = operator.index(index)
        if allow_negative and value < 0:
            value += size
        dtype = (dtypes.python_scalar_dtype(value) if type(index) is int
                 else dtypes.canonicalize_dtype(np.asarray(index).dtype))
        return Array._from_numpy(np.asarray(value, dtype), ShapedArray((), dtype, False))
    index = as_operand(index)
    if not allow_negative or dtypes.is_unsigned(index.dtype) or \
            not dtypes.is_integer(index.dtype):
        return index
    if type(index) is Array:  # concrete: NumPy directly (same result as the ops below)
        value = index._value()
        if value.ndim == 0 and value < 0:
            value = np.asarray(value + size, value.dtype)
        return Array._from_numpy(value, index.aval)
    size_value = Array._from_numpy(np.asarray(size, index.dtype),
                                   ShapedArray((), index.dtype, False))
    zero = Array._from_numpy(np.asarray(0, index.dtype), ShapedArray((), index.dtype, True))
    negative = lt(index, zero)
    # JAX computes ``index + size`` with jnp's promotion, which first strips a weak type
    strong = index if not index.weak_type else convert_element_type_p.bind(
        index, new_dtype=index.dtype, weak_type=False, sharding=None)
    return select_n(negative, index, add(strong, size_value))


def _start_operands(operand, start_indices, allow_negative_indices):
    starts = _split_start_indices(start_indices)
    shape = np.shape(operand)
    if len(starts) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(starts)} vs {tuple(shape)})")
    allow = allow_negative_indices
    if isinstance(allow, bool):
        allow = (allow,) * len(starts)
    return [_normalize_index(i, d, a) for i, d, a in zip(starts, shape, allow, strict=True)]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The slice of shape ``slice_sizes`` starting at the (possibly traced) ``start_indices``.

    Negative starts count from the end; starts are then clamped so the slice fits.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.dynamic_slice(jnp.arange(5), (4,), (2,))
    Array([3, 4], dtype=int32)
    """
    starts = _start_operands(operand, start_indices, allow_negative_indices)
    return dynamic_slice_p.bind(as_operand(operand), *starts,
                                slice_sizes=canonicalize_shape(slice_sizes))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``operand`` with the block starting at ``start_indices`` replaced by ``update``.

    Starts are clamped so the update fits, as in :func:`dynamic_slice`.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.dynamic_update_slice(jnp.zeros(4), jnp.ones(2), (3,))
    Array([0., 0., 1., 1.], dtype=float32)
    """
    starts = _start_operands(operand, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(as_operand(operand), as_operand(update), *starts)


def _in_dim_starts(operand, index, axis):
    ndim = np.ndim(operand)
    axis = canonicalize_axis(axis, ndim)
    starts = [0] * ndim
    starts[axis] = index
    return starts, axis


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """:func:`dynamic_slice` along one axis.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.dynamic_slice_in_dim(jnp.arange(5), 4, 3)
    Array([2, 3, 4], dtype=int32)
    """
    starts, axis = _in_dim_starts(operand, start_index, axis)
    sizes = list(np.shape(operand))
    sizes[axis] = operator.index(slice_size)
    allow = [False] * len(starts)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """:func:`dynamic_slice_in_dim` of size 1, squeezed unless ``keepdims``."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (canonicalize_axis(axis, np.ndim(operand)),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """:func:`dynamic_update_slice` along one axis.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.dynamic_update_slice_in_dim(jnp.zeros(6), jnp.ones(3), 2, axis=0)
    Array([0., 0., 1., 1., 1., 0.], dtype=float32)
    """
    starts, axis = _in_dim_starts(operand, start_index, axis)
    allow = [False] * len(starts)
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
    """Write ``update`` (with or without the size-1 ``axis``) at ``index`` along ``axis``."""
    axis = canonicalize_axis(axis, np.ndim(operand))
    if np.ndim(update) != np.ndim(operand):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def _floor_mod(index, size: int):
    """``index`` modulo ``size`` with the sign of ``size`` (Python's ``%``)."""
    n = Array._from_numpy(np.asarray(builtins.max(size, 1), index.dtype),
                          ShapedArray((), index.dtype, False))
    r = rem(index, broadcast(n, index.shape))
    if dtypes.is_unsigned(index.dtype):
        return r
    zero = full(index.shape, 0, index.dtype)
    return select_n(lt(r, zero), r, add(r, broadcast(n, index.shape)))


def index_take(src, idxs, axes):
    """Gather ``src[idxs[0], idxs[1], ...]`` along ``axes`` (one index array per axis).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.index_take(jnp.arange(12).reshape(3, 4), (jnp.array([0, 2]),), (0,)).shape
    (2, 4)
    """
    axes = index_tuple(axes)
    shape = np.shape(src)
    # as JAX, indices wrap around (floor modulo the axis size): -1 is the last element
    idxs = [_floor_mod(as_operand(i), shape[a]) for i, a in zip(idxs, axes, strict=True)]
    indices = concat_pad.concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    slice_sizes = list(shape)
    for a in axes:
        slice_sizes[a] = 1
    offset_dims = tuple(range(1, len(shape) - len(axes) + 1))
    dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=axes,
                                   start_index_map=axes)
    return gather(src, indices, dimension_numbers=dnums, slice_sizes=tuple(slice_sizes))


__all__ = [
    "slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_update_slice",
    "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
    "dynamic_update_index_in_dim", "index_take",
    "slice_p", "dynamic_slice_p", "dynamic_update_slice_p",
] + list(_gather_scatter_all)
