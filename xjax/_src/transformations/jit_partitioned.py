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
from xjax._src.core.array import Array
from xjax._src.core.jaxpr import Jaxpr
from xjax._src.interpreters.eval import concrete_operand, single_equation_jaxpr
from xjax._src.core.sharding_types import (AbstractMesh, NamedSharding, PartitionSpec,
                                           get_mesh, spec_axes)
from xjax._src.lax.placement import sharding_constraint_p
from xjax._src.higher_order.jit_call import _runtime_value
from xjax._src.lowering.lower_jaxpr import Partitioning, lower_module
from xjax._src.runtime.sharded import ShardedBuffer, output_shardings, shard_value


def partition_mesh(entry, flat):
    """The mesh a jitted call runs partitioned over, or None (one device): that of its
    sharded arguments, else of the multi-device sharding constraints in its program."""
    for x in flat:
        if type(x) is Array and type(x._buffer) is ShardedBuffer:
            return x._buffer.sharding.mesh
    cache = entry.partitioned
    if cache is None:
        cache = entry.partitioned = {}
    if None not in cache:
        cache[None] = _constraint_mesh(entry.closed.jaxpr)
    mesh = cache[None]
    if isinstance(mesh, AbstractMesh):  # constraints over the context mesh's axes
        concrete = get_mesh()
        if concrete.empty or concrete.axis_names != mesh.axis_names or \
                concrete.axis_sizes != mesh.axis_sizes:
            return None
        return concrete
    return mesh


def _constraint_mesh(jaxpr):
    """The mesh of the first multi-device sharding constraint in ``jaxpr`` (nested
    jaxprs included), or None."""
    for eqn in jaxpr.eqns:
        if eqn.primitive is sharding_constraint_p:
            sharding = eqn.params["sharding"]
            if isinstance(sharding, NamedSharding) and sharding.mesh.size > 1:
                return sharding.mesh  # a Mesh, or an AbstractMesh resolved at the call
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if isinstance(inner, Jaxpr):
                    found = _constraint_mesh(inner)
                    if found is not None:
                        return found
    return None


class PartitionedFunction:
    """An SPMD executable for one combination of argument shardings."""

    __slots__ = ("executable", "devices", "replicated", "in_shardings", "out_shardings",
                 "out_indices", "const_args", "in_avals", "out_avals", "text")

    def __init__(self, closed, name, mesh, in_shardings):
        self.devices = devices = list(mesh.devices.flat)
        self.replicated = NamedSharding(mesh, PartitionSpec())
        self.in_shardings = in_shardings
        self.in_avals, self.out_avals = closed.in_avals, closed.out_avals
        partitioning = Partitioning(mesh, [spec_axes(s, a.ndim) for s, a in
                                           zip(in_shardings, closed.in_avals, strict=True)])
        lowered = lower_module(closed, name, None, partitioning)
        self.text = lowered.text
        client = runtime.get_client(devices[0].platform)
        self.executable = client.compile_partitioned(lowered.text, devices)
        self.const_args = lowered.const_args
        self.out_shardings = [
            _named_sharding(mesh, aval.shape, tiles.partition_indices(aval.shape,
                                                                      len(devices)))
            for tiles, aval in zip(output_shardings(self.executable), closed.out_avals,
                                   strict=True)]
        self.out_indices = [[s.devices_indices_map(a.shape)[d] for d in devices]
                            for s, a in zip(self.out_shardings, self.out_avals, strict=True)]

    def __call__(self, flat):
        devices = self.devices
        per_argument = [_buffers_on(c, None, self.replicated, devices)
                        for c in self.const_args]
        per_argument += [_buffers_on(x, aval, s, devices) for x, aval, s in
                         zip(flat, self.in_avals, self.in_shardings, strict=True)]
        arg_lists = [[buffers[d] for buffers in per_argument] for d in range(len(devices))]
        results = self.executable.execute_sharded(arg_lists)
        return [Array._from_buffer(ShardedBuffer(sharding, aval.shape, aval.dtype,
                                                 [per_device[i] for per_device in results],
                                                 indices), aval)
                for i, (aval, sharding, indices) in enumerate(zip(
                    self.out_avals, self.out_shardings, self.out_indices, strict=True))]


def call_partitioned(entry, name, flat, mesh, arg_names):
    """Run the traced ``entry`` (a jit trace entry) on ``flat`` arguments as one program
    over ``mesh``; ``arg_names()`` names the arguments for errors."""
    in_shardings = _argument_shardings(flat, mesh, name, arg_names)
    cache = entry.partitioned
    if cache is None:
        cache = entry.partitioned = {}
    key = tuple(in_shardings)
    compiled = cache.get(key)
    if compiled is None:
        compiled = cache[key] = PartitionedFunction(entry.closed, name, mesh, in_shardings)
    return compiled(flat)


def _argument_shardings(flat, mesh, name, arg_names):
    """Each argument's sharding over ``mesh`` (unsharded arguments replicated)."""
    sharded = [(i, x._buffer.sharding) for i, x in enumerate(flat)
               if type(x) is Array and type(x._buffer) is ShardedBuffer]
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


def _buffers_on(x, aval, sharding, devices) -> list:
    """One device buffer per device of ``x`` (of type ``aval``, if given) split as
    ``sharding``."""
    if type(x) is Array and type(x._buffer) is ShardedBuffer and x._buffer.sharding == sharding:
        return x._buffer.buffers
    value = _runtime_value(x, aval) if type(x) is not Array else x._value()
    index_map = sharding.devices_indices_map(np.shape(value))
    return shard_value(runtime.get_client(devices[0].platform), value, devices,
                       [index_map[d] for d in devices])


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
            return sharding
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


_primitive_cache: dict = {}


def run_primitive_partitioned(primitive, args, params):
    """An eager primitive with a sharded operand, as JAX runs it: compiled alone as one
    program over the operands' mesh (cached by primitive, params, avals and shardings),
    its results sharded as the partitioner chose."""
    values, avals = zip(*[concrete_or_sharded(x) for x in args]) if args else ((), ())
    mesh = next(x._buffer.sharding.mesh for x in args
                if type(x) is Array and type(x._buffer) is ShardedBuffer)
    in_shardings = _argument_shardings(values, mesh, primitive.name,
                                       lambda: [f"args[{i}]" for i in range(len(args))])
    key = (primitive, tuple(sorted(params.items(), key=lambda kv: kv[0])), avals,
           tuple(in_shardings))
    compiled = _primitive_cache.get(key)
    if compiled is None:
        compiled = _primitive_cache[key] = PartitionedFunction(
            single_equation_jaxpr(primitive, avals, params), primitive.name, mesh,
            in_shardings)
    outs = compiled(list(values))
    return outs if primitive.multiple_results else outs[0]


def concrete_or_sharded(x):
    """(operand, aval) of an eager operand: a sharded Array as it is, others as NumPy."""
    if type(x) is Array and type(x._buffer) is ShardedBuffer:
        return x, x._aval
    return concrete_operand(x)
