"""Convolution helpers of ``jax.lax``: dimension-number permutations, output-shape rules,
and ``conv_general_dilated_local`` (the unshared, "locally connected" convolution), built
from ``conv_general_dilated_patches`` and ``dot_general`` as JAX builds it.
"""

from __future__ import annotations

import operator
from typing import Union

import numpy as np

from xjax._src.lax.convolution import ConvDimensionNumbers, conv_dimension_numbers, padtype_to_pads
from xjax._src.lax.dot import canonicalize_precision, dot_general
from xjax._src.lax.shape import as_operand, transpose
from xjax._src.lax.windowed import conv_general_dilated_patches

# What ``dimension_numbers`` may be (JAX's alias): layout strings, the normalized form, or
# None (NCHW/OIHW/NCHW).
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


def conv_general_permutations(dimension_numbers):
    """The permutations that put operands of string layouts into XLA's canonical order.

    Parameters
    ----------
    dimension_numbers : tuple of three str
        ``(lhs_spec, rhs_spec, out_spec)``, e.g. ``("NHWC", "HWIO", "NHWC")``.

    Returns
    -------
    tuple of three tuples
        For lhs and out ``(batch, feature, spatial...)``, for rhs ``(out feature, in
        feature, spatial...)``, the spatial dimensions ordered as in ``rhs_spec``.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    spatial_sets = [set(s) - set(p) for s, p in zip(dimension_numbers, charpairs, strict=True)]
    if not spatial_sets[0] == spatial_sets[1] == spatial_sets[2]:
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {dimension_numbers}.")

    def permutation(spec, pair):
        spatial = sorted((i for i, c in enumerate(spec) if c not in pair),
                         key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return tuple(permutation(s, p) for s, p in zip(dimension_numbers, charpairs, strict=True))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of operands in canonical order.

    Parameters
    ----------
    lhs_shape : sequence of int
        ``(N, C, spatial...)``.
    rhs_shape : sequence of int
        ``(O, I, spatial...)``.
    strides : sequence of int
        Window strides.
    pads : str or sequence of (int, int)
        ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or (low, high) pairs.
    batch_group_count : int
        Divides the batch dimension.

    Returns
    -------
    tuple of int
        ``(N // batch_group_count, O, spatial...)``.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (2, 2), "SAME")
    (2, 4, 5, 5)
    """
    lhs_shape = tuple(operator.index(d) for d in lhs_shape)
    rhs_shape = tuple(operator.index(d) for d in rhs_shape)
    strides = tuple(operator.index(s) for s in strides)
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [d + int(lo) + int(hi) for d, (lo, hi) in zip(lhs_shape[2:], pads, strict=True)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    spatial = tuple(max((p - w) // s + 1, 0)
                    for p, w, s in zip(padded, rhs_shape[2:], strides, strict=True))
    if batch_group_count > 1:
        if lhs_shape[0] % batch_group_count:
            raise ValueError(f"conv_shape_tuple: the batch size {lhs_shape[0]} is not a "
                             f"multiple of batch_group_count={batch_group_count}")
        batch = lhs_shape[0] // batch_group_count
    else:
        batch = lhs_shape[0]
    return (batch, rhs_shape[0], *spatial)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of a convolution of operands in string layouts.

    Parameters
    ----------
    lhs_shape, rhs_shape : sequence of int
        In the layouts of ``dimension_numbers``.
    window_strides : sequence of int
        Strides, in ``rhs_spec``'s spatial order.
    padding : str or sequence of (int, int)
    dimension_numbers : tuple of three str
        ``(lhs_spec, rhs_spec, out_spec)``.

    Returns
    -------
    tuple of int
        The output shape, in ``out_spec``'s layout.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.conv_general_shape_tuple((2, 9, 9, 3), (3, 3, 3, 4), (1, 1), "VALID",
    ...                              ("NHWC", "HWIO", "NHWC"))
    (2, 7, 7, 4)
    """
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_canonical = tuple(lhs_shape[i] for i in lhs_perm)
    rhs_canonical = tuple(rhs_shape[i] for i in rhs_perm)
    out_canonical = conv_shape_tuple(lhs_canonical, rhs_canonical, window_strides, padding)
    return tuple(out_canonical[i] for i in np.argsort(out_perm))


def _moveaxis(x, sources, destinations):
    """``np.moveaxis`` for an operand, as one transpose."""
    ndim = len(x.shape)
    sources = [s % ndim for s in sources]
    destinations = [d % ndim for d in destinations]
    order = [d for d in range(ndim) if d not in sources]
    for dst, src in sorted(zip(destinations, sources, strict=True)):
        order.insert(dst, src)
    return transpose(x, tuple(order))


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """Unshared (locally connected) convolution: a separate kernel at each output location.

    Parameters
    ----------
    lhs : array
        The rank ``n + 2`` input.
    rhs : array
        The rank ``n + 2`` kernels. Its spatial dimensions index *output* locations; its
        ``I`` dimension fuses the input channel with the receptive window, in the order
        ``"C"`` followed by ``rhs_spec``'s spatial characters (so of size
        ``C * prod(filter_shape)``).
    window_strides : sequence of int
        ``n`` inter-window strides.
    padding : str or sequence of (int, int)
        ``"SAME"``, ``"VALID"`` or ``n`` (low, high) pairs.
    filter_shape : sequence of int
        The receptive window's spatial shape, in ``rhs_spec``'s order.
    lhs_dilation, rhs_dilation : sequence of int, optional
        Input (transposed convolution) and window (atrous) dilation.
    dimension_numbers : None, ConvDimensionNumbers or a triple of layout strings
        Default ``("NCHW", "OIHW", "NCHW")`` (for two spatial dimensions).
    precision : None, Precision or a pair of Precision
        The first of a pair applies to extracting the patches.

    Returns
    -------
    Array
        The result, in ``out_spec``'s layout.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> x = np.arange(4.0, dtype=np.float32).reshape(1, 1, 4)  # N=1 C=1 W=4
    >>> w = np.array([[[1, 1, 1], [0, 10, 100]]], np.float32)  # O=1 I=C*2 W_out=3
    >>> lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,))
    Array([[[  0.,  21., 302.]]], dtype=float32)
    """
    lhs = as_operand(lhs)
    canonical = canonicalize_precision(precision)
    if canonical is None:
        lhs_precision = None
    elif isinstance(canonical, tuple) and len(canonical) == 2:
        lhs_precision = canonical[0]
    else:
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(
        lhs, filter_shape=filter_shape, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, precision=lhs_precision)
    _, rhs_spec, out_spec = conv_dimension_numbers(
        lhs.shape, (1, 1, *tuple(filter_shape)), dimension_numbers)
    # contract the patches' features with rhs's I; pair the output locations as batch dims
    lhs_batch = sorted(out_spec[2:])
    rhs_batch = [rhs_spec[2:][k] for k in sorted(range(len(out_spec) - 2),
                                                key=lambda k: out_spec[2:][k])]
    dn = (((out_spec[1],), (rhs_spec[1],)), (tuple(lhs_batch), tuple(rhs_batch)))
    out = dot_general(patches, rhs, dn, precision=precision)
    return _moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


__all__ = ["ConvGeneralDilatedDimensionNumbers", "conv_general_permutations",
           "conv_shape_tuple", "conv_general_shape_tuple", "conv_general_dilated_local"]
