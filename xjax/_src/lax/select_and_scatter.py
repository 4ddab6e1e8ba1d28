"""The derivatives of max/min pooling, as JAX writes them: ``select_and_gather_add`` (the
jvp of ``reduce_window_max``/``reduce_window_min``: the tangent at the element each window
selects) and ``select_and_scatter_add`` (its transpose: each window's cotangent added at
the element it selects). ``select_prim`` is ``lax.ge_p`` (max) or ``lax.le_p`` (min).

Ties and NaNs follow XLA, because the lowerings are XLA's own operations:

- ``select_and_gather_add`` lowers to a ``stablehlo.reduce_window`` over (value, tangent)
  pairs whose reducer keeps the accumulated pair while ``select(acc, x)`` holds, starting
  from ``(identity, 0)`` and skipping padding: the first selected element of each window in
  row-major order wins. https://openxla.org/stablehlo/spec#reduce_window
- ``select_and_scatter_add`` lowers to ``stablehlo.select_and_scatter`` on the operand
  padded with the selection's identity (as JAX lowers it on CPU and GPU); each window
  starts from its first element and switches to a later one where ``select`` fails.
  https://openxla.org/stablehlo/spec#select_and_scatter
"""

from __future__ import annotations

import itertools

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import eval_jaxpr
from xjax._src.core.primitive import Absent, Primitive
from xjax._src.lax.ad_helpers import linear_jvp_of
from xjax._src.lax.ad_rules import get_aval, transpose_by_parts
from xjax._src.lax.batch_rules import batch_size, bdim_at_front, not_mapped
from xjax._src.lax.bitwise import bitwise_or
from xjax._src.lax.compare import eq, ge_p, le_p, select_n
from xjax._src.lax.concat_pad import pad
from xjax._src.lax.elementwise import add
from xjax._src.lax.naryop import compare_type, scalar_region
from xjax._src.lax.reduce import max_identity, min_identity
from xjax._src.lax.shape import as_operand, full, scalar_constant
from xjax._src.lax.slicing import slice as lax_slice
from xjax._src.lax.windowed import (check_window_params, padded_operand,
                                    reduce_window_shape_tuple, window_attributes, window_taps)
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type

_GATHER = "select_and_gather_add"
_SCATTER = "select_and_scatter_add"


def _select_info(name, select_prim):
    """(identity, NumPy select, comparison direction) of ``select_prim``."""
    if select_prim is ge_p:
        return max_identity, np.greater_equal, "GE"
    if select_prim is le_p:
        return min_identity, np.less_equal, "LE"
    raise TypeError(f"{name} select_prim must be lax.ge_p or lax.le_p, got {select_prim!r}")


def _compare(fb, x, y, direction, dtype) -> str:
    return fb.op1("stablehlo.compare", [x, y], tensor_type((), np.bool_),
                  {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                   "compare_type": f"#stablehlo<comparison_type {compare_type(dtype)}>"})


def _splat(b, value, shape, dtype) -> str:
    """A constant of ``shape`` filled with ``value`` (a scalar broadcast)."""
    scalar = b.constant(np.asarray(value, dtype))
    if shape == ():
        return scalar
    return b.op1("stablehlo.broadcast_in_dim", [scalar], tensor_type(shape, dtype),
                 {"broadcast_dimensions": i64_array(())})


# -- select_and_gather_add --

def _gather_abstract_eval(tangents, operand, *, select_prim, window_dimensions,
                          window_strides, padding, base_dilation, window_dilation):
    _select_info(_GATHER, select_prim)
    if tangents.shape != operand.shape:
        raise TypeError(f"{_GATHER} tangents and operand shapes must match, got "
                        f"{tangents.shape} and {operand.shape}.")
    if not dtypes.is_float(operand.dtype) or tangents.dtype != operand.dtype:
        raise TypeError(f"{_GATHER} needs floating tangents and operand of one dtype, got "
                        f"{tangents.dtype.name} and {operand.dtype.name}")
    check_window_params(_GATHER, operand.shape, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation)
    shape = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                      padding, base_dilation, window_dilation)
    return ShapedArray(shape, tangents.dtype, tangents.weak_type)


def _gather_impl(tangents, operand, *, select_prim, window_dimensions, window_strides,
                 padding, base_dilation, window_dilation):
    """A fold over the window taps in row-major order, skipping padding and dilation holes,
    as XLA's reduce_window runs its reducer: keep the accumulated pair where select holds."""
    identity, select, _ = _select_info(_GATHER, select_prim)
    t, x = np.asarray(tangents), np.asarray(operand)
    out_shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides,
                                          padding, base_dilation, window_dilation)

    def taps(a, fill):
        padded = padded_operand(a, fill, padding, base_dilation)
        return window_taps(padded, out_shape, window_dimensions, window_strides,
                           window_dilation)

    init = identity(x.dtype)
    acc_key = np.full(out_shape, init, x.dtype)
    acc_value = np.zeros(out_shape, t.dtype)
    with np.errstate(invalid="ignore"):
        for valid, key, value in zip(taps(np.ones(x.shape, np.bool_), False), taps(x, init),
                                     taps(t, np.zeros((), t.dtype)), strict=True):
            keep = select(acc_key, key) | ~valid
            acc_key = np.where(keep, acc_key, key)
            acc_value = np.where(keep, acc_value, value)
    return acc_value.astype(t.dtype, copy=False)


def _gather_lower(ctx, tangents, operand, *, select_prim, window_dimensions, window_strides,
                  padding, base_dilation, window_dilation):
    """A reduce_window over (value, tangent) pairs. Up to 32-bit floats, each pair is packed
    into one unsigned word of twice the width (value in the high half), as JAX lowers it on
    GPUs, where XLA has no variadic reduce_window; both halves round-trip bit-exactly.
    64-bit floats use a variadic reduce_window."""
    b = ctx.builder
    identity, _, direction = _select_info(_GATHER, select_prim)
    aval, out_aval = ctx.avals_in[1], ctx.avals_out[0]
    dtype = aval.dtype
    nbits = np.dtype(dtype).itemsize * 8
    attrs = window_attributes(window_dimensions, window_strides, padding, base_dilation,
                              window_dilation)
    scalar = tensor_type((), dtype)
    if nbits > 32:
        def body(fb, args):
            key_acc, value_acc, key, value = args
            which = _compare(fb, key_acc, key, direction, dtype)
            return [fb.op1("stablehlo.select", [which, key_acc, key], scalar),
                    fb.op1("stablehlo.select", [which, value_acc, value], scalar)]
        inits = [b.constant(identity(dtype)), b.constant(np.zeros((), dtype))]
        region = b.region([scalar] * 4, body)
        out_type = aval_type(out_aval)
        return b.op("stablehlo.reduce_window", [operand, tangents, *inits],
                    [out_type, out_type], attrs, regions=[region])[1]
    word = np.dtype(f"uint{nbits}")
    double = np.dtype(f"uint{2 * nbits}")

    def pack(fb, key, value, shape):
        halves = []
        for half in (key, value):
            bits = fb.op1("stablehlo.bitcast_convert", [half], tensor_type(shape, word))
            halves.append(fb.op1("stablehlo.convert", [bits], tensor_type(shape, double)))
        high = fb.op1("stablehlo.shift_left", [halves[0], _splat(fb, nbits, shape, double)],
                      tensor_type(shape, double))
        return fb.op1("stablehlo.or", [high, halves[1]], tensor_type(shape, double))

    def key_of(fb, packed):
        high = fb.op1("stablehlo.shift_right_logical",
                      [packed, fb.constant(np.asarray(nbits, double))], tensor_type((), double))
        bits = fb.op1("stablehlo.convert", [high], tensor_type((), word))
        return fb.op1("stablehlo.bitcast_convert", [bits], scalar)

    def body(fb, args):
        acc, x = args
        which = _compare(fb, key_of(fb, acc), key_of(fb, x), direction, dtype)
        return [fb.op1("stablehlo.select", [which, acc, x], tensor_type((), double))]

    packed = pack(b, operand, tangents, aval.shape)
    init = pack(b, b.constant(identity(dtype)), b.constant(np.zeros((), dtype)), ())
    region = b.region([tensor_type((), double)] * 2, body)
    reduced = b.op1("stablehlo.reduce_window", [packed, init],
                    tensor_type(out_aval.shape, double), attrs, regions=[region])
    low = b.op1("stablehlo.convert", [reduced], tensor_type(out_aval.shape, word))
    return b.op1("stablehlo.bitcast_convert", [low], aval_type(out_aval))


def _gather_transpose(ct, tangents, operand, *, select_prim, window_dimensions,
                      window_strides, padding, base_dilation, window_dilation):
    """select_and_scatter_add of the cotangent; base dilation becomes identity-filled holes
    in the operand, sliced away after."""
    identity, _, _ = _select_info(_GATHER, select_prim)
    if any(d != 1 for d in window_dilation):  # JAX raises; XLA's select_and_scatter has none
        return _dilated_gather_transpose(ct, operand, identity, select_prim, window_dimensions,
                                         window_strides, padding, base_dilation,
                                         window_dilation)
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        dtype = get_aval(operand).dtype
        operand = pad(operand, scalar_constant(identity(dtype), dtype),
                      tuple((0, 0, d - 1) for d in base_dilation))
    result = select_and_scatter_add_p.bind(
        ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding)
    if dilated:
        shape = get_aval(result).shape
        result = lax_slice(result, (0,) * len(shape), shape, base_dilation)
    return result


def _dilated_gather_transpose(ct, operand, identity, select_prim, window_dimensions,
                              window_strides, padding, base_dilation, window_dilation):
    """The transpose with window dilation, by taps: the fold of ``_gather_impl`` written
    with lax ops picks each window's tap, whose cotangent is padded back into place."""
    x_aval = get_aval(operand)
    dtype, ct_aval = x_aval.dtype, get_aval(ct)
    out_shape = ct_aval.shape
    config = tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation, strict=True))
    padded = pad(operand, scalar_constant(identity(dtype), dtype), config)
    valid = padded_operand(np.ones(x_aval.shape, np.bool_), False, padding, base_dilation)
    padded_shape = valid.shape
    spans = []
    for offsets in itertools.product(*(range(w) for w in window_dimensions)):
        starts = [o * wd for o, wd in zip(offsets, window_dilation, strict=True)]
        limits = [s0 + (n - 1) * st + 1 if n else s0 for s0, n, st in
                  zip(starts, out_shape, window_strides, strict=True)]
        spans.append((starts, limits))
    acc = full(out_shape, identity(dtype), dtype)
    choice = full(out_shape, -1, np.int32)
    for k, (starts, limits) in enumerate(spans):
        tap = lax_slice(padded, starts, limits, window_strides)
        index = tuple(slice(a, b, st) for a, b, st in
                      zip(starts, limits, window_strides, strict=True))
        keep = bitwise_or(select_prim.bind(acc, tap), as_operand(~valid[index]))
        acc = select_n(keep, tap, acc)
        choice = select_n(keep, full(out_shape, k, np.int32), choice)
    zero = scalar_constant(0, ct_aval.dtype)
    total = full(padded_shape, 0, ct_aval.dtype)
    for k, (starts, limits) in enumerate(spans):
        mine = select_n(eq(choice, full(out_shape, k, np.int32)),
                           full(out_shape, 0, ct_aval.dtype), ct)
        placed = pad(mine, zero, tuple((a, n - b, st - 1) for a, b, n, st in
                                       zip(starts, limits, padded_shape, window_strides,
                                           strict=True)))
        total = add(total, placed)
    unpadded = pad(total, zero, tuple((-lo, -hi, 0) for lo, hi in padding))
    return lax_slice(unpadded, (0,) * len(padded_shape), get_aval(unpadded).shape,
                     base_dilation)


def _gather_batch(args, dims, *, select_prim, window_dimensions, window_strides, padding,
                  base_dilation, window_dilation):
    size = batch_size(args, dims)
    t, x = (bdim_at_front(a, d, size) for a, d in zip(args, dims, strict=True))
    out = select_and_gather_add_p.bind(
        t, x, select_prim=select_prim, window_dimensions=(1, *window_dimensions),
        window_strides=(1, *window_strides), padding=((0, 0), *padding),
        base_dilation=(1, *base_dilation), window_dilation=(1, *window_dilation))
    return out, 0


select_and_gather_add_p = Primitive(
    _GATHER, abstract_eval=_gather_abstract_eval, impl=_gather_impl, lower=_gather_lower,
    jvp=linear_jvp_of(_GATHER, linear=(0,)),
    transpose=transpose_by_parts(_gather_transpose, None), batch=_gather_batch)


# -- select_and_scatter_add --

def _check_source(name, source, operand, window_dimensions, window_strides, padding):
    """Valid window params for ``operand``, and one ``source`` element per window."""
    ones = (1,) * len(operand.shape)
    check_window_params(name, operand.shape, window_dimensions, window_strides, padding,
                        ones, ones)
    expected = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                         padding)
    if tuple(source.shape) != expected:
        raise TypeError(f"{name} source must have one element per window, shape "
                        f"{expected}, got {source.shape}")


def _scatter_abstract_eval(source, operand, *, select_prim, window_dimensions, window_strides,
                           padding):
    _select_info(_SCATTER, select_prim)
    _check_source(_SCATTER, source, operand, window_dimensions, window_strides, padding)
    return ShapedArray(operand.shape, source.dtype, source.weak_type)


def _scatter_impl(source, operand, *, select_prim, window_dimensions, window_strides,
                  padding):
    """Per window (the operand padded with the identity): start at the first tap, switch to
    a later one where select fails; then add each window's source at its choice, windows in
    row-major order (taps in reverse), as XLA accumulates."""
    identity, select, _ = _select_info(_SCATTER, select_prim)
    s, x = np.asarray(source), np.asarray(operand)
    ones = (1,) * x.ndim
    padded = padded_operand(x, identity(x.dtype), padding, ones)
    taps = list(window_taps(padded, s.shape, window_dimensions, window_strides, ones))
    best, choice = taps[0], np.zeros(s.shape, np.int64)
    with np.errstate(invalid="ignore"):
        for k, tap in enumerate(taps[1:], 1):
            switch = ~select(best, tap)
            best = np.where(switch, tap, best)
            choice = np.where(switch, k, choice)
    acc = np.zeros(padded.shape, s.dtype)
    zero = np.zeros((), s.dtype)
    views = list(window_taps(acc, s.shape, window_dimensions, window_strides, ones))
    for k in reversed(range(len(views))):
        views[k] += np.where(choice == k, s, zero)
    return padded_operand(acc, zero, [(-lo, -hi) for lo, hi in padding], ones)


def _scatter_lower(ctx, source, operand, *, select_prim, window_dimensions, window_strides,
                   padding):
    """The operand padded with the identity, ``stablehlo.select_and_scatter`` without
    padding, and the padding cut off (a pad with negated edges)."""
    b = ctx.builder
    identity, _, direction = _select_info(_SCATTER, select_prim)
    source_aval, operand_aval = ctx.avals_in
    dtype, out_dtype = operand_aval.dtype, source_aval.dtype
    lows = [lo for lo, _ in padding]
    highs = [hi for _, hi in padding]
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(operand_aval.shape, padding, strict=True))
    zeros = [0] * len(shape)
    padded = operand
    if any(lows) or any(highs):
        padded = b.op1("stablehlo.pad", [operand, b.constant(identity(dtype))],
                       tensor_type(shape, dtype),
                       {"edge_padding_low": i64_array(lows), "edge_padding_high": i64_array(highs),
                        "interior_padding": i64_array(zeros)})
    scalar = tensor_type((), dtype)
    select = b.region([scalar, scalar],
                      lambda fb, args: [_compare(fb, *args, direction, dtype)])
    scatter = scalar_region(b, out_dtype, "or" if out_dtype == np.bool_ else "add")
    zero = b.constant(np.zeros((), out_dtype))
    result = b.op1("stablehlo.select_and_scatter", [padded, source, zero],
                   tensor_type(shape, out_dtype),
                   {"window_dimensions": i64_array(window_dimensions),
                    "window_strides": i64_array(window_strides)},
                   regions=[select, scatter])
    if not (any(lows) or any(highs)):
        return result
    return b.op1("stablehlo.pad", [result, zero], aval_type(ctx.avals_out[0]),
                 {"edge_padding_low": i64_array([-lo for lo in lows]),
                  "edge_padding_high": i64_array([-hi for hi in highs]),
                  "interior_padding": i64_array(zeros)})


def _scatter_transpose(ct, source, operand, *, select_prim, window_dimensions,
                       window_strides, padding):
    ones = (1,) * len(window_dimensions)
    return select_and_gather_add_p.bind(
        ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=ones,
        window_dilation=ones)


def _scatter_batch(args, dims, *, select_prim, window_dimensions, window_strides, padding):
    size = batch_size(args, dims)
    s, x = (bdim_at_front(a, d, size) for a, d in zip(args, dims, strict=True))
    out = select_and_scatter_add_p.bind(
        s, x, select_prim=select_prim, window_dimensions=(1, *window_dimensions),
        window_strides=(1, *window_strides), padding=((0, 0), *padding))
    return out, 0


select_and_scatter_add_p = Primitive(
    _SCATTER, abstract_eval=_scatter_abstract_eval, impl=_scatter_impl, lower=_scatter_lower,
    jvp=linear_jvp_of(_SCATTER, linear=(0,)),
    transpose=transpose_by_parts(_scatter_transpose, None), batch=_scatter_batch)


# -- select_and_scatter: the general form, with traced select and scatter computations --

_GENERAL = "select_and_scatter"


def _general_abstract_eval(operand, source, init_value, *, select_jaxpr, select_consts,
                           scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                           padding):
    _check_source(_GENERAL, source, operand, window_dimensions, window_strides, padding)
    if init_value.shape != () or init_value.dtype != source.dtype:
        raise TypeError(f"{_GENERAL} init_value must be a scalar of the source's dtype "
                        f"{source.dtype.name}, got {init_value.dtype.name}{list(init_value.shape)}")
    return ShapedArray(operand.shape, source.dtype, source.weak_type)


def _no_padding(padding):
    # XLA's CPU and GPU select_and_scatter with padding have crashed (JAX pads the operand
    # itself for select_and_scatter_add); the general form has no identity to pad with
    if any(lo or hi for lo, hi in padding):
        raise NotImplementedError(f"{_GENERAL} with padding {tuple(padding)} is not "
                                  "supported: pad the operand explicitly instead")


def _call(jaxpr, *args):
    return np.asarray(eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)[0])


def _general_impl(operand, source, init_value, *, select_jaxpr, select_consts,
                  scatter_jaxpr, scatter_consts, window_dimensions, window_strides, padding):
    """Per window in row-major order: start at its first element, move to a later one
    where ``select(current, candidate)`` is false, then ``scatter`` the window's source
    into the output at the selected element (initialised with ``init_value``)."""
    _no_padding(padding)
    x, s = np.asarray(operand), np.asarray(source)
    out = np.full(x.shape, np.asarray(init_value), s.dtype)
    offsets = list(np.ndindex(*window_dimensions))
    for window in np.ndindex(*s.shape):
        start = [w * st for w, st in zip(window, window_strides, strict=True)]
        best = tuple(start)
        for offset in offsets[1:]:
            candidate = tuple(a + o for a, o in zip(start, offset, strict=True))
            if not bool(_call(select_jaxpr, x[best], x[candidate])):
                best = candidate
        out[best] = _call(scatter_jaxpr, out[best], s[window])
    return out


def _jaxpr_region(b, jaxpr, dtype):

    def body(fb, args):
        consts = [fb.constant(np.asarray(c)) for c in jaxpr.consts]
        return lower_jaxpr_body(fb, jaxpr.jaxpr, consts, args)

    scalar = tensor_type((), dtype)
    return b.region([scalar, scalar], body)


def _general_lower(ctx, operand, source, init_value, *, select_jaxpr, select_consts,
                   scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                   padding):
    _no_padding(padding)
    b = ctx.builder
    regions = [_jaxpr_region(b, select_jaxpr, ctx.avals_in[0].dtype),
               _jaxpr_region(b, scatter_jaxpr, ctx.avals_in[1].dtype)]
    return b.op1("stablehlo.select_and_scatter", [operand, source, init_value],
                 aval_type(ctx.avals_out[0]),
                 {"window_dimensions": i64_array(window_dimensions),
                  "window_strides": i64_array(window_strides)}, regions=regions)


def _general_batch(args, dims, **params):
    if dims[2] is not not_mapped:
        raise NotImplementedError(f"{_GENERAL} batching is not implemented for a batched "
                                  "init_value")
    size = batch_size(args[:2], dims[:2])
    x, s = (bdim_at_front(a, d, size) for a, d in zip(args[:2], dims[:2], strict=True))
    batched = dict(params, window_dimensions=(1, *params["window_dimensions"]),
                   window_strides=(1, *params["window_strides"]),
                   padding=((0, 0), *params["padding"]))
    return select_and_scatter_p.bind(x, s, args[2], **batched), 0


_NO_DERIVATIVE = Absent("JAX defines no derivative of the general select_and_scatter; "
                        "pooling derivatives use select_and_scatter_add")

select_and_scatter_p = Primitive(
    _GENERAL, abstract_eval=_general_abstract_eval, impl=_general_impl, lower=_general_lower,
    jvp=_NO_DERIVATIVE, transpose=_NO_DERIVATIVE, batch=_general_batch)


__all__ = ["select_and_gather_add_p", "select_and_scatter_add_p", "select_and_scatter_p"]
