"""Bit operations: not/and/or/xor, shifts, population count, leading zeros, ``mulhi``.

Shifts follow XLA, not C or NumPy: an amount outside ``[0, bits)`` (negative amounts count
as huge unsigned ones) shifts every bit out, giving 0 for ``shift_left`` and
``shift_right_logical`` and the sign fill for ``shift_right_arithmetic``; the arithmetic
shift of an unsigned integer treats its top bit as a sign, as XLA does.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.primitive import NOT_DIFFERENTIABLE
from xjax._src.lax.naryop import (INTEGER, INTEGRAL_OR_BOOL, Emitter, batch_naryop,
                                  binary_wrapper, broadcast_args, lower_single, naryop,
                                  unary_wrapper)


def _unsigned(dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def _signed(dtype) -> np.dtype:
    return np.dtype(f"i{dtype.itemsize}")


def _bitwise(name, impl, op, doc, arity=2, accepted=INTEGRAL_OR_BOOL):
    primitive = naryop(name, accepted, impl=impl, lower=lower_single(op),
                       jvp=NOT_DIFFERENTIABLE, batch=batch_naryop(name))
    wrap = binary_wrapper if arity == 2 else unary_wrapper
    return primitive, wrap(primitive, doc)


not_p, bitwise_not = _bitwise("not", np.invert, "stablehlo.not", """Elementwise bitwise NOT
(logical NOT for booleans).""", arity=1)
and_p, bitwise_and = _bitwise("and", np.bitwise_and, "stablehlo.and",
                              "Elementwise bitwise AND (logical AND for booleans).")
or_p, bitwise_or = _bitwise("or", np.bitwise_or, "stablehlo.or",
                            "Elementwise bitwise OR (logical OR for booleans).")
xor_p, bitwise_xor = _bitwise("xor", np.bitwise_xor, "stablehlo.xor",
                              "Elementwise bitwise XOR (logical XOR for booleans).")
for _wrapper in (bitwise_not, bitwise_and, bitwise_or, bitwise_xor):
    _wrapper.__name__ = _wrapper.__qualname__ = "bitwise_" + _wrapper.__name__

# -- shifts --


def _shift_amount(x, y):
    """(in_range, amount): whether ``0 <= y < bits``, and ``y`` where so (0 elsewhere)."""
    y = np.asarray(y).view(_unsigned(y.dtype))  # negative amounts become huge
    in_range = y < x.dtype.itemsize * 8
    return in_range, np.where(in_range, y, np.zeros((), y.dtype)).view(x.dtype)


def _shift_left_impl(x, y):
    in_range, amount = _shift_amount(x, y)
    return np.where(in_range, np.left_shift(x, amount), np.zeros((), x.dtype))


def _shift_right_logical_impl(x, y):
    in_range, amount = _shift_amount(x, y)
    unsigned = _unsigned(x.dtype)
    shifted = np.right_shift(np.asarray(x).view(unsigned), amount.view(unsigned))
    return np.where(in_range, shifted, np.zeros((), unsigned)).view(x.dtype)


def _shift_right_arithmetic_impl(x, y):
    in_range, amount = _shift_amount(x, y)
    signed = _signed(x.dtype)
    amount = np.where(in_range, amount.view(signed), x.dtype.itemsize * 8 - 1)
    return np.right_shift(np.asarray(x).view(signed), amount.astype(signed)).view(x.dtype)


shift_left_p, shift_left = _bitwise(
    "shift_left", _shift_left_impl, "stablehlo.shift_left",
    "Elementwise ``x << y``; amounts outside ``[0, bits)`` give 0.", accepted=INTEGER)
shift_right_logical_p, shift_right_logical = _bitwise(
    "shift_right_logical", _shift_right_logical_impl, "stablehlo.shift_right_logical",
    "Elementwise logical ``x >> y`` (zero fill); amounts outside ``[0, bits)`` give 0.",
    accepted=INTEGER)
shift_right_arithmetic_p, shift_right_arithmetic = _bitwise(
    "shift_right_arithmetic", _shift_right_arithmetic_impl, "stablehlo.shift_right_arithmetic",
    "Elementwise arithmetic ``x >> y`` (sign fill, also for unsigned ``x``); amounts outside "
    "``[0, bits)`` fill every bit with the sign.", accepted=INTEGER)

# -- population count, leading zeros --

_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.uint8)


def _population_count_impl(x):
    unsigned = np.asarray(x).view(_unsigned(x.dtype))
    if hasattr(np, "bitwise_count"):  # NumPy >= 2.0
        counts = np.bitwise_count(unsigned)
    else:
        as_bytes = unsigned.reshape(unsigned.shape + (1,)).view(np.uint8)
        counts = _BYTE_POPCOUNT[as_bytes].sum(axis=-1)
    return counts.astype(x.dtype)


def _bit_length(u):
    """Bits needed for unsigned values up to 32 bits wide (float64 holds them exactly)."""
    return np.frexp(u.astype(np.float64))[1]


def _clz_impl(x):
    bits = x.dtype.itemsize * 8
    u = np.asarray(x).view(_unsigned(x.dtype))
    if bits <= 32:
        length = _bit_length(u)
    else:
        high, low = u >> np.uint64(32), u & np.uint64(0xFFFFFFFF)
        length = np.where(high > 0, 32 + _bit_length(high), _bit_length(low))
    return (bits - length).astype(x.dtype)


population_count_p, population_count = _bitwise(
    "population_count", _population_count_impl, "stablehlo.popcnt",
    "Elementwise number of set bits.", arity=1, accepted=INTEGER)
clz_p, clz = _bitwise("clz", _clz_impl, "stablehlo.count_leading_zeros",
                      "Elementwise number of leading zero bits.", arity=1, accepted=INTEGER)

# -- mulhi: the high half of the double-width product --

_LOW32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


def _mulhi_u64(u, v):
    """High 64 bits of the 128-bit product of uint64 values (schoolbook on 32-bit halves)."""
    u0, u1, v0, v1 = u & _LOW32, u >> _32, v & _LOW32, v >> _32
    t = u1 * v0 + ((u0 * v0) >> _32)
    w1 = u0 * v1 + (t & _LOW32)
    return u1 * v1 + (t >> _32) + (w1 >> _32)


def _mulhi_impl(x, y):
    bits = x.dtype.itemsize * 8
    if bits <= 32:
        wide = np.int64 if x.dtype.kind == "i" else np.uint64
        product = np.multiply(x.astype(wide), y.astype(wide))
        return np.right_shift(product, wide(bits)).astype(x.dtype)
    u, v = np.asarray(x).view(np.uint64), np.asarray(y).view(np.uint64)
    high = _mulhi_u64(u, v)
    if x.dtype.kind == "i":  # signed correction: subtract v where u < 0 and u where v < 0
        zero = np.zeros((), np.uint64)
        high = high - np.where(x < 0, v, zero) - np.where(y < 0, u, zero)
    return np.asarray(high).view(x.dtype)


def _mulhi_lower(ctx, x, y):
    out = ctx.avals_out[0]
    dtype = out.dtype
    em = Emitter(ctx, out.shape)
    x, y = broadcast_args(ctx, (x, y))
    bits = dtype.itemsize * 8
    shift = "stablehlo.shift_right_arithmetic" if dtype.kind == "i" else \
        "stablehlo.shift_right_logical"
    if bits <= 32:
        wide = np.dtype(np.int64 if dtype.kind == "i" else np.uint64)
        product = em.op("stablehlo.multiply", [em.convert(x, wide), em.convert(y, wide)], wide)
        return em.convert(em.op(shift, [product, em.const(bits, wide)], wide), dtype)
    return _mulhi64_build(em, dtype, x, y)


def _mulhi64_build(em, dtype, x, y):
    u64 = np.dtype(np.uint64)
    u, v = (em.op("stablehlo.bitcast_convert", [a], u64) for a in (x, y))

    def op(name, a, b):
        return em.op(f"stablehlo.{name}", [a, b], u64)

    low32, c32 = em.const(0xFFFFFFFF, u64), em.const(32, u64)
    u0, u1 = op("and", u, low32), op("shift_right_logical", u, c32)
    v0, v1 = op("and", v, low32), op("shift_right_logical", v, c32)
    t = op("add", op("multiply", u1, v0), op("shift_right_logical", op("multiply", u0, v0), c32))
    w1 = op("add", op("multiply", u0, v1), op("and", t, low32))
    high = op("add", op("add", op("multiply", u1, v1), op("shift_right_logical", t, c32)),
              op("shift_right_logical", w1, c32))
    if dtype.kind == "i":
        zero, zero_u = em.const(0, dtype), em.const(0, u64)
        for a, b in ((x, v), (y, u)):
            negative = em.compare(a, zero, "LT", "SIGNED")
            high = op("subtract", high, em.select(negative, b, zero_u, u64))
    return em.op("stablehlo.bitcast_convert", [high], dtype)


mulhi_p = naryop("mulhi", INTEGER, impl=_mulhi_impl, lower=_mulhi_lower,
                 jvp=NOT_DIFFERENTIABLE, batch=batch_naryop("mulhi"))
mulhi = binary_wrapper(mulhi_p, "Elementwise high half of the double-width product ``x * y``.")

__all__ = ["bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
           "shift_right_logical", "shift_right_arithmetic", "population_count", "clz", "mulhi",
           "not_p", "and_p", "or_p", "xor_p", "shift_left_p", "shift_right_logical_p",
           "shift_right_arithmetic_p", "population_count_p", "clz_p", "mulhi_p"]
