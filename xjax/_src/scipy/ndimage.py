"""``xjax.scipy.ndimage``: SciPy's N-dimensional image interpolation on xjax arrays (JAX's
``jax.scipy.ndimage``). Only :func:`map_coordinates` with spline orders 0 and 1 exists, as in
JAX.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.ndimage import map_coordinates
>>> image = jnp.arange(12.0).reshape(3, 4)
>>> map_coordinates(image, [jnp.array([0.5, 1.5]), jnp.array([1.5, 2.5])], order=1)
Array([3.5, 8.5], dtype=float32)
"""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
import xjax._src.numpy as jnp

__all__ = ["map_coordinates"]


def _jnp():
    return jnp


# -- boundary modes: each maps integer sample indices (any value) into [0, size) --


def _clamp_index(index, size: int):
    return _jnp().clip(index, 0, size - 1)


def _wrap_index(index, size: int):
    # SciPy's 'grid-wrap': the image repeats with period `size`.
    return index % size


def _mirror_index(index, size: int):
    # Reflection about the centres of the edge samples: period 2 * (size - 1), edge samples
    # not repeated (d c b | a b c d | c b a).
    if size == 1:
        return _jnp().zeros_like(index)
    last = size - 1
    return last - _jnp().abs(index % (2 * last) - last)


def _reflect_index(index, size: int):
    # Reflection about the outer edges of the edge samples: period 2 * size, edge samples
    # repeated (c b a | a b c d | d c b). SciPy calls this 'grid-mirror' too.
    folded = index % (2 * size)
    return _jnp().where(folded < size, folded, 2 * size - 1 - folded)


_INDEX_MAPS = {
    "constant": _clamp_index,  # out-of-range samples are replaced by cval afterwards
    "nearest": _clamp_index,
    "wrap": _wrap_index,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


# -- interpolation nodes: per axis, a list of (integer index, weight) pairs --


def _nearest_nodes(coordinate):
    jnp = _jnp()
    if dtypes.issubdtype(coordinate.dtype, np.integer):
        rounded = coordinate
    else:
        rounded = lax.round(coordinate, lax.RoundingMethod.AWAY_FROM_ZERO)
    return [(rounded.astype(np.int32), jnp.ones((), coordinate.dtype))]


def _linear_nodes(coordinate):
    jnp = _jnp()
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower  # floor has zero derivative: gradients flow here
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


_NODES_BY_ORDER = {0: _nearest_nodes, 1: _linear_nodes}


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):
    """Sample ``input`` at fractional ``coordinates`` by spline interpolation.

    xjax's (and JAX's) version of :func:`scipy.ndimage.map_coordinates`.

    Parameters
    ----------
    input : array_like
        N-dimensional array of samples at integer positions.
    coordinates : sequence of array_like
        N arrays (one per axis of ``input``, broadcast together) of the positions to sample.
    order : int
        0 for nearest-neighbour (coordinates rounded half away from zero), 1 for linear
        interpolation. Higher orders raise ``NotImplementedError``.
    mode : str, optional
        How positions outside ``input`` are treated: ``'constant'`` (samples outside are
        ``cval``; SciPy's ``'grid-constant'``), ``'nearest'`` (edge sample repeated),
        ``'wrap'`` (periodic; SciPy's ``'grid-wrap'``), ``'mirror'`` (reflection about the
        edge samples) or ``'reflect'`` (reflection about the outer edges).
    cval : scalar, optional
        Value of samples outside ``input`` when ``mode='constant'``.

    Returns
    -------
    Array
        The interpolated values, with the broadcast shape of ``coordinates`` and the dtype
        of ``input`` (integer results are rounded half away from zero).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> map_coordinates(jnp.array([1.0, 2.0, 4.0]), [jnp.array([0.5, 1.25, 3.0])], order=1)
    Array([1.5, 2.5, 0. ], dtype=float32)
    >>> map_coordinates(jnp.array([1.0, 2.0, 4.0]), [jnp.array([3.0])], order=0, mode="wrap")
    Array([1.], dtype=float32)
    """
    jnp = _jnp()
    image = jnp.asarray(input)
    coordinate_arrays = [jnp.asarray(c) for c in coordinates]
    if len(coordinate_arrays) != image.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinate_arrays)} != {image.ndim}")
    index_map = _INDEX_MAPS.get(mode)
    if index_map is None:
        raise NotImplementedError(
            f"xjax.scipy.ndimage.map_coordinates does not support mode {mode!r}; supported "
            f"modes are {sorted(_INDEX_MAPS)}.")
    make_nodes = _NODES_BY_ORDER.get(order)
    if make_nodes is None:
        raise NotImplementedError(
            f"xjax.scipy.ndimage.map_coordinates supports order 0 and 1 only, got {order!r}.")

    # Per axis: (in-range index, is-inside mask or None, weight) for each node.
    axis_nodes = []
    for coordinate, size in zip(coordinate_arrays, image.shape, strict=True):
        nodes = []
        for index, weight in make_nodes(coordinate):
            inside = (index >= 0) & (index < size) if mode == "constant" else None
            nodes.append((index_map(index, size), inside, weight))
        axis_nodes.append(nodes)

    fill = jnp.asarray(cval, dtype=image.dtype)
    terms = []
    for corner in itertools.product(*axis_nodes):
        indices, masks, weights = zip(*corner, strict=True)
        samples = image[indices]
        if mode == "constant":
            samples = jnp.where(functools.reduce(operator.and_, masks), samples, fill)
        terms.append(functools.reduce(operator.mul, weights) * samples)
    result = functools.reduce(operator.add, terms)
    if (dtypes.issubdtype(image.dtype, np.integer)
            and dtypes.issubdtype(result.dtype, np.inexact)):
        result = lax.round(result, lax.RoundingMethod.AWAY_FROM_ZERO)
    return result.astype(image.dtype)
