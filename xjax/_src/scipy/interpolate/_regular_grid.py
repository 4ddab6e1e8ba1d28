"""Multilinear and nearest-neighbour interpolation on a rectilinear grid (SciPy's
``RegularGridInterpolator``, restricted as JAX restricts it)."""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from xjax._src.core.pytree import register_pytree_node
from xjax._src.numpy._promotion import check_arraylike, promote_dtypes_inexact
import xjax._src.numpy as jnp

_METHODS = ("linear", "nearest")
_NAME = "RegularGridInterpolator"


def _jnp():
    return jnp


def _check_method(method) -> None:
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _query_points(xi, ndim: int):
    """``xi`` as an array of shape ``(..., ndim)``, accepting SciPy's forms: a tuple of
    per-axis coordinate arrays (broadcast together), or one array whose last axis holds
    the coordinates (a 1-D array being one point per ``ndim`` entries)."""
    jnp = _jnp()
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        per_axis = jnp.broadcast_arrays(*xi)
        # SciPy (and JAX) stack per-axis coordinates as the default float type.
        return jnp.stack(per_axis, axis=-1).astype(float)
    check_arraylike(_NAME, xi)
    points = jnp.asarray(xi)
    if points.ndim == 1:
        points = points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Interpolate values given on a rectilinear grid.

    xjax's (and JAX's) version of :class:`scipy.interpolate.RegularGridInterpolator`. The
    interpolator is a pytree (children: the grid, the values and ``fill_value``), so it can
    be passed through ``jit``, ``vmap`` and ``grad``.

    Parameters
    ----------
    points : sequence of arrays
        The grid coordinates of each of the first ``len(points)`` axes of ``values``, each
        strictly increasing. This is not checked (it could not be under ``jit``): a
        decreasing axis gives wrong results, as in JAX.
    values : array
        Grid values; axes beyond ``len(points)`` are carried along (vector-valued data).
        Promoted to an inexact dtype.
    method : {'linear', 'nearest'}, optional
        Multilinear interpolation, or the value of the nearest grid point (ties go to the
        lower point).
    bounds_error : bool, optional
        Must be False: an error depending on values cannot be raised under ``jit``, so True
        raises ``NotImplementedError``, as in JAX.
    fill_value : scalar or None, optional
        Value returned outside the grid; None extrapolates from the edge cells. Default NaN.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> grid = (jnp.array([1.0, 2.0, 3.0]), jnp.array([4.0, 5.0, 6.0]))
    >>> values = jnp.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0], [70.0, 80.0, 90.0]])
    >>> interpolate = RegularGridInterpolator(grid, values)
    >>> interpolate(jnp.array([[1.5, 4.5], [2.2, 5.8]]))
    Array([30., 64.], dtype=float32)
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        _check_method(method)
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike(_NAME, values)
        jnp = _jnp()
        if len(points) > jnp.ndim(values):
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{jnp.ndim(values)} dimensions")
        (values,) = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike(_NAME, fill_value)
            fill_value = jnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        check_arraylike(_NAME, *points)
        self.method = method
        self.bounds_error = bounds_error
        self.fill_value = fill_value
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        """Interpolate at the points ``xi`` (shape ``(..., ndim)``, or a tuple of per-axis
        coordinate arrays); the result has shape ``xi.shape[:-1] + values.shape[ndim:]``."""
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        batch_shape = xi.shape[:-1]
        flat = xi.reshape(-1, ndim)
        cells, fractions, outside = self._locate(flat)
        if method == "linear":
            result = self._linear(cells, fractions)
        else:
            result = self._nearest(cells, fractions)
        if self.fill_value is not None:
            trailing = (1,) * (result.ndim - 1)
            result = _jnp().where(outside.reshape(outside.shape + trailing),
                                  self.fill_value, result)
        return result.reshape(batch_shape + self.values.shape[ndim:])

    def _locate(self, flat_points):
        """Per axis, the cell ``[g[i], g[i+1]]`` holding each point (edge cells for points
        outside) and the point's position in it (0 at ``g[i]``, 1 at ``g[i+1]``); plus
        whether each point lies outside the grid on any axis."""
        jnp = _jnp()
        cells, fractions = [], []
        outside = jnp.zeros(flat_points.shape[:1], dtype=bool)
        for axis, g in enumerate(self.grid):
            x = flat_points[:, axis]
            cell = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            lower = g[cell]
            cells.append(cell)
            fractions.append((x - lower) / (g[cell + 1] - lower))
            outside = outside | (x < g[0]) | (x > g[-1])
        return cells, fractions, outside

    def _broadcast_weight(self, weight):
        return weight.reshape(weight.shape + (1,) * (self.values.ndim - len(self.grid)))

    def _linear(self, cells, fractions):
        # Sum over the 2**ndim corners of each cell, weighted by the product over axes of
        # (1 - t) at the lower corner and t at the upper one.
        terms = []
        for upper in itertools.product((False, True), repeat=len(cells)):
            index = tuple(c + 1 if u else c for c, u in zip(cells, upper, strict=True))
            weight = functools.reduce(operator.mul, [
                t if u else 1 - t for t, u in zip(fractions, upper, strict=True)])
            terms.append(self.values[index] * self._broadcast_weight(weight))
        return functools.reduce(operator.add, terms)

    def _nearest(self, cells, fractions):
        jnp = _jnp()
        index = tuple(jnp.where(t <= 0.5, c, c + 1)
                      for c, t in zip(cells, fractions, strict=True))
        return self.values[index]


def _flatten(interpolator):
    children = (interpolator.grid, interpolator.values, interpolator.fill_value)
    return children, (interpolator.method, interpolator.bounds_error)


def _unflatten(aux, children):
    # Rebuilt without re-validating: under transformations the leaves are tracers or
    # placeholders that the constructor's checks need not accept.
    interpolator = object.__new__(RegularGridInterpolator)
    interpolator.grid, interpolator.values, interpolator.fill_value = children
    interpolator.method, interpolator.bounds_error = aux
    return interpolator


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
