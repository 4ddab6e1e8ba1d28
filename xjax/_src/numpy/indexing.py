"""NumPy indexing of Arrays and tracers (``x[idx]``), ``take``/``take_along_axis``, and the
functional updates of ``x.at[idx]`` (``set``, ``add``, ``multiply``, ...).

An index is first parsed into one entry per operand dimension (after expanding ``...`` and
boolean masks, and inserting the ``None`` axes). Then:

* static slices and integers become ``lax.slice`` (+ ``lax.rev`` for negative steps) and
  ``lax.squeeze``;
* traced scalar integers become ``lax.dynamic_slice`` (which clamps the start);
* integer arrays become one ``lax.gather``, placed where NumPy's advanced indexing rules put
  the broadcast index dimensions (in place if the advanced indices are adjacent, else first).

Out-of-bounds reads clamp (as JAX's default ``promise_in_bounds`` does on XLA); out-of-bounds
updates are dropped (JAX's ``.at[]`` default). Updates through an index with slices or
``None`` scatter into the flattened operand at the positions a gather of ``iota`` finds, so
every index NumPy accepts can be updated.
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src.transformations import lax_array_extras
from xjax._src.transformations.auto_axes import auto_axes
from xjax._src import lax
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.ref_avals import Slice
from xjax._src.core.sharding_types import PartitionSpec
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, check_arraylike, convert_element_type,
                                        promote_dtypes, to_jax, canonicalize_axis, dtype_and_weak)
from xjax._src.numpy.creation import ones_like
from xjax._src.numpy.extended import is_extended, moves_elements
from xjax._src.numpy.ufuncs import const, divide, power, remainder

_NON_TUPLE_MESSAGE = (
    "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
    "`arr[array(seq)]` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 "
    "for more information.")

_MODES = {None: None, "clip": "CLIP", "fill": "FILL_OR_DROP", "drop": "FILL_OR_DROP",
          "promise_in_bounds": "PROMISE_IN_BOUNDS"}


def _mode(mode):
    """A ``lax.GatherScatterMode`` from NumPy-style names (None stays None)."""
    if mode is None or isinstance(mode, lax.GatherScatterMode):
        return mode
    try:
        return getattr(lax.GatherScatterMode, _MODES[mode])
    except KeyError:
        raise ValueError(f"Unknown gather mode {mode!r}") from None


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape)


# --------------------------------------------------------------------------------------------
# parsing an index


class _Entry:
    """One parsed index item: kind is 'newaxis', 'slice', 'int', 'dyn' (traced scalar int)
    or 'array' (integer array: an advanced index).

    ``at`` is the item's position in the index as NumPy counts it to decide whether the
    advanced indices are adjacent (an ``...`` or ``None`` between them separates them even
    when it adds no dimension; each dimension of a boolean mask is one item). It is None
    for the index arrays that stand for scalar booleans, which JAX leaves out of that
    decision."""

    __slots__ = ("kind", "value", "at")

    def __init__(self, kind, value=None, at=None):
        self.kind = kind
        self.value = value
        self.at = at


def _as_advanced(entry) -> _Entry:
    """An 'int' or 'dyn' entry as the 'array' entry it is among advanced indices."""
    if entry.kind == "int":
        return _Entry("array", np.asarray(entry.value, np.int32), entry.at)
    if entry.kind == "dyn":
        return _Entry("array", entry.value, entry.at)
    return entry


def _static_slice(s: slice, position: int) -> slice:
    """A slice whose entries are Python ints or None (concrete Arrays are read)."""
    parts = []
    for v in (s.start, s.stop, s.step):
        if v is None or type(v) is int:
            parts.append(v)
            continue
        if isinstance(v, Tracer) and v.to_concrete_value() is None:
            raise IndexError(f"Slice entries must be static integers. Got {s} at position "
                             f"{position}")
        try:
            parts.append(int(v.__index__()))
        except (AttributeError, TypeError):
            raise TypeError(f"slice indices must be integers or None or have an __index__ "
                            f"method, got {s}") from None
    return slice(*parts)


def _index_dtype_error(dtype) -> TypeError:
    return TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                     f"{np.dtype(dtype).name}")


def _parse_item(item, position: int) -> _Entry:
    if item is None:
        return _Entry("newaxis")
    if item is Ellipsis:
        return _Entry("ellipsis")
    if isinstance(item, slice):
        return _Entry("slice", _static_slice(item, position))
    t = type(item)
    if t is bool or isinstance(item, np.bool_):
        return _Entry("bool", np.asarray(bool(item)))
    if t is int or isinstance(item, np.integer):
        return _Entry("int", int(item))
    if isinstance(item, (list, tuple)):
        item = np.asarray(item)
        if item.size == 0:
            item = item.astype(np.int32)
    if hasattr(item, "__jax_array__"):
        item = item.__jax_array__()
    if type(item) is Array or isinstance(item, (Tracer, np.ndarray)):
        dt = aval_of(item).dtype if isinstance(item, (Array, Tracer)) else item.dtype
        traced = isinstance(item, Tracer) and item.to_concrete_value() is None
        if dt == np.bool_:
            if traced:
                raise errors.NonConcreteBooleanIndexError(item)
            return _Entry("bool", np.asarray(item))
        if not dtypes.is_integer(dt):
            raise _index_dtype_error(dt)
        if np.ndim(item) == 0:
            return _Entry("dyn", item) if traced else _Entry("int", int(np.asarray(item)))
        return _Entry("array", item)
    if isinstance(item, (float, complex, np.floating, np.complexfloating)):
        raise _index_dtype_error(np.asarray(item).dtype)
    if type(item) is Slice:
        return _Entry("ds", item)
    if isinstance(item, str):
        raise TypeError(f"JAX does not support string indexing; got idx={item!r}")
    raise IndexError(f"Indexing mode not yet supported. Got unsupported indexer at position "
                     f"{position}: {item!r}")


def _consumed(entry) -> int:
    if entry.kind in ("slice", "int", "dyn", "array", "ds"):
        return 1
    if entry.kind == "bool":
        return entry.value.ndim
    return 0


def _parse(shape: tuple, idx) -> list:
    """The index as a list of entries, one per dimension of the operand with the ``None``
    axes inserted: kinds 'newaxis', 'slice', 'int', 'dyn', 'array'."""
    if not isinstance(idx, tuple):
        if isinstance(idx, list):
            raise TypeError(_NON_TUPLE_MESSAGE)
        idx = (idx,)
    entries = [_parse_item(item, pos) for pos, item in enumerate(idx)]
    at = 0
    for entry in entries:  # a mask's dimensions are items of their own
        entry.at = at
        at += entry.value.ndim if entry.kind == "bool" and entry.value.ndim else 1
    ellipses = [i for i, e in enumerate(entries) if e.kind == "ellipsis"]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(e) for e in entries)
    if consumed > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    fill_at = entries[ellipses[0]].at if ellipses else at
    fill = [_Entry("slice", slice(None), fill_at) for _ in range(len(shape) - consumed)]
    if ellipses:
        entries[ellipses[0]:ellipses[0] + 1] = fill
    else:
        entries.extend(fill)
    return _expand_bools(shape, entries)


def _expand_bools(shape, entries) -> list:
    """Boolean masks become the integer arrays of their nonzero positions (the masks are
    concrete); a boolean scalar becomes a new axis indexed by ``arange(1)`` (True) or
    ``arange(0)`` (False), an advanced index, as in JAX and NumPy."""
    out, dim = [], 0
    for pos, entry in enumerate(entries):
        if entry.kind != "bool":
            out.append(entry)
            dim += _consumed(entry)
            continue
        mask = entry.value
        if mask.ndim == 0:
            out.append(_Entry("newaxis", np.arange(int(bool(mask)), dtype=np.int32)))
            continue
        expected = shape[dim:dim + mask.ndim]
        # a mask axis of length 0 selects nothing along any axis (as JAX)
        if len(mask.shape) != len(expected) or any(
                m not in (0, n) for m, n in zip(mask.shape, expected)):
            raise IndexError("boolean index did not match shape of indexed array in index "
                             f"{pos}: got {mask.shape}, expected {list(expected)}")
        for i, positions in enumerate(np.nonzero(mask)):
            out.append(_Entry("array", positions.astype(np.int32), entry.at + i))
        dim += mask.ndim
    return out


def _insert_new_axes(arr, entries):
    """Insert the ``None`` axes into ``arr``; their entries become full slices (those of
    scalar booleans, the index arrays of their positions)."""
    positions = [i for i, e in enumerate(entries) if e.kind == "newaxis"]
    if not positions:
        return arr, entries
    from xjax._src.numpy.shape_ops import insert_axes  # shape_ops imports this module
    arr = insert_axes(arr, positions)
    entries = [e if e.kind != "newaxis" else _Entry("slice", slice(None), e.at)
               if e.value is None else _Entry("array", e.value) for e in entries]
    return arr, entries


# --------------------------------------------------------------------------------------------
# getitem


def getitem(arr, idx):
    """``arr[idx]`` with NumPy's semantics (out-of-bounds integer indices clamp)."""
    if type(idx) is int and type(arr) is Array:
        shape = arr._aval.shape
        if shape and -shape[0] <= idx < shape[0]:
            i = idx + shape[0] if idx < 0 else idx
            start = (i,) + (0,) * (len(shape) - 1)
            limit = (i + 1,) + shape[1:]
            return lax.squeeze(lax.slice(arr, start, limit), (0,))
    return rewriting_take(arr, idx)


@moves_elements("arr")
def rewriting_take(arr, idx, *, mode=None, fill_value=None, indices_are_sorted=False,
                   unique_indices=False):
    """``arr[idx]`` lowered to slices, a dynamic slice or a gather.

    ``mode`` is None (clamp, JAX's ``promise_in_bounds``), 'clip' or 'fill' (out-of-bounds
    positions give ``fill_value``).
    """
    arr = to_jax(arr)
    entries = _parse(_shape(arr), idx)
    arr, entries = _insert_new_axes(arr, entries)
    if any(e.kind == "ds" for e in entries):
        arr, entries = _apply_ds(arr, entries, mode, fill_value)
    advanced_ints = mode is not None or any(e.kind == "array" for e in entries)
    if advanced_ints:
        # Integers count as advanced indices when arrays are present (NumPy's placement
        # rule), and go through the gather when out-of-bounds positions must fill or clip.
        entries = [_as_advanced(e) for e in entries]
    arr, entries = _apply_static(arr, entries)
    if any(e.kind == "array" for e in entries):
        return _gather(arr, entries, mode, fill_value, indices_are_sorted, unique_indices)
    if any(e.kind == "dyn" for e in entries):
        return _dynamic(arr, entries)
    squeezed = tuple(d for d, e in enumerate(entries) if e.kind == "int")
    return lax.squeeze(arr, squeezed) if squeezed else arr


def _apply_ds(arr, entries, mode, fill_value):
    """Apply the ``ds(start, size, stride)`` entries first (each keeps its dimension, now of
    ``size``); they become full slices. As in JAX, a unit-stride window is a dynamic slice:
    clamped to fit (a negative start counts from the end unless an integer array index is
    present, when JAX gathers instead) or, with ``mode='fill'``, filled whole when it does
    not fit; a strided one reads each position, clamped or filled, with no wrapping."""
    clamping = _mode(mode) in (None, lax.GatherScatterMode.CLIP,
                               lax.GatherScatterMode.PROMISE_IN_BOUNDS)
    wraps = not any(e.kind == "array" for e in entries)
    entries = list(entries)
    for d, entry in enumerate(entries):
        if entry.kind != "ds":
            continue
        n = _shape(arr)[d]
        size, stride = _ds_size(entry.value.size), entry.value.stride
        start = _ds_start(entry.value.start)
        entries[d] = _Entry("slice", slice(None))
        if stride == 1 and size == n:  # JAX ignores the start of a window of the whole axis
            continue
        if stride == 1 and clamping:
            arr = lax.dynamic_slice_in_dim(arr, start, size, axis=d,
                                           allow_negative_indices=wraps)
            continue
        from xjax._src.numpy.logic import where  # logic imports this module
        dtype = aval_of(start).dtype
        positions = lax.add(lax.broadcast(start, (size,)),
                            lax.mul(lax.iota(dtype, size), lax.full((size,), stride, dtype)))
        if clamping:
            positions = lax.clamp(const(positions, 0), positions, const(positions, n - 1))
        else:  # out-of-range positions (negative ones too) read fill_value
            outside = lax.bitwise_or(lax.lt(positions, const(positions, 0)),
                                     lax.ge(positions, const(positions, n)))
            if stride == 1:  # a window is filled whole, as a dropped dynamic slice is
                outside = lax.broadcast(lax.reduce_or(outside, (0,)), (size,))
            positions = where(outside, const(positions, n), positions)
        arr = rewriting_take(arr, (slice(None),) * d + (positions,), mode=mode,
                             fill_value=fill_value)
    return arr, entries


def _ds_size(size) -> int:
    if isinstance(size, Tracer) and size.to_concrete_value() is None:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, got "
                        f"[{size}].")
    return int(size.__index__()) if not isinstance(size, (Array, Tracer)) else \
        int(np.asarray(size._value() if type(size) is Array else size.to_concrete_value()))


def _ds_start(start):
    """A ``ds`` start as an integer scalar operand."""
    start = to_jax(start)
    aval = aval_of(start)
    if not dtypes.is_integer(aval.dtype) or aval.shape != ():
        raise TypeError("index arguments to dynamic_slice must be integers of the same type, "
                        f"got: {aval.dtype.name}")
    return convert_element_type(start, _index_dtype([start]), False)


def _apply_static(arr, entries):
    """Apply static slices (and static integers, as size-1 slices) with ``lax.slice`` and
    ``lax.rev``; the entries of sliced dims become full slices."""
    shape = _shape(arr)
    starts, limits, strides, reversed_dims = [], [], [], []
    new_entries = []
    for d, (entry, n) in enumerate(zip(entries, shape, strict=True)):
        start, limit, stride = 0, n, 1
        if entry.kind == "slice":
            first, stop, step = entry.value.indices(n)
            count = len(range(first, stop, step))
            # the slice's bounds as JAX writes them (only the jaxpr text depends on it)
            if step > 0:
                start, limit, stride = first, max(stop, first), step
            else:
                if count:
                    start, limit = first + (count - 1) * step, first + 1
                else:
                    start = limit = stop + 1
                stride = -step
                reversed_dims.append(d)
            entry = _Entry("slice", slice(None))
        elif entry.kind == "int":
            if n == 0:
                raise IndexError(f"index {entry.value} is out of bounds for axis {d} with "
                                 "size 0")
            i = entry.value + n if entry.value < 0 else entry.value
            start = min(max(i, 0), n - 1)
            limit = start + 1
        starts.append(start)
        limits.append(limit)
        strides.append(stride)
        new_entries.append(entry)
    if tuple(starts) != (0,) * len(shape) or tuple(limits) != shape or any(
            s != 1 for s in strides):
        arr = lax.slice(arr, tuple(starts), tuple(limits),
                        None if all(s == 1 for s in strides) else tuple(strides))
    if reversed_dims:
        arr = lax.rev(arr, tuple(reversed_dims))
    return arr, new_entries


def _index_dtype(values) -> np.dtype:
    wide = any(aval_of(v).dtype in (dtypes.int64, dtypes.uint64) if isinstance(v, (Array, Tracer))
               else np.asarray(v).dtype in (np.int64, np.uint64) for v in values)
    return dtypes.canonicalize_dtype(np.int64) if wide else np.dtype(np.int32)


def _normalize(index, n: int, dtype):
    """``index`` as an array of ``dtype`` with negative entries counted from the end."""
    if isinstance(index, Tracer) and index.to_concrete_value() is None:
        index = convert_element_type(index, dtype, False)
        if dtypes.is_unsigned(aval_of(index).dtype):
            return index
        from xjax._src.numpy.logic import where  # logic imports this module
        return where(lax.lt(index, const(index, 0)), lax.add(index, const(index, n)), index)
    value = np.asarray(index if not isinstance(index, (Array, Tracer)) else
                       (index._value() if type(index) is Array
                        else index.to_concrete_value()))
    value = value.astype(np.int64)
    value = np.where(value < 0, value + n, value).astype(dtype)
    return Array._from_numpy(value, ShapedArray(value.shape, dtype, False))


def _advanced_indices(arr, entries):
    """Normalized, broadcast integer indices stacked on a last axis, the advanced dims, the
    broadcast index shape, and where the index dims go in the result."""
    shape = _shape(arr)
    adv_dims = [d for d, e in enumerate(entries) if e.kind == "array"]
    dtype = _index_dtype([entries[d].value for d in adv_dims])
    indices = [_normalize(entries[d].value, shape[d], dtype) for d in adv_dims]
    from xjax._src.numpy.shape_ops import broadcast_shapes  # shape_ops imports this module
    batch = broadcast_shapes(*[_shape(i) for i in indices])
    rank = len(batch)
    columns = [lax.broadcast_in_dim(i, batch + (1,), tuple(range(rank - len(_shape(i)), rank)))
               for i in indices]
    stacked = columns[0] if len(columns) == 1 else lax.concatenate(columns, rank)
    # NumPy's rule: adjacent advanced indices put the index dims in place, else first.
    at = [entries[d].at for d in adv_dims if entries[d].at is not None]
    contiguous = all(b - a == 1 for a, b in zip(at, at[1:]))
    batch_start = adv_dims[0] if contiguous else 0
    return stacked, adv_dims, batch, batch_start


def _window_dims(out_rank, batch, batch_start) -> tuple:
    return tuple(i for i in range(out_rank) if not batch_start <= i < batch_start + len(batch))


def _check_scalar_on_empty_axis(entries, shape):
    """A scalar index into an axis of size 0 is out of bounds whatever its value (JAX's
    IndexError; XLA would reject the slice). Among index arrays (when the gather's slice
    sizes are checked instead) it is not looked at, as in JAX."""
    ranks = [np.ndim(e.value) if isinstance(e.value, np.ndarray) else len(_shape(e.value))
             for e in entries if e.kind in ("array", "dyn")]
    if any(ranks):
        return
    for d, (entry, n) in enumerate(zip(entries, shape, strict=True)):
        if n == 0 and entry.kind in ("array", "dyn", "int"):
            raise IndexError(f"index is out of bounds for axis {d} with size 0")


def _gather(arr, entries, mode, fill_value, indices_are_sorted, unique_indices):
    shape = _shape(arr)
    _check_scalar_on_empty_axis(entries, shape)
    indices, adv_dims, batch, batch_start = _advanced_indices(arr, entries)
    out_rank = len(batch) + len(shape) - len(adv_dims)
    window = [n for d, n in enumerate(shape) if d not in adv_dims]
    out_shape = tuple(window[:batch_start]) + batch + tuple(window[batch_start:])
    if 0 in out_shape:  # nothing to read (as JAX, no gather: its slices may not fit)
        return lax.full_like(arr, 0, shape=out_shape)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=_window_dims(out_rank, batch, batch_start),
        collapsed_slice_dims=tuple(sorted(adv_dims)), start_index_map=tuple(adv_dims),
        operand_batching_dims=(), start_indices_batching_dims=())
    slice_sizes = tuple(1 if d in adv_dims else n for d, n in enumerate(shape))
    gather_mode = _mode(mode) or lax.GatherScatterMode.PROMISE_IN_BOUNDS
    if fill_value is not None and np.ndim(fill_value) != 0:
        raise ValueError("fill_value argument to indexed get() must be a scalar")
    if fill_value is not None:
        fill_value = np.asarray(fill_value).astype(aval_of(arr).dtype)[()]
    return lax.gather(arr, indices, dnums, slice_sizes, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted, mode=gather_mode,
                      fill_value=fill_value)


def _dynamic(arr, entries):
    shape = _shape(arr)
    _check_scalar_on_empty_axis(entries, shape)
    dyn = [e.value for e in entries if e.kind == "dyn"]
    dtype = _index_dtype(dyn)
    zero = Array._from_numpy(np.zeros((), dtype), ShapedArray((), dtype, False))
    starts, sizes = [], []
    for entry, n in zip(entries, shape, strict=True):
        if entry.kind == "dyn":  # dynamic_slice counts a negative start from the end once
            starts.append(convert_element_type(entry.value, dtype, False))
            sizes.append(1)
        else:
            starts.append(zero)
            sizes.append(n)
    out = lax.dynamic_slice(arr, starts, tuple(sizes))
    squeezed = tuple(d for d, e in enumerate(entries) if e.kind in ("int", "dyn"))
    return lax.squeeze(out, squeezed)


# --------------------------------------------------------------------------------------------
# take


def _take_axis(axis, ndim: int) -> int:
    """The canonical axis; out of range, JAX's take functions raise a plain ValueError (not
    NumPy's AxisError, which is an IndexError too)."""
    try:
        return canonicalize_axis(axis, ndim)
    except np.exceptions.AxisError as error:
        raise ValueError(str(error)) from None


def _clamped(indices, n: int):
    """``indices`` clamped into ``[0, n)`` in their own dtype (whose maximum may be below
    ``n``): what a gather in mode 'clip' or 'promise_in_bounds' reads, with no negative index
    left for ``rewriting_take`` to count from the end."""
    top = min(max(n - 1, 0), int(np.iinfo(aval_of(indices).dtype).max))
    return lax.clamp(const(indices, 0), indices, const(indices, top))


def _unwrapped(indices, n: int, mode):
    """Indices that ``rewriting_take`` reads as JAX's gather reads ``indices`` with negative
    entries left as they are: clamped where the mode clamps, else out of bounds."""
    if _mode(mode) in (lax.GatherScatterMode.CLIP, lax.GatherScatterMode.PROMISE_IN_BOUNDS):
        return _clamped(indices, n)
    if dtypes.is_unsigned(aval_of(indices).dtype):
        return indices
    # widened first, so that n itself is a valid (out-of-bounds) index value
    indices = convert_element_type(indices, _index_dtype([indices]), False)
    return lax.select(lax.lt(indices, const(indices, 0)), lax.full_like(indices, n), indices)


@moves_elements("a")
def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array by default).

    ``mode`` defaults to 'fill': out-of-bounds indices give ``fill_value`` (NaN for floats,
    the minimum value of signed integers, the maximum of unsigned ones). 'clip' clamps and
    'wrap' wraps around. Under 'clip' a negative index is clamped to 0, not counted from the
    end (as in JAX).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike("take", a, indices)
    a = to_jax(a)
    if axis is None:
        from xjax._src.numpy.shape_ops import ravel  # shape_ops imports this module
        a, axis = ravel(a), 0
    axis = _take_axis(axis, len(_shape(a)))
    indices = to_jax(indices)
    index_dtype = aval_of(indices).dtype
    if not (dtypes.is_integer(index_dtype) or index_dtype == dtypes.bool_):
        raise ValueError("indices must have an integer type")  # JAX's class and text
    if index_dtype == dtypes.bool_:
        if mode == "clip":  # JAX's gather sees the booleans themselves
            raise ValueError("indices must have an integer type")
        # otherwise JAX's arithmetic on them reads them as the integers 0 and 1
        indices = convert_element_type(indices, np.dtype(np.int32))
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if mode not in (None, "fill", "clip", "wrap"):
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    if mode == "wrap":
        indices, mode = remainder(indices, _shape(a)[axis]), "promise_in_bounds"
    elif mode is None:
        mode = "fill"
    if _shape(a)[axis] == 0 and math.prod(_shape(indices)):
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    if mode == "clip":  # JAX's gather clamps the indices as given
        indices = _clamped(indices, _shape(a)[axis])
    index = (slice(None),) * axis + (indices,)
    return rewriting_take(a, index, mode=mode, fill_value=fill_value,
                          unique_indices=unique_indices, indices_are_sorted=indices_are_sorted)


@moves_elements("arr")
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """Elements of ``arr`` at ``indices`` along ``axis``, matching the other axes
    positionally (as ``numpy.take_along_axis``).

    Negative indices count from the end unless ``wrap_negative_indices`` is False; left
    unset, they do in every mode but 'promise_in_bounds' (JAX's legacy default).
    """
    check_arraylike("take_along_axis", arr, indices)
    arr, indices = to_jax(arr), to_jax(indices)
    index_dtype = aval_of(indices).dtype
    if not dtypes.is_integer(index_dtype):
        raise TypeError(f"take_along_axis indices must be of integer type, got {index_dtype}")
    if axis is None:
        if len(_shape(indices)) != 1:
            raise ValueError("take_along_axis indices must be 1D if axis=None, got shape "
                             f"{_shape(indices)}")
        from xjax._src.numpy.shape_ops import ravel  # shape_ops imports this module
        arr, axis = ravel(arr), 0
    rank = len(_shape(arr))
    if len(_shape(indices)) != rank:
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{len(_shape(indices))} vs. {rank}")
    axis = _take_axis(axis, rank)
    if _shape(arr)[axis] == 0:  # every position is out of bounds: zeros, as JAX
        from xjax._src.numpy.shape_ops import broadcast_shapes  # shape_ops imports this module
        shape = list(_shape(arr))
        shape[axis] = 1
        return lax.full(broadcast_shapes(_shape(indices), tuple(shape)), 0,
                        aval_of(arr).dtype)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if not wrap_negative_indices:
        indices = _unwrapped(indices, _shape(arr)[axis], mode)
    index = []
    for d in range(rank):
        if d == axis:
            index.append(indices)
            continue
        positions = np.arange(_shape(arr)[d], dtype=np.int32)
        shape = [1] * rank
        shape[d] = _shape(arr)[d]
        index.append(positions.reshape(shape))
    return rewriting_take(arr, tuple(index), mode="fill" if mode is None else mode,
                          fill_value=fill_value)


# --------------------------------------------------------------------------------------------
# scatter: x.at[idx].set(...) and friends

_SCATTERS = {"set": "scatter", "add": "scatter_add", "mul": "scatter_mul",
             "min": "scatter_min", "max": "scatter_max", "sub": "scatter_sub"}


def _scatter_fn(kind):
    if callable(kind):  # a scatter of the signature of lax.scatter (at[].apply's)
        return kind
    name = _SCATTERS[kind]
    fn = getattr(lax, name, None)
    if fn is None and kind == "sub":
        add = lax.scatter_add
        return lambda x, i, u, d, **kw: add(x, i, lax.neg(u), d, **kw)
    return fn


def _scatter_mode(mode):
    return _mode(mode) or lax.GatherScatterMode.FILL_OR_DROP


@moves_elements("x", "values")
def scatter_update(x, idx, values, kind: str, *, mode=None, indices_are_sorted=False,
                   unique_indices=False):
    """``x`` with ``values`` combined into ``x[idx]`` by ``kind`` ('set', 'add', 'mul', 'min',
    'max', 'sub'); out-of-bounds updates are dropped unless ``mode='clip'``."""
    x = to_jax(x)
    check_arraylike(f"scatter_{kind}", values)
    values = _update_values(values, aval_of(x).dtype)
    _warn_unsafe_cast(values, aval_of(x).dtype)
    entries = _parse(_shape(x), idx)
    simple = all(e.kind in ("int", "dyn", "array") or (
        e.kind == "slice" and e.value.indices(n) == (0, n, 1))
        for e, n in zip(entries, _shape(x), strict=False)) and len(entries) == len(_shape(x))
    if simple and any(e.kind != "slice" for e in entries):
        return _scatter_direct(x, entries, values, kind, mode, indices_are_sorted,
                               unique_indices)
    # as JAX marks them: without index arrays (a scalar boolean is one), each position is
    # selected at most once
    unique = unique_indices or all(
        e.kind in ("int", "dyn", "slice") or (e.kind == "newaxis" and e.value is None)
        for e in entries)
    return _scatter_via_positions(x, idx, values, kind, mode, unique)


def _update_values(values, dtype):
    """The update values as an array: as in JAX, a Python int that fits an integer operand
    takes its dtype; other values keep theirs (see :func:`_promoted`)."""
    if (type(values) is int and dtypes.is_integer(dtype)
            and np.iinfo(dtype).min <= values <= np.iinfo(dtype).max):
        return convert_element_type(values, dtype, False)
    return to_jax(values)


def _warn_unsafe_cast(values, dtype):
    """JAX's FutureWarning for update values its promotion would not cast to ``dtype``."""
    source = dtype_and_weak(values)
    if source[0] == dtype or dtypes.lattice_result(source, (dtype, False))[0] == dtype:
        return
    import warnings
    warnings.warn(
        "scatter inputs have incompatible types: cannot safely cast value from "
        f"dtype={np.dtype(source[0]).name} to dtype={np.dtype(dtype).name} with "
        "jax_numpy_dtype_promotion=standard. In future JAX releases this will result in an "
        "error.", FutureWarning, stacklevel=4)


def _promoted(scatter, x, values):
    """``scatter(x, values)`` computed in the dtype ``x`` and ``values`` promote to, the result
    cast back to ``x``'s dtype and weak type, as JAX does: float updates into an integer
    array combine before truncating, a float32 addend into float16 rounds once, and bool
    operands multiply as integers."""
    aval = aval_of(x)
    x, values = promote_dtypes(x, values)
    return convert_element_type(scatter(x, values), aval.dtype, aval.weak_type)


def _scatter_direct(x, entries, values, kind, mode, indices_are_sorted, unique_indices):
    """Scatter whose index is integers/arrays on some dims and full slices elsewhere: the
    mirror image of the gather ``x[idx]`` would be."""
    _check_scalar_on_empty_axis(entries, _shape(x))
    if not any(e.kind == "array" for e in entries):
        # Integer scalars address one window: trivially sorted and unique (as JAX marks it).
        indices_are_sorted = unique_indices = True
    entries = [_as_advanced(e) for e in entries]
    shape = _shape(x)
    indices, adv_dims, batch, batch_start = _advanced_indices(x, entries)
    window = [n for d, n in enumerate(shape) if d not in adv_dims]
    out_shape = tuple(window[:batch_start]) + batch + tuple(window[batch_start:])
    if 0 in out_shape:  # nothing to update: x as it is (as JAX, whatever the dtypes)
        return x
    from xjax._src.numpy.shape_ops import broadcast_to  # shape_ops imports this module
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=_window_dims(len(out_shape), batch, batch_start),
        inserted_window_dims=tuple(sorted(adv_dims)),
        scatter_dims_to_operand_dims=tuple(adv_dims), operand_batching_dims=(),
        scatter_indices_batching_dims=())
    updates_sharding = _window_sharding(x, adv_dims, len(out_shape), batch, batch_start)
    return _promoted(lambda x, v: _scatter_fn(kind)(
        x, indices, broadcast_to(v, out_shape, out_sharding=updates_sharding), dnums,
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
        mode=_scatter_mode(mode)), x, values)


def _window_sharding(x, adv_dims, out_rank, batch, batch_start):
    """The split of the updates of a scatter into ``x`` whose type is split (Explicit mesh
    axes): its window dimensions split as ``x``'s, as JAX broadcasts them (None: unsplit)."""
    sharding = getattr(aval_of(x), "_sharding", None)
    if sharding is None:
        return None
    window = iter(e for d, e in enumerate(sharding.spec) if d not in adv_dims)
    spec = [None if batch_start <= i < batch_start + len(batch) else next(window)
            for i in range(out_rank)]
    return None if all(e is None for e in spec) else sharding.with_spec(PartitionSpec(*spec))


def _scatter_via_positions(x, idx, values, kind, mode, unique_indices):
    """General scatter: gather the flat positions ``iota[idx]`` (out-of-bounds positions
    become ``x.size``, which the flat scatter drops), then scatter into ``ravel(x)``."""
    shape = _shape(x)
    total = math.prod(shape)
    positions = lax.reshape(lax.iota(np.dtype(np.int32), total), shape) if shape else \
        Array._from_numpy(np.zeros((), np.int32), ShapedArray((), np.int32, False))
    if total == 0:  # nothing to update (JAX's scatter drops all); the index is still checked
        spread, entries = _insert_new_axes(positions, _parse(shape, idx))
        _check_scalar_on_empty_axis(entries, _shape(spread))
        return x
    if mode == "clip":
        found = rewriting_take(positions, idx, mode="clip")
    else:
        found = rewriting_take(positions, idx, mode="fill", fill_value=total)
    size = math.prod(_shape(found))
    if size == 0:  # nothing to update: x as it is (as JAX, whatever the dtypes)
        return x
    from xjax._src.numpy.shape_ops import broadcast_to  # shape_ops imports this module
    flat_positions = lax.reshape(found, (size,))

    def scatter(x, values):
        updates = lax.reshape(broadcast_to(values, _shape(found)), (size,))
        out = scatter_flat(lax.reshape(x, (total,)), flat_positions, updates, kind,
                           unique_indices=unique_indices)
        return lax.reshape(out, shape)
    return _promoted(scatter, x, values)


def scatter_flat(operand, positions, updates, kind: str, *, unique_indices=False):
    """Combine 1-D ``updates`` into the 1-D ``operand`` at ``positions`` (out-of-range
    positions are dropped; ``unique_indices`` promises no other position repeats)."""
    n = _shape(positions)[0]
    indices = lax.reshape(positions, (n, 1))
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
        operand_batching_dims=(), scatter_indices_batching_dims=())
    return _scatter_fn(kind)(operand, indices, updates, dnums, unique_indices=unique_indices,
                             mode=lax.GatherScatterMode.FILL_OR_DROP)


class _IndexUpdateHelper:
    """``x.at``: index it (``x.at[idx]``) to get an :class:`_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[idx]``: pure functional versions of ``x[idx] = y``, ``x[idx] += y``, ...

    Each method returns a new array. Out-of-bounds updates are dropped (``mode='clip'``
    clamps them instead); ``get`` clamps by default (``mode='fill'`` fills).
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, wrap_negative_indices=True, out_sharding=None):
        """``x[idx]`` (with ``mode`` and ``fill_value`` for out-of-bounds positions;
        ``out_sharding`` gives the result that split, where the type rules cannot decide
        one: the gather then runs under :func:`xjax.sharding.auto_axes`)."""
        def take(array, index):
            return rewriting_take(array, index, mode=mode, fill_value=fill_value,
                                  indices_are_sorted=indices_are_sorted,
                                  unique_indices=unique_indices)

        if out_sharding is None:
            return take(self.array, self.index)
        return auto_axes(take, out_sharding=out_sharding)(self.array, self.index)

    def _update(self, kind, values, mode, indices_are_sorted, unique_indices,
                out_sharding=None):
        if is_extended(self.array) and (kind != "set" or not is_extended(values)):
            # keys have no arithmetic and take only keys, as in JAX
            raise TypeError(f"Cannot interpret '{self.array.dtype}' as a data type")

        def update(array, index, values):
            return scatter_update(array, index, values, kind, mode=mode,
                                  indices_are_sorted=indices_are_sorted,
                                  unique_indices=unique_indices)

        if out_sharding is None:
            return update(self.array, self.index, values)
        return auto_axes(update, out_sharding=out_sharding)(self.array, self.index, values)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None):
        """``x[idx] = values`` (``out_sharding``: as in :meth:`get`)."""
        return self._update("set", values, mode, indices_are_sorted, unique_indices,
                            out_sharding)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None):
        """``x[idx] += values`` (repeated indices accumulate)."""
        return self._update("add", values, mode, indices_are_sorted, unique_indices,
                            out_sharding)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False,
                 mode=None, out_sharding=None):
        """``x[idx] -= values``."""
        return self._update("sub", values, mode, indices_are_sorted, unique_indices,
                            out_sharding)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False,
                 mode=None, out_sharding=None):
        """``x[idx] *= values``."""
        return self._update("mul", values, mode, indices_are_sorted, unique_indices,
                            out_sharding)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] /= values`` (the result is floating, as ``x / y`` is)."""
        divisor = scatter_update(ones_like(self.array), self.index, values, "mul", mode=mode,
                                 indices_are_sorted=indices_are_sorted,
                                 unique_indices=unique_indices)
        return divide(self.array, divisor)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] **= values``."""
        exponent = scatter_update(ones_like(self.array), self.index, values, "mul", mode=mode,
                                  indices_are_sorted=indices_are_sorted,
                                  unique_indices=unique_indices)
        return power(self.array, exponent)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None):
        """``x[idx] = minimum(x[idx], values)``."""
        return self._update("min", values, mode, indices_are_sorted, unique_indices,
                            out_sharding)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None):
        """``x[idx] = maximum(x[idx], values)``."""
        return self._update("max", values, mode, indices_are_sorted, unique_indices,
                            out_sharding)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = func(x[idx])`` elementwise; as in JAX, an element that index arrays
        select ``n`` times has ``func`` applied ``n`` times. Like JAX's, it is not
        differentiable (NotImplementedError), whatever the index."""

        def scatter_apply(x, indices, updates, dnums, **kwargs):
            return lax_array_extras.scatter_apply(x, indices, func, dnums, update_shape=_shape(updates),
                                     **kwargs)
        zero = lax.full_like(self.array, 0, shape=())
        return scatter_update(self.array, self.index, zero, scatter_apply, mode=mode,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices)


__all__ = ["take", "take_along_axis"]
