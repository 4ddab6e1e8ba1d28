"""``jit`` over several devices: one SPMD program that XLA's partitioner splits.

A jitted call whose arguments include an array sharded over several devices (placed by
``device_put`` with a ``NamedSharding``, or computed so) is lowered with Shardy shardings:
the mesh, each argument's sharding (unsharded arguments replicated), and compiled once per
combination of argument shardings with one partition per mesh device. The partitioner
inserts the collectives; its choice of result shardings is read back from the compiled
program and given to the results as ``NamedSharding``s over the same mesh, as JAX does.
"""

from __future__ import annotations

import itertools

import numpy as np

from xjax._src import runtime
from xjax._src.runtime.live_executables import BoundedCache
from xjax._src.core.array import Array, commit
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr
from xjax._src.interpreters.eval import (concrete_operand, set_own_mesh_finder,
                                         single_equation_jaxpr)
from xjax._src.core.sharding_types import (AbstractMesh, Mesh, NamedSharding, PartitionSpec,
                                           SingleDeviceSharding, concrete_mesh_for,
                                           placement_mesh, spec_axes, spelled_as_typed)
from xjax._src.lax.placement import reshard_p, sharding_constraint_p
from xjax._src.higher_order.jit_call import _runtime_value, merge_options
from xjax._src.higher_order.primitive import HigherOrderPrimitive
from xjax._src.higher_order.shard_map import is_multi_device, shard_map_p
from xjax._src.lowering.lower_jaxpr import Partitioning, donation_attributes, lower_module
from xjax._src.runtime.sharded import ShardedBuffer, output_shardings, shard_value


def partition_mesh(entry, flat, out_shardings=None):
    """The mesh a jitted call runs partitioned over, or None (one device): that of its
    sharded arguments, else of its multi-device ``out_shardings``, else of the
    multi-device sharding constraints or ``shard_map``s in its program."""
    for x in flat:
        sharding = argument_sharding(x)
        if sharding is not None:
            return sharding.mesh
    for s in out_shardings or ():
        if isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) and s.mesh.size > 1:
            return s.mesh
    placing = placement_mesh()
    if placing is not None:  # set_mesh's: the program runs over its devices (JAX's)
        return placing
    device = _placed_device(flat)
    if device is not None:
        return _device_mesh(device)
    cache = entry.partitioned
    if cache is None:
        cache = entry.partitioned = {}
    if None not in cache:
        cache[None] = _constraint_mesh(entry.closed.jaxpr)
    mesh = cache[None]
    if isinstance(mesh, AbstractMesh):  # constraints over the context mesh's axes
        return concrete_mesh_for(mesh)
    return mesh


def argument_sharding(x):
    """The sharding over several devices that a jit argument is laid out by, or None: a
    sharded Array's, or that of an abstract argument given to ``lower`` (a
    ``ShapeDtypeStruct(..., sharding=NamedSharding(...))``)."""
    if type(x) is Array:
        buffer = x._buffer
        return buffer.sharding if type(buffer) is ShardedBuffer else None
    sharding = getattr(x, "sharding", None)
    if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, Mesh) and \
            sharding.mesh.size > 1:
        return sharding
    return None


def _own_mesh(primitive, params):
    """The mesh an eager application of ``primitive`` runs over by itself: a ``shard_map``'s
    over several devices, or that of a multi-device map or constraint in the jaxprs a
    higher-order primitive holds."""
    if primitive is shard_map_p:
        mesh = params["mesh"]
        return mesh if is_multi_device(mesh) else None
    sharding = _placing_sharding(primitive, params)
    if sharding is not None:  # an eager constraint (or reshard) places its value, as JAX's
        if not isinstance(sharding, NamedSharding) or sharding.mesh.size == 1:
            return None
        mesh = sharding.mesh
        return concrete_mesh_for(mesh) if isinstance(mesh, AbstractMesh) else mesh
    if not isinstance(primitive, HigherOrderPrimitive):
        return None
    for value in params.values():
        for sub in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(sub, "jaxpr", sub)
            if isinstance(inner, Jaxpr):
                mesh = _constraint_mesh(inner)
                if isinstance(mesh, AbstractMesh):
                    mesh = concrete_mesh_for(mesh)
                if mesh is not None:
                    return mesh
    return None


set_own_mesh_finder(_own_mesh)


def _placing_sharding(primitive, params):
    """The sharding a sharding constraint or a reshard lays its value out by; None for
    any other primitive."""
    if primitive is sharding_constraint_p:
        return params["sharding"]
    if primitive is reshard_p:
        return params["dst_sharding"]
    return None


def _placed_device(flat):
    """The device other than the default one that an argument is committed to, or None:
    the program runs there, as JAX runs it on its committed arguments' device (uncommitted
    arguments move to the program's device)."""
    default = runtime.default_device()
    for x in flat:
        if type(x) is Array and x._buffer is not None and \
                type(x._buffer) is not ShardedBuffer and x.committed:
            device = x._buffer.device
            if device is not default:
                return device
    return None


_device_meshes: dict = {}


def _device_mesh(device) -> Mesh:
    """A one-device mesh: a program compiled for ``device`` alone."""
    mesh = _device_meshes.get(device)
    if mesh is None:
        grid = np.empty(1, dtype=object)
        grid[0] = device
        mesh = _device_meshes[device] = Mesh(grid, ("device",))
    return mesh


def _constraint_mesh(jaxpr):
    """The mesh of the first multi-device sharding constraint or ``shard_map`` in
    ``jaxpr`` (nested jaxprs included), or None."""
    for eqn in jaxpr.eqns:
        sharding = _placing_sharding(eqn.primitive, eqn.params)
        if isinstance(sharding, NamedSharding) and sharding.mesh.size > 1:
            return sharding.mesh  # a Mesh, or an AbstractMesh resolved at the call
        if eqn.primitive is shard_map_p and eqn.params["mesh"].size > 1:
            return eqn.params["mesh"]
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if isinstance(inner, Jaxpr):
                    found = _constraint_mesh(inner)
                    if found is not None:
                        return found
    return None


class PartitionedFunction:
    """An SPMD program for one combination of argument shardings: lowered when made,
    compiled at its first call (``Lowered.as_text`` needs only the text).

    ``donated`` flags the inputs the caller donates (``jit``'s donation vector, or None);
    the attribute then lists the positions whose buffers the program may reuse, as
    ``CompiledFunction.donated`` does.
    """

    __slots__ = ("_executable", "devices", "mesh", "replicated", "in_shardings",
                 "out_shardings", "out_indices", "const_args", "in_avals", "out_avals",
                 "text", "compiler_options", "donated", "_requested")

    def __init__(self, closed, name, mesh, in_shardings, out_shardings=None, donated=None,
                 compiler_options=None):
        self.mesh = mesh
        self.devices = list(mesh.devices.flat)
        self.replicated = NamedSharding(mesh, PartitionSpec())
        self.in_shardings = in_shardings
        self.in_avals, self.out_avals = closed.in_avals, closed.out_avals
        if out_shardings is None:  # results typed over this mesh's Explicit axes: as typed
            out_shardings = _typed_shardings(closed.out_avals, mesh)
        self._requested = out_shardings  # result shardings XLA is told
        out_specs = None if out_shardings is None else [
            None if s is None else spec_axes(s, a.ndim)
            for s, a in zip(out_shardings, closed.out_avals, strict=True)]
        in_specs = [spec_axes(s, a.ndim) for s, a in
                    zip(in_shardings, closed.in_avals, strict=True)]
        attrs = None
        if donated is not None and any(donated):
            attrs = _donation(closed, mesh, in_shardings, out_shardings, donated)
            partitioning = _DonatingPartitioning(mesh, in_specs, out_specs, attrs)
        else:
            partitioning = Partitioning(mesh, in_specs, out_specs)
        lowered = lower_module(closed, name, None, partitioning,
                               platform=mesh.devices.flat[0].platform)
        self.text = lowered.text
        self.const_args = lowered.const_args
        self.compiler_options = merge_options(lowered.compiler_options, compiler_options)
        self.donated = tuple(i for i, a in enumerate(attrs or ()) if a is not None)
        self._executable = None

    @property
    def executable(self):
        if self._executable is None:
            self.compile()
        return self._executable

    def compile(self) -> None:
        """Compile (once) and read the result shardings the partitioner chose."""
        if self._executable is not None:
            return
        devices, mesh = self.devices, self.mesh
        client = runtime.get_client(devices[0].platform)
        executable = client.compile_partitioned(self.text, devices,
                                                compiler_options=self.compiler_options)
        if self.donated:
            executable._set_donated([i + len(self.const_args) for i in self.donated])
        requested = self._requested or [None] * len(self.out_avals)
        # (a program without results still reports one, the empty tuple's, sharding)
        decoded = output_shardings(executable) if self.out_avals else []
        self.out_shardings = [
            given if given is not None else
            _named_sharding(mesh, aval.shape, tiles.partition_indices(aval.shape,
                                                                      len(devices)))
            for tiles, aval, given in zip(decoded, self.out_avals, requested, strict=True)]
        self.out_indices = [[s.devices_indices_map(a.shape)[d] for d in devices]
                            for s, a in zip(self.out_shardings, self.out_avals, strict=True)]
        self._executable = executable

    def __call__(self, *flat):
        executable = self.executable
        devices = self.devices
        per_argument = [_buffers_on(c, None, self.replicated, devices)
                        for c in self.const_args]
        per_argument += [_buffers_on(x, aval, s, devices) for x, aval, s in
                         zip(flat, self.in_avals, self.in_shardings, strict=True)]
        arg_lists = [[buffers[d] for buffers in per_argument] for d in range(len(devices))]
        results = executable.execute_sharded(arg_lists)
        for i in self.donated:
            _delete_if_taken(flat[i])
        if len(devices) == 1 and self.mesh is _device_meshes.get(devices[0]):
            # a program for one device that is not the default one
            return [commit(Array._from_buffer(b, aval))
                    for b, aval in zip(results[0], self.out_avals, strict=True)]
        return [Array._from_buffer(ShardedBuffer(sharding, aval.shape, aval.dtype,
                                                 [per_device[i] for per_device in results],
                                                 indices), aval)
                for i, (aval, sharding, indices) in enumerate(zip(
                    self.out_avals, self.out_shardings, self.out_indices, strict=True))]


class _DonatingPartitioning(Partitioning):
    """A ``Partitioning`` that also gives the invars their donation attributes (``attrs``,
    one per invar or None), which ``lower_module`` sets only by the one-device rule."""

    __slots__ = ("attrs",)

    def __init__(self, mesh, in_specs, out_specs, attrs):
        super().__init__(mesh, in_specs, out_specs)
        self.attrs = attrs

    def annotate_main(self, main, const_avals) -> None:
        main.arg_attrs[len(const_avals):] = self.attrs
        super().annotate_main(main, const_avals)


def _donation(closed, mesh, in_shardings, out_shardings, donated) -> list:
    """The donation attributes of an SPMD program's invars, as JAX 0.10 sets them: inputs
    and results match by their per-device (shard) shapes, since XLA aliases per device.
    A result whose sharding the partitioner chooses cannot be aliased (its shard shape is
    unknown here): with one, every donated input is a ``jax.buffer_donor`` but those
    aliasing a result of given sharding, and none is reported unusable."""
    in_avals = [a.update(shape=s.shard_shape(a.shape))
                for a, s in zip(closed.in_avals, in_shardings, strict=True)]
    fixed = [False] * len(closed.out_avals) if out_shardings is None else [
        s is not None for s in out_shardings]
    out_avals = [a.update(shape=s.shard_shape(a.shape)) if f else a for a, s, f in
                 zip(closed.out_avals, out_shardings or fixed, fixed, strict=True)]
    if all(fixed) or mesh.size == 1:  # JAX's one-device rule (unusable ones warn)
        return donation_attributes(in_avals, out_avals, donated)
    attrs = ["jax.buffer_donor = true" if d else None for d in donated]
    waiting: dict = {}
    for i, (aval, d) in enumerate(zip(in_avals, donated, strict=True)):
        if d:
            waiting.setdefault((aval.shape, aval.dtype), []).append(i)
    for j, (aval, f) in enumerate(zip(out_avals, fixed, strict=True)):
        queue = waiting.get((aval.shape, aval.dtype))
        if queue:  # JAX pairs it even with a free result (then only donates it)
            i = queue.pop(0)
            if f:
                attrs[i] = f"tf.aliasing_output = {j} : i32"
    return attrs


def _delete_if_taken(x) -> None:
    """Delete the donated ``x`` if XLA took its buffers. One placed on the devices for
    this call only was copied there: its own buffers were never passed, so it stays."""
    if type(x) is Array and x._buffer is not None and x._buffer.is_deleted():
        x.delete()


def partitioned_function(entry, name, flat, mesh, arg_names,
                         out_shardings=None) -> PartitionedFunction:
    """The SPMD program of the traced ``entry`` (a jit trace entry) for the shardings of
    ``flat`` over ``mesh``, cached on the entry; ``arg_names()`` names the arguments for
    errors. ``out_shardings`` (one per result, None where free) become the program's
    result shardings where they are over ``mesh``. The entry's donation vector is fixed
    per entry, so the cache key needs no part of it."""
    if mesh.size == 1:
        _check_committed_devices(flat, name, arg_names)
    in_shardings = _argument_shardings(flat, mesh, name, arg_names)
    if out_shardings is not None:
        out_shardings = tuple(
            s if isinstance(s, NamedSharding) and s.mesh == mesh and _fits(s, a.shape)
            else None for s, a in zip(out_shardings, entry.closed.out_avals, strict=True))
        if not any(s is not None for s in out_shardings):
            out_shardings = None
    cache = entry.partitioned
    if cache is None:
        cache = entry.partitioned = {}
    key = (tuple(in_shardings), out_shardings)
    compiled = cache.get(key)
    if compiled is None:
        compiled = cache[key] = PartitionedFunction(entry.closed, name, mesh, in_shardings,
                                                    out_shardings, entry.donated,
                                                    entry.compiler_options)
    return compiled


def _fits(sharding, shape) -> bool:
    """Whether ``shape`` divides as ``sharding`` says (else the caller raises JAX's error
    when it places the result)."""
    try:
        sharding.check_compatible_shape(shape)
    except ValueError:
        return False
    return True


def _argument_shardings(flat, mesh, name, arg_names):
    """Each argument's sharding over ``mesh`` (unsharded arguments replicated)."""
    if mesh is placement_mesh():
        _check_context_mesh_devices(flat, mesh, name, arg_names)
    sharded = [(i, _over(s, mesh)) for i, s in enumerate(map(argument_sharding, flat))
               if s is not None]
    if any(s.mesh != mesh for _, s in sharded):
        _check_same_devices(flat, sharded, name, arg_names)
        raise NotImplementedError("jit of arrays sharded over different meshes of the same "
                                  "devices: place them on one mesh with jax.device_put")
    shardings = [NamedSharding(mesh, PartitionSpec())] * len(flat)
    for i, sharding in sharded:
        if not isinstance(sharding, NamedSharding):
            raise NotImplementedError(f"jit of an array with a {type(sharding).__name__}")
        shardings[i] = sharding
    return shardings


def _check_same_devices(flat, sharded, name, arg_names) -> None:
    """JAX's ValueError for arguments placed on different devices."""
    first_index, first = sharded[0]
    for i, sharding in sharded[1:]:
        if sharding._device_assignment != first._device_assignment:
            names = arg_names()

            def describe(j, s):
                ids = [d.id for d in s._device_assignment]
                platform = s._device_assignment[0].platform.upper()
                return (f"argument {names[j] if j < len(names) else j} of {name} with shape "
                        f"{flat[j].aval.str_short()} and with device ids {ids} on platform "
                        f"{platform}")
            raise ValueError("Received incompatible devices for jitted computation. Got "
                             f"{describe(first_index, first)} and {describe(i, sharding)}")


def _over(sharding, mesh):
    """``sharding`` over ``mesh`` when its own mesh differs only in axis types (the same
    devices and axes: ``auto_axes`` makes some Auto); else ``sharding``."""
    own = sharding.mesh
    if own is not mesh and isinstance(sharding, NamedSharding) and isinstance(own, Mesh) and \
            own.axis_names == mesh.axis_names and own.axis_sizes == mesh.axis_sizes and \
            tuple(own.devices.flat) == tuple(mesh.devices.flat):
        return NamedSharding(mesh, sharding.spec)
    return sharding


def _check_context_mesh_devices(flat, mesh, name, arg_names) -> None:
    """JAX's ValueError for an argument committed to devices other than those of the mesh
    set with ``set_mesh``, which the program runs over."""
    ids = sorted(d.id for d in mesh.devices.flat)
    for i, x in enumerate(flat):
        if type(x) is Array and x._buffer is not None and type(x._buffer) is not ShardedBuffer \
                and x.committed and [x._buffer.device.id] != ids:
            names = arg_names()
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument "
                f"{names[i] if i < len(names) else i} of {name} with shape "
                f"{x._aval.str_short()} and with device ids [{x._buffer.device.id}] on "
                f"platform {x._buffer.device.platform.upper()} and jit's context mesh with "
                f"device ids {ids} on platform {x._buffer.device.platform.upper()}")


def _check_committed_devices(flat, name, arg_names) -> None:
    """JAX's ValueError for arguments committed to different devices."""
    placed = [(i, SingleDeviceSharding(x._buffer.device)) for i, x in enumerate(flat)
              if type(x) is Array and x._buffer is not None
              and type(x._buffer) is not ShardedBuffer and x.committed]
    if len({s._device_assignment for _, s in placed}) > 1:
        _check_same_devices(flat, placed, name, arg_names)


def _buffers_on(x, aval, sharding, devices) -> list:
    """One device buffer per device of ``x`` (of type ``aval``, if given) split as
    ``sharding``."""
    if type(x) is Array and type(x._buffer) is ShardedBuffer and x._buffer.sharding == sharding:
        return x._buffer.buffers
    if len(devices) == 1 and type(x) is Array and x._buffer is not None and \
            type(x._buffer) is not ShardedBuffer and x._buffer.device is devices[0]:
        return [x._buffer]
    value = _runtime_value(x, aval) if type(x) is not Array else x._value()
    index_map = sharding.devices_indices_map(np.shape(value))
    return shard_value(runtime.get_client(devices[0].platform), value, devices,
                       [index_map[d] for d in devices])


def _typed_shardings(avals, mesh):
    """The shardings over ``mesh`` that ``avals``' types give (None where a type is not
    split, or is split over another mesh), or None when no type is split."""
    abstract = mesh.abstract_mesh
    shardings = [NamedSharding(mesh, s.spec) if s is not None and s.mesh == abstract
                 else None for s in (getattr(a, "_sharding", None) for a in avals)]
    return shardings if any(s is not None for s in shardings) else None


def _named_sharding(mesh, shape, indices) -> NamedSharding:
    """The NamedSharding over ``mesh`` that places ``indices`` (one per mesh device, in
    its order) as the partitioner did; the fewest mesh axes first."""
    devices = list(mesh.devices.flat)
    target = {d: _normalized(index, shape) for d, index in zip(devices, indices, strict=True)}
    for spec in _candidate_specs(mesh, len(shape)):
        sharding = NamedSharding(mesh, spec)
        try:
            index_map = sharding.devices_indices_map(shape)
        except ValueError:
            continue
        if all(_normalized(index_map[d], shape) == target[d] for d in devices):
            return spelled_as_typed(sharding, len(shape))
    raise NotImplementedError(f"a result sharding of shape {shape} that no PartitionSpec "
                              f"over {mesh} describes")


def _normalized(index, shape) -> tuple:
    return tuple(s.indices(n)[:2] for s, n in zip(index, shape, strict=True))


def _candidate_specs(mesh, ndim):
    """PartitionSpecs over the mesh's axes of size > 1, the fewest axes first."""
    axes = [n for n, s in mesh.shape.items() if s > 1]
    specs = []
    for placement in itertools.product(range(-1, ndim), repeat=len(axes)):
        for order in itertools.permutations(range(len(axes))):
            dims: list = [[] for _ in range(ndim)]
            for a in order:
                if placement[a] >= 0:
                    dims[placement[a]].append(axes[a])
            entries = [None if not d else d[0] if len(d) == 1 else tuple(d) for d in dims]
            while entries and entries[-1] is None:
                entries.pop()
            specs.append((sum(p >= 0 for p in placement), tuple(entries)))
    seen = set()
    for _, entries in sorted(specs, key=lambda s: s[0]):
        if entries not in seen:
            seen.add(entries)
            yield PartitionSpec(*entries)


_primitive_cache = BoundedCache(256)


def run_primitive_partitioned(primitive, args, params, mesh=None):
    """An eager primitive with a sharded operand (or over ``mesh``, as a ``shard_map``), as
    JAX runs it: compiled alone as one program over the operands' mesh (cached by
    primitive, params, avals and shardings), its results sharded as the partitioner
    chose."""
    values, avals = zip(*[concrete_or_sharded(x) for x in args]) if args else ((), ())
    names = lambda: [f"args[{i}]" for i in range(len(args))]  # noqa: E731
    if mesh is None:  # the operands' mesh, or the one device they are committed to
        mesh = next((x._buffer.sharding.mesh for x in args
                     if type(x) is Array and type(x._buffer) is ShardedBuffer), None)
        if mesh is None:
            _check_committed_devices(values, primitive.name, names)
            mesh = _device_mesh(_placed_device(values))
    in_shardings = _argument_shardings(values, mesh, primitive.name, names)
    key = (primitive, tuple(sorted(((k, _param_key(v)) for k, v in params.items()),
                                   key=lambda kv: kv[0])), avals, tuple(in_shardings))
    compiled = _primitive_cache.get(key)
    if compiled is None:
        compiled = _primitive_cache[key] = PartitionedFunction(
            single_equation_jaxpr(primitive, avals, params), primitive.name, mesh,
            in_shardings, _own_out_shardings(primitive, params, mesh))
    outs = compiled(*values)
    return outs if primitive.multiple_results else outs[0]


def _own_out_shardings(primitive, params, mesh):
    """The result shardings an eager primitive names itself, spelled as given (JAX's):
    a ``shard_map`` manual over every mesh axis lays its results out as its ``out_specs``
    say, a sharding constraint or reshard as its sharding; None for any other primitive
    (the partitioner's choice)."""
    if primitive is shard_map_p:
        if set(params["newly_manual_axes"]) != set(mesh.axis_names) or \
                params["mesh"] is not mesh:
            return None
        return [NamedSharding(mesh, spec) for spec in params["out_specs"]]
    sharding = _placing_sharding(primitive, params)
    if not isinstance(sharding, NamedSharding) or params.get("unconstrained_dims") or \
            sharding.mesh.axis_names != mesh.axis_names or \
            sharding.mesh.axis_sizes != mesh.axis_sizes:
        return None
    return [NamedSharding(mesh, sharding.spec)]


def _param_key(value):
    """A cache key for a parameter: a jaxpr without consts by its text and types (each
    eager ``shard_map`` call traces a new jaxpr object for the same program)."""
    if isinstance(value, ClosedJaxpr) and not value.consts:
        return ("jaxpr", str(value), tuple(value.in_avals), tuple(value.out_avals))
    return value


def concrete_or_sharded(x):
    """(operand, aval) of an eager operand: an Array on devices as it is (where it is placed
    matters), others as NumPy."""
    if type(x) is Array and x._buffer is not None:
        return x, x._aval
    return concrete_operand(x)
