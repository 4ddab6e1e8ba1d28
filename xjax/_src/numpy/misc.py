"""Array manipulation beyond shapes: ``insert``, ``delete``, ``put``, ``put_along_axis``,
``place``, ``compress``, ``extract``, ``choose``, ``resize``, ``fill_diagonal``,
``diagflat``, ``ediff1d``, ``block``, ``mask_indices``, ``packbits``/``unpackbits``, and
functions mapped with ``vmap``: ``apply_along_axis``, ``apply_over_axes``, ``vectorize``,
``fromfunction``.

JAX arrays are immutable, so the NumPy functions that write in place (``put``,
``put_along_axis``, ``place``, ``fill_diagonal``) need ``inplace=False`` and return the
updated array, as in JAX.
"""

from __future__ import annotations

import operator

import numpy as np

import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, concrete_value, canonicalize_axis,
                                        check_arraylike, convert_element_type, to_jax)
from xjax._src.numpy.extended import moves_elements
from xjax._src.transformations.vmap import vmap
from xjax._src.numpy.nested_jit import jit_when_staged

_INT = np.dtype(np.int32)


def _shape(x):
    return tuple(aval_of(x).shape)


def _dtype(x):
    return aval_of(x).dtype


def _vmap(fun, **kwargs):
    return vmap(fun, **kwargs)


def _no_inplace(name, inplace, spacer=" "):
    if inplace:
        raise ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX "
                         f"arrays{spacer}are immutable. Pass inplace=False to instead return "
                         "an updated array.")


# -- insert, delete --

@moves_elements("arr", "values")
def insert(arr, obj, values, axis: int | None = None):
    """``arr`` with ``values`` inserted before the positions ``obj`` along ``axis``
    (flattened for ``axis=None``); ``obj`` may be traced.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.insert(jnp.array([1, 2, 3]), 1, 9)
    Array([1, 9, 2, 3], dtype=int32)
    """
    check_arraylike("insert", arr, values)
    a = to_jax(arr)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = canonicalize_axis(axis, len(_shape(a)))
    n = _shape(a)[axis]
    if isinstance(obj, slice):
        indices = jnp.arange(*obj.indices(n), dtype=_INT)
    else:
        indices = to_jax(obj)
        if len(_shape(indices)) > 1:
            raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, "
                             "or a scalar")
        if not dtypes.is_integer(_dtype(indices)):
            if np.size(obj) == 0 and not isinstance(obj, (Tracer, jnp.ndarray)):
                indices = convert_element_type(indices, _INT)
            else:
                raise ValueError("jnp.insert(): index array must be integer typed")
    indices = convert_element_type(indices, _INT)
    indices = jnp.where(indices < 0, indices + n, indices)
    values = convert_element_type(to_jax(values), _dtype(a))
    if _shape(indices) == () and not isinstance(obj, slice):
        # a scalar position inserts a block: values' leading axis becomes `axis`
        values = jnp.asarray(values)
        values = jnp.reshape(values, (1,) * (len(_shape(a)) - len(_shape(values))) +
                             _shape(values))
        values = jnp.moveaxis(values, 0, axis)
        count = _shape(values)[axis]
        target = list(_shape(a))
        target[axis] = count
        values = jnp.broadcast_to(values, tuple(target))
        indices = jnp.full((count,), indices, _INT)
    else:
        count = _shape(indices)[0]
        target = list(_shape(a))
        target[axis] = count
        values = jnp.broadcast_to(values, tuple(target))
    # where each inserted slice lands: its position plus the inserts sorted before it
    order = jnp.argsort(indices)
    landing = jnp.zeros((count,), _INT).at[order].set(
        jnp.clip(indices[order], 0, n) + jnp.arange(count, dtype=_INT))
    is_old = jnp.ones((n + count,), bool).at[landing].set(False)
    old_positions = jnp.nonzero(is_old, size=n)[0]
    out_shape = list(_shape(a))
    out_shape[axis] = n + count
    out = jnp.zeros(tuple(out_shape), _dtype(a))
    moved = jnp.moveaxis(out, axis, 0)
    moved = moved.at[old_positions].set(jnp.moveaxis(a, axis, 0))
    moved = moved.at[landing].set(jnp.moveaxis(values, axis, 0))
    return jnp.moveaxis(moved, 0, axis)


@moves_elements("arr")
def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """``arr`` without the entries ``obj`` along ``axis`` (flattened for ``axis=None``).

    ``obj`` must be concrete, unless ``assume_unique_indices=True`` promises distinct
    in-bounds indices (then it may be traced).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.delete(jnp.array([1, 2, 3, 4]), jnp.array([0, 2]))
    Array([2, 4], dtype=int32)
    """
    check_arraylike("delete", arr)
    a = to_jax(arr)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = canonicalize_axis(axis, len(_shape(a)))
    n = _shape(a)[axis]
    if isinstance(obj, slice):
        keep = np.delete(np.arange(n), obj)
        return jnp.take(a, jnp.asarray(keep, _INT), axis=axis)
    if assume_unique_indices:
        indices = convert_element_type(jnp.ravel(to_jax(obj)), _INT)
        indices = jnp.where(indices < 0, indices + n, indices)
        removed = jnp.zeros((n,), bool).at[indices].set(True)
        keep = jnp.nonzero(jnp.logical_not(removed), size=n - _shape(indices)[0])[0]
        return jnp.take(a, keep, axis=axis)
    value = concrete_value(obj, "'obj' array argument of jnp.delete()")
    if value.dtype == np.bool_:
        if value.shape != (n,):
            raise ValueError(f"Boolean array argument obj to delete must be one dimensional "
                             f"and match the axis length of {n}")
        keep = np.flatnonzero(~value)
    else:
        if not np.issubdtype(value.dtype, np.integer):
            if value.size == 0:
                value = value.astype(np.int64)
            else:
                raise ValueError("index array argument obj to delete must be integer typed")
        keep = np.delete(np.arange(n), value)
    return jnp.take(a, jnp.asarray(keep, _INT), axis=axis)


# -- writes that return new arrays --

@moves_elements("a", "v")
def put(a, ind, v, mode: str | None = None, *, inplace: bool = True):
    """``a`` with the flat positions ``ind`` set to ``v`` (repeated cyclically).

    ``mode``: ``'clip'`` clamps positions, ``'wrap'`` wraps them around; None (as in JAX)
    unravels them with ``unravel_index``, which clamps. Needs ``inplace=False``.
    """
    _no_inplace("put", inplace)
    check_arraylike("put", a, ind, v)
    arr = to_jax(a)
    indices = jnp.ravel(to_jax(ind))
    values = jnp.ravel(to_jax(v))  # .at[].set casts to a's dtype (with JAX's FutureWarning)
    if _shape(indices)[0] == 0 or _shape(values)[0] == 0 or not np.prod(_shape(arr)):
        return arr
    values = resize(values, _shape(indices))
    size = int(np.prod(_shape(arr)))
    if mode is None:  # positions past the end clamp in unravel_index, as in JAX
        scatter_mode = "drop"
    elif mode == "clip":
        indices = jnp.clip(indices, 0, size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        indices = jnp.mod(indices, size)
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return arr.at[jnp.unravel_index(indices, _shape(arr))].set(values, mode=scatter_mode)


def _along_axis_index(shape, indices, axis):
    """The advanced index ``a[index]`` that pairs ``indices`` along ``axis`` with the
    positions along the other axes (as take_along_axis), and the shape it selects."""
    index = []
    for d, n in enumerate(shape):
        if d == axis:
            index.append(indices)
            continue
        positions_shape = [1] * len(shape)
        positions_shape[d] = n
        index.append(jnp.reshape(jnp.arange(n, dtype=_INT), positions_shape))
    selected = jnp.broadcast_shapes(*[_shape(i) for i in index])
    return tuple(index), selected


@moves_elements("arr", "values")
def put_along_axis(arr, indices, values, axis: int | None, inplace: bool = True, *,
                   mode: str | None = None):
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
    ``take_along_axis``). Needs ``inplace=False``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.put_along_axis(jnp.zeros((2, 3)), jnp.array([[0], [2]]), 1., axis=1,
    ...                    inplace=False)
    Array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    _no_inplace("put_along_axis", inplace, spacer="")
    check_arraylike("put_along_axis", arr, indices, values)
    a = to_jax(arr)
    idx = to_jax(indices)
    original_shape = _shape(a)
    if axis is None:
        a, axis = jnp.ravel(a), 0
        idx = jnp.ravel(idx)
    axis = canonicalize_axis(axis, len(_shape(a)))
    if len(_shape(idx)) != len(_shape(a)):
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{len(_shape(idx))} vs. {len(_shape(a))}")
    idx = convert_element_type(idx, _INT)
    # negative indices count from the end once, in .at[] (JAX's rule; wrapping here too
    # read -4 on 3 elements as 2)
    index, selected = _along_axis_index(_shape(a), idx, axis)
    values = jnp.broadcast_to(to_jax(values), selected)  # .at[] casts (and warns) as JAX
    out = a.at[index].set(values, mode=mode)
    return jnp.reshape(out, original_shape)


@moves_elements("arr", "vals")
def place(arr, mask, vals, *, inplace: bool = True):
    """``arr`` with its elements where ``mask`` is true replaced by ``vals`` in order
    (repeated cyclically). Needs ``inplace=False``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> x = jnp.arange(5)
    >>> jnp.place(x, x > 1, jnp.array([10, 20]), inplace=False)
    Array([ 0,  1, 10, 20, 10], dtype=int32)
    """
    _no_inplace("place", inplace)
    check_arraylike("place", arr, mask, vals)
    data = to_jax(arr)
    flat = jnp.ravel(data)
    flat_mask = jnp.ravel(to_jax(mask)).astype(bool)
    values = jnp.ravel(convert_element_type(to_jax(vals), _dtype(data)))
    if _shape(values)[0] == 0:
        return data
    slot = jnp.cumsum(flat_mask.astype(_INT)) - 1
    picked = values[jnp.mod(jnp.maximum(slot, 0), _shape(values)[0])]
    return jnp.reshape(jnp.where(flat_mask, picked, flat), _shape(data))


# -- selections --

@moves_elements("a")
def compress(condition, a, axis: int | None = None, *, size: int | None = None,
             fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` where the 1-D ``condition`` is true
    (flattened for ``axis=None``); with a static ``size``, padded with ``fill_value``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.compress(jnp.array([True, False, True]), jnp.array([1, 2, 3]))
    Array([1, 3], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    check_arraylike("compress", condition, a)
    cond = to_jax(condition)
    if len(_shape(cond)) != 1:
        raise ValueError("condition must be a 1D array")
    cond = cond.astype(bool)
    arr = to_jax(a)
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis = canonicalize_axis(axis, len(_shape(arr)))
    n = _shape(arr)[axis]
    if size is not None and not 0 <= size <= n:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={n}")
    extra = _shape(cond)[0] - n
    if extra > 0:
        tail = concrete_value(cond[n:], "condition of jnp.compress") if size is None else None
        if tail is not None and tail.any():
            raise ValueError("condition contains entries that are out of bounds")
        cond = cond[:n]
    elif extra < 0:
        cond = jnp.pad(cond, (0, -extra))
    moved = jnp.moveaxis(arr, axis, 0)
    if size is None:
        keep = np.flatnonzero(concrete_value(cond, "The size argument of jnp.compress must be "
                                              "statically specified to use jnp.compress "
                                              "within JAX transformations."))
        picked = jnp.take(moved, jnp.asarray(keep, _INT), axis=0)
    else:
        positions = jnp.nonzero(cond, size=size, fill_value=n)[0]
        picked = jnp.take(moved, positions, axis=0, mode="fill", fill_value=fill_value)
    return jnp.moveaxis(picked, 0, axis)


@moves_elements("arr")
def extract(condition, arr, *, size: int | None = None, fill_value=0):
    """The elements of ``arr`` where ``condition`` is true, flattened."""
    check_arraylike("extract", condition, arr)
    return compress(jnp.ravel(to_jax(condition)), jnp.ravel(to_jax(arr)), size=size,
                    fill_value=fill_value)


@moves_elements("choices")
def choose(a, choices, out=None, mode: str = "raise"):
    """Element ``i`` from ``choices[a[i]]`` (all broadcast together). JAX does not support
    ``mode='raise'``: use ``'wrap'`` or ``'clip'``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.choose(jnp.array([0, 1]), [jnp.array([1, 2]), jnp.array([10, 20])],
    ...            mode="clip")
    Array([ 1, 20], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    check_arraylike("choose", a, *choices)
    index = to_jax(a)
    if not dtypes.is_integer(_dtype(index)):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        value = concrete_value(index, "The 'raise' mode to jnp.choose is not supported.")
        if np.any((value < 0) | (value >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        index = jnp.mod(index, n)
    elif mode == "clip":
        index = jnp.clip(index, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    index, *arrays = jnp.broadcast_arrays(index, *[to_jax(c) for c in choices])
    stacked = jnp.stack(arrays)
    return jnp.take_along_axis(stacked, index[None].astype(_INT), axis=0)[0]


@moves_elements("a")
def resize(a, new_shape):
    """``a`` raveled, repeated cyclically and reshaped to ``new_shape``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.resize(jnp.array([1, 2, 3]), (2, 2))
    Array([[1, 2],
           [3, 1]], dtype=int32)
    """
    check_arraylike("resize", a)
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else \
        tuple(operator.index(d) for d in new_shape)
    if any(d < 0 for d in shape):
        raise ValueError("All elements of `new_shape` must be non-negative")
    flat = jnp.ravel(to_jax(a))
    total = int(np.prod(shape, dtype=np.int64))
    if _shape(flat)[0] == 0 or total == 0:
        return jnp.zeros(shape, _dtype(flat))
    repeats = -(-total // _shape(flat)[0])
    return jnp.reshape(jnp.tile(flat, repeats)[:total], shape)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """``a`` with its main diagonal set to ``val`` (repeated cyclically). Needs
    ``inplace=False``; JAX does not implement ``wrap=True``."""
    _no_inplace("fill_diagonal", inplace)
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    arr = to_jax(a)
    shape = _shape(arr)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(shape)
    index = jnp.arange(n, dtype=_INT)
    values = jnp.ravel(convert_element_type(to_jax(val), _dtype(arr)))
    values = resize(values, (n,)) if _shape(values)[0] else values
    if _shape(values)[0] == 0:
        return arr
    return arr.at[(index,) * len(shape)].set(values)


def diagflat(v, k: int = 0):
    """A 2-D array with the flattened ``v`` on diagonal ``k``."""
    check_arraylike("diagflat", v)
    return jnp.diag(jnp.ravel(to_jax(v)), k)


@jit_when_staged()
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened ``ary``, with optional values
    before and after.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.ediff1d(jnp.array([1, 2, 4, 7]), to_begin=0)
    Array([0, 1, 2, 3], dtype=int32)
    """
    check_arraylike("ediff1d", ary)
    flat = jnp.ravel(to_jax(ary))
    parts = [flat[1:] - flat[:-1]]
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        parts.insert(0, jnp.ravel(convert_element_type(to_jax(to_begin), _dtype(flat))))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        parts.append(jnp.ravel(convert_element_type(to_jax(to_end), _dtype(flat))))
    return jnp.concatenate(parts)


def _block_depth(arrays, depth=0):
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError("Lists cannot be empty")
        depths = {_block_depth(x, depth + 1) for x in arrays}
        if len(depths) != 1:
            raise ValueError("List depths are mismatched")
        return depths.pop()
    if isinstance(arrays, tuple):
        raise TypeError("jnp.block does not allow tuples; use lists")
    return depth


@jit_when_staged()
@moves_elements("arrays")
def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists join along
    the last axis, the next along the second-to-last, and so on.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.block([[jnp.ones((2, 2)), jnp.zeros((2, 1))], [jnp.zeros((1, 3))]]).shape
    (3, 3)
    """
    depth = _block_depth(arrays)

    def leaves(x):
        return [y for item in x for y in leaves(item)] if isinstance(x, list) else [x]

    all_leaves = [to_jax(x) for x in leaves(arrays)]
    ndim = max([depth] + [len(_shape(x)) for x in all_leaves])

    def assemble(x, level):
        if not isinstance(x, list):
            x = to_jax(x)
            return jnp.reshape(x, (1,) * (ndim - len(_shape(x))) + _shape(x))
        parts = [assemble(item, level + 1) for item in x]
        return jnp.concatenate(parts, axis=level - depth)

    return assemble(arrays, 0)


def mask_indices(n: int, mask_func, k: int = 0, *, size: int | None = None):
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``jnp.triu``)."""
    mask = mask_func(jnp.ones((n, n), _INT), k)
    return jnp.nonzero(mask, size=size)


# -- bits --

def _bit_shifts(bitorder):
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    return jnp.asarray(shifts[::-1] if bitorder == "big" else shifts)


def packbits(a, axis: int | None = None, bitorder: str = "big"):
    """Pack the truth of ``a``'s elements into uint8 bytes along ``axis`` (flattened for
    ``axis=None``), padding with zeros to a multiple of 8.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.packbits(jnp.array([1, 0, 1, 1]))
    Array([176], dtype=uint8)
    """
    check_arraylike("packbits", a)
    arr = to_jax(a)
    if not (dtypes.is_integer(_dtype(arr)) or _dtype(arr) == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    shifts = _bit_shifts(bitorder)
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis = canonicalize_axis(axis, len(_shape(arr)))
    bits = (arr != 0).astype(np.uint8)
    n = _shape(bits)[axis]
    pad = [(0, 0)] * len(_shape(bits))
    pad[axis] = (0, -n % 8)
    bits = jnp.moveaxis(jnp.pad(bits, pad), axis, -1)
    bits = jnp.reshape(bits, _shape(bits)[:-1] + (-1, 8))
    packed = jnp.sum(lax.shift_left(bits, jnp.broadcast_to(shifts, _shape(bits))), axis=-1,
                     dtype=np.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis: int | None = None, count: int | None = None,
               bitorder: str = "big"):
    """Unpack uint8 bytes into bits along ``axis`` (flattened for ``axis=None``);
    ``count`` keeps that many bits (negative: drops from the end; larger: pads zeros).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.unpackbits(jnp.array([160], jnp.uint8))
    Array([1, 0, 1, 0, 0, 0, 0, 0], dtype=uint8)
    """
    check_arraylike("unpackbits", a)
    arr = to_jax(a)
    if _dtype(arr) != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    shifts = _bit_shifts(bitorder)
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis = canonicalize_axis(axis, len(_shape(arr)))
    moved = jnp.moveaxis(arr, axis, -1)[..., None]
    one = jnp.asarray(1, np.uint8)
    bits = lax.bitwise_and(lax.shift_right_logical(
        jnp.broadcast_to(moved, _shape(moved)[:-1] + (8,)),
        jnp.broadcast_to(shifts, _shape(moved)[:-1] + (8,))), one)
    bits = jnp.reshape(bits, _shape(bits)[:-2] + (-1,))
    if count is not None:
        count = operator.index(count)
        n = _shape(bits)[-1]
        stop = count if count >= 0 else n + count
        if stop > n:
            bits = jnp.pad(bits, [(0, 0)] * (len(_shape(bits)) - 1) + [(0, stop - n)])
        else:
            bits = bits[..., :max(stop, 0)]
    return jnp.moveaxis(bits, -1, axis)


# -- mapped functions --

def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (with ``vmap``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.apply_along_axis(jnp.sum, 1, jnp.ones((2, 3)))
    Array([3., 3.], dtype=float32)
    """
    check_arraylike("apply_along_axis", arr)
    arr = to_jax(arr)
    ndim = len(_shape(arr))
    axis = canonicalize_axis(axis, ndim)

    def func(x):
        return func1d(x, *args, **kwargs)

    for i in range(1, ndim - axis):
        func = _vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = _vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the rank (a result one
    dimension short gets the axis back with size 1)."""
    check_arraylike("apply_over_axes", a)
    arr = to_jax(a)
    for axis in axes:
        out = func(arr, axis)
        if len(_shape(out)) == len(_shape(arr)):
            arr = out
        elif len(_shape(out)) == len(_shape(arr)) - 1:
            arr = jnp.expand_dims(out, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return arr


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` evaluated at each index of ``shape`` (mapped with ``vmap``, so it sees
    scalar indices of ``dtype``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.fromfunction(lambda i, j: i + j, (2, 3), dtype=int)
    Array([[0, 1, 2],
           [1, 2, 3]], dtype=int32)
    """
    shape = tuple(operator.index(d) for d in (shape if np.ndim(shape) else (shape,)))
    fun = function
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        fun = _vmap(fun, in_axes=tuple(in_axes[::-1]))
    return fun(*(jnp.arange(s, dtype=dtype) for s in shape), **kwargs)


__all__ = ["insert", "delete", "put", "put_along_axis", "place", "compress", "extract",
           "choose", "resize", "fill_diagonal", "diagflat", "ediff1d", "block",
           "mask_indices", "packbits", "unpackbits", "apply_along_axis", "apply_over_axes",
           "fromfunction"]
