"""``xjax.experimental.multihost_utils``: cross-process helpers, as in JAX.

xjax runs one process (``xjax.process_count() == 1``), so every function here has JAX's
one-process result: gathers stack or return the local value, broadcasts return it,
barriers return at once, and host-local arrays are already global.
"""

from __future__ import annotations

import contextlib
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
    del is_source  # one process: it is the source either way
    return tree_map(np.asarray, in_tree)


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
    return tree_map(lambda x: _gather_one(x, tiled), in_tree)


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
    def expected(x):
        x = np.asarray(x)
        return np.expand_dims(x, axis=0) if x.ndim == 0 else x

    gathered = process_allgather(in_tree, tiled=True)
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
