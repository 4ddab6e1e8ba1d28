"""Windowed reductions: ``reduce_window_sum``, ``reduce_window_max`` and
``reduce_window_min`` (pooling), the ``lax.reduce_window`` wrapper, and the convolution
helpers built on ``conv_general_dilated``: ``conv_transpose`` and
``conv_general_dilated_patches``.

A window reduction pads the operand (``padding`` low/high, ``base_dilation - 1`` between
elements, with the reduction's identity), slides a window of ``window_dimensions`` (its
taps ``window_dilation`` apart) by ``window_strides``, and reduces each window. Lowered to
``stablehlo.reduce_window``: https://openxla.org/stablehlo/spec#reduce_window

``lax.reduce_window`` with any other computation binds the generic ``reduce_window``
primitive, which holds a jaxpr and so lives above the interpreters
(``xjax.control_flow.reduce_window``).
"""

from __future__ import annotations

import itertools
import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax import compare, elementwise
from xjax._src.lax.ad_helpers import linear_jvp_of
from xjax._src.lax.ad_rules import Zero, get_aval, instantiate, tangent_aval, transpose_by_parts
from xjax._src.lax.batch_rules import move_axis
from xjax._src.lax.concat_pad import pad
from xjax._src.lax.convolution import (conv_dimension_numbers, conv_general_dilated,
                                       padtype_to_pads)
from xjax._src.lax.naryop import scalar_region
from xjax._src.lax.reduce import accumulation_dtype, max_identity, min_identity
from xjax._src.lax.shape import (as_operand, broadcast_in_dim, reshape, rev, scalar_constant,
                                 transpose)
from xjax._src.lowering.stablehlo import aval_type, i64_array

# -- shapes --


def dilate_shape(shape, dilation) -> tuple:
    """The size of each axis after putting ``dilation - 1`` holes between elements."""
    return tuple(0 if s == 0 else (s - 1) * d + 1
                 for s, d in zip(shape, dilation, strict=True))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The output shape of a window reduction."""
    ndim = len(operand_shape)
    base_dilation = (1,) * ndim if base_dilation is None else base_dilation
    window_dilation = (1,) * ndim if window_dilation is None else window_dilation
    padded = [s + lo + hi for s, (lo, hi) in
              zip(dilate_shape(operand_shape, base_dilation), padding, strict=True)]
    windows = dilate_shape(window_dimensions, window_dilation)
    return tuple(0 if p < w else (p - w) // s + 1
                 for p, w, s in zip(padded, windows, window_strides, strict=True))


def _check_positive(name, what, values):
    if any(v <= 0 for v in values):
        raise TypeError(f"{name} {what} must have every element be strictly positive, got "
                        f"{tuple(values)}.")


def check_window_params(name, operand_shape, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation) -> None:
    """JAX's errors for window parameters that do not fit the operand."""
    ndim = len(operand_shape)
    if len(window_dimensions) != ndim:
        raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got "
                        f"operand shape {tuple(operand_shape)} with window_dimensions "
                        f"{tuple(window_dimensions)}.")
    for what, values in (("window_strides", window_strides), ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        if len(values) != ndim:
            raise TypeError(f"{name} got inconsistent {what} and window_dimensions: got "
                            f"{what} {tuple(values)} and window_dimensions "
                            f"{tuple(window_dimensions)}.")
    if len(padding) != ndim:
        raise TypeError(f"{name} got inconsistent padding and window_dimensions: got "
                        f"padding {tuple(padding)} and window_dimensions "
                        f"{tuple(window_dimensions)}.")
    _check_positive(name, "window_dimensions", window_dimensions)
    _check_positive(name, "window_strides", window_strides)
    _check_positive(name, "base_dilation", base_dilation)
    _check_positive(name, "window_dilation", window_dilation)


def _window_abstract_eval(name, accepts_bool):
    def abstract_eval(operand, *, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
        if operand.dtype == np.bool_ and not accepts_bool:
            raise TypeError(f"operand to {name} must have a number dtype, got bool")
        check_window_params(name, operand.shape, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation)
        shape = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                          padding, base_dilation, window_dilation)
        return ShapedArray(shape, operand.dtype, operand.weak_type)
    return abstract_eval


# -- NumPy evaluation --

def padded_operand(x, fill, padding, base_dilation):
    """``x`` dilated by ``base_dilation`` and padded (possibly negatively) with ``fill``."""
    x = np.asarray(x)
    dilated = np.full(dilate_shape(x.shape, base_dilation), fill, x.dtype)
    dilated[tuple(slice(None, None, d) for d in base_dilation)] = x
    lows = [max(lo, 0) for lo, _ in padding]
    highs = [max(hi, 0) for _, hi in padding]
    out = np.pad(dilated, list(zip(lows, highs, strict=True)), constant_values=fill)
    crop = tuple(slice(-lo if lo < 0 else 0, s + hi if hi < 0 else s)
                 for (lo, hi), s in zip(padding, out.shape, strict=True))
    return out[crop]


def window_taps(padded, out_shape, window_dimensions, window_strides, window_dilation):
    """The arrays (each of ``out_shape``) of the padded operand under each window tap, in
    row-major order of the taps."""
    for offsets in itertools.product(*(range(w) for w in window_dimensions)):
        index = tuple(slice(o * wd, o * wd + (n - 1) * s + 1, s) if n else slice(0, 0)
                      for o, wd, n, s in zip(offsets, window_dilation, out_shape,
                                             window_strides, strict=True))
        yield padded[index]


def _window_impl(ufunc, identity, wide):
    def impl(x, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        x = np.asarray(x)
        dtype = x.dtype
        out_shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides,
                                              padding, base_dilation, window_dilation)
        work = accumulation_dtype(dtype) if wide else dtype
        padded = padded_operand(x.astype(work), identity(dtype), padding, base_dilation)
        acc = np.full(out_shape, identity(dtype), work)
        with np.errstate(invalid="ignore"):
            for tap in window_taps(padded, out_shape, window_dimensions, window_strides,
                                   window_dilation):
                acc = ufunc(acc, tap)
        return np.asarray(acc).astype(dtype, copy=False)
    return impl


def _window_lower(kind, identity):
    def lower(ctx, x, *, window_dimensions, window_strides, padding, base_dilation,
              window_dilation):
        b = ctx.builder
        dtype = ctx.avals_in[0].dtype
        init = b.constant(identity(dtype))
        return b.op1("stablehlo.reduce_window", [x, init], aval_type(ctx.avals_out[0]),
                     window_attributes(window_dimensions, window_strides, padding,
                                       base_dilation, window_dilation),
                     regions=[scalar_region(b, dtype, kind)])
    return lower


def window_attributes(window_dimensions, window_strides, padding, base_dilation,
                      window_dilation) -> dict:
    """The attributes of a ``stablehlo.reduce_window``."""
    pads = [[int(lo), int(hi)] for lo, hi in padding]
    return {"window_dimensions": i64_array(window_dimensions),
            "window_strides": i64_array(window_strides),
            "base_dilations": i64_array(base_dilation),
            "window_dilations": i64_array(window_dilation),
            "padding": f"dense<{pads}> : tensor<{len(pads)}x2xi64>"}


# -- derivatives --

def conv_vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                         lhs_dilation, rhs_dilation):
    """The padding that makes a windowed op's transpose: with the cotangent dilated by the
    strides and padded this way, a unit-stride window pass yields the operand's shape."""
    lhs_dilated = dilate_shape(in_shape, lhs_dilation)
    rhs_dilated = dilate_shape(window_dimensions, rhs_dilation)
    out_dilated = dilate_shape(out_shape, window_strides)
    before = [w - lo - 1 for w, (lo, _) in zip(rhs_dilated, padding, strict=True)]
    after = [i + w - 1 - o - b for i, w, o, b in
             zip(lhs_dilated, rhs_dilated, out_dilated, before, strict=True)]
    return list(zip(before, after, strict=True))


def _reduce_window_sum_transpose(ct, operand, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    """Each operand element receives the sum of the cotangents of the windows covering it:
    a window sum over the cotangent dilated by the strides and padded, strided by the base
    dilation."""
    in_shape = operand.aval.shape
    ct_shape = get_aval(ct).shape
    pads = conv_vjp_lhs_padding(in_shape, window_dimensions, window_strides, ct_shape,
                                padding, base_dilation, window_dilation)
    config = tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides, strict=True))
    padded = pad(ct, scalar_constant(0, get_aval(ct).dtype), config)
    ones = (1,) * len(in_shape)
    return reduce_window_sum_p.bind(
        padded, window_dimensions=window_dimensions, window_strides=base_dilation,
        padding=tuple((0, 0) for _ in in_shape), base_dilation=ones,
        window_dilation=window_dilation)


def _chooser_jvp(name, select_name):
    """The tangent of a max/min window reduction, as JAX writes it: ``select_and_gather_add``
    of the tangent (the tangent at the element each window selects with ``ge``/``le``)."""

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = _CHOOSERS[name].bind(x, **params)
        if type(t) is Zero or not dtypes.is_inexact(get_aval(x).dtype):
            return out, Zero(tangent_aval(get_aval(out)))
        return out, select_and_scatter.select_and_gather_add_p.bind(
            instantiate(t), x, select_prim=getattr(compare, select_name), **params)

    return jvp


def _window_batch(name):
    def batch(args, dims, *, window_dimensions, window_strides, padding, base_dilation,
              window_dilation):
        (x,), (d,) = args, dims
        x = move_axis(x, d, 0)
        out = _CHOOSERS[name].bind(
            x, window_dimensions=(1, *window_dimensions), window_strides=(1, *window_strides),
            padding=((0, 0), *padding), base_dilation=(1, *base_dilation),
            window_dilation=(1, *window_dilation))
        return out, 0
    return batch


def _window_primitive(name, ufunc, kind, identity, *, wide, accepts_bool, jvp, transpose):
    return Primitive(name, abstract_eval=_window_abstract_eval(name, accepts_bool),
                     impl=_window_impl(ufunc, identity, wide),
                     lower=_window_lower(kind, identity), jvp=jvp, transpose=transpose,
                     batch=_window_batch(name))


reduce_window_sum_p = _window_primitive(
    "reduce_window_sum", np.add, "add", lambda dtype: np.zeros((), dtype), wide=True,
    accepts_bool=False, jvp=linear_jvp_of("reduce_window_sum"),
    transpose=transpose_by_parts(_reduce_window_sum_transpose))
reduce_window_max_p = _window_primitive(
    "reduce_window_max", np.maximum, "max", max_identity, wide=False, accepts_bool=True,
    jvp=_chooser_jvp("reduce_window_max", "ge_p"), transpose=NONLINEAR)
reduce_window_min_p = _window_primitive(
    "reduce_window_min", np.minimum, "min", min_identity, wide=False, accepts_bool=True,
    jvp=_chooser_jvp("reduce_window_min", "le_p"), transpose=NONLINEAR)

_CHOOSERS = {"reduce_window_sum": reduce_window_sum_p, "reduce_window_max": reduce_window_max_p,
             "reduce_window_min": reduce_window_min_p}


# -- the public wrapper --

def _window_params(operand_shape, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation) -> dict:
    ndim = len(operand_shape)
    window_dimensions = tuple(operator.index(w) for w in window_dimensions)
    window_strides = (1,) * ndim if window_strides is None else \
        tuple(operator.index(s) for s in window_strides)
    base_dilation = (1,) * ndim if base_dilation is None else \
        tuple(operator.index(d) for d in base_dilation)
    window_dilation = (1,) * ndim if window_dilation is None else \
        tuple(operator.index(d) for d in window_dilation)
    if isinstance(padding, str):
        if len(window_dimensions) != ndim or len(window_strides) != ndim:
            check_window_params("reduce_window", operand_shape, window_dimensions,
                                window_strides, ((0, 0),) * ndim, base_dilation,
                                window_dilation)
        padding = padtype_to_pads(dilate_shape(operand_shape, base_dilation),
                                  dilate_shape(window_dimensions, window_dilation),
                                  window_strides, padding)
    padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    return {"window_dimensions": window_dimensions, "window_strides": window_strides,
            "padding": padding, "base_dilation": base_dilation,
            "window_dilation": window_dilation}


def _concrete_scalar(x):
    """The value of a concrete scalar init value, or None when it is traced or not a
    scalar."""
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        return np.asarray(x)
    if type(x) is Array and x.shape == ():
        return np.asarray(x)
    if isinstance(x, np.ndarray) and x.shape == ():
        return x
    return None


def _monoid_primitive(computation, init):
    """reduce_window_sum/max/min when ``computation`` is lax.add/max/min and ``init`` is its
    identity for the init value's own dtype, else None. As in JAX, the operand's dtype does
    not matter: ``-inf`` selects reduce_window_max for an integer operand too (whose
    padding is then the integer identity)."""
    value = _concrete_scalar(init)
    if value is None:
        return None
    dtype = dtypes.canonicalize_dtype(value.dtype)
    if computation is elementwise.add and value == 0:
        return reduce_window_sum_p
    if computation is elementwise.max and value == max_identity(dtype):
        return reduce_window_max_p
    if computation is elementwise.min and value == min_identity(dtype):
        return reduce_window_min_p
    return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of ``operand`` with ``computation``.

    Parameters
    ----------
    operand : array or pytree of arrays
    init_value : scalar or pytree of scalars (matching ``operand``)
    computation : callable
        ``(accumulated, element) -> accumulated`` on pytrees of scalars. ``lax.add``,
        ``lax.max`` and ``lax.min`` with their identities as ``init_value`` use the
        dedicated primitives (and so support reverse-mode differentiation).
    window_dimensions, window_strides : sequence of int
    padding : str or sequence of (int, int)
        ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or explicit (low, high) pairs.
    base_dilation, window_dilation : sequence of int, optional

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.reduce_window(jnp.arange(6.), 0., lax.add, (3,), (1,), "VALID")
    Array([ 3.,  6.,  9., 12.], dtype=float32)
    """
    if not isinstance(operand, (list, tuple, dict)):
        x = as_operand(operand)
        params = _window_params(x.shape, window_dimensions, window_strides, padding,
                                base_dilation, window_dilation)
        prim = _monoid_primitive(computation, init_value)
        if prim is not None:
            return prim.bind(x, **params)
    # A computation given as a function needs tracing, which lives above lax.
    from xjax._src.higher_order.reduce_window import generic_reduce_window  # a higher layer
    return generic_reduce_window(operand, init_value, computation, window_dimensions,
                                 window_strides, padding, base_dilation, window_dilation,
                                 _window_params)


# -- convolutions built on conv_general_dilated --

def _transpose_padding(k: int, s: int, padding: str):
    """The explicit padding of a transposed convolution equal to the gradient of a
    ``padding`` convolution with kernel size ``k`` and stride ``s``."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        raise ValueError("Padding mode must be `SAME` or `VALID`.")
    return low, total - low


_DEFAULT_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                              4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel: bool = False, precision=None, preferred_element_type=None):
    """Transposed convolution (a "deconvolution"): the input dilated by ``strides`` and
    convolved, as the gradient of a strided convolution is.

    Parameters
    ----------
    lhs, rhs : arrays
        Input and kernel of equal rank (default layouts ``NHWC``/``HWIO`` and their 1-D and
        3-D analogues).
    strides : sequence of int
    padding : 'SAME', 'VALID' or sequence of (int, int)
    rhs_dilation : sequence of int, optional
    dimension_numbers : triple of layout strings or ConvDimensionNumbers, optional
    transpose_kernel : bool
        Flip the kernel's spatial axes and swap its input/output feature axes (the exact
        gradient of ``conv_general_dilated``).
    """
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    ndim = len(lhs.shape)
    if ndim != len(rhs.shape) or ndim < 2:
        raise ValueError("conv_transpose needs lhs and rhs of equal rank, at least 2")
    if dimension_numbers is None:
        if ndim not in _DEFAULT_TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _DEFAULT_TRANSPOSE_LAYOUTS[ndim]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    kernel_spatial = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndim - 2)
    if isinstance(padding, str):
        effective = dilate_shape(kernel_spatial, rhs_dilation)
        pads = [_transpose_padding(k, s, padding) for k, s in
                zip(effective, strides, strict=True)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        rhs = _swap_axes(rhs, dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of :func:`conv_transpose` (without ``rhs_dilation``)."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    in_spatial = [lhs_shape[d] for d in dn.lhs_spec[2:]]
    kernel = [rhs_shape[d] for d in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        padding = [_transpose_padding(k, s, padding) for k, s in
                   zip(kernel, window_strides, strict=True)]
    spatial = [max(0, dilate_shape((n,), (s,))[0] + lo + hi - k + 1) for n, k, s, (lo, hi) in
               zip(in_spatial, kernel, window_strides, padding, strict=True)]
    out = [0] * len(lhs_shape)
    out[dn.out_spec[0]] = lhs_shape[dn.lhs_spec[0]]
    out[dn.out_spec[1]] = rhs_shape[dn.rhs_spec[0]]
    for d, n in zip(dn.out_spec[2:], spatial, strict=True):
        out[d] = n
    return tuple(out)


def _swap_axes(x, a, b):
    perm = list(range(len(get_aval(x).shape)))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, tuple(perm))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                                 precision=None, preferred_element_type=None):
    """The patches a convolution with a ``filter_shape`` kernel would see, as output
    features: feature ``c * prod(filter_shape) + k`` holds input channel ``c`` under kernel
    tap ``k`` (row-major over ``filter_shape``).

    Parameters
    ----------
    lhs : array
        ``(N, C, spatial...)`` by default, or as ``dimension_numbers`` says.
    filter_shape : sequence of int
        The spatial window.
    window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers :
        as for ``conv_general_dilated``.
    """
    lhs = as_operand(lhs)
    filter_shape = tuple(operator.index(f) for f in filter_shape)
    rhs_shape = (1, 1, *filter_shape)
    dn = conv_dimension_numbers(lhs.shape, rhs_shape, dimension_numbers)
    taps = int(np.prod(filter_shape, dtype=np.int64))
    channels = lhs.shape[dn.lhs_spec[1]]
    dtype = get_aval(lhs).dtype
    # one output feature per (channel, tap): an identity kernel, grouped by channel
    eye = np.eye(taps, dtype=dtype).reshape((taps, 1, *filter_shape))
    kernel = broadcast_in_dim(as_operand(eye), (channels, taps, 1, *filter_shape),
                              tuple(range(1, 3 + len(filter_shape))))
    kernel = reshape(kernel, (channels * taps, 1, *filter_shape))
    # put the (O, I, spatial...) kernel into rhs_spec's layout
    inverse = [0] * len(rhs_shape)
    for position, dim in enumerate(dn.rhs_spec):
        inverse[dim] = position
    kernel = transpose(kernel, tuple(inverse))
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, feature_group_count=channels,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = ["reduce_window", "reduce_window_sum_p", "reduce_window_max_p",
           "reduce_window_min_p", "reduce_window_shape_tuple", "conv_transpose",
           "conv_transpose_shape_tuple",
           "conv_general_dilated_patches"]

# The derivative primitives of max/min pooling import this module's window helpers; the jvp
# rules above use them at call time only, so their module is imported last.
from xjax._src.lax import select_and_scatter  # noqa: E402
