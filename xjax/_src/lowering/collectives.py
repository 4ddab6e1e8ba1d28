"""Emitting collectives inside a ``sdy.manual_computation`` of a partitioned module.

In a module split over a device mesh (``ModuleBuilder.partition_mesh``), partition ``k`` runs
on the mesh's ``k``-th device in row-major order, so the instances of a set of mesh axes
are groups of partition ids: those that agree on every other axis. The collectives name
them with ``use_global_device_ids`` (global id = partition id, one replica), each with its
own channel.
"""

from __future__ import annotations

import numpy as np

from xjax._src.lowering.stablehlo import FunctionBuilder, element_type


def partition_mesh(builder: FunctionBuilder, primitive: str):
    """The module's device mesh; a collective outside a partitioned module cannot run."""
    mesh = builder.module.partition_mesh
    if mesh is None:
        raise NotImplementedError(
            f"{primitive} is lowered only inside a shard_map over several devices; on one "
            "device, vmap and shard_map compute collectives before lowering")
    return mesh


def replica_groups(mesh, axes) -> np.ndarray:
    """Partition ids grouped by the instances of mesh ``axes`` (row-major over ``axes`` in
    the order given): one row per combination of the other axes."""
    names = list(mesh.axis_names)
    ids = np.arange(mesh.size).reshape(tuple(mesh.shape[n] for n in names))
    positions = [names.index(a) for a in axes]
    rest = [i for i in range(len(names)) if i not in positions]
    size = int(np.prod([mesh.shape[a] for a in axes], dtype=np.int64))
    return ids.transpose(rest + positions).reshape(-1, size)


def groups_attribute(groups: np.ndarray) -> str:
    rows = ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in groups)
    return f"dense<[{rows}]> : tensor<{groups.shape[0]}x{groups.shape[1]}xi64>"


def channel_handle(builder: FunctionBuilder) -> str:
    """A fresh channel for one collective of the module."""
    cache = builder.module.cache
    cache["channel"] = handle = cache.get("channel", 0) + 1
    return f"#stablehlo.channel_handle<handle = {handle}, type = 1>"


def group_attributes(builder: FunctionBuilder, mesh, axes) -> dict:
    return {"channel_handle": channel_handle(builder),
            "replica_groups": groups_attribute(replica_groups(mesh, axes)),
            "use_global_device_ids": "unit"}


def reducer_region(builder: FunctionBuilder, dtype, op: str) -> str:
    """The scalar ``op`` (``stablehlo.add``/``maximum``/``minimum``) as a reduction body."""
    scalar = f"tensor<{element_type(dtype)}>"
    return builder.region([scalar, scalar],
                          lambda fb, args: [fb.op1(op, args, scalar)])


def all_reduce(builder: FunctionBuilder, operand, result_type, dtype, op, mesh, axes):
    return builder.op1("stablehlo.all_reduce", [operand], result_type,
                       group_attributes(builder, mesh, axes),
                       regions=[reducer_region(builder, dtype, op)])


def instance_index(builder: FunctionBuilder, mesh, axes):
    """This partition's row-major index over mesh ``axes`` (an i32 scalar): from the
    partition id, the position along each axis is ``(id // stride) % size``. The
    partitioner accepts ``partition_id`` only where every mesh axis is manual: inside a
    partly manual body it is read in a nested computation manual over the other axes."""
    automatic = [n for n in mesh.axis_names if n not in builder.module.manual_axes]
    if not automatic:
        return _instance_index(builder, mesh, axes)
    region = builder.region([], lambda fb, args: [_instance_index(fb, mesh, axes)],
                            terminator="sdy.return")
    attrs = {"in_shardings": "#sdy.sharding_per_value<[]>",
             "manual_axes": manual_axes_attribute(automatic),
             "out_shardings": "#sdy.sharding_per_value<[<@mesh, []>]>"}
    return builder.op1("sdy.manual_computation", [], "tensor<i32>", attrs, regions=[region])


def manual_axes_attribute(names) -> str:
    return "#sdy<manual_axes{" + ", ".join(f'"{n}"' for n in names) + "}>"


def _instance_index(builder: FunctionBuilder, mesh, axes):
    names = list(mesh.axis_names)
    u32 = "tensor<ui32>"
    partition = builder.op1("stablehlo.partition_id", [], u32)
    index = None
    for axis in axes:
        stride = int(np.prod([mesh.shape[n] for n in names[names.index(axis) + 1:]],
                             dtype=np.int64))
        size = mesh.shape[axis]
        position = builder.op1("stablehlo.divide",
                               [partition, builder.constant(np.uint32(stride))], u32)
        position = builder.op1("stablehlo.remainder",
                               [position, builder.constant(np.uint32(size))], u32)
        if index is None:
            index = position
        else:
            index = builder.op1("stablehlo.multiply",
                                [index, builder.constant(np.uint32(size))], u32)
            index = builder.op1("stablehlo.add", [index, position], u32)
    return builder.op1("stablehlo.convert", [index], "tensor<i32>")
