"""Shape manipulation: reshape, transpose, squeeze/expand_dims, joining and splitting,
broadcasting, flips, rolls, tiling and repetition."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.out_sharding import check_out_sharding
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, canonicalize_shape,
                                        check_arraylike, check_axis_in_shape,
                                        convert_element_type, eager_values_of_one_type,
                                        promote_dtypes, to_jax)
from xjax._src.numpy.creation import laid_out
from xjax._src.numpy.extended import moves_elements
from xjax._src.numpy.indexing import take
from xjax._src.numpy.ufuncs import remainder, subtract
from xjax._src.numpy.nested_jit import jit_when_staged


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape)


def shape(a) -> tuple:
    """The shape of an array-like."""
    return np.shape(a)


def ndim(a) -> int:
    """The number of dimensions of an array-like."""
    return np.ndim(a)


def size(a, axis=None) -> int:
    """The number of elements of an array-like (along ``axis`` if given)."""
    s = np.shape(a)
    return math.prod(s) if axis is None else s[axis]


# --------------------------------------------------------------------------------------------
# reshape


def _compute_new_shape(old_shape, new_shape) -> tuple:
    size_ = math.prod(old_shape)
    unknown = [i for i, d in enumerate(new_shape) if d == -1]
    if len(unknown) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, got "
                        f"{tuple(new_shape)}")
    if any(d < -1 for d in new_shape):
        raise TypeError(f"cannot reshape array of shape {old_shape} (size {size_}) into shape "
                        f"{tuple(new_shape)} because it has a negative axis size")
    if unknown:
        known = math.prod(d for d in new_shape if d != -1)
        if known == 0 or size_ % known:
            raise TypeError(f"cannot reshape array of shape {old_shape} (size {size_}) into "
                            f"shape {tuple(new_shape)} because the product of specified axis "
                            f"sizes ({known}) does not evenly divide {size_}")
        new_shape = tuple(size_ // known if d == -1 else d for d in new_shape)
    if math.prod(new_shape) != size_:
        raise TypeError(f"cannot reshape array of shape {old_shape} (size {size_}) into shape "
                        f"{tuple(new_shape)} (size {math.prod(new_shape)})")
    return tuple(new_shape)


@moves_elements("a")
def reshape(a, shape=None, order: str = "C", *, newshape=None, copy=None, out_sharding=None):
    """Give ``a`` a new shape with the same number of elements (one entry may be -1).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.reshape(jnp.arange(6), (2, -1))
    Array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)
    """
    check_arraylike("reshape", a)
    check_out_sharding(out_sharding, "reshape")
    if shape is None:
        shape = newshape
    if isinstance(a, (np.ndarray, np.generic)) and out_sharding is None:
        # JAX hands NumPy arrays to their own reshape method (NumPy's ValueError on a size
        # mismatch); the result is an Array here
        return to_jax(a.reshape(shape, order=order))
    return laid_out(_reshape(to_jax(a), shape, order), out_sharding, "reshape")


def _reshape(a, shape, order="C"):
    new_shape = canonicalize_shape(shape, as_list=True)
    old_shape = _shape(a)
    new_shape = _compute_new_shape(old_shape, new_shape)
    if order == "C":
        return a if new_shape == old_shape else lax.reshape(a, new_shape)
    if order == "F":
        reversed_a = lax.transpose(a, tuple(range(len(old_shape)))[::-1])
        out = lax.reshape(reversed_a, new_shape[::-1])
        return lax.transpose(out, tuple(range(len(new_shape)))[::-1])
    raise NotImplementedError(f"np.reshape order={order} is not implemented.")


@moves_elements("a")
def ravel(a, order: str = "C", *, out_sharding=None):
    """The elements of ``a`` as a 1-D array."""
    check_arraylike("ravel", a)
    check_out_sharding(out_sharding, "reshape")
    a = to_jax(a)
    return laid_out(_reshape(a, (math.prod(_shape(a)),), order), out_sharding, "reshape")


# --------------------------------------------------------------------------------------------
# axes


@moves_elements("a")
def transpose(a, axes=None):
    """Permute the axes of ``a`` (reverse them by default)."""
    check_arraylike("transpose", a)
    a = to_jax(a)
    rank = len(_shape(a))
    if axes is None:
        perm = tuple(range(rank))[::-1]
    else:  # as JAX: each axis is checked (ValueError), then lax the permutation (TypeError)
        perm = tuple(canonicalize_axis(ax, rank) for ax in axes)
    return a if perm == tuple(range(rank)) else lax.transpose(a, perm)


permute_dims = transpose


@moves_elements("x")
def matrix_transpose(x, /):
    """Swap the last two axes."""
    check_arraylike("matrix_transpose", x)
    rank = np.ndim(x)
    if rank < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={rank}")
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


@moves_elements("a")
def swapaxes(a, axis1: int, axis2: int):
    """Interchange two axes."""
    check_arraylike("swapaxes", a)
    # as JAX: swapped in a NumPy array, whose IndexError an out-of-range axis raises
    perm = np.arange(np.ndim(a))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return transpose(a, perm.tolist())


@moves_elements("a")
def moveaxis(a, source, destination):
    """Move axes ``source`` to positions ``destination`` (others keep their order)."""
    check_arraylike("moveaxis", a)
    rank = np.ndim(a)
    source = [canonicalize_axis(s, rank) for s in np.atleast_1d(source).tolist()]
    destination = [canonicalize_axis(d, rank) for d in np.atleast_1d(destination).tolist()]
    if len(source) != len(destination):
        raise ValueError("Inconsistent number of elements: {} vs {}".format(
            len(source), len(destination)))
    perm = [i for i in range(rank) if i not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        perm.insert(dest, src)
    return transpose(a, perm)


@moves_elements("a")
def squeeze(a, axis=None):
    """Remove size-1 axes (all of them, or those in ``axis``)."""
    check_arraylike("squeeze", a)
    a = to_jax(a)
    shape_ = _shape(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape_) if d == 1)
    else:  # lax.squeeze checks the axes with JAX's errors
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return lax.squeeze(a, axes) if axes else a


@moves_elements("a")
def expand_dims(a, axis):
    """Insert size-1 axes at positions ``axis`` (an int or a tuple) of the result."""
    check_arraylike("expand_dims", a)
    a = to_jax(a)
    if isinstance(axis, (int, np.integer)) or not hasattr(axis, "__iter__"):
        axes = (axis,)
    else:  # any sequence of ints (a range, an index array), as JAX
        axes = tuple(operator.index(ax) for ax in axis)
    out_rank = len(_shape(a)) + len(axes)
    positions = [canonicalize_axis(ax, out_rank) for ax in axes]
    if len(set(positions)) != len(positions):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(positions)}")
    return insert_axes(a, positions)


def insert_axes(a, positions):
    """``a`` with size-1 dims at the (sorted, distinct, in-range) output ``positions``."""
    positions = sorted(positions)
    if not positions:
        return a
    out_shape = list(_shape(a))
    for p in positions:
        out_shape.insert(p, 1)
    dims = tuple(d for d in range(len(out_shape)) if d not in positions)
    # shape and dims are valid by construction: bind without the wrapper's checks
    return lax.broadcast_in_dim_p.bind(a, shape=tuple(out_shape), broadcast_dimensions=dims,
                                       sharding=None)


# --------------------------------------------------------------------------------------------
# broadcasting


def broadcast_shapes(*shapes) -> tuple:
    """The shape NumPy broadcasting gives arrays of ``shapes``."""
    shapes = [canonicalize_shape(s) for s in shapes]
    if not shapes:
        return ()
    rank = builtins.max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0}
        sizes = dims - {1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


@moves_elements("array")
def broadcast_to(array, shape, *, out_sharding=None):
    """Broadcast ``array`` to ``shape`` (NumPy rules)."""
    check_arraylike("broadcast_to", array)
    out_sharding = check_out_sharding(out_sharding, "jnp.broadcast_to")
    array = to_jax(array)
    shape = canonicalize_shape(shape)
    arr_shape = _shape(array)
    if arr_shape == shape and out_sharding is None:
        return array
    if len(arr_shape) > len(shape):
        raise ValueError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={arr_shape} shape={shape}")
    lead = len(shape) - len(arr_shape)
    if any(d != 1 and d != s for d, s in zip(arr_shape, shape[lead:], strict=True)):
        raise ValueError("Incompatible types for broadcasting: input type="
                         f"{aval_of(array).str_short()} and requested type="
                         f"{aval_of(array).dtype.name}[{','.join(map(str, shape))}]")
    return lax.broadcast_in_dim(array, shape, tuple(range(lead, len(shape))),
                                out_sharding=out_sharding)


@moves_elements("args", each_alone=True)
def broadcast_arrays(*args) -> list:
    """Broadcast every argument to their common shape."""
    check_arraylike("broadcast_arrays", *args)
    args = [to_jax(x) for x in args]
    shapes = [_shape(x) for x in args]
    if len(set(shapes)) <= 1:
        return args
    common = broadcast_shapes(*shapes)
    return [broadcast_to(x, common) for x in args]


@jit_when_staged()
@moves_elements("arys", each_alone=True)
def atleast_1d(*arys):
    """View inputs as arrays with at least one dimension."""
    check_arraylike("atleast_1d", *arys)
    out = [x if np.ndim(x) >= 1 else _reshape(to_jax(x), (1,)) for x in map(to_jax, arys)]
    return out[0] if len(out) == 1 else out


@jit_when_staged()
@moves_elements("arys", each_alone=True)
def atleast_2d(*arys):
    """View inputs as arrays with at least two dimensions."""
    check_arraylike("atleast_2d", *arys)
    out = []
    for x in map(to_jax, arys):
        rank = len(_shape(x))
        out.append(x if rank >= 2 else _reshape(x, (1,) * (2 - rank) + _shape(x)))
    return out[0] if len(out) == 1 else out


@jit_when_staged()
@moves_elements("arys", each_alone=True)
def atleast_3d(*arys):
    """View inputs as arrays with at least three dimensions."""
    check_arraylike("atleast_3d", *arys)
    out = []
    for x in map(to_jax, arys):
        s = _shape(x)
        if len(s) == 0:
            x = _reshape(x, (1, 1, 1))
        elif len(s) == 1:
            x = _reshape(x, (1, s[0], 1))
        elif len(s) == 2:
            x = _reshape(x, s + (1,))
        out.append(x)
    return out[0] if len(out) == 1 else out


# --------------------------------------------------------------------------------------------
# joining


def _as_list(arrays, fun_name):
    if type(arrays) is Array:
        return list(arrays)  # eager iteration yields row views
    if isinstance(arrays, (Tracer, np.ndarray)):
        return [arrays[i] for i in range(np.shape(arrays)[0])]
    arrays = list(arrays)
    check_arraylike(fun_name, *arrays)
    return arrays


@moves_elements("arrays")
def concatenate(arrays, axis: int | None = 0, dtype=None):
    """Join arrays along an existing axis (``axis=None`` joins them flattened).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.concatenate([jnp.array([1, 2]), jnp.array([3])])
    Array([1, 2, 3], dtype=int32)
    """
    arrays = _as_list(arrays, "concatenate")
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays = [ravel(x) for x in arrays]
        axis = 0
    if any(np.ndim(x) == 0 for x in arrays):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        target = dtypes.check_and_canonicalize_user_dtype(dtype, "concatenate")
        arrays = [convert_element_type(x, target, False) for x in arrays]
    axis = canonicalize_axis(axis, len(_shape(arrays[0])))
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


concat = concatenate


@moves_elements("arrays")
def stack(arrays, axis: int = 0, out=None, dtype=None):
    """Join arrays of one shape along a new axis.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.stack([jnp.array([1, 2]), jnp.array([3, 4])], axis=1)
    Array([[1, 3],
           [2, 4]], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    one_array = type(arrays) is Array or isinstance(arrays, (Tracer, np.ndarray))
    arrays = _as_list(arrays, "stack")
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shapes = {np.shape(x) for x in arrays}
    if len(shapes) != 1:
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(np.shape(x)) for x in arrays)}.")
    arrays = [to_jax(x) for x in arrays]
    axis = canonicalize_axis(axis, len(_shape(arrays[0])) + 1)
    values = eager_values_of_one_type(*arrays) if dtype is None else None
    if values is not None:  # eager: one NumPy call instead of a primitive per array
        out = np.stack(values, axis)
        aval = arrays[0]._aval  # the promotion of equal types: never a weak bool
        _, weak = dtypes.lattice_result((aval.dtype, aval.weak_type))
        return Array._from_numpy(out, ShapedArray(out.shape, out.dtype, weak))
    if one_array:  # JAX stacks the rows of one array by concatenation
        return concatenate([insert_axes(x, [axis]) for x in arrays], axis, dtype)
    if dtype is None:
        arrays = promote_dtypes(*arrays)
    else:
        arrays = [convert_element_type(x, dtypes.canonicalize_dtype(dtype), False)
                  for x in arrays]
    return lax.stack(arrays, axis=axis)  # the stack primitive, as JAX's jaxprs show


def _each_at_least(atleast, arrays) -> list:
    """``atleast`` applied to all arrays in one call (one nested jit, as JAX stages it)."""
    if len(arrays) < 2:
        return [atleast(x) for x in arrays]
    return list(atleast(*arrays))


@moves_elements("tup")
def hstack(tup, dtype=None):
    """Join arrays column-wise (along axis 1; axis 0 for 1-D arrays)."""
    arrays = _each_at_least(atleast_1d, _as_list(tup, "hstack"))
    axis = 0 if arrays and len(_shape(arrays[0])) == 1 else 1
    return concatenate(arrays, axis, dtype)


@moves_elements("tup")
def vstack(tup, dtype=None):
    """Join arrays row-wise (along axis 0, 1-D arrays as rows)."""
    return concatenate(_each_at_least(atleast_2d, _as_list(tup, "vstack")), 0, dtype)


row_stack = vstack


@moves_elements("tup")
def dstack(tup, dtype=None):
    """Join arrays depth-wise (along axis 2)."""
    return concatenate(_each_at_least(atleast_3d, _as_list(tup, "dstack")), 2, dtype)


@moves_elements("tup")
def column_stack(tup):
    """Join 1-D arrays as columns (2-D arrays as they are) into a 2-D array."""
    arrays = []
    for x in _as_list(tup, "column_stack"):
        x = to_jax(x)
        arrays.append(_reshape(x, (-1, 1)) if len(_shape(x)) < 2 else x)
    return concatenate(arrays, 1)


@jit_when_staged(static_argnames=('axis',))
@moves_elements("arr", "values")
def append(arr, values, axis=None):
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None)."""
    check_arraylike("append", arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# --------------------------------------------------------------------------------------------
# splitting


def _split(fun_name, ary, indices_or_sections, axis, equal: bool):
    check_arraylike(fun_name, ary)
    ary = to_jax(ary)
    shape_ = _shape(ary)
    axis = operator.index(axis)
    check_axis_in_shape(axis, len(shape_))  # JAX reads the axis' length first
    axis = canonicalize_axis(axis, len(shape_))
    n = shape_[axis]
    if isinstance(indices_or_sections, (tuple, list)) or np.ndim(indices_or_sections) == 1:
        cuts = [operator.index(i) for i in indices_or_sections]
        cuts = [builtins.min(builtins.max(c + n if c < 0 else c, 0), n) for c in cuts]
        bounds = [0] + cuts + [n]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division: rest is "
                             f"{n % sections}")
        base, extra = divmod(n, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        bounds = [0] + list(np.cumsum(sizes).tolist())
    out = []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        stop = builtins.max(start, stop)
        starts = [0] * len(shape_)
        limits = list(shape_)
        starts[axis], limits[axis] = start, stop
        out.append(lax.slice(ary, tuple(starts), tuple(limits)))
    return out


@moves_elements("ary")
def split(ary, indices_or_sections, axis: int = 0):
    """Split into equal sections, or at the given indices, along ``axis``."""
    return _split("split", ary, indices_or_sections, axis, True)


@moves_elements("ary")
def array_split(ary, indices_or_sections, axis: int = 0):
    """Like :func:`split`, allowing sections of unequal sizes."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    return split(ary, indices_or_sections, 0 if np.ndim(ary) == 1 else 1)


def vsplit(ary, indices_or_sections):
    """Split along axis 0."""
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along axis 2."""
    return split(ary, indices_or_sections, 2)


# --------------------------------------------------------------------------------------------
# flips, rolls, tiles, repeats


@jit_when_staged('_flip', static_argnames=('axis',))
@moves_elements("m")
def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    check_arraylike("flip", m)
    m = to_jax(m)
    if axis is None:
        axes = tuple(range(len(_shape(m))))
    else:  # as JAX: each axis checked; lax.rev rejects repeated ones (TypeError)
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(canonicalize_axis(ax, len(_shape(m))) for ax in axes)
    return lax.rev(m, axes) if axes else m


def fliplr(m):
    """Reverse the order of columns (axis 1)."""
    return flip(m, 1)


def flipud(m):
    """Reverse the order of rows (axis 0)."""
    return flip(m, 0)


@moves_elements("a")
def roll(a, shift, axis=None):
    """Rotate elements along ``axis`` by ``shift`` places (of the flattened array by default)."""
    check_arraylike("roll", a)
    a = to_jax(a)
    if axis is None:
        return _reshape(roll(ravel(a), shift, 0), _shape(a))
    shifts = np.atleast_1d(np.asarray(shift)).tolist() if not isinstance(shift, Tracer) \
        else [shift]
    axes = np.atleast_1d(axis).tolist()
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    for s, ax in zip(shifts, axes, strict=True):
        a = _roll_one(a, s, canonicalize_axis(ax, len(_shape(a))))
    return a


def _roll_one(a, shift, axis):
    n = _shape(a)[axis]
    if n == 0:
        return a
    if isinstance(shift, Tracer):
        doubled = lax.concatenate([a, a], axis)
        start = remainder(subtract(n, shift), n)
        zero = convert_element_type(0, aval_of(start).dtype)
        starts = [start if d == axis else zero for d in range(len(_shape(a)))]
        return lax.dynamic_slice(doubled, starts, _shape(a))
    s = int(shift) % n
    if s == 0:
        return a
    head = _slice_axis(a, axis, n - s, n)
    tail = _slice_axis(a, axis, 0, n - s)
    return lax.concatenate([head, tail], axis)


def _slice_axis(a, axis, start, stop):
    shape_ = _shape(a)
    starts = [0] * len(shape_)
    limits = list(shape_)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, tuple(starts), tuple(limits))


@jit_when_staged(static_argnames=('k', 'axes'))
@moves_elements("m")
def rot90(m, k: int = 1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (first towards second)."""
    check_arraylike("rot90", m)
    m = to_jax(m)
    rank = len(_shape(m))
    ax1, ax2 = (canonicalize_axis(a, rank) for a in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(rank))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return transpose(flip(m, ax2), perm) if k == 1 else flip(transpose(m, perm), ax2)


@moves_elements("a")
def rollaxis(a, axis: int, start: int = 0):
    """Move ``axis`` to before position ``start`` (NumPy's older form of moveaxis)."""
    check_arraylike("rollaxis", a)
    rank = np.ndim(a)
    axis = canonicalize_axis(axis, rank)
    if not -rank <= start <= rank:
        raise ValueError(f"start={start} must satisfy {-rank}<=start<={rank}")
    start = start + rank if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


@moves_elements("x")
def unstack(x, /, *, axis: int = 0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    check_arraylike("unstack", x)
    x = to_jax(x)
    if len(_shape(x)) == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = canonicalize_axis(axis, len(_shape(x)))
    return tuple(lax.squeeze(_slice_axis(x, axis, i, i + 1), (axis,))
                 for i in range(_shape(x)[axis]))


@moves_elements("A")
def tile(A, reps):
    """Repeat the whole array ``reps`` times along each axis."""
    check_arraylike("tile", A)
    A = to_jax(A)
    reps = (operator.index(reps),) if np.ndim(reps) == 0 else tuple(map(operator.index, reps))
    rank = builtins.max(len(_shape(A)), len(reps))
    if rank > len(_shape(A)):  # leading size-1 axes, as JAX's expand_dims
        A = lax.expand_dims(A, tuple(range(rank - len(_shape(A)))))
    reps = (1,) * (rank - len(reps)) + reps
    return lax.tile(A, reps)


@moves_elements("a")
def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array by default).

    ``repeats`` must be concrete unless ``total_repeat_length`` is given (JAX's rule). With
    ``total_repeat_length``, the result has that length: extra repeats are cut off and, when
    they fall short, the last element fills the rest (as in JAX).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.repeat(jnp.array([1, 2, 3]), jnp.array([1, 2, 0]), total_repeat_length=5)
    Array([1, 2, 2, 3, 3], dtype=int32)
    """
    check_arraylike("repeat", a)
    check_out_sharding(out_sharding, "jnp.repeat")
    a = to_jax(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, len(_shape(a)))
    n = _shape(a)[axis]
    traced = isinstance(repeats, Tracer) and repeats.to_concrete_value() is None
    if traced and total_repeat_length is None:
        raise errors.ConcretizationTypeError(
            repeats, "When jit-compiling jnp.repeat, the total number of repeats must be "
            "static. To fix this, either specify a static value for `repeats`, or pass a "
            "static value to `total_repeat_length`.")
    if total_repeat_length is not None:
        total = operator.index(total_repeat_length)
        if traced:
            index = _repeat_index_traced(repeats, n, total)
        else:
            index = Array(_repeat_index(_concrete_counts(repeats), n, total))
        return take(a, index, axis=axis)
    counts = _concrete_counts(repeats)
    if counts.ndim == 0:
        r = int(counts)
        shape_ = _shape(a)
        expanded = shape_[:axis + 1] + (r,) + shape_[axis + 1:]
        dims = tuple(d if d <= axis else d + 1 for d in range(len(shape_)))
        out = lax.broadcast_in_dim(a, expanded, dims)
        return _reshape(out, shape_[:axis] + (n * r,) + shape_[axis + 1:])
    index = np.repeat(np.arange(n), np.broadcast_to(counts, (n,)))
    return take(a, Array(index.astype(np.int32)), axis=axis)


def _concrete_counts(repeats):
    return np.asarray(repeats.to_concrete_value() if isinstance(repeats, Tracer) else repeats)


def _repeat_index(counts, n, total):
    """Source index of each of ``total`` output positions: position p takes the element
    whose run of repeats covers p, and the last element past the end of all runs."""
    ends = np.cumsum(np.broadcast_to(counts, (n,)))
    index = np.searchsorted(ends, np.arange(total), side="right")
    return np.minimum(index, max(n - 1, 0)).astype(np.int32)


def _repeat_index_traced(repeats, n, total):
    import xjax._src.numpy as jnp  # searchsorted is defined with the control-flow functions
    ends = jnp.cumsum(broadcast_to(repeats, (n,)))
    index = jnp.searchsorted(ends, jnp.arange(total, dtype=ends.dtype), side="right")
    return jnp.minimum(index, max(n - 1, 0)).astype(np.int32)


@jit_when_staged(static_argnames=('n', 'axis'))
def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``."""
    check_arraylike("diff", a)
    a = to_jax(a)
    axis = canonicalize_axis(axis, len(_shape(a)))
    parts = []
    for extra in (prepend, append):
        if extra is not None:
            extra = to_jax(extra)
            if len(_shape(extra)) == 0:
                shape_ = list(_shape(a))
                shape_[axis] = 1
                extra = broadcast_to(extra, tuple(shape_))
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis)
    from xjax._src.numpy.logic import not_equal  # logic imports this module
    op = not_equal if aval_of(a).dtype == dtypes.bool_ else subtract
    for _ in range(n):
        length = _shape(a)[axis]
        a = op(_slice_axis(a, axis, min(1, length), length),  # n past the length: empty
               _slice_axis(a, axis, 0, max(length - 1, 0)))
    return a


__all__ = ["shape", "ndim", "size", "reshape", "ravel", "transpose", "permute_dims",
           "matrix_transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
           "broadcast_shapes", "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d",
           "atleast_3d", "concatenate", "concat", "stack", "hstack", "vstack", "row_stack",
           "dstack", "column_stack", "append", "split", "array_split", "hsplit", "vsplit",
           "dsplit", "flip", "fliplr", "flipud", "roll", "tile", "repeat", "diff", "rot90",
           "rollaxis", "unstack"]
