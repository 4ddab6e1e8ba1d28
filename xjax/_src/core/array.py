"""``xjax.Array``: an immutable array holding a host NumPy value, a device buffer, or both.

Conversions between the two are lazy and cached. Operators and NumPy-like methods are
installed by ``xjax.numpy`` at import (DESIGN.md §6), so this layer never imports upward.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.avals import ShapedArray
from xjax._src.core import trace as trace_module
from xjax._src.core.trace import immutable_message
from xjax._src.runtime._pjrt import is_immutable as _nothing_can_write, set_array_class
from xjax._src.runtime.client import default_device
from xjax._src.runtime.sharded import ShardedBuffer
from xjax._src.core.sharding_types import Shard, SingleDeviceSharding

# Sources np.asarray always copies out of: Python values and NumPy scalars.
_FRESH_SOURCES = (bool, int, float, complex, list, tuple, np.generic)


def frozen_value(npy: np.ndarray, source) -> np.ndarray:
    """``npy`` (NumPy's array for ``source``) as a value an Array may hold forever.

    An Array never changes, so memory that the caller, or anyone, can still write is copied:
    a NumPy array passed to ``jnp.asarray`` or to an operation stays the caller's to mutate.
    Fresh memory (from a Python value, or a dtype conversion) is kept as is, and so is
    memory nothing can write (read-only down to its owner, as NumPy views of xjax results).

    Examples
    --------
    >>> import numpy as np, xjax.numpy as jnp
    >>> x = np.ones(3, np.float32)
    >>> y = jnp.asarray(x)
    >>> x[0] = 5.0
    >>> y
    Array([1., 1., 1.], dtype=float32)
    """
    if isinstance(source, _FRESH_SOURCES) or (
            type(source) is np.ndarray and npy is not source and npy.base is None):
        return npy
    if not npy.flags.writeable and _nothing_can_write(npy):
        return npy
    return npy.copy()


def _read_only_view(npy: np.ndarray) -> np.ndarray:
    """A read-only view of an Array's host memory that no one can make writeable: the
    memory's owner is made read-only too (NumPy then refuses WRITEABLE on every view)."""
    owner = npy
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner.base is None:
        owner.flags.writeable = False
    view = npy.view()
    view.flags.writeable = False
    return view


# Types whose instances are ``Array`` instances without being Arrays: tracers, and those
# registered with ``register_array_type`` (typed PRNG key arrays).
_virtual_array_types: tuple = (trace_module.Tracer,)


class _ArrayMeta(type):
    """Makes tracers (and registered array types, as PRNG key arrays) instances of
    ``Array``, as in JAX (``isinstance(x, jax.Array)`` holds inside ``jit``, ``grad`` and
    ``vmap``). Code that needs a concrete array tests ``type(x) is Array``, and code that
    needs an array or a tracer ``isinstance(x, Tracer)`` besides."""

    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or (
            cls is Array and isinstance(obj, _virtual_array_types))


class Array(metaclass=_ArrayMeta):
    """A JAX array: immutable, typed by an aval (shape, dtype, weak type)."""

    # ``_committed`` is set (True) only on a committed single-device array; left unset
    # elsewhere, so that no construction path pays for it (see ``committed``).
    __slots__ = ("_aval", "_npy", "_buffer", "_committed", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, weak_type: bool = False):
        npy = frozen_value(np.asarray(value), value)
        self._aval = ShapedArray(npy.shape, npy.dtype, weak_type)
        self._npy = npy
        self._buffer = None

    # -- construction helpers used by the interpreters (no validation: hot path) --
    @staticmethod
    def _from_numpy(npy, aval: ShapedArray) -> "Array":
        array = object.__new__(Array)
        array._aval = aval
        array._npy = npy
        array._buffer = None
        return array

    @staticmethod
    def _from_buffer(buffer, aval: ShapedArray) -> "Array":
        array = object.__new__(Array)
        array._aval = aval
        array._npy = None
        array._buffer = buffer
        return array

    def _value(self):
        """The host NumPy value (waits for a device computation to finish)."""
        npy = self._npy
        if npy is None:
            npy = self._npy = self._buffer.to_numpy()
        return npy

    def _device_buffer(self, may_alias: bool = True):
        """A device buffer holding this value (created once, then cached). The host value
        never changes, so the device may share its memory instead of copying it; a buffer
        to donate must not (``may_alias=False``): Arrays viewing the same host memory must
        never see XLA's writes."""
        buffer = self._buffer
        if buffer is None:
            npy = self._npy
            # (np.ascontiguousarray makes a 0-d value 1-d: its buffer keeps the shape ().)
            contiguous = np.ascontiguousarray(npy) if npy.ndim else npy.reshape(())
            device = default_device()
            buffer = self._buffer = device.client.buffer_from_numpy(contiguous, device,
                                                                    may_alias=may_alias)
        return buffer

    # -- attributes --
    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))
    size = property(lambda self: self._aval.size)
    weak_type = property(lambda self: self._aval.weak_type)

    @property
    def nbytes(self) -> int:
        return self._aval.size * self._aval.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._aval.dtype.itemsize

    def to_concrete_value(self):
        return self._value()

    # -- Python protocol --
    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self._value())
        if dtype is not None and value.dtype != dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        if value.flags.writeable:  # the Array's own memory: lend it read-only (as JAX)
            value = _read_only_view(value)
        return value

    def __len__(self) -> int:
        if not self._aval.shape:
            raise TypeError("len() of unsized object")
        return self._aval.shape[0]

    def __iter__(self):
        if not self._aval.shape:
            raise TypeError("iteration over a 0-d array")
        if trace_module.ctx.trace.parent is None:  # eager: rows are views, no primitives
            aval = self._aval
            row_aval = ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)
            npy = self._value()
            rows = [Array._from_numpy(npy[i, ...], row_aval) for i in range(len(npy))]
            if self.committed and self.is_fully_replicated:  # JAX's: split rows are not
                for row in rows:
                    commit(row)
            return iter(rows)
        return (self[i] for i in range(self._aval.shape[0]))

    def __bool__(self) -> bool:
        if self._aval.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._value())

    def __int__(self) -> int:
        return int(self._value())

    def __float__(self) -> float:
        return float(self._value())

    def __complex__(self) -> complex:
        return complex(self._value())

    def __index__(self) -> int:
        if self._aval.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._value())

    def __hash__(self):
        raise TypeError("unhashable type: 'Array'")

    def __setitem__(self, index, value):
        raise TypeError(immutable_message(self))

    def __reduce__(self):
        return (_reconstruct, (self._value(), self._aval.weak_type))

    def __repr__(self) -> str:
        value = self._value()
        prefix = "Array("
        if value.size == 0:
            body = f"[], shape={value.shape}"
        else:
            body = np.array2string(np.asarray(value), separator=", ", prefix=prefix,
                                   threshold=1000)
        weak = ", weak_type=True" if self._aval.weak_type else ""
        return f"{prefix}{body}, dtype={self._aval.dtype.name}{weak})"

    def __str__(self) -> str:
        return str(np.asarray(self._value()))

    def __format__(self, spec: str) -> str:
        if self._aval.shape == ():
            return format(self._value().item(), spec)
        return format(str(self), spec)

    # -- concrete-value methods --
    def item(self, *args):
        return np.asarray(self._value()).item(*args)

    def tolist(self):
        return np.asarray(self._value()).tolist()

    def copy(self) -> "Array":
        out = Array._from_numpy(np.array(self._value()), self._aval)
        if self.committed:
            commit(out)
        return out

    def block_until_ready(self) -> "Array":
        if self._buffer is not None:
            self._buffer.block_until_ready()
        return self

    def is_ready(self) -> bool:
        return self._buffer is None or self._buffer.is_ready()

    def devices(self) -> set:
        buffer = self._buffer
        if type(buffer) is ShardedBuffer:
            return set(buffer.devices)
        if buffer is not None:
            return {buffer.device}
        return {default_device()}

    @property
    def device(self):
        buffer = self._buffer
        if type(buffer) is ShardedBuffer:  # as JAX: the sharding stands for its devices
            return buffer.sharding if len(set(buffer.devices)) > 1 else buffer.device
        return next(iter(self.devices()))

    @property
    def sharding(self):
        """How the array is laid out: a ``SingleDeviceSharding`` for an array whole on one
        device, else the sharding it was placed or computed with."""
        buffer = self._buffer
        if type(buffer) is ShardedBuffer:
            return buffer.sharding
        return SingleDeviceSharding(self.device)

    @property
    def addressable_shards(self) -> list:
        """One ``Shard`` per device: its device, index, replica id and data (an Array, on
        that device; committed to it when the array is sharded, as in JAX)."""
        buffer = self._buffer
        if type(buffer) is ShardedBuffer:
            return [Shard(b.device, buffer.sharding, self.shape,
                          commit(Array._from_buffer(b, ShapedArray(
                              tuple(b.shape), self.dtype, self.weak_type))),
                          index=index, replica_id=replica)
                    for b, index, replica in zip(buffer.buffers, buffer.indices,
                                                 buffer.replica_ids(), strict=True)]
        return [Shard(self.device, self.sharding, self.shape, self)]

    global_shards = addressable_shards

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def committed(self) -> bool:
        """Whether the array is committed to its device(s), as JAX's ``Array.committed``.

        An array placed explicitly is committed: the result of ``device_put(x, target)``
        with a device or sharding as target, of ``make_array_from_callback``,
        ``make_array_from_single_device_arrays`` and
        ``make_array_from_process_local_data``, and every array sharded over devices
        (``device_put`` with a ``NamedSharding``, and the results of ``jit`` and of eager
        operations on sharded operands); so are its ``copy()``, its shards' data, and the
        rows of a committed unsplit array. An array made without a target is not:
        ``jnp.array``, ``jnp.zeros``, ``device_put(x)`` without one (which returns an
        Array ``x`` itself, with its own commitment), and results computed from
        uncommitted arrays only.

        Returns
        -------
        bool

        Notes
        -----
        Differences from JAX: a result computed from committed single-device arrays (an
        eager operation such as ``x + 1``, ``jnp.sin(x)``, ``x[0]``; a ``jit`` call; the
        values ``grad`` or ``vmap`` compute) is not committed here, where JAX commits it;
        nor is the result of ``jit`` with single-device ``in_shardings``; ``copy.copy`` and
        ``copy.deepcopy`` give an uncommitted array (JAX keeps the commitment). Sharded
        arrays, and the results computed from them, are committed in every case, as in
        JAX.

        Examples
        --------
        >>> import numpy as np, xjax, xjax.numpy as jnp
        >>> jnp.zeros(3).committed
        False
        >>> xjax.device_put(np.zeros(3)).committed
        False
        >>> xjax.device_put(np.zeros(3), xjax.devices()[0]).committed
        True
        """
        if type(self._buffer) is ShardedBuffer:
            return True
        try:
            return self._committed
        except AttributeError:  # the slot is set on committed arrays only
            return False

    @property
    def is_fully_replicated(self) -> bool:
        buffer = self._buffer
        return type(buffer) is not ShardedBuffer or buffer.sharding.is_fully_replicated

    def copy_to_host_async(self) -> None:
        pass

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # Lent read-only, as np.asarray lends it; DLPack before 1.0 cannot say read-only,
        # so such consumers get a copy (NumPy would refuse to export the read-only view).
        value = self.__array__()
        if max_version is None or tuple(max_version) < (1, 0):
            value = value.copy()
        given = {"stream": stream, "max_version": max_version, "dl_device": dl_device,
                 "copy": copy}
        return value.__dlpack__(**{k: v for k, v in given.items() if v is not None})

    def __dlpack_device__(self):
        return np.asarray(self._value()).__dlpack_device__()

    def delete(self) -> None:
        """Free the array's memory now; any later use raises ``RuntimeError`` (as in JAX).

        ``jit(..., donate_argnums=...)`` deletes the arrays whose buffers XLA reused.
        """
        buffer = self._buffer
        if type(buffer) is _DeletedBuffer:
            return
        if type(buffer) is ShardedBuffer:  # still committed once deleted, as in JAX
            commit(self)
        if buffer is not None:
            buffer.delete()
        self._npy = None
        self._buffer = _DeletedBuffer(self._aval)

    def is_deleted(self) -> bool:
        """Whether :meth:`delete` (or donation to a jitted call) freed this array."""
        return type(self._buffer) is _DeletedBuffer

    def unsafe_buffer_pointer(self) -> int:
        """The address of the array's device buffer, as an int (the buffer is made from the
        host value if the array has none yet).

        Raises
        ------
        RuntimeError
            If the array was deleted (or donated).
        """
        # A buffer of its own (not a view of the host value), so that the array can still
        # be donated in place, as JAX programs that compare pointers expect (Equinox's).
        return self._device_buffer(may_alias=False).unsafe_buffer_pointer()


class _DeletedBuffer:
    """Stands in for a deleted array's buffer: every use raises JAX's RuntimeError. (Kept
    in ``_buffer`` so that no hot path pays for a deletion check.)"""

    __slots__ = ("message",)

    def __init__(self, aval):
        self.message = f"Array has been deleted with shape={aval.str_short()}."

    def _raise(self, *args, **kwargs):
        raise RuntimeError(self.message)

    to_numpy = block_until_ready = is_ready = __array__ = unsafe_buffer_pointer = _raise
    device = property(_raise)

    def is_deleted(self) -> bool:
        return True

    def delete(self) -> None:
        pass


def _reconstruct(value, weak_type):
    return Array(value, weak_type)


def commit(array: Array) -> Array:
    """Mark ``array`` committed to its device(s), as an array placed on an explicit target
    is (``device_put(x, device)``); returns it."""
    array._committed = True
    return array


# -- extension points: the layers above give Arrays their operations and debug checks through
# these functions (Array is defined here; nothing else assigns its attributes) --

_unguarded_value = Array._value


def define_methods(members: dict, properties: dict) -> None:
    """Give ``Array`` its operators and methods (``x + y``, ``x.sum()``) and properties
    (``x.T``, ``x.at``): the numpy layer defines them in terms of its functions."""
    for name, fn in members.items():
        setattr(Array, name, fn)
    for name, getter in properties.items():
        setattr(Array, name, property(getter))


# Jitted calls make and read Arrays in C (Executable.call_arrays): their slots' layout.
set_array_class(Array)


def register_array_type(cls) -> None:
    """Make instances of ``cls`` instances of ``Array`` for ``isinstance``, as JAX's typed
    PRNG key arrays are ``jax.Array`` instances (they are not Arrays otherwise: every
    ``type(x) is Array`` test still fails for them)."""
    global _virtual_array_types
    if cls not in _virtual_array_types:
        _virtual_array_types = (*_virtual_array_types, cls)


def set_value_guard(guard) -> None:
    """Call ``guard(array)`` before each read of a device-resident Array's host value (the
    device-to-host transfer guard), or stop with ``guard=None`` (no cost then)."""
    if guard is None:
        Array._value = _unguarded_value
        return

    def _value(self):
        if self._npy is None:
            guard(self)
        return _unguarded_value(self)
    Array._value = _value


def set_finalizer(finalizer) -> None:
    """Run ``finalizer(array)`` when an Array is freed (the garbage-collection guard), or stop
    with ``finalizer=None``."""
    if finalizer is not None:
        Array.__del__ = finalizer
    elif "__del__" in Array.__dict__:
        del Array.__del__


def as_numpy(x):
    """A NumPy value of an impl's result (an Array from evaluating a body, or a NumPy value
    passed straight through)."""
    if type(x) is Array:
        return x._value()
    return np.asarray(x)
