"""Index helpers: grids (``meshgrid``, ``indices``, ``ix_``), flat/multi index conversion,
triangle and diagonal index arrays, ``isin``, and NumPy's ``s_``/``index_exp``."""

from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.array import Array, frozen_value
from xjax._src.core.avals import ShapedArray
from xjax._src.numpy._promotion import aval_of, canonicalize_shape, check_arraylike, stage, to_jax
from xjax._src.numpy.extended import moves_elements
from xjax._src.numpy.shape_ops import broadcast_to, ravel, reshape
from xjax._src.numpy.logic import clip, where, equal
from xjax._src.numpy.reductions import any as any_
from xjax._src.numpy.shape_ops import stack
from xjax._src.numpy.ufuncs import add, multiply, remainder, const
from xjax._src.numpy.nested_jit import jit_when_staged

s_ = np.s_
index_exp = np.index_exp


def _int_array(value) -> Array:
    value = frozen_value(np.asarray(value, dtypes.default_int_dtype()), value)
    return stage(Array._from_numpy(value, ShapedArray(value.shape, value.dtype, False)))


@moves_elements("xi", each_alone=True)
def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-D coordinate vectors (``indexing`` 'xy' or 'ij')."""
    check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    xi = [to_jax(x) for x in xi]
    if any(len(aval_of(x).shape) != 1 for x in xi):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[aval_of(x).shape for x in xi]}")
    sizes = [aval_of(x).shape[0] for x in xi]
    if indexing == "xy" and len(xi) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xi):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(xi) >= 2 else i
        shape = [1] * len(xi)
        shape[axis] = aval_of(x).shape[0]
        x = reshape(x, tuple(shape))
        out.append(x if sparse else broadcast_to(x, tuple(sizes)))
    return out


def indices(dimensions, dtype=None, sparse: bool = False):
    """Arrays of each index of a grid of shape ``dimensions`` (stacked unless ``sparse``)."""
    dimensions = canonicalize_shape(dimensions)
    dtype = dtypes.default_int_dtype() if dtype is None else \
        dtypes.check_and_canonicalize_user_dtype(dtype, "indices")
    grids = []
    for axis, n in enumerate(dimensions):
        shape = [1] * len(dimensions)
        shape[axis] = n
        grid = lax.broadcast_in_dim(lax.iota(dtype, n), tuple(shape), (axis,))
        grids.append(grid if sparse else broadcast_to(grid, dimensions))
    if sparse:
        return tuple(grids)
    if not grids:
        return lax.broadcast_in_dim(lax.iota(dtype, 0), (0,), (0,))
    return stack(grids)


def ix_(*args):
    """Open mesh from 1-D sequences: each result broadcasts along its own axis."""
    check_arraylike("ix_", *args)
    out = []
    for i, a in enumerate(args):
        a = to_jax(a)
        if len(aval_of(a).shape) != 1:
            raise ValueError("Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{aval_of(a).shape}")
        shape = [1] * len(args)
        shape[i] = aval_of(a).shape[0]
        out.append(reshape(a, tuple(shape)))
    return tuple(out)


def unravel_index(indices, shape):
    """Multi-indices of flat ``indices`` into an array of ``shape`` (negative indices count
    from the end; out-of-range ones are clipped, as in JAX)."""
    check_arraylike("unravel_index", indices)
    shape = canonicalize_shape(shape)
    indices = to_jax(indices)
    total = math.prod(shape)
    indices = where(lax.lt(indices, const(indices, 0)),
                    lax.add(indices, const(indices, total)), indices)
    indices = clip(indices, 0, max(total - 1, 0))
    out, stride = [], total
    for n in shape:
        stride //= n
        out.append(lax.rem(lax.div(indices, const(indices, stride)), const(indices, n)))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C"):
    """Flat indices of ``multi_index`` into an array of shape ``dims``; ``mode`` 'clip' or
    'wrap' handles out-of-range entries ('raise' needs concrete indices)."""
    dims = canonicalize_shape(dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    check_arraylike("ravel_multi_index", *multi_index)
    parts = [to_jax(i) for i in multi_index]
    if mode == "raise":
        for i, n in zip(parts, dims, strict=True):
            value = getattr(i, "to_concrete_value", lambda: None)()
            if value is None:
                raise ValueError("The error occurred because ravel_multi_index was jit-compiled "
                                 "with mode='raise'. Use mode='wrap' or mode='clip' instead.")
            if np.any((np.asarray(value) < 0) | (np.asarray(value) >= n)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        parts = [clip(i, 0, n - 1) for i, n in zip(parts, dims, strict=True)]
    elif mode == "wrap":
        parts = [remainder(i, n) for i, n in zip(parts, dims, strict=True)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    total = 0
    for axis in order_dims:
        total = add(multiply(total, dims[axis]), parts[axis])
    return total


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """Row and column indices of the lower triangle of an ``n`` x ``m`` array."""
    rows, cols = np.tril_indices(operator.index(n), operator.index(k),
                                 None if m is None else operator.index(m))
    return _int_array(rows), _int_array(cols)


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """Row and column indices of the upper triangle of an ``n`` x ``m`` array."""
    rows, cols = np.triu_indices(operator.index(n), operator.index(k),
                                 None if m is None else operator.index(m))
    return _int_array(rows), _int_array(cols)


def tril_indices_from(arr, k: int = 0):
    """:func:`tril_indices` for the shape of the 2-D ``arr``."""
    n, m = np.shape(arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k: int = 0):
    """:func:`triu_indices` for the shape of the 2-D ``arr``."""
    n, m = np.shape(arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2):
    """Indices of the main diagonal of an ``ndim``-dimensional array of side ``n``."""
    i = _int_array(np.arange(operator.index(n)))
    return (i,) * ndim


def diag_indices_from(arr):
    """:func:`diag_indices` for the (square) shape of ``arr``."""
    shape = np.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


_ISIN_METHODS = ("compare_all", "binary_search", "sort", "auto")


@jit_when_staged("_in1d", static_argnames=("assume_unique", "invert", "method"))
def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method="auto"):
    """Whether each element of ``element`` is in ``test_elements``.

    ``method`` names JAX's algorithms ('compare_all', 'binary_search', 'sort', 'auto'); they
    give the same booleans, and xjax compares every pair whichever is named.
    """
    if method not in _ISIN_METHODS:
        raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                         "'binary_search', 'sort', and 'auto'")
    check_arraylike("isin", element, test_elements)
    element = to_jax(element)
    tests = ravel(test_elements)
    shape = tuple(aval_of(element).shape)
    rank = len(shape)
    expanded = lax.broadcast_in_dim(element, shape + (1,), tuple(range(rank)))
    found = any_(equal(expanded, lax.broadcast_in_dim(tests, (1,) * rank + tuple(
        aval_of(tests).shape), (rank,))), axis=-1)
    return lax.bitwise_not(found) if invert else found


__all__ = ["s_", "index_exp", "meshgrid", "indices", "ix_", "unravel_index",
           "ravel_multi_index", "tril_indices", "triu_indices", "tril_indices_from",
           "triu_indices_from", "diag_indices", "diag_indices_from", "isin"]
