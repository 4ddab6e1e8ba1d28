"""Special functions: known values, XLA's edge values (measured on JAX 0.10.2), eager against
jit, and (where SciPy is installed) the float64 algorithms against SciPy."""

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.lax import special_numpy

MODES = ["eager", "jit"]
inf, nan = np.inf, np.nan


def run(mode, fun, *args):
    return xjax.jit(fun)(*args) if mode == "jit" else fun(*args)


def f32(*values):
    return np.array(values, np.float32)


def close(out, want, rtol=1e-5):
    out = np.asarray(out)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, f32(*want), rtol=rtol, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("mode", MODES)
def test_error_functions(mode):
    close(run(mode, lax.erf, f32(0, inf, -inf, nan, 3.0, 1e-30)),
          [0, 1, -1, nan, 0.99997795, 1.1283791e-30])
    close(run(mode, lax.erfc, f32(0, inf, -inf, nan, -3.0, 30.0)),
          [1, 0, 2, nan, 1.999978, 0])
    close(run(mode, lax.erf_inv, f32(0, 1, -1, nan, 0.999999, 1e-30, 1.5)),
          [0, inf, -inf, nan, 3.4570746, 8.8622682e-31, nan], rtol=2e-4)


@pytest.mark.parametrize("mode", MODES)
def test_gamma_functions(mode):
    close(run(mode, lax.lgamma, f32(0, inf, -inf, nan, 2.0, -1.0, -2.5, 1e-30, 3e38)),
          [inf, inf, inf, nan, 0, inf, -0.056243896, 69.077553, inf])
    close(run(mode, lax.digamma, f32(0, inf, -inf, nan, 1.0, -1.0, -2.5, 3e38, -1e30)),
          [nan, inf, nan, nan, -0.57721537, nan, 1.1031562, 88.59684, nan], rtol=1e-4)
    close(run(mode, lax.polygamma, f32(0, 1, 2, 3, 1.5, -1, 1, 2), f32(1, 1, 2, 0.5, 1, 1, 0,
                                                                         -1.5)),
          [-0.5772154, 1.644934, -0.40411392, 97.40919, nan, nan, inf, -0.23620448], rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_zeta_edges(mode):
    s = f32(2, 1, 0.5, 3, inf, 2, 2, 2, 2, 3, -2, -1, 4)
    q = f32(1, 1, 1, -1.5, 2, 0, -1, -0.5, inf, -1, 0, 0, -inf)
    close(run(mode, lax.zeta, s, q),
          [1.6449341, inf, nan, 0.11810221, nan, inf, inf, 8.934802, nan, nan, inf, nan, inf],
          rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_incomplete_gamma(mode):
    a = f32(0, 0, 1, -1, 1, nan, 1, inf, 2, 1)
    x = f32(0, 1, 0, 1, -1, 1, inf, 1, 1e-30, 1)
    close(run(mode, lax.igamma, a, x), [nan, 1, 0, nan, nan, nan, 1, nan, 0, 0.6321206])
    close(run(mode, lax.igammac, a, x), [nan, 0, 1, nan, nan, nan, 0, nan, 1, 0.36787944])
    close(run(mode, lax.igamma_grad_a, f32(0.5, 1, 2, 10, 0, -1, 1), f32(1, 1, 3, 5, 1, 1, 0)),
          [-0.38983738, -0.43172967, -0.19742535, -0.02555194, nan, nan, 0], rtol=1e-4)
    close(run(mode, lax.random_gamma_grad, f32(0.5, 1, 2, 10), f32(1, 1, 3, 5)),
          [1.8782476, 1.1735635, 1.321798, 0.70458], rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_betainc(mode):
    close(run(mode, lax.betainc, f32(1, 2, 0.5, 0, 1, -1, 1, 2), f32(1, 3, 0.5, 1, 0, 1, 1, 2),
              f32(0.5, 0.2, 0.5, 0.5, 0.5, 0.5, 1.5, 1)),
          [0.5, 0.1808, 0.5, 1, 0, nan, nan, 1], rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_bessel(mode):
    x = f32(0, 1, -1, 30, 100, inf, -inf, nan, 1e-20)
    close(run(mode, lax.bessel_i0e, x),
          [1, 0.46575963, 0.46575963, 0.07314594, 0.03994438, 0, 0, nan, 1])
    out = run(mode, lax.bessel_i1e, x)
    close(out, [0, 0.20791042, -0.20791042, 0.071916334, 0.039744154, 0, -0.0, nan, 5e-21])
    assert np.signbit(np.asarray(out)[6])


def test_low_precision_results():
    x = np.array([0.5, 1.5], np.float16)
    assert lax.erf(x).dtype == np.float16
    assert lax.lgamma(x.astype(np.float32)).dtype == np.float32


def test_float64_algorithms_against_scipy():
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    x = rng.uniform(-6, 6, 500)
    np.testing.assert_allclose(special_numpy.erf(x), special.erf(x), rtol=1e-13)
    np.testing.assert_allclose(special_numpy.erfc(x), special.erfc(x), rtol=1e-12)
    y = np.concatenate([rng.uniform(-1, 1, 500), 1 - 10.0 ** -rng.uniform(1, 15, 50)])
    np.testing.assert_allclose(special_numpy.erf_inv(y), special.erfinv(y), rtol=1e-12)
    g = rng.uniform(-20, 20, 500)
    np.testing.assert_allclose(special_numpy.lgamma(g), special.gammaln(g), rtol=1e-10)
    np.testing.assert_allclose(special_numpy.digamma(g), special.digamma(g), rtol=1e-10,
                               atol=1e-12)
    s, q = rng.uniform(1.1, 20, 500), rng.uniform(0.01, 20, 500)
    np.testing.assert_allclose(special_numpy.zeta(s, q), special.zeta(s, q), rtol=1e-9)
    a = 10.0 ** rng.uniform(-2, 3, 500)
    xg = a * rng.uniform(0.01, 3, 500)
    np.testing.assert_allclose(special_numpy.igamma(a, xg), special.gammainc(a, xg),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(special_numpy.igammac(a, xg), special.gammaincc(a, xg),
                               rtol=1e-10, atol=1e-14)
    ba, bb = 10.0 ** rng.uniform(-1, 2, 500), 10.0 ** rng.uniform(-1, 2, 500)
    bx = rng.uniform(0, 1, 500)
    np.testing.assert_allclose(special_numpy.betainc(ba, bb, bx), special.betainc(ba, bb, bx),
                               rtol=1e-9, atol=1e-14)
    xb = rng.uniform(-50, 50, 500)
    np.testing.assert_allclose(special_numpy.bessel_i0e(xb), special.i0e(xb), rtol=1e-13)
    np.testing.assert_allclose(special_numpy.bessel_i1e(xb), special.i1e(xb), rtol=1e-13)
