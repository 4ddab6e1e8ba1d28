"""Gauss's hypergeometric function ``hyp2f1(a, b, c, x)`` for real arguments.

For ``x < 1`` several classical representations (Abramowitz & Stegun 15.3.3-15.3.12) are
evaluated side by side, each with an estimate of its own rounding and truncation error, and
the one with the smallest relative error estimate is returned:

* the Gauss series of F and of its Euler transform ``(1-x)^(c-a-b) F(c-a, c-b; c; x)``
  (``|x| < 1``);
* the two Pfaff transforms ``(1-x)^-a F(a, c-b; c; x/(x-1))`` and
  ``(1-x)^-b F(c-a, b; c; x/(x-1))`` (``x <= 0``);
* the connection formula in ``1 - t`` (15.3.6; ``t = x``, or Pfaff's ``x/(x-1)`` for
  ``x < 0``), or, when ``c - a - b`` is an integer and it degenerates, its logarithmic limit
  (15.3.10-15.3.11) after an Euler transformation has made ``c - a - b >= 0``.

The error estimates (``eps`` times the sum of the terms' magnitudes, plus the truncation
tail, plus the size of the logs behind powers and gamma ratios) catch the cancellation each
form suffers in its own bad region, which fixed switching points would not.

Series have fixed term counts (they jit, vmap and need no data-dependent loop). ``x = 1`` is
Gauss's summation, ``x > 1`` is ``inf`` (the real function is not defined there) except for
polynomials and ``a == c`` / ``b == c``, as in SciPy. The derivative is a ``custom_jvp``:
``d/dx`` by the contiguous function ``ab/c F(a+1, b+1; c+1; x)``, the parameter derivatives by
the term-wise differentiated series.
"""

from __future__ import annotations

import numpy as np

from xjax._src import higher_order as control_flow, lax, numpy as jnp
from xjax._src.transformations.custom_derivatives import custom_jvp
from xjax._src.numpy._promotion import promote_args_inexact
from xjax._src.scipy._special_normal import computes_in_float32


def _n_terms(x, double: int, single: int) -> int:
    return double if np.dtype(x.dtype) == np.float64 else single


def _is_nonpositive_integer(v):
    return (v <= 0) & (v == jnp.round(v))


def _log_abs_gamma_and_sign(v):
    """``log|Gamma(v)|`` and the sign of ``Gamma(v)`` (+1 at the poles, where the log is inf)."""
    negative_odd = (v < 0) & (jnp.fmod(jnp.floor(-v), 2) == 0)  # Gamma < 0 on (-1,0), (-3,-2)..
    return lax.lgamma(v), jnp.where(negative_odd, -1.0, 1.0).astype(v.dtype)


def _gamma_ratio(numerator, denominator):
    """``prod Gamma(numerator) / prod Gamma(denominator)`` through log-gamma (no overflow in
    the intermediate gammas); 0 where a denominator argument is a pole."""
    log_value = 0.0
    sign = 1.0
    for v, power in [(v, 1) for v in numerator] + [(v, -1) for v in denominator]:
        log_abs, s = _log_abs_gamma_and_sign(v)
        log_value = log_value + power * log_abs
        sign = sign * s
    return sign * jnp.exp(log_value)


def _safe_divisor(d):
    """``d`` with exact zeros replaced by 1: a term that would divide by zero is already 0
    (the series terminated before reaching the pole of ``(c)_k``)."""
    return jnp.where(d == 0, jnp.ones_like(d), d)


def _tail(last_term, ratio):
    """An estimate of a truncated series' remainder from its last term and its terms' limiting
    ratio."""
    return jnp.abs(last_term) / (1 - jnp.minimum(jnp.abs(ratio), 0.99))


def _gauss_series(a, b, c, t, n_terms):
    """``sum_k (a)_k (b)_k / ((c)_k k!) t^k`` with ``n_terms`` terms (exact for polynomials of
    lower degree), with ``sum_k |term_k|`` and an estimate of the truncation error."""
    def body(k, carry):
        term, total, magnitude = carry
        term = term * ((a + k) * (b + k) / _safe_divisor((c + k) * (k + 1))) * t
        return term, total + term, magnitude + jnp.abs(term)
    one = jnp.ones_like(t)
    term, total, magnitude = control_flow.fori_loop(0, n_terms, body, (one, one, one))
    return total, magnitude, _tail(term, t)


def _finite_sum(a, b, m, y, n_terms):
    """``sum_{n<m} (a)_n (b)_n / (n! (1-m)_n) y^n`` (the polynomial part of A&S 15.3.11),
    summed over a fixed ``n_terms`` with the terms from ``n = m`` on masked out, and the sum
    of the terms' magnitudes."""
    def body(k, carry):
        term, total, magnitude = carry
        term = term * ((a + k) * (b + k) / _safe_divisor((k + 1) * (1 - m + k))) * y
        kept = jnp.where(k + 1 < m, term, jnp.zeros_like(term))
        return term, total + kept, magnitude + jnp.abs(kept)
    one = jnp.ones_like(y)
    _, total, magnitude = control_flow.fori_loop(0, n_terms, body, (one, one, one))
    return total, magnitude


def _digamma_sums(a, b, m, y, n_terms):
    """``m! sum_n (a+m)_n (b+m)_n / (n! (n+m)!) y^n [ln y - psi(n+1) - psi(n+m+1)
    + psi(a+n+m) + psi(b+n+m)]``, the logarithmic part of A&S 15.3.11 (the psi values
    advance by ``psi(v+1) = psi(v) + 1/v``), with the magnitude sum and a tail estimate."""
    log_y = jnp.log(y)
    psis = (-lax.digamma(jnp.ones_like(y)) - lax.digamma(m + 1)
            + lax.digamma(a + m) + lax.digamma(b + m))

    def body(k, carry):
        term, psis, total, magnitude = carry
        psis = psis - 1 / (k + 1) - 1 / (k + m + 1) + 1 / (a + m + k) + 1 / (b + m + k)
        term = term * ((a + m + k) * (b + m + k) / ((k + 1) * (k + m + 1))) * y
        value = term * (log_y + psis)
        return term, psis, total + value, magnitude + jnp.abs(value)
    one = jnp.ones_like(y)
    first = log_y + psis
    term, psis, total, magnitude = control_flow.fori_loop(0, n_terms, body,
                                                 (one, psis, first, jnp.abs(first)))
    return total, magnitude, _tail(term * (log_y + psis), y)


class _Candidate:
    """One way of evaluating F: its value and an estimate of its relative error (inf where the
    way does not apply)."""

    def __init__(self, value, error, valid):
        self.value = jnp.where(valid, value, jnp.zeros_like(value))
        # Compared relative to the candidate's own value: a failed evaluation can be small in
        # absolute terms, never accurate relative to itself.
        relative = jnp.where(valid, error / jnp.abs(value), np.inf)
        self.error = jnp.where(jnp.isnan(relative), np.inf, relative)


def _most_accurate(candidates):
    best = candidates[0]
    value, error = best.value, best.error
    for other in candidates[1:]:
        better = other.error < error
        value = jnp.where(better, other.value, value)
        error = jnp.where(better, other.error, error)
    return value


def _log_size(*args):
    """A bound on the relative rounding error of a product of powers and gammas, in units of
    eps: the sum of the magnitudes of the logs that went into it."""
    return sum(jnp.abs(v) for v in args)


def _power_series_candidates(a, b, c, x, eps, n_terms):
    """The Gauss series of F and of its Euler and Pfaff transforms (the latter for x <= 0),
    all summed in one loop over a stack of parameter sets."""
    y = 1 - x
    w = x / (x - 1)
    inside = jnp.abs(x) < 1
    log_y = jnp.log(y)
    d = c - a - b
    stack = lambda *vs: jnp.stack(jnp.broadcast_arrays(*vs))  # noqa: E731
    p = stack(a, c - a, a, c - a)
    q = stack(b, c - b, c - b, b)
    s = stack(jnp.where(inside, x, 0.0), jnp.where(inside, x, 0.0), w, w)
    total, magnitude, tail = _gauss_series(p, q, jnp.broadcast_to(c, p.shape), s, n_terms)
    log_prefactors = [jnp.zeros_like(x), d * log_y, -a * log_y, -b * log_y]
    valid = [inside, inside, x <= 0, x <= 0]
    out = []
    for i in range(4):
        prefactor = jnp.exp(log_prefactors[i])
        value = prefactor * total[i]
        error = (prefactor * (eps * magnitude[i] + tail[i])
                 + eps * jnp.abs(value) * _log_size(log_prefactors[i]))
        out.append(_Candidate(value, error, valid[i]))
    return out


def _connection_candidate(a, b, c, y, log_prefactor, eps, n_terms):
    """F(a, b; c; t) by the connection formula in ``1 - t`` (A&S 15.3.6), for ``c - a - b``
    not an integer; times ``exp(log_prefactor)``. ``y = 1 - t`` is passed in: it is only
    accurate when computed from the original argument."""
    d = c - a - b
    valid = d != jnp.round(d)
    d = jnp.where(valid, d, 0.5)
    g1 = _gamma_ratio([c, d], [c - a, c - b])
    g2 = _gamma_ratio([c, -d], [a, b]) * y ** d
    s1, m1, t1 = _gauss_series(a, b, 1 - d, y, n_terms)
    s2, m2, t2 = _gauss_series(c - a, c - b, 1 + d, y, n_terms)
    prefactor = jnp.exp(log_prefactor)
    value = prefactor * (g1 * s1 + g2 * s2)
    logs = _log_size(lax.lgamma(c), lax.lgamma(d), lax.lgamma(-d), lax.lgamma(c - a),
                     lax.lgamma(c - b), lax.lgamma(a), lax.lgamma(b), d * jnp.log(y),
                     log_prefactor)
    error = prefactor * (jnp.abs(g1) * (eps * m1 + t1) + jnp.abs(g2) * (eps * m2 + t2)
                         + eps * logs * (jnp.abs(g1 * s1) + jnp.abs(g2 * s2)))
    return _Candidate(value, error, valid)


def _logarithmic_candidate(a, b, c, y, log_prefactor, eps, n_terms):
    """F(a, b; c; t) when ``c - a - b`` is an integer (A&S 15.3.10-11, after an Euler
    transformation that makes it >= 0); times ``exp(log_prefactor)``; ``y = 1 - t``."""
    d = c - a - b
    flip = d < 0
    a, b = jnp.where(flip, c - a, a), jnp.where(flip, c - b, b)
    log_prefactor = log_prefactor + jnp.where(flip, d * jnp.log(y), 0.0)
    m = jnp.abs(jnp.round(d))
    valid = ((d == jnp.round(d)) & ~_is_nonpositive_integer(a) & ~_is_nonpositive_integer(b))
    a, b = jnp.where(valid, a, 0.5), jnp.where(valid, b, 0.5)
    m_pos = jnp.maximum(m, 1.0)  # Gamma(m) only multiplies a sum that is empty when m = 0
    g1 = jnp.where(m > 0, _gamma_ratio([m_pos, c], [a + m, b + m]), 0.0)
    finite, finite_magnitude = _finite_sum(a, b, m, y, n_terms)
    sign = jnp.where(jnp.fmod(m, 2) == 0, -1.0, 1.0)  # -(-1)^m
    g2 = sign * _gamma_ratio([c], [a, b, m + 1]) * y ** m
    logarithmic, log_magnitude, log_tail = _digamma_sums(a, b, m, y, n_terms)
    prefactor = jnp.exp(log_prefactor)
    value = prefactor * (g1 * finite + g2 * logarithmic)
    logs = _log_size(lax.lgamma(c), lax.lgamma(m_pos), lax.lgamma(a + m), lax.lgamma(b + m),
                     lax.lgamma(a), lax.lgamma(b), lax.lgamma(m + 1), m * jnp.log(y),
                     log_prefactor)
    error = prefactor * (jnp.abs(g1) * eps * finite_magnitude
                         + jnp.abs(g2) * (eps * log_magnitude + log_tail)
                         + eps * logs * (jnp.abs(g1 * finite) + jnp.abs(g2 * logarithmic)))
    return _Candidate(value, error, valid)


def _hyp2f1_below_one(a, b, c, x, n_terms):
    """F(a, b; c; x) for ``x < 1`` and ``c`` not a pole: the most accurate (by its own error
    estimate) of the Gauss series of F and of its Euler and Pfaff transforms, and of the
    connection formulas in ``1 - t`` (``t = x``, or Pfaff's ``x / (x - 1)`` for ``x < 0``)."""
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    eps = float(np.finfo(x.dtype).eps)
    candidates = _power_series_candidates(a, b, c, x, eps, n_terms)
    negative = x < 0
    y = jnp.where(negative, 1 / (1 - x), 1 - x)  # 1 - t, without cancellation
    # The series in y only converge (and only help) well inside y < 1.
    y = jnp.where(y < 0.9, y, 0.5)
    b_t = jnp.where(negative, c - b, b)
    log_prefactor = jnp.where(negative, -a * jnp.log1p(-x), 0.0)
    candidates.append(_connection_candidate(a, b_t, c, y, log_prefactor, eps, n_terms))
    candidates.append(_logarithmic_candidate(a, b_t, c, y, log_prefactor, eps, n_terms))
    near_one = jnp.where(negative, 1 / (1 - x), 1 - x) < 0.9
    for candidate in candidates[-2:]:
        candidate.error = jnp.where(near_one, candidate.error, np.inf)
    return _most_accurate(candidates)


def _hyp2f1_impl(a, b, c, x):
    n_terms = _n_terms(x, 300, 120)
    terminates = _is_nonpositive_integer(a) | _is_nonpositive_integer(b)
    # The degree of a terminating series: the non-positive integer of smaller magnitude.
    degree = jnp.minimum(jnp.where(_is_nonpositive_integer(a), -a, np.inf),
                         jnp.where(_is_nonpositive_integer(b), -b, np.inf))
    pole = _is_nonpositive_integer(c) & ~(terminates & (degree <= -c))
    polynomial = _gauss_series(a, b, c, x, n_terms)[0]

    below = _hyp2f1_below_one(a, b, c, jnp.where(x < 1, x, 0.0), n_terms)
    d = c - a - b
    gauss_sum = _gamma_ratio([c, jnp.where(d > 0, d, 1.0)], [c - a, c - b])
    at_one = jnp.where(d > 0, gauss_sum, np.inf)
    above = jnp.where(b == c, (1 - x) ** -a, jnp.where(a == c, (1 - x) ** -b, np.inf))
    value = jnp.where(x < 1, below, jnp.where(x == 1, at_one, above))
    # Polynomials: below 1 the transformations may still sum them more accurately, unless
    # c is a non-positive integer (only the series of F itself stops before that pole).
    value = jnp.where(terminates & ((x >= 1) | _is_nonpositive_integer(c)), polynomial, value)
    value = jnp.where(pole, np.inf, value)
    # a == c or b == c: the binomial (1-x)^-b (resp. -a), also the limit at the poles of c.
    value = jnp.where(a == c, (1 - x) ** -b, jnp.where(b == c, (1 - x) ** -a, value))
    value = jnp.where((x == 0) & ~pole, 1.0, value)
    return value.astype(x.dtype)


def _parameter_derivative_series(a, b, c, t, n_terms):
    """The partial derivatives in ``a``, ``b`` and ``c`` of the Gauss series at ``t`` in
    ``[0, 1)``, each term's derivative carried by the product rule (no division by ``a + k``,
    so terminating series differentiate correctly)."""
    def body(k, carry):
        term, d_a, d_b, d_c, sum_a, sum_b, sum_c = carry
        step = t / _safe_divisor((c + k) * (k + 1))
        ratio = (a + k) * (b + k) * step
        d_a, d_b = d_a * ratio + term * (b + k) * step, d_b * ratio + term * (a + k) * step
        d_c = d_c * ratio - term * ratio / _safe_divisor(c + k)
        term = term * ratio
        return term, d_a, d_b, d_c, sum_a + d_a, sum_b + d_b, sum_c + d_c
    zero, one = jnp.zeros_like(t), jnp.ones_like(t)
    carry = control_flow.fori_loop(0, n_terms, body, (one, zero, zero, zero, zero, zero, zero))
    return carry[4:]


def _hyp2f1_parameter_derivatives(a, b, c, x, value):
    """``dF/da, dF/db, dF/dc`` for ``x < 1``: the differentiated series at ``x`` (``x >= 0``)
    or, through Pfaff's ``F = (1-x)^-a F(a, c-b; c; x/(x-1))``, at ``x/(x-1)`` (``x < 0``).
    The series converge like ``t^k``: accurate up to ``|t|`` of about 0.95."""
    n_terms = _n_terms(x, 1000, 500)
    negative = x < 0
    t = jnp.clip(jnp.where(negative, x / (x - 1), x), 0.0, 1.0)
    d_a, d_q, d_c = _parameter_derivative_series(a, jnp.where(negative, c - b, b), c, t,
                                                 n_terms)
    scale = jnp.where(negative, (1 - x) ** -a, 1.0)
    d_a = jnp.where(negative, scale * d_a - jnp.log1p(-x) * value, d_a)
    d_b = jnp.where(negative, -scale * d_q, d_q)
    d_c = jnp.where(negative, scale * (d_q + d_c), d_c)
    return d_a, d_b, d_c


@computes_in_float32("hyp2f1")
def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k
    x^k / k!`` for real arguments.

    Every ``x < 1`` is supported: the Gauss series, its Euler and Pfaff transforms and the
    connection formulas in ``1 - x`` (with their logarithmic limits for integer
    ``c - a - b``) are compared by their own error estimates and the most accurate is used.
    ``x = 1`` gives Gauss's sum (``inf`` when ``c - a - b <= 0``); ``x > 1`` gives ``inf``
    (the function is complex there) except for polynomials (``a`` or ``b`` a non-positive
    integer) and ``a == c`` / ``b == c``, where ``F = (1 - x)^-b`` / ``(1 - x)^-a``, as in
    SciPy. A non-positive integer ``c`` gives ``inf`` unless the series stops before its
    pole. Integer arguments are promoted to the default float; float16/bfloat16 compute in
    float32.

    Accuracy: about 1e-15 typically and better than 1e-11 for ``|a|, |b|, |c| <= 8`` in
    float64 (a few ulp in float32); series have fixed lengths, so very large parameters lose
    accuracy. Derivatives: ``d/dx = ab/c F(a+1, b+1; c+1; x)``; the parameter derivatives
    are differentiated series, accurate while ``|x / (x - 1)|`` (``x < 0``) or ``x``
    (``x >= 0``) stays below about 0.95.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import hyp2f1
    >>> hyp2f1(1., 1., 2., jnp.array([-1., 0.5]))  # -log(1 - x) / x
    Array([0.6931473, 1.3862946], dtype=float32)
    """
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_impl(a, b, c, x)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    a_dot, b_dot, c_dot, x_dot = tangents
    value = _hyp2f1(a, b, c, x)
    below_one = x < 1
    d_a, d_b, d_c = _hyp2f1_parameter_derivatives(a, b, c, jnp.where(below_one, x, 0.0),
                                                  value)
    d_x = a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x)
    parameters = d_a * a_dot + d_b * b_dot + d_c * c_dot
    return value, jnp.where(below_one, parameters, np.nan) + d_x * x_dot
