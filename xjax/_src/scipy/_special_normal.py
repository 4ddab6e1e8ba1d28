"""Special functions of the normal distribution and the error function family:
``ndtr``, ``ndtri``, ``log_ndtr``, ``erfcx``, ``dawsn`` and Owen's T function.

Composed from lax/jnp operations with fixed term counts. Every branch of a ``where`` is
evaluated on inputs clamped to that branch's domain, so untaken branches never poison the
derivative with ``0 * inf``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.core import dtypes
from xjax._src.transformations.custom_derivatives import custom_jvp
from xjax._src.numpy._promotion import promote_args_inexact

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2 * math.pi)
_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _float(name, *args):
    return promote_args_inexact(name, *args)


def _is_double(x) -> bool:
    return np.dtype(x.dtype) == np.float64


_SIXTEEN_BIT = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def computes_in_float32(name):
    """Evaluate the decorated function with float16/bfloat16 arguments upcast to float32
    (its constants and series terms overflow or lose every digit in 16 bits) and cast the
    results back, as XLA does for its own transcendental functions."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            promoted = _float(name, *args)
            dtype = np.dtype(promoted[0].dtype)
            if dtype not in _SIXTEEN_BIT:
                return fn(*args, **kwargs)
            out = fn(*[a.astype(np.float32) for a in promoted], **kwargs)
            if isinstance(out, tuple):
                return tuple(o.astype(dtype) for o in out)
            return out.astype(dtype)
        return wrapped
    return decorate


def float32_or_64(x, message=", see docstring for supported types."):
    """``x`` as an array, which must be float32 or float64: JAX's ndtr, ndtri, log_ndtr and
    spence promote nothing (ints and 16-bit floats raise its TypeError)."""
    x = jnp.asarray(x)
    if np.dtype(x.dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"x.dtype={x.dtype} is not supported{message}")
    return x


def _polyval(coefficients, x):
    """``sum_i c[i] x**i`` by Horner's rule (coefficients from the constant term up)."""
    out = jnp.full_like(x, coefficients[-1])
    for c in coefficients[-2::-1]:
        out = out * x + c
    return out


# --------------------------------------------------------------------------------------------
# ndtr, ndtri


def ndtr(x):
    """The standard normal CDF ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``, accurate in both
    tails.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import ndtr
    >>> ndtr(jnp.array([0., 1.]))
    Array([0.5      , 0.8413447], dtype=float32)
    """
    x = float32_or_64(x)
    w = x * _SQRT_HALF
    central = 0.5 + 0.5 * lax.erf(w)
    upper = 1 - 0.5 * lax.erfc(w)
    lower = 0.5 * lax.erfc(-w)
    out = jnp.where(jnp.abs(w) < _SQRT_HALF, central, jnp.where(w > 0, upper, lower))
    return out.astype(x.dtype)  # never weakly typed, as JAX's


# Wichura's algorithm AS 241 (PPND16), Applied Statistics 37 (1988): rational approximations
# of the normal quantile, relative accuracy about 1e-16.
_AS241_A = (3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
            1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
            3.3430575583588128105e+4, 2.5090809287301226727e+3)
_AS241_B = (1.0, 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
            2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4,
            5.2264952788528545610e+3)
_AS241_C = (1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
            3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
            2.27238449892691845833e-2, 7.74545014278341407640e-4)
_AS241_D = (1.0, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
            1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
            1.05075007164441684324e-9)
_AS241_E = (6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
            2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
            2.71155556874348757815e-5, 2.01033439929228813265e-7)
_AS241_F = (1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1,
            1.48753612908506148525e-2, 7.86869131145613259100e-4, 1.84631831751005468180e-5,
            1.42151175831644588870e-7, 2.04426310338993978564e-15)


def ndtri(p):
    """The inverse of :func:`ndtr`: the standard normal quantile (``-inf`` at 0, ``inf`` at
    1, NaN outside ``[0, 1]``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import ndtri
    >>> ndtri(jnp.array([0.5, 0.975]))
    Array([0.       , 1.9599642], dtype=float32)
    """
    p = float32_or_64(p)
    q = p - 0.5
    central = jnp.abs(q) <= 0.425
    # central region: q * A(r) / B(r) with r = 0.180625 - q^2
    q_c = jnp.where(central, q, 0.0)
    r_c = 0.180625 - q_c * q_c
    x_central = q_c * _polyval(_AS241_A, r_c) / _polyval(_AS241_B, r_c)
    # tails: r = sqrt(-log(min(p, 1 - p)))
    tail_p = jnp.where(central, 0.01, jnp.minimum(p, 1 - p))
    r = jnp.sqrt(-jnp.log(tail_p))
    near = r <= 5
    r_near = jnp.where(near, r, 5.0) - 1.6
    r_far = jnp.where(near, 5.0, r) - 5.0
    x_tail = jnp.where(near, _polyval(_AS241_C, r_near) / _polyval(_AS241_D, r_near),
                       _polyval(_AS241_E, r_far) / _polyval(_AS241_F, r_far))
    x_tail = jnp.where(q < 0, -x_tail, x_tail)
    out = jnp.where(central, x_central, x_tail)
    out = jnp.where(p == 0, -np.inf, jnp.where(p == 1, np.inf, out))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(p), np.nan, out).astype(p.dtype)


# --------------------------------------------------------------------------------------------
# log_ndtr


def _log_ndtr_lower_bound(x):
    """Below this, log(ndtr) is replaced by the asymptotic series (per precision)."""
    return -20.0 if _is_double(x) else -10.0


def _log_ndtr_asymptotic(x, series_order):
    """``log Phi(x)`` for very negative ``x``: ``-x^2/2 - log(-x) - log(2 pi)/2 +
    log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))``."""
    x_sq = x * x
    total = jnp.ones_like(x)
    term = jnp.ones_like(x)
    for n in range(1, series_order + 1):
        term = term * (-(2 * n - 1)) / x_sq
        total = total + term
    return -0.5 * x_sq - jnp.log(-x) - 0.5 * math.log(2 * math.pi) + jnp.log(total)


def _check_series_order(series_order):
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")


def _log_ndtr(x, series_order):
    x = float32_or_64(x, ".")
    lower = _log_ndtr_lower_bound(x)
    x_low = jnp.minimum(x, lower)
    x_mid = jnp.clip(x, lower, 0.0)
    x_high = jnp.maximum(x, 0.0)
    # log1p(-Phi(-x)) keeps full relative accuracy for all x > 0 (JAX switches only above 5
    # in float32 and loses digits of the tiny result in between).
    high = lax.log1p(-ndtr(-x_high))
    mid = jnp.log(ndtr(x_mid))
    low = _log_ndtr_asymptotic(x_low, series_order)
    return jnp.where(x > 0, high, jnp.where(x > lower, mid, low)).astype(x.dtype)


def log_ndtr(x, series_order: int = 3):
    """``log(ndtr(x))``, accurate far into both tails: ``log1p(-ndtr(-x))`` above 0 and an
    asymptotic series of ``series_order`` terms below -10 in float32, -20 in float64.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import log_ndtr
    >>> log_ndtr(jnp.array([0., -20.]))
    Array([  -0.6931472, -203.91716  ], dtype=float32)
    """
    _check_series_order(series_order)
    return _log_ndtr_custom(float32_or_64(x, "."), series_order)


def _log_ndtr_jvp(series_order, primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = _log_ndtr_custom(x, series_order)
    x, = _float("log_ndtr", x)
    # d/dx log Phi(x) = phi(x) / Phi(x) = exp(log phi(x) - log Phi(x))
    return ans, x_dot * jnp.exp(-0.5 * x * x - 0.5 * math.log(2 * math.pi) - ans)


_log_ndtr_custom = custom_jvp(_log_ndtr, nondiff_argnums=(1,))
_log_ndtr_custom.defjvp(_log_ndtr_jvp)


# --------------------------------------------------------------------------------------------
# erfcx, dawsn


def _erfcx_continued_fraction(x, n_terms):
    """Laplace's continued fraction ``erfcx(x) = 1/sqrt(pi) / (x + (1/2)/(x + 1/(x +
    (3/2)/(x + ...))))``, evaluated bottom-up; converges fast for ``x >= 2``."""
    tail = jnp.zeros_like(x)
    for k in range(n_terms, 0, -1):
        tail = (k / 2) / (x + tail)
    return _INV_SQRT_PI / (x + tail)


def _erfcx_nonnegative(x):
    small = x < 2
    x_small = jnp.where(small, x, 0.0)
    x_large = jnp.where(small, 2.0, x)
    direct = jnp.exp(x_small * x_small) * lax.erfc(x_small)
    return jnp.where(small, direct, _erfcx_continued_fraction(x_large, 40))


@computes_in_float32("erfcx")
def _erfcx_impl(x):
    x, = _float("erfcx", x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError("erfcx of complex arguments is not supported yet")
    positive = _erfcx_nonnegative(jnp.abs(x))
    # erfcx(-x) = 2 exp(x^2) - erfcx(x); overflows to inf for x < -9.3 (float32), as SciPy.
    x_neg = jnp.minimum(x, 0.0)
    negative = 2 * jnp.exp(x_neg * x_neg) - positive
    return jnp.where(x < 0, negative, positive)


@custom_jvp
def erfcx(x):
    """The scaled complementary error function ``exp(x**2) erfc(x)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import erfcx
    >>> erfcx(jnp.array([0., 10.]))
    Array([1.      , 0.056141], dtype=float32)
    """
    return _erfcx_impl(x)


erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - 2 * _INV_SQRT_PI))


def _dawsn_series(x, n_terms):
    """``exp(-x^2) sum_n x^(2n+1) / (n! (2n+1))``: positive terms, no cancellation."""
    x_sq = x * x
    power = x  # x^(2n+1) / n!
    total = x
    for n in range(1, n_terms):
        power = power * x_sq / n
        total = total + power / (2 * n + 1)
    return jnp.exp(-x_sq) * total


def _dawsn_asymptotic(x, n_terms):
    """``1/(2x) sum_k (2k-1)!! / (2 x^2)^k`` for large ``|x|``."""
    inv_2x_sq = 1 / (2 * x * x)
    term = jnp.ones_like(x)
    total = jnp.ones_like(x)
    for k in range(1, n_terms):
        term = term * (2 * k - 1) * inv_2x_sq
        total = total + term
    return total / (2 * x)


@computes_in_float32("dawsn")
def _dawsn_impl(x):
    x, = _float("dawsn", x)
    double = _is_double(x)
    cut = 6.0 if double else 4.0
    small = jnp.abs(x) < cut
    x_small = jnp.where(small, x, 0.0)
    x_large = jnp.where(small, cut, x)
    series = _dawsn_series(x_small, 160 if double else 80)
    asymptotic = _dawsn_asymptotic(x_large, 16 if double else 10)
    out = jnp.where(small, series, asymptotic)
    return jnp.where(jnp.isinf(x), jnp.copysign(0.0, x), out).astype(x.dtype)


@custom_jvp
def dawsn(x):
    """Dawson's integral ``exp(-x**2) * integral_0^x exp(t**2) dt``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import dawsn
    >>> dawsn(jnp.array([0., 1.]))
    Array([0.       , 0.5380795], dtype=float32)
    """
    return _dawsn_impl(x)


dawsn.defjvps(lambda g, ans, x: g * (1 - 2 * x * ans))


# --------------------------------------------------------------------------------------------
# Owen's T function


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)


def _owens_t_quadrature(h, a):
    """``T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx`` for
    ``0 <= a <= 1`` by Gauss-Legendre quadrature."""
    half_a = a / 2
    total = jnp.zeros_like(h * a)
    for node, weight in zip(_GL_NODES, _GL_WEIGHTS, strict=True):
        t = half_a * (float(node) + 1)
        one_t2 = 1 + t * t
        total = total + float(weight) * jnp.exp(-0.5 * h * h * one_t2) / one_t2
    return total * half_a / (2 * math.pi)


@computes_in_float32("owens_t")
def _owens_t(h, a):
    h, a = _float("owens_t", h, a)
    sign = jnp.where(a < 0, -1.0, 1.0)
    h, a = jnp.abs(h), jnp.abs(a)
    small = a <= 1
    a_small = jnp.where(small, a, 1.0)
    a_large = jnp.where(small, 2.0, a)
    direct = _owens_t_quadrature(h, a_small)
    # Owen (1956): T(h, a) = Q(h)/2 + Q(ah)/2 - Q(h) Q(ah) - T(ah, 1/a) for a > 1, with the
    # upper tails Q(t) = ndtr(-t) (no cancellation far out).
    ah = jnp.where(h == 0, 0.0, a_large * h)
    q_h, q_ah = ndtr(-h), ndtr(-ah)
    reflected = 0.5 * q_h + 0.5 * q_ah - q_h * q_ah - _owens_t_quadrature(ah, 1 / a_large)
    out = jnp.where(small, direct, reflected)
    return (sign * out).astype(h.dtype)


@custom_jvp
def owens_t(h, a):
    """Owen's T function ``T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1+x^2)/2) / (1+x^2)
    dx``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import owens_t
    >>> owens_t(jnp.array([0., 1.]), 0.5)
    Array([0.07379182, 0.04306469], dtype=float32)
    """
    return _owens_t(h, a)


def _owens_t_jvp(primals, tangents):
    h, a = primals
    h_dot, a_dot = tangents
    ans = owens_t(h, a)
    h, a = _float("owens_t", h, a)
    one_a2 = 1 + a * a
    d_h = -jnp.exp(-0.5 * h * h) / _SQRT_2PI * lax.erf(a * h * _SQRT_HALF) / 2
    d_a = jnp.exp(-0.5 * h * h * one_a2) / (2 * math.pi * one_a2)
    return ans, h_dot * d_h + a_dot * d_a


owens_t.defjvp(_owens_t_jvp)
