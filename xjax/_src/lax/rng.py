"""XLA's random-number operations: ``rng_bit_generator`` (stateless, keyed bits) and
``rng_uniform`` (XLA's stateful uniform generator).

``rng_bit_generator`` is what XLA's ``RngBitGeneratorExpander`` makes of
``stablehlo.rng_bit_generator``: the state is a ``u64[2]`` (JAX passes a ``u32[4]`` and
bitcasts it), its first word is the key and stays unchanged, the second word is a counter
advanced by the number of blocks drawn. ``RNG_DEFAULT`` is Philox on the CPU and GPU
backends. The NumPy impl below reproduces those bits exactly (the tests compare it with
XLA and with JAX), so eager calls need no compilation.

``rng_uniform`` draws from XLA's per-executable hidden state, seeded at compile time: its
values are reproducible by nothing but XLA itself, so its eager impl runs the operation
compiled alone by XLA, as JAX does.
"""

from __future__ import annotations

import enum

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, NOT_DIFFERENTIABLE, Absent, Primitive
from xjax._src.lax.batch_rules import batch_by_loop, move_axis
from xjax._src.lax.prng import threefry2x32_p
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import canonicalize_shape
from xjax._src.lowering.stablehlo import ModuleBuilder, aval_type, tensor_type
from xjax._src.runtime import default_client
from xjax._src.lax.slicing import dynamic_update_index_in_dim, index_in_dim

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_MASK64 = (1 << 64) - 1
_BIT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


class RandomAlgorithm(enum.IntEnum):
    """Which PRNG algorithm ``rng_bit_generator`` uses."""

    RNG_DEFAULT = 0
    "The platform's default algorithm (Philox on XLA's CPU and GPU backends)."

    RNG_THREE_FRY = 1
    "The Threefry-2x32 PRNG algorithm."

    RNG_PHILOX = 2
    "The Philox-4x32 PRNG algorithm."

    def __str__(self):
        return self.name


# -- the bit generators, as XLA's prng library builds them (xla/hlo/builder/lib/prng.cc) --

# Philox-4x32-10 (Salmon et al., SC 2011): round multipliers and key increments.
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _philox4x32(words, k0: int, k1: int):
    """Ten Philox rounds over four uint32 arrays (counter words, least significant first)."""
    x0, x1, x2, x3 = words
    m0, m1 = np.uint64(_PHILOX_M[0]), np.uint64(_PHILOX_M[1])
    for _ in range(10):
        p0 = x0.astype(np.uint64) * m0
        p1 = x2.astype(np.uint64) * m1
        hi0, lo0 = (p0 >> np.uint64(32)).astype(_U32), p0.astype(_U32)
        hi1, lo1 = (p1 >> np.uint64(32)).astype(_U32), p1.astype(_U32)
        x0, x1, x2, x3 = hi1 ^ x1 ^ np.uint32(k0), lo1, hi0 ^ x3 ^ np.uint32(k1), lo0
        k0 = (k0 + _PHILOX_W[0]) & 0xFFFFFFFF
        k1 = (k1 + _PHILOX_W[1]) & 0xFFFFFFFF
    return x0, x1, x2, x3


def _split_u64(x):
    return x.astype(_U32), (x >> np.uint64(32)).astype(_U32)


def _join_u32(lo, hi):
    return lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))


def _philox_bits(key: int, counter: tuple[int, int], shape, dtype):
    """Philox bits of ``shape``: 128-bit counters ``counter + i`` (low, high words), four
    uint32 outputs per counter taken round-robin; 64-bit outputs pair them. Returns the
    bits and the low word of the advanced counter."""
    n = int(np.prod(shape, dtype=np.int64))
    wide = dtype.itemsize == 8
    blocks = -(-(2 * n if wide else n) // 4)
    low, high = counter
    ctr_low = np.arange(blocks, dtype=np.uint64) + np.uint64(low)  # wraps, as XLA's u64 does
    carry = ctr_low < np.uint64(low)
    ctr_high = np.where(carry, np.uint64((high + 1) & _MASK64), np.uint64(high))
    words = (*_split_u64(ctr_low), *_split_u64(ctr_high))
    out = _philox4x32(words, key & 0xFFFFFFFF, key >> 32)
    if wide:
        out = (_join_u32(out[0], out[1]), _join_u32(out[2], out[3]))
    flat = np.stack(out, axis=1).reshape(-1)[:n]
    return flat.reshape(shape).astype(dtype), (low + blocks) & _MASK64


def _threefry_words(key: int, start: int, count: int):
    counters = np.arange(count, dtype=np.uint64) + np.uint64(start)
    x0, x1 = _split_u64(counters)
    k0, k1 = np.uint32(key & 0xFFFFFFFF), np.uint32(key >> 32)
    return threefry2x32_p.impl(k0, k1, x0, x1)


def _threefry_bits(key: int, counter: int, shape, dtype):
    """Threefry-2x32 bits of ``shape``, as XLA lays them out. Returns the bits and the
    advanced counter."""
    shape = tuple(shape)
    if dtype.itemsize == 8:  # one 64-bit number per counter, in row-major order
        n = int(np.prod(shape, dtype=np.int64))
        x0, x1 = _threefry_words(key, counter, n)
        return _join_u32(x0, x1).reshape(shape), (counter + n) & _MASK64
    # 32 bits and narrower: each counter gives two numbers, adjacent along one dimension
    # (the first even one, else the largest); narrower dtypes keep the low bits.
    if not shape:
        x0, _ = _threefry_words(key, counter, 1)
        return x0.reshape(()).astype(dtype), (counter + 1) & _MASK64
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    split = even[0] if even else max(range(len(shape)), key=lambda i: (shape[i], -i))
    half = list(shape)
    half[split] = -(-shape[split] // 2)
    m = int(np.prod(half, dtype=np.int64))
    x0, x1 = _threefry_words(key, counter, m)
    pair = np.stack([x0.reshape(half), x1.reshape(half)], axis=split + 1)
    full = list(shape)
    full[split] = 2 * half[split]
    out = pair.reshape(full)[tuple(slice(0, d) for d in shape)]
    return out.astype(dtype), (counter + m) & _MASK64


# -- rng_bit_generator --

def _key_as_u64(key_aval) -> bool:
    """Whether the key is the ``u64[2]`` form (else ``u32[4]``); TypeError for others."""
    if key_aval.shape == (4,) and key_aval.dtype == _U32:
        return False
    if key_aval.shape == (2,) and key_aval.dtype == _U64:
        return True
    raise TypeError("rng_bit_generator: the key must be a uint32[4] (or a uint64[2]) array, "
                    f"got {key_aval.str_short()}")


def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm, out_sharding):
    _key_as_u64(key)
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype).name}")
    if any(d < 0 for d in shape):
        raise ValueError(f"rng_bit_generator: negative dimension in shape {shape}")
    return [ShapedArray(key.shape, key.dtype, key.weak_type),
            ShapedArray(tuple(shape), np.dtype(dtype), False)]


def _rng_bit_generator_impl(key, *, shape, dtype, algorithm, out_sharding):
    key = np.asarray(key)
    state = key if key.dtype == _U64 else _join_u32(key[0::2], key[1::2])
    k, s = int(state[0]), int(state[1])
    dtype = np.dtype(dtype)
    if algorithm == RandomAlgorithm.RNG_THREE_FRY:
        bits, s = _threefry_bits(k, s, shape, dtype)
    else:
        # XLA's default is Philox; a u64[2] state holds no separate high counter word, so
        # the key stands in for it (XLA's GetPhiloxStateOp reverses the state).
        bits, s = _philox_bits(k, (s, k), shape, dtype)
    new_state = np.array([k, s], _U64)
    new_key = new_state if key.dtype == _U64 else _split_interleaved(new_state)
    return [new_key, bits]


def _split_interleaved(state):
    lo, hi = _split_u64(state)
    return np.stack([lo, hi], axis=1).reshape(-1)


def _rng_bit_generator_lower(ctx, key, *, shape, dtype, algorithm, out_sharding):
    fb = ctx.builder
    key_aval, bits_aval = ctx.avals_out
    u32_key = key_aval.dtype == _U32
    state_type = tensor_type((2,), _U64)
    if u32_key:
        pairs = fb.op1("stablehlo.reshape", [key], tensor_type((2, 2), _U32))
        key = fb.op1("stablehlo.bitcast_convert", [pairs], state_type)
    attrs = {"rng_algorithm": f"#stablehlo<rng_algorithm {_HLO_ALGORITHMS[algorithm]}>"}
    new_state, bits = fb.op("stablehlo.rng_bit_generator", [key],
                            [state_type, aval_type(bits_aval)], attrs)
    if u32_key:
        pairs = fb.op1("stablehlo.bitcast_convert", [new_state], tensor_type((2, 2), _U32))
        new_state = fb.op1("stablehlo.reshape", [pairs], aval_type(key_aval))
    return [new_state, bits]


_HLO_ALGORITHMS = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
                   RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
                   RandomAlgorithm.RNG_PHILOX: "PHILOX"}


def _rng_bit_generator_batch(args, dims, *, shape, dtype, algorithm, out_sharding):
    # JAX's rule, kept for identical bits: the first example's key draws the bits of the
    # whole batch (batch-major) and only that key is advanced.
    (keys,), (dim,) = args, dims
    keys = move_axis(keys, dim, 0)
    size = get_aval(keys).shape[0]
    new_key, bits = rng_bit_generator_p.bind(
        index_in_dim(keys, 0, 0, keepdims=False), shape=(size, *shape), dtype=dtype,
        algorithm=algorithm, out_sharding=out_sharding)
    return [dynamic_update_index_in_dim(keys, new_key, 0, 0), bits], [0, 0]


rng_bit_generator_p = Primitive(
    "rng_bit_generator",
    abstract_eval=_rng_bit_generator_abstract_eval,
    impl=_rng_bit_generator_impl,
    lower=_rng_bit_generator_lower,
    jvp=NOT_DIFFERENTIABLE,
    transpose=NONLINEAR,
    batch=_rng_bit_generator_batch,
    multiple_results=True,
)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """Stateless PRNG bit generator (XLA's ``RngBitGenerator``).

    Experimental in JAX, and its use is discouraged: most users want ``xjax.random``.

    Parameters
    ----------
    key : uint32[4] array (or uint64[2] with 64-bit types enabled)
        The generator's state: the key and a counter.
    shape : sequence of int
        The shape of the bits.
    dtype : uint8, uint16, uint32 or uint64
        The dtype of the bits.
    algorithm : RandomAlgorithm
        ``RNG_DEFAULT`` (Philox on XLA's CPU and GPU backends), ``RNG_THREE_FRY`` or
        ``RNG_PHILOX``.
    out_sharding : None
        Only ``None`` (one device) is supported.

    Returns
    -------
    tuple of two arrays
        The new key (same shape and dtype as ``key``) and the bits.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> new_key, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (3,))
    >>> new_key
    Array([0, 0, 1, 0], dtype=uint32)
    >>> bits
    Array([1713891541, 3781805453, 3159862348], dtype=uint32)
    """
    shape = canonicalize_shape(shape)
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "rng_bit_generator")
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype).name}")
    if out_sharding is not None:
        raise NotImplementedError("rng_bit_generator: out_sharding is not supported by xjax "
                                  "(single-device only); pass None")
    algorithm = RandomAlgorithm(algorithm)
    return tuple(rng_bit_generator_p.bind(to_operand(key), shape=shape, dtype=np.dtype(dtype),
                                          algorithm=algorithm, out_sharding=None))


# -- rng_uniform --

# Element types XLA's RngExpander handles (narrower floats go through float32); others
# abort the compiler process, so they are refused here.
_UNIFORM_DTYPES = tuple(np.dtype(t) for t in (
    np.float16, dtypes.bfloat16, np.float32, np.float64, np.int32, np.uint32, np.int64,
    np.uint64))


def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got "
                         f"{a.dtype.name} and {b.dtype.name}.")
    if a.shape != () or b.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} "
                         f"and {b.shape}.")
    if a.dtype not in _UNIFORM_DTYPES:
        names = ", ".join(d.name for d in _UNIFORM_DTYPES)
        raise TypeError(f"rng_uniform does not support dtype {a.dtype.name} (XLA's rng "
                        f"handles {names})")
    if any(d < 0 for d in shape):
        raise ValueError(f"rng_uniform: negative dimension in shape {shape}")
    return ShapedArray(tuple(shape), a.dtype, a.weak_type and b.weak_type)


def _emit_rng_uniform(fb, a, b, shape, out_type):
    dims = fb.constant(np.asarray(shape, np.int64).reshape(len(shape)))
    return fb.op1("stablehlo.rng", [a, b, dims], out_type,
                  {"rng_distribution": "#stablehlo<rng_distribution UNIFORM>"})


def _rng_uniform_lower(ctx, a, b, *, shape):
    return _emit_rng_uniform(ctx.builder, a, b, shape, aval_type(ctx.avals_out[0]))


_uniform_executables: dict = {}


def _rng_uniform_impl(a, b, *, shape):
    # XLA's stateful generator: only XLA produces its numbers, so run it compiled alone
    # (once per dtype and shape; each execution advances the executable's hidden state).
    a, b = np.asarray(a), np.asarray(b)
    key = (a.dtype, tuple(shape))
    executable = _uniform_executables.get(key)
    if executable is None:
        module = ModuleBuilder("xjax_eager_rng_uniform")
        scalar = tensor_type((), a.dtype)
        fb = module.function("main", [scalar, scalar], "public")
        fb.ret([_emit_rng_uniform(fb, *fb.args, shape, tensor_type(shape, a.dtype))])
        executable = _uniform_executables[key] = default_client().compile(module.text())
    (buffer,) = executable.execute([np.ascontiguousarray(a), np.ascontiguousarray(b)])
    return np.asarray(buffer.to_numpy())


rng_uniform_p = Primitive(
    "rng_uniform",
    abstract_eval=_rng_uniform_abstract_eval,
    impl=_rng_uniform_impl,
    lower=_rng_uniform_lower,
    jvp=Absent("a random draw: JAX defines no derivative of rng_uniform"),
    transpose=NONLINEAR,
    batch=lambda args, dims, **params: _rng_uniform_batch(args, dims, **params),
)
# JAX has no batching rule; drawing each example's numbers separately is a correct one.
_rng_uniform_batch = batch_by_loop(rng_uniform_p)


def rng_uniform(a, b, shape):
    """Stateful PRNG: uniformly distributed numbers in ``[a, b)`` from XLA's hidden state.

    Experimental in JAX, and its use is discouraged: use ``xjax.random``. If ``b <= a`` the
    result is undefined. Successive calls give different numbers; they cannot be reproduced.

    Parameters
    ----------
    a, b : scalars of one dtype
        The bounds (float16, bfloat16, float32, float64, int32, uint32, int64 or uint64).
    shape : sequence of int
        The shape of the result.

    Returns
    -------
    Array
        Of ``shape`` and the bounds' dtype.

    Examples
    --------
    >>> from xjax import lax
    >>> x = lax.rng_uniform(0.0, 1.0, (3,))
    >>> x.shape, bool(((0 <= x) & (x < 1)).all())
    ((3,), True)
    """
    return rng_uniform_p.bind(to_operand(a), to_operand(b), shape=canonicalize_shape(shape))


__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p", "rng_uniform",
           "rng_uniform_p"]
