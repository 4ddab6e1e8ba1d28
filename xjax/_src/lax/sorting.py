"""Sorting: the ``sort`` primitive (several operands sorted together by their first
``num_keys``) and ``top_k``, with the wrappers ``sort``, ``sort_key_val`` and ``top_k``.

Order of floats, as JAX's: ``-0.0`` equals ``0.0`` (a stable sort keeps their input order)
and every NaN equals every other and sorts after ``+inf``; complex numbers sort
lexicographically by (real, imaginary). ``top_k`` uses IEEE total order instead (as XLA's
TopK does): positive NaNs first, then ``+inf``, ..., ``0.0`` before ``-0.0``, ...,
negative NaNs last; ties keep the lower index first.

On the CPU a stable sort by one key lowers to the ``xjax_sort`` custom call (a radix sort in
``runtime/_pjrt_sort.c``, 10-20x faster than XLA's comparison sort, same bits); other sorts
(several keys, complex keys, unstable float sorts, partitioned programs) to
``stablehlo.sort``.

Spec: https://openxla.org/stablehlo/spec#sort
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax import sharding_rules
from xjax._src.lax.ad_rules import Zero, get_aval, instantiate, tangent_aval
from xjax._src.lax.batch_rules import bdim_at_front, batch_size, move_axis
from xjax._src.lax.shape import as_operand, canonicalize_axis
from xjax._src.lowering.stablehlo import aval_type, dense_layout, tensor_type
from xjax._src.runtime import ffi
from xjax._src.lax.gather_scatter import GatherDimensionNumbers, gather
from xjax._src.lax.shape import broadcasted_iota
from xjax._src.lax.shape import expand_dims

# -- the total order of keys, in NumPy and in StableHLO --


def _numpy_keys(x):
    """NumPy arrays whose lexicographic order (NumPy's: NaNs last, -0.0 == 0.0) is JAX's
    order of ``x``: real and imaginary parts for complex, float32 for narrow floats."""
    x = np.asarray(x)
    if dtypes.is_complex(x.dtype):
        return [np.real(x), np.imag(x)]
    if dtypes.is_float(x.dtype) and x.dtype.itemsize < 4:
        return [x.astype(np.float32)]  # exact; NumPy's sorts need a native dtype
    return [x]


def _equal_means_identical(x) -> bool:
    """Whether elements of ``x`` that sort as equal have the same bits: integers and bools,
    and native floats without NaNs (all equal, whatever their bits) or negative zeros."""
    x = np.asarray(x)
    if x.dtype.kind in "biu":  # NumPy's own (int4 and the like sort slowly)
        return True
    if x.dtype not in (np.float16, np.float32, np.float64):
        return False
    return not (np.isnan(x).any() or np.signbit(x[x == 0]).any())


def _compare(fb, x, y, direction, dtype):
    kind = "TOTALORDER" if dtypes.is_float(dtype) else (
        "UNSIGNED" if dtype == np.bool_ or dtypes.is_unsigned(dtype) else "SIGNED")
    return fb.op1("stablehlo.compare", [x, y], tensor_type((), np.bool_),
                  {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                   "compare_type": f"#stablehlo<comparison_type {kind}>"})


def _canonical_float(fb, x, dtype):
    """``x`` with -0.0 made 0.0 and every NaN the canonical positive NaN, so that total
    order compares them as JAX's sort does."""
    t = tensor_type((), dtype)
    zero = fb.constant(np.zeros((), dtype))
    nan = fb.constant(np.array(np.nan, dtype))
    bool_t = tensor_type((), np.bool_)
    is_zero = fb.op1("stablehlo.compare", [x, zero], bool_t,
                     {"comparison_direction": "#stablehlo<comparison_direction EQ>",
                      "compare_type": "#stablehlo<comparison_type FLOAT>"})
    x = fb.op1("stablehlo.select", [is_zero, zero, x], t)
    is_nan = fb.op1("stablehlo.compare", [x, x], bool_t,
                    {"comparison_direction": "#stablehlo<comparison_direction NE>",
                     "compare_type": "#stablehlo<comparison_type FLOAT>"})
    return fb.op1("stablehlo.select", [is_nan, nan, x], t)


def _hlo_keys(fb, x, dtype):
    """The scalar keys (and their dtypes) of one operand inside a comparator region."""
    if dtypes.is_complex(dtype):
        part = np.dtype(np.finfo(dtype).dtype)
        t = tensor_type((), part)
        parts = [fb.op1("stablehlo.real", [x], t), fb.op1("stablehlo.imag", [x], t)]
        return [(_canonical_float(fb, p, part), part) for p in parts]
    if dtypes.is_float(dtype):
        return [(_canonical_float(fb, x, dtype), dtype)]
    return [(x, dtype)]


def _less_than_region(fb, args, key_dtypes):
    """Lexicographic ``lhs < rhs`` over the keys: lt(k0) or (eq(k0) and (lt(k1) or ...))."""
    xs, ys = [], []
    for i, dtype in enumerate(key_dtypes):
        xs += _hlo_keys(fb, args[2 * i], dtype)
        ys += _hlo_keys(fb, args[2 * i + 1], dtype)
    bool_t = tensor_type((), np.bool_)
    result = None
    for (x, dtype), (y, _) in zip(reversed(xs), reversed(ys), strict=True):
        less = _compare(fb, x, y, "LT", dtype)
        if result is None:
            result = less
        else:
            equal = _compare(fb, x, y, "EQ", dtype)
            result = fb.op1("stablehlo.or",
                            [less, fb.op1("stablehlo.and", [equal, result], bool_t)], bool_t)
    return [result]


# -- take along an axis (the derivative rules' gather) --

def _take_along(x, indices, axis):
    """``x`` at ``indices`` along ``axis``, the other axes matched positionally: a gather
    whose other axes are batching dimensions."""
    ndim = len(x.shape)
    others = tuple(d for d in range(ndim) if d != axis)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                   start_index_map=(axis,), operand_batching_dims=others,
                                   start_indices_batching_dims=others)
    return gather(x, expand_dims(indices, (ndim,)), dnums, (1,) * ndim,
                  mode="promise_in_bounds")


# -- sort --

def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    shape = operands[0].shape
    if any(o.shape != shape for o in operands[1:]):
        raise TypeError("Arguments to sort must have equal shapes, got: "
                        f"{' '.join(str(o.shape) for o in operands)}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and "
                         f"len(operand)={len(operands)}")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension "
                         f"{len(shape)}")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _sort_impl(*operands, dimension, is_stable, num_keys):
    if len(operands) == 1 and _equal_means_identical(operands[0]):
        # equal elements have the same bits, so NumPy's fast unstable sort (vectorized
        # where the CPU allows: 6 ms for 1e6 float32, lexsort 94 ms) gives the stable result
        return [np.sort(operands[0], axis=dimension)]
    keys = [k for o in operands[:num_keys] for k in _numpy_keys(o)]
    # np.lexsort is stable and sorts by its last key first; NaNs go last.
    order = np.lexsort(keys[::-1], axis=dimension)
    return [np.take_along_axis(np.asarray(o), order, dimension) for o in operands]


# Keys the CPU's radix-sort handler (ffi.SORT_TARGET) orders, and the operand dtypes it
# permutes; int4, float8 and the like keep XLA's sort.
_RADIX_KEY_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, dtypes.bfloat16, np.float32, np.float64))
_RADIX_OPERAND_DTYPES = _RADIX_KEY_DTYPES | {np.dtype(np.complex64), np.dtype(np.complex128)}


def _radix_sort_applies(ctx, dimension, is_stable, num_keys) -> bool:
    """Whether this sort runs as the CPU's radix-sort custom call: one key, stable (or an
    integer key alone, whose equal elements are identical), on one unpartitioned device.
    XLA's CPU sort calls its comparator per comparison: 216 ms for 1e6 float32 (JAX too),
    the radix sort 10 ms."""
    avals = ctx.avals_in
    key = avals[0].dtype
    return (ctx.module.platform == "cpu" and ctx.module.num_partitions == 1
            and not ctx.module.manual_axes and num_keys == 1
            and (is_stable or (len(avals) == 1 and key.kind in "biu"))
            and key in _RADIX_KEY_DTYPES
            and all(a.dtype in _RADIX_OPERAND_DTYPES for a in avals)
            and avals[0].shape[dimension] < 2**32
            and ffi.SORT_TARGET in ffi.ffi_targets("cpu"))


def _radix_sort_lower(ctx, operands, dimension):
    """The sort as the ``xjax_sort`` custom call, with ``dimension`` made the minor one in
    memory (XLA transposes around the call where it is not already)."""
    rank = len(ctx.avals_in[0].shape)
    order = [dimension] + [d for d in range(rank - 1, -1, -1) if d != dimension]
    layout = dense_layout(order)
    layouts = f"[{', '.join([layout] * len(operands))}]"
    attrs = {"call_target_name": f'"{ffi.SORT_TARGET}"', "api_version": "4 : i32",
             "backend_config": f"{{dimension = {dimension} : i64}}",
             "operand_layouts": layouts, "result_layouts": layouts}
    return ctx.builder.op("stablehlo.custom_call", list(operands),
                          [aval_type(a) for a in ctx.avals_out], attrs)


def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
    if _radix_sort_applies(ctx, dimension, is_stable, num_keys):
        return _radix_sort_lower(ctx, operands, dimension)
    b = ctx.builder
    in_dtypes = [a.dtype for a in ctx.avals_in]
    scalar_types = [t for d in in_dtypes for t in (tensor_type((), d),) * 2]
    region = b.region(scalar_types,
                      lambda fb, args: _less_than_region(fb, args, in_dtypes[:num_keys]))
    return b.op("stablehlo.sort", list(operands), [aval_type(a) for a in ctx.avals_out],
                {"dimension": f"{dimension} : i64",
                 "is_stable": "true" if is_stable else "false"}, regions=[region])


def _iota_along(shape, dimension):
    return broadcasted_iota(np.int32, shape, dimension)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """Sort the operands with an iota beside them; the tangents follow the permutation."""
    shape = get_aval(primals[0]).shape
    outs = sort_p.bind(*primals, _iota_along(shape, dimension), dimension=dimension,
                       is_stable=is_stable, num_keys=num_keys)
    order = outs[-1]
    tangents_out = [t if type(t) is Zero else _take_along(t, order, dimension)
                    for t in tangents]
    return outs[:-1], tangents_out


def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    size = batch_size(args, dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    outs = sort_p.bind(*moved, dimension=dimension + 1, is_stable=is_stable,
                       num_keys=num_keys)
    return outs, [0] * len(outs)


sort_p = Primitive("sort", abstract_eval=_sort_abstract_eval, impl=_sort_impl,
                   lower=_sort_lower, jvp=_sort_jvp, transpose=NONLINEAR, batch=_sort_batch,
                   multiple_results=True, sharding_rule=sharding_rules.sort)


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort one array, or several arrays of one shape together, along ``dimension``.

    Parameters
    ----------
    operand : array or sequence of arrays
        With several arrays, the first ``num_keys`` are the keys (compared
        lexicographically) and every array is permuted the same way.
    dimension : int
        The axis to sort along.
    is_stable : bool
        Whether equal keys keep their input order.
    num_keys : int
        How many leading operands are keys.

    Returns
    -------
    Array, or a tuple of arrays for a sequence ``operand``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.sort(jnp.array([3., jnp.nan, -1., 2.]))
    Array([-1.,  2.,  3., nan], dtype=float32)
    """
    if isinstance(operand, (list, tuple)):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        operands = [as_operand(o) for o in operand]
        single = False
    else:
        operands = [as_operand(operand)]
        single = True
    dimension = canonicalize_axis(operator.index(dimension), len(operands[0].shape))
    outs = sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable),
                       num_keys=operator.index(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sort ``keys`` along ``dimension`` and permute ``values`` the same way.

    Returns
    -------
    tuple of (sorted keys, permuted values)
    """
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)


# -- top_k --

def _top_k_abstract_eval(operand, *, k, axis):
    if dtypes.is_complex(operand.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    shape = list(operand.shape)
    if not 0 <= axis < len(shape):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {len(shape)}")
    if shape[axis] < k:
        raise ValueError("k argument to top_k must be no larger than size along axis; got "
                         f"k={k} with shape={shape} and axis={axis}")
    shape[axis] = k
    return [ShapedArray(tuple(shape), operand.dtype, operand.weak_type),
            ShapedArray(tuple(shape), np.dtype(np.int32), False)]


def _total_order_key(x):
    """int64 keys ordered as IEEE total order orders the floats ``x`` (integers as
    they are)."""
    x = np.asarray(x)
    if not dtypes.is_float(x.dtype):
        return x.astype(np.int64)
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    raw = x.view(bits).astype(np.int64)
    # negative floats order backwards as sign-magnitude integers: flip their magnitude bits
    magnitude = np.int64(np.iinfo(bits).max)
    return np.where(raw < 0, raw ^ magnitude, raw)


def _top_k_impl(x, *, k, axis):
    x = np.asarray(x)
    key = _total_order_key(x)
    # descending and stable: sort the negated keys (int64 holds every negation)
    order = np.argsort(-key, axis=axis, kind="stable")
    order = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, order, axis), order.astype(np.int32)]


def _top_k_lower(ctx, x, *, k, axis):
    b = ctx.builder
    aval = ctx.avals_in[0]
    last = len(aval.shape) - 1
    values_aval, indices_aval = ctx.avals_out
    if axis != last:  # chlo.top_k works on the last axis
        perm = [d for d in range(last + 1) if d != axis] + [axis]
        moved_shape = tuple(aval.shape[d] for d in perm)
        x = b.op1("stablehlo.transpose", [x], tensor_type(moved_shape, aval.dtype),
                  {"permutation": f"array<i64: {', '.join(map(str, perm))}>"})
        out_shape = moved_shape[:-1] + (k,)
        values, indices = b.op("chlo.top_k", [x], [tensor_type(out_shape, aval.dtype),
                                                     tensor_type(out_shape, np.int32)],
                               {"k": f"{k} : i64"})
        inverse = list(np.argsort(perm))
        attrs = {"permutation": f"array<i64: {', '.join(map(str, inverse))}>"}
        return [b.op1("stablehlo.transpose", [values], aval_type(values_aval), attrs),
                b.op1("stablehlo.transpose", [indices], aval_type(indices_aval), attrs)]
    return b.op("chlo.top_k", [x], [aval_type(values_aval), aval_type(indices_aval)],
                {"k": f"{k} : i64"})


def _top_k_jvp(primals, tangents, *, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    index_tangent = Zero(tangent_aval(get_aval(indices)))
    if type(t) is Zero:
        return [values, indices], [Zero(tangent_aval(get_aval(values))), index_tangent]
    return [values, indices], [_take_along(instantiate(t), indices, axis), index_tangent]


def _top_k_batch(args, dims, *, k, axis):
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    outs = top_k_p.bind(x, k=k, axis=axis + 1)
    return outs, [0, 0]


top_k_p = Primitive("top_k", abstract_eval=_top_k_abstract_eval, impl=_top_k_impl,
                    lower=_top_k_lower, jvp=_top_k_jvp, transpose=NONLINEAR,
                    batch=_top_k_batch, multiple_results=True)


def top_k(operand, k: int, *, axis: int = -1):
    """The ``k`` largest entries along ``axis`` and their indices, largest first.

    Parameters
    ----------
    operand : array_like
        Real or integer values.
    k : int
        How many to return.
    axis : int
        The axis to search along (default: the last).

    Returns
    -------
    [values, indices] : list of two arrays (as JAX returns them)
        ``indices`` is int32; equal values keep the lower index first.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.top_k(jnp.array([1., 4., 2., 4.]), 2)
    [Array([4., 4.], dtype=float32), Array([1, 3], dtype=int32)]
    """
    operand = as_operand(operand)
    axis = canonicalize_axis(operator.index(axis), len(operand.shape))
    return top_k_p.bind(operand, k=operator.index(k), axis=axis)



__all__ = ["sort", "sort_key_val", "top_k", "sort_p", "top_k_p"]
