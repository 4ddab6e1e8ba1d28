"""Key derivation (``split``, ``fold_in``) and the basic samplers every other one builds on:
``bits``, ``uniform``, ``normal``, ``randint``, ``bernoulli``. Bit for bit as JAX's."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from xjax._src.core import dtypes
from xjax._src.random import threefry
from xjax._src.random._common import canonical_shape, check_shape, float_dtype, sampler_jit
from xjax._src.random.keys import check_prng_key, return_keys
from xjax._src.random._common import lax_module as _lax
from xjax._src import numpy as jnp
from xjax._src.core.trace import Tracer

_U32 = np.dtype(np.uint32)


# -- keys --

@sampler_jit(static_argnames=("shape",))
def _split(key, *, shape):
    return threefry.split(key, shape)


def split(key, num: int | tuple = 2):
    """Split a key into ``num`` new keys (a leading axis of size ``num``, or shape ``num``).

    Parameters
    ----------
    key : a PRNG key (typed, or legacy ``uint32[2]``)
    num : int or tuple of ints, default 2

    Returns
    -------
    Keys of the kind given, of shape ``(num,)`` (typed) or ``(num, 2)`` (legacy).

    Examples
    --------
    >>> from xjax import random
    >>> random.split(random.PRNGKey(0))
    Array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
    """
    data, wrapped = check_prng_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (operator.index(num),)
    return return_keys(wrapped, _split(data, shape=canonical_shape(shape)))


@sampler_jit()
def _fold_in(key, data):
    return threefry.fold_in(key, data)


def fold_in(key, data):
    """A new key from ``key`` and a 32-bit integer ``data`` (e.g. a step number).

    Examples
    --------
    >>> from xjax import random
    >>> random.fold_in(random.PRNGKey(0), 7)
    Array([2716826189,  292468403], dtype=uint32)
    """
    key_data, wrapped = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    return return_keys(wrapped, _fold_in(key_data, _as_uint32(data)))


def _as_uint32(data):
    if isinstance(data, Tracer):
        if not dtypes.is_integer(data.dtype):
            raise TypeError(f"fold_in data must be an integer, got {data.dtype}")
        return _lax().convert_element_type(data, _U32)
    npy = np.asarray(data)
    if not (dtypes.is_integer(npy.dtype) or npy.dtype == np.bool_):
        raise TypeError(f"fold_in data must be an integer, got {npy.dtype}")
    if npy.dtype.kind == "i" and isinstance(data, int) and data < 0:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    if isinstance(data, int) and data >= 2 ** 32:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    return np.asarray(npy.astype(_U32))


# -- bits --

@sampler_jit(static_argnames=("bit_width", "shape"))
def _random_bits(key, *, bit_width, shape):
    return threefry.random_bits(key, bit_width, shape)


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random bits as unsigned integers (``uint32`` by default).

    Examples
    --------
    >>> from xjax import random
    >>> random.bits(random.PRNGKey(0), (3,))
    Array([4070199207, 4202968722, 1427181096], dtype=uint32)
    """
    data, _ = check_prng_key("bits", key)
    if dtype is None:
        dtype = dtypes.default_uint_dtype()
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype)
    if not dtypes.is_unsigned(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _random_bits(data, bit_width=dtype.itemsize * 8, shape=canonical_shape(shape))


# -- uniform --

def uniform_bits_to_float(bits_array, dtype):
    """Floats in [0, 1): random mantissa bits under the exponent of 1.0, minus 1."""
    lax = _lax()
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = threefry.UINT_DTYPES[nbits]
    if bits_array.dtype != uint_dtype:
        bits_array = lax.convert_element_type(bits_array, uint_dtype)
    mantissa = lax.shift_right_logical(bits_array, lax.full((), rng_bits - nmant, uint_dtype))
    one_bits = np.array(1.0, dtype).view(uint_dtype)
    with_exponent = lax.bitwise_or(mantissa, lax.full((), one_bits, uint_dtype))
    return lax.sub(lax.bitcast_convert_type(with_exponent, dtype), lax.full((), 1.0, dtype))


def uniform_impl(key, minval, maxval, shape, dtype):
    """Uniform floats in [minval, maxval) (traceable; key is raw key data)."""
    lax = _lax()
    finfo = dtypes.finfo(dtype)
    if finfo.bits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    minval = lax.broadcast_to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    rng_bits = 8 if finfo.nmant < 8 else finfo.bits
    floats = uniform_bits_to_float(threefry.random_bits(key, rng_bits, shape), dtype)
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return lax.max(minval, lax.reshape(scaled, shape))


@sampler_jit(static_argnames=("shape", "dtype"))
def _uniform(key, minval, maxval, *, shape, dtype):
    return uniform_impl(key, minval, maxval, shape, dtype)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform random floats in ``[minval, maxval)``.

    Parameters
    ----------
    key : a PRNG key
    shape : tuple of ints, default ()
    dtype : float dtype, default float32 (float64 with x64)
    minval, maxval : floats or arrays broadcast-compatible with ``shape``

    Examples
    --------
    >>> from xjax import random
    >>> random.uniform(random.PRNGKey(0), (3,))
    Array([0.947667  , 0.9785799 , 0.33229148], dtype=float32)
    """
    data, _ = check_prng_key("uniform", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
    return _uniform(data, minval, maxval, shape=canonical_shape(shape), dtype=dtype)


# -- normal --

def normal_real_impl(key, shape, dtype):
    """Standard normal floats: ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in (-1, 1)."""
    lax = _lax()
    low = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform_impl(key, np.asarray(low, dtype), np.asarray(1.0, dtype), shape, dtype)
    return lax.mul(lax.full((), np.sqrt(2), dtype), lax.erf_inv(u))


def normal_impl(key, shape, dtype):
    lax = _lax()
    if not dtypes.is_complex(dtype):
        return normal_real_impl(key, shape, dtype)
    real = np.dtype(np.float64 if dtype == np.complex128 else np.float32)
    keys = threefry.split(key, (2,))
    parts = [lax.convert_element_type(normal_real_impl(lax.index_in_dim(keys, i, keepdims=False),
                                                       shape, real), dtype) for i in range(2)]
    imag = lax.mul(parts[1], lax.full((), 1j, dtype))
    return lax.div(lax.add(parts[0], imag), lax.full((), np.sqrt(2), dtype))


@sampler_jit(static_argnames=("shape", "dtype"))
def _normal(key, *, shape, dtype):
    return normal_impl(key, shape, dtype)


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal random values (complex dtypes: independent real and imaginary parts
    of variance 1/2 each).

    Examples
    --------
    >>> from xjax import random
    >>> random.normal(random.PRNGKey(0), (3,))
    Array([ 1.6226422 ,  2.0252647 , -0.43359444], dtype=float32)
    """
    data, _ = check_prng_key("normal", key)
    dtype = float_dtype("normal", dtype, allow_complex=True)
    return _normal(data, shape=canonical_shape(shape), dtype=dtype)


# -- randint --

def _convert_and_clip_integer(val, dtype):
    """``val`` converted to the integer ``dtype``, clipped to its range (not wrapped)."""
    lax = _lax()
    src, dst = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    low = lax.full((), max(src.min, dst.min), val.dtype)
    high = lax.full((), min(src.max, dst.max), val.dtype)
    return lax.convert_element_type(lax.clamp(low, val, high), dtype)


def _randint_impl(key, minval, maxval, shape, dtype):
    lax = _lax()
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    int_default = dtypes.default_int_dtype()
    if not dtypes.is_integer(minval.dtype):
        minval = minval.astype(int_default)
    if not dtypes.is_integer(maxval.dtype):
        maxval = maxval.astype(int_default)
    dtype_max = jnp.asarray(dtypes.iinfo(dtype).max, dtype)
    maxval_out_of_range = lax.gt(maxval, _convert_and_clip_integer(dtype_max, maxval.dtype))
    minval = lax.broadcast_to_rank(_convert_and_clip_integer(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(_convert_and_clip_integer(maxval, dtype), len(shape))
    nbits = dtypes.iinfo(dtype).bits
    keys = threefry.split(key, (2,))
    higher, lower = (threefry.random_bits(lax.index_in_dim(keys, i, keepdims=False), nbits,
                                             shape) for i in range(2))
    unsigned = threefry.UINT_DTYPES[nbits]
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned)
    one = lax.full((), 1, unsigned)
    # maxval <= minval gives minval (span 1); an out-of-range maxval widens the span by one,
    # wrapping to 0 (no reduction at all) when it already is the largest value
    span = lax.select(lax.le(maxval, minval), lax.full_like(span, 1), span)
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, one), span)
    # (higher * 2**nbits + lower) % span, computed without a double-width integer
    multiplier = lax.rem(lax.full((), 2 ** (nbits // 2), unsigned), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


@sampler_jit(static_argnames=("shape", "dtype"))
def _randint(key, minval, maxval, *, shape, dtype):
    return _randint_impl(key, minval, maxval, shape, dtype)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform random integers in ``[minval, maxval)`` (int32 by default).

    Examples
    --------
    >>> from xjax import random
    >>> random.randint(random.PRNGKey(0), (6,), 0, 10)
    Array([9, 0, 2, 3, 1, 7], dtype=int32)
    """
    data, _ = check_prng_key("randint", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype)
    shape = canonical_shape(shape)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sample_dtype = dtype
    if info.bits < 32:  # sample narrow integers at 32 bits, for less bias
        sample_dtype = np.dtype(np.int32)
        minval = jnp.asarray(minval).astype(np.int32).clip(int(info.min), int(info.max))
        maxval = jnp.asarray(maxval).astype(np.int32).clip(int(info.min), int(info.max) + 1)
    out = _randint(data, minval, maxval, shape=shape, dtype=sample_dtype)
    return out if sample_dtype == dtype else out.astype(dtype)


# -- bernoulli --

@sampler_jit(static_argnames=("shape", "mode"))
def _bernoulli(key, p, *, shape, mode):
    lax = _lax()
    dtype = p.dtype
    if mode == "high":
        both = uniform_impl(key, np.asarray(0.0, dtype), np.asarray(1.0, dtype), (2, *shape),
                            dtype)
        u1, u2 = (lax.index_in_dim(both, i, keepdims=False) for i in range(2))
        u2 = lax.mul(u2, lax.full((), 2.0 ** -dtypes.finfo(dtype).nmant, dtype))
        return lax.lt(u2, lax.sub(p, u1))
    u = uniform_impl(key, np.asarray(0.0, dtype), np.asarray(1.0, dtype), shape, dtype)
    return lax.lt(u, p)


def bernoulli(key, p=0.5, shape=None, mode: str = "low", *, out_sharding=None):
    """Random booleans that are True with probability ``p``.

    Examples
    --------
    >>> from xjax import random
    >>> random.bernoulli(random.PRNGKey(0), 0.3, (4,))
    Array([False, False, False, False], dtype=bool)
    """
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    data, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = jnp.asarray(p, dtype)
    if shape is None:
        shape = tuple(np.shape(p))
    else:
        shape = canonical_shape(shape)
        check_shape("bernoulli", shape, np.shape(p))
    return _bernoulli(data, p, shape=shape, mode=mode)


def uniform01(key, shape, dtype):
    """Uniform samples in [0, 1) of ``dtype`` (the gamma-family and binomial samplers' draw)."""
    return uniform_impl(key, np.asarray(0.0, dtype), np.asarray(1.0, dtype), shape, dtype)
