"""``log1p`` and ``erf_inv`` for the samplers, computed as the XLA inside JAX 0.10 computes
them on the CPU, so that samples are JAX's bits.

JAX's XLA evaluates float32 ``log1p(y)`` as a Cephes rational function for
``|y| < sqrt(2) - 1`` and ``log(1 + y)`` above, and expands ``erf_inv`` into Giles'
single-precision approximation: ``w = -log1p(-x * x)``, a degree-8 polynomial in ``w - 2.5``
(``w < 5``) or ``sqrt(w) - 3`` (else), times ``x``. The XLA build xjax runs vectorizes
log-plus-one with another algorithm, about three times slower and with different last bits,
so normal, exponential, Laplace, logistic and Gumbel samples came out slower than JAX's and
a few ulp away. Written out here with the same operations (both XLAs fuse each polynomial
step ``p * t + c`` into one fused multiply-add), they are JAX's bits, and faster.

Inside loop bodies (gamma's rejection loop) XLA compiles ``lax.log1p`` and ``lax.erf_inv``
themselves as JAX's XLA does, and the samplers use those there. Other dtypes use lax.
"""

from __future__ import annotations

import numpy as np
from xjax._src.random._common import lax_module as _lax

_F32 = np.dtype(np.float32)
# Cephes log1p: numerator and denominator coefficients, highest degree first
_LOG1P_NUM = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1,
              6.5787325942061044846969e0, 2.9911919328553073277375e1,
              6.0949667980987787057556e1, 5.7112963590585538103336e1,
              2.0039553499201281259648e1)
_LOG1P_DEN = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
              2.2176239823732856465394e2, 3.0909872225312059774938e2,
              2.1642788614495947685003e2, 6.0118660497603843919306e1)
_SQRT2_MINUS_1 = 0.41421356237309504880
# Giles' erf_inv coefficients, highest degree first: for w < 5, and for w >= 5
_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _const(value, shape=()):
    return _lax().full(shape, value, _F32)


def _horner(x, coefficients):
    lax = _lax()
    p = _const(coefficients[0])
    for c in coefficients[1:]:
        p = lax.add(lax.mul(p, x), _const(c))
    return p


def _rounded_apart(product, square):
    """``product`` unchanged, in a form no compiler fuses into a following add: its bits are
    or-ed with the sign bit of ``square`` (``y * y``: 0 unless NaN, which nothing can prove)."""
    lax = _lax()
    u32 = np.dtype(np.uint32)
    sign = lax.shift_right_logical(lax.bitcast_convert_type(square, u32), lax.full((), 31, u32))
    bits = lax.bitwise_or(lax.bitcast_convert_type(product, u32), sign)
    return lax.bitcast_convert_type(bits, _F32)


def _log1p_f32(y):
    """Float32 log1p as JAX's XLA computes it."""
    lax = _lax()
    large = lax.log(lax.add(y, _const(1.0)))
    y_sq = lax.mul(y, y)
    ratio = lax.div(_horner(y, _LOG1P_NUM), _horner(y, _LOG1P_DEN))
    # JAX's XLA fuses -0.5 * y_sq (exact) into the add and rounds this product on its own;
    # ours would fuse the product instead, so it is first made opaque to the compiler
    cubic = _rounded_apart(lax.mul(lax.mul(y, y_sq), ratio), y_sq)
    small = lax.add(y, lax.add(lax.mul(_const(-0.5), y_sq), cubic))
    return lax.select(lax.lt(lax.abs(y), _const(_SQRT2_MINUS_1)), small, large)


def _erf_inv_f32(x):
    lax = _lax()
    shape = tuple(x.shape)
    w = lax.neg(_log1p_f32(lax.mul(x, lax.neg(x))))
    central = lax.lt(w, _const(5.0))
    t = lax.select(central, lax.sub(w, _const(2.5)), lax.sub(lax.sqrt(w), _const(3.0)))

    def coefficient(i):
        return lax.select(central, _const(_CENTRAL[i], shape), _const(_TAIL[i], shape))

    p = coefficient(0)
    for i in range(1, len(_CENTRAL)):
        p = lax.add(coefficient(i), lax.mul(p, t))
    at_one = lax.eq(lax.abs(x), _const(1.0))
    return lax.select(at_one, lax.mul(x, _const(np.inf)), lax.mul(p, x))


def log1p(x):
    """``log(1 + x)`` (traceable), as JAX computes it."""
    if x.dtype == _F32:
        return _log1p_f32(x)
    return _lax().log1p(x)


def erf_inv(x):
    """The inverse error function of ``x`` (traceable), as JAX computes it."""
    if x.dtype == _F32:
        return _erf_inv_f32(x)
    return _lax().erf_inv(x)
