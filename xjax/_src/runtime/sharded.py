"""A global array held as one device buffer per device (a sharded ``xjax.Array``'s storage).

``ShardedBuffer`` stands where a single-device Array keeps its ``DeviceBuffer``, and answers
the same calls (``to_numpy``, ``block_until_ready``, ``delete``, ...): code that needs the
whole value gets it assembled from the shards. The sharding itself is opaque here (the core
layer's ``Sharding``); each shard comes with the index (slices of the global array) it holds.
"""

from __future__ import annotations

import numpy as np

from xjax._src.runtime._pjrt import XlaRuntimeError


class _State:
    """``multi_device``: whether the process made a sharded array or staged a sharding
    constraint over several devices; until then jit never looks for either."""

    __slots__ = ("multi_device",)

    def __init__(self):
        self.multi_device = False


state = _State()


def note_multi_device() -> None:
    """Say that multi-device work has begun (a sharding constraint over several devices
    was staged): from now on jit looks for shardings."""
    state.multi_device = True


class ShardedBuffer:
    """Per-device buffers of one global array.

    Parameters
    ----------
    sharding : Sharding
        How the global array maps to the devices (kept for ``Array.sharding``).
    global_shape : tuple of int
    dtype : numpy.dtype
    buffers : list of DeviceBuffer
        One per device, in the sharding's device order.
    indices : list of tuple of slice
        The part of the global array each buffer holds (replicated parts repeat).
    """

    __slots__ = ("sharding", "shape", "dtype", "buffers", "indices", "__weakref__")

    def __init__(self, sharding, global_shape, dtype, buffers, indices):
        note_multi_device()
        self.sharding = sharding
        self.shape = tuple(global_shape)
        self.dtype = np.dtype(dtype)
        self.buffers = list(buffers)
        self.indices = list(indices)

    @property
    def device(self):
        """The first device (where a single-device consumer finds the array)."""
        return self.buffers[0].device

    @property
    def devices(self) -> list:
        return [b.device for b in self.buffers]

    def to_numpy(self) -> np.ndarray:
        """The global value, assembled from the shards (each part read once)."""
        out = np.empty(self.shape, self.dtype)
        done = set()
        for buffer, index in zip(self.buffers, self.indices, strict=True):
            key = _index_key(index)
            if key in done:
                continue
            done.add(key)
            # a copy, not a view: a view would mark the buffer shared with NumPy for good,
            # and a donated argument's buffers then could not be given to XLA
            out[index] = buffer.copy_to_host()
        out.flags.writeable = False
        return out

    def __array__(self, dtype=None, copy=None):
        value = self.to_numpy()
        return value if dtype is None else value.astype(dtype)

    def block_until_ready(self):
        for buffer in self.buffers:
            buffer.block_until_ready()
        return self

    def is_ready(self) -> bool:
        return all(b.is_ready() for b in self.buffers)

    def is_deleted(self) -> bool:
        return any(b.is_deleted() for b in self.buffers)

    def delete(self) -> None:
        for buffer in self.buffers:
            buffer.delete()

    def unsafe_buffer_pointer(self) -> int:
        raise XlaRuntimeError("INVALID_ARGUMENT: UnsafeBufferPointer() is supported only for "
                              "unsharded arrays.")

    def replica_ids(self) -> list[int]:
        """For each buffer, how many earlier buffers hold the same part (JAX's replica id)."""
        seen: dict = {}
        out = []
        for index in self.indices:
            key = _index_key(index)
            out.append(seen.get(key, 0))
            seen[key] = out[-1] + 1
        return out


def _index_key(index) -> tuple:
    return tuple((s.start, s.stop, s.step) for s in index)


def shard_value(client, value: np.ndarray, devices, indices, may_alias=None) -> list:
    """One device buffer per device holding ``value[index]``."""
    return place_values(client, [value[index] for index in indices], devices, may_alias)


def place_values(client, values, devices, may_alias=None) -> list:
    """One device buffer per device holding the NumPy value given for it (its shape kept:
    a 0-d value stays 0-d)."""
    return [client.buffer_from_numpy(np.ascontiguousarray(value).reshape(np.shape(value)),
                                     device, may_alias=may_alias)
            for value, device in zip(values, devices, strict=True)]


# -- the shardings an SPMD compile chose for its results (XLA's OpSharding) --

_REPLICATED, _MAXIMAL, _TUPLE, _OTHER, _MANUAL = 0, 1, 2, 3, 4


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def _fields(data: bytes):
    """(field number, wire type, value) of a serialized protocol buffer message."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i:i + size], i + size
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"unexpected protocol buffer wire type {wire}")
        yield number, wire, value


def _ints(values) -> list[int]:
    """A repeated int64 field's values (packed or not)."""
    out = []
    for wire, value in values:
        if wire == 0:
            out.append(value)
        else:
            i = 0
            while i < len(value):
                v, i = _varint(value, i)
                out.append(v)
    return out


class TileSharding:
    """One value's OpSharding: each partition's tile of it (tile dimensions past the
    value's rank only replicate)."""

    __slots__ = ("kind", "tile_dims", "device_order")

    def __init__(self, data: bytes):
        fields: dict = {}
        for number, wire, value in _fields(data):
            fields.setdefault(number, []).append((wire, value))
        self.kind = fields.get(1, [(0, _REPLICATED)])[0][1]
        self.tile_dims = _ints(fields.get(3, []))
        devices = _ints(fields.get(4, []))
        if not devices and self.tile_dims:
            reshape = _ints(fields.get(9, [])) or [int(np.prod(self.tile_dims))]
            perm = _ints(fields.get(10, [])) or list(range(len(reshape)))
            devices = np.arange(int(np.prod(reshape))).reshape(reshape).transpose(perm)
        self.device_order = np.asarray(devices, np.int64).reshape(-1)

    def partition_indices(self, global_shape, num_partitions) -> list:
        """The index (slices of the global value) each partition holds."""
        whole = tuple(slice(None) for _ in global_shape)
        if self.kind == _REPLICATED or not self.tile_dims:
            return [whole] * num_partitions
        if self.kind != _OTHER:
            raise NotImplementedError(f"results with OpSharding type {self.kind} (maximal "
                                      "or manual) are not supported yet")
        tiles = self.device_order.reshape(self.tile_dims)
        out = [None] * num_partitions
        for coords in np.ndindex(*tiles.shape):
            index = []
            for dim, size in enumerate(global_shape):
                count = self.tile_dims[dim]
                chunk = -(-size // count)
                start = coords[dim] * chunk
                index.append(slice(None) if count == 1 else
                             slice(start, min(start + chunk, size)))
            out[int(tiles[coords])] = tuple(index)
        return out


def output_shardings(executable) -> list[TileSharding]:
    """The sharding XLA's partitioner chose for each result of an SPMD ``executable``."""
    code, form = executable.optimized_program()
    if form not in ("hlo", "hlo_with_config"):
        raise NotImplementedError(f"cannot read result shardings from a {form!r} program")
    if form == "hlo_with_config":
        code = next(v for n, w, v in _fields(code) if n == 1)
    found = [v for n, w, v in _fields(code) if n == 12]  # spmd_output_sharding
    if not found:
        return [TileSharding(b"")] * executable.num_outputs
    sharding = TileSharding(found[0])
    if sharding.kind != _TUPLE:
        return [sharding]
    return [TileSharding(v) for n, w, v in _fields(found[0]) if n == 5]
