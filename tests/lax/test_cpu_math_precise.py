"""Float32 log1p and erf_inv on the CPU (written out as JAX's XLA computes them, lax/cpu_math.py;
the samplers build on them): accurate, exact at the edges, and JAX's own bits where JAX
exists, also when fused with the operations around them."""

import numpy as np
import pytest

import xjax
from xjax.lax import erf_inv, log1p

_X = np.concatenate([np.linspace(-1, 1, 200_001, dtype=np.float32),
                     np.float32(1) - np.logspace(-7.2, -1, 2000).astype(np.float32),
                     np.logspace(-30, -1, 2000).astype(np.float32)])


def _ulps(a, b):
    def ordered(v):
        i = np.asarray(v, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(a) - ordered(b))


@pytest.mark.parametrize("bound,max_ulps", [(0.99, 5), (0.999, 11), (1.0, 65)])
def test_accuracy_against_float64(bound, max_ulps):
    """Giles' approximation: a few ulp in the centre, more where erf_inv(x) grows steeply
    (XLA's own float32 erf_inv has the same errors)."""
    special = pytest.importorskip("scipy.special")
    inside = _X[np.abs(_X) < bound]
    got = np.asarray(xjax.jit(erf_inv)(inside))
    want = special.erfinv(inside.astype(np.float64)).astype(np.float32)
    assert _ulps(got, want).max() <= max_ulps


def test_edges():
    x = np.array([-1.0, 1.0, 0.0, -0.0, 1.5, -2.0, np.nan], np.float32)
    got = np.asarray(xjax.jit(erf_inv)(x))
    np.testing.assert_array_equal(got[:4], [-np.inf, np.inf, 0.0, 0.0])
    assert np.signbit(got[3]) and np.isnan(got[4:]).all()


def test_erf_inv_matches_jax():
    jax = pytest.importorskip("jax")
    got = np.asarray(xjax.jit(erf_inv)(_X))
    want = np.asarray(jax.jit(jax.lax.erf_inv)(_X))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


_Y = np.concatenate([np.random.default_rng(0).uniform(-1, 5, 200_000).astype(np.float32),
                     -np.logspace(-30, -0.01, 20_000).astype(np.float32),
                     np.array([0.0, -0.0, -1.0, -1.5, np.inf, np.nan], np.float32)])


@pytest.mark.parametrize("context", ["alone", "fused"])
def test_log1p_matches_jax(context):
    """Alone, and fused between other operations (where XLA is freest to contract)."""
    jax = pytest.importorskip("jax")
    if context == "alone":
        got, want = xjax.jit(log1p)(_Y), jax.jit(jax.numpy.log1p)(_Y)
    else:
        got = xjax.jit(lambda y: -log1p(-(y * 0.5 + 0.25)) * 3.0)(_Y)
        want = jax.jit(lambda y: -jax.numpy.log1p(-(y * 0.5 + 0.25)) * 3.0)(_Y)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint32),
                                  np.asarray(want).view(np.uint32))


def test_log1p_accuracy():
    inside = _Y[np.isfinite(_Y) & (_Y > -1)]
    got = np.asarray(xjax.jit(log1p)(inside))
    want = np.log1p(inside.astype(np.float64)).astype(np.float32)
    assert _ulps(got, want).max() <= 2
