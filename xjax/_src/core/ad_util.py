"""Values the differentiation rules and interpreters share: symbolic zeros, undefined
primals, tangent avals."""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray, python_scalar_aval


class Zero:
    """A tangent or cotangent known to be zero, standing for an array of ``aval``."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval})"

    @staticmethod
    def from_primal_value(value) -> "Zero":
        """The zero tangent of ``value`` (float0 for integer and boolean values)."""
        return Zero(tangent_aval(get_aval(value)))


class UndefinedPrimal:
    """A linear operand whose value is not known: what transpose rules transpose against."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


def get_aval(x) -> ShapedArray:
    """The aval of an operand: Arrays and tracers carry one; others are concrete values
    (a type registered in :data:`pytype_aval_mappings` by its function there)."""
    aval = getattr(x, "aval", None)
    if type(aval) is ShapedArray:
        return aval
    registered = pytype_aval_mappings.get(type(x))
    if registered is not None:
        return registered(x)
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return python_scalar_aval(x)
    return _array_like_aval(x)


def _array_like_aval(x) -> ShapedArray:
    value = np.asarray(x)
    return ShapedArray(value.shape, dtypes.canonicalize_dtype(value.dtype), False)


# Concrete value types -> the function giving their aval (JAX's ``pytype_aval_mappings``):
# libraries register their array-like types, usually with the entry of ``np.ndarray``.
pytype_aval_mappings: dict = {
    np.ndarray: _array_like_aval,
    **{t: python_scalar_aval for t in (bool, int, float, complex)},
}


def is_differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_float(aval.dtype) or dtypes.is_complex(aval.dtype)


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of inexact values share their dtype; integers and booleans get float0."""
    if is_differentiable(aval):
        return aval
    return ShapedArray(aval.shape, dtypes.float0, False)
