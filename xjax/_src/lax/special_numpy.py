"""Special functions in NumPy, in float64, for the impls of ``xjax.lax.special``.

No SciPy: each function is a classic series, continued fraction or asymptotic expansion,
vectorized over arrays, accurate to about 1e-14 relative (more than the float32 and float16
results need). Edge values (poles, infinities, out-of-domain arguments) follow XLA.
"""

from __future__ import annotations

import math

import numpy as np

_PI = np.pi
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _sum_series(first, next_term, max_terms=500, rtol=1e-17):
    """``first + t1 + t2 + ...`` with ``t_{n} = next_term(t_{n-1}, n)``, until every term is
    negligible."""
    total, term = first.copy(), first
    for n in range(1, max_terms):
        term = next_term(term, n)
        total = total + term
        if n % 8 == 0 and not np.any(np.abs(term) > rtol * np.abs(total)):
            break
    return total


# -- error function --

_ERF_SERIES_LIMIT = 1.5


def _erf_small(x):
    """erf for |x| <= 1.5: exp(-x^2) * sum 2^n x^(2n+1) / (2n+1)!!, all terms positive."""
    x2 = x * x
    total = _sum_series(x, lambda t, n: t * (2.0 * x2) / (2 * n + 1))
    return _TWO_OVER_SQRT_PI * np.exp(-x2) * total


def _erfc_large(x):
    """erfc for x >= 1.5: the continued fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + ...
    ))), evaluated from a depth that converges fully there."""
    with np.errstate(all="ignore"):
        t = x.copy()
        for n in range(100, 0, -1):
            t = x + (0.5 * n) / t
        return np.exp(-x * x) / (math.sqrt(math.pi) * t)


def erf(x):
    x = _f64(x)
    ax = np.abs(x)
    small = ax <= _ERF_SERIES_LIMIT
    inner = _erf_small(np.where(small, x, 0.0))
    outer = np.copysign(1.0 - _erfc_large(np.where(small, 2.0, ax)), x)
    return np.where(small, inner, outer)


def erfc(x):
    x = _f64(x)
    large = x >= _ERF_SERIES_LIMIT
    tail = _erfc_large(np.where(large, x, 2.0))
    return np.where(large, tail, 1.0 - erf(np.where(large, 0.0, x)))


# Giles' single-precision erfinv ("Approximating the erfinv function", 2010): with
# w = -log((1 - y)(1 + y)), erfinv(y) = y p(w - 2.5) for w < 5, else y q(sqrt(w) - 3); the
# coefficients from the highest power down (XLA's float32 erf_inv: lax/cpu_math.py).
GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _giles_erfinv(y):
    """Giles' single-precision approximation of erfinv, the starting point for Newton."""
    w = -np.log((1.0 - y) * (1.0 + y))
    central = w < 5.0
    wc = w - 2.5
    p = np.full_like(y, GILES_CENTRAL[0])
    for c in GILES_CENTRAL[1:]:
        p = c + p * wc
    wt = np.sqrt(np.where(central, 5.0, w)) - 3.0
    q = np.full_like(y, GILES_TAIL[0])
    for c in GILES_TAIL[1:]:
        q = c + q * wt
    return np.where(central, p, q) * y


def erf_inv(y):
    y = _f64(y)
    inside = np.abs(y) < 1.0
    safe = np.where(inside, y, 0.0)
    x = _giles_erfinv(safe)
    ax, ay = np.abs(x), np.abs(safe)
    central = ay < 0.5
    for _ in range(2):  # Newton on erf(x) = y near 0
        ax = ax - (erf(ax) - ay) / (_TWO_OVER_SQRT_PI * np.exp(-ax * ax))
    # near |y| = 1, Newton on log erfc(x) = log(1 - |y|) (1 - |y| is exact there)
    log_target = np.log(np.where(central, 0.5, 1.0 - ay))
    tail = np.where(central, 1.0, np.abs(x))
    for _ in range(4):
        tail_erfc = erfc(tail)
        slope = -_TWO_OVER_SQRT_PI * np.exp(-tail * tail) / tail_erfc
        tail = tail - (np.log(tail_erfc) - log_target) / slope
    ax = np.where(central, ax, tail)
    out = np.copysign(ax, safe)
    out = np.where(y == 0, y, out)  # keeps -0.
    edge = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), np.nan)
    return np.where(inside, out, edge)


# -- gamma family --

_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_PSI_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
_SHIFT_TO = 10.0


def _abs_sin_pi(x):
    """|sin(pi x)|, exactly 0 at integers."""
    return np.abs(np.sin(_PI * (x - np.round(x))))


def _lgamma_positive(y):
    """log Gamma(y) for y >= 0.5: shift y up past 10, then Stirling's series."""
    z, product = y.copy(), np.ones_like(y)
    for _ in range(int(_SHIFT_TO)):
        small = z < _SHIFT_TO
        product = np.where(small, product * z, product)
        z = np.where(small, z + 1.0, z)
    inv, inv2 = 1.0 / z, 1.0 / (z * z)
    series, power = np.zeros_like(z), inv
    for c in _STIRLING:
        series = series + c * power
        power = power * inv2
    return (z - 0.5) * np.log(z) - z + _HALF_LOG_2PI + series - np.log(product)


def lgamma(x):
    x = _f64(x)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        lg = _lgamma_positive(np.where(reflect, 1.0 - x, x))
        # Gamma(x) Gamma(1 - x) = pi / sin(pi x); poles (x = 0, -1, ...) give +inf
        out = np.where(reflect, math.log(math.pi) - np.log(_abs_sin_pi(x)) - lg, lg)
    return np.where(np.isinf(x), np.inf, out)


def _digamma_positive(y):
    z, correction = y.copy(), np.zeros_like(y)
    for _ in range(int(_SHIFT_TO)):
        small = z < _SHIFT_TO
        correction = np.where(small, correction + 1.0 / z, correction)
        z = np.where(small, z + 1.0, z)
    inv2 = 1.0 / (z * z)
    series, power = np.zeros_like(z), inv2
    for c in _PSI_ASYMPTOTIC:
        series = series + c * power
        power = power * inv2
    return np.log(z) - 0.5 / z - series - correction


def digamma(x):
    x = _f64(x)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        psi = _digamma_positive(np.where(reflect, 1.0 - x, x))
        # psi(1 - x) - psi(x) = pi / tan(pi x)
        out = np.where(reflect, psi - _PI / np.tan(_PI * (x - np.round(x))), psi)
    pole = (x <= 0) & (x == np.floor(x))
    return np.where(pole | (x == -np.inf), np.nan, out)


# -- Hurwitz zeta and polygamma --

# B_2j / (2j)!, for the Euler-Maclaurin tail of zeta
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_EM_COEFFS = tuple(b / math.factorial(2 * j + 2) for j, b in enumerate(_BERNOULLI))
_ZETA_SHIFT = 12.0


def zeta(s, q):
    """Hurwitz zeta sum_k (q + k)^-s: a direct sum until q + k >= 12, then Euler-Maclaurin."""
    s, q = np.broadcast_arrays(_f64(s), _f64(q))
    with np.errstate(all="ignore"):
        integer_s = (s == np.floor(s)) & np.isfinite(s)
        ok = (s > 1) & np.isfinite(s) & np.isfinite(q) & ((q > 0) | integer_s)
        pole = (q <= 0) & (q == np.floor(q))
        ss, a = np.where(ok, s, 2.0), np.where(ok & ~pole, q, 1.0)
        direct = np.zeros_like(a)
        for _ in range(100000):
            small = a < _ZETA_SHIFT
            if not small.any():
                break
            direct = np.where(small, direct + np.power(a, -ss), direct)
            a = np.where(small, a + 1.0, a)
        tail = np.power(a, 1.0 - ss) / (ss - 1.0) + 0.5 * np.power(a, -ss)
        # + sum_j B_2j / (2j)! * s (s+1) ... (s+2j-2) * a^(-s-2j+1)
        rising, power = ss.copy(), np.power(a, -ss - 1.0)
        for j, c in enumerate(_EM_COEFFS):
            tail = tail + c * rising * power
            rising = rising * (ss + 2 * j + 1) * (ss + 2 * j + 2)
            power = power / (a * a)
        out = np.where(ok, direct + tail, np.nan)
        # at a pole (q = 0, -1, ..., -inf) the terms near it sum to +inf for even s only
        even_s = integer_s & (np.mod(s, 2.0) == 0.0)
        out = np.where(pole, np.where(even_s, np.inf, np.nan), out)
    return np.where(s == 1, np.inf, out)


def polygamma(m, x):
    """psi^(m)(x) = (-1)^(m+1) m! zeta(m + 1, x) for integer m >= 1; digamma for m = 0."""
    m, x = np.broadcast_arrays(_f64(m), _f64(x))
    integer_m = (m == np.floor(m)) & (m >= 0) & np.isfinite(m)
    safe_m = np.where(integer_m, m, 1.0)
    with np.errstate(all="ignore"):
        sign = np.where(np.mod(safe_m, 2.0) == 0.0, -1.0, 1.0)
        factorial = np.exp(lgamma(safe_m + 1.0))
        higher = sign * factorial * zeta(safe_m + 1.0, x)
    out = np.where(safe_m == 0, digamma(x), higher)
    return np.where(integer_m, out, np.nan)


# -- incomplete gamma --


# When a continued fraction (modified Lentz) has converged: its factors within one float64
# epsilon of 1, as XLA's stops at its dtype's epsilon. A tighter bound (1e-16 was used) lies
# below the spacing of float64 near 1, so factors alternating between 1 and 1 - 2^-53 never
# met it and the loop ran to its limit (100000 steps: seconds per call).
_LENTZ_TOLERANCE = np.finfo(np.float64).eps


def _log_gamma_prefactor(a, x):
    """log(x^a e^-x / Gamma(a))."""
    return a * np.log(x) - x - lgamma(a)


def _igamma_series(a, x):
    """P(a, x) by its series: x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n))."""
    first = np.ones_like(a)
    total = _sum_series(first, lambda t, n: t * x / (a + n), max_terms=100000)
    return np.exp(_log_gamma_prefactor(a, x)) * total / a


def _igammac_fraction(a, x, max_terms=100000):
    """Q(a, x) by its continued fraction (modified Lentz), for x >= a + 1."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = np.full_like(a, 1.0 / tiny)
    d = 1.0 / b
    h = d.copy()
    for i in range(1, max_terms):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        if i % 8 == 0 and not np.any(np.abs(delta - 1.0) > _LENTZ_TOLERANCE):
            break
    return np.exp(_log_gamma_prefactor(a, x)) * h


def _igamma_pair(a, x):
    """(P, Q) with the accurate one of the two computed directly."""
    a, x = np.broadcast_arrays(_f64(a), _f64(x))
    valid = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    use_series = x < a + 1.0
    sa, sx = np.where(valid & use_series, a, 1.0), np.where(valid & use_series, x, 0.5)
    fa, fx = np.where(valid & ~use_series, a, 1.0), np.where(valid & ~use_series, x, 3.0)
    with np.errstate(all="ignore"):
        p_series = _igamma_series(sa, sx)
        q_fraction = _igammac_fraction(fa, fx)
    p = np.where(use_series, p_series, 1.0 - q_fraction)
    q = np.where(use_series, 1.0 - p_series, q_fraction)
    return a, x, valid, p, q


def _igamma_edges(a, x, value_at_zero_x, value_at_zero_a):
    """XLA's values where the series does not apply: x = 0 (a > 0), a = 0 (x > 0),
    x = inf (finite a > 0); NaN for a < 0, x < 0, a = inf, NaN and a = x = 0."""
    out = np.full(a.shape, np.nan)
    out = np.where((x == 0) & (a > 0) & np.isfinite(a), value_at_zero_x, out)
    out = np.where((a == 0) & (x > 0), value_at_zero_a, out)
    return np.where((x == np.inf) & (a > 0) & np.isfinite(a), value_at_zero_a, out)


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x, valid, p, _ = _igamma_pair(a, x)
    return np.where(valid, p, _igamma_edges(a, x, 0.0, 1.0))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x, valid, _, q = _igamma_pair(a, x)
    return np.where(valid, q, _igamma_edges(a, x, 1.0, 0.0))


def igamma_grad_a(a, x):
    """dP(a, x)/da by Richardson-extrapolated central differences of the float64 P."""
    a, x = np.broadcast_arrays(_f64(a), _f64(x))
    h = np.maximum(np.abs(a), 1e-3) * 2.0 ** -8
    h = np.minimum(h, 0.5 * np.abs(a))

    def central(step):
        return (igamma(a + step, x) - igamma(a - step, x)) / (2.0 * step)

    with np.errstate(all="ignore"):
        grad = (4.0 * central(0.5 * h) - central(h)) / 3.0
    valid = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    edge = np.where((x == 0) & (a > 0) & np.isfinite(a), 0.0, np.nan)
    edge = np.where((x == np.inf) & (a > 0) & np.isfinite(a), 0.0, edge)
    return np.where(valid, grad, edge)


# -- incomplete beta --


def _beta_fraction(a, b, x, max_terms=100000):
    """The continued fraction of I_x(a, b) (modified Lentz), for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(a)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, max_terms):
        m2 = 2.0 * m
        for numerator in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                          -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + numerator * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + numerator / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            delta = d * c
            h = h * delta
        if m % 4 == 0 and not np.any(np.abs(delta - 1.0) > _LENTZ_TOLERANCE):
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = np.broadcast_arrays(_f64(a), _f64(b), _f64(x))
    valid = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    direct = x < (a + 1.0) / (a + b + 2.0)
    sa, sb, sx = (np.where(valid, v, fill) for v, fill in ((a, 1.0), (b, 1.0), (x, 0.5)))
    # evaluate the fraction where it converges: on (a, b, x) or on (b, a, 1 - x)
    fa, fb = np.where(direct, sa, sb), np.where(direct, sb, sa)
    fx = np.where(direct, sx, 1.0 - sx)
    with np.errstate(all="ignore"):
        log_front = (lgamma(sa + sb) - lgamma(sa) - lgamma(sb) + sa * np.log(sx) +
                     sb * np.log1p(-sx))
        part = np.exp(log_front) * _beta_fraction(fa, fb, fx) / fa
    out = np.where(direct, part, 1.0 - part)
    edge = np.full(a.shape, np.nan)
    in_range = (x >= 0) & (x <= 1) & (a >= 0) & (b >= 0)
    edge = np.where(in_range & (x == 0), 0.0, edge)
    edge = np.where(in_range & (x == 1), 1.0, edge)
    edge = np.where(in_range & (a == 0) & (b > 0), 1.0, edge)
    edge = np.where(in_range & (b == 0) & (a > 0), 0.0, edge)
    return np.where(valid, out, edge)


# -- exponentially scaled modified Bessel functions --

_BESSEL_SERIES_LIMIT = 30.0


def _bessel_scaled(x, order):
    """exp(-|x|) I_order(|x|) for order 0 or 1: the power series below 30, the asymptotic
    expansion above."""
    ax = np.abs(_f64(x))
    small = ax <= _BESSEL_SERIES_LIMIT
    xs = np.where(small, ax, 1.0)
    quarter = 0.25 * xs * xs
    first = np.ones_like(xs) if order == 0 else 0.5 * xs
    series = _sum_series(first, lambda t, k: t * quarter / (k * (k + order)))
    series = series * np.exp(-xs)
    xl = np.where(small, _BESSEL_SERIES_LIMIT, ax)
    mu = 4.0 * order * order
    term, total = np.ones_like(xl), np.ones_like(xl)
    for k in range(1, 30):
        term = -term * (mu - (2 * k - 1) ** 2) / (8.0 * k * xl)
        total = total + term
    with np.errstate(all="ignore"):
        asymptotic = total / np.sqrt(2.0 * _PI * xl)
    return np.where(small, series, asymptotic)


def bessel_i0e(x):
    return _bessel_scaled(x, 0)


def bessel_i1e(x):
    x = _f64(x)
    return np.copysign(_bessel_scaled(x, 1), x)
