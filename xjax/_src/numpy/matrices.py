"""Diagonals and triangles: ``diagonal``, ``diag``, ``trace``, ``tri``, ``tril``, ``triu``
(``pad`` is in :mod:`xjax.numpy.padding`)."""

from __future__ import annotations

import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        convert_element_type, to_jax)
from xjax._src.numpy.creation import zeros
from xjax._src.numpy.extended import moves_elements
from xjax._src.numpy.indexing import rewriting_take, scatter_update
from xjax._src.numpy.logic import where
from xjax._src.numpy.shape_ops import broadcast_to, moveaxis
from xjax._src.numpy.ufuncs import const
from xjax._src.numpy.reductions import sum as sum_
from xjax._src.numpy.nested_jit import jit_when_staged


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape)


@jit_when_staged(static_argnames=("offset", "axis1", "axis2"))
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The ``offset``-th diagonal of the 2-D slices over ``axis1`` and ``axis2`` (last
    axis of the result).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.diagonal(jnp.arange(9).reshape(3, 3), 1)
    Array([1, 5], dtype=int32)
    """
    check_arraylike("diagonal", a)
    a = to_jax(a)
    rank = len(_shape(a))
    if rank < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    axis1, axis2 = canonicalize_axis(axis1, rank), canonicalize_axis(axis2, rank)
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 must not be equal")
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = _shape(a)[-2:]
    offset = operator.index(offset)
    n = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    i = np.arange(n, dtype=np.int32)
    return rewriting_take(a, (Ellipsis, i - min(offset, 0), i + max(offset, 0)))


@jit_when_staged(static_argnames=('axis1', 'axis2', 'dtype'))
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """Sum along a diagonal (see :func:`diagonal`)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@jit_when_staged('_diag', static_argnames=('k',))
def diag(v, k: int = 0):
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with 1-D ``v`` on it."""
    check_arraylike("diag", v)
    v = to_jax(v)
    k = operator.index(k)
    if len(_shape(v)) == 2:
        return diagonal(v, k)
    if len(_shape(v)) != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = _shape(v)[0] + abs(k)
    i = np.arange(_shape(v)[0], dtype=np.int32)
    out = zeros((n, n), aval_of(v).dtype)
    return scatter_update(out, (i - min(k, 0), i + max(k, 0)), v, "set")


def _triangle_mask(rows, cols, k, lower: bool):
    i = lax.broadcasted_iota(np.dtype(np.int32), (rows, cols), 0)
    j = lax.broadcasted_iota(np.dtype(np.int32), (rows, cols), 1)
    shifted = lax.add(i, const(i, k))
    return lax.ge(shifted, j) if lower else lax.le(shifted, j)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    """Ones at and below the ``k``-th diagonal of an ``N`` x ``M`` array."""
    M = N if M is None else M
    dtype = dtypes.default_float_dtype() if dtype is None else \
        dtypes.check_and_canonicalize_user_dtype(dtype, "tri")
    return convert_element_type(_triangle_mask(N, M, operator.index(k), True), dtype, False)


def _triangle(name, m, k, lower):
    check_arraylike(name, m)
    m = to_jax(m)
    if len(_shape(m)) < 2:
        raise ValueError(f"{name} requires an array of at least two dimensions.")
    rows, cols = _shape(m)[-2:]
    mask = broadcast_to(_triangle_mask(rows, cols, operator.index(k), lower), _shape(m))
    return where(mask, m, const(m, 0))


@jit_when_staged(static_argnames=('k',))
@moves_elements("m")
def tril(m, k: int = 0):
    """``m`` with the elements above the ``k``-th diagonal zeroed."""
    return _triangle("tril", m, k, True)


@jit_when_staged(static_argnames=('k',))
@moves_elements("m")
def triu(m, k: int = 0):
    """``m`` with the elements below the ``k``-th diagonal zeroed."""
    return _triangle("triu", m, k, False)


__all__ = ["diagonal", "trace", "diag", "tri", "tril", "triu"]
