"""The Faddeeva function ``w(z) = exp(-z^2) erfc(-i z)``.

Poppe & Wijers' algorithm (ACM TOMS 680, 1990), written in real arithmetic on ``(|x|, |y|)``:

* near the origin (``(x/6.3)^2 + (y/4.4)^2 < 0.085264``): the Taylor series of ``erfc(-iz)``
  times ``exp(-z^2)``;
* far from it (that quantity > 1): Laplace's continued fraction for ``w``;
* between: Gautschi's method, a continued fraction for the Taylor coefficients of ``w`` about
  ``z + ih`` summed back to ``z``.

The term counts depend on ``z``; every element runs the largest count with the terms beyond
its own masked, so all of it jits and vmaps. The other quadrants follow from
``w(-conj z) = conj w(z)`` and ``w(-z) = 2 exp(-z^2) - w(z)``; ``|z| > 1e8`` uses the
asymptote ``i / (sqrt(pi) z)``.
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.transformations.custom_derivatives import custom_jvp

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SERIES_TERMS = 27          # the most Taylor terms the algorithm uses (at qrho = 0.085264)
_FRACTION_TERMS = 42        # the most continued-fraction levels (nu = 16 + 26 at the inner edge)
_ASYMPTOTIC = 1e8           # beyond this |z|, w = i / (sqrt(pi) z) to double precision


def _taylor(x, y):
    """``w`` for small ``x + iy`` (``x, y >= 0``) from ``erfc(-iz) = 1 + 2iz/sqrt(pi)
    sum_k z^(2k) / (k! (2k+1))``, the sum by Horner's rule in ``z^2``."""
    re_z2, im_z2 = (x - y) * (x + y), 2 * x * y
    sum_re = jnp.full_like(x, 1 / (2 * _SERIES_TERMS + 1))
    sum_im = jnp.zeros_like(x)
    for k in range(_SERIES_TERMS, 0, -1):
        sum_re, sum_im = ((sum_re * re_z2 - sum_im * im_z2) / k + 1 / (2 * k - 1),
                          (sum_re * im_z2 + sum_im * re_z2) / k)
    erfc_re = 1 - _TWO_OVER_SQRT_PI * (sum_re * y + sum_im * x)
    erfc_im = _TWO_OVER_SQRT_PI * (sum_re * x - sum_im * y)
    scale = jnp.exp(-re_z2)
    exp_re, exp_im = scale * jnp.cos(im_z2), -scale * jnp.sin(im_z2)
    return erfc_re * exp_re - erfc_im * exp_im, erfc_re * exp_im + erfc_im * exp_re


def _continued_fraction(x, y, qrho):
    """``w`` for ``x, y >= 0`` outside the Taylor region: Laplace's continued fraction where
    ``qrho > 1``, Gautschi's shifted version (``h > 0``) inside."""
    outer = qrho > 1
    inner_q = (1 - y / 4.4) * jnp.sqrt(jnp.maximum(1 - qrho, 0.0))
    h = jnp.where(outer, 0.0, 1.88 * inner_q)
    two_h = jnp.where(outer, 1.0, 2 * h)  # 1 keeps the unused powers finite
    n_sum = jnp.where(outer, -1.0, jnp.round(7 + 34 * inner_q))
    n_fraction = jnp.where(outer, jnp.floor(3 + 1442 / (26 + 77 * jnp.sqrt(qrho))),
                           jnp.round(16 + 26 * inner_q))
    zero = jnp.zeros_like(x)
    r_re, r_im, s_re, s_im = zero, zero, zero, zero
    for n in range(_FRACTION_TERMS, -1, -1):
        t_re = y + h + (n + 1) * r_re
        t_im = x - (n + 1) * r_im
        c = 0.5 / (t_re * t_re + t_im * t_im)
        in_fraction = n <= n_fraction
        r_re = jnp.where(in_fraction, c * t_re, r_re)
        r_im = jnp.where(in_fraction, c * t_im, r_im)
        lam = two_h ** n
        in_sum = n <= n_sum
        s_re, s_im = (jnp.where(in_sum, r_re * (lam + s_re) - r_im * s_im, s_re),
                      jnp.where(in_sum, r_im * (lam + s_re) + r_re * s_im, s_im))
    u = _TWO_OVER_SQRT_PI * jnp.where(outer, r_re, s_re)
    v = _TWO_OVER_SQRT_PI * jnp.where(outer, r_im, s_im)
    return u, v


def _asymptotic(x, y):
    """``i / (sqrt(pi) z)`` without overflow in ``|z|^2``."""
    scale = jnp.maximum(x, y)
    xs, ys = x / scale, y / scale
    denominator = math.sqrt(math.pi) * scale * (xs * xs + ys * ys)
    return ys / denominator, xs / denominator


def _first_quadrant(x, y):
    """``w(x + iy)`` for ``x, y >= 0``."""
    qrho = (x / 6.3) ** 2 + (y / 4.4) ** 2
    taylor = qrho < 0.085264
    far = jnp.maximum(x, y) > _ASYMPTOTIC
    # Each branch sees only arguments of its own region (no overflow in the untaken ones).
    x_small, y_small = jnp.where(taylor, x, 0.0), jnp.where(taylor, y, 0.0)
    x_mid, y_mid = jnp.where(taylor | far, 3.0, x), jnp.where(taylor | far, 3.0, y)
    x_far, y_far = jnp.where(far, x, 1.0), jnp.where(far, y, 1.0)
    qrho_mid = (x_mid / 6.3) ** 2 + (y_mid / 4.4) ** 2
    u_t, v_t = _taylor(x_small, y_small)
    u_c, v_c = _continued_fraction(x_mid, y_mid, qrho_mid)
    u_a, v_a = _asymptotic(x_far, y_far)
    u = jnp.where(taylor, u_t, jnp.where(far, u_a, u_c))
    v = jnp.where(taylor, v_t, jnp.where(far, v_a, v_c))
    # On the real axis Re w = exp(-x^2) exactly (the fractions only resolve it relative to |w|).
    u = jnp.where(y == 0, jnp.exp(-x * x), u)
    return u, v


def _wofz_impl(z):
    x, y = jnp.real(z), jnp.imag(z)
    u, v = _first_quadrant(jnp.abs(x), jnp.abs(y))
    v = jnp.where(x < 0, -v, v)  # w(-conj z) = conj w(z)
    # Lower half-plane: w(z) = 2 exp(-z^2) - w(-z), with w(-z) = conj of the value above.
    lower = y < 0
    y_lower = jnp.where(lower, y, 0.0)
    scale = 2 * jnp.exp(-(x - y_lower) * (x + y_lower))
    angle = -2 * x * y_lower
    u = jnp.where(lower, scale * jnp.cos(angle) - u, u)
    # angle == 0 (the imaginary axis): no 0 * inf where exp(-z^2) overflows.
    v = jnp.where(lower, jnp.where(angle == 0, 0.0, scale * jnp.sin(angle)) + v, v)
    return lax.complex(*_special_values(x, y, u, v))


def _special_values(x, y, u, v):
    """SciPy's values at infinite and NaN arguments: 0 wherever ``exp(-z^2)`` vanishes
    (``|x| = inf`` with finite ``y``, ``y = +inf``), ``inf`` at ``-i inf``, NaN for NaN."""
    vanishes = (jnp.isinf(x) & ~jnp.isinf(y)) | (y == np.inf)
    u = jnp.where(vanishes, 0.0, jnp.where((y == -np.inf) & (x == 0), np.inf, u))
    v = jnp.where(vanishes | ((y == -np.inf) & (x == 0)), 0.0, v)
    undefined = jnp.isnan(x) | jnp.isnan(y)
    return jnp.where(undefined, np.nan, u), jnp.where(undefined, np.nan, v)


@custom_jvp
def faddeeva(z):
    """``w(z)`` for a complex array ``z`` (complex64 or complex128)."""
    return _wofz_impl(z)


@faddeeva.defjvp
def _faddeeva_jvp(primals, tangents):
    z, = primals
    z_dot, = tangents
    w = faddeeva(z)
    # w'(z) = -2 z w(z) + 2i / sqrt(pi)
    derivative = -2 * z * w + lax.complex(jnp.zeros_like(jnp.real(z)),
                                          jnp.full_like(jnp.real(z), _TWO_OVER_SQRT_PI))
    return w, derivative * z_dot

