"""Threefry key derivation and random bits, in both of JAX's counter layouts.

Everything here works on raw key data (``uint32[2]``). ``jax_threefry_partitionable`` picks
the layout:

* partitionable (JAX 0.10's default): element ``i`` of an output of shape ``s`` (in C order)
  hashes the 64-bit counter ``i`` split into words ``(hi, lo)``; its two output words are
  the two halves of a new key (``split``), or are xor-ed into 32 random bits.
* legacy: the counters ``0 .. n-1`` are hashed as one flat stream whose first half forms the
  first words and second half the second words; the outputs are concatenated back into one
  stream of ``n`` words (``split`` takes ``2 * num`` words, ``bits`` takes as many 32-bit
  words as the bits need).

``fold_in`` and seeding are the same in both layouts.
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.config import config
from xjax._src.core.placement import placed_over_context
from xjax._src.core.trace import Tracer
from xjax._src.lax.prng import threefry2x32_p
from xjax._src.random._common import lax_module as _lax

_U32 = np.dtype(np.uint32)
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32,
               64: np.dtype(np.uint64)}
_MAX_WORDS = 2 ** 32 - 1


def threefry_seed(seed):
    """Key data ``[hi, lo]`` of an integer seed: the high and low 32-bit words of a 64-bit
    seed; ``hi`` is 0 for narrower seeds, whose (sign-extended) value gives ``lo``."""
    if isinstance(seed, Tracer):
        return _traced_seed(seed)
    npy = np.asarray(seed)
    npy = npy.astype(dtypes.canonicalize_dtype(npy.dtype)) if npy.dtype != np.bool_ else npy
    if not dtypes.is_integer(npy.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    wide = npy.astype(np.uint64) if npy.dtype.itemsize == 8 else None
    hi = (wide >> np.uint64(32)).astype(_U32) if wide is not None else np.uint32(0)
    data = np.array([hi, npy.astype(_U32)], _U32)
    return placed_over_context(Array._from_numpy(data, ShapedArray((2,), _U32)), typed=False)


def _traced_seed(seed):
    lax = _lax()
    if not dtypes.is_integer(seed.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    lo = lax.convert_element_type(seed, _U32)
    if seed.dtype.itemsize == 8:
        shifted = lax.shift_right_logical(seed, lax.full((), 32, seed.dtype))
        hi = lax.convert_element_type(shifted, _U32)
    else:
        hi = lax.full((), 0, _U32)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def _key_words(key):
    lax = _lax()
    return (lax.index_in_dim(key, 0, keepdims=False), lax.index_in_dim(key, 1, keepdims=False))


def threefry_2x32(key, count):
    """The legacy layout's hash of a stream of uint32 counters under one key: the stream's
    first half and second half are the two counter words; the output has ``count``'s shape."""
    lax = _lax()
    if key.dtype != _U32 or count.dtype != _U32:
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got "
                        f"{[key.dtype, count.dtype]}")
    k0, k1 = _key_words(key)
    flat = lax.reshape(count, (math.prod(count.shape),))
    size = flat.shape[0]
    odd = size % 2
    if odd:
        flat = lax.concatenate([flat, lax.full((1,), 0, _U32)], 0)
    half = flat.shape[0] // 2
    x0 = lax.slice_in_dim(flat, 0, half)
    x1 = lax.slice_in_dim(flat, half, 2 * half)
    y0, y1 = threefry2x32_p.bind(k0, k1, x0, x1)
    out = lax.concatenate([y0, y1], 0)
    if odd:
        out = lax.slice_in_dim(out, 0, size)
    return lax.reshape(out, tuple(count.shape))


def iota_2x32_shape(shape):
    """The 64-bit C-order index of each element of ``shape``, as ``(hi, lo)`` uint32 words."""
    lax = _lax()
    size = math.prod(shape)
    if size > 2 ** 32:
        raise NotImplementedError("random values for arrays of more than 2**32 elements")
    hi = lax.full(shape, 0, _U32)
    if len(shape) == 1:
        return hi, lax.iota(_U32, size)
    lo = lax.reshape(lax.iota(_U32, size), tuple(shape)) if shape else lax.full((), 0, _U32)
    return hi, lo


def split(key, shape: tuple):
    """Key data of shape ``(*shape, 2)``: ``prod(shape)`` new keys derived from ``key``."""
    lax = _lax()
    shape = tuple(shape)
    if config.jax_threefry_partitionable:
        k0, k1 = _key_words(key)
        hi, lo = iota_2x32_shape(shape)
        w0, w1 = threefry2x32_p.bind(k0, k1, hi, lo)
        rank = len(shape)
        return lax.concatenate([lax.broadcast_in_dim(w, (*shape, 1), tuple(range(rank)))
                                for w in (w0, w1)], rank)
    num = math.prod(shape)
    return lax.reshape(threefry_2x32(key, lax.iota(_U32, 2 * num)), (*shape, 2))


def fold_in(key, data):
    """Key data of ``key`` with the uint32 scalar ``data`` mixed in (both layouts)."""
    lax = _lax()
    zero = lax.full((1,), 0, _U32)
    return threefry_2x32(key, lax.concatenate([zero, lax.reshape(data, (1,))], 0))


def random_bits(key, bit_width: int, shape: tuple):
    """Uniform random unsigned integers of ``bit_width`` bits and shape ``shape``."""
    if bit_width not in UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    shape = tuple(shape)
    if config.jax_threefry_partitionable:
        return _bits_partitionable(key, bit_width, shape)
    return _bits_legacy(key, bit_width, shape)


def _bits_partitionable(key, bit_width, shape):
    lax = _lax()
    k0, k1 = _key_words(key)
    hi, lo = iota_2x32_shape(shape)
    w0, w1 = threefry2x32_p.bind(k0, k1, hi, lo)
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        high = lax.convert_element_type(w0, dtype)
        low = lax.convert_element_type(w1, dtype)
        return lax.bitwise_or(lax.shift_left(high, lax.full((), 32, dtype)), low)
    mixed = lax.bitwise_xor(w0, w1)
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, dtype)


def _bits_legacy(key, bit_width, shape):
    lax = _lax()
    size = math.prod(shape)
    words = -(-bit_width * size // 32)
    if words >= _MAX_WORDS:
        raise NotImplementedError("random bits of more than 2**32 - 1 words in the legacy "
                                  "Threefry mode")
    bits = threefry_2x32(key, lax.iota(_U32, words))
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        high, low = (lax.convert_element_type(lax.slice_in_dim(bits, i * size, (i + 1) * size),
                                              dtype) for i in range(2))
        bits = lax.bitwise_or(lax.shift_left(high, lax.full((), 32, dtype)), low)
    elif bit_width in (8, 16):
        # each word gives 32 // bit_width values, its low bits first (a little-endian view)
        per_word = 32 // bit_width
        shifts = lax.broadcasted_iota(_U32, (words, per_word), 1)
        shifts = lax.mul(shifts, lax.full((), bit_width, _U32))
        spread = lax.broadcast_in_dim(bits, (words, per_word), (0,))
        parts = lax.shift_right_logical(spread, shifts)
        parts = lax.convert_element_type(parts, dtype)  # keeps the low bit_width bits
        bits = lax.slice_in_dim(lax.reshape(parts, (words * per_word,)), 0, size)
    return lax.reshape(bits, shape)
