"""Placing host values and Arrays on devices: one device buffer, or one buffer per device
of a sharding. ``device_put`` is built on these; so are the array constructors that place
their results as JAX's do (``zeros_like`` of a sharded array is sharded alike, arrays made
under ``set_mesh`` are laid out over its mesh).
"""

from __future__ import annotations

import numpy as np

from xjax._src import runtime
from xjax._src.core import dtypes
from xjax._src.core.array import Array, commit
from xjax._src.core.avals import ShapedArray, python_scalar_aval
from xjax._src.core.sharding_types import (NamedSharding, PartitionSpec, placement_mesh,
                                           resolve_put_target, spelled_as_typed)
from xjax._src.runtime.sharded import ShardedBuffer, note_multi_device, shard_value

__all__ = ["host_value", "put_array", "put_sharded", "placed_like", "placed_over_context"]


def host_value(leaf):
    """(NumPy value, aval) of a value that is not an Array: a Python scalar is weakly
    typed, a dtype JAX does not keep (float64 without x64) canonicalized."""
    value = np.asarray(leaf)
    if isinstance(leaf, (bool, int, float, complex)) and not isinstance(leaf, np.generic):
        aval = python_scalar_aval(leaf)
    else:
        aval = ShapedArray(value.shape, dtypes.canonicalize_dtype(value.dtype), False)
    return value.astype(aval.dtype, copy=False), aval


def put_sharded(leaf, sharding, may_alias=None) -> Array:
    """``leaf`` split over the devices of ``sharding``: one buffer per device holding the
    part of the value its index selects."""
    if type(leaf) is Array and type(leaf._buffer) is ShardedBuffer \
            and leaf._buffer.sharding == sharding:
        return leaf
    value, aval = (leaf._value(), leaf._aval) if type(leaf) is Array else host_value(leaf)
    resolve_put_target(aval.shape, sharding)  # the shape fits (JAX's ValueError)
    index_map = sharding.devices_indices_map(aval.shape)
    devices = sharding._device_assignment
    indices = [index_map[d] for d in devices]
    client = runtime.get_client(devices[0].platform)
    buffers = shard_value(client, value, devices, indices, may_alias)
    return Array._from_buffer(ShardedBuffer(sharding, aval.shape, aval.dtype, buffers,
                                            indices), aval.with_sharding(sharding))


def put_array(value, aval, device, may_alias=None, committed=False) -> Array:
    """A device buffer of ``value`` as an Array (``committed`` to ``device`` when it was
    named as the target). ``may_alias``: None copies memory anyone can write (the Array
    must never change), True lets the buffer share it (the caller promises not to write
    it), False always copies."""
    client = runtime.get_client(device.platform)
    buffer = client.buffer_from_numpy(np.ascontiguousarray(value).reshape(np.shape(value)),
                                      device, may_alias=may_alias)
    if device is not runtime.default_device():
        note_multi_device()  # jit runs programs where their arguments are
    if committed:
        return commit(Array._from_buffer(buffer, aval))
    return Array._from_buffer(buffer, aval)


def placed_like(result: Array, like) -> Array:
    """``result`` (a new eager Array of ``like``'s shape) placed as ``like`` is, as JAX's
    ``full_like`` places it: split alike when ``like`` is sharded, on its device when it
    is committed to one; else left where it is (or laid out over ``set_mesh``'s mesh)."""
    if type(like) is Array and type(result) is Array:
        buffer = like._buffer
        if type(buffer) is ShardedBuffer:
            return put_sharded(result, buffer.sharding, True)
        if buffer is not None and like.committed:
            return put_array(result._value(), result._aval, buffer.device, True,
                             committed=True)
    return placed_over_context(result)


def placed_over_context(result: Array, typed: bool = True) -> Array:
    """``result`` (a new eager Array) replicated over the mesh ``set_mesh`` set, if any:
    JAX runs its constructors there (``jnp.ones(3).sharding`` is ``NamedSharding(mesh,
    P())`` under ``set_mesh``). ``typed``: a result computed by a program, whose spec
    names each dimension over a mesh of Explicit axes (``P(None,)``, as its type), where a
    converted value (``jnp.asarray``) gets ``P()``."""
    mesh = placement_mesh()
    if mesh is None or type(result) is not Array:
        return result
    sharding = NamedSharding(mesh, PartitionSpec())
    if typed:
        sharding = spelled_as_typed(sharding, result.ndim)
    return put_sharded(result, sharding, True)
