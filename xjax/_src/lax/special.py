"""Special functions: erf, erfc, erf_inv, lgamma, digamma, polygamma, zeta, the incomplete
gamma and beta functions, and the exponentially scaled Bessel functions I0 and I1.

Impls evaluate ``special_numpy``'s float64 algorithms and round to the operand dtype.
Lowerings use CHLO where XLA has the function (``chlo.erf``, ``chlo.lgamma``, ...), else
``special_lowering``'s float64 StableHLO.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.lax import special_lowering as hlo
from xjax._src.lax import cpu_math, special_numpy
from xjax._src.lax.compare import gt, select
from xjax._src.lax.elementwise import (abs, add, div, integer_pow, mul, neg, parts, sign, square,
                                       sub)
from xjax._src.lax.naryop import (FLOATING, batch_naryop, binary_wrapper, lower_single, naryop,
                                  scalar_like, unary_wrapper)
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import full_like_shape
from xjax._src.lax.transcendental import exp, log, log1p


def _in_float64(fn):
    """An impl computing ``fn`` in float64 and returning the first operand's dtype."""

    def impl(*args):
        return np.asarray(fn(*args)).astype(args[0].dtype)

    impl.__name__ = f"{fn.__name__}_impl"
    return impl


def _special(name, fn, lower, doc, arity=1, *, jvp_parts):
    """A primitive and its wrapper; ``jvp_parts`` holds one ``rule(t, ans, *primals)`` per
    operand (see ``parts``)."""
    primitive = naryop(name, FLOATING, impl=_in_float64(fn),
                       lower=lower_single(lower) if isinstance(lower, str) else lower,
                       jvp=parts(name, *jvp_parts), batch=batch_naryop(name))
    wrapper = {1: unary_wrapper, 2: binary_wrapper}.get(arity)
    return primitive, (wrapper(primitive, doc) if wrapper else None)


# -- derivative rules (JAX's); parts rules are ``rule(t, ans, *primals)`` --


def _gaussian_tangent(t, x, scale):
    """``scale * (t * exp(-x**2))``, erf's tangent (scale 2/sqrt(pi)) and erfc's, multiplied
    in JAX's order (the rounding of its derivatives)."""
    return mul(scalar_like(x, scale), mul(t, exp(neg(square(x)))))


def _unsupported(error, message):
    def rule(t, ans, *primals):
        raise error(message)

    return rule


def _polygamma_jvp_x(t, ans, m, x):
    return mul(t, polygamma(add(m, scalar_like(m, 1)), x))


def _zeta_jvp_q(t, ans, x, q):
    # d/dq sum_k (q + k)^-x = -x * zeta(x + 1, q)
    return mul(t, mul(neg(x), zeta(add(x, scalar_like(x, 1)), q)))


def _bessel_i0e_jvp(t, ans, x):
    return mul(t, sub(bessel_i1e(x), mul(sign(x), ans)))


def _bessel_i1e_jvp(t, ans, x):
    """i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), and 1/2 near 0 where 1/x overflows."""
    eps = float(dtypes.finfo(get_aval(x).dtype).eps)
    not_tiny = gt(abs(x), scalar_like(x, eps))
    safe_x = select(not_tiny, x, full_like_shape(x, eps))
    slope = sub(bessel_i0e(safe_x), mul(ans, add(sign(safe_x), integer_pow(safe_x, -1))))
    return mul(t, select(not_tiny, slope, full_like_shape(x, 0.5)))


def _gamma_density(a, x):
    """d/dx igamma(a, x) = x^(a-1) e^-x / Gamma(a)."""
    return exp(sub(add(neg(x), mul(sub(a, scalar_like(a, 1)), log(x))), lgamma(a)))


def _igamma_grad_a_jvp_x(t, ans, a, x):
    # d/dx d/da P(a, x) = d/da of the density: density * (log x - digamma(a))
    return mul(t, mul(_gamma_density(a, x), sub(log(x), digamma(a))))


def _betainc_jvp_x(t, ans, a, b, x):
    one = scalar_like(a, 1)
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    log_density = add(mul(sub(b, one), log1p(neg(x))), mul(sub(a, one), log(x)))
    return mul(t, exp(sub(log_density, log_beta)))


_ERF_JVP = [lambda t, ans, x: _gaussian_tangent(t, x, 2.0 / np.sqrt(np.pi))]
_ERFC_JVP = [lambda t, ans, x: _gaussian_tangent(t, x, -2.0 / np.sqrt(np.pi))]
_ERF_INV_JVP = [lambda t, ans, x: mul(scalar_like(x, np.sqrt(np.pi) / 2.0),
                                      mul(t, exp(square(ans))))]
_IGAMMA_JVP = [lambda t, ans, a, x: mul(t, igamma_grad_a(a, x)),
               lambda t, ans, a, x: mul(t, _gamma_density(a, x))]
_IGAMMAC_JVP = [lambda t, ans, a, x: neg(mul(t, igamma_grad_a(a, x))),
                lambda t, ans, a, x: neg(mul(t, _gamma_density(a, x)))]

erf_p, erf = _special("erf", special_numpy.erf, "chlo.erf", """Elementwise error function
:math:`\\frac{2}{\\sqrt{\\pi}} \\int_0^x e^{-t^2} dt`.

Examples
--------
>>> from xjax import lax
>>> lax.erf(0.0)
Array(0., dtype=float32, weak_type=True)
""", jvp_parts=_ERF_JVP)
erfc_p, erfc = _special("erfc", special_numpy.erfc, "chlo.erfc",
                        "Elementwise complementary error function ``1 - erf(x)``.",
                        jvp_parts=_ERFC_JVP)
erf_inv_p, erf_inv = _special("erf_inv", special_numpy.erf_inv, cpu_math.cpu_float32_lowering(
                                  cpu_math.erf_inv_float32, lower_single("chlo.erf_inv"), False),
                              "Elementwise inverse error function (±inf at ±1, NaN outside "
                              "[-1, 1]).", jvp_parts=_ERF_INV_JVP)
lgamma_p, lgamma = _special("lgamma", special_numpy.lgamma, "chlo.lgamma",
                            "Elementwise log of the absolute value of the gamma function.",
                            jvp_parts=[lambda t, ans, x: mul(t, digamma(x))])
digamma_p, digamma = _special("digamma", special_numpy.digamma, "chlo.digamma",
                              "Elementwise digamma function (the derivative of ``lgamma``); "
                              "NaN at the poles 0, -1, -2, ...",
                              jvp_parts=[lambda t, ans, x: mul(t, polygamma(scalar_like(x, 1),
                                                                            x))])
polygamma_p, polygamma = _special("polygamma", special_numpy.polygamma, "chlo.polygamma",
                                  """Elementwise polygamma function: the ``m``-th derivative of
digamma at ``x``, for integer ``m >= 0`` (NaN otherwise).""", arity=2,
                                  jvp_parts=[_unsupported(ValueError, "polygamma gradient with "
                                                          "respect to m is not supported"),
                                             _polygamma_jvp_x])
zeta_p, zeta = _special("zeta", special_numpy.zeta, "chlo.zeta", """Elementwise Hurwitz zeta
function :math:`\\sum_k (q + k)^{-x}` (``zeta(x, q)``), for ``x > 1``.""", arity=2,
                        jvp_parts=[_unsupported(NotImplementedError, "zeta(x, q) has no "
                                                "derivative rule with respect to x (JAX has "
                                                "none either); only q"), _zeta_jvp_q])
bessel_i0e_p, bessel_i0e = _special("bessel_i0e", special_numpy.bessel_i0e,
                                    hlo.lower_in_float64(hlo.bessel_i0e_f64),
                                    "Elementwise exponentially scaled modified Bessel function "
                                    "of order 0: ``exp(-|x|) I0(x)``.",
                                    jvp_parts=[_bessel_i0e_jvp])
bessel_i1e_p, bessel_i1e = _special("bessel_i1e", special_numpy.bessel_i1e, "chlo.bessel_i1e",
                                    "Elementwise exponentially scaled modified Bessel function "
                                    "of order 1: ``exp(-|x|) I1(x)``.",
                                    jvp_parts=[_bessel_i1e_jvp])
igamma_p, igamma = _special("igamma", special_numpy.igamma, hlo.lower_in_float64(hlo.igamma_f64),
                            """Elementwise regularized lower incomplete gamma function
:math:`P(a, x)` (``igamma(a, x)``).""", arity=2, jvp_parts=_IGAMMA_JVP)
igammac_p, igammac = _special("igammac", special_numpy.igammac,
                              hlo.lower_in_float64(hlo.igammac_f64),
                              """Elementwise regularized upper incomplete gamma function
:math:`Q(a, x) = 1 - P(a, x)`.""", arity=2, jvp_parts=_IGAMMAC_JVP)
igamma_grad_a_p, igamma_grad_a = _special(
    "igamma_grad_a", special_numpy.igamma_grad_a, hlo.lower_in_float64(hlo.igamma_grad_a_f64),
    "Elementwise derivative of ``igamma(a, x)`` with respect to ``a``.", arity=2,
    jvp_parts=[_unsupported(NotImplementedError, "igamma_grad_a(a, x) has no derivative rule "
                            "with respect to a (JAX has none either); only x"),
               _igamma_grad_a_jvp_x])
_BETAINC_AB = _unsupported(ValueError, "Betainc gradient with respect to a and b not "
                           "supported.")
regularized_incomplete_beta_p, _ = _special("regularized_incomplete_beta",
                                            special_numpy.betainc,
                                            hlo.lower_in_float64(hlo.betainc_f64), "", arity=3,
                                            jvp_parts=[_BETAINC_AB, _BETAINC_AB,
                                                       _betainc_jvp_x])


def betainc(a, b, x):
    """Elementwise regularized incomplete beta function :math:`I_x(a, b)`.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.betainc(1.0, 1.0, 0.25)
    Array(0.25, dtype=float32, weak_type=True)
    """
    return regularized_incomplete_beta_p.bind(to_operand(a), to_operand(b), to_operand(x))


def random_gamma_grad(a, x):
    """Derivative of a Gamma(a, 1) sample ``x`` with respect to ``a`` (implicit
    differentiation of the CDF: ``-dP(a, x)/da / p(x; a)``)."""
    a, x = to_operand(a), to_operand(x)
    one = _like(a, 1.0)
    log_density = sub(sub(mul(sub(a, one), log(x)), x), lgamma(a))
    return div(neg(igamma_grad_a(a, x)), exp(log_density))


def _like(x, value):
    """A scalar of ``x``'s dtype and weak type."""
    aval = x.aval
    return Array._from_numpy(np.asarray(value, aval.dtype), ShapedArray((), aval.dtype,
                                                                        aval.weak_type))


__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma", "zeta", "bessel_i0e",
           "bessel_i1e", "igamma", "igammac", "igamma_grad_a", "betainc", "random_gamma_grad",
           "erf_p", "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p", "polygamma_p", "zeta_p",
           "bessel_i0e_p", "bessel_i1e_p", "igamma_p", "igammac_p", "igamma_grad_a_p",
           "regularized_incomplete_beta_p"]
