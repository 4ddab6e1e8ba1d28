"""Reductions: reduce_sum/prod/max/min/and/or/xor over ``axes``, and argmax/argmin.
Cumulative reductions live in ``xjax.lax.cumulative`` (reduce_precision, a rounding, in
``xjax.lax.convert``).

Lowered to ``stablehlo.reduce`` with a scalar region; argmax/argmin reduce (value, index)
pairs in one variadic reduce, as JAX does. Spec: https://openxla.org/stablehlo/spec#reduce
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.config import config
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, NOT_DIFFERENTIABLE, Primitive, registry
from xjax._src.lax import sharding_rules
from xjax._src.lax import concat_pad, slicing  # they import this module: used at call time only
from xjax._src.lax.ad_helpers import linear_jvp_of
from xjax._src.lax.ad_rules import Zero, transpose_by_parts
from xjax._src.lax.batch_rules import batch_at_front, shifted_axes
from xjax._src.lax.compare import eq
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.elementwise import add, div, mul
from xjax._src.lax.naryop import scalar_region
from xjax._src.lax.shape import (as_operand, broadcast_in_dim, full, index_tuple, reshape,
                                 scalar_constant, squeeze)
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type

# -- helpers --


def _check_axes(operand, axes) -> tuple:
    if any(not 0 <= a < operand.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                         f"{operand.str_short()}.")
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    return tuple(s for i, s in enumerate(operand.shape) if i not in axes)


def _is_inexact(dtype) -> bool:
    return dtypes.is_float(dtype) or dtypes.is_complex(dtype)


def _is_narrow_float(dtype) -> bool:
    return dtypes.is_float(dtype) and dtype.itemsize < 4


def max_identity(dtype):
    """The identity of ``max``: -inf, the least integer, or False."""
    if _is_inexact(dtype):
        return np.asarray(-np.inf).astype(dtype)
    if dtype == np.bool_:
        return np.asarray(False)
    return np.asarray(dtypes.iinfo(dtype).min, dtype)


def min_identity(dtype):
    """The identity of ``min``: inf, the greatest integer, or True."""
    if _is_inexact(dtype):
        return np.asarray(np.inf).astype(dtype)
    if dtype == np.bool_:
        return np.asarray(True)
    return np.asarray(dtypes.iinfo(dtype).max, dtype)


def _all_ones(dtype):
    if dtype == np.bool_:
        return np.asarray(True)
    return np.asarray(-1).astype(dtype) if not dtypes.is_unsigned(dtype) else \
        np.asarray(dtypes.iinfo(dtype).max, dtype)


def _reduce_lower(kind, identity):
    """Lowering to one ``stablehlo.reduce`` whose region combines with ``kind`` (on the CPU,
    a large max/min or sum over the minor dimension in two, see ``_minor_split_lower``)."""

    def lower(ctx, x, *, axes, **params):
        aval = ctx.avals_in[0]
        b = ctx.builder
        init = b.constant(identity(aval.dtype))
        short = _short_minor_reduction(ctx, aval, axes)
        plain_extreme = short and _plain_short_extreme(ctx, aval, axes, kind)
        if not plain_extreme and _split_minor_reduction(ctx, aval, axes, kind):
            return _minor_split_lower(ctx, x, init, axes, kind)
        ctx.module.short_minor_reductions += short
        ctx.module.plain_extremes_emitted += plain_extreme
        return b.op1("stablehlo.reduce", [x, init], aval_type(ctx.avals_out[0]),
                     {"dimensions": i64_array(axes)}, regions=[scalar_region(b, aval.dtype, kind)])

    return lower


# A floating max/min over the minor dimension is split on the CPU when the trailing reduced
# dimensions hold at least this many elements and the operand this many in all (smaller ones
# gain nothing); a float32/float64 sum when they hold SPLIT_SUM_MIN_SIZE and divide into
# lanes (a sum along 1000 elements gains nothing, and padding costs more than it gains).
SPLIT_MINOR_MIN_SIZE = 9  # below, XLA runs them as fast as it can (7-8 elements: unrolled)
SPLIT_MINOR_MIN_ELEMENTS = 4096
SPLIT_SUM_MIN_SIZE = 8192
_SPLIT_LANES = 16  # minor chunk of the first stage: one AVX-512 vector of float32


def _trailing_reduced(ndim, axes) -> int:
    """The first of the trailing dimensions that ``axes`` all reduce (``ndim``: none)."""
    first = ndim
    while first > 0 and first - 1 in axes:
        first -= 1
    return first


# A reduce along at most this many trailing (minor) elements runs without XLA's tree
# rewrite when the whole module allows (lower_jaxpr.TREE_REWRITE_OPTIONAL): a float32 sum
# then adds 16 lanes of at most 256 elements each, as accurate as JAX's CPU sums.
SHORT_MINOR_MAX = 4096


def _short_minor_reduction(ctx, aval, axes) -> bool:
    trailing = _trailing_reduced(aval.ndim, axes)
    return (ctx.module.platform == "cpu" and trailing < aval.ndim
            and set(axes) == set(range(trailing, aval.ndim))
            and math.prod(aval.shape[trailing:]) <= SHORT_MINOR_MAX)


# Without the tree rewrite, XLA's CPU max/min along at least this many minor elements is a
# vectorized loop, faster than the split form (1000x1000 float32: 131 us against 159 us;
# softmax 632 us against 1045 us, JAX 584 us); along fewer it stays a scalar chain (2 ms
# for 2**20 float32 in rows of 32-64, split 0.24 ms).
PLAIN_EXTREME_MIN_SIZE = 128


def _plain_short_extreme(ctx, aval, axes, kind) -> bool:
    """Whether a float32/float64 max/min along a short minor stretch (the caller checks
    ``_short_minor_reduction``) is emitted as one plain reduce, counting on the module
    compiling without the tree rewrite (``ModuleBuilder.plain_short_extremes``)."""
    return (kind in ("max", "min") and ctx.module.plain_short_extremes
            and aval.dtype in (np.float32, np.float64)
            and math.prod(aval.shape[_trailing_reduced(aval.ndim, axes):])
            >= PLAIN_EXTREME_MIN_SIZE)


def _split_minor_reduction(ctx, aval, axes, kind) -> bool:
    if ctx.module.platform != "cpu" or aval.size < SPLIT_MINOR_MIN_ELEMENTS:
        return False
    m = math.prod(aval.shape[_trailing_reduced(aval.ndim, axes):])
    if kind in ("max", "min"):
        return dtypes.issubdtype(aval.dtype, np.floating) and m >= SPLIT_MINOR_MIN_SIZE
    return (kind == "add" and aval.dtype in (np.float32, np.float64)
            and m >= SPLIT_SUM_MIN_SIZE and m % 8 == 0)


def _minor_split_lower(ctx, x, init, axes, kind):
    """A reduction over ``axes``, the minor dimension among them, for XLA's CPU compiler:
    its NaN-propagating max/min is a compare-and-select chain that LLVM does not vectorize
    along a reduced dimension (10x slower than JAX's CPU kernels on 1000x1000 float32), and
    its tree reduction of a large trailing block runs 2x slower than JAX's; along a major
    dimension both run across the kept minor one, vectorized. So the trailing reduced
    dimensions merge into one of m elements, which becomes (m/k, k) with k lanes (padded
    with the identity to a multiple of k); stage one reduces the m/k chunks, stage two the
    k lanes (a barrier keeps XLA from merging the stages back into one), and a last reduce
    takes any other reduced (major) dimensions. Max/min give the same values (exact and
    order-free, NaN propagating either way); sums add in another order, still in a tree
    (XLA's rewriter splits stage one's long dimension), as accurate as before."""
    b = ctx.builder
    aval = ctx.avals_in[0]
    dtype, shape = aval.dtype, aval.shape
    # bfloat16's max/min is emulated, 20x slower than float32's; float16 converts slower
    # than it reduces. Exact: a bfloat16 value (NaN too) is a float32 one, and max picks one.
    narrow = dtype == dtypes.bfloat16
    if narrow:
        dtype = np.dtype(np.float32)
        x = b.op1("stablehlo.convert", [x], tensor_type(shape, dtype))
        init = b.op1("stablehlo.convert", [init], tensor_type((), dtype))
    axes = set(axes)
    trailing = _trailing_reduced(aval.ndim, axes)
    m = math.prod(shape[trailing:])
    lanes = 8 if m <= 16 else next((k for k in (_SPLIT_LANES, 8) if m % k == 0), _SPLIT_LANES)
    # at least two chunks: a reduce over one chunk's lanes alone is the slow kind again
    # (max over 16 trailing elements: 2.5 ms on 2**20 float32; padded to 32: 0.45 ms)
    padded = max(-(-m // lanes), 2) * lanes
    lead = shape[:trailing]
    if trailing != aval.ndim - 1:
        x = b.op1("stablehlo.reshape", [x], tensor_type(lead + (m,), dtype))
    if padded != m:
        zeros = [0] * (len(lead) + 1)
        x = b.op1("stablehlo.pad", [x, init], tensor_type(lead + (padded,), dtype),
                  {"edge_padding_low": i64_array(zeros),
                   "edge_padding_high": i64_array(zeros[:-1] + [padded - m]),
                   "interior_padding": i64_array(zeros)})
    x = b.op1("stablehlo.reshape", [x], tensor_type(lead + (padded // lanes, lanes), dtype))
    region = scalar_region(b, dtype, kind)
    chunks = tensor_type(lead + (lanes,), dtype)
    x = b.op1("stablehlo.reduce", [x, init], chunks, {"dimensions": i64_array([len(lead)])},
              regions=[region])
    x = b.op1("stablehlo.optimization_barrier", [x], chunks)
    x = b.op1("stablehlo.reduce", [x, init], tensor_type(lead, dtype),
              {"dimensions": i64_array([len(lead)])}, regions=[region])
    major = sorted(a for a in axes if a < trailing)
    if major:
        x = b.op1("stablehlo.reduce", [x, init], tensor_type(ctx.avals_out[0].shape, dtype),
                  {"dimensions": i64_array(major)}, regions=[region])
    if narrow:
        x = b.op1("stablehlo.convert", [x], aval_type(ctx.avals_out[0]))
    return x


def _kept_dims(ndim, axes) -> tuple:
    return tuple(d for d in range(ndim) if d not in axes)


def _reduce_sum_transpose(ct, operand, *, axes, **params):
    aval = operand.aval  # the cotangent takes the operand's type, its split included
    return broadcast_in_dim(ct, aval.shape, _kept_dims(len(aval.shape), axes),
                            out_sharding=getattr(aval, "_sharding", None))


def _chooser_jvp(name):
    """reduce_max/min: the mean of the tangents at the positions equal to the result (JAX
    splits ties evenly)."""

    def jvp(primals, tangents, *, axes, **params):
        (x,), (t,) = primals, tangents
        ans = registry[name].bind(x, axes=axes, **params)
        if type(t) is Zero:
            return ans, Zero(t.aval)
        kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        where = eq(x, reshape(ans, kept))  # size-1 axes broadcast, as JAX's rule
        location = convert_element_type(where, t.dtype)
        counts = reduce_sum(location, axes)
        return ans, div(reduce_sum(mul(t, location), axes), counts)

    return jvp


def _product_tree(x, t):
    """The product of ``x`` along axis 0 and its tangent along ``t``, by halving: each step
    multiplies the first half with the second (padded with one), by the product rule. Exact
    with zeros, unlike a quotient."""
    slice_in_dim = slicing.slice_in_dim
    while x.shape[0] > 1:
        n = x.shape[0]
        half = (n + 1) // 2
        x1, t1 = slice_in_dim(x, 0, half), slice_in_dim(t, 0, half)
        x2, t2 = slice_in_dim(x, half, n), slice_in_dim(t, half, n)
        if n % 2:
            config = ((0, 1, 0),) + ((0, 0, 0),) * (x.ndim - 1)
            x2 = concat_pad.pad(x2, scalar_constant(1, x.dtype), config)
            t2 = concat_pad.pad(t2, scalar_constant(0, t.dtype), config)
        x, t = mul(x1, x2), add(mul(t1, x2), mul(x1, t2))
    return squeeze(t, (0,))


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    shape = tuple(x.shape)
    kept = _kept_dims(len(shape), axes)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        return ans, full(ans.shape, 0, t.dtype)
    flat_shape = (n,) + tuple(shape[d] for d in kept)
    order = tuple(axes) + kept
    return ans, _product_tree(reshape(x, flat_shape, order), reshape(t, flat_shape, order))


def _reducer(name, *, impl, kind, identity, dtype_check, jvp, transpose, strip_weak=False,
             sharding_param=False, check=None):
    """A reduction primitive over ``axes`` and its ``lax.<name>(operand, axes)`` wrapper
    (``check(operand, axes)``, if given, validates more than the dtype)."""

    def abstract_eval(operand, *, axes, **params):
        dtype_check(name, operand.dtype)
        if check is not None:
            check(operand, axes)
        shape = _check_axes(operand, axes)
        return ShapedArray(shape, operand.dtype, False if strip_weak else operand.weak_type)

    def impl_rule(x, *, axes, **params):
        return impl(np.asarray(x), axes)

    hidden = ()
    prim = Primitive(name, abstract_eval=abstract_eval, impl=impl_rule,
                     lower=_reduce_lower(kind, identity), jvp=jvp,
                     transpose=transpose, batch=batch_at_front(name, shifted_axes("axes")),
                     hidden_params=hidden, sharding_rule=sharding_rules.reduction)
    bind = prim.bind

    if sharding_param:
        def wrapper(operand, axes, *, out_sharding=None):
            return bind(as_operand(operand), axes=index_tuple(axes), out_sharding=None)
    else:
        def wrapper(operand, axes):
            return bind(as_operand(operand), axes=index_tuple(axes))
    wrapper.__name__ = wrapper.__qualname__ = name
    return prim, wrapper


def _numbers_only(name, dtype):
    if dtype == np.bool_:
        raise TypeError(f"{name} does not accept dtype bool. Accepted dtypes are subtypes of "
                        "number.")


def _any_dtype(name, dtype):
    pass


def _check_f16_sum(operand, axes) -> None:
    """``jax_allow_f16_reductions=False`` forbids sums of float16/bfloat16 values."""
    if (not config.jax_allow_f16_reductions
            and operand.dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16))
            and not all(operand.shape[d] == 1 for d in axes)):
        raise ValueError(f"reduce_sum on operand {operand.str_short(True)} is not allowed "
                         "when jax_allow_f16_reductions=False.")


def _logical_only(name, dtype):
    if not (dtype == np.bool_ or dtypes.is_integer(dtype)):
        raise TypeError(f"logical reduction requires operand dtype bool or int, got "
                        f"{dtype.name}.")


def accumulation_dtype(dtype):
    """Where NumPy sums/products of ``dtype`` are accumulated: floats and complex at double
    precision, rounded once (NumPy adds sequentially along non-contiguous axes, which loses
    far more than XLA's tree reductions); integers in their own type (wrapping, as XLA)."""
    if dtypes.is_float(dtype) and dtype.itemsize <= 4:
        return np.dtype(np.float64)
    if dtype == np.complex64:
        return np.dtype(np.complex128)
    return dtype


def _sum_impl(x, axes):
    return np.asarray(np.sum(*_reduced_axes_last(x, axes),
                             dtype=accumulation_dtype(x.dtype))).astype(x.dtype, copy=False)


def _reduced_axes_last(x, axes):
    """``(x, axes)`` for NumPy's reduction, with reduced axes made contiguous when few
    values are kept: NumPy then sums each output with one vectorized pass (a 10000x10
    column sum: 55 us instead of 138 us, the copy included)."""
    axes = tuple(axes)
    kept = [d for d in range(x.ndim) if d not in axes]
    if (x.size < 4096 or not kept or not axes or kept == list(range(len(kept)))
            or math.prod(x.shape[d] for d in kept) > 64):
        return x, axes
    moved = np.ascontiguousarray(np.transpose(x, kept + sorted(axes)))
    return moved, tuple(range(len(kept), x.ndim))


def _prod_impl(x, axes):
    return np.asarray(np.prod(x, axis=axes, dtype=accumulation_dtype(x.dtype))).astype(
        x.dtype, copy=False)


def _ufunc_reduce_impl(ufunc, identity):
    """``ufunc.reduce`` over ``axes``, or the identity where a reduced axis is empty (NumPy
    has no identity for max/min)."""
    def impl(x, axes):
        if any(x.shape[a] == 0 for a in axes):
            shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
            return np.full(shape, identity(x.dtype), x.dtype)
        with np.errstate(invalid="ignore"):  # NaNs propagate, as in XLA
            return np.asarray(ufunc.reduce(x, axis=axes)).astype(x.dtype, copy=False)
    return impl


_LOGICAL = {"jvp": NOT_DIFFERENTIABLE, "transpose": NOT_DIFFERENTIABLE,
            "dtype_check": _logical_only, "strip_weak": True}

reduce_sum_p, reduce_sum = _reducer(
    "reduce_sum", impl=_sum_impl, kind="add",
    identity=lambda dtype: np.zeros((), dtype), dtype_check=_numbers_only, sharding_param=True,
    check=_check_f16_sum, jvp=linear_jvp_of("reduce_sum"), transpose=transpose_by_parts(_reduce_sum_transpose))
reduce_prod_p, reduce_prod = _reducer(
    "reduce_prod", impl=_prod_impl, kind="mul",
    identity=lambda dtype: np.ones((), dtype), dtype_check=_numbers_only,
    jvp=_reduce_prod_jvp, transpose=NONLINEAR)
reduce_max_p, reduce_max = _reducer(
    "reduce_max", impl=_ufunc_reduce_impl(np.maximum, max_identity),
    kind="max", identity=max_identity, dtype_check=_any_dtype,
    jvp=_chooser_jvp("reduce_max"), transpose=NONLINEAR)
reduce_min_p, reduce_min = _reducer(
    "reduce_min", impl=_ufunc_reduce_impl(np.minimum, min_identity),
    kind="min", identity=min_identity, dtype_check=_any_dtype,
    jvp=_chooser_jvp("reduce_min"), transpose=NONLINEAR)
reduce_and_p, reduce_and = _reducer(
    "reduce_and", impl=_ufunc_reduce_impl(np.bitwise_and, _all_ones),
    kind="and", identity=_all_ones, **_LOGICAL)
reduce_or_p, reduce_or = _reducer(
    "reduce_or", impl=_ufunc_reduce_impl(np.bitwise_or, lambda dtype: np.zeros((), dtype)),
    kind="or", identity=lambda dtype: np.zeros((), dtype), **_LOGICAL)
reduce_xor_p, reduce_xor = _reducer(
    "reduce_xor", impl=_ufunc_reduce_impl(np.bitwise_xor, lambda dtype: np.zeros((), dtype)),
    kind="xor", identity=lambda dtype: np.zeros((), dtype), **_LOGICAL)

for _fn, _what in ((reduce_sum, "Sum"), (reduce_prod, "Product"), (reduce_max, "Maximum"),
                   (reduce_min, "Minimum"), (reduce_and, "Bitwise (logical for bool) AND"),
                   (reduce_or, "Bitwise (logical for bool) OR"),
                   (reduce_xor, "Bitwise (logical for bool) XOR")):
    _fn.__doc__ = f"""{_what} of ``operand`` over ``axes``.

    Parameters
    ----------
    operand : array_like
    axes : sequence of int
        Non-negative, distinct axes to reduce.

    Returns
    -------
    Array of ``operand``'s dtype without the ``axes`` dimensions.
    """


# -- argmax, argmin --

def _argminmax_abstract_eval(name, compare_name, operand, axes, index_dtype):
    if not dtypes.is_integer(index_dtype):
        raise TypeError(f"index_dtype must be an integer type, but got {index_dtype.name}")
    if dtypes.is_complex(operand.dtype):
        raise TypeError(f"{compare_name} does not accept dtype {operand.dtype.name} at position "
                        f"0. Accepted dtypes at position 0 are subtypes of integer, floating, "
                        "bool.")
    (axis,) = axes
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
    if operand.shape[axis] == 0:
        raise ValueError("argmin and argmax require non-empty reduced dimension. "
                         f"operand.shape={operand.shape} axis={axis}")
    shape = tuple(s for i, s in enumerate(operand.shape) if i != axis)
    return ShapedArray(shape, index_dtype, False)


def _argminmax_impl(np_fn):
    def impl(x, *, axes, index_dtype):
        x = np.asarray(x)
        if _is_narrow_float(x.dtype):
            x = x.astype(np.float32)  # exact; NumPy's argmax needs a native dtype
        # NumPy already returns the first NaN, else the first extremum, as XLA/JAX do.
        return np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)
    return impl


def _compare_type(dtype) -> str:
    if dtypes.is_float(dtype):
        return "FLOAT"
    if dtype == np.bool_ or dtypes.is_unsigned(dtype):
        return "UNSIGNED"
    return "SIGNED"


def _compare(b, x, y, direction, dtype) -> str:
    return b.op1("stablehlo.compare", [x, y], tensor_type((), np.bool_),
                 {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                  "compare_type": f"#stablehlo<comparison_type {_compare_type(dtype)}>"})


# On the CPU, a float argmax/argmin along at least this many trailing elements runs as two
# reductions XLA vectorizes: the split max/min, then the least index holding it (or a NaN).
# XLA's variadic (value, index) reduce is fast up to 18 elements (unrolled), 3-5x slower
# from 19 (2**20 float32 with 20 per row: 2.0 ms; in two passes 1.1 ms; 1000x1000: 2.1 ->
# 0.8 ms, JAX 1.8).
ARGMINMAX_TWO_PASS_MIN_SIZE = 19


def _argminmax_in_two_passes(ctx, aval, axes) -> bool:
    return (ctx.module.platform == "cpu" and aval.dtype in (np.float32, np.float64)
            and tuple(axes) == (aval.ndim - 1,) and aval.size >= SPLIT_MINOR_MIN_ELEMENTS
            and aval.shape[-1] >= ARGMINMAX_TWO_PASS_MIN_SIZE)


def _argminmax_two_passes(ctx, x, direction, identity, index_dtype):
    """The first index of the maximum (minimum) along the last axis, or of the first NaN:
    the split max/min, then the least index where ``x`` equals it or is NaN (a NaN extreme
    means no number equals it; a numeric one that no NaN exists)."""
    b = ctx.builder
    aval = ctx.avals_in[0]
    dtype, shape, last = aval.dtype, aval.shape, aval.ndim - 1
    kind = "max" if direction == "GT" else "min"
    extreme = _minor_split_lower(ctx, x, b.constant(identity(dtype)), (last,), kind)
    extreme = b.op1("stablehlo.broadcast_in_dim", [extreme], tensor_type(shape, dtype),
                    {"broadcast_dimensions": i64_array(range(last))})
    hits = tensor_type(shape, np.bool_)

    def compare(u, v, how):
        return b.op1("stablehlo.compare", [u, v], hits,
                     {"comparison_direction": f"#stablehlo<comparison_direction {how}>",
                      "compare_type": "#stablehlo<comparison_type FLOAT>"})

    hit = b.op1("stablehlo.or", [compare(x, extreme, "EQ"), compare(x, x, "NE")], hits)
    indices = tensor_type(shape, index_dtype)
    iota = b.op1("stablehlo.iota", [], indices, {"iota_dimension": f"{last} : i64"})
    past_end = b.op1("stablehlo.broadcast_in_dim",
                     [b.constant(np.asarray(shape[-1], index_dtype))], indices,
                     {"broadcast_dimensions": "array<i64>"})
    candidates = b.op1("stablehlo.select", [hit, iota, past_end], indices)
    return b.op1("stablehlo.reduce", [candidates, b.constant(min_identity(index_dtype))],
                 aval_type(ctx.avals_out[0]), {"dimensions": i64_array([last])},
                 regions=[scalar_region(b, index_dtype, "min")])


def _argminmax_lower(direction, identity):
    """A variadic reduce over (value, index): the better value wins; NaN beats numbers;
    equal values (or two NaNs) keep the lower index. Commutative, so any order XLA picks
    gives the first occurrence."""

    def lower(ctx, x, *, axes, index_dtype):
        aval = ctx.avals_in[0]
        dtype = aval.dtype
        b = ctx.builder
        if _argminmax_in_two_passes(ctx, aval, axes):
            return _argminmax_two_passes(ctx, x, direction, identity, index_dtype)
        iota = b.op1("stablehlo.iota", [], tensor_type(aval.shape, index_dtype),
                     {"iota_dimension": f"{axes[0]} : i64"})
        val_t, idx_t = tensor_type((), dtype), tensor_type((), index_dtype)
        bool_t = tensor_type((), np.bool_)

        def body(fb, args):
            a, ai, c, ci = args
            better = _compare(fb, a, c, direction, dtype)
            same = _compare(fb, a, c, "EQ", dtype)
            if dtypes.is_float(dtype):
                a_nan = _compare(fb, a, a, "NE", dtype)
                c_num = _compare(fb, c, c, "EQ", dtype)
                c_nan = _compare(fb, c, c, "NE", dtype)
                nan_wins = fb.op1("stablehlo.and", [a_nan, c_num], bool_t)
                better = fb.op1("stablehlo.or", [better, nan_wins], bool_t)
                both_nan = fb.op1("stablehlo.and", [a_nan, c_nan], bool_t)
                same = fb.op1("stablehlo.or", [same, both_nan], bool_t)
            first = _compare(fb, ai, ci, "LT", index_dtype)
            tie = fb.op1("stablehlo.and", [same, first], bool_t)
            pick_a = fb.op1("stablehlo.or", [better, tie], bool_t)
            return [fb.op1("stablehlo.select", [pick_a, a, c], val_t),
                    fb.op1("stablehlo.select", [pick_a, ai, ci], idx_t)]

        region = b.region([val_t, idx_t, val_t, idx_t], body)
        init_val = b.constant(identity(dtype))
        init_idx = b.constant(np.zeros((), index_dtype))
        out_aval = ctx.avals_out[0]
        results = b.op("stablehlo.reduce", [x, iota, init_val, init_idx],
                       [tensor_type(out_aval.shape, dtype), aval_type(out_aval)],
                       {"dimensions": i64_array(axes)}, regions=[region])
        return results[1]

    return lower


argmax_p = Primitive(
    "argmax", abstract_eval=lambda x, *, axes, index_dtype: _argminmax_abstract_eval(
        "argmax", "gt", x, axes, index_dtype),
    impl=_argminmax_impl(np.argmax), lower=_argminmax_lower("GT", max_identity),
    jvp=NOT_DIFFERENTIABLE, transpose=NOT_DIFFERENTIABLE,
    batch=batch_at_front("argmax", shifted_axes("axes")), sharding_rule=sharding_rules.reduction)
argmin_p = Primitive(
    "argmin", abstract_eval=lambda x, *, axes, index_dtype: _argminmax_abstract_eval(
        "argmin", "lt", x, axes, index_dtype),
    impl=_argminmax_impl(np.argmin), lower=_argminmax_lower("LT", min_identity),
    jvp=NOT_DIFFERENTIABLE, transpose=NOT_DIFFERENTIABLE,
    batch=batch_at_front("argmin", shifted_axes("axes")), sharding_rule=sharding_rules.reduction)


def _index_dtype(index_dtype, name):
    return dtypes.check_and_canonicalize_user_dtype(index_dtype, name)


def argmax(operand, axis: int, index_dtype):
    """Index of the maximum along ``axis`` (the first one on ties; NaN counts as the
    maximum, so the first NaN wins).

    Examples
    --------
    >>> import numpy as np
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.argmax(jnp.array([1., 3., 3.]), 0, np.int32)
    Array(1, dtype=int32)
    """
    return argmax_p.bind(as_operand(operand), axes=(int(axis),),
                         index_dtype=_index_dtype(index_dtype, "argmax"))


def argmin(operand, axis: int, index_dtype):
    """Index of the minimum along ``axis`` (the first one on ties; NaN counts as the
    minimum, so the first NaN wins)."""
    return argmin_p.bind(as_operand(operand), axes=(int(axis),),
                         index_dtype=_index_dtype(index_dtype, "argmin"))


__all__ = [
    "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
    "reduce_xor", "argmax", "argmin",
    "reduce_sum_p", "reduce_prod_p", "reduce_max_p", "reduce_min_p", "reduce_and_p",
    "reduce_or_p", "reduce_xor_p", "argmax_p", "argmin_p",
]
