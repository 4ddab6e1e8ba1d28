"""``jax.make_array_from_*`` and ``jax.copy_to_host_async``.

A "sharding" here is an xjax ``Sharding``, an xjax ``Device`` (an xjax extension: the array
whole on that device), or any object describing a one-device sharding as JAX's sharding
classes do (``device_set``, ``_device_assignment``; ``devices_indices_map(shape)`` when it
has one). A ``NamedSharding`` (even over one device, as ``device_put`` keeps it) or an
xjax sharding over several devices gives a sharded Array: one device buffer per device
(``runtime.sharded.ShardedBuffer``), as JAX's. Any other sharding names one device, and the
array is placed whole there.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.pytree import tree_flatten, tree_map, tree_unflatten
from xjax._src.core.sharding_types import NamedSharding, Sharding
from xjax._src.core.trace import Tracer
from xjax._src.core.errors import UnexpectedTracerError
from xjax._src.runtime.client import Device, get_client
from xjax._src.runtime.sharded import ShardedBuffer, place_values
from xjax._src.transformations.jit import device_put


def _is_sharded(sharding) -> bool:
    """Whether arrays made for ``sharding`` are kept as placed over its devices: a
    ``NamedSharding`` (reported as given, as JAX does, even over one device) or an xjax
    sharding over several devices."""
    return isinstance(sharding, NamedSharding) or (
        isinstance(sharding, Sharding) and len(sharding._device_assignment) > 1)


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
        raise NotImplementedError(f"xjax places arrays over several devices only for its own "
                                  f"shardings; got {len(devices)} devices in {sharding}")
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


def _check_shards(values, shard_shape, aval, sharding):
    """JAX's checks of per-device values: each has the array's dtype and the shape of a
    shard (``shard_shape``)."""
    for value in values:
        if value.dtype != aval.dtype:
            raise ValueError(f"Input buffers to `Array` must have matching dtypes. Got "
                             f"{value.dtype}, expected {aval.dtype} for buffer: {value}")
        if tuple(value.shape) != tuple(shard_shape):
            raise ValueError(f"Expected shard shape {tuple(shard_shape)} doesn't match the "
                             f"single device array shape {tuple(value.shape)}. Shape of Array "
                             f"is {aval.str_short()} with sharding {sharding}")


def _callback_value(data_callback, index):
    """``data_callback(index)`` as an Array or a NumPy value of a dtype JAX keeps (a Python
    scalar's canonical dtype, float64 as float32 without x64)."""
    value = data_callback(index)
    if isinstance(value, Tracer):
        raise UnexpectedTracerError(
            "jax.make_array_from_callback cannot be called within a traced context.")
    if type(value) is Array:
        return value
    if isinstance(value, (list, tuple)):
        raise TypeError(f"Argument '{value}' of type {type(value)} is not a valid JAX type.")
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return np.asarray(value, dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(value)))
    value = np.asarray(value)
    return value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of ``shape`` whose data ``data_callback(index)`` returns, shard by shard.

    Parameters
    ----------
    shape : tuple of int
        The shape of the (global) array.
    sharding : Sharding or Device
        How the array is laid out: a ``NamedSharding`` (or another sharding over several
        devices) gives a sharded array, a one-device sharding or a ``Device`` an array
        whole on that device.
    data_callback : callable
        Called with the index (a tuple of slices of the global array) of each device's
        shard, once in all when the sharding replicates the array; returns that shard's
        data (NumPy array, Array, scalar).
    dtype : optional
        The array's dtype; it must match the data's.

    Returns
    -------
    Array
        Committed to the sharding's devices.

    Raises
    ------
    ValueError
        If a shard's data has another shape than the sharding's shard shape, or another
        dtype than the first shard's (or ``dtype``).

    Examples
    --------
    >>> import numpy as np, xjax
    >>> data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    >>> xjax.make_array_from_callback((2, 3), xjax.devices()[0], lambda idx: data[idx])
    Array([[0., 1., 2.],
           [3., 4., 5.]], dtype=float32)
    """
    if _is_sharded(sharding):
        return _sharded_from_callback(tuple(shape), sharding, data_callback, dtype)
    device = _device_of(sharding)
    value = _callback_value(data_callback, _index_of(sharding, device, shape))
    dtype = _check_dtype(value.dtype, dtype, "make_array_from_callback")
    _check_shards([value], tuple(shape), ShapedArray(tuple(shape), dtype), sharding)
    return device_put(value, device)


def _sharded_from_callback(shape, sharding, data_callback, dtype):
    devices = list(sharding._device_assignment)
    if sharding.is_fully_replicated:  # one call for every device (as JAX)
        indices = [(slice(None),) * len(shape)] * len(devices)
        values = [_callback_value(data_callback, indices[0])] * len(devices)
    else:
        index_map = sharding.devices_indices_map(shape)
        indices = [index_map[d] for d in devices]
        values = [_callback_value(data_callback, index) for index in indices]
    dtype = _check_dtype(values[0].dtype, dtype, "make_array_from_callback")
    aval = ShapedArray(shape, dtype, False)
    _check_shards(values, sharding.shard_shape(shape), aval, sharding)
    host = [v._value() if type(v) is Array else v for v in values]
    buffers = place_values(get_client(devices[0].platform), host, devices)
    return Array._from_buffer(ShardedBuffer(sharding, shape, dtype, buffers, indices),
                              aval.with_sharding(sharding))  # typed over Explicit axes


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array made of one single-device array per device of ``sharding``.

    Parameters
    ----------
    shape : tuple of int
        The shape of the result (each array's shape is checked against its shard's).
    sharding : Sharding or Device
        How the result is laid out (see ``make_array_from_callback``).
    arrays : list or tuple of Array
        One array on each device of the sharding, in any order: each becomes the shard of
        the device it is on (its device buffer is shared, not copied).
    dtype : optional
        The dtype; it must match the arrays'.

    Returns
    -------
    Array
        Committed to the sharding's devices; never weakly typed.

    Raises
    ------
    ValueError
        For a wrong number of arrays, arrays on the same device or on devices outside the
        sharding, arrays of another shape than the shard shape or of differing dtypes.
    TypeError
        If ``arrays`` is not a list or tuple, or holds something other than Arrays.

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
    if not arrays and dtype is None:
        raise ValueError("If the Array has no addressable shards, `dtype` must be "
                         "provided via the `dtype` argument to "
                         "`jax.make_array_from_single_device_arrays`.")
    if arrays:
        dtype = _check_dtype(arrays[0].dtype, dtype, "make_array_from_single_device_arrays")
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(
            dtype, "make_array_from_single_device_arrays")
    if any(isinstance(a, Tracer) for a in arrays):
        raise ValueError("jax.make_array_from_single_device_arrays requires a list of "
                         f"concrete arrays as input, but got types {set(map(type, arrays))}")
    for a in arrays:
        if type(a) is not Array:
            raise TypeError(f"Unsupported type for elements in `arrays`: {type(a)}")
    shape = tuple(shape)
    aval = ShapedArray(shape, dtype, False)
    if _is_sharded(sharding):
        return _sharded_from_arrays(aval, sharding, arrays)
    device = _device_of(sharding)
    _check_count(len(arrays), 1)
    _check_shards(arrays, shape, aval, sharding)
    array = arrays[0]
    if array.weak_type:  # JAX's result is never weakly typed
        array = Array._from_numpy(array._value(), aval)
    return device_put(array, device)


def _check_count(got, expected):
    if got != expected:
        raise ValueError(f"Expected {expected} per-device arrays (this is how many devices "
                         f"are addressable by the sharding), but got {got}")


def _one_buffer(array):
    """The device buffer of a single-device Array (made on the default device for a host
    value, where JAX keeps an uncommitted array)."""
    buffer = array._buffer
    if type(buffer) is ShardedBuffer:
        if len(buffer.buffers) != 1:
            raise ValueError("When making an array from single-device arrays the input "
                             "arrays must have one shard each. An argument array had "
                             f"{len(buffer.buffers)} shard(s).")
        return buffer.buffers[0]
    return array._device_buffer()


def _sharded_from_arrays(aval, sharding, arrays):
    """JAX's checks, in JAX's order, then the arrays' buffers in the sharding's device
    order."""
    buffers = [_one_buffer(a) for a in arrays]
    devices = sharding._device_assignment
    _check_count(len(arrays), len(devices))
    by_id = {b.device.id: b for b in buffers}
    if len(by_id) != len(buffers):
        raise ValueError("When making an array from single-device arrays, the input arrays "
                         "must be from distinct devices, but got device IDs "
                         f"{[b.device.id for b in buffers]}")
    wanted = {d.id for d in devices}
    missing, extra = wanted - set(by_id), set(by_id) - wanted
    if missing or extra:
        message = "Addressable devices and per-device arrays devices do not match."
        if missing:
            message += (f" Sharding contains devices {missing} that are not present in "
                        "per-device arrays.")
        if extra:
            message += (f" Per-device arrays contain devices {extra} that are not present "
                        "in the sharding.")
        raise ValueError(message)
    _check_shards(arrays, sharding.shard_shape(aval.shape), aval, sharding)
    index_map = sharding.devices_indices_map(aval.shape)
    return Array._from_buffer(ShardedBuffer(
        sharding, aval.shape, aval.dtype, [by_id[d.id] for d in devices],
        [index_map[d] for d in devices]), aval.with_sharding(sharding))


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """Arrays laid out as ``sharding`` from this process's data (a pytree); with one
    process the local data is the whole array.

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
    if _is_sharded(sharding):  # one process: the local data is the global array (as JAX)
        return device_put(local_data, sharding)
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
