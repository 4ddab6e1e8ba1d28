"""``erf_inv`` for the samplers, evaluated as the XLA inside JAX 0.10 evaluates it.

Normal samples are ``sqrt(2) * erf_inv(u)``. XLA expands ``chlo.erf_inv`` for float32 into
Giles' single-precision approximation: ``w = -log1p(-x * x)``, a degree-8 polynomial in
``w - 2.5`` (``w < 5``) or ``sqrt(w) - 3`` (else), times ``x``. The expansion is written out
here with the same operations, and ``log1p`` as jaxlib's XLA computes it (a Cephes rational
function for ``|y| < sqrt(2) - 1``, ``log(1 + y)`` above). The XLA build xjax runs computes
log-plus-one about three times slower and rounds it differently, which made normal samples
both slower than JAX's and further from JAX's bits; with this form they match JAX's except
in about 3 of 10,000 samples (by at most 3 ulp, from JAX's fused multiply-adds).

Other dtypes use ``lax.erf_inv``.
"""

from __future__ import annotations

import numpy as np

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


def _lax():
    from xjax import lax
    return lax


def _const(value, shape=()):
    return _lax().full(shape, value, _F32)


def _horner(x, coefficients):
    lax = _lax()
    p = _const(coefficients[0])
    for c in coefficients[1:]:
        p = lax.add(lax.mul(p, x), _const(c))
    return p


def _log1p_f32(y):
    lax = _lax()
    large = lax.log(lax.add(y, _const(1.0)))
    y_sq = lax.mul(y, y)
    ratio = lax.div(_horner(y, _LOG1P_NUM), _horner(y, _LOG1P_DEN))
    small = lax.add(lax.mul(_const(-0.5), y_sq), lax.mul(lax.mul(y, y_sq), ratio))
    small = lax.add(y, small)
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


def erf_inv(x):
    """The inverse error function of ``x`` (traceable)."""
    if x.dtype == _F32:
        return _erf_inv_f32(x)
    return _lax().erf_inv(x)
