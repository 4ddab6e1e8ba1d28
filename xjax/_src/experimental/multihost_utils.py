"""``xjax.experimental.multihost_utils``: cross-process helpers, as in JAX.

In one process every function has JAX's one-process result: gathers stack or return the
local value, broadcasts return it, barriers return at once, and host-local arrays are
already global. In a job of several processes (``xjax.distributed.initialize``) the
gathers, broadcasts, equality checks and ``sync_global_devices`` exchange host values
through the job's coordination service (its key-value store and barriers), where JAX runs
a collective over every device; every process must make the same calls in the same order,
as with JAX. Host-local and global arrays need every process's devices, which xjax does
not have (NotImplementedError).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import zlib

import numpy as np

from xjax._src.core.pytree import prefix_leaves, tree_flatten, tree_map, tree_unflatten
from xjax._src.core.sharding_types import NamedSharding, PartitionSpec
from xjax._src.transformations.jit import device_put
from xjax._src.api.distributed import global_state

__all__ = ["ProcessFailureError", "assert_equal", "broadcast_one_to_all",
           "global_array_to_host_local_array", "host_local_array_to_global_array",
           "live_devices", "process_allgather", "reached_preemption_sync_point",
           "sync_global_devices"]


def broadcast_one_to_all(in_tree, is_source=None):
    """Broadcast ``in_tree`` (a pytree of arrays) from the source process to all processes.

    With one process it is the source: the result is its leaves as NumPy arrays.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.experimental import multihost_utils
    >>> multihost_utils.broadcast_one_to_all({'w': jnp.arange(2)})
    {'w': array([0, 1], dtype=int32)}
    """
    if global_state.num_processes == 1:
        return tree_map(np.asarray, in_tree)  # one process: it is the source either way
    if is_source is None:
        is_source = global_state.process_id == 0
    leaves, tree = tree_flatten(in_tree)
    return tree_unflatten(tree, _broadcast_leaves(leaves, is_source))


def _gather_one(x, tiled):
    local = np.asarray(x)
    # Stacking (or gathering a scalar) adds a leading process axis of size one.
    return local if tiled else np.expand_dims(local, axis=0)


def process_allgather(in_tree, tiled=False):
    """Gather ``in_tree`` (a pytree of arrays) from all processes, as NumPy arrays.

    Parameters
    ----------
    in_tree : pytree of arrays
    tiled : bool
        False stacks the processes' values on a new leading axis; True concatenates them
        along axis 0 (a scalar is returned as is).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.experimental import multihost_utils
    >>> multihost_utils.process_allgather(jnp.arange(3)).shape
    (1, 3)
    """
    if global_state.num_processes == 1:
        return tree_map(lambda x: _gather_one(x, tiled), in_tree)
    leaves, tree = tree_flatten(in_tree)
    join = np.concatenate if tiled else np.stack
    return tree_unflatten(tree, [join(values, axis=0) for values in _gather_leaves(leaves)])


def sync_global_devices(name: str):
    """A barrier across all processes, checking they all passed the same ``name``."""
    digest = np.uint32(zlib.crc32(name.encode()))
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def assert_equal(in_tree, fail_message: str = ""):
    """Check that every process holds the same values of ``in_tree``.

    As in JAX the comparison is elementwise ``==``, so a NaN never equals itself and fails.

    Raises
    ------
    AssertionError
        With ``fail_message`` when some value differs.
    """
    def expected(x):  # this process's value, once per process
        x = np.asarray(x)
        return np.broadcast_to(x, (global_state.num_processes,) + x.shape)

    gathered = process_allgather(in_tree)
    want = tree_map(expected, in_tree)
    same = tree_flatten(tree_map(lambda a, b: bool(np.all(np.equal(a, b))), want,
                                 gathered))[0]
    if not all(same):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether all processes reached the step at which to checkpoint before a preemption.

    False when the distributed runtime is not initialized (JAX's answer without a client).
    xjax has no preemption service, so with it initialized this raises RuntimeError as JAX
    does when the service is off.
    """
    if not global_state.initialized:
        return False
    raise RuntimeError("Preemption sync manager has not been initialized. Make sure the"
                       " 'jax_enable_preemption_service' config is enabled.")


# -- host values exchanged through the coordination service (jobs of several processes)

# How long a process waits for the others at an exchange (JAX's collectives wait as long as
# it takes; a bound turns a process that never comes into an error).
_EXCHANGE_TIMEOUT_MS = 30 * 60 * 1000
_exchanges = itertools.count()  # every process makes the same calls in the same order


def _encode(x) -> bytes:
    """A host value as bytes: a JSON header (dtype name, shape), then the raw data."""
    x = np.asarray(x)  # (tobytes reads any layout in C order; 0-d stays 0-d)
    header = json.dumps({"dtype": x.dtype.name, "shape": list(x.shape)}).encode()
    return len(header).to_bytes(4, "little") + header + x.tobytes()


def _decode(data: bytes) -> np.ndarray:
    size = int.from_bytes(data[:4], "little")
    header = json.loads(data[4:4 + size])
    value = np.frombuffer(data[4 + size:], dtype=np.dtype(header["dtype"]))
    return value.reshape(tuple(header["shape"])).copy()


def _exchange(publish, collect):
    """One exchange: ``publish(client, key)`` writes this process's part under ``key``,
    ``collect(client, key)`` reads what it needs; then all wait until every process has
    read, and process 0 removes the keys."""
    client, key = global_state.client, f"xjax/multihost/{next(_exchanges)}"
    publish(client, key)
    result = collect(client, key)
    client.wait_at_barrier(key, _EXCHANGE_TIMEOUT_MS)
    if global_state.process_id == 0:
        client.key_value_delete(key)
    return result


def _gather_leaves(leaves) -> list:
    """For each leaf, the list of every process's value (in process order)."""
    def publish(client, key):
        for i, x in enumerate(leaves):
            client.key_value_set_bytes(f"{key}/{global_state.process_id}/{i}", _encode(x))

    def collect(client, key):
        return [[_decode(client.blocking_key_value_get_bytes(f"{key}/{p}/{i}",
                                                             _EXCHANGE_TIMEOUT_MS))
                 for p in range(global_state.num_processes)] for i in range(len(leaves))]
    return _exchange(publish, collect)


def _broadcast_leaves(leaves, is_source) -> list:
    """The source process's leaves, in every process (a second source is an error: the
    store refuses its key)."""
    def publish(client, key):
        if is_source:
            client.key_value_set(f"{key}/source", str(global_state.process_id))
            for i, x in enumerate(leaves):
                client.key_value_set_bytes(f"{key}/{i}", _encode(x))

    def collect(client, key):
        if is_source:
            return [np.asarray(x) for x in leaves]
        client.blocking_key_value_get(f"{key}/source", _EXCHANGE_TIMEOUT_MS)
        return [_decode(client.blocking_key_value_get_bytes(f"{key}/{i}",
                                                            _EXCHANGE_TIMEOUT_MS))
                for i in range(len(leaves))]
    return _exchange(publish, collect)


def _flat_pspecs(what, tree, pspecs):
    is_leaf = lambda s: s is None or isinstance(s, PartitionSpec)  # noqa: E731
    try:
        return prefix_leaves(pspecs, tree, is_leaf=is_leaf)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{what} specification must be a tree prefix of the inputs' "
                         f"structure {tree_flatten(tree)[1]}; got {pspecs!r}: {e}") from None


def _place(x, mesh, pspec):
    """``x`` with the sharding ``NamedSharding(mesh, pspec)`` (a whole-array identity)."""
    if pspec is None:
        raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                         "jax.sharding.PartitionSpec() if you wanted to replicate your input.")
    if not isinstance(pspec, PartitionSpec):
        raise TypeError(f"pspecs must be PartitionSpecs, got {pspec!r} of type "
                        f"{type(pspec).__name__}")
    sharding = NamedSharding(mesh, pspec)
    sharding.check_compatible_shape(np.shape(x))
    return device_put(x, sharding)


def _convert(what, inputs, mesh, pspecs):
    if global_state.num_processes > 1:
        raise NotImplementedError(
            "host_local_array_to_global_array / global_array_to_host_local_array in a job "
            f"of {global_state.num_processes} processes: a global array spans every "
            "process's devices, and xjax computes only on this process's own (its CPU "
            "backend has no cross-process collectives)")
    leaves, tree = tree_flatten(inputs)
    specs = _flat_pspecs(what, inputs, pspecs)
    return tree_unflatten(tree, [_place(x, mesh, s) for x, s in zip(leaves, specs)])


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """Turn host-local values into global arrays sharded over ``global_mesh`` by
    ``pspecs`` (a pytree prefix of PartitionSpecs).

    With one process the local value is the global one: the result has the same values,
    as Arrays with sharding ``NamedSharding(global_mesh, pspec)``. Works under ``jit``,
    ``grad`` and ``vmap``.

    Raises
    ------
    ValueError
        For a ``None`` spec (use ``PartitionSpec()`` to replicate), specs that are not a
        prefix of the inputs, axes not in the mesh, or shapes the specs do not divide.

    Examples
    --------
    >>> import numpy as np, xjax
    >>> from xjax.sharding import Mesh, PartitionSpec as P
    >>> from xjax.experimental import multihost_utils
    >>> mesh = Mesh(np.array(xjax.devices()), ('x',))
    >>> multihost_utils.host_local_array_to_global_array(np.arange(4.), mesh, P('x'))
    Array([0., 1., 2., 3.], dtype=float32)
    """
    return _convert("input pspecs", local_inputs, global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """Turn global arrays sharded over ``global_mesh`` into this host's local arrays; the
    inverse of :func:`host_local_array_to_global_array` (an identity with one process).

    Raises
    ------
    ValueError
        As :func:`host_local_array_to_global_array`.
    """
    return _convert("output pspecs", global_inputs, global_mesh, pspecs)


class ProcessFailureError(Exception):
    """Raised by ``live_devices`` when processes failed; ``failed_devices`` names their
    devices."""

    def __init__(self, failed_devices):
        self.failed_devices = failed_devices
        super().__init__(f"Devices failed: {failed_devices}")


class _LiveDevices:
    """``live_devices(devices)``: a context yielding the live subset of ``devices``.

    It needs the distributed runtime (RuntimeError otherwise, as JAX). xjax's one process
    never loses a device, so inside it yields ``devices`` sorted by id.
    """

    @contextlib.contextmanager
    def __call__(self, devices):
        if not global_state.initialized:
            raise RuntimeError("Distributed JAX not initialized.")
        if not devices:
            raise ValueError("No devices provided.")
        yield sorted(devices, key=lambda d: d.id)


live_devices = _LiveDevices()
