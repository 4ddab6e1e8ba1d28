"""Rule-check records of the special functions."""

from xjax import lax
from xjax._src.lax.special import regularized_incomplete_beta_p
from op_records.elementwise import (by_precision, grad_record, no_grad, uniform,
                                                      with_specials)
from op_table import FLOATS, OpRecord

# float32 tolerances: XLA's float32 algorithms against float64 ones rounded to float32
_TOL = {"f32": 1e-5, "f16": 4e-3, "bf16": 3e-2}
_LOOSE = {"f32": 2e-4, "f16": 4e-3, "bf16": 3e-2}


def _special(name, fun, shapes, make_args, tol=_TOL):
    return by_precision(name, fun, shapes, make_args=make_args, tol=tol, with_complex=False)


def _gamma_args(rng, shapes, dtype):
    a = 10.0 ** rng.uniform(-1, 1.5, shapes[0])
    x = a * rng.uniform(0.05, 3.0, shapes[1])
    return [a.astype(dtype), x.astype(dtype)]


def _polygamma_args(rng, shapes, dtype):
    m = rng.integers(0, 4, shapes[0]).astype(dtype)
    return [m, rng.uniform(0.2, 6.0, shapes[1]).astype(dtype)]


def _zeta_args(rng, shapes, dtype):
    return [rng.uniform(1.5, 8.0, shapes[0]).astype(dtype),
            rng.uniform(0.3, 5.0, shapes[1]).astype(dtype)]


def _beta_args(rng, shapes, dtype):
    a = 10.0 ** rng.uniform(-0.5, 1.2, shapes[0])
    b = 10.0 ** rng.uniform(-0.5, 1.2, shapes[1])
    return [a.astype(dtype), b.astype(dtype), rng.uniform(0.0, 1.0, shapes[2]).astype(dtype)]


_S = [(4, 5)]


def _specials_record(name, fun, n_args):
    return OpRecord(name, fun, [(6, 7)] * n_args, FLOATS, make_args=with_specials, tol=3e-2,
                    name="specials", grad_order=0)


def _with_first(value, fun):
    """``fun`` with its first operand fixed to ``value`` (of the other operand's dtype), for
    derivatives in the remaining operands only."""
    return lambda *args: fun(lax.full_like(args[0], value), *args)


def _gamma_x_only(rng, shapes, dtype):
    return _gamma_args(rng, [(), shapes[0]], dtype)[1:]


def _beta_x_only(rng, shapes, dtype):
    return [rng.uniform(0.1, 0.9, shapes[0]).astype(dtype)]


# Derivative records: smooth domains (lgamma, digamma: away from the poles), and only in the
# operands with a derivative rule (polygamma's m, zeta's x, betainc's a and b have none, as
# in JAX; igamma_grad_a has none in a). igamma's derivative in a is igamma_grad_a, which has
# no derivative in a: first order in both operands, second order in x.
_GRAD_RECORDS = [
    grad_record("erf_inv", lax.erf_inv, _S, uniform(-0.9, 0.9), tol=_LOOSE["f32"]),
    grad_record("lgamma", lax.lgamma, _S, uniform(0.3, 6.0), tol=_LOOSE["f32"]),
    grad_record("digamma", lax.digamma, _S, uniform(0.3, 6.0), tol=_LOOSE["f32"]),
    grad_record("polygamma", _with_first(2.0, lax.polygamma), _S, uniform(0.3, 6.0),
                tol=_LOOSE["f32"], grad_tol=5e-2),
    grad_record("zeta", _with_first(3.0, lax.zeta), _S, uniform(0.5, 4.0), tol=_LOOSE["f32"]),
    grad_record("igamma", lax.igamma, _S * 2, _gamma_args, tol=_LOOSE["f32"], grad_order=1),
    grad_record("igamma", lambda x: lax.igamma(lax.full_like(x, 2.5), x), _S, _gamma_x_only,
                tol=_LOOSE["f32"], name="x-grad"),
    grad_record("igammac", lax.igammac, _S * 2, _gamma_args, tol=_LOOSE["f32"], grad_order=1),
    grad_record("igammac", lambda x: lax.igammac(lax.full_like(x, 2.5), x), _S,
                _gamma_x_only, tol=_LOOSE["f32"], name="x-grad"),
    grad_record("igamma_grad_a", lambda x: lax.igamma_grad_a(lax.full_like(x, 2.5), x), _S,
                _gamma_x_only, tol=_LOOSE["f32"]),
    grad_record("regularized_incomplete_beta",
                lambda x: lax.betainc(lax.full_like(x, 2.0), lax.full_like(x, 3.0), x), _S,
                _beta_x_only, tol=_LOOSE["f32"]),
]
_NO_GRAD = ("erf_inv", "lgamma", "digamma", "polygamma", "zeta", "igamma", "igammac",
            "igamma_grad_a", "regularized_incomplete_beta")


RECORDS = [
    *_special("erf", lax.erf, _S, uniform(-4.0, 4.0)),
    *_special("erfc", lax.erfc, _S, uniform(-2.0, 4.0)),
    *_special("erf_inv", lax.erf_inv, _S, uniform(-0.999, 0.999), tol=_LOOSE),
    *_special("lgamma", lax.lgamma, _S, uniform(-6.0, 10.0), tol=_LOOSE),
    *_special("digamma", lax.digamma, _S, uniform(-6.0, 10.0), tol=_LOOSE),
    *_special("bessel_i0e", lax.bessel_i0e, _S, uniform(-40.0, 40.0)),
    *_special("bessel_i1e", lax.bessel_i1e, _S, uniform(-40.0, 40.0)),
    *_special("polygamma", lax.polygamma, _S * 2, _polygamma_args, tol=_LOOSE),
    *_special("zeta", lax.zeta, _S * 2, _zeta_args, tol=_LOOSE),
    *_special("igamma", lax.igamma, _S * 2, _gamma_args, tol=_LOOSE),
    *_special("igammac", lax.igammac, _S * 2, _gamma_args, tol=_LOOSE),
    *_special("igamma_grad_a", lax.igamma_grad_a, _S * 2, _gamma_args, tol=_LOOSE),
    *_special("regularized_incomplete_beta", lax.betainc, _S * 3, _beta_args, tol=_LOOSE),
    *[_specials_record(name, fun, n) for name, fun, n in (
        ("erf", lax.erf, 1), ("erfc", lax.erfc, 1), ("erf_inv", lax.erf_inv, 1),
        ("lgamma", lax.lgamma, 1), ("digamma", lax.digamma, 1),
        ("bessel_i0e", lax.bessel_i0e, 1), ("bessel_i1e", lax.bessel_i1e, 1),
        ("polygamma", lax.polygamma, 2), ("zeta", lax.zeta, 2), ("igamma", lax.igamma, 2),
        ("igammac", lax.igammac, 2), ("igamma_grad_a", lax.igamma_grad_a, 2),
        ("regularized_incomplete_beta", regularized_incomplete_beta_p.bind, 3))],
]
no_grad([r for r in RECORDS if r.primitive in _NO_GRAD])
RECORDS += _GRAD_RECORDS
