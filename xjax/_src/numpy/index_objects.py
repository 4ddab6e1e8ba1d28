"""Index-trick objects: ``mgrid`` and ``ogrid`` (dense and open grids from slices) and
``r_`` and ``c_`` (concatenation along an axis from slices, scalars and arrays).

A slice ``start:stop:step`` is ``arange(start, stop, step)``; an imaginary step ``Nj``
means ``linspace(start, stop, N)`` with the end point, as in NumPy.
"""

from __future__ import annotations

import numpy as np

import xjax._src.numpy as jnp
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import aval_of, to_jax


def _shape(x):
    return tuple(aval_of(x).shape)


def _slice_values(s: slice):
    """The 1-D array a slice stands for."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return jnp.linspace(start, s.stop, int(abs(step)), endpoint=True)
    return jnp.arange(start, s.stop, step)


def _grid_dtype(slices):
    """Floats when any bound or step is (or the step is imaginary), else integers."""
    values = [v for s in slices for v in (s.start, s.stop, s.step) if v is not None]
    if any(isinstance(v, complex) for v in values) or any(
            isinstance(v, (float, np.floating)) for v in values):
        return dtypes.default_float_dtype()
    return dtypes.default_int_dtype()


class _Grid:
    def __init__(self, sparse: bool, name: str):
        self.sparse = sparse
        self.name = name

    def __repr__(self) -> str:
        return f"jnp.{self.name}"

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key).astype(_grid_dtype([key]))
        slices = tuple(key)
        dtype = _grid_dtype(slices)
        axes = [_slice_values(s).astype(dtype) for s in slices]
        if not axes:
            return [] if self.sparse else jnp.zeros((0,), dtype)
        grids = jnp.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else jnp.stack(grids, 0)


mgrid = _Grid(sparse=False, name="mgrid")
ogrid = _Grid(sparse=True, name="ogrid")


class _Concatenator:
    """NumPy's AxisConcatenator: a leading string item ``'axis[,ndmin[,trans1d]]'``
    changes where items are joined, their minimum rank and where a 1-D item's axis goes."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __repr__(self) -> str:
        return f"jnp.{self.name}"

    def __len__(self) -> int:
        return 0

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive in ("r", "c"):
                raise NotImplementedError("Matrix directives 'r' and 'c' are not "
                                          f"supported by jnp.{self.name}.")
            parts = [int(p) for p in directive.split(",")]
            axis = parts[0]
            if len(parts) > 1:
                ndmin = parts[1]
            if len(parts) > 2:
                trans1d = parts[2]
            if len(parts) > 3:
                raise ValueError(f"too many directives in {directive!r}")
        arrays = []
        for item in items:
            if isinstance(item, str):
                raise ValueError("string directives must be the first index")
            value = _slice_values(item) if isinstance(item, slice) else to_jax(item)
            arrays.append(self._promote_rank(value, ndmin, trans1d))
        if not arrays:
            return jnp.zeros((0,))
        return jnp.concatenate(arrays, axis=axis)

    @staticmethod
    def _promote_rank(value, ndmin, trans1d):
        rank = len(_shape(value))
        if rank == 0:
            value = jnp.reshape(value, (1,))
            rank = 1
        if ndmin <= rank:
            return value
        missing = ndmin - rank
        value = jnp.reshape(value, (1,) * missing + _shape(value))
        if trans1d != -1:
            position = trans1d if trans1d >= 0 else trans1d + missing + 1
            order = list(range(ndmin))
            order = order[:position] + order[missing:] + order[position:missing]
            value = jnp.transpose(value, order)
        return value


r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")

__all__ = ["mgrid", "ogrid", "r_", "c_"]
