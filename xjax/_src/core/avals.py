"""Abstract values: what tracing knows about an array (shape, dtype, weak type)."""

from __future__ import annotations

import math

import numpy as np

from xjax._src.core import dtypes


class ShapedArray:
    """The abstract value of an array: a static shape, a dtype and a weak-type flag.

    ``weak_type`` marks values born from Python scalars; they defer to the other operand's
    dtype in promotion, as in JAX.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtype if type(dtype) is np.dtype else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def __eq__(self, other) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return self._hash

    def str_short(self, short_dtypes: bool = False) -> str:
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else self.dtype.name
        return f"{name}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    __str__ = __repr__


def aval_of_value(value, weak_type: bool = False) -> ShapedArray:
    """The aval of a concrete NumPy value."""
    return ShapedArray(np.shape(value), value.dtype, weak_type)


def python_scalar_aval(x) -> ShapedArray:
    """The aval of a Python scalar (bool, int, float, complex): its default dtype, weakly
    typed except for bools (bool is the bottom of the promotion lattice), as in JAX."""
    dtype = dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x))
    return ShapedArray((), dtype, type(x) is not bool)
