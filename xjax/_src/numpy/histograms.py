"""Counting into bins: ``bincount``, ``histogram_bin_edges``, ``histogram``,
``histogram2d`` and ``histogramdd``. Bins are found with ``searchsorted`` and counted with a
scatter-add; out-of-range values are dropped. Result sizes must be static: ``bincount``
needs ``length`` under ``jit`` (or a concrete ``x``), and ``bins`` must be an integer or an
array of edges (NumPy's string estimators are not supported, as in JAX).

``digitize`` and ``searchsorted`` are defined with the control-flow based functions.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

import xjax._src.numpy as jnp
from xjax._src.core import dtypes, errors
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, check_arraylike, convert_element_type,
                                        promote_dtypes_inexact, to_jax)


def _shape(x):
    return tuple(aval_of(x).shape)


def _concrete_int(value, what):
    if isinstance(value, Tracer):
        concrete = value.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(value, f"The error occurred because of {what}.")
        value = concrete
    return operator.index(np.asarray(value).item()) if not isinstance(value, int) else value


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None,
             out_sharding=None):
    """Counts (or sums of ``weights``) of each non-negative integer in ``x``.

    Parameters
    ----------
    x : array_like of integers, 1-D
        Negative values count as 0 (as JAX clips them).
    weights : array_like, optional
        Of ``x``'s shape.
    minlength : int
    length : int, optional
        The static result length, needed under ``jit``; larger values are dropped.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.bincount(jnp.array([1, 2, 2, 5]))
    Array([0, 1, 2, 0, 0, 1], dtype=int32)
    """
    check_arraylike("bincount", x)
    x = to_jax(x)
    dtype = aval_of(x).dtype
    if dtype == dtypes.bool_:  # JAX counts booleans as 0 and 1
        x = convert_element_type(x, np.dtype(np.int32))
        dtype = aval_of(x).dtype
    if not dtypes.is_integer(dtype):
        raise TypeError(f"x argument to bincount must have an integer type; got {dtype.name}")
    if len(_shape(x)) != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = _concrete_int(minlength, "argument 'minlength' of jnp.bincount")
    if length is None:
        if isinstance(x, Tracer) and x.to_concrete_value() is None:
            raise errors.ConcretizationTypeError(
                x, "The error occurred because of argument 'x' of jnp.bincount. To avoid "
                   "this error, pass a static `length` argument.")
        values = np.asarray(x.to_concrete_value() if isinstance(x, Tracer) else x)
        length = max(minlength, int(values.max()) + 1 if values.size else 0)
    else:
        length = _concrete_int(length, "argument 'length' of jnp.bincount")
    if weights is None:
        weights = jnp.ones((), dtypes.default_int_dtype())
    else:
        weights = to_jax(weights)
        if _shape(weights) != _shape(x):
            raise ValueError("shape of weights must match shape of x.")
    counts = jnp.zeros((length,), aval_of(weights).dtype)
    return counts.at[jnp.clip(x, 0)].add(weights, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges :func:`histogram` uses: ``bins + 1`` evenly spaced edges over
    ``range`` (default: the data's minimum and maximum, widened by 0.5 each way when
    they are equal), or ``bins`` itself when it is an array of edges."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    (arr,) = promote_dtypes_inexact(to_jax(a))
    dtype = aval_of(arr).dtype
    if np.ndim(bins) == 1:
        return convert_element_type(to_jax(bins), dtype)
    bins = _concrete_int(bins, "argument 'bins' of jnp.histogram_bin_edges")
    if bins < 1:
        raise ValueError(f"`bins` must be positive, when an integer, got {bins}")
    if range is None:
        lo, hi = jnp.min(arr), jnp.max(arr)
    else:
        lo, hi = (convert_element_type(to_jax(r), dtype) for r in range)
    same = lo == hi
    half = jnp.asarray(0.5, dtype)
    lo = jnp.where(same, lo - half, lo)
    hi = jnp.where(same, hi + half, hi)
    return jnp.linspace(lo, hi, bins + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of ``a`` in each bin, and the bin edges.

    Bins are half-open ``[edge_i, edge_{i+1})`` except the last, which includes its right
    edge; values outside the edges are not counted. Counts have ``a``'s inexact dtype (or
    the weights'). ``density=True`` normalizes to a probability density.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> counts, edges = jnp.histogram(jnp.array([1., 2., 2., 4.]), bins=3)
    >>> counts
    Array([1., 2., 1.], dtype=float32)
    """
    check_arraylike("histogram", a)
    (arr,) = promote_dtypes_inexact(to_jax(a))
    if weights is None:
        weights = jnp.ones_like(arr)
    else:
        weights = to_jax(weights)
        if _shape(weights) != _shape(arr):
            raise ValueError("weights should have the same shape as a.")
        arr, weights = promote_dtypes_inexact(arr, weights)  # JAX bins in the common dtype
    arr, weights = jnp.ravel(arr), jnp.ravel(weights)
    edges = histogram_bin_edges(arr, bins, range, weights)
    n_edges = _shape(edges)[0]
    index = jnp.searchsorted(edges, arr, side="right")
    index = jnp.where(arr == edges[-1], n_edges - 1, index)
    counts = jnp.zeros((n_edges,), aval_of(weights).dtype).at[index].add(weights)[1:]
    if density:
        widths = jnp.diff(edges)
        counts = counts / widths / counts.sum()
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A D-dimensional histogram of ``sample`` (shape ``(N, D)``): counts of shape
    ``(bins_1, ..., bins_D)`` and the list of edges per dimension."""
    check_arraylike("histogramdd", sample)
    sample = to_jax(sample)
    if len(_shape(sample)) != 2:
        raise ValueError("histogramdd requires a 2-D sample of shape (N, D)")
    n, d = _shape(sample)
    if weights is not None:
        weights = to_jax(weights)
        if _shape(weights) != (n,):
            raise ValueError("should have one weight for each sample.")
    if not isinstance(bins, (list, tuple)) and np.ndim(bins) == 0:
        bins = d * [bins]
    if len(bins) != d:
        raise ValueError("should be a bin for each dimension.")
    indices, edges_by_dim = [], []
    for i in builtins.range(d):
        column = sample[:, i]
        edges = histogram_bin_edges(column, bins[i], None if range is None else range[i],
                                    weights)
        index = jnp.searchsorted(edges, column, side="right")
        index = jnp.where(column == edges[-1], index - 1, index)
        indices.append(index)
        edges_by_dim.append(edges)
    shape = tuple(_shape(e)[0] + 1 for e in edges_by_dim)
    flat = jnp.ravel_multi_index(tuple(indices), shape, mode="clip")
    hist = jnp.reshape(bincount(flat, weights, length=math.prod(shape)), shape)
    hist = hist[(slice(1, -1),) * d]
    if density:
        (hist,) = promote_dtypes_inexact(hist)
        hist = hist / hist.sum()
        for width in jnp.ix_(*[jnp.diff(e) for e in edges_by_dim]):
            hist = hist / width
    return hist, edges_by_dim



def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A 2-D histogram of the points ``(x[i], y[i])``: counts, x edges, y edges."""
    check_arraylike("histogram2d", x, y)
    try:
        n_bins = len(bins)
    except TypeError:
        n_bins = 1
    if n_bins not in (1, 2):
        edges = to_jax(bins)
        bins = [edges, edges]
    sample = jnp.stack([jnp.ravel(to_jax(x)), jnp.ravel(to_jax(y))], axis=1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


__all__ = ["bincount", "histogram_bin_edges", "histogram", "histogramdd", "histogram2d"]
