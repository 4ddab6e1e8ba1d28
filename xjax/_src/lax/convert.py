"""Dtype conversions: ``convert_element_type``, ``bitcast_convert_type``, ``reduce_precision``.

``convert_element_type`` follows XLA: float-to-integer conversion truncates toward zero and
saturates at the integer's range, NaN becoming 0; complex-to-real conversion keeps the real
part; conversion to bool is ``x != 0`` (of the real part, for complex ``x``).
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import Zero, get_aval, is_differentiable, tangent_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax import sharding_rules
from xjax._src.core.trace import Tracer
from xjax._src.lax.ad_rules import transpose_by_parts
from xjax._src.lax.batch_rules import move_axis
from xjax._src.lax.naryop import (FLOATING, Emitter, batch_unary, check_accepted, compare_type,
                                  real_dtype)
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.stablehlo import aval_type

_BOOL = np.dtype(np.bool_)

# -- convert_element_type --


_checked_dtypes: dict = {}


def _check_new_dtype(new_dtype, where: str) -> np.dtype:
    """``new_dtype`` as a canonical valid dtype (remembered: wrappers call this per call)."""
    try:
        return _checked_dtypes[new_dtype, dtypes.canonicalize_dtype(np.float64)]
    except (KeyError, TypeError):
        pass
    try:
        dtype = np.dtype(new_dtype)
    except TypeError:
        dtype = None
    if dtype is None or not dtypes.is_valid_dtype(dtype):
        raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype "
                        f"{new_dtype} in {where}")
    dtype = dtypes.canonicalize_dtype(dtype)
    try:  # keyed by the x64 mode too (the canonical float64)
        _checked_dtypes[new_dtype, dtypes.canonicalize_dtype(np.float64)] = dtype
    except TypeError:
        pass
    return dtype


_convert_avals: dict = {}


def _convert_abstract_eval(operand, *, new_dtype, weak_type, sharding):
    key = (operand, new_dtype, weak_type)
    out = _convert_avals.get(key)
    if out is None:
        out = _convert_avals[key] = ShapedArray(operand.shape, new_dtype, weak_type)
    return out


def _float_to_int(x, dtype):
    """Truncate toward zero, saturate at ``dtype``'s range, NaN -> 0 (XLA's conversion)."""
    info = dtypes.iinfo(dtype)
    wide = np.asarray(x, np.float64)  # exact for every float type of 64 bits or fewer
    wide = np.where(wide == wide, wide, 0.0)
    if info.bits <= 32:
        np.maximum(wide, float(info.min), out=wide)
        np.minimum(wide, float(info.max), out=wide)
        return wide.astype(dtype)
    # info.max is not a float64: clip below it and saturate separately
    top = float(info.max) + 1.0  # 2**63 or 2**64, exact
    below_top = np.nextafter(top, 0.0)
    clipped = np.clip(wide, float(info.min), below_top).astype(dtype)
    return np.where(wide >= top, np.asarray(info.max, dtype), clipped)


def _convert_impl(x, *, new_dtype, weak_type, sharding):
    if x.dtype == new_dtype:
        return x
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        x = np.real(x)
    if new_dtype == _BOOL:
        return np.not_equal(x, np.zeros((), x.dtype))
    if new_dtype.kind in "iu" and dtypes.is_float(x.dtype):
        return _float_to_int(x, new_dtype)
    return x.astype(new_dtype)


def _convert_lower(ctx, x, *, new_dtype, weak_type, sharding):
    (aval,) = ctx.avals_in
    out = ctx.avals_out[0]
    if aval.dtype == new_dtype:
        return x
    em = Emitter(ctx, aval.shape)
    dtype = aval.dtype
    if dtype.kind == "c" and new_dtype.kind != "c":
        dtype = real_dtype(dtype)
        x = em.op("stablehlo.real", [x], dtype)
    if new_dtype == _BOOL:
        return em.compare(x, em.const(0, dtype), "NE", compare_type(dtype))
    return ctx.builder.op1("stablehlo.convert", [x], aval_type(out))


def _convert_jvp(primals, tangents, *, new_dtype, weak_type, sharding):
    """The tangent converted alike between inexact dtypes (complex to real keeps the real
    part); a zero (float0) tangent when the result is an integer or boolean."""
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type,
                                      sharding=sharding)
    out_aval = tangent_aval(get_aval(ans))
    if type(t) is Zero or not is_differentiable(out_aval):
        return ans, Zero(out_aval)
    return ans, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type,
                                            sharding=sharding)


def _convert_transpose(ct, operand, *, new_dtype, weak_type, sharding):
    aval = operand.aval
    if not is_differentiable(aval):
        return Zero(tangent_aval(aval))
    return convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                       sharding=None)


convert_element_type_p = Primitive(
    "convert_element_type", abstract_eval=_convert_abstract_eval, impl=_convert_impl,
    lower=_convert_lower, jvp=_convert_jvp, transpose=transpose_by_parts(_convert_transpose),
    batch=batch_unary("convert_element_type"), hidden_params=("sharding",),
    sharding_rule=sharding_rules.same_as_operand)


def _convert_element_type(operand, new_dtype=None, weak_type: bool = False, sharding=None):
    """``operand`` converted to ``new_dtype`` (canonicalized) with the given weak type; the
    operand itself when nothing changes. ``xjax.numpy`` uses it to make weak results."""
    x = operand if type(operand) is Array or isinstance(operand, Tracer) else \
        to_operand(operand)
    new_dtype = x.dtype if new_dtype is None else \
        _check_new_dtype(new_dtype, "convert_element_type")
    weak_type = bool(weak_type)
    if x.dtype == new_dtype and x.aval.weak_type == weak_type and sharding is None:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type,
                                       sharding=sharding)


def convert_element_type(operand, new_dtype):
    """Elementwise conversion to ``new_dtype`` (canonicalized: float64 becomes float32 while
    64-bit types are disabled). The result is not weakly typed.

    Float-to-integer conversion truncates toward zero and saturates (NaN gives 0); complex
    to real keeps the real part; conversion to bool is ``x != 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.convert_element_type(np.array([1e10, -2.7, np.nan], np.float32), np.int32)
    Array([2147483647,         -2,          0], dtype=int32)
    """
    return _convert_element_type(operand, new_dtype, weak_type=False)


# -- bitcast_convert_type --


def _bitcast_abstract_eval(operand, *, new_dtype):
    old = operand.dtype
    if old != new_dtype and (old == _BOOL or new_dtype == _BOOL or old.kind == "c"
                             or new_dtype.kind == "c"):
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values "
                        "unless the operand and destination types match. Got operand "
                        f"dtype={old}, new_dtype={new_dtype!r}. Consider using the arr.view() "
                        "method instead.")
    old_bits, new_bits = dtypes.itemsize_bits(old), dtypes.itemsize_bits(new_dtype)
    shape = operand.shape
    if old_bits > new_bits:
        shape = shape + (old_bits // new_bits,)
    elif old_bits < new_bits:
        last = shape[-1] if shape else 1
        if not shape or last * old_bits != new_bits:
            raise ValueError(f"Attempting to convert array of shape {shape} from {old} of size "
                             f"{old_bits} bits to {new_dtype} of size {new_bits}, bits but "
                             f"{last} * {old_bits} != {new_bits}")
        shape = shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_impl(x, *, new_dtype):
    old_size, new_size = x.dtype.itemsize, new_dtype.itemsize
    x = np.ascontiguousarray(x).reshape(x.shape)  # viewing needs contiguous data
    if old_size == new_size:
        return x.view(new_dtype)
    if old_size > new_size:
        return x.reshape(x.shape + (1,)).view(new_dtype)
    return x.view(new_dtype).reshape(x.shape[:-1])


def _bitcast_lower(ctx, x, *, new_dtype):
    return ctx.builder.op1("stablehlo.bitcast_convert", [x], aval_type(ctx.avals_out[0]))


def _bitcast_jvp(primals, tangents, *, new_dtype):
    # reinterpreted bits have no derivative (zero also between float types, as in JAX)
    ans = bitcast_convert_type_p.bind(*primals, new_dtype=new_dtype)
    return ans, Zero(tangent_aval(get_aval(ans)))


def _bitcast_batch(args, dims, *, new_dtype):
    """A wider ``new_dtype`` consumes the trailing dimension (a narrower one adds one): the
    batch axis must not be that dimension."""
    (x,), (dim,) = args, dims
    ndim = len(get_aval(x).shape)
    widens = dtypes.itemsize_bits(get_aval(x).dtype) < dtypes.itemsize_bits(new_dtype)
    if widens and dim == ndim - 1:
        x, dim = move_axis(x, dim, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), dim


bitcast_convert_type_p = Primitive(
    "bitcast_convert_type", abstract_eval=_bitcast_abstract_eval, impl=_bitcast_impl,
    lower=_bitcast_lower, jvp=_bitcast_jvp, transpose=NONLINEAR, batch=_bitcast_batch)


def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits of ``operand`` as ``new_dtype``.

    A narrower ``new_dtype`` adds a trailing dimension (``float32[n] -> uint8[n, 4]``, in
    little-endian byte order); a wider one consumes the trailing dimension, whose size must
    be the width ratio.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.bitcast_convert_type(np.float32(1.0), np.int32)
    Array(1065353216, dtype=int32)
    """
    new_dtype = _check_new_dtype(new_dtype, "bitcast_convert_type")
    return bitcast_convert_type_p.bind(to_operand(operand), new_dtype=new_dtype)


# -- reduce_precision --


def _reduce_precision_abstract_eval(operand, *, exponent_bits, mantissa_bits):
    check_accepted("reduce_precision", (operand,), (FLOATING,))
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, "
                         f"got {exponent_bits} and {mantissa_bits}")
    return operand


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    """Round to ``mantissa_bits`` (to nearest even), then flush values out of the exponent
    range to signed infinity or zero; NaN is kept as is (XLA's ReducePrecision)."""
    dtype = x.dtype
    nbits = dtype.itemsize * 8
    unsigned = np.dtype(f"u{dtype.itemsize}")
    src_mantissa = dtypes.finfo(dtype).nmant
    src_exponent = nbits - 1 - src_mantissa
    bits = np.asarray(x).view(unsigned)

    def const(value):
        return np.asarray(value & ((1 << nbits) - 1), unsigned)

    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = 1 << dropped
        last_bit = (bits & const(last_kept)) >> const(dropped)
        bias = last_bit + const((last_kept >> 1) - 1)
        bits = (bits + bias) & const(~(last_kept - 1))
    if exponent_bits < src_exponent:
        exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
        src_bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & const(exponent_mask)
        overflow = exponent > const((src_bias + reduced_bias) << src_mantissa)
        underflow = exponent <= const((src_bias - reduced_bias) << src_mantissa)
        signed_zero = bits & const(1 << (nbits - 1))
        signed_inf = signed_zero | const(exponent_mask)
        bits = np.where(overflow, signed_inf, np.where(underflow, signed_zero, bits))
    out = np.asarray(bits, unsigned).view(dtype)
    return np.where(np.isnan(x), x, out)


def _reduce_precision_lower(ctx, x, *, exponent_bits, mantissa_bits):
    attrs = {"exponent_bits": f"{exponent_bits} : i32", "mantissa_bits": f"{mantissa_bits} : i32"}
    return ctx.builder.op1("stablehlo.reduce_precision", [x], aval_type(ctx.avals_out[0]), attrs)


def _reduce_precision_jvp(primals, tangents, **params):
    # treated as linear, as JAX does: the tangent is rounded alike
    (x,), (t,) = primals, tangents
    ans = reduce_precision_p.bind(x, **params)
    return ans, t if type(t) is Zero else reduce_precision_p.bind(t, **params)


reduce_precision_p = Primitive(
    "reduce_precision", abstract_eval=_reduce_precision_abstract_eval,
    impl=_reduce_precision_impl, lower=_reduce_precision_lower, jvp=_reduce_precision_jvp,
    transpose=transpose_by_parts(lambda ct, x, **params: reduce_precision_p.bind(ct, **params)),
    batch=batch_unary("reduce_precision"), sharding_rule=sharding_rules.same_as_operand)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Round ``operand`` to a float format with the given exponent and mantissa bits, in its
    own dtype (e.g. ``exponent_bits=5, mantissa_bits=10`` emulates float16).

    Examples
    --------
    >>> from xjax import lax
    >>> lax.reduce_precision(1.0001, exponent_bits=5, mantissa_bits=10)
    Array(1., dtype=float32, weak_type=True)
    """
    return reduce_precision_p.bind(to_operand(operand),
                                   exponent_bits=operator.index(exponent_bits),
                                   mantissa_bits=operator.index(mantissa_bits))


__all__ = ["convert_element_type", "bitcast_convert_type", "reduce_precision",
           "convert_element_type_p", "bitcast_convert_type_p", "reduce_precision_p"]
