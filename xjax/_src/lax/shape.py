"""Structural primitives: broadcast_in_dim, reshape, squeeze, transpose, rev, iota, and the
wrappers built on them (broadcast, expand_dims, full, collapse, ...). concatenate and pad
are in ``concat_pad``.

Semantics follow the StableHLO spec (https://openxla.org/stablehlo/spec); error messages
follow JAX's shape rules. Weak types: a result is weak when every array operand is.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.out_sharding import check_out_sharding
from xjax._src.core.placement import placed_like
from xjax._src.core.primitive import Absent, Primitive
from xjax._src.lax import sharding_rules
from xjax._src.core.trace import Tracer
from xjax._src.lax.ad_helpers import late_rule, linear_jvp_of
from xjax._src.lax.ad_rules import get_aval, transpose_by_parts, zero_jvp
from xjax._src.lax.batch_rules import batch_at_front, move_axis, shift_axes, shifted_axes
from xjax._src.lax.convert import convert_element_type_p
from xjax._src.lax.naryop import NUMERIC, check_dtype
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.stablehlo import aval_type, i64_array

# -- helpers shared by the structural families (slicing, reduce and dot import them) --


def canonicalize_shape(shape, context: str = "") -> tuple:
    """``shape`` as a tuple of Python ints; JAX's TypeError for anything else."""
    try:
        if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
            return (operator.index(shape),)
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        pass
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    if context:
        msg += f" {context}."
    if isinstance(shape, (tuple, list)) and any(isinstance(d, Tracer) for d in shape):
        msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                "subfunctions.")
    raise TypeError(msg)


def canonicalize_axis(axis, ndim: int) -> int:
    """A non-negative axis; NumPy's message when out of bounds."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def index_tuple(values) -> tuple:
    """A tuple of Python ints (dimension numbers, axes, ...)."""
    if isinstance(values, (int, np.integer)):
        return (operator.index(values),)
    return tuple(operator.index(v) for v in values)


def as_operand(x):
    """Arrays and tracers pass through; anything else becomes an Array (no promotion)."""
    if type(x) is Array or isinstance(x, Tracer):
        return x
    return to_operand(x)


def _check_shapelike(fun_name: str, arg_name: str, values) -> None:
    if any(v < 0 for v in values):
        raise TypeError(f"{fun_name} {arg_name} must have every element be nonnegative, "
                        f"got {tuple(values)}.")


def _op(ctx, name, operands, attributes=None):
    """One StableHLO op whose result has the equation's output type."""
    return ctx.builder.op1(name, operands, aval_type(ctx.avals_out[0]), attributes)


def scalar_constant(value, dtype):
    """A 0-d constant of ``dtype`` (a padding value, say)."""
    return Array._from_numpy(np.asarray(value, dtype), ShapedArray((), dtype, False))


# -- broadcast_in_dim --

def _broadcast_in_dim_abstract_eval(operand, *, shape, broadcast_dimensions, sharding):
    _check_shapelike("broadcast_in_dim", "shape", shape)
    if operand.ndim != len(broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {broadcast_dimensions} for "
                        f"operand ndim {operand.ndim}.")
    if len(shape) < operand.ndim:
        raise TypeError("broadcast_in_dim target broadcast shape must have equal or higher "
                        f"rank to the operand shape; got operand ndim {operand.ndim} and "
                        f"target broadcast ndim {len(shape)}.")
    if not all(0 <= d < len(shape) for d in broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {broadcast_dimensions} for operand ndim "
                        f"{operand.ndim} and shape {shape}.")
    if (any(s != 1 and s != shape[d] for s, d in
            zip(operand.shape, broadcast_dimensions, strict=True))
            or len(set(broadcast_dimensions)) != len(broadcast_dimensions)):
        raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be "
                        "equal to their corresponding dimensions in the target broadcast "
                        f"shape; got operand of shape {operand.shape}, target broadcast shape "
                        f"{shape}, broadcast_dimensions {broadcast_dimensions} ")
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding):
    if np.size(x) == math.prod(shape) and list(broadcast_dimensions) == sorted(
            broadcast_dimensions):
        return np.reshape(x, shape)  # only inserts unit dims (expand_dims, stack): a view
    dims = list(broadcast_dimensions)
    if dims != sorted(dims):  # the spec allows any order: put operand dims in target order
        order = np.argsort(dims)
        x = np.transpose(x, order)
        dims = [dims[i] for i in order]
    expanded = [1] * len(shape)
    for d, size in zip(dims, np.shape(x), strict=True):
        expanded[d] = size
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions, sharding):
    return _op(ctx, "stablehlo.broadcast_in_dim", [x],
               {"broadcast_dimensions": i64_array(broadcast_dimensions)})


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions, sharding):
    """Sum over the new dimensions and the expanded size-1 ones, then restore the operand's
    dimension order and its size-1 dimensions."""
    from xjax._src.lax.reduce import reduce_sum  # reduce imports this module
    in_shape = operand.aval.shape
    kept = [d for s, d in zip(in_shape, broadcast_dimensions, strict=True) if s != 1]
    summed = tuple(d for d in range(len(shape)) if d not in kept)
    out = reduce_sum(ct, summed) if summed else ct
    order = sorted(kept)
    permutation = tuple(order.index(d) for d in kept)
    if permutation != tuple(range(len(kept))):
        out = transpose(out, permutation)
    unit_dims = tuple(i for i, s in enumerate(in_shape) if s == 1)
    return expand_dims(out, unit_dims) if unit_dims else out


def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions, sharding):
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    size = get_aval(x).shape[0]
    return broadcast_in_dim_p.bind(x, shape=(size, *shape),
                                   broadcast_dimensions=(0,) + shift_axes(broadcast_dimensions),
                                   sharding=sharding), 0


broadcast_in_dim_p = Primitive(
    "broadcast_in_dim", abstract_eval=_broadcast_in_dim_abstract_eval,
    impl=_broadcast_in_dim_impl, lower=_broadcast_in_dim_lower,
    jvp=linear_jvp_of("broadcast_in_dim"),
    transpose=transpose_by_parts(_broadcast_in_dim_transpose), batch=_broadcast_in_dim_batch,
    # JAX prints neither the shape (the output type shows it) nor sharding=None nor empty
    # broadcast_dimensions. The printer hides names while None; the (name, value) entries
    # say "hidden while equal to value" (Ellipsis: always) for a printer that reads them.
    hidden_params=(("sharding", ...), ("shape", ...), ("broadcast_dimensions", ())),
    sharding_rule=sharding_rules.broadcast_in_dim)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """Broadcast ``operand`` to ``shape``; operand dim ``i`` becomes ``broadcast_dimensions[i]``.

    Lowers to ``stablehlo.broadcast_in_dim``. Operand dimensions must be 1 or equal to the
    target dimension they map to.

    Parameters
    ----------
    operand : array_like
    shape : sequence of int
        The shape of the result.
    broadcast_dimensions : sequence of int
        For each operand dimension, the result dimension it maps to.

    Returns
    -------
    Array of shape ``shape`` and the operand's dtype.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.broadcast_in_dim(jnp.arange(3), (2, 3), (1,)).shape
    (2, 3)
    """
    shape = canonicalize_shape(shape)
    broadcast_dimensions = index_tuple(broadcast_dimensions)
    if (type(operand) is Array and operand.ndim == len(shape)
            and not broadcast_dimensions and out_sharding is None):
        return operand
    sharding = (None if out_sharding is None
                else check_out_sharding(out_sharding, "broadcast_in_dim"))
    return broadcast_in_dim_p.bind(as_operand(operand), shape=shape,
                                   broadcast_dimensions=broadcast_dimensions, sharding=sharding)


def broadcast(operand, sizes, *, out_sharding=None):
    """Add leading dimensions of sizes ``sizes`` to ``operand``.

    Examples
    --------
    >>> from xjax import lax
    >>> import xjax.numpy as jnp
    >>> lax.broadcast(jnp.ones((3,)), (2,)).shape
    (2, 3)
    """
    sizes = canonicalize_shape(sizes)
    if not sizes and type(operand) is Array:
        return operand
    ndim = np.ndim(operand)
    dims = tuple(range(len(sizes), len(sizes) + ndim))
    return broadcast_in_dim(operand, sizes + tuple(np.shape(operand)), dims,
                            out_sharding=out_sharding)


def broadcast_to_rank(x, rank: int):
    """Add leading dimensions of size 1 to give ``x`` rank ``rank``."""
    ndim = np.ndim(x)
    if ndim == rank:
        return as_operand(x)
    return broadcast(x, (1,) * (rank - ndim))


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` under lax's implicit rules (rank 0, or size-1 dims)."""
    x_shape = get_aval(x).shape
    if tuple(x_shape) == tuple(shape):
        return x
    dims = tuple(range(len(shape))) if x_shape else ()
    return broadcast_in_dim(x, tuple(shape), dims)


# -- reshape --

def _reshape_abstract_eval(operand, *, new_sizes, dimensions, sharding):
    if not all(d >= 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if dimensions is not None and set(dimensions) != set(range(operand.ndim)):
        raise TypeError("reshape dimensions must be a permutation of operand dimensions, got "
                        f"dimensions {dimensions} for shape {operand.shape}.")
    if math.prod(new_sizes) != operand.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"(of total size {math.prod(new_sizes)}) for shape {operand.shape} "
                        f"(of total size {operand.size}).")
    return ShapedArray(new_sizes, operand.dtype, operand.weak_type)


def _reshape_impl(x, *, new_sizes, dimensions, sharding):
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, new_sizes)


def _reshape_lower(ctx, x, *, new_sizes, dimensions, sharding):
    if dimensions is not None:
        in_aval = ctx.avals_in[0]
        permuted = ShapedArray([in_aval.shape[d] for d in dimensions], in_aval.dtype)
        x = ctx.builder.op1("stablehlo.transpose", [x], aval_type(permuted),
                            {"permutation": i64_array(dimensions)})
    return _op(ctx, "stablehlo.reshape", [x])


def _reshape_transpose(ct, operand, *, new_sizes, dimensions, sharding):
    shape = operand.aval.shape
    if dimensions is None:
        return reshape(ct, shape)
    permuted = reshape(ct, tuple(shape[d] for d in dimensions))
    return transpose(permuted, tuple(int(i) for i in np.argsort(dimensions)))


def _reshape_batch(args, dims, *, new_sizes, dimensions, sharding):
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    if dimensions is not None:  # the permutation first, on the per-example axes
        x = transpose_p.bind(x, permutation=(0,) + shift_axes(dimensions))
    size = get_aval(x).shape[0]
    return reshape_p.bind(x, new_sizes=(size, *new_sizes), dimensions=None,
                          sharding=sharding), 0


reshape_p = Primitive("reshape", abstract_eval=_reshape_abstract_eval, impl=_reshape_impl,
                      lower=_reshape_lower, jvp=linear_jvp_of("reshape"),
                      transpose=transpose_by_parts(_reshape_transpose), batch=_reshape_batch,
                      sharding_rule=sharding_rules.reshape)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """Reshape ``operand`` to ``new_sizes`` (row-major), after transposing by ``dimensions``.

    Parameters
    ----------
    operand : array_like
    new_sizes : sequence of int
        The new shape; its size must equal the operand's.
    dimensions : sequence of int, optional
        A permutation applied to the operand before reshaping.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> y = jnp.arange(6).reshape(2, 3)
    >>> lax.reshape(y, (6,), (1, 0))
    Array([0, 3, 1, 4, 2, 5], dtype=int32)
    """
    new_sizes = canonicalize_shape(new_sizes)
    same_shape = tuple(np.shape(operand)) == new_sizes
    if dimensions is None:
        dims, same_dims = None, True
    else:
        dims = index_tuple(dimensions)
        same_dims = dims == tuple(range(np.ndim(operand)))
    if np.shape(operand) and same_shape and same_dims and type(operand) is Array:
        return operand
    return reshape_p.bind(as_operand(operand), new_sizes=new_sizes,
                          dimensions=None if same_dims else dims, sharding=None)


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """Collapse dimensions ``[start_dimension, stop_dimension)`` into one (row-major).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.collapse(jnp.ones((2, 3, 4)), 0, 2).shape
    (6, 4)
    """
    shape = tuple(np.shape(operand))
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                         f"[{start_dimension}:{stop_dimension}]")
    size = math.prod(shape[lo:hi])
    return reshape(operand, shape[:lo] + (size,) + shape[hi:])


# -- squeeze, expand_dims --

def _squeeze_abstract_eval(operand, *, dimensions):
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"dimensions are not unique: {dimensions}")
    if not all(0 <= d < operand.ndim for d in dimensions):
        raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
    if any(operand.shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={operand.shape} and dimensions={dimensions}")
    shape = tuple(s for i, s in enumerate(operand.shape) if i not in dimensions)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _squeeze_impl(x, *, dimensions):
    shape = tuple(s for i, s in enumerate(np.shape(x)) if i not in dimensions)
    return np.reshape(x, shape)


def _squeeze_lower(ctx, x, *, dimensions):
    return _op(ctx, "stablehlo.reshape", [x])


def _squeeze_transpose(ct, operand, *, dimensions):
    return expand_dims(ct, dimensions) if dimensions else ct


squeeze_p = Primitive("squeeze", abstract_eval=_squeeze_abstract_eval, impl=_squeeze_impl,
                      lower=_squeeze_lower, jvp=linear_jvp_of("squeeze"),
                      transpose=transpose_by_parts(_squeeze_transpose),
                      batch=batch_at_front("squeeze", shifted_axes("dimensions")),
                      sharding_rule=sharding_rules.squeeze)


def squeeze(array, dimensions):
    """Remove the size-1 dimensions ``dimensions`` from ``array``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.squeeze(jnp.ones((3, 1)), (-1,)).shape
    (3,)
    """
    ndim = np.ndim(array)
    # as JAX: axes out of range first; the primitive's rule rejects repeated ones
    dims = tuple(sorted(canonicalize_axis(d, ndim) for d in index_tuple(dimensions)))
    if not dims and type(array) is Array:
        return array
    return squeeze_p.bind(as_operand(array), dimensions=dims)


def expand_dims(array, dimensions):
    """Insert size-1 dimensions at ``dimensions`` (positions in the result).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.expand_dims(jnp.ones((3, 4)), (0, -1)).shape
    (1, 3, 4, 1)
    """
    dimensions = index_tuple(dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    ndim_out = np.ndim(array) + len(dimensions)
    dims = [canonicalize_axis(d, ndim_out) for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    result_shape = list(np.shape(array))
    for d in sorted(dims):
        result_shape.insert(d, 1)
    kept = [i for i in range(ndim_out) if i not in dims]
    return broadcast_in_dim(array, result_shape, kept)


# -- transpose, rev --

def _transpose_abstract_eval(operand, *, permutation):
    if tuple(sorted(permutation)) != tuple(range(operand.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {operand.shape}.")
    shape = tuple(operand.shape[d] for d in permutation)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _transpose_lower(ctx, x, *, permutation):
    return _op(ctx, "stablehlo.transpose", [x], {"permutation": i64_array(permutation)})


def _transpose_transpose(ct, operand, *, permutation):
    return transpose(ct, tuple(int(i) for i in np.argsort(permutation)))


def _transpose_batch(args, dims, *, permutation):
    """The batch axis stays where it is on input and comes first on output."""
    (x,), (d,) = args, dims
    actual = tuple(p if p < d else p + 1 for p in permutation)
    return transpose_p.bind(x, permutation=(d,) + actual), 0


transpose_p = Primitive(
    "transpose", abstract_eval=_transpose_abstract_eval,
    impl=lambda x, *, permutation: np.transpose(x, permutation),
    lower=_transpose_lower, jvp=linear_jvp_of("transpose"),
    transpose=transpose_by_parts(_transpose_transpose), batch=_transpose_batch,
    sharding_rule=sharding_rules.transpose)


def transpose(operand, permutation):
    """Permute the dimensions of ``operand``: result dim ``i`` is operand dim
    ``permutation[i]``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.transpose(jnp.ones((2, 3)), (1, 0)).shape
    (3, 2)
    """
    permutation = index_tuple(permutation)
    if permutation == tuple(range(np.ndim(operand))) and type(operand) is Array:
        return operand
    return transpose_p.bind(as_operand(operand), permutation=permutation)


def _rev_abstract_eval(operand, *, dimensions):
    _check_shapelike("rev", "dimensions", dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not max(dimensions) < operand.ndim:
        raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                        f"{dimensions} for operand ndim {operand.ndim}.")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _rev_impl(x, *, dimensions):
    return np.flip(x, dimensions) if dimensions else x


def _rev_lower(ctx, x, *, dimensions):
    return _op(ctx, "stablehlo.reverse", [x], {"dimensions": i64_array(dimensions)})


rev_p = Primitive("rev", abstract_eval=_rev_abstract_eval, impl=_rev_impl, lower=_rev_lower,
                  jvp=linear_jvp_of("rev"),
                  transpose=transpose_by_parts(lambda ct, x, *, dimensions: rev(ct, dimensions)),
                  batch=batch_at_front("rev", shifted_axes("dimensions")),
                  sharding_rule=sharding_rules.same_as_operand)


def rev(operand, dimensions):
    """Reverse ``operand`` along ``dimensions``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.rev(jnp.arange(3), (0,))
    Array([2, 1, 0], dtype=int32)
    """
    return rev_p.bind(as_operand(operand), dimensions=index_tuple(dimensions))


# -- iota --

def _iota_abstract_eval(*, dtype, shape, dimension, sharding):
    check_dtype("iota", dtype, NUMERIC)
    _check_shapelike("iota", "shape", shape)
    if not 0 <= dimension < len(shape):
        raise ValueError("iota dimension must be between 0 and len(shape), got "
                         f"dimension={dimension} for shape={shape}")
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype, shape, dimension, sharding):
    line = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), shape)


def _iota_lower(ctx, *, dtype, shape, dimension, sharding):
    if dtypes.is_complex(dtype):  # iota of the real type, then convert (the imag part is 0)
        real = ShapedArray(shape, np.finfo(dtype).dtype)
        x = ctx.builder.op1("stablehlo.iota", [], aval_type(real),
                            {"iota_dimension": f"{dimension} : i64"})
        return _op(ctx, "stablehlo.convert", [x])
    return _op(ctx, "stablehlo.iota", [], {"iota_dimension": f"{dimension} : i64"})


def _iota_batch(args, dims, **params):
    raise AssertionError("iota has no operands, so it is never batched")


iota_p = Primitive("iota", abstract_eval=_iota_abstract_eval, impl=_iota_impl,
                   lower=_iota_lower, jvp=late_rule(zero_jvp, "iota"),
                   transpose=Absent("no operands: it never reads a linear value"),
                   batch=_iota_batch)


def broadcasted_iota(dtype, shape, dimension: int, *, out_sharding=None):
    """An array of ``shape`` whose values count up along ``dimension``.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.broadcasted_iota(np.int32, (2, 3), 1)
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
    """
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "broadcasted_iota")
    shape = canonicalize_shape(shape)
    dimension = operator.index(dimension)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=dimension, sharding=None)


def iota(dtype, size: int):
    """``[0, 1, ..., size - 1]`` of ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.iota(np.float32, 3)
    Array([0., 1., 2.], dtype=float32)
    """
    return broadcasted_iota(dtype, (size,), 0)


# -- full and friends --

def _convert_scalar(value, dtype, weak_type: bool):
    """``value`` as a 0-d operand of ``dtype``: NumPy for concrete values, the
    ``convert_element_type`` primitive for tracers."""
    if isinstance(value, Tracer):
        if value.dtype == dtype and value.weak_type == weak_type:
            return value
        return convert_element_type_p.bind(value, new_dtype=dtype, weak_type=weak_type,
                                           sharding=None)
    if type(value) is Array:
        if value.dtype == dtype and value.weak_type == weak_type:
            return value
        value = value._value()
    npy = np.asarray(value)
    if npy.dtype != dtype:
        if dtypes.is_complex(npy.dtype) and not dtypes.is_complex(dtype):
            npy = npy.real
        npy = npy.astype(dtype)
    return Array._from_numpy(npy, ShapedArray((), dtype, weak_type))


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` filled with the scalar ``fill_value`` (cast to ``dtype``).

    Without ``dtype`` a Python scalar gives a weakly typed result, as in JAX.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.full((2,), 7)
    Array([7, 7], dtype=int32, weak_type=True)
    """
    shape = canonicalize_shape(shape)
    if np.shape(fill_value):
        raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if dtype is None:
        weak_type = dtypes.is_weakly_typed(fill_value)
        fill_dtype = dtypes.dtype(fill_value, canonicalize=True)
    else:
        weak_type = False
        fill_dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "full")
    return broadcast(_convert_scalar(fill_value, fill_dtype, weak_type), shape)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.full_like(jnp.ones((2,), jnp.int8), 3)
    Array([3, 3], dtype=int8)
    """
    fill_shape = np.shape(x) if shape is None else canonicalize_shape(shape)
    weak_type = dtype is None and dtypes.is_weakly_typed(x)
    if dtype is None:
        dtype = dtypes.dtype(x, canonicalize=True)
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "full_like")
    out = full(fill_shape, _convert_scalar(fill_value, dtype, weak_type))
    if shape is None and type(x) is Array:  # eager: placed as x is (JAX's full_like)
        return placed_like(out, x)
    return out


def zeros_like_array(x):
    """Zeros with ``x``'s shape, dtype and weak type."""
    return full_like(x, 0)


def full_like_shape(x, value, shape=None):
    """An array of ``value`` with ``x``'s dtype and weak type, and ``shape`` (default:
    ``x``'s shape), as JAX's ``full_like`` makes the constants of derivative rules."""
    aval = get_aval(x)
    scalar = _convert_scalar(value, aval.dtype, aval.weak_type)
    return broadcast(scalar, tuple(aval.shape if shape is None else shape))


__all__ = [
    "broadcast_in_dim", "broadcast", "broadcast_to_rank", "reshape", "collapse", "squeeze",
    "expand_dims", "transpose", "rev", "iota", "broadcasted_iota", "full", "full_like",
    "zeros_like_array",
    "broadcast_in_dim_p", "reshape_p", "squeeze_p", "transpose_p", "rev_p", "iota_p",
]
