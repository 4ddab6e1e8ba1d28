"""Order statistics: ``quantile``, ``percentile``, ``median`` and their NaN-ignoring
variants, computed by sorting (``lax.sort`` puts NaNs last) and interpolating.

JAX's methods: ``linear``, ``lower``, ``higher``, ``midpoint``, ``nearest`` (which, unlike
NumPy's, rounds a position exactly halfway down) and ``inverted_cdf`` (the only one taking
``weights``). The result has ``a``'s inexact dtype; ``q`` is cast to it.
"""

from __future__ import annotations

import numpy as np

import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        convert_element_type, to_jax)
from xjax._src.numpy.nested_jit import jit_when_staged

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _shape(x):
    return tuple(aval_of(x).shape)


def _reduced_last(a, axis):
    """``a`` with the reduced axes merged into one last axis, and the shape ``keepdims``
    gives the result (without the q dimensions)."""
    shape = _shape(a)
    if axis is None:
        return jnp.reshape(a, (1, int(np.prod(shape)))), \
            (1,) * len(shape), ()
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(sorted({canonicalize_axis(ax, len(shape)) for ax in axes}))
    if len(axes) != len(axis if isinstance(axis, (tuple, list)) else (axis,)):
        raise ValueError("repeated axis")
    kept = [d for d in range(len(shape)) if d not in axes]
    moved = jnp.transpose(a, kept + list(axes))
    kept_shape = tuple(shape[d] for d in kept)
    keep_shape = tuple(1 if d in axes else shape[d] for d in range(len(shape)))
    reduced_size = int(np.prod([shape[d] for d in axes]))  # -1 is ambiguous for empty arrays
    return jnp.reshape(moved, kept_shape + (reduced_size,)), keep_shape, kept_shape


def _gather_last(sorted_a, index):
    """``sorted_a[..., index]`` per slice, ``index`` of shape ``q_shape + rest``."""
    q_ndim = len(_shape(index)) - (len(_shape(sorted_a)) - 1)
    target = _shape(index) + (_shape(sorted_a)[-1],)
    expanded = jnp.broadcast_to(jnp.reshape(sorted_a, (1,) * q_ndim + _shape(sorted_a)),
                                target)
    return jnp.take_along_axis(expanded, index[..., None], axis=-1)[..., 0]


def _weighted_inverted_cdf(a, q, weights, ignore_nan):
    """inverted_cdf with weights: the first sorted value whose cumulative weight share
    reaches q."""
    n = _shape(a)[-1]
    w = convert_element_type(jnp.broadcast_to(to_jax(weights), _shape(a)), aval_of(a).dtype)
    if ignore_nan:
        w = jnp.where(jnp.isnan(a), 0, w)
    iota = lax.broadcasted_iota(np.int32, _shape(a), len(_shape(a)) - 1)
    sorted_a, sorted_w = lax.sort((a, w, iota), dimension=len(_shape(a)) - 1,
                                  num_keys=1)[:2]
    cdf = jnp.cumsum(sorted_w, axis=-1)
    cdf = cdf / cdf[..., -1:]
    q_b = jnp.reshape(q, _shape(q) + (1,) * len(_shape(a)))
    index = jnp.sum(cdf < q_b, axis=-1)
    index = jnp.clip(convert_element_type(index, np.int32), 0, n - 1)
    return _gather_last(sorted_a, index)


def _quantile(a, q, axis, method, keepdims, weights, ignore_nan, name):
    check_arraylike(name, a, q)
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    if weights is not None and method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                  "'inverted_cdf' supports weights.")
    a = to_jax(a)
    if dtypes.is_complex(aval_of(a).dtype):
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    dtype = dtypes.to_inexact_dtype(aval_of(a).dtype)
    a = convert_element_type(a, dtype)
    q = convert_element_type(to_jax(q), dtype)
    if len(_shape(q)) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {_shape(q)}")
    flat, keep_shape, kept_shape = _reduced_last(a, axis)
    if not _shape(flat)[-1]:
        _check_empty_reduction(_shape(q), keep_shape if keepdims else kept_shape, method,
                               ignore_nan)
    if weights is not None:
        weights, _, _ = _reduced_last(jnp.broadcast_to(to_jax(weights), _shape(a)), axis)
        result = _weighted_inverted_cdf(flat, q, weights, ignore_nan)
    else:
        result = _interpolate(flat, q, method, ignore_nan)
    has_nan = jnp.any(jnp.isnan(flat), axis=-1)
    if ignore_nan:
        empty = jnp.all(jnp.isnan(flat), axis=-1)
        result = jnp.where(empty, jnp.asarray(np.nan, dtype), result)
    else:
        result = jnp.where(has_nan, jnp.asarray(np.nan, dtype), result)
    if axis is None and not keepdims:
        result = jnp.reshape(result, _shape(q))
    elif keepdims:  # JAX ravels a rank-0 ``a`` first, so its kept axis is there: (1,)
        result = jnp.reshape(result, _shape(q) + (keep_shape or (1,)))
    else:
        result = jnp.reshape(result, _shape(q) + kept_shape)
    return result


def _check_empty_reduction(q_shape, out_shape, method, ignore_nan):
    """JAX's errors for a quantile over no elements (where the clipped positions here would
    read 0). JAX reads the sorted values at positions of shape ``q_shape`` (with a gather of
    slices of size 1, which lax rejects for an axis of size 0: TypeError), or, in the
    NaN-ignoring variants, ``q_shape + out_shape`` (by indexing: a rank-0 index is out of
    bounds, IndexError). Empty positions read nothing; then only inverted_cdf fails (taking
    the last cumulative weight, IndexError)."""
    positions = q_shape + out_shape if ignore_nan else q_shape
    message = "cannot take a quantile over an empty reduction"
    if positions and not int(np.prod(positions)):
        if method == "inverted_cdf":
            raise IndexError(f"{message}: no last cumulative weight")
        return
    if ignore_nan and not positions:
        raise IndexError(f"{message}: index is out of bounds for axis with size 0")
    raise TypeError(f"{message}: slice size 1 out of range for an axis of size 0")


def _interpolate(flat, q, method, ignore_nan):
    n = _shape(flat)[-1]
    dtype = aval_of(flat).dtype
    sorted_a = lax.sort(flat, dimension=len(_shape(flat)) - 1)
    rest = _shape(flat)[:-1]
    q_b = jnp.reshape(q, _shape(q) + (1,) * len(rest))
    if ignore_nan:
        count = convert_element_type(jnp.sum(jnp.logical_not(jnp.isnan(flat)), axis=-1),
                                     dtype)
    else:
        count = jnp.full(rest, n, dtype)
    if method == "inverted_cdf":
        index = jnp.ceil(q_b * count) - 1
        index = jnp.clip(convert_element_type(index, np.int32), 0,
                         jnp.maximum(convert_element_type(count, np.int32) - 1, 0))
        return _gather_last(sorted_a, index)
    position = q_b * (count - 1)
    low = jnp.floor(position)
    high = jnp.ceil(position)
    high_weight = position - low
    last = jnp.maximum(count - 1, 0)
    low_index = convert_element_type(jnp.clip(low, 0, last), np.int32)
    high_index = convert_element_type(jnp.clip(high, 0, last), np.int32)
    low_value = _gather_last(sorted_a, low_index)
    high_value = _gather_last(sorted_a, high_index)
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "midpoint":
        return (low_value + high_value) * jnp.asarray(0.5, dtype)
    if method == "nearest":
        return jnp.where(high_weight > 0.5, high_value, low_value)
    return low_value * (1 - high_weight) + high_value * high_weight


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights=None):
    """The ``q``-th quantiles (``0 <= q <= 1``, a scalar or 1-D) of ``a`` over ``axis``.

    A slice containing NaN gives NaN. The ``q`` dimension leads the result.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.quantile(jnp.array([1., 2., 3., 4.]), 0.5)
    Array(2.5, dtype=float32)
    """
    _no_out("quantile", out)
    return _quantile(a, q, axis, method, keepdims, weights, False, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights=None):
    """:func:`quantile` ignoring NaNs (all-NaN slices give NaN)."""
    _no_out("nanquantile", out)
    return _quantile(a, q, axis, method, keepdims, weights, True, "nanquantile")


def _percent(q):
    q = to_jax(q)
    dtype = dtypes.to_inexact_dtype(aval_of(q).dtype)
    return lax.div(convert_element_type(q, dtype), jnp.asarray(100.0, dtype))


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights=None,
               out_sharding=None):
    """The ``q``-th percentiles (``0 <= q <= 100``) of ``a`` over ``axis``."""
    _no_out("percentile", out)
    check_arraylike("percentile", a, q)
    return _quantile(a, _percent(q), axis, method, keepdims, weights, False, "percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights=None):
    """:func:`percentile` ignoring NaNs."""
    _no_out("nanpercentile", out)
    check_arraylike("nanpercentile", a, q)
    return _quantile(a, _percent(q), axis, method, keepdims, weights, True, "nanpercentile")


# Eager medians run directly (their sort on NumPy, see numpy.sorting.sort), as quantile does;
# compiled, XLA's CPU sort took 219 ms for 1e6 float32.
@jit_when_staged(static_argnames=('axis', 'overwrite_input', 'keepdims'), eager_direct=True)
def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """The median of ``a`` over ``axis`` (NaN where a slice has NaN).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.median(jnp.array([3, 1, 2, 10]))
    Array(2.5, dtype=float32)
    """
    _no_out("median", out)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, None, False, "median")


@jit_when_staged(static_argnames=('axis', 'overwrite_input', 'keepdims'), eager_direct=True)
def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """The median ignoring NaNs."""
    _no_out("nanmedian", out)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, None, True, "nanmedian")


__all__ = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian"]
