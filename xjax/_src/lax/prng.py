"""The Threefry-2x32 hash (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011): the counter-based block cipher under ``xjax.random``.

``threefry2x32(k0, k1, x0, x1)`` encrypts the 64-bit counters ``(x0, x1)`` under the 64-bit
key ``(k0, k1)`` with 20 rounds of add-rotate-xor on uint32 words, elementwise over operands
that broadcast as lax operands do. Its two outputs are the two words of each ciphertext.
Everything is wrapping uint32 arithmetic, so the NumPy impl and the XLA lowering agree bit
for bit, as they must for JAX's keys and random numbers to be reproduced.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, NOT_DIFFERENTIABLE, Primitive
from xjax._src.core.trace import Tracer
from xjax._src.lax.batch_rules import batch_elementwise
from xjax._src.lax.naryop import Emitter, broadcast_args, result_shape
from xjax._src.lax.operands import to_operand

_U32 = np.dtype(np.uint32)
# Threefry's key-schedule parity constant and its rotation distances (Salmon et al., Table 4),
# the first four rounds of each group of eight using the first row, the next four the second.
_PARITY = 0x1BD11BDA
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_GROUPS = 5  # 5 groups of 4 rounds: Threefry-2x32-20


def _threefry2x32_abstract_eval(*avals):
    if any(a.dtype != _U32 for a in avals):
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {list(avals)}")
    shape = result_shape("threefry2x32", avals)
    out = ShapedArray(shape, _U32)
    return [out, out]


def _rotate_left_np(x, distance: int):
    return (x << np.uint32(distance)) | (x >> np.uint32(32 - distance))


def _threefry2x32_impl(k0, k1, x0, x1):
    shape = np.broadcast_shapes(*(np.shape(a) for a in (k0, k1, x0, x1)))
    k0, k1, x0, x1 = (np.broadcast_to(np.asarray(a, _U32), shape) for a in (k0, k1, x0, x1))
    schedule = (k0, k1, k0 ^ k1 ^ np.uint32(_PARITY))
    x0 = x0 + schedule[0]  # NumPy's uint32 arrays wrap silently, as XLA's do
    x1 = x1 + schedule[1]
    for group in range(_GROUPS):
        for distance in _ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = _rotate_left_np(x1, distance) ^ x0
        # key injection: the next two schedule words, and the group counter on the second
        x0 = x0 + schedule[(group + 1) % 3]
        x1 = x1 + schedule[(group + 2) % 3] + np.uint32(group + 1)
    return [np.asarray(x0), np.asarray(x1)]


def _threefry2x32_lower(ctx, k0, k1, x0, x1):
    em = Emitter(ctx, ctx.avals_out[0].shape)
    k0, k1, x0, x1 = broadcast_args(ctx, (k0, k1, x0, x1))

    def op(name, a, b):
        return em.op(f"stablehlo.{name}", [a, b], _U32)

    def rotate_left(x, distance):
        return op("or", op("shift_left", x, em.const(distance, _U32)),
                  op("shift_right_logical", x, em.const(32 - distance, _U32)))

    schedule = (k0, k1, op("xor", op("xor", k0, k1), em.const(_PARITY, _U32)))
    x0 = op("add", x0, schedule[0])
    x1 = op("add", x1, schedule[1])
    for group in range(_GROUPS):
        for distance in _ROTATIONS[group % 2]:
            x0 = op("add", x0, x1)
            x1 = op("xor", rotate_left(x1, distance), x0)
        x0 = op("add", x0, schedule[(group + 1) % 3])
        x1 = op("add", op("add", x1, schedule[(group + 2) % 3]), em.const(group + 1, _U32))
    return [x0, x1]


def _threefry2x32_batch(args, dims, **params):
    return _batch_broadcasting(args, dims, **params)


threefry2x32_p = Primitive(
    "threefry2x32",
    abstract_eval=_threefry2x32_abstract_eval,
    impl=_threefry2x32_impl,
    lower=_threefry2x32_lower,
    jvp=NOT_DIFFERENTIABLE,
    transpose=NONLINEAR,
    batch=_threefry2x32_batch,
    multiple_results=True,
)
_batch_broadcasting = batch_elementwise(threefry2x32_p)


def threefry2x32(k0, k1, x0, x1):
    """The Threefry-2x32 hash of counters ``(x0, x1)`` under the key ``(k0, k1)``.

    Parameters
    ----------
    k0, k1 : uint32 arrays
        The two words of the key.
    x0, x1 : uint32 arrays
        The two words of the counters. All four operands broadcast as lax operands do
        (rank-0 operands, or equal ranks with size-1 dimensions).

    Returns
    -------
    list of two uint32 arrays
        The two words of the hash, of the broadcast shape.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> z = np.uint32(0)
    >>> [int(w) for w in lax.threefry2x32(z, z, z, z)]  # Salmon et al.'s known answer
    [1797259609, 2579123966]
    """
    args = [a if type(a) is Array or isinstance(a, Tracer) else to_operand(a)
            for a in (k0, k1, x0, x1)]
    return threefry2x32_p.bind(*args)


__all__ = ["threefry2x32", "threefry2x32_p"]
