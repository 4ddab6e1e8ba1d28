"""Sorting and searching: ``sort``, ``argsort``, ``lexsort``, ``partition``,
``argpartition``, ``sort_complex``, and the sorted-set operations (``unique`` and its
Array API variants, ``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``).
Quantiles live in ``xjax.numpy.quantiles``.

Everything is built on ``lax.sort`` (JAX's order: NaNs last, ``-0.0 == 0.0``, complex
lexicographic; stable). Functions whose result size depends on values need a concrete
argument, or a static ``size=`` (then ``fill_value`` pads), as in JAX.
"""

from __future__ import annotations

import collections
import operator

import numpy as np

import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, concrete_value, canonicalize_axis,
                                        check_arraylike, convert_element_type, to_jax)
from xjax._src.numpy.nested_jit import jit_when_staged

_INT = np.dtype(np.int32)


def _shape(x):
    return tuple(aval_of(x).shape)


def _dtype(x):
    return aval_of(x).dtype


def _no_order(name, order):
    if order is not None:
        raise NotImplementedError(f"The 'order' argument to {name} is not supported.")


def _flatten_or_axis(a, axis):
    """``(array, axis)``: ``a`` raveled for ``axis=None``, else the canonical axis."""
    if axis is None:
        return jnp.ravel(a), 0
    return a, canonicalize_axis(axis, len(_shape(a)))


# -- sort, argsort, lexsort --

# Eager sorts run on NumPy at every size: XLA's CPU sort takes 216 ms for 1e6 float32 in
# JAX and xjax alike, NumPy's 6-95 ms (lax.sorting._sort_impl).
@jit_when_staged(static_argnames=('axis', 'kind', 'order', 'stable', 'descending'),
                 eager_direct=True)
def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False):
    """A sorted copy of ``a`` along ``axis`` (flattened for ``axis=None``).

    NaNs sort last, ``-0.0`` and ``0.0`` are equal, complex values sort by real then
    imaginary part. ``descending=True`` reverses the ascending result (as JAX), so equal
    elements come out in reverse order, and so do their gradients.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.sort(jnp.array([3, 1, 2]))
    Array([1, 2, 3], dtype=int32)
    """
    check_arraylike("sort", a)
    _no_order("sort", order)
    arr, axis = _flatten_or_axis(to_jax(a), axis)
    result = lax.sort(arr, dimension=axis, is_stable=stable)
    return lax.rev(result, (axis,)) if descending else result


@jit_when_staged(static_argnames=('axis', 'kind', 'order', 'stable', 'descending', 'dtype'),
                 eager_direct=True)
def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False, dtype=None):
    """Indices that sort ``a`` along ``axis``; equal elements keep their order (also with
    ``descending=True``, unless ``stable=False``: then, as in JAX, the ascending order is
    reversed).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.argsort(jnp.array([3, 1, 2]))
    Array([1, 2, 0], dtype=int32)
    """
    check_arraylike("argsort", a)
    _no_order("argsort", order)
    arr, axis = _flatten_or_axis(to_jax(a), axis)
    index_dtype = _INT if dtype is None else dtypes.check_and_canonicalize_user_dtype(
        dtype, "argsort")
    shape = _shape(arr)
    iota = lax.broadcasted_iota(index_dtype, shape, axis)
    if descending and stable:
        # JAX's order: sort the reversed array and positions, then reverse the result, so
        # equal elements keep their original order
        arr, iota = lax.rev(arr, (axis,)), lax.rev(iota, (axis,))
    indices = lax.sort((arr, iota), dimension=axis, is_stable=stable, num_keys=1)[1]
    return lax.rev(indices, (axis,)) if descending else indices


@jit_when_staged(static_argnames=('axis',))
def lexsort(keys, axis: int = -1):
    """Indices that sort by several keys, the *last* key primary (as NumPy).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.lexsort((jnp.array([1, 0, 1]), jnp.array([0, 0, 1])))
    Array([1, 0, 2], dtype=int32)
    """
    key_arrays = [to_jax(k) for k in keys]
    if len(key_arrays) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({_shape(k) for k in key_arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = _shape(key_arrays[0])
    if shape == ():
        return jnp.asarray(0, dtype=_INT)
    axis = canonicalize_axis(axis, len(shape))
    iota = lax.broadcasted_iota(_INT, shape, axis)
    return lax.sort((*key_arrays[::-1], iota), dimension=axis,
                    num_keys=len(key_arrays))[-1]


@jit_when_staged()
def sort_complex(a):
    """``a`` sorted (by real, then imaginary part) as a complex array."""
    check_arraylike("sort_complex", a)
    arr = sort(a, axis=0)
    return convert_element_type(arr, dtypes.to_complex_dtype(_dtype(arr)))


# -- partition --

def _descending_key(x):
    """Values whose descending order is ``x``'s ascending order (no overflow for
    integers)."""
    dtype = _dtype(x)
    if dtype == np.bool_:
        raise TypeError("neg does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    if dtypes.is_integer(dtype):
        return lax.bitwise_not(x)
    return lax.neg(x)


def _kth(kth, size, name):
    kth = operator.index(concrete_value(kth, f"kth argument of jnp.{name}()").item()
                         if not isinstance(kth, int) else kth)
    if not -size <= kth < size:
        raise ValueError(f"kth(={kth}) out of bounds ({size})")
    return kth + size if kth < 0 else kth


def _along_last_axis(name, a, kth, axis):
    """``(a with axis moved last, checked kth, canonical axis)`` for (arg)partition."""
    check_arraylike(name, a)
    arr = to_jax(a)
    axis = canonicalize_axis(axis, len(_shape(arr)))
    kth = _kth(kth, _shape(arr)[axis], name)
    return jnp.moveaxis(arr, axis, -1), kth, axis


def partition(a, kth: int, axis: int = -1):
    """``a`` rearranged along ``axis`` so that element ``kth`` is where sorting puts it,
    the smaller ones before (ascending) and the others after (descending), as JAX does.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.partition(jnp.array([5, 1, 4, 2, 3, 0]), 2)
    Array([0, 1, 2, 5, 4, 3], dtype=int32)
    """
    moved, kth, axis = _along_last_axis("partition", a, kth, axis)
    n = _shape(moved)[-1]
    bottom_positions = lax.top_k(_descending_key(moved), kth + 1)[1]
    bottom = jnp.take_along_axis(moved, bottom_positions, axis=-1)
    top = lax.top_k(moved, n - kth - 1)[0]
    return jnp.moveaxis(lax.concatenate([bottom, top], len(_shape(moved)) - 1), -1, axis)


def argpartition(a, kth: int, axis: int = -1):
    """Indices that partition ``a`` (see :func:`partition`): the ``kth + 1`` smallest
    first (ascending), then the others in increasing index order.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.argpartition(jnp.array([5, 1, 4, 2, 3, 0]), 2)
    Array([5, 1, 3, 0, 2, 4], dtype=int32)
    """
    moved, kth, axis = _along_last_axis("argpartition", a, kth, axis)
    n = _shape(moved)[-1]
    bottom = lax.top_k(_descending_key(moved), kth + 1)[1]
    # the rest: positions not among `bottom`, found by top_k of a 0/1 marker, which keeps
    # equal markers in index order
    taken = jnp.any(bottom[..., :, None] == jnp.arange(n, dtype=_INT), axis=-2)
    marker = convert_element_type(jnp.logical_not(taken), _INT)
    top = lax.top_k(marker, n - kth - 1)[1]
    return jnp.moveaxis(lax.concatenate([bottom, top], len(_shape(moved)) - 1), -1, axis)


# -- unique --

_UniqueAllResult = collections.namedtuple("_UniqueAllResult",
                                          ["values", "indices", "inverse_indices", "counts"])
_UniqueCountsResult = collections.namedtuple("_UniqueCountsResult", ["values", "counts"])
_UniqueInverseResult = collections.namedtuple("_UniqueInverseResult",
                                              ["values", "inverse_indices"])


def _is_new(prev, cur, equal_nan):
    """Whether sorted neighbours differ (NaNs equal to each other when ``equal_nan``)."""
    differ = lax.ne(prev, cur)
    dtype = _dtype(cur)
    if equal_nan and (dtypes.is_float(dtype) or dtypes.is_complex(dtype)):
        both_nan = jnp.logical_and(jnp.isnan(prev), jnp.isnan(cur))
        differ = jnp.logical_and(differ, jnp.logical_not(both_nan))
    return differ


def _group_starts(aux, equal_nan):
    """A boolean mask of the first element of each run of equal (sorted) elements; for
    2-D ``aux`` rows are compared whole."""
    n = _shape(aux)[0]
    if n == 0:
        return jnp.zeros((0,), bool)
    differ = _is_new(aux[:-1], aux[1:], equal_nan)
    if len(_shape(aux)) > 1:
        differ = jnp.any(differ, axis=tuple(range(1, len(_shape(aux)))))
    return lax.concatenate([jnp.ones((1,), bool), differ], 0)


def _count(mask, size, name):
    """The number of selected elements: ``size`` when static, else the concrete count."""
    if size is not None:
        return operator.index(size)
    context = (f"The error arose for the first argument of jnp.{name}(). To make "
               f"jnp.{name}() compatible with JIT and other transforms, you can specify a "
               "concrete value for the size argument, which will determine the output size.")
    return int(concrete_value(mask, context).sum())


def _unique_sorted(aux, perm, mask, n_out, fill_value, return_index, return_counts):
    """Values (and first indices, counts) of the runs that ``mask`` starts in sorted
    ``aux``, padded to ``n_out`` entries."""
    n = _shape(aux)[0]
    starts = jnp.nonzero(mask, size=n_out + 1, fill_value=n)[0]
    valid = jnp.arange(n_out) < jnp.sum(mask)
    # padding repeats the smallest value and its first index, as JAX pads
    first = jnp.where(valid, starts[:n_out], 0)
    values = aux[first]
    if fill_value is not None:
        fill = convert_element_type(to_jax(fill_value), _dtype(aux))
        shape = (n_out,) + (1,) * (len(_shape(aux)) - 1)
        values = jnp.where(jnp.reshape(valid, shape), values, fill)
    out = [values]
    if return_index:
        out.append(perm[first])
    if return_counts:
        out.append(convert_element_type(jnp.diff(starts), _INT))
    return out


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None, sorted: bool = True):  # noqa: A002
    """The sorted unique elements of ``ar`` (or unique slices along ``axis``).

    Parameters
    ----------
    ar : array_like
    return_index, return_inverse, return_counts : bool
        Also return the index of each value's first occurrence, the index of each element's
        value in the result (``ar``'s shape for ``axis=None``), and the counts.
    axis : int, optional
    equal_nan : bool
        Collapse NaNs into one value.
    size : int, optional
        A static result size, needed under ``jit``: results are truncated or padded with
        ``fill_value`` (default: the smallest value; indices and counts pad with the first
        value's index and 0).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.unique(jnp.array([3, 1, 3, 2]))
    Array([1, 2, 3], dtype=int32)
    """
    check_arraylike("unique", ar)
    arr = to_jax(ar)
    if dtypes.is_complex(_dtype(arr)):  # as JAX: a NaN part makes the whole value NaN
        arr = jnp.where(jnp.isnan(arr), jnp.asarray(np.nan, _dtype(arr)), arr)
    if axis is None:
        flat = jnp.ravel(arr)
        perm = argsort(flat)
        aux = flat[perm]
    else:
        axis = canonicalize_axis(axis, len(_shape(arr)))
        moved = jnp.moveaxis(arr, axis, 0)
        n = _shape(moved)[0]
        rows = jnp.reshape(moved, (n, -1))
        iota = lax.iota(_INT, n)
        columns = [rows[:, j] for j in range(_shape(rows)[1])]
        perm = lax.sort((*columns, iota), dimension=0, num_keys=max(len(columns), 1))[-1] \
            if columns else iota
        aux = rows[perm]
    mask = _group_starts(aux, equal_nan)
    n_out = _count(mask, size, "unique")
    if _shape(aux)[0] == 0 and n_out:
        if fill_value is None:
            raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                             "fill_value must be specified")
        if return_index or return_inverse or return_counts or axis is not None:
            raise NotImplementedError("jnp.unique of an empty array with a nonzero size "
                                      "returns only the values")
        return jnp.full((n_out,), convert_element_type(to_jax(fill_value), _dtype(aux)))
    outs = _unique_sorted(aux, perm, mask, n_out, fill_value, return_index, return_counts)
    if axis is not None:
        outs[0] = jnp.moveaxis(jnp.reshape(outs[0], (n_out, *_shape(moved)[1:])), 0, axis)
    if return_inverse:
        in_sorted = convert_element_type(jnp.cumsum(mask), _INT) - 1
        inverse = jnp.zeros(_shape(perm), _INT).at[perm].set(in_sorted)
        if axis is None:
            inverse = jnp.reshape(inverse, _shape(arr))
        outs.insert(2 if return_index else 1, inverse)
    return outs[0] if len(outs) == 1 else tuple(outs)


def unique_all(x, /, *, size: int | None = None, fill_value=None):
    """Unique values with first indices, inverse indices and counts (NaNs distinct)."""
    values, indices, inverse, counts = unique(x, True, True, True, equal_nan=False,
                                              size=size, fill_value=fill_value)
    return _UniqueAllResult(values, indices, inverse, counts)


def unique_counts(x, /, *, size: int | None = None, fill_value=None):
    """Unique values and their counts (NaNs distinct)."""
    values, counts = unique(x, return_counts=True, equal_nan=False, size=size,
                            fill_value=fill_value)
    return _UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size: int | None = None, fill_value=None):
    """Unique values and the inverse indices, of ``x``'s shape (NaNs distinct)."""
    values, inverse = unique(x, return_inverse=True, equal_nan=False, size=size,
                             fill_value=fill_value)
    return _UniqueInverseResult(values, inverse)


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    """Unique values (NaNs distinct)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# -- set operations on sorted values --

def _sorted_unique(x, assume_unique):
    """``(aux, perm, is_first)``: ``x`` raveled and sorted, its sorting permutation, and a
    mask of the first of each run of equal values (all true when ``assume_unique``)."""
    flat = jnp.ravel(to_jax(x))
    perm = argsort(flat)
    aux = flat[perm]
    if assume_unique:
        return aux, perm, jnp.ones(_shape(aux), bool)
    return aux, perm, _group_starts(aux, equal_nan=True)  # JAX's unique collapses NaNs


def _member(values, sorted_other):
    """Whether each of ``values`` occurs in ``sorted_other`` (a binary search)."""
    n = _shape(sorted_other)[0]
    if n == 0:
        return jnp.zeros(_shape(values), bool), jnp.zeros(_shape(values), _INT)
    position = jnp.minimum(jnp.searchsorted(sorted_other, values, side="left"), n - 1)
    return lax.eq(sorted_other[position], values), position


def _select(values, keep, size, fill_value, default_fill, name):
    """``values[keep]`` (order kept), padded or truncated to a static ``size``."""
    n_out = _count(keep, size, name)
    if n_out == 0:
        return values[:0]
    n = _shape(values)[0]
    if n == 0:  # nothing to select: all padding
        fill = 0 if fill_value is None else to_jax(fill_value)
        return jnp.full((n_out,), convert_element_type(fill, _dtype(values)))
    positions = jnp.nonzero(keep, size=n_out, fill_value=max(n - 1, 0))[0]
    out = values[positions]
    if size is None:
        return out
    if fill_value is None and default_fill == "first":
        # JAX pads with the least result (NaN if one is NaN), or 0 when there is none
        valid = jnp.arange(n_out) < jnp.sum(keep)
        least = jnp.min(jnp.where(valid, out, out[0]))
        fill = jnp.where(jnp.any(valid), least, jnp.zeros((), _dtype(values)))
    elif fill_value is None:
        fill = jnp.zeros((), _dtype(values))
    else:
        fill = convert_element_type(to_jax(fill_value), _dtype(values))
    return jnp.where(jnp.arange(n_out) < jnp.sum(keep), out, fill)


def _promoted(ar1, ar2):
    a, b = jnp.ravel(to_jax(ar1)), jnp.ravel(to_jax(ar2))
    dtype = dtypes.result_type(a, b)
    return convert_element_type(a, dtype), convert_element_type(b, dtype)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value=None):
    """The sorted values in both ``ar1`` and ``ar2`` (with ``return_indices``, also the
    index of each one's first occurrence in each).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.intersect1d(jnp.array([3, 1, 2]), jnp.array([2, 3, 4]))
    Array([2, 3], dtype=int32)
    """
    check_arraylike("intersect1d", ar1, ar2)
    a, b = _promoted(ar1, ar2)
    aux1, perm1, first1 = _sorted_unique(a, assume_unique)
    aux2, perm2, _ = _sorted_unique(b, assume_unique)
    found, position = _member(aux1, aux2)
    keep = jnp.logical_and(first1, found)
    values = _select(aux1, keep, size, fill_value, "first", "intersect1d")
    if not return_indices:
        return values
    # indices pad with each array's size, as JAX's do
    index1 = _select(perm1, keep, size, _shape(a)[0], "first", "intersect1d")
    index2 = _select(perm2[position] if _shape(aux2)[0] else position, keep, size,
                     _shape(b)[0], "first", "intersect1d")
    return values, index1, index2


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
    """The sorted values in either array."""
    check_arraylike("union1d", ar1, ar2)
    a, b = _promoted(ar1, ar2)
    return unique(lax.concatenate([a, b], 0), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
              fill_value=None):
    """The sorted unique values of ``ar1`` not in ``ar2`` (``fill_value`` defaults to 0)."""
    check_arraylike("setdiff1d", ar1, ar2)
    a, b = _promoted(ar1, ar2)
    if assume_unique:  # NumPy keeps ar1's order then
        aux1, first1 = a, jnp.ones(_shape(a), bool)
    else:
        aux1, _, first1 = _sorted_unique(a, False)
    aux2 = sort(b)
    found, _ = _member(aux1, aux2)
    keep = jnp.logical_and(first1, jnp.logical_not(found))
    return _select(aux1, keep, size, fill_value, "zero", "setdiff1d")


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
             fill_value=None):
    """The sorted values in exactly one of the arrays."""
    check_arraylike("setxor1d", ar1, ar2)
    a, b = _promoted(ar1, ar2)
    aux1, _, first1 = _sorted_unique(a, assume_unique)
    aux2, _, first2 = _sorted_unique(b, assume_unique)
    keep1 = jnp.logical_and(first1, jnp.logical_not(_member(aux1, aux2)[0]))
    keep2 = jnp.logical_and(first2, jnp.logical_not(_member(aux2, aux1)[0]))
    values = lax.concatenate([aux1, aux2], 0)
    keep = lax.concatenate([keep1, keep2], 0)
    if _shape(values)[0] == 0:
        return _select(values, keep, size, fill_value, "first", "setxor1d")
    # the kept values first, in sorted order
    dropped, values = lax.sort((jnp.logical_not(keep), values), num_keys=2)
    return _select(values, jnp.logical_not(dropped), size, fill_value, "first", "setxor1d")


__all__ = ["sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition",
           "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "intersect1d", "union1d", "setdiff1d", "setxor1d"]
