"""Sharding types: ``Mesh``, ``AbstractMesh``, ``AxisType``, ``PartitionSpec`` (``P``),
``Sharding``, ``NamedSharding``, ``SingleDeviceSharding`` and ``Shard``.

They describe how a global array is laid out over devices, with JAX 0.10.2's attributes,
reprs and errors; a sharded array holds one buffer per device (``runtime.sharded``) and
programs over several devices are partitioned by XLA (``transformations.jit_partitioned``).
The mesh context lives here too: ``set_mesh`` (and the deprecated ``with mesh:``), the mesh
``get_mesh`` returns, and the mesh results are placed over (``placement_mesh``).

This module is data only: it lives in ``core`` and imports nothing above ``runtime``.
"""

from __future__ import annotations

import enum
import math
import threading
import warnings
from collections import OrderedDict

import numpy as np

from xjax._src.runtime.sharded import note_multi_device


# -- AxisType --

class AxisType(enum.Enum):
    """How a mesh axis is used: ``Auto`` (compiler-chosen), ``Explicit`` (sharding in types)
    or ``Manual`` (inside ``shard_map``)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _normalize_axis_types(axis_names, axis_types, name):
    axis_types = ((AxisType.Auto,) * len(axis_names) if axis_types is None else axis_types)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if not all(isinstance(a, AxisType) for a in axis_types):
        raise TypeError(f"axis_types passed to {name} must be of type "
                        f"`jax.sharding.AxisType`. Got {axis_types} of type "
                        f"{tuple(type(a) for a in axis_types)}")
    if len(axis_names) != len(axis_types):
        raise ValueError("Number of axis names should match the number of axis_types. Got "
                         f"axis_names={axis_names} and axis_types={axis_types}")
    return axis_types


# -- PartitionSpec --

class _Unconstrained:
    def __repr__(self):
        return "UNCONSTRAINED"


_UNCONSTRAINED = _Unconstrained()


def _canonical_partition(p):
    if p is None or p is _UNCONSTRAINED:
        return p
    if isinstance(p, (list, tuple)):
        p = tuple(p)
        if len(p) == 1:
            return p[0]
        if len(p) == 0:
            return None
        return p
    return p


class PartitionSpec:
    """How each dimension of an array is split over mesh axes.

    Each entry names a mesh axis, a tuple of mesh axes (split over their product, major to
    minor), or None (not split). Missing trailing entries are None.

    Examples
    --------
    >>> from xjax.sharding import PartitionSpec as P
    >>> P('x', None)
    P('x', None)
    >>> P(('x', 'y'))[0]
    ('x', 'y')
    """

    __slots__ = ("_partitions", "unreduced", "reduced")
    UNCONSTRAINED = _UNCONSTRAINED

    def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
        parts = tuple(_canonical_partition(p) for p in partitions)
        unreduced = _as_frozenset(unreduced, "unreduced")
        reduced = _as_frozenset(reduced, "reduced")
        _check_reduced(parts, unreduced, reduced)
        object.__setattr__(self, "_partitions", parts)
        object.__setattr__(self, "unreduced", unreduced)
        object.__setattr__(self, "reduced", reduced)

    def __init_subclass__(cls, *args, **kwargs):
        raise TypeError("Subclassing `jax.P` is prohibited.")

    def __setattr__(self, name, value):
        raise AttributeError("PartitionSpec is immutable")

    @property
    def partitions(self) -> tuple:
        return self._partitions

    def __repr__(self):
        pr = repr(self._partitions)[1:-1]
        if not self.unreduced and not self.reduced:
            return f"P({pr})"
        parts = []
        if self.unreduced:
            parts.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            parts.append(f"reduced={set(self.reduced)!r}")
        pr = "" if not pr else f"{pr} " if pr.endswith(",") else f"{pr}, "
        return f"P({pr}{', '.join(parts)})"

    def __eq__(self, other):
        return (isinstance(other, PartitionSpec) and self._partitions == other._partitions
                and self.unreduced == other.unreduced and self.reduced == other.reduced)

    def __hash__(self):
        return hash((self._partitions, self.unreduced, self.reduced))

    def __reduce__(self):
        return (_make_spec, (self._partitions, self.unreduced, self.reduced))

    def _check_plain(self, what):
        if self.reduced or self.unreduced:
            raise ValueError(f"Using {what} is dangerous when PartitionSpec has non-empty "
                             "unreduced/reduced set. Please use spec.partitions")

    def __getitem__(self, i):
        self._check_plain("pspec[...]")
        return self._partitions[i]

    def __iter__(self):
        self._check_plain("*pspec")
        return iter(self._partitions)

    def __len__(self):
        return len(self._partitions)

    def __add__(self, other):
        if isinstance(other, PartitionSpec):
            return PartitionSpec(*self._partitions, *other._partitions,
                                 unreduced={*self.unreduced, *other.unreduced},
                                 reduced={*self.reduced, *other.reduced})
        if isinstance(other, tuple):
            return PartitionSpec(*self, *other)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, tuple):
            return PartitionSpec(*other, *self)
        return NotImplemented

    def index(self, value):
        return self._partitions.index(_canonical_partition(value))

    def count(self, value):
        return self._partitions.count(_canonical_partition(value))

    def update(self, partitions=None, unreduced=None, reduced=None):
        return PartitionSpec(*(self._partitions if partitions is None else partitions),
                             unreduced=self.unreduced if unreduced is None else unreduced,
                             reduced=self.reduced if reduced is None else reduced)

    def _normalized_spec_for_aval(self, ndim: int) -> "PartitionSpec":
        out = [None if p is _UNCONSTRAINED else p for p in self._partitions]
        out.extend([None] * (ndim - len(out)))
        return self.update(partitions=out)

    def _check_compatible_wrt_shape(self, shape):
        if len(shape) < len(self._partitions):
            extra = " For scalars the PartitionSpec should be P()" if len(shape) == 0 else ""
            raise ValueError(f"PartitionSpec {self} is only valid for values of rank at "
                             f"least {len(self._partitions)}, but was applied to a value of "
                             f"rank {len(shape)}.{extra}")


def _make_spec(partitions, unreduced, reduced):
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


def _as_frozenset(value, name):
    if isinstance(value, frozenset):
        return value
    if not isinstance(value, set):
        raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or "
                        f"`set`. Got type {value}")
    return frozenset(value)


def _check_reduced(partitions, unreduced, reduced):
    if not reduced and not unreduced:
        return
    for which, names in (("unreduced", unreduced), ("reduced", reduced)):
        if None in names:
            raise ValueError(f"{which} cannot contain None. All elements in {which} should "
                             "refer to the mesh axes.")
    if unreduced & reduced:
        raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
                         f"Got unreduced: {unreduced} and reduced: {reduced}")
    for partition in partitions:
        for p in partition if isinstance(partition, tuple) else (partition,):
            for which, names in (("unreduced", unreduced), ("reduced", reduced)):
                if p in names:
                    raise ValueError(f"partitions cannot overlap with {which} axes passed to "
                                     f"PartitionSpec. Got partitions: {partitions} and "
                                     f"{which} axes: {names}")


P = PartitionSpec
PartitionSpec.__module__ = "xjax"
PartitionSpec.__qualname__ = PartitionSpec.__name__ = "P"


def spec_names(entry) -> tuple:
    """The mesh axis names of one spec entry, major to minor (``()`` for None)."""
    if entry is None or entry is _UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


class IndivisibleError(ValueError):
    """A sharding splits an array dimension into parts of unequal size."""


def spec_axes(sharding, ndim) -> list:
    """Per dimension of a rank-``ndim`` value, the mesh axes ``sharding`` (a
    NamedSharding) splits it over."""
    parts = sharding.spec.partitions
    return [[n for n in spec_names(parts[d]) if n is not None] if d < len(parts) else []
            for d in range(ndim)]


class DuplicateSpecError(Exception):
    """A mesh axis appears in more than one dimension of a PartitionSpec."""

    def __init__(self, message, mesh=None, pspec=None):
        super().__init__(message)
        self.message = message
        self.mesh = mesh
        self.pspec = pspec

    def __str__(self):
        return self.message


def check_unique_names(spec: PartitionSpec, mesh=None) -> None:
    """Raise DuplicateSpecError if a mesh axis maps to two dimensions of ``spec``."""
    seen, dups = set(), []
    for entry in spec.partitions:
        for name in spec_names(entry):
            if name in seen and name not in dups:
                dups.append(name)
            seen.add(name)
    if dups:
        raise DuplicateSpecError(
            "A single NamedSharding spec specification can map every mesh axis to at most "
            f"one positional dimension, but {spec} has duplicate entries for "
            f"`{', '.join(map(str, dups))}`", mesh, spec)


# -- meshes --

class _BaseMesh:
    axis_names: tuple
    axis_types: tuple

    @property
    def shape(self) -> OrderedDict:
        return OrderedDict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def _name_to_type(self) -> dict:
        return dict(zip(self.axis_names, self.axis_types, strict=True))

    def _axes_of_type(self, kind):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True)
                     if t == kind)

    auto_axes = property(lambda self: self._axes_of_type(AxisType.Auto))
    explicit_axes = property(lambda self: self._axes_of_type(AxisType.Explicit))
    manual_axes = property(lambda self: self._axes_of_type(AxisType.Manual))
    are_all_axes_auto = property(
        lambda self: bool(self.axis_types) and all(t == AxisType.Auto for t in self.axis_types))
    are_all_axes_explicit = property(
        lambda self: bool(self.axis_types) and all(t == AxisType.Explicit
                                                   for t in self.axis_types))
    are_all_axes_manual = property(
        lambda self: bool(self.axis_types) and all(t == AxisType.Manual
                                                   for t in self.axis_types))


class Mesh(_BaseMesh):
    """A named grid of devices: ``devices`` (an ndarray of devices) and one axis name per
    dimension.

    Parameters
    ----------
    devices : array_like of Device
    axis_names : str or sequence of hashable
    axis_types : tuple of AxisType, optional
        Defaults to ``AxisType.Auto`` for every axis.

    Examples
    --------
    >>> import numpy as np, xjax
    >>> from xjax.sharding import Mesh
    >>> Mesh(np.array(xjax.devices()[:1]), ('x',))
    Mesh(axis_sizes=(1,), axis_names=('x',), axis_types=(Auto,))
    """

    __slots__ = ("devices", "axis_names", "axis_types", "size", "_key")

    def __init__(self, devices, axis_names, axis_types=None):
        if not isinstance(devices, np.ndarray):
            devices = np.array(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if any(n is None for n in axis_names):
            raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
        if devices.ndim != len(axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length "
                "of its second argument (`axis_names`), but got "
                f"devices.ndim == {devices.ndim} and len(axis_names) == {len(axis_names)}.")
        axis_types = _normalize_axis_types(axis_names, axis_types, "Mesh")
        devices = devices.copy()
        devices.flags.writeable = False
        flat = tuple(devices.flat)
        empty = not axis_names and (not flat or flat[0] is None)
        set_ = object.__setattr__
        set_(self, "devices", devices)
        set_(self, "axis_names", axis_names)
        set_(self, "axis_types", axis_types)
        set_(self, "size", 0 if empty else math.prod(devices.shape))
        set_(self, "_key", (tuple(id(d) for d in flat), devices.shape, axis_names, axis_types))
        _mesh_keepalive.setdefault(self._key, flat)

    def __setattr__(self, name, value):
        raise AttributeError("Mesh is immutable")

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __reduce__(self):
        return (Mesh, (self.devices, self.axis_names, self.axis_types))

    axis_sizes = property(lambda self: tuple(self.devices.shape))
    empty = property(lambda self: self.size == 0)
    is_multi_process = property(lambda self: False)
    is_scalar = property(lambda self: self.size == 1 and not self.axis_names)
    local_mesh = property(lambda self: self)
    _flat_devices_tuple = property(lambda self: tuple(self.devices.flat))

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list:
        return list(self.devices.flat)

    @property
    def _flat_devices_set(self) -> set:
        return set(self.devices.flat)

    @property
    def abstract_mesh(self) -> "AbstractMesh":
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)

    def update(self, devices=None, axis_names=None, axis_types=None) -> "Mesh":
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    def __enter__(self):
        warnings.warn("`with mesh:` context manager has been deprecated. Please use `with "
                      "jax.set_mesh(mesh):` instead.", DeprecationWarning, stacklevel=2)
        _mesh_state.stack.append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _mesh_state.stack.pop()
        return False

    def __str__(self):
        if self.empty:
            return "Mesh()"
        body = ", ".join(f"'{k}': {v}" for k, v in self.shape.items())
        return f"Mesh({body}, axis_types={self.axis_types})"

    def __repr__(self):
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
                f"axis_types={self.axis_types})")


# Devices referenced by a mesh's key (ids) stay alive while the process runs.
_mesh_keepalive: dict = {}


class AbstractMesh(_BaseMesh):
    """A mesh's axis names, sizes and types, without devices."""

    __slots__ = ("axis_sizes", "axis_names", "axis_types", "size")

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        axis_sizes, axis_names = tuple(axis_sizes), tuple(axis_names)
        object.__setattr__(self, "axis_sizes", axis_sizes)
        object.__setattr__(self, "axis_names", axis_names)
        object.__setattr__(self, "axis_types",
                           _normalize_axis_types(axis_names, axis_types, "AbstractMesh"))
        object.__setattr__(self, "size", math.prod(axis_sizes) if axis_sizes else 0)

    def __setattr__(self, name, value):
        raise AttributeError("AbstractMesh is immutable")

    def __eq__(self, other):
        return (isinstance(other, AbstractMesh) and self.axis_sizes == other.axis_sizes
                and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types)

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names, self.axis_types))

    empty = property(lambda self: self.size == 0)
    abstract_mesh = property(lambda self: self)

    def update(self, axis_sizes=None, axis_names=None, axis_types=None):
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types)

    def __repr__(self):
        body = (", ".join(f"'{n}': {v}" for n, v in self.shape_tuple)
                if self.shape_tuple else "()")
        return f"AbstractMesh({body}, axis_types={self.axis_types})"


EMPTY_MESH = Mesh(np.empty((), dtype=object), ())


class _MeshState(threading.local):
    """``stack``: the meshes of ``set_mesh`` and ``with mesh:``, innermost last;
    ``placing``: the mesh ``set_mesh`` set (None under ``with mesh:`` alone), over which
    jit and eager operations place their results, as JAX's context mesh."""

    def __init__(self):
        self.stack = []
        self.placing = None


_mesh_state = _MeshState()


def get_mesh() -> Mesh:
    """The mesh set by ``set_mesh`` (or ``with mesh:``), or an empty mesh."""
    return _mesh_state.stack[-1] if _mesh_state.stack else EMPTY_MESH


class _MeshTypes:
    """The context of ``with_axis_types``: ``mesh`` is the current mesh inside (for
    ``get_mesh`` and PartitionSpecs); results are still placed over ``set_mesh``'s."""

    def __init__(self, mesh):
        self._mesh = mesh

    def __enter__(self):
        _mesh_state.stack.append(self._mesh)
        return self._mesh

    def __exit__(self, exc_type, exc_value, traceback):
        _mesh_state.stack.pop()
        return False


def with_axis_types(mesh) -> _MeshTypes:
    """A context in which the current mesh is ``mesh``, the mesh ``set_mesh`` set with
    other axis types (the same devices and axes): ``auto_axes`` makes its axes Auto
    inside this way."""
    return _MeshTypes(mesh)


def concrete_mesh_for(abstract):
    """The mesh set with ``set_mesh`` (or ``with mesh:``) that ``abstract`` (an
    AbstractMesh) stands for: the same axis names and sizes; None when none is set."""
    mesh = get_mesh()
    if mesh.empty or mesh.axis_names != abstract.axis_names or \
            mesh.axis_sizes != abstract.axis_sizes:
        return None
    return mesh


def spelled_as_typed(sharding, ndim: int):
    """``sharding`` spelled as a type spells it: over a mesh whose axes are all Explicit,
    its spec names every one of the ``ndim`` dimensions (``P('x', None)``, JAX's layout of a
    typed result); otherwise as it is."""
    if not all(t is AxisType.Explicit for t in sharding.mesh.axis_types) or \
            len(sharding.spec) >= ndim:
        return sharding
    return sharding.with_spec(PartitionSpec(*tuple(sharding.spec),
                                            *(None,) * (ndim - len(sharding.spec))))


def placement_mesh():
    """The mesh set with ``set_mesh`` (not ``with mesh:``), or None: programs run over its
    devices and their results are laid out over it (replicated unless split), as in JAX
    0.10 (``jnp.ones(3).sharding`` is ``NamedSharding(mesh, P())`` under it)."""
    return _mesh_state.placing


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh of the current mesh context (empty outside one)."""
    return get_mesh().abstract_mesh


class _SetMesh:
    """The context returned by ``set_mesh``: the mesh is already set; leaving the ``with``
    block restores the previous one."""

    def __init__(self, previous, previous_placing):
        self._previous = previous
        self._previous_placing = previous_placing

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        _mesh_state.stack[:] = self._previous
        _mesh_state.placing = self._previous_placing
        return False


def set_mesh(mesh):
    """Set the current mesh (used by ``shard_map``, ``smap`` and ``reshard`` when no mesh is
    given). Usable as a statement or as a context manager that restores the previous mesh.

    Parameters
    ----------
    mesh : Mesh or None
        None clears the mesh.
    """
    if mesh is not None and not isinstance(mesh, Mesh):
        raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
    previous, previous_placing = list(_mesh_state.stack), _mesh_state.placing
    empty = mesh is None or mesh.empty
    _mesh_state.stack[:] = [] if empty else [mesh]
    _mesh_state.placing = None if empty else mesh
    if not empty:
        note_multi_device()  # eager operations and jit look for the placement mesh now
    return _SetMesh(previous, previous_placing)


# -- shardings --

class Sharding:
    """Base class of shardings: how a global array maps to devices."""

    memory_kind = None

    @property
    def device_set(self) -> set:
        raise NotImplementedError(f"{type(self).__name__}.device_set")

    @property
    def _device_assignment(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}._device_assignment")

    def devices_indices_map(self, global_shape) -> dict:
        raise NotImplementedError(f"{type(self).__name__}.devices_indices_map")

    @property
    def is_fully_replicated(self) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.is_fully_replicated")

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def addressable_devices(self) -> set:
        return self.device_set

    def addressable_devices_indices_map(self, global_shape) -> dict:
        return self.devices_indices_map(global_shape)

    def shard_shape(self, global_shape) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}.shard_shape")

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """Whether ``self`` and ``other`` place every shard of a rank-``ndim`` array on the
        same devices."""
        if not isinstance(other, Sharding):
            return False
        if self._device_assignment != other._device_assignment:
            return False
        try:
            probe = tuple(_divisible_probe(self, other, ndim))
        except NotImplementedError:
            return self == other
        return self.devices_indices_map(probe) == other.devices_indices_map(probe)


def _divisible_probe(a, b, ndim):
    """A shape every dimension of which both shardings divide."""
    out = []
    for d in range(ndim):
        out.append(math.lcm(_tiling(a, d), _tiling(b, d)))
    return out


def _tiling(sharding, dim) -> int:
    if isinstance(sharding, SingleDeviceSharding):
        return 1
    if isinstance(sharding, NamedSharding):
        spec = sharding.spec
        entry = spec.partitions[dim] if dim < len(spec.partitions) else None
        return math.prod(sharding.mesh.shape[n] for n in spec_names(entry))
    raise NotImplementedError


class SingleDeviceSharding(Sharding):
    """The whole array on one device.

    Examples
    --------
    >>> import xjax
    >>> xjax.numpy.ones(3).sharding
    SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self._memory_kind = memory_kind

    memory_kind = property(lambda self: self._memory_kind or "device")
    device_set = property(lambda self: {self._device})
    _device_assignment = property(lambda self: (self._device,))
    is_fully_replicated = property(lambda self: True)

    def devices_indices_map(self, global_shape) -> dict:
        return {self._device: (slice(None),) * len(global_shape)}

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)

    def with_memory_kind(self, kind):
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def __eq__(self, other):
        return (isinstance(other, SingleDeviceSharding) and self._device == other._device
                and self.memory_kind == other.memory_kind)

    def __hash__(self):
        return hash((SingleDeviceSharding, self._device, self.memory_kind))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


class NamedSharding(Sharding):
    """An array split over a ``Mesh`` according to a ``PartitionSpec``.

    Parameters
    ----------
    mesh : Mesh
    spec : PartitionSpec
        One entry per leading array dimension: a mesh axis name, a tuple of them, or None.
    memory_kind : str, optional

    Examples
    --------
    >>> import numpy as np, xjax
    >>> from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    >>> mesh = Mesh(np.array(xjax.devices()[:1]), ('x',))
    >>> NamedSharding(mesh, P('x')).shard_shape((4, 2))
    (4, 2)
    """

    __slots__ = ("_mesh", "_spec", "_memory_kind")

    def __init__(self, mesh, spec, *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"mesh should be of type `jax.sharding.Mesh` or "
                            f"`jax.sharding.AbstractMesh`. Got {type(mesh)}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError("spec of NamedSharding should be of type `PartitionSpec`. Got "
                            f"{spec} of type {type(spec)}")
        check_unique_names(spec, mesh)
        for entry in spec.partitions:
            for name in spec_names(entry):
                if name not in mesh.axis_names:
                    raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: "
                                     f"{tuple(mesh.shape.keys())}.")
        self._mesh = mesh
        self._spec = spec
        self._memory_kind = memory_kind

    mesh = property(lambda self: self._mesh)
    spec = property(lambda self: self._spec)

    @property
    def memory_kind(self):
        """The memory kind given, else ``"device"`` over a ``Mesh`` (None over an
        ``AbstractMesh``, which has no devices), as in JAX."""
        if self._memory_kind is None and isinstance(self._mesh, Mesh):
            return "device"
        return self._memory_kind

    @property
    def device_set(self) -> set:
        return set(self._require_devices().devices.flat)

    @property
    def _device_assignment(self) -> tuple:
        return tuple(self._require_devices().devices.flat)

    def _require_devices(self) -> Mesh:
        if not isinstance(self._mesh, Mesh):
            raise ValueError("a NamedSharding over an AbstractMesh has no devices")
        return self._mesh

    @property
    def is_fully_replicated(self) -> bool:
        return all(self._mesh.shape[n] == 1 for entry in self._spec.partitions
                   for n in spec_names(entry))

    @property
    def num_devices(self) -> int:
        return self._mesh.size

    def _partition_counts(self, ndim: int) -> list:
        parts = self._spec.partitions
        return [math.prod(self._mesh.shape[n] for n in spec_names(parts[d]))
                if d < len(parts) else 1 for d in range(ndim)]

    def check_compatible_shape(self, global_shape) -> None:
        """Raise ValueError unless ``global_shape`` has enough dimensions and each split
        dimension divides evenly."""
        global_shape = tuple(global_shape)
        self._spec._check_compatible_wrt_shape(global_shape)
        for dim, (size, count) in enumerate(zip(global_shape,
                                                self._partition_counts(len(global_shape)),
                                                strict=True)):
            if size % count:
                counts = self._partition_counts(len(global_shape))
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {dim} is partitioned {count} "
                    f"times, but the dimension size is {size} (full shape: {global_shape}, "
                    f"per-dimension tiling factors: {counts} should evenly divide the shape)")

    def shard_shape(self, global_shape) -> tuple:
        self.check_compatible_shape(global_shape)
        return tuple(s // c for s, c in zip(global_shape,
                                            self._partition_counts(len(global_shape)),
                                            strict=True))

    def devices_indices_map(self, global_shape) -> dict:
        global_shape = tuple(global_shape)
        shard = self.shard_shape(global_shape)
        mesh = self._require_devices()
        parts = self._spec.partitions
        out = {}
        for position in np.ndindex(*mesh.axis_sizes):
            coords = dict(zip(mesh.axis_names, position, strict=True))
            index = []
            for d in range(len(global_shape)):
                names = spec_names(parts[d]) if d < len(parts) else ()
                if not names or shard[d] == global_shape[d]:
                    index.append(slice(None))
                    continue
                block = 0
                for name in names:
                    block = block * mesh.shape[name] + coords[name]
                index.append(slice(block * shard[d], (block + 1) * shard[d]))
            out[mesh.devices[position]] = tuple(index)
        return out

    def with_spec(self, spec) -> "NamedSharding":
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(self._mesh, spec, memory_kind=self._memory_kind)

    def with_memory_kind(self, kind) -> "NamedSharding":
        return NamedSharding(self._mesh, self._spec, memory_kind=kind)

    def update(self, **kwargs) -> "NamedSharding":
        return NamedSharding(kwargs.get("mesh", self._mesh), kwargs.get("spec", self._spec),
                             memory_kind=kwargs.get("memory_kind", self._memory_kind))

    def _normalized_spec(self) -> tuple:
        parts = list(self._spec.partitions)
        while parts and parts[-1] is None:
            parts.pop()
        return tuple(parts)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self._mesh == other._mesh
                and self._spec == other._spec and self.memory_kind == other.memory_kind)

    def __hash__(self):
        return hash((NamedSharding, self._mesh, self._spec, self.memory_kind))

    def __repr__(self):
        mesh = self._mesh
        mesh_repr = str(mesh) if isinstance(mesh, Mesh) else repr(mesh)
        kind = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={mesh_repr}, spec={self._spec!r}{kind})"


class Shard:
    """One device's piece of an array: ``device``, ``index`` (slices into the global
    array), ``replica_id`` and ``data``. A shard of a sharded array is given its data,
    index and replica id; a single-device array's one shard is the whole array."""

    __slots__ = ("_device", "_sharding", "_global_shape", "_array", "_index", "_replica_id")

    def __init__(self, device, sharding, global_shape, data=None, *, index=None,
                 replica_id=0):
        self._device = device
        self._sharding = sharding
        self._global_shape = tuple(global_shape)
        self._array = data
        self._index = index
        self._replica_id = replica_id

    device = property(lambda self: self._device)

    @property
    def index(self) -> tuple:
        if self._index is not None:
            return self._index
        return self._sharding.devices_indices_map(self._global_shape)[self._device]

    @property
    def replica_id(self) -> int:
        return self._replica_id

    @property
    def data(self):
        if self._array is None or self._index is not None:
            return self._array
        index = self.index
        if all(s == slice(None) for s in index):
            return self._array
        return self._array[index]

    def __repr__(self):
        return (f"Shard(device={self._device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def resolve_put_target(shape, target):
    """The device ``device_put`` places a value of ``shape`` on for ``target`` (a Device or
    a Sharding), after checking ``shape`` against a NamedSharding."""
    if isinstance(target, NamedSharding):
        target.check_compatible_shape(shape)
        return target._device_assignment[0]
    if isinstance(target, Sharding):
        return target._device_assignment[0]
    return target


__all__ = ["AbstractMesh", "AxisType", "DuplicateSpecError", "IndivisibleError", "Mesh", "NamedSharding", "P",
           "PartitionSpec", "Shard", "Sharding", "SingleDeviceSharding", "get_abstract_mesh",
           "get_mesh", "set_mesh"]
