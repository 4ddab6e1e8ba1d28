"""``xjax.scipy.special``: SciPy's special functions on xjax arrays, as in
``jax.scipy.special``.

Functions with an XLA primitive call ``xjax.lax`` (lgamma, digamma, igamma, betainc, the
scaled Bessel functions, ...); the others are composed from lax/jnp operations: rational
approximations, power series and continued fractions with fixed term counts (no data-dependent
loops, so everything jits and differentiates). Arguments are promoted to a floating dtype
like JAX's (ints become the default float; float16/bfloat16 stay). Where JAX attaches a
``custom_jvp`` for a stable derivative (xlogy, xlog1py, entr, logit, erfcx, dawsn, log_ndtr,
expi, expn, ...) so do we.

>>> import xjax.numpy as jnp
>>> from xjax.scipy import special
>>> special.gammaln(jnp.array([0.5, 5.]))
Array([0.5723649, 3.1780539], dtype=float32)
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.core import dtypes
from xjax._src.transformations.custom_derivatives import custom_jvp
from xjax._src.nn.functions import (log_softmax as _nn_log_softmax, logsumexp as _logsumexp,
                                    softmax as _nn_softmax)
from xjax._src.numpy._promotion import promote_args_inexact
from xjax._src.scipy._special_faddeeva import faddeeva
from xjax._src.scipy._special_hyp import hyp2f1  # noqa: F401
from xjax._src.scipy._special_normal import dawsn, log_ndtr, ndtr, ndtri, owens_t  # noqa: F401
from xjax._src.scipy._special_normal import erfcx as _erfcx_real
from xjax._src.scipy._special_series import (bessel_jn, exp1, expi, expn, fresnel,  # noqa: F401
                                        hyp1f1, sici, spence)
from xjax._src.scipy._special_sph import sph_harm_y  # noqa: F401


def _float(name, *args):
    """The arguments as arrays of one floating dtype (JAX's promote_args_inexact)."""
    return promote_args_inexact(name, *args)


def _reject_complex(name, x):
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError(f"xjax.scipy.special.{name} does not support complex "
                                  "arguments yet")


# --------------------------------------------------------------------------------------------
# error function, expit/logit, gamma and beta functions


def erf(x):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import erf
    >>> erf(jnp.array([0., 1.]))
    Array([0.       , 0.8427008], dtype=float32)
    """
    x, = _float("erf", x)
    return lax.erf(x)


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate for large ``x``."""
    x, = _float("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    """The inverse of :func:`erf` on ``[-1, 1]`` (``+-inf`` at ``+-1``, NaN outside)."""
    x, = _float("erfinv", x)
    return lax.erf_inv(x)


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import expit
    >>> expit(jnp.array([0.]))
    Array([0.5], dtype=float32)
    """
    x, = _float("expit", x)
    return lax.logistic(x)


@custom_jvp
def logit(x):
    """The inverse of :func:`expit`: ``log(x / (1 - x))``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import logit
    >>> logit(jnp.array([0.5, 0.75]))
    Array([0.       , 1.0986123], dtype=float32)
    """
    x, = _float("logit", x)
    return lax.log(lax.div(x, lax.sub(lax.full_like(x, 1), x)))


logit.defjvps(lambda g, ans, x: g / (x * (1 - x)))


def gammaln(x):
    """``log(|gamma(x)|)`` (``lax.lgamma``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import gammaln
    >>> gammaln(jnp.array([3.]))
    Array([0.6931472], dtype=float32)
    """
    x, = _float("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x):
    """The sign of the gamma function: +1 or -1; NaN at the poles ``0, -1, -2, ...``
    except ``+-0`` (whose sign it keeps) and at ``-inf`` and NaN.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import gammasgn
    >>> gammasgn(jnp.array([-1.5, -0.5, 2.]))
    Array([ 1., -1.,  1.], dtype=float32)
    """
    x, = _float("gammasgn", x)
    floor_x = jnp.floor(x)
    pole = (x < 0) & (x == floor_x)  # negative integers and -inf
    odd = jnp.fmod(floor_x, 2) != 0
    negative_sign = jnp.where(odd, -1.0, 1.0).astype(x.dtype)
    sign = jnp.where(x > 0, 1.0, jnp.where(x == 0, jnp.copysign(1.0, x), negative_sign))
    return jnp.where(pole | jnp.isnan(x), np.nan, sign).astype(x.dtype)


def loggamma(x):
    """The principal branch of ``log(gamma(x))``; for real ``x`` it is ``gammaln(x)`` for
    ``x > 0`` and NaN for ``x <= 0`` (as JAX). Complex arguments are not supported yet.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import loggamma
    >>> loggamma(jnp.array([3., -1.5]))
    Array([0.6931472,       nan], dtype=float32)
    """
    x, = _float("loggamma", x)
    _reject_complex("loggamma", x)
    return jnp.where(x > 0, lax.lgamma(x), np.nan).astype(x.dtype)


def gamma(x):
    """The gamma function: ``gammasgn(x) * exp(gammaln(x))``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import gamma
    >>> gamma(jnp.array([0.5, 5.]))
    Array([ 1.7724538, 24.       ], dtype=float32)
    """
    x, = _float("gamma", x)
    magnitude = _snap(lax.exp(lax.lgamma(x)), _factorial_of_integer(x - 1, x.dtype),
                      _integral(x) & (x > 0))
    return gammasgn(x) * magnitude


def digamma(x):
    """The digamma function, the derivative of :func:`gammaln` (``lax.digamma``)."""
    x, = _float("digamma", x)
    return lax.digamma(x)


def _stirling_correction(x):
    """``lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2)`` for ``x >= 8``: the tail of
    Stirling's series (its first terms suffice there)."""
    inv2 = 1 / (x * x)
    return (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 / 1680))) / x


def _betaln_positive_large(small, big):
    """``log B(small, big)`` for ``0 < small <= big`` and ``big >= 8``: Stirling's series
    for ``lgamma(big) - lgamma(small + big)`` so that its leading terms cancel exactly."""
    total = small + big
    log_ratio = -(big - 0.5) * jnp.log1p(small / big) - small * jnp.log(total) + small
    return lax.lgamma(small) + log_ratio + _stirling_correction(big) - \
        _stirling_correction(total)


def betaln(a, b):
    """``log(|B(a, b)|)``, the log of the beta function ``gamma(a) gamma(b) / gamma(a+b)``
    (accurate when one argument is large).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import betaln
    >>> betaln(jnp.array([2.]), jnp.array([3.]))
    Array([-2.4849067], dtype=float32)
    """
    a, b = _float("betaln", a, b)
    small, big = jnp.minimum(a, b), jnp.maximum(a, b)
    stirling = (small > 0) & (big >= 8)
    # Each branch sees an input that is valid for it, so neither produces NaN derivatives.
    safe_big = jnp.where(stirling, big, 8.0)
    safe_small = jnp.where(stirling, small, 1.0)
    direct = lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)
    return jnp.where(stirling, _betaln_positive_large(safe_small, safe_big), direct)


def beta(a, b):
    """The beta function ``gamma(a) gamma(b) / gamma(a + b)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import beta
    >>> beta(jnp.array([2.]), jnp.array([3.]))
    Array([0.08333334], dtype=float32)
    """
    a, b = _float("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import betainc
    >>> betainc(jnp.array([1.]), 1., 0.25)
    Array([0.25], dtype=float32)
    """
    a, b, x = _float("betainc", a, b, x)
    return lax.betainc(a, b, x)


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import gammainc
    >>> gammainc(jnp.array([1.]), 2.)
    Array([0.86466473], dtype=float32)
    """
    a, x = _float("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    a, x = _float("gammaincc", a, x)
    return lax.igammac(a, x)


def _snap(value, exact, where):
    """``exact`` where ``where`` holds, else ``value``, differentiated as ``value``
    everywhere (the exact values are corrections of the last ulps)."""
    return jnp.where(where, value + lax.stop_gradient(exact - value), value)


def _integral(*args):
    out = None
    for arg in args:
        is_int = (arg == jnp.floor(arg)) & jnp.isfinite(arg)
        out = is_int if out is None else out & is_int
    return out


def _round_if_integer(value, *args):
    """Exact small integers for integer arguments (``exp(lgamma)`` is off by ulps)."""
    return _snap(value, jnp.round(value), _integral(*args))


# n! for n = 0 .. 170 (the largest finite in float64), correctly rounded to each dtype
_FACTORIALS = np.array([float(math.factorial(k)) for k in range(171)])


def _factorial_of_integer(k, dtype):
    """``k!`` from the table for integer-valued ``k`` in [0, 170] (any float dtype)."""
    with np.errstate(over="ignore"):
        table = jnp.asarray(_FACTORIALS.astype(dtype))
    index = jnp.clip(k, 0, 170).astype(np.int32)
    return jnp.take(table, lax.stop_gradient(index))


def factorial(n, exact: bool = False):
    """``n!`` as ``gamma(n + 1)``; 0 for ``n < 0``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import factorial
    >>> factorial(jnp.array([0, 3, 5]))
    Array([  1.,   6., 120.], dtype=float32)
    """
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = _float("factorial", n)
    value = _snap(lax.exp(lax.lgamma(n + 1)), _factorial_of_integer(n, n.dtype), _integral(n))
    return jnp.where(n < 0, 0, value).astype(n.dtype)


def comb(N, k, *, repetition: bool = False):
    """The number of combinations of ``N`` things taken ``k`` at a time, ``N! / (k! (N-k)!)``
    (``gamma`` for non-integers); 0 unless ``0 <= k <= N``. With ``repetition``,
    ``comb(N + k - 1, k)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import comb
    >>> comb(jnp.array([5., 10.]), jnp.array([2., 3.]))
    Array([ 10., 120.], dtype=float32)
    """
    N, k = _float("comb", N, k)
    if repetition:
        # SciPy: comb(0, 0, repetition=True) == 1 (the empty multiset).
        n_rep = N + k - 1
        return jnp.where((N == 0) & (k == 0), 1.0, comb(n_rep, k)).astype(N.dtype)
    valid = (k <= N) & (N >= 0) & (k >= 0)
    safe_N = jnp.where(valid, N, 1.0)
    safe_k = jnp.where(valid, k, 0.0)
    # 1 / ((N + 1) B(N - k + 1, k + 1)): betaln keeps large N with small k accurate.
    value = lax.exp(-jnp.log1p(safe_N) - betaln(safe_N - safe_k + 1, safe_k + 1))
    value = _round_if_integer(value, safe_N, safe_k)
    return jnp.where(valid, value, 0.0).astype(N.dtype)


def _is_pole(x):
    return (x <= 0) & (x == jnp.floor(x))


@custom_jvp
def poch(z, m):
    """The Pochhammer symbol (rising factorial) ``gamma(z + m) / gamma(z)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import poch
    >>> poch(jnp.array([2., 3.]), jnp.array([3., 0.]))
    Array([24.,  1.], dtype=float32)
    """
    z, m = _float("poch", z, m)
    zm = z + m
    positive = (z > 0) & (m > 0)
    # gamma(z + m) / gamma(z) = gamma(m) / B(z, m), accurate for large z.
    safe_z, safe_m = jnp.where(positive, z, 1.0), jnp.where(positive, m, 1.0)
    via_beta = lax.exp(lax.lgamma(safe_m) - betaln(safe_z, safe_m))
    general = gammasgn(zm) * gammasgn(z) * lax.exp(lax.lgamma(zm) - lax.lgamma(z))
    # Both z and z + m at poles: the ratio of residues, (-1)^m gamma(1 - z) / gamma(1 - z - m).
    both_poles = _is_pole(z) & _is_pole(zm)
    alternating = jnp.where(jnp.fmod(m, 2) == 0, 1.0, -1.0)
    residues = alternating * lax.exp(lax.lgamma(1 - z) - lax.lgamma(1 - zm))
    value = jnp.where(positive, via_beta, general)
    value = jnp.where(_is_pole(z) & ~_is_pole(zm), 0.0, value)
    value = jnp.where(both_poles, residues, value)
    # integer z and m >= 0: a product of integers
    value = _snap(value, jnp.round(value), _integral(z, m) & (m >= 0))
    return jnp.where(m == 0, 1.0, value).astype(z.dtype)


def _poch_jvp(primals, tangents):
    z, m = primals
    z_dot, m_dot = tangents
    ans = poch(z, m)
    z, m = _float("poch", z, m)
    # d/dz = poch * (psi(z + m) - psi(z)); d/dm = poch * psi(z + m)
    psi_zm = lax.digamma(z + m)
    return ans, z_dot * ans * (psi_zm - lax.digamma(z)) + m_dot * ans * psi_zm


poch.defjvp(_poch_jvp)


# --------------------------------------------------------------------------------------------
# x log y, entropies, Box-Cox


@custom_jvp
def xlogy(x, y):
    """``x * log(y)``, defined as 0 where ``x == 0`` (even for ``y == 0`` or NaN).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import xlogy
    >>> xlogy(jnp.array([0., 2.]), jnp.array([0., 3.]))
    Array([0.       , 2.1972246], dtype=float32)
    """
    x, y = _float("xlogy", x, y)
    x_ok = x != 0
    safe_x = jnp.where(x_ok, x, 1.0)
    safe_y = jnp.where(x_ok, y, 1.0)
    return jnp.where(x_ok, safe_x * lax.log(safe_y), jnp.zeros_like(x))


def _xlogy_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    ans = xlogy(x, y)
    x, y = _float("xlogy", x, y)
    # JAX's rule: d/dx = log(y), d/dy = x / y (no special case at x == 0).
    return ans, x_dot * lax.log(y) + y_dot * x / y


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x, y):
    """``x * log1p(y)``, defined as 0 where ``x == 0``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import xlog1py
    >>> xlog1py(jnp.array([0., 2.]), jnp.array([-1., 0.5]))
    Array([0.        , 0.81093025], dtype=float32)
    """
    x, y = _float("xlog1py", x, y)
    x_ok = x != 0
    safe_x = jnp.where(x_ok, x, 1.0)
    safe_y = jnp.where(x_ok, y, 1.0)
    return jnp.where(x_ok, safe_x * lax.log1p(safe_y), jnp.zeros_like(x))


def _xlog1py_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    ans = xlog1py(x, y)
    x, y = _float("xlog1py", x, y)
    return ans, x_dot * lax.log1p(y) + y_dot * x / (1 + y)


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


_xlogx.defjvps(lambda g, ans, x: g * (lax.log(x) + 1))


def entr(x):
    """Elementwise entropy ``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` for ``x < 0``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import entr
    >>> entr(jnp.array([-1., 0., 0.5]))
    Array([      -inf, -0.       ,  0.3465736], dtype=float32)
    """
    x, = _float("entr", x)
    return jnp.where(x < 0, -np.inf, -_xlogx(x))


def rel_entr(p, q):
    """Elementwise relative entropy: ``p log(p / q)`` for ``p > 0, q > 0``; 0 for
    ``p == 0, q >= 0``; ``inf`` otherwise.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import rel_entr
    >>> rel_entr(jnp.array([0., 1., 1.]), jnp.array([1., 2., 0.]))
    Array([ 0.       , -0.6931472,        inf], dtype=float32)
    """
    p, q = _float("rel_entr", p, q)
    both_positive = (p > 0) & (q > 0)
    safe_p = jnp.where(both_positive, p, 1.0)
    safe_q = jnp.where(both_positive, q, 1.0)
    value = jnp.where(both_positive, safe_p * lax.log(safe_p / safe_q), np.inf)
    return jnp.where((p == 0) & (q >= 0), 0.0, value).astype(p.dtype)


def kl_div(p, q):
    """Elementwise Kullback-Leibler term ``p log(p / q) - p + q`` for ``p > 0, q > 0``;
    ``q`` for ``p == 0, q >= 0``; ``inf`` otherwise.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import kl_div
    >>> kl_div(jnp.array([0., 1.]), jnp.array([1., 2.]))
    Array([1.        , 0.30685282], dtype=float32)
    """
    p, q = _float("kl_div", p, q)
    both_positive = (p > 0) & (q > 0)
    safe_p = jnp.where(both_positive, p, 1.0)
    safe_q = jnp.where(both_positive, q, 1.0)
    value = jnp.where(both_positive, safe_p * lax.log(safe_p / safe_q) - safe_p + safe_q,
                      np.inf)
    return jnp.where((p == 0) & (q >= 0), q, value).astype(p.dtype)


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log(x)`` for ``lmbda == 0``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import boxcox
    >>> boxcox(jnp.array([2., 2.]), jnp.array([0., 0.5]))
    Array([0.6931472 , 0.82842714], dtype=float32)
    """
    x, lmbda = _float("boxcox", x, lmbda)
    return _boxcox_of_log(lax.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``, accurate for small ``x``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import boxcox1p
    >>> boxcox1p(jnp.array([1., 1.]), jnp.array([0., 0.5]))
    Array([0.6931472 , 0.82842714], dtype=float32)
    """
    x, lmbda = _float("boxcox1p", x, lmbda)
    return _boxcox_of_log(lax.log1p(x), lmbda)


def _boxcox_of_log(log_x, lmbda):
    nonzero = lmbda != 0
    safe_lmbda = jnp.where(nonzero, lmbda, 1.0)
    return jnp.where(nonzero, lax.expm1(safe_lmbda * log_x) / safe_lmbda, log_x)


# --------------------------------------------------------------------------------------------
# Bessel functions, zeta, polygamma, multigammaln, Bernoulli numbers


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
    x, = _float("i0e", x)
    return lax.bessel_i0e(x)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
    x, = _float("i1e", x)
    return lax.bessel_i1e(x)


def i0(x):
    """The modified Bessel function of the first kind of order 0.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import i0
    >>> i0(jnp.array([0., 1.]))
    Array([1.      , 1.266066], dtype=float32)
    """
    x, = _float("i0", x)
    return lax.exp(lax.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of the first kind of order 1."""
    x, = _float("i1", x)
    return lax.exp(lax.abs(x)) * lax.bessel_i1e(x)


def zeta(x, q=None):
    """The Hurwitz zeta function ``sum_k (k + q)**-x``; ``q`` is required (the Riemann
    zeta function is ``zeta(x, 1)``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import zeta
    >>> zeta(jnp.array([2.]), 1.)
    Array([1.644934], dtype=float32)
    """
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    return _zeta(x, q)


@custom_jvp
def _zeta(x, q):
    x, q = _float("zeta", x, q)
    return lax.zeta(x, q)


# B_2, B_4, ..., B_16 over (2j)!: the Euler-Maclaurin tail coefficients
_EM_COEFFICIENTS = [float(Fraction(b) / math.factorial(2 * j))
                    for j, b in enumerate([Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42),
                                           Fraction(-1, 30), Fraction(5, 66),
                                           Fraction(-691, 2730), Fraction(7, 6),
                                           Fraction(-3617, 510)], start=1)]


def _zeta_dx(x, q, n_direct=12):
    """``d zeta(x, q) / dx = -sum_k log(k + q) (k + q)^-x`` by the Euler-Maclaurin formula:
    ``n_direct`` direct terms, the integral and endpoint terms at ``a = q + n_direct``, and
    the Bernoulli tail, each differentiated in ``x``."""
    total = jnp.zeros_like(x * q)
    for k in range(n_direct):
        base = q + k
        total = total - jnp.log(base) * base ** -x
    a = q + n_direct
    log_a = jnp.log(a)
    a_1mx = a ** (1 - x)
    total = total - log_a * a_1mx / (x - 1) - a_1mx / ((x - 1) * (x - 1))
    total = total - 0.5 * log_a * a ** -x
    rising = x             # x (x+1) ... (x+2j-2)
    rising_dx = jnp.ones_like(x)
    power = a ** (-x - 1)  # a^(-x-2j+1)
    for j, c in enumerate(_EM_COEFFICIENTS, start=1):
        total = total + c * (rising_dx - rising * log_a) * power
        for i in (2 * j - 1, 2 * j):
            rising_dx = rising_dx * (x + i) + rising
            rising = rising * (x + i)
        power = power / (a * a)
    return total


def _zeta_jvp(primals, tangents):
    x, q = primals
    x_dot, q_dot = tangents
    ans = _zeta(x, q)
    x, q = _float("zeta", x, q)
    # d/dq = -x zeta(x + 1, q); d/dx by Euler-Maclaurin (JAX differentiates a series too)
    return ans, x_dot * _zeta_dx(x, q) - q_dot * x * lax.zeta(x + 1, q)


_zeta.defjvp(_zeta_jvp)


def polygamma(n, x):
    """The ``n``-th derivative of :func:`digamma` (``n`` an integer array or scalar).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import polygamma
    >>> polygamma(1, jnp.array([1.]))
    Array([1.644934], dtype=float32)
    """
    n_dtype = jnp.asarray(n).dtype
    if not dtypes.is_integer(n_dtype):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n_dtype}.")
    n, x = _float("polygamma", n, x)
    return lax.polygamma(n, x)


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (a Python int):
    ``d (d-1)/4 log(pi) + sum_j gammaln(a - j/2)``, ``j = 0 .. d-1``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import multigammaln
    >>> multigammaln(jnp.array([3.]), 2)
    Array([1.550195], dtype=float32)
    """
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"d argument of multigammaln must be a concrete integer, got "
                        f"{d!r}") from None
    a, = _float("multigammaln", a)
    halves = jnp.arange(d, dtype=a.dtype) / 2
    constant = d * (d - 1) / 4 * math.log(math.pi)
    return constant + jnp.sum(lax.lgamma(jnp.expand_dims(a, -1) - halves), axis=-1)


def _bernoulli_numbers(n: int) -> list:
    """``B_0 .. B_n`` (with ``B_1 = -1/2``) exactly, by the Akiyama-Tanigawa algorithm."""
    out, row = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    if n >= 1:
        out[1] = Fraction(-1, 2)
    return out


def bernoulli(n: int):
    """The Bernoulli numbers ``B_0 .. B_n`` (``n`` a Python int), with ``B_1 = -1/2``.

    Examples
    --------
    >>> from xjax.scipy.special import bernoulli
    >>> bernoulli(4)
    Array([ 1.        , -0.5       ,  0.16666667,  0.        , -0.03333334], dtype=float32)
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n must be a concrete integer, got {n!r}") from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    values = np.array([float(b) for b in _bernoulli_numbers(n)])
    return jnp.asarray(values, dtype=dtypes.default_float_dtype())


def wofz(z):
    """The Faddeeva function ``w(z) = exp(-z**2) erfc(-i z)``, for real or complex ``z``
    (the result is complex: complex64, or complex128 for double-precision input).

    Poppe & Wijers' algorithm (Taylor series, Gautschi's method, Laplace's continued
    fraction; see ``xjax/scipy/_special_faddeeva.py``): relative accuracy about 1e-14 in
    complex128. Differentiable (holomorphic): ``w'(z) = -2 z w(z) + 2i/sqrt(pi)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import wofz
    >>> wofz(jnp.array([0., 1.]))
    Array([1.        +0.j       , 0.36787942+0.6071577j], dtype=complex64)
    """
    z, = _float("wofz", z)
    return faddeeva(z.astype(dtypes.to_complex_dtype(z.dtype)))


def erfcx(x):
    """The scaled complementary error function ``exp(x**2) erfc(x)``; for complex ``x`` it
    is ``wofz(i x)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import erfcx
    >>> erfcx(jnp.array([0., 1.]))
    Array([1.       , 0.4275836], dtype=float32)
    """
    x, = _float("erfcx", x)
    if dtypes.is_complex(x.dtype):
        return faddeeva(lax.complex(-jnp.imag(x), jnp.real(x)))
    return _erfcx_real(x)


# --------------------------------------------------------------------------------------------
# logsumexp, softmax


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """``log(sum(b * exp(a), axis))``, computed stably (see :func:`xjax.nn.logsumexp`).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import logsumexp
    >>> logsumexp(jnp.array([0., 0.]))
    Array(0.6931472, dtype=float32)
    """
    return _logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                      where=where)


def softmax(x, /, *, axis=None):
    """``exp(x) / sum(exp(x), axis)`` (all axes by default, as SciPy).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import softmax
    >>> softmax(jnp.array([0., 0.]))
    Array([0.5, 0.5], dtype=float32)
    """
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """``x - logsumexp(x, axis)`` (all axes by default, as SciPy).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import log_softmax
    >>> log_softmax(jnp.array([0., 0.]))
    Array([-0.6931472, -0.6931472], dtype=float32)
    """
    return _nn_log_softmax(x, axis=axis)
