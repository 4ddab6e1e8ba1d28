"""Convolution: ``conv_general_dilated`` and its wrappers.

XLA's convolution is a cross-correlation (the kernel is not flipped) with window strides,
padding (possibly negative), lhs dilation (transposed convolution), rhs dilation (atrous),
and feature/batch grouping. Spec: the ``convolution`` op of docs/spec.md in StableHLO.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.out_sharding import check_out_sharding
from xjax._src.lax import sharding_rules
from xjax._src.lax.dot import canonicalize_precision, precision_config_attr
from xjax._src.core.primitive import Primitive
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.lax.ad_rules import Zero, get_aval, jvp_by_parts, transpose_by_parts
from xjax._src.lax.batch_rules import move_axis, not_mapped
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.naryop import NUMERIC, check_dtype
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import reshape, rev
from xjax._src.lowering.stablehlo import aval_type, i64_array


class ConvDimensionNumbers(NamedTuple):
    """Which dimension of each operand is batch, feature and spatial.

    ``lhs_spec = (batch, feature, spatial...)``, ``rhs_spec = (out feature, in feature,
    spatial...)``, ``out_spec = (batch, feature, spatial...)``.
    """

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Normalize ``None``, a ConvDimensionNumbers, or a triple of layout strings such as
    ``("NCHW", "OIHW", "NCHW")`` into ConvDimensionNumbers."""
    rank = len(lhs_shape)
    if dimension_numbers is None:
        identity = tuple(range(rank))
        return ConvDimensionNumbers(identity, identity, identity)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(dimension_numbers) != 3:
        raise TypeError(f"conv_general_dilated dimension_numbers must be None, a "
                        f"ConvDimensionNumbers or a triple, got {dimension_numbers!r}")
    lhs, rhs, out = dimension_numbers
    if all(isinstance(s, str) for s in dimension_numbers):
        for spec in dimension_numbers:
            if len(spec) != rank:
                raise TypeError(f"convolution layout {spec!r} does not have rank {rank}")
        spatial = [c for c in rhs if c not in "OI"]
        return ConvDimensionNumbers(
            (lhs.index("N"), lhs.index("C"), *[lhs.index(c) for c in spatial]),
            (rhs.index("O"), rhs.index("I"), *[rhs.index(c) for c in spatial]),
            (out.index("N"), out.index("C"), *[out.index(c) for c in spatial]))
    return ConvDimensionNumbers(tuple(lhs), tuple(rhs), tuple(out))


def padtype_to_pads(in_shape, window_shape, window_strides, padding: str) -> list:
    """Explicit pads for ``"SAME"``, ``"SAME_LOWER"`` or ``"VALID"`` (any case).

    Returns
    -------
    list of (int, int)
        One ``(low, high)`` pair per dimension, as JAX returns them.

    Raises
    ------
    RuntimeError
        For another padding string (JAX's error).

    Examples
    --------
    >>> from xjax import lax
    >>> lax.padtype_to_pads((3, 4), (2, 2), (1, 1), "SAME")
    [(0, 1), (0, 1)]
    """
    upper = padding.upper()
    if upper == "VALID":
        return [(0, 0)] * len(in_shape)
    if upper not in ("SAME", "SAME_LOWER"):
        raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                           f"'SAME_LOWER', got {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if upper == "SAME_LOWER" else (small, large))
    return pads


def _dilated(size, dilation):
    return 0 if size == 0 else (size - 1) * dilation + 1


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type, out_sharding):
    check_dtype("conv_general_dilated", lhs.dtype, NUMERIC)
    if lhs.dtype != rhs.dtype:
        raise TypeError("lax.conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {lhs.dtype.name}, {rhs.dtype.name}.")
    if lhs.ndim != rhs.ndim:
        raise TypeError(f"conv_general_dilated lhs and rhs must have the same rank, got "
                        f"{lhs.shape} and {rhs.shape}")
    dn = dimension_numbers
    lhs_batch, lhs_feature = lhs.shape[dn.lhs_spec[0]], lhs.shape[dn.lhs_spec[1]]
    rhs_out, rhs_in = rhs.shape[dn.rhs_spec[0]], rhs.shape[dn.rhs_spec[1]]
    if lhs_feature != rhs_in * feature_group_count:
        raise TypeError(f"conv_general_dilated lhs feature dimension size ({lhs_feature}) must "
                        f"equal rhs input feature dimension size ({rhs_in}) times "
                        f"feature_group_count ({feature_group_count})")
    if rhs_out % (feature_group_count * batch_group_count):
        raise TypeError("conv_general_dilated rhs output feature dimension size must be a "
                        "multiple of feature_group_count * batch_group_count")
    if lhs_batch % batch_group_count:
        raise TypeError("conv_general_dilated lhs batch dimension size must be a multiple of "
                        "batch_group_count")
    spatial = []
    for i, (ld, rd) in enumerate(zip(dn.lhs_spec[2:], dn.rhs_spec[2:], strict=True)):
        size = _dilated(lhs.shape[ld], lhs_dilation[i]) + padding[i][0] + padding[i][1]
        window = _dilated(rhs.shape[rd], rhs_dilation[i])
        spatial.append(max(0, (size - window) // window_strides[i] + 1)
                       if size >= window else 0)
    out_shape = [0] * lhs.ndim
    out_shape[dn.out_spec[0]] = lhs_batch // batch_group_count
    out_shape[dn.out_spec[1]] = rhs_out
    for i, d in enumerate(dn.out_spec[2:]):
        out_shape[d] = spatial[i]
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(tuple(out_shape), dtype, False)


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision,
               preferred_element_type, out_sharding):
    dn = dimension_numbers
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    work = np.result_type(lhs.dtype, np.float32) if lhs.dtype.kind in "fc" or \
        lhs.dtype == dtypes.bfloat16 else np.int64
    if dtypes.is_complex(lhs.dtype):
        work = np.complex128
    x = np.transpose(np.asarray(lhs), dn.lhs_spec).astype(work)   # N C spatial...
    w = np.transpose(np.asarray(rhs), dn.rhs_spec).astype(work)   # O I spatial...
    n_spatial = x.ndim - 2
    for i in range(n_spatial):
        x = _dilate_axis(x, 2 + i, lhs_dilation[i])
        w = _dilate_axis(w, 2 + i, rhs_dilation[i])
    x = _pad_axes(x, padding)
    batch, channels = x.shape[:2]
    out_features = w.shape[0]
    bg, fg = batch_group_count, feature_group_count
    window = w.shape[2:]
    out_spatial = [max(0, (x.shape[2 + i] - window[i]) // window_strides[i] + 1)
                   if x.shape[2 + i] >= window[i] else 0 for i in range(n_spatial)]
    out = np.zeros((batch // bg, out_features, *out_spatial), dtype=work)
    if all(s > 0 for s in out_spatial) and x.size and w.size:
        patches = np.lib.stride_tricks.sliding_window_view(x, window, axis=tuple(
            range(2, 2 + n_spatial)))
        patches = patches[(slice(None), slice(None)) + tuple(
            slice(None, None, s) for s in window_strides)]
        patches = patches[(slice(None), slice(None)) + tuple(slice(0, o) for o in out_spatial)]
        groups = bg * fg
        per_out = out_features // groups
        for g in range(groups):
            w_g = w[g * per_out:(g + 1) * per_out]
            if bg > 1:
                nb = batch // bg
                p_g = patches[g * nb:(g + 1) * nb]
            else:
                cg = channels // fg
                p_g = patches[:, g * cg:(g + 1) * cg]
            # sum over input channel and window dims
            spatial_axes = list(range(2 + n_spatial, 2 + 2 * n_spatial))
            res = np.tensordot(p_g, w_g, axes=([1] + spatial_axes,
                                               [1] + list(range(2, 2 + n_spatial))))
            out[:, g * per_out:(g + 1) * per_out] = np.moveaxis(res, -1, 1)
    inverse = np.argsort(dn.out_spec)
    result = np.transpose(out, _out_permutation(dn.out_spec))
    del inverse
    return result.astype(out_dtype)


def _out_permutation(out_spec):
    """Permutation taking (N, C, spatial...) to the layout where dim out_spec[k] holds k."""
    perm = [0] * len(out_spec)
    for k, d in enumerate(out_spec):
        perm[d] = k
    return perm


def _dilate_axis(x, axis, dilation):
    if dilation == 1 or x.shape[axis] == 0:
        return x
    shape = list(x.shape)
    shape[axis] = _dilated(x.shape[axis], dilation)
    out = np.zeros(shape, x.dtype)
    index = [slice(None)] * x.ndim
    index[axis] = slice(None, None, dilation)
    out[tuple(index)] = x
    return out


def _pad_axes(x, padding):
    """Pad spatial axes (2, 3, ...) by (low, high), cropping for negative amounts."""
    widths = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    x = np.pad(x, widths)
    index = [slice(None), slice(None)]
    for i, (lo, hi) in enumerate(padding):
        size = x.shape[2 + i]
        index.append(slice(-lo if lo < 0 else 0, size + hi if hi < 0 else size))
    return x[tuple(index)]


def _conv_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count, precision,
                preferred_element_type, out_sharding):
    dn = dimension_numbers

    def layout(spec, first, second):
        labels = [""] * len(spec)
        labels[spec[0]], labels[spec[1]] = first, second
        for i, d in enumerate(spec[2:]):
            labels[d] = str(i)
        return "[" + ", ".join(labels) + "]"

    conv = (f"#stablehlo.conv<{layout(dn.lhs_spec, 'b', 'f')}x"
            f"{layout(dn.rhs_spec, 'o', 'i')}->{layout(dn.out_spec, 'b', 'f')}>")
    n = len(padding)
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    attrs = {
        "batch_group_count": f"{batch_group_count} : i64",
        "dimension_numbers": conv,
        "feature_group_count": f"{feature_group_count} : i64",
        "lhs_dilation": i64_array(lhs_dilation),
        "padding": f"dense<[{pads}]> : tensor<{n}x2xi64>" if n else "dense<> : tensor<0x2xi64>",
        "rhs_dilation": i64_array(rhs_dilation),
        "window_strides": i64_array(window_strides),
    }
    if type(precision) is tuple:  # a dot algorithm has no convolution form (JAX: DEFAULT)
        attrs["precision_config"] = precision_config_attr(precision)
    return ctx.builder.op1("stablehlo.convolution", [lhs, rhs], aval_type(ctx.avals_out[0]),
                           attrs)


# -- derivatives: bilinear; each transpose is another convolution --

def _conv_jvp_lhs(t, ans, lhs, rhs, **params):
    return conv_general_dilated_p.bind(t, rhs, **params)


def _conv_jvp_rhs(t, ans, lhs, rhs, **params):
    return conv_general_dilated_p.bind(lhs, t, **params)


def _swap_first_two(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _split_axis(x, axis, size):
    """Reshape dimension ``axis`` into ``(size, rest)``."""
    shape = list(x.shape)
    shape[axis:axis + 1] = [size, shape[axis] // size]
    return reshape(x, shape)


def _merge_axis(x, src, dst):
    """Fold dimension ``src`` into dimension ``dst`` (numbered without ``src``) as its major
    part."""
    order = [d for d in range(x.ndim) if d != src]
    order.insert(dst, src)
    shape = [s for d, s in enumerate(x.shape) if d != src]
    shape[dst] *= x.shape[src]
    return reshape(x, shape, order)


def _spatial(shape, spec):
    return [shape[d] for d in spec[2:]]


def _cast(x, dtype):
    if x.dtype == dtype:
        return x
    return convert_element_type(x, dtype)


def _conv_transpose_lhs(ct, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type, out_sharding):
    """A convolution of ``ct`` with the spatially reversed kernel, its in/out features
    swapped: strides become lhs dilation and lhs dilation becomes strides."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_shape, rhs_shape, ct_shape = lhs.aval.shape, get_aval(rhs).shape, get_aval(ct).shape
    kernel, groups = rhs, max(feature_group_count, batch_group_count)
    if groups > 1:  # each group's output features become that group's input features
        kernel = _merge_axis(_split_axis(kernel, rhs_spec[0], groups), rhs_spec[0],
                             rhs_spec[1])
    pads = []
    for size, window, out, stride, (low, _), l_dil, r_dil in zip(
            _spatial(lhs_shape, lhs_spec), _spatial(rhs_shape, rhs_spec),
            _spatial(ct_shape, out_spec), window_strides, padding, lhs_dilation, rhs_dilation,
            strict=True):
        before = _dilated(window, r_dil) - low - 1
        after = _dilated(size, l_dil) + _dilated(window, r_dil) - 1 - _dilated(out, stride) \
            - before
        pads.append((before, after))
    kernel = _cast(rev(kernel, tuple(rhs_spec[2:])), ct.dtype)
    out = conv_general_dilated(
        ct, kernel, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_first_two(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=None if batch_group_count > 1 else getattr(lhs.aval, "_sharding", None))
    out = _cast(out, lhs.aval.dtype)
    if batch_group_count > 1:  # the groups' features go back to the batch
        out = _merge_axis(_split_axis(out, lhs_spec[1], batch_group_count), lhs_spec[1],
                          lhs_spec[0])
    return out


def _conv_transpose_rhs(ct, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type, out_sharding):
    """A convolution of ``lhs`` with ``ct`` as the kernel, batch and features swapped:
    strides become rhs dilation; feature groups become batch groups and back."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_shape, rhs_shape, ct_shape = get_aval(lhs).shape, rhs.aval.shape, get_aval(ct).shape
    if np.prod(ct_shape) == 0:
        return Zero(rhs.aval)
    pads = []
    for size, window, out, stride, (low, _), l_dil, r_dil in zip(
            _spatial(lhs_shape, lhs_spec), _spatial(rhs_shape, rhs_spec),
            _spatial(ct_shape, out_spec), window_strides, padding, lhs_dilation, rhs_dilation,
            strict=True):
        high = _dilated(out, stride) - _dilated(size, l_dil) + _dilated(window, r_dil) - low - 1
        pads.append((low, high))
    out = conv_general_dilated(
        _cast(lhs, ct.dtype), ct, window_strides=rhs_dilation, padding=pads,
        lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(_swap_first_two(lhs_spec),
                                               _swap_first_two(out_spec),
                                               _swap_first_two(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        precision=precision, preferred_element_type=preferred_element_type,
        out_sharding=getattr(rhs.aval, "_sharding", None))
    return _cast(out, rhs.aval.dtype)


def _merge_into(x, src: int, dst: int):
    """Axis ``src`` merged into axis ``dst`` (numbered without ``src``) as its major part."""
    shape = list(get_aval(x).shape)
    size = shape.pop(src)
    x = move_axis(x, src, dst)
    shape[dst] *= size
    return reshape(x, tuple(shape))


def _split_out(x, axis: int, major: int):
    """Axis ``axis`` split into ``(major, rest)``."""
    shape = list(get_aval(x).shape)
    shape[axis:axis + 1] = [major, shape[axis] // major]
    return reshape(x, tuple(shape))


def _groups_outermost(x, bdim: int, axis: int, groups: int):
    """The batch axis ``bdim`` merged into axis ``axis`` (per-example numbering) below its
    ``groups`` leading groups: groups stay outermost, as grouped convolutions need."""
    x = _split_out(x, axis + int(bdim <= axis), groups)
    x = _merge_into(x, bdim + int(axis < bdim), axis + 1)
    return _merge_into(x, axis, axis)


def _conv_batch(args, dims, *, dimension_numbers, feature_group_count, batch_group_count,
                **params):
    """The batch folds into the convolution's own dimensions: into the lhs batch (lhs
    batched), the kernel's output features (rhs batched), or feature groups (both), then
    splits out of the output."""
    (lhs, rhs), (dl, dr) = args, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    # The batch folds into a dimension the requested split names: the type says less.
    params = dict(params, out_sharding=None)

    def convolve(lhs, rhs, feature_groups, batch_groups):
        return conv_general_dilated_p.bind(lhs, rhs, dimension_numbers=dimension_numbers,
                                           feature_group_count=feature_groups,
                                           batch_group_count=batch_groups, **params)

    if dl is not not_mapped and dr is not not_mapped:
        size = get_aval(lhs).shape[dl]
        new_rhs = _merge_into(rhs, dr, rhs_spec[0])
        if batch_group_count > 1:
            out = convolve(_merge_into(lhs, dl, lhs_spec[0]), new_rhs, feature_group_count,
                       batch_group_count * size)
        else:
            out = convolve(_merge_into(lhs, dl, lhs_spec[1]), new_rhs, feature_group_count * size,
                       batch_group_count)
        return _split_out(out, out_spec[1], size), out_spec[1]
    if dl is not not_mapped:
        size = get_aval(lhs).shape[dl]
        if batch_group_count == 1:
            new_lhs = _merge_into(lhs, dl, lhs_spec[0])
        else:
            new_lhs = _groups_outermost(lhs, dl, lhs_spec[0], batch_group_count)
        out = convolve(new_lhs, rhs, feature_group_count, batch_group_count)
        return _split_out(out, out_spec[0], size), out_spec[0]
    size = get_aval(rhs).shape[dr]
    if feature_group_count == 1 and batch_group_count == 1:
        out = convolve(lhs, _merge_into(rhs, dr, rhs_spec[0]), 1, 1)
        return _split_out(out, out_spec[1], size), out_spec[1]
    groups = feature_group_count if feature_group_count > 1 else batch_group_count
    out = convolve(lhs, _groups_outermost(rhs, dr, rhs_spec[0], groups), feature_group_count,
               batch_group_count)
    out = _split_out(out, out_spec[1], groups)
    out = _split_out(out, out_spec[1] + 1, size)
    return _merge_into(out, out_spec[1], out_spec[1] + 1), out_spec[1]


def _conv_sharding_rule(lhs, rhs, *, out_sharding, **params):
    """JAX's rule: the requested ``out_sharding``; else, with the kernel unsplit and the
    input's feature dimension unsplit, the input's split (its batch split, say), each split
    dimension dividing by its axes. Otherwise, where JAX asks for an ``out_sharding``, the
    result type is unsplit (it says less than JAX's, never something false; the values
    are the partitioner's)."""
    if out_sharding is not None:
        return out_sharding
    feature = params["dimension_numbers"].lhs_spec[1]
    if (getattr(rhs, "_sharding", None) is not None
            or getattr(lhs, "_sharding", None) is None or lhs._sharding.spec[feature] is not None):
        return None
    out_shape = _conv_abstract_eval(lhs, rhs, out_sharding=None, **params).shape
    return sharding_rules.varying_out_shape(lhs, out_shape, "conv_general_dilated")


conv_general_dilated_p = Primitive(
    "conv_general_dilated", abstract_eval=_conv_abstract_eval, impl=_conv_impl,
    lower=_conv_lower,
    jvp=late_rule(lambda p: jvp_by_parts(p, _conv_jvp_lhs, _conv_jvp_rhs),
                  "conv_general_dilated"),
    transpose=transpose_by_parts(_conv_transpose_lhs, _conv_transpose_rhs),
    batch=_conv_batch, sharding_rule=_conv_sharding_rule)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-dimensional convolution (XLA's ConvGeneralDilated).

    Parameters
    ----------
    lhs, rhs : arrays
        Input and kernel, of equal rank and dtype.
    window_strides : sequence of int
    padding : str or sequence of (int, int)
        ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or explicit (low, high) pairs.
    lhs_dilation, rhs_dilation : sequence of int, optional
    dimension_numbers : None, ConvDimensionNumbers or a triple of layout strings
    feature_group_count, batch_group_count : int
    out_sharding : NamedSharding or PartitionSpec, optional
        The result's sharding (a PartitionSpec over the mesh set with ``set_mesh``): its
        type under Explicit mesh axes, as in JAX.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> x = jnp.array([1., 2., 1.]).reshape(1, 1, 3)
    >>> lax.conv_general_dilated(x, jnp.ones((1, 1, 2)), (1,), [(1, 1)])[0, 0]
    Array([1., 3., 3., 1.], dtype=float32)
    """
    out_sharding = check_out_sharding(out_sharding, "lax.conv_general_dilated")
    lhs, rhs = to_operand(lhs), to_operand(rhs)
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n_spatial = lhs.ndim - 2
    window_strides = tuple(int(s) for s in window_strides)
    lhs_dilation = (1,) * n_spatial if lhs_dilation is None else tuple(lhs_dilation)
    rhs_dilation = (1,) * n_spatial if rhs_dilation is None else tuple(rhs_dilation)
    if isinstance(padding, str):
        in_shape = [_dilated(lhs.shape[d], lhs_dilation[i]) for i, d in enumerate(dn.lhs_spec[2:])]
        window = [_dilated(rhs.shape[d], rhs_dilation[i]) for i, d in enumerate(dn.rhs_spec[2:])]
        padding = padtype_to_pads(in_shape, window, window_strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(padding) != n_spatial or len(window_strides) != n_spatial:
        raise ValueError(f"conv_general_dilated needs {n_spatial} window strides and padding "
                         f"pairs for rank-{lhs.ndim} operands")
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution with NCHW/OIHW layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_p", "conv", "conv_with_general_padding", "padtype_to_pads"]
