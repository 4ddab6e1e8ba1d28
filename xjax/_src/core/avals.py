"""Abstract values: what tracing knows about an array (shape, dtype, weak type)."""

from __future__ import annotations

import math

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.sharding_types import AbstractMesh, NamedSharding, PartitionSpec, spec_names

_EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


class AbstractValue:
    """Base of abstract values (what tracing knows of a value), as JAX's ``core.AbstractValue``."""

    __slots__ = ()


# Set once a type carries a sharding: until then tracing skips the sharding rules.
typed_shardings = [False]


def type_sharding(sharding, ndim: int):
    """The sharding a type of rank ``ndim`` carries for ``sharding``: a ``NamedSharding``
    over its mesh's ``AbstractMesh`` when the spec splits a dimension over an Explicit
    axis, as JAX's types do; None otherwise (Auto axes, no split: the type says nothing)."""
    spec = getattr(sharding, "spec", None)
    mesh = getattr(sharding, "mesh", None)
    if spec is None or mesh is None or not spec:
        return None
    explicit = set(mesh.explicit_axes)
    if not explicit:
        return None
    entries = tuple(spec) + (None,) * (ndim - len(spec))
    if len(entries) != ndim:
        raise ValueError(f"a sharding of rank {len(spec)} for a type of rank {ndim}: "
                         f"{sharding}")
    if not any(name in explicit for entry in entries for name in spec_names(entry)):
        return None
    if not isinstance(mesh, AbstractMesh):
        mesh = mesh.abstract_mesh
    typed_shardings[0] = True
    return NamedSharding(mesh, PartitionSpec(*entries))


def dimension_text(size, entry) -> str:
    """JAX's text of one dimension of a sharded type: ``8@x``, ``8@(x,y)``."""
    names = spec_names(entry)
    if not names:
        return str(size)
    return f"{size}@{names[0]}" if len(names) == 1 else f"{size}@({','.join(names)})"


class ShapedArray(AbstractValue):
    """The abstract value of an array: a static shape, a dtype and a weak-type flag.

    ``weak_type`` marks values born from Python scalars; they defer to the other operand's
    dtype in promotion, as in JAX.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash", "_sharding")

    def __init__(self, shape, dtype, weak_type: bool = False, *, sharding=None):
        self.shape = tuple(shape)
        self.dtype = dtype if type(dtype) is np.dtype or isinstance(
            dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        # Explicit-axis splits only (``type_sharding``); None: not split in the type
        self._sharding = None if sharding is None else type_sharding(sharding, len(self.shape))
        if self._sharding is None:
            self._hash = hash((self.shape, self.dtype, self.weak_type))
        else:
            self._hash = hash((self.shape, self.dtype, self.weak_type, self._sharding))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def sharding(self) -> NamedSharding:
        """The sharding in the type: over Explicit mesh axes, the ``NamedSharding`` (over an
        ``AbstractMesh``) the array was placed or computed with; otherwise, as JAX gives it
        outside a mesh context, the empty ``AbstractMesh`` with no dimension split
        (``P(None, None)`` for a matrix)."""
        if self._sharding is not None:
            return self._sharding
        return NamedSharding(_EMPTY_ABSTRACT_MESH, PartitionSpec(*(None,) * len(self.shape)))

    def update(self, shape=None, dtype=None, weak_type=None, sharding=None) -> "ShapedArray":
        """A copy with the given fields replaced; the sharding is kept while the shape is."""
        shape = self.shape if shape is None else tuple(shape)
        if sharding is None and shape == self.shape:
            sharding = self._sharding
        return ShapedArray(shape, self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           sharding=sharding)

    def with_sharding(self, sharding) -> "ShapedArray":
        """This type with ``sharding`` in it (None: none)."""
        if sharding is None and self._sharding is None:
            return self
        return ShapedArray(self.shape, self.dtype, self.weak_type, sharding=sharding)

    def strip_weak_type(self) -> "ShapedArray":
        if not self.weak_type:
            return self
        return ShapedArray(self.shape, self.dtype, False, sharding=self._sharding)

    def to_tangent_aval(self) -> ShapedArray:
        """The type of this type's tangents (and cotangents): the same for inexact dtypes,
        ``float0`` for integers and booleans (the weak type and sharding are kept, as in
        JAX)."""
        if dtypes.is_inexact(self.dtype):
            return self
        return ShapedArray(self.shape, dtypes.float0, self.weak_type, sharding=self._sharding)

    to_ct_aval = to_tangent_aval
    at_least_vspace = to_tangent_aval  # JAX's older name

    def __eq__(self, other) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self._sharding == other._sharding)

    def __hash__(self) -> int:
        return self._hash

    def str_short(self, short_dtypes: bool = False) -> str:
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else self.dtype.name
        if self._sharding is None:
            return f"{name}[{','.join(str(d) for d in self.shape)}]"
        spec = self._sharding.spec
        return f"{name}[{','.join(map(dimension_text, self.shape, spec))}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    def __str__(self) -> str:  # JAX's: the short form, "~" marking a weak type
        return f"~{self.str_short()}" if self.weak_type else self.str_short()


def aval_of_value(value, weak_type: bool = False) -> ShapedArray:
    """The aval of a concrete NumPy value."""
    return ShapedArray(np.shape(value), value.dtype, weak_type)


def python_scalar_aval(x) -> ShapedArray:
    """The aval of a Python scalar (bool, int, float, complex): its default dtype, weakly
    typed except for bools (bool is the bottom of the promotion lattice), as in JAX."""
    dtype = dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x))
    return ShapedArray((), dtype, type(x) is not bool)
