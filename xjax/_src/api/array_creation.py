"""``jax.make_array_from_*`` and ``jax.copy_to_host_async`` with single-device semantics.

xjax places every array on one device, so a "sharding" here names that device: an xjax
``Device``, or any object describing a one-device sharding as JAX's sharding classes do
(``device_set``, ``_device_assignment``; ``devices_indices_map(shape)`` when it has one).
A sharding over several devices raises NotImplementedError.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.pytree import tree_flatten, tree_map, tree_unflatten
from xjax._src.core.trace import Tracer
from xjax._src.core.errors import UnexpectedTracerError
from xjax._src.runtime.client import Device
from xjax._src.transformations.jit import device_put


def _device_of(sharding):
    """The one device a sharding places arrays on."""
    if isinstance(sharding, Device):
        return sharding
    devices = None
    for attr in ("_device_assignment", "device_set", "addressable_devices"):
        devices = getattr(sharding, attr, None)
        if devices is not None:
            break
    if devices is None:
        raise TypeError(f"sharding should be an instance of `jax.sharding`. Got {sharding} "
                        f"of type {type(sharding)}")
    devices = list(devices)
    if len(devices) != 1:
        raise NotImplementedError(f"xjax places arrays on one device; got a sharding over "
                                  f"{len(devices)} devices: {sharding}")
    return devices[0]


def _index_of(sharding, device, shape):
    indices = getattr(sharding, "devices_indices_map", None)
    if indices is not None:
        return indices(tuple(shape))[device]
    return (slice(None),) * len(shape)


def _check_dtype(value_dtype, dtype, fname):
    if dtype is None:
        return value_dtype
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, fname)
    if value_dtype != dtype:
        raise ValueError(f"If `dtype` is provided to `jax.{fname}`, it must match the dtype of "
                         f"the addressable shards. Got dtype={dtype} and shard "
                         f"dtype={value_dtype}`.")
    return dtype


def _check_shape(value, shape, sharding):
    if tuple(value.shape) != tuple(shape):
        aval = f"{dtypes.short_dtype_name(value.dtype)}{list(shape)}".replace(" ", "")
        raise ValueError(f"Expected shard shape {tuple(shape)} doesn't match the single device "
                         f"array shape {tuple(value.shape)}. Shape of Array is {aval} with "
                         f"sharding {sharding}")


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of ``shape`` whose data ``data_callback(index)`` returns.

    Parameters
    ----------
    shape : tuple of int
        The shape of the array.
    sharding : Device or single-device sharding
        Where the array lives (one device in xjax).
    data_callback : callable
        Called once with the index (a tuple of slices) of the device's shard in the global
        array, here the whole array; returns array-like data (NumPy array, Array, scalar).
    dtype : optional
        The array's dtype; it must match the data's.

    Examples
    --------
    >>> import numpy as np, xjax
    >>> data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    >>> xjax.make_array_from_callback((2, 3), xjax.devices()[0], lambda idx: data[idx])
    Array([[0., 1., 2.],
           [3., 4., 5.]], dtype=float32)
    """
    device = _device_of(sharding)
    value = data_callback(_index_of(sharding, device, shape))
    if isinstance(value, Tracer):
        raise UnexpectedTracerError(
            "jax.make_array_from_callback cannot be called within a traced context.")
    if type(value) is not Array:
        if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
            value = np.asarray(value, dtypes.canonicalize_dtype(
                dtypes.python_scalar_dtype(value)))
        value = np.asarray(value)
        value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
    _check_dtype(value.dtype, dtype, "make_array_from_callback")
    _check_shape(value, shape, sharding)
    return device_put(value, device)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array made of one array per device of ``sharding`` (one in xjax).

    Parameters
    ----------
    shape : tuple of int
        The shape of the result (checked against the array's).
    sharding : Device or single-device sharding
        Where the result lives.
    arrays : list or tuple of Array
        The per-device arrays: exactly one.
    dtype : optional
        The dtype; it must match the arrays'.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> x = jnp.arange(3)
    >>> xjax.make_array_from_single_device_arrays((3,), xjax.devices()[0], [x])
    Array([0, 1, 2], dtype=int32)
    """
    if not isinstance(arrays, (list, tuple)):
        raise TypeError("jax.make_array_from_single_device_arrays `arrays` argument must be "
                        f"a list or tuple, but got {type(arrays)}.")
    if any(isinstance(a, Tracer) for a in arrays):
        raise ValueError("jax.make_array_from_single_device_arrays requires a list of "
                         f"concrete arrays as input, but got types {set(map(type, arrays))}")
    if not arrays:
        if dtype is None:
            raise ValueError("If the Array has no addressable shards, `dtype` must be "
                             "provided via the `dtype` argument to "
                             "`jax.make_array_from_single_device_arrays`.")
        raise ValueError("xjax places arrays on one device: expected one array, got none")
    device = _device_of(sharding)
    _check_dtype(arrays[0].dtype, dtype, "make_array_from_single_device_arrays")
    if len(arrays) != 1:
        raise ValueError(f"Expected 1 array, one per device of the sharding, got "
                         f"{len(arrays)}")
    array = arrays[0]
    _check_shape(array, shape, sharding)
    if type(array) is not Array:
        raise TypeError(f"Expected an xjax Array, got {type(array)}")
    return device_put(array, device)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """Arrays on ``sharding``'s device from this process's data (a pytree); with one process
    the local data is the whole array.

    Examples
    --------
    >>> import numpy as np, xjax
    >>> xjax.make_array_from_process_local_data(xjax.devices()[0], np.ones(2, np.float32))
    Array([1., 1.], dtype=float32)
    """
    leaves, treedef = tree_flatten(local_data)
    if global_shape is None or len(leaves) == 1:
        shapes = [global_shape] * len(leaves)
    else:  # a pytree of shapes (tuples) matching local_data
        shapes = tree_flatten(global_shape, is_leaf=lambda x: x is None
                              or isinstance(x, tuple))[0]
    for s, d in zip(shapes, leaves, strict=True):
        if s is not None and tuple(s) != tuple(np.shape(d)):
            raise ValueError("When calling `make_array_from_process_local_data` on a single "
                             "process, global_shape should be None or equal to "
                             f"local_data.shape.Got global_shape={s} and "
                             f"local_data.shape={np.shape(d)}.")
    device = _device_of(sharding)
    return tree_unflatten(treedef, [device_put(d, device) for d in leaves])


def copy_to_host_async(x):
    """Start copying the arrays of pytree ``x`` to the host; return ``x``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.copy_to_host_async({"a": jnp.ones(2)})
    {'a': Array([1., 1.], dtype=float32)}
    """
    def start(leaf):
        if hasattr(leaf, "copy_to_host_async") and not isinstance(leaf, Tracer):
            leaf.copy_to_host_async()
        return leaf
    tree_map(start, x)
    return x


__all__ = ["make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data", "copy_to_host_async"]
