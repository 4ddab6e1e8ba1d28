"""xjax.scipy.stats.norm against scipy.stats.norm and JAX 0.10.2: every function, with loc
and scale broadcasting, tails, dtypes, jit and derivatives."""

import numpy as np
import pytest
import scipy.stats as st

import xjax
import xjax.numpy as jnp
from xjax._src.core import dtypes
from xjax.scipy.stats import norm

try:
    import jax
    import jax.numpy as jjnp
except ImportError:
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is not installed")

X_FUNCS = ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"]
Q_FUNCS = ["ppf", "isf"]


def _x(shape=(4, 5), seed=0):
    return np.random.default_rng(seed).uniform(-8, 8, shape).astype(np.float32)


def _q(shape=(4, 5), seed=0):
    return np.random.default_rng(seed).uniform(1e-6, 1 - 1e-6, shape).astype(np.float32)


@pytest.mark.parametrize("name", X_FUNCS + Q_FUNCS)
@pytest.mark.parametrize("loc,scale", [(0, 1), (1.5, 0.3), ("array", "array")])
def test_against_scipy(name, loc, scale):
    arg = _q() if name in Q_FUNCS else _x()
    if loc == "array":
        loc = np.linspace(-1, 1, 5).astype(np.float32)
        scale = np.linspace(0.5, 3, 4).astype(np.float32)[:, None]
    got = getattr(norm, name)(jnp.asarray(arg), loc, scale)
    want = getattr(st.norm, name)(arg.astype(np.float64), loc, scale)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-30)


def test_tails():
    x = np.array([-40., -12., -5., 0., 5., 12., 40.], np.float32)
    for name in ("logcdf", "logsf", "logpdf"):
        np.testing.assert_allclose(getattr(norm, name)(jnp.asarray(x)),
                                   getattr(st.norm, name)(x.astype(np.float64)), rtol=1e-5)
    q = np.array([0., 1e-30, 1e-8, 0.5, 1 - 1e-7, 1.], np.float32)
    np.testing.assert_allclose(norm.ppf(jnp.asarray(q)), st.norm.ppf(q.astype(np.float64)),
                               rtol=1e-5)
    np.testing.assert_allclose(norm.isf(jnp.asarray(q)), st.norm.isf(q.astype(np.float64)),
                               rtol=1e-5)
    np.testing.assert_array_equal(np.isnan(norm.ppf(jnp.array([-0.1, 1.1, np.nan]))), True)


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), dtypes.bfloat16], ids=str)
@pytest.mark.parametrize("name", ["pdf", "logpdf"])
def test_low_precision(name, dtype):
    arg = (_x() / 3).astype(dtype)
    got = getattr(norm, name)(jnp.asarray(arg))
    assert got.dtype == dtype
    want = getattr(st.norm, name)(arg.astype(np.float64))
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=5e-2, atol=5e-3)


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), dtypes.bfloat16], ids=str)
def test_low_precision_distribution_functions_rejected(dtype):
    # as JAX: ndtr, ndtri and log_ndtr accept float32 and float64 only
    for name in ("cdf", "sf", "logcdf", "logsf", "ppf", "isf"):
        with pytest.raises(TypeError, match="is not supported"):
            getattr(norm, name)(jnp.asarray(_q().astype(dtype)))


@pytest.mark.parametrize("name", X_FUNCS + Q_FUNCS)
def test_jit_matches_eager(name):
    arg = jnp.asarray(_q() if name in Q_FUNCS else _x())
    fn = lambda a: getattr(norm, name)(a, 0.5, 2.0)  # noqa: E731
    np.testing.assert_allclose(xjax.jit(fn)(arg), fn(arg), rtol=2e-6, atol=1e-30)


@needs_jax
@pytest.mark.parametrize("name", X_FUNCS + Q_FUNCS)
def test_against_jax(name):
    arg = _q(seed=1) if name in Q_FUNCS else _x(seed=1) / 2
    got = getattr(norm, name)(jnp.asarray(arg), 0.5, 1.5)
    want = getattr(jax.scipy.stats.norm, name)(jjnp.asarray(arg), 0.5, 1.5)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-6)
    for args in ((1,), (1.0, 2, 3), (np.array([1, 2], np.int32),)):
        if name in Q_FUNCS:
            args = (0.25,) + args[1:]
        g, w = getattr(norm, name)(*args), getattr(jax.scipy.stats.norm, name)(*args)
        assert (g.dtype, g.weak_type) == (w.dtype, w.weak_type), args


@needs_jax
@pytest.mark.parametrize("name", X_FUNCS + Q_FUNCS)
def test_grads_against_jax(name):
    arg = _q(shape=(6,), seed=2) if name in Q_FUNCS else _x(shape=(6,), seed=2) / 2

    def loss(module, numpy_mod):
        return lambda a, loc, scale: numpy_mod.sum(getattr(module, name)(a, loc, scale))
    got = xjax.grad(loss(norm, jnp), argnums=(0, 1, 2))(jnp.asarray(arg), 0.5, 1.5)
    want = jax.grad(loss(jax.scipy.stats.norm, jjnp), argnums=(0, 1, 2))(
        jjnp.asarray(arg), 0.5, 1.5)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=1e-6)
