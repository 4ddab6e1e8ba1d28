"""PRNG keys: typed key arrays (``key<fry>``) and JAX's legacy raw ``uint32[..., 2]`` keys.

A typed key array is a :class:`PRNGKeyArray` holding the uint32 key data. To users it is, as
in JAX, a pytree leaf (``tree_leaves(key) == [key]``) and an ``Array`` instance; to xjax's
transformations it is a pytree node (a leaf node, ``core.pytree.register_leaf_node``), so it
passes through ``jit`` and ``vmap`` as its data does and is rebuilt on the other side. Its
shape is the data's shape without the trailing key dimension. Random functions accept either
kind of key and return keys of the kind they were given. ``xjax.numpy``'s functions that move
elements (``broadcast_to``, ``where``, ``stack``, indexing...) and its comparisons take typed
keys through the layout registered here (``xjax._src.numpy.extended``).
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array, register_array_type
from xjax._src.core.pytree import register_leaf_node
from xjax._src.core.sharding_types import NamedSharding, PartitionSpec
from xjax._src.core.trace import Tracer
from xjax._src.numpy import (asarray, equal, not_equal, reshape, squeeze, swapaxes as swap_axes,
                             take as take_elements, transpose)
from xjax._src.numpy.extended import ExtendedLayout, register_extended_array
from xjax._src.numpy.indexing import _IndexUpdateHelper
from xjax._src.random.threefry import threefry_seed

KEY_SHAPE = (2,)
_U32 = np.dtype(np.uint32)
IMPL_NAME = "threefry2x32"


class KeyDType(dtypes.ExtendedDType):
    """The dtype of Threefry key arrays, printed ``key<fry>``."""

    type = dtypes.prng_key
    name = "key<fry>"
    itemsize = 8
    kind = "V"

    def __eq__(self, other):
        return isinstance(other, KeyDType)

    def __hash__(self):
        return hash(KeyDType)


KEY_DTYPE = KeyDType()


class PRNGSpec:
    """Names a PRNG implementation (only ``threefry2x32`` exists)."""

    __slots__ = ()

    def __repr__(self):
        return f"PRNGSpec({IMPL_NAME!r})"

    def __str__(self):
        return IMPL_NAME

    def __eq__(self, other):
        return isinstance(other, PRNGSpec)

    def __hash__(self):
        return hash(PRNGSpec)


def _check_key_data(data) -> None:
    """JAX's TypeErrors for data that cannot be Threefry keys (a float array, say)."""
    if not all(hasattr(data, attr) for attr in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != KEY_SHAPE:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {KEY_SHAPE}; got shape={tuple(data.shape)} for "
                        f"impl={IMPL_NAME}")
    if data.dtype != _U32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={data.dtype}")


def _as_array(x):
    if type(x) is Array or isinstance(x, Tracer):
        return x
    return asarray(x)


class PRNGKeyArray:
    """An array of Threefry PRNG keys (dtype ``key<fry>``) over uint32 key data.

    Keys support shape queries, indexing, iteration, reshaping and equality; arithmetic and
    conversion to NumPy are errors, as in JAX. Use :func:`key_data` for the bits.
    """

    __slots__ = ("_base",)
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, key_data):
        _check_key_data(key_data)
        self._base = _as_array(key_data)

    @classmethod
    def _unchecked(cls, key_data):
        # pytree unflattening rebuilds keys around whatever leaves transformations pass
        self = object.__new__(cls)
        self._base = key_data
        return self

    shape = property(lambda self: tuple(self._base.shape[:-1]))
    ndim = property(lambda self: len(self._base.shape) - 1)
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    dtype = property(lambda self: KEY_DTYPE)
    itemsize = property(lambda self: KEY_DTYPE.itemsize)
    nbytes = property(lambda self: self.size * KEY_DTYPE.itemsize)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (PRNGKeyArray._unchecked(self._base[i]) for i in range(self.shape[0]))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if not any(i is Ellipsis for i in index):
            index = (*index, Ellipsis)
        return PRNGKeyArray._unchecked(self._base[(*index, slice(None))])

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return PRNGKeyArray._unchecked(reshape(self._base, (*_resolve(shape, self.size),
                                                            *KEY_SHAPE), order=order))

    def ravel(self, order="C"):
        return self.reshape((self.size,), order=order)

    flatten = ravel

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        return PRNGKeyArray._unchecked(squeeze(self._base, axis))

    def transpose(self, *axes):
        if not axes or axes == (None,):
            axes = tuple(reversed(range(self.ndim)))
        elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return PRNGKeyArray._unchecked(transpose(self._base, (*axes, self.ndim)))

    T = property(lambda self: self.transpose())
    at = property(lambda self: _IndexUpdateHelper(self))

    def swapaxes(self, axis1, axis2):
        """The keys with two axes interchanged (``jnp.swapaxes``)."""
        return swap_axes(self, axis1, axis2)

    def take(self, indices, axis=None, mode=None, unique_indices=False,
             indices_are_sorted=False, fill_value=None):
        """The keys at ``indices`` along ``axis`` (``jnp.take``)."""
        return take_elements(self, indices, axis=axis, mode=mode, unique_indices=unique_indices,
                             indices_are_sorted=indices_are_sorted, fill_value=fill_value)

    def __eq__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented  # None, strings...: Python's identity test, as JAX
        return equal(self, other)

    def __ne__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return not_equal(self, other)

    def __bool__(self):
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    def block_until_ready(self):
        self._base.block_until_ready()
        return self

    def unsafe_buffer_pointer(self) -> int:
        """The address of the key data's device buffer."""
        return self._base.unsafe_buffer_pointer()

    def copy(self):
        return PRNGKeyArray._unchecked(self._base)

    @property
    def sharding(self):
        """How the keys are laid out: that of their data, whose trailing dimension (each
        key's words) is never split."""
        sharding = self._base.sharding
        if isinstance(sharding, NamedSharding) and len(sharding.spec) > self.ndim:
            return sharding.with_spec(PartitionSpec(*tuple(sharding.spec)[:self.ndim]))
        return sharding

    def devices(self) -> set:
        return self._base.devices()

    committed = property(lambda self: self._base.committed)

    def __repr__(self):
        return (f"Array({self.shape}, dtype={KEY_DTYPE.name}) overlaying:\n"
                f"{_data_str(self._base)}")

    __str__ = __repr__


# what key comparisons take (refusing the numbers among them with JAX's TypeError)
_OPERANDS = (Array, np.ndarray, np.generic, bool, int, float, complex)


def _data_str(base) -> str:
    if isinstance(base, Tracer):
        return str(base)
    return str(np.asarray(base))


def _resolve(shape, size) -> tuple:
    """``shape`` with one ``-1`` resolved against ``size`` elements."""
    shape = tuple(int(d) for d in shape)
    if shape.count(-1) == 1:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        shape = tuple(size // known if d == -1 else d for d in shape)
    return shape


register_leaf_node(PRNGKeyArray, lambda keys: ((keys._base,), None),
                   lambda _, children: PRNGKeyArray._unchecked(children[0]))
register_array_type(PRNGKeyArray)
# xjax.numpy's functions that move elements (broadcast_to, where, stack...) take key arrays
register_extended_array(PRNGKeyArray, ExtendedLayout(KEY_DTYPE, KEY_SHAPE, _U32,
                                                     lambda keys: keys._base,
                                                     PRNGKeyArray._unchecked))


def _is_arraylike(x) -> bool:
    return (type(x) is Array or isinstance(x, (Tracer, np.ndarray, np.generic))
            or np.isscalar(x))


def check_prng_key(name: str, key, *, allow_batched: bool = False):
    """(uint32 key data, whether ``key`` was a raw legacy key) of a key argument.

    Raises JAX's TypeError for anything that is not key data (a float array, a Python
    number) and its ValueError for a batch of keys where one key is expected.
    """
    if isinstance(key, PRNGKeyArray):
        data, wrapped = key._base, False
    elif _is_arraylike(key):
        _check_key_data(key)
        data, wrapped = _as_array(key), True
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and len(data.shape) > 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{np.shape(key) if wrapped else key.shape} != (). Use jax.vmap for "
                         "batching.")
    return data, wrapped


def return_keys(wrapped: bool, data):
    """Keys of the kind the caller passed: raw data for legacy keys, else typed keys."""
    return data if wrapped else PRNGKeyArray._unchecked(data)


def _check_impl(impl) -> None:
    if impl is None or impl == IMPL_NAME or isinstance(impl, (PRNGSpec, KeyDType)):
        return
    if isinstance(impl, str):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
                         f'"{IMPL_NAME}"?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def _seed_data(ctor_name: str, seed):
    if isinstance(seed, PRNGKeyArray) or getattr(seed, "dtype", None) == KEY_DTYPE:
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    if isinstance(seed, (bool, int)) and not isinstance(seed, np.generic):
        # as JAX: Python ints go through int64 (OverflowError beyond it); without x64 the
        # canonical int32 keeps the low 32 bits
        seed = np.int64(seed)
    return threefry_seed(seed)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (dtype ``key<fry>``, shape ``()``) from an integer seed.

    Parameters
    ----------
    seed : int or integer scalar array
        64- or 32-bit seed: its high and low 32-bit words become the key data.
    impl, dtype : optional
        The PRNG implementation; only ``"threefry2x32"`` exists.

    Examples
    --------
    >>> from xjax import random
    >>> random.key(0)
    Array((), dtype=key<fry>) overlaying:
    [0 0]
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    _check_impl(impl)
    return PRNGKeyArray._unchecked(_seed_data("key", seed))


def PRNGKey(seed, *, impl=None):
    """A legacy PRNG key: the raw key data, a ``uint32[2]`` array, from an integer seed.

    Examples
    --------
    >>> from xjax import random
    >>> random.PRNGKey(42)
    Array([ 0, 42], dtype=uint32)
    """
    _check_impl(impl)
    return _seed_data("PRNGKey", seed)


def key_data(keys):
    """The uint32 key data under ``keys`` (raw keys are returned as they are)."""
    data, _ = check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over ``key_bits_array`` (uint32, trailing dimension 2).

    Examples
    --------
    >>> from xjax import random
    >>> k = random.key(42)
    >>> bool(random.wrap_key_data(random.key_data(k)) == k)
    True
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    _check_impl(impl)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data expects uint32 key data, got a key array")
    return PRNGKeyArray(key_bits_array)


def key_impl(keys):
    """The name of the implementation of ``keys``: ``'threefry2x32'``."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return IMPL_NAME


def key_dtype(impl_spec=None):
    """The dtype of typed keys of an implementation: ``key<fry>``."""
    _check_impl(impl_spec)
    return KEY_DTYPE


def clone(key):
    """A copy of ``key`` (keys are immutable values: the same key)."""
    return key
