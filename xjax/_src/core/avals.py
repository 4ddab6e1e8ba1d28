"""Abstract values: what tracing knows about an array (shape, dtype, weak type)."""

from __future__ import annotations

import math

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.sharding_types import AbstractMesh, NamedSharding, PartitionSpec

_EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


class AbstractValue:
    """Base of abstract values (what tracing knows of a value), as JAX's ``core.AbstractValue``."""

    __slots__ = ()


def _check_unsplit(sharding) -> None:
    """xjax's types carry no sharding: one that splits no dimension (what xjax's avals give)
    says nothing more, any other is refused rather than dropped."""
    spec = getattr(sharding, "spec", None)
    if spec is None or any(entry is not None for entry in spec):
        raise NotImplementedError(
            f"ShapedArray(sharding={sharding}): xjax's types do not carry shardings yet; "
            "only a NamedSharding that splits no dimension is accepted.")


class ShapedArray(AbstractValue):
    """The abstract value of an array: a static shape, a dtype and a weak-type flag.

    ``weak_type`` marks values born from Python scalars; they defer to the other operand's
    dtype in promotion, as in JAX.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False, *, sharding=None):
        if sharding is not None:
            _check_unsplit(sharding)
        self.shape = tuple(shape)
        self.dtype = dtype if type(dtype) is np.dtype or isinstance(
            dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def sharding(self) -> NamedSharding:
        """The sharding in the type, as JAX gives it outside a mesh context: a
        ``NamedSharding`` over the empty ``AbstractMesh``, no dimension split
        (``P(None, None)`` for a matrix)."""
        return NamedSharding(_EMPTY_ABSTRACT_MESH, PartitionSpec(*(None,) * len(self.shape)))

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def to_tangent_aval(self) -> ShapedArray:
        """The type of this type's tangents (and cotangents): the same for inexact dtypes,
        ``float0`` for integers and booleans (the weak type is kept, as in JAX)."""
        if dtypes.is_inexact(self.dtype):
            return self
        return ShapedArray(self.shape, dtypes.float0, self.weak_type)

    to_ct_aval = to_tangent_aval
    at_least_vspace = to_tangent_aval  # JAX's older name

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
