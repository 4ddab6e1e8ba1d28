"""Special functions: erf, erfc, erf_inv, lgamma, digamma, polygamma, zeta, the incomplete
gamma and beta functions, and the exponentially scaled Bessel functions I0 and I1.

Impls evaluate ``special_numpy``'s float64 algorithms and round to the operand dtype.
Lowerings use CHLO where XLA has the function (``chlo.erf``, ``chlo.lgamma``, ...), else
``special_lowering``'s float64 StableHLO.
"""

from __future__ import annotations

import numpy as np

from xjax.core.array import Array
from xjax.core.avals import ShapedArray
from xjax.lax import special_lowering as hlo
from xjax.lax import special_numpy
from xjax.lax.elementwise import div, mul, neg, sub
from xjax.lax.naryop import FLOATING, lower_single, naryop
from xjax.lax.rules import binary_wrapper, to_operand, unary_wrapper
from xjax.lax.transcendental import exp, log


def _in_float64(fn):
    """An impl computing ``fn`` in float64 and returning the first operand's dtype."""

    def impl(*args):
        return np.asarray(fn(*args)).astype(args[0].dtype)

    impl.__name__ = f"{fn.__name__}_impl"
    return impl


def _special(name, fn, lower, doc, arity=1):
    primitive = naryop(name, FLOATING, impl=_in_float64(fn),
                       lower=lower_single(lower) if isinstance(lower, str) else lower)
    wrapper = {1: unary_wrapper, 2: binary_wrapper}.get(arity)
    return primitive, (wrapper(primitive, doc) if wrapper else None)


erf_p, erf = _special("erf", special_numpy.erf, "chlo.erf", """Elementwise error function
:math:`\\frac{2}{\\sqrt{\\pi}} \\int_0^x e^{-t^2} dt`.

Examples
--------
>>> from xjax import lax
>>> lax.erf(0.0)
Array(0., dtype=float32, weak_type=True)
""")
erfc_p, erfc = _special("erfc", special_numpy.erfc, "chlo.erfc",
                        "Elementwise complementary error function ``1 - erf(x)``.")
erf_inv_p, erf_inv = _special("erf_inv", special_numpy.erf_inv, "chlo.erf_inv",
                              "Elementwise inverse error function (±inf at ±1, NaN outside "
                              "[-1, 1]).")
lgamma_p, lgamma = _special("lgamma", special_numpy.lgamma, "chlo.lgamma",
                            "Elementwise log of the absolute value of the gamma function.")
digamma_p, digamma = _special("digamma", special_numpy.digamma, "chlo.digamma",
                              "Elementwise digamma function (the derivative of ``lgamma``); "
                              "NaN at the poles 0, -1, -2, ...")
polygamma_p, polygamma = _special("polygamma", special_numpy.polygamma, "chlo.polygamma",
                                  """Elementwise polygamma function: the ``m``-th derivative of
digamma at ``x``, for integer ``m >= 0`` (NaN otherwise).""", arity=2)
zeta_p, zeta = _special("zeta", special_numpy.zeta, "chlo.zeta", """Elementwise Hurwitz zeta
function :math:`\\sum_k (q + k)^{-x}` (``zeta(x, q)``), for ``x > 1``.""", arity=2)
bessel_i0e_p, bessel_i0e = _special("bessel_i0e", special_numpy.bessel_i0e,
                                    hlo.lower_in_float64(hlo.bessel_i0e_f64),
                                    "Elementwise exponentially scaled modified Bessel function "
                                    "of order 0: ``exp(-|x|) I0(x)``.")
bessel_i1e_p, bessel_i1e = _special("bessel_i1e", special_numpy.bessel_i1e, "chlo.bessel_i1e",
                                    "Elementwise exponentially scaled modified Bessel function "
                                    "of order 1: ``exp(-|x|) I1(x)``.")
igamma_p, igamma = _special("igamma", special_numpy.igamma, hlo.lower_in_float64(hlo.igamma_f64),
                            """Elementwise regularized lower incomplete gamma function
:math:`P(a, x)` (``igamma(a, x)``).""", arity=2)
igammac_p, igammac = _special("igammac", special_numpy.igammac,
                              hlo.lower_in_float64(hlo.igammac_f64),
                              """Elementwise regularized upper incomplete gamma function
:math:`Q(a, x) = 1 - P(a, x)`.""", arity=2)
igamma_grad_a_p, igamma_grad_a = _special("igamma_grad_a", special_numpy.igamma_grad_a,
                                          hlo.lower_in_float64(hlo.igamma_grad_a_f64),
                                          "Elementwise derivative of ``igamma(a, x)`` with "
                                          "respect to ``a``.", arity=2)
regularized_incomplete_beta_p, _ = _special("regularized_incomplete_beta",
                                            special_numpy.betainc,
                                            hlo.lower_in_float64(hlo.betainc_f64), "", arity=3)


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
