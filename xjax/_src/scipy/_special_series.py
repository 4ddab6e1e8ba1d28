"""Special functions computed by series, continued fractions and quadrature with fixed term
counts: the exponential integrals (``exp1``, ``expi``, ``expn``), ``spence``, ``sici``,
``fresnel``, ``hyp1f1`` and ``bessel_jn``.

Every branch of a ``where`` is evaluated on inputs clamped to its own domain, so untaken
branches never poison derivatives with ``0 * inf``.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src import higher_order as control_flow, lax, numpy as jnp
from xjax._src.transformations.custom_derivatives import custom_jvp
from xjax._src.numpy._promotion import promote_args_inexact
from xjax._src.scipy._special_normal import computes_in_float32, float32_or_64

_EULER = 0.57721566490153286061
_PI2_6 = math.pi ** 2 / 6


def _float(name, *args):
    return promote_args_inexact(name, *args)


def _is_double(x) -> bool:
    return np.dtype(x.dtype) == np.float64


# --------------------------------------------------------------------------------------------
# exponential integrals


def _expn_continued_fraction(n, x, n_terms):
    """``E_n(x) = exp(-x) / (x + n - 1 n/(x + n + 2 - 2 (n+1)/(x + n + 4 - ...)))``,
    evaluated bottom-up; for ``x > 1``."""
    tail = jnp.zeros_like(x)
    for i in range(n_terms, 0, -1):
        tail = -i * (n - 1 + i) / (x + n + 2 * i + tail)
    return jnp.exp(-x) / (x + n + tail)


def _expn_series(n, x, n_terms):
    """The power series of ``E_n(x)`` for ``0 < x <= 1`` and integer ``n >= 1``:
    ``(-x)^(n-1)/(n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)``."""
    log_x = jnp.log(x)
    n_is_one = n == 1
    total = jnp.where(n_is_one, -log_x - _EULER, 1 / jnp.where(n_is_one, 1.0, n - 1))
    power = jnp.ones_like(x)  # (-x)^k / k!
    psi_n = lax.digamma(n)
    for k in range(1, n_terms):
        power = power * (-x) / k
        pole = n - 1 == k
        safe = jnp.where(pole, 1.0, k - n + 1)
        total = total + jnp.where(pole, power * (psi_n - log_x), -power / safe)
    return total


@computes_in_float32("expn")
def _expn(n, x):
    n, x = _float("expn", n, x)
    double = _is_double(x)
    valid = (n >= 0) & (n == jnp.floor(n)) & (x >= 0)
    large = x > 1
    x_large = jnp.where(large, x, 2.0)
    x_small = jnp.where(large | (x <= 0), 0.5, x)
    n_series = jnp.where(n >= 1, n, 1.0)
    out = jnp.where(large, _expn_continued_fraction(n, x_large, 80 if double else 40),
                    _expn_series(n_series, x_small, 40 if double else 25))
    x_pos = jnp.where(x > 0, x, 1.0)
    out = jnp.where(n == 0, jnp.exp(-x_pos) / x_pos, out)
    at_zero = jnp.where(n > 1, 1 / jnp.where(n > 1, n - 1, 1.0), np.inf)
    out = jnp.where(x == 0, at_zero, out)
    out = jnp.where(jnp.isposinf(x), 0.0, out)
    return jnp.where(valid, out, np.nan).astype(x.dtype)


@custom_jvp
def expn(n, x):
    """The generalized exponential integral ``E_n(x) = integral_1^inf exp(-x t) / t^n dt``
    for integer ``n >= 0`` and ``x >= 0`` (NaN otherwise).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import expn
    >>> expn(jnp.array([1, 2]), jnp.array([1., 1.]))
    Array([0.21938393, 0.14849551], dtype=float32)
    """
    return _expn(n, x)


# dE_n/dx = -E_{n-1}(x); no derivative in the integer order
expn.defjvps(None, lambda g, ans, n, x: -g * _expn(jnp.asarray(n) - 1, x))


def exp1(x):
    """The exponential integral ``E_1(x) = integral_x^inf exp(-t) / t dt`` for ``x >= 0``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import exp1
    >>> exp1(jnp.array([1.]))
    Array([0.21938393], dtype=float32)
    """
    x, = _float("exp1", x)
    return expn(jnp.ones_like(x), x)


def _expi_series(x, n_terms):
    """``Ei(x) = gamma + log x + sum_k x^k / (k k!)`` for ``x > 0`` (positive terms)."""
    power = jnp.ones_like(x)
    total = jnp.zeros_like(x)
    for k in range(1, n_terms):
        power = power * x / k
        total = total + power / k
    return _EULER + jnp.log(x) + total


def _expi_asymptotic(x, n_terms):
    """``Ei(x) ~ exp(x)/x sum_k k!/x^k`` for large ``x``."""
    term = jnp.ones_like(x)
    total = jnp.ones_like(x)
    for k in range(1, n_terms):
        term = term * k / x
        total = total + term
    return jnp.exp(x) / x * total


@computes_in_float32("expi")
def _expi(x):
    x, = _float("expi", x)
    double = _is_double(x)
    cut = 40.0 if double else 20.0
    positive_small = (x > 0) & (x < cut)
    x_small = jnp.where(positive_small, x, 1.0)
    x_large = jnp.where(x >= cut, x, cut)
    positive = jnp.where(x >= cut, _expi_asymptotic(x_large, 40 if double else 20),
                         _expi_series(x_small, 160 if double else 80))
    x_neg = jnp.where(x < 0, -x, 1.0)
    negative = -expn(jnp.ones_like(x), x_neg)
    out = jnp.where(x > 0, positive, negative)
    out = jnp.where(x == 0, -np.inf, out)
    out = jnp.where(jnp.isnan(x), np.nan, out)
    return jnp.where(jnp.isposinf(x), np.inf, out).astype(x.dtype)


@custom_jvp
def expi(x):
    """The exponential integral ``Ei(x) = -PV integral_{-x}^inf exp(-t) / t dt``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import expi
    >>> expi(jnp.array([-1., 1.]))
    Array([-0.21938393,  1.8951179 ], dtype=float32)
    """
    return _expi(x)


expi.defjvps(lambda g, ans, x: g * jnp.exp(x) / x)


# --------------------------------------------------------------------------------------------
# spence


def _dilog_series(z, n_terms):
    """``Li2(z) = sum_k z^k / k^2`` for ``|z| <= 1/2``."""
    power = jnp.ones_like(z)
    total = jnp.zeros_like(z)
    for k in range(1, n_terms):
        power = power * z
        total = total + power / (k * k)
    return total


def _spence_unit(y, n_terms):
    """``spence(y) = Li2(1 - y)`` for ``0 < y <= 3/2``: the series in ``1 - y`` when
    ``y >= 1/2``, else the reflection ``pi^2/6 - log(y) log(1 - y) - Li2(y)``."""
    reflect = y < 0.5
    y_direct = jnp.where(reflect, 1.0, y)
    y_reflect = jnp.where(reflect, y, 0.25)
    direct = _dilog_series(1 - y_direct, n_terms)
    reflected = _PI2_6 - jnp.log(y_reflect) * jnp.log1p(-y_reflect) - \
        _dilog_series(y_reflect, n_terms)
    return jnp.where(reflect, reflected, direct)


def spence(x):
    """Spence's function (the dilogarithm) ``integral_1^x log(t) / (1 - t) dt`` for
    ``x >= 0`` (NaN for ``x < 0``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import spence
    >>> spence(jnp.array([0., 1., 2.]))
    Array([ 1.644934,  0.      , -0.822467], dtype=float32)
    """
    x = float32_or_64(x)
    n_terms = 60 if _is_double(x) else 30
    invert = x > 1.5
    # spence(x) = -spence(1/x) - log(x)^2 / 2 for x > 1 (Landen's identity).
    x_big = jnp.where(invert, x, 2.0)
    x_unit = jnp.where(invert, 1 / x_big, jnp.where(x > 0, x, 1.0))
    unit = _spence_unit(x_unit, n_terms)
    log_big = jnp.log(x_big)
    out = jnp.where(invert, -unit - 0.5 * log_big * log_big, unit)
    # exact values at 0 and 1 as JAX's piecewise gives them, with their zero derivatives
    out = jnp.where(x == 1, 0.0, jnp.where(x == 0, _PI2_6, out))
    return jnp.where((x < 0) | jnp.isinf(x) | jnp.isnan(x), np.nan, out).astype(x.dtype)


# --------------------------------------------------------------------------------------------
# sine/cosine and Fresnel integrals: Gauss-Legendre quadrature up to a cut, asymptotic beyond


def _gauss_legendre(n):
    nodes, weights = np.polynomial.legendre.leggauss(n)
    return [(float(t), float(w)) for t, w in zip(nodes, weights, strict=True)]


_GL64 = _gauss_legendre(64)


def _integrate_0_to(x, integrand):
    """``integral_0^x integrand(t) dt`` by 64-point Gauss-Legendre quadrature."""
    half = x / 2
    total = jnp.zeros_like(x)
    for node, weight in _GL64:
        total = total + weight * integrand(half * (node + 1))
    return total * half


def _sinc_unnormalized(t):
    safe = jnp.where(t == 0, 1.0, t)
    return jnp.where(t == 0, 1.0, jnp.sin(safe) / safe)


def _cos_minus_one_over_t(t):
    # (cos t - 1) / t = -2 sin(t/2)^2 / t, without cancellation near 0
    safe = jnp.where(t == 0, 1.0, t)
    half_sin = jnp.sin(safe / 2)
    return jnp.where(t == 0, 0.0, -2 * half_sin * half_sin / safe)


def _sici_auxiliary(x, n_terms):
    """Asymptotic ``f(x) ~ 1/x sum (-1)^k (2k)!/x^(2k)`` and ``g(x) ~ 1/x^2 sum (-1)^k
    (2k+1)!/x^(2k)`` with ``Si = pi/2 - f cos x - g sin x``, ``Ci = f sin x - g cos x``."""
    inv_sq = 1 / (x * x)
    f_term = jnp.ones_like(x)
    g_term = jnp.ones_like(x)
    f_sum, g_sum = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(1, n_terms):
        f_term = -f_term * (2 * k - 1) * (2 * k) * inv_sq
        g_term = -g_term * (2 * k) * (2 * k + 1) * inv_sq
        f_sum, g_sum = f_sum + f_term, g_sum + g_term
    return f_sum / x, g_sum * inv_sq


@computes_in_float32("sici")
def _sici(x):
    x, = _float("sici", x)
    double = _is_double(x)
    cut = 40.0 if double else 20.0
    ax = jnp.abs(x)
    small = ax <= cut
    x_small = jnp.where(small, ax, 1.0)
    x_large = jnp.where(small, cut, ax)
    si_small = _integrate_0_to(x_small, _sinc_unnormalized)
    ci_small = _EULER + jnp.log(x_small) + _integrate_0_to(x_small, _cos_minus_one_over_t)
    f, g = _sici_auxiliary(x_large, 16 if double else 10)
    cos_x, sin_x = jnp.cos(x_large), jnp.sin(x_large)
    si_large = math.pi / 2 - f * cos_x - g * sin_x
    ci_large = f * sin_x - g * cos_x
    si = jnp.where(small, si_small, si_large)
    ci = jnp.where(small, ci_small, ci_large)
    si = jnp.where(jnp.isinf(x), math.pi / 2, si)
    si = jnp.where(x < 0, -si, si)
    ci = jnp.where(x == 0, -np.inf, jnp.where(jnp.isposinf(x), 0.0, ci))
    ci = jnp.where(jnp.isneginf(x), np.nan, ci)
    return si.astype(x.dtype), ci.astype(x.dtype)


@custom_jvp
def sici(x):
    """The sine and cosine integrals ``Si(x) = integral_0^x sin(t)/t dt`` and
    ``Ci(x) = gamma + log|x| + integral_0^x (cos(t) - 1)/t dt``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import sici
    >>> sici(jnp.array([1.]))
    (Array([0.946083], dtype=float32), Array([0.3374039], dtype=float32))
    """
    return _sici(x)


def _sici_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    si, ci = sici(x)
    x, = _float("sici", x)
    return (si, ci), (x_dot * _sinc_unnormalized(x), x_dot * jnp.cos(x) / x)


sici.defjvp(_sici_jvp)


def _fresnel_auxiliary(x, n_terms):
    """Asymptotic ``f ~ 1/(pi x) sum (-1)^k (4k-1)!!/(pi x^2)^(2k)`` and ``g ~ 1/(pi^2 x^3)
    sum (-1)^k (4k+1)!!/(pi x^2)^(2k)`` with ``C = 1/2 + f sin(pi x^2/2) - g cos(pi x^2/2)``,
    ``S = 1/2 - f cos(pi x^2/2) - g sin(pi x^2/2)``."""
    z = math.pi * x * x
    inv_z2 = 1 / (z * z)
    f_term, g_term = jnp.ones_like(x), jnp.ones_like(x)
    f_sum, g_sum = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(1, n_terms):
        f_term = -f_term * (4 * k - 3) * (4 * k - 1) * inv_z2
        g_term = -g_term * (4 * k - 1) * (4 * k + 1) * inv_z2
        f_sum, g_sum = f_sum + f_term, g_sum + g_term
    return f_sum / (math.pi * x), g_sum / (math.pi * z * x)


@computes_in_float32("fresnel")
def fresnel(x):
    """The Fresnel integrals ``S(x) = integral_0^x sin(pi t^2 / 2) dt`` and
    ``C(x) = integral_0^x cos(pi t^2 / 2) dt``, returned as ``(S, C)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import fresnel
    >>> fresnel(jnp.array([1.]))
    (Array([0.43825924], dtype=float32), Array([0.7798932], dtype=float32))
    """
    x, = _float("fresnel", x)
    cut = 8.0 if _is_double(x) else 6.0
    ax = jnp.abs(x)
    small = ax <= cut
    x_small = jnp.where(small, ax, 1.0)
    x_large = jnp.where(small, cut, ax)
    s_small = _integrate_0_to(x_small, lambda t: jnp.sin(math.pi / 2 * t * t))
    c_small = _integrate_0_to(x_small, lambda t: jnp.cos(math.pi / 2 * t * t))
    f, g = _fresnel_auxiliary(x_large, 8)
    # sin/cos of pi x^2 / 2 with the argument reduced exactly: x^2/2 mod 2 in binary
    phase = math.pi * jnp.fmod(x_large * x_large / 2, 2.0)
    sin_p, cos_p = jnp.sin(phase), jnp.cos(phase)
    s_large = 0.5 - f * cos_p - g * sin_p
    c_large = 0.5 + f * sin_p - g * cos_p
    s = jnp.where(small, s_small, s_large)
    c = jnp.where(small, c_small, c_large)
    s = jnp.where(jnp.isinf(x), 0.5, s)
    c = jnp.where(jnp.isinf(x), 0.5, c)
    negative = x < 0
    return (jnp.where(negative, -s, s).astype(x.dtype),
            jnp.where(negative, -c, c).astype(x.dtype))


# --------------------------------------------------------------------------------------------
# hypergeometric functions


def _hyp1f1_series(a, b, x, n_terms):
    """Kummer's series ``sum_k (a)_k / (b)_k x^k / k!`` for ``x >= 0``."""
    def body(k, carry):
        term, total = carry
        term = term * (a + k) / (b + k) * x / (k + 1)
        return term, total + term
    one = jnp.ones_like(a * b * x)
    _, total = control_flow.fori_loop(0, n_terms, body, (one, one))
    return total


@computes_in_float32("hyp1f1")
def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function ``1F1(a; b; x)``, by its power series
    (after Kummer's transformation ``1F1(a; b; x) = exp(x) 1F1(b - a; b; -x)`` for ``x < 0``,
    so the series terms never alternate in sign because of ``x``). Accurate for moderate
    ``|x|`` (up to a few hundred terms' worth).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import hyp1f1
    >>> hyp1f1(1., 1., jnp.array([1.]))
    Array([2.718282], dtype=float32)
    """
    a, b, x = _float("hyp1f1", a, b, x)
    negative = x < 0
    a_eff = jnp.where(negative, b - a, a)
    scale = jnp.where(negative, jnp.exp(x), 1.0)
    series = _hyp1f1_series(a_eff, b, jnp.abs(x), 500 if _is_double(x) else 250)
    return (scale * series).astype(x.dtype)


# --------------------------------------------------------------------------------------------
# Bessel functions of the first kind of integer order


@computes_in_float32("bessel_jn")
def bessel_jn(z, *, v: int, n_iter: int = 50):
    """Bessel functions of the first kind ``J_0(z) .. J_v(z)``, stacked on a new leading axis
    (shape ``(v + 1,) + z.shape``), by Miller's backward recurrence from order ``n_iter``
    normalized with ``J_0 + 2 sum_k J_2k = 1`` (accurate for ``|z|`` well below ``n_iter``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import bessel_jn
    >>> bessel_jn(jnp.array([1.]), v=1)
    Array([[0.7651977],
           [0.4400506]], dtype=float32)
    """
    v = operator.index(v)
    n_iter = operator.index(n_iter)
    if v < 0:
        raise ValueError(f"v must be a non-negative integer, got {v}")
    z, = _float("bessel_jn", z)
    start = max(n_iter, v + 1)
    at_zero = z == 0
    safe_z = jnp.where(at_zero, 1.0, z)
    tiny = 1e-30 if _is_double(z) else 1e-20
    j_next = jnp.zeros_like(z)       # J_{k+1}
    j_k = jnp.full_like(z, tiny)     # J_k, up to a common scale
    norm = jnp.zeros_like(z)         # sum of the normalization terms so far
    kept = {}
    for k in range(start, 0, -1):
        if k % 2 == 0:
            norm = norm + 2 * j_k
        if k <= v:
            kept[k] = j_k
        j_prev = (2 * k / safe_z) * j_k - j_next
        # Rescale everything by the newest value's size so nothing overflows.
        scale = 1 / jnp.maximum(jnp.abs(j_prev), tiny)
        rescale = jnp.abs(j_prev) > 1.0
        factor = jnp.where(rescale, scale, 1.0)
        j_next, j_k, norm = j_k * factor, j_prev * factor, norm * factor
        kept = {order: value * factor for order, value in kept.items()}
    kept[0] = j_k
    norm = norm + j_k
    orders = [kept[k] / norm for k in range(v + 1)]
    orders = [jnp.where(at_zero, 1.0 if k == 0 else 0.0, value)
              for k, value in enumerate(orders)]
    return jnp.stack(orders).astype(z.dtype)
