"""``scaled_dot``: a ``dot_general`` of operands multiplied by block scales first."""

from __future__ import annotations


import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.dot import _dimension_numbers, dot_general
from xjax._src.lax.elementwise import mul
from xjax._src.lax.shape import as_operand, broadcast_in_dim, reshape


# -- scaled dot --


def _check_scale(side, operand, scale, contracting):
    for i, size in enumerate(operand.shape):
        if i in contracting:
            if size % scale.shape[i] != 0:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible "
                                f"by its scale's dim size {scale.shape[i]}.")
            ratio = size // scale.shape[i]
            if ratio < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim "
                                f"size ({ratio}) must be at least 2.")
        elif scale.shape[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                            f"{scale.shape[i]}.")


def _check_scaled_dot(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    ranks = [lhs.ndim, rhs.ndim] + [s.ndim for s in (lhs_scale, rhs_scale) if s is not None]
    if max(ranks) != min(ranks):
        def rank(s):
            return s.ndim if s is not None else "N/A"
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: "
                        f"{lhs.ndim} rhs rank: {rhs.ndim} lhs_scale rank: {rank(lhs_scale)} "
                        f"rhs_scale rank: {rank(rhs_scale)}.")
    if len(lb) != len(rb):
        raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lb)} and {len(rb)}.")
    if len(lc) != len(rc):
        raise TypeError("LHS and RHS must have the same number of contracting dimensions, "
                        f"got {len(lc)} and {len(rc)}.")
    for i, j in zip(lb, rb, strict=True):
        sizes = {lhs.shape[i], rhs.shape[j]}
        sizes |= {s.shape[i] for s in (lhs_scale,) if s is not None}
        sizes |= {s.shape[j] for s in (rhs_scale,) if s is not None}
        if len(sizes) != 1:
            raise TypeError("All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lc, rc, strict=True):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match "
                            f"RHS contracting dim {j} of size {rhs.shape[j]}.")
    if lhs_scale is not None:
        _check_scale("LHS", lhs, lhs_scale, lc)
    if rhs_scale is not None:
        _check_scale("RHS", rhs, rhs_scale, rc)


def _apply_scale(x, scale, contracting):
    """``x`` (as bfloat16) times ``scale`` repeated along the contracting dims."""
    bf16 = np.dtype(dtypes.bfloat16)
    scale = convert_element_type(scale, bf16)
    shape = tuple(get_aval(x).shape)
    s_shape = tuple(get_aval(scale).shape)
    for i in contracting:
        if s_shape[i] != shape[i]:  # each scale covers a block of shape[i] // s_shape[i]
            block = shape[i] // s_shape[i]
            expanded = s_shape[:i + 1] + (block,) + s_shape[i + 1:]
            dims = tuple(d if d <= i else d + 1 for d in range(len(s_shape)))
            scale = broadcast_in_dim(scale, expanded, dims)
            s_shape = s_shape[:i] + (s_shape[i] * block,) + s_shape[i + 1:]
            scale = reshape(scale, s_shape)
    return mul(convert_element_type(x, bf16), scale)


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """``dot_general(lhs * lhs_scale, rhs * rhs_scale)`` in bfloat16, accumulated in
    ``preferred_element_type`` (bfloat16 by default), as JAX's reference decomposition.

    A scale has its operand's rank and sizes, except along contracting dimensions, where
    each scale element covers a block (at least 2) of the operand. Missing scales are ones.
    Unlike JAX (whose ``scaled_dot`` has no derivative rules), this composition of lax
    operations is differentiable.

    Parameters
    ----------
    lhs, rhs : array_like
    lhs_scale, rhs_scale : array_like, optional
    dimension_numbers : tuple, optional
        As for ``dot_general``; by default ``[..., m, k] x [..., k, n]`` with the leading
        dims batched.
    preferred_element_type : dtype, optional

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lhs, rhs = jnp.ones((2, 4)), jnp.ones((4, 3))
    >>> lax.scaled_dot(lhs, rhs, lhs_scale=jnp.full((2, 2), 2.0)).dtype
    dtype(bfloat16)
    """
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    if dimension_numbers is None:
        n = lhs_aval.ndim
        if n < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        batch = tuple(range(n - 2))
        dimension_numbers = (((n - 1,), (n - 2,)), (batch, batch))
    dimension_numbers = _dimension_numbers(dimension_numbers)
    (lc, rc), _ = dimension_numbers
    lhs_scale = None if lhs_scale is None else as_operand(lhs_scale)
    rhs_scale = None if rhs_scale is None else as_operand(rhs_scale)
    _check_scaled_dot(lhs_aval, rhs_aval, None if lhs_scale is None else get_aval(lhs_scale),
                      None if rhs_scale is None else get_aval(rhs_scale), dimension_numbers)
    out_type = dtypes.check_and_canonicalize_user_dtype(
        dtypes.bfloat16 if preferred_element_type is None else preferred_element_type,
        "scaled_dot")
    if lhs_scale is None:
        lhs_scaled = convert_element_type(lhs, dtypes.bfloat16)
    else:
        lhs_scaled = _apply_scale(lhs, lhs_scale, lc)
    if rhs_scale is None:
        rhs_scaled = convert_element_type(rhs, dtypes.bfloat16)
    else:
        rhs_scaled = _apply_scale(rhs, rhs_scale, rc)
    return dot_general(lhs_scaled, rhs_scaled, dimension_numbers,
                       preferred_element_type=out_type)


__all__ = ["scaled_dot"]
