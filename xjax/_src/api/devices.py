"""Devices and host transfers at the top level of ``jax``: ``device_get``, device and
process counts, ``block_until_ready``, ``live_arrays``, ``clear_caches``.

In a job of several processes (``xjax.distributed.initialize``) the process index and count
are the job's; the global device list is not available (xjax cannot compute on another
process's devices), so ``devices()`` and ``device_count()`` raise NotImplementedError there,
while ``local_devices()`` and computations on them work.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.pytree import tree_leaves as _tree_leaves, tree_map
from xjax._src.runtime import devices as _local_devices
from xjax._src.core.array import Array
from xjax._src.core.config import State
from xjax._src.interpreters import eval as eval_interpreter
from xjax._src.higher_order import jit_call
from xjax._src.runtime import default_backend, plugin_version
from xjax._src.api.distributed import global_state as _distributed
from xjax._src.core.version import __version__
from xjax._src.transformations import jit as api
from xjax._src.transformations import jit_partitioned
from xjax._src.transformations.debug_flags import explicit_device_get


def device_get(x):
    """Copy the arrays of the pytree ``x`` to the host as NumPy arrays (an explicit
    device-to-host transfer)."""
    with explicit_device_get():
        return tree_map(lambda leaf: np.asarray(leaf) if hasattr(leaf, "__array__") else leaf,
                        x)


def clear_caches():
    """Forget every compiled executable and traced jaxpr."""
    api._caches.clear()
    api._strong_caches.clear()
    jit_call._impl_cache.clear()
    jit_call._derived_cache.clear()
    eval_interpreter._xla_primitive_cache.clear()
    jit_partitioned._primitive_cache.clear()


def effects_barrier():
    """Wait for every dispatched computation (results are awaited when read)."""


def process_count() -> int:
    """The number of processes in the job: ``num_processes`` of
    ``xjax.distributed.initialize``, else 1."""
    return _distributed.num_processes


def process_index() -> int:
    """This process's index in the job: ``process_id`` of ``xjax.distributed.initialize``,
    else 0."""
    return _distributed.process_id


def process_indices():
    """The indices of the job's processes, ``[0, ..., process_count() - 1]``."""
    return list(range(process_count()))


host_count = process_count


host_id = process_index


host_ids = process_indices


def _multi_process_error(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"xjax.{name}() in a job of {process_count()} processes: JAX gives every process's "
        "devices, but xjax can compute only on this process's own (its CPU backend has no "
        "cross-process collectives), so it has no global device list. Use "
        "xjax.local_devices() and xjax.local_device_count(), which work.")


def devices(backend=None):
    """The devices of the default backend, or of ``backend`` (a platform name).

    Raises
    ------
    NotImplementedError
        In a job of several processes, where JAX lists every process's devices: xjax
        cannot compute on another process's devices; use :func:`local_devices`.
    """
    if process_count() > 1:
        raise _multi_process_error("devices")
    return _local_devices(backend)


default_device = State(
    "jax_default_device", "Configure the default device for JAX operations. Set to a Device "
    "object (e.g. ``jax.devices(\"cpu\")[0]``) to use that Device as the default device "
    "for JAX operations and jit'd function calls (there is no effect on multi-device "
    "computation, e.g. pmapped function calls). Set to None to use the system default "
    "device. See :ref:`faq-data-placement` for more information on device placement.")


def print_environment_info(return_string: bool = False):
    """Print (or return, with ``return_string=True``) the versions of xjax, NumPy and
    Python, the platform and the backend."""
    import platform
    import sys

    text = (f"xjax:    {__version__}\nnumpy:   {np.__version__}\n"
            f"python:  {sys.version}\nplatform: {platform.platform()}\n"
            f"backend: {default_backend()} ({plugin_version()})\n")
    if return_string:
        return text
    print(text)


def live_arrays(platform=None):
    """The arrays alive in this process that hold data (not deleted, not tracers).

    xjax keeps no registry of arrays (a registry would cost every eager operation a
    weak reference); it finds them among the objects the garbage collector tracks,
    which every ``Array`` is. ``platform`` names a backend (``"cpu"``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> x = jnp.arange(3.0)
    >>> any(a is x for a in xjax.live_arrays())
    True
    """
    import gc

    if platform is not None:
        _local_devices(platform)  # raises JAX's RuntimeError for an unknown or absent backend
    return [obj for obj in gc.get_objects() if type(obj) is Array and not obj.is_deleted()]


def local_devices(process_index=None, backend=None):
    """The devices of this process (of the default backend, or of ``backend``).

    Raises
    ------
    NotImplementedError
        For another process's index in a job of several processes: xjax does not know
        other processes' devices.
    """
    if process_count() > 1 and process_index not in (None, _distributed.process_id):
        raise NotImplementedError(
            f"xjax.local_devices(process_index={process_index}) from process "
            f"{_distributed.process_id}: xjax knows only this process's own devices")
    return _local_devices(backend)


def device_count(backend=None) -> int:
    """The number of devices of the default backend, or of ``backend``.

    Raises
    ------
    NotImplementedError
        In a job of several processes, where it would count every process's devices; use
        :func:`local_device_count`.
    """
    if process_count() > 1:
        raise _multi_process_error("device_count")
    return len(_local_devices(backend))


def local_device_count(backend=None) -> int:
    """The number of this process's devices (of the default backend, or of ``backend``)."""
    return len(_local_devices(backend))


def block_until_ready(x):
    """Wait until every array in the pytree ``x`` is computed; return ``x``."""
    for leaf in _tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


__all__ = ["device_get", "clear_caches", "effects_barrier", "process_count", "process_index",
           "process_indices", "host_count", "host_id", "host_ids", "devices", "default_device",
           "print_environment_info", "live_arrays", "local_devices", "device_count",
           "local_device_count", "block_until_ready"]
