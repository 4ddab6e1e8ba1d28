"""``xjax.scipy.stats.gaussian_kde``, ``mode``, ``rankdata`` and ``sem`` against
``scipy.stats`` (float32 and float64), as pytrees / under transformations, JAX's errors, and
against JAX 0.10.2 itself where it is installed."""

import dataclasses

import numpy as np
import pytest
import scipy.stats as st

import xjax
import xjax.numpy as jnp
from xjax._src.core import dtypes
from xjax._src.scipy import stats
from xjax.scipy.stats import gaussian_kde

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

TOLERANCES = {np.float32: dict(rtol=2e-5, atol=1e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def dtype(request):
    """float32 as is; float64 with x64 switched on for the test and restored after it."""
    if request.param is np.float32:
        yield np.float32
        return
    with xjax.config.override(jax_enable_x64=True):
        yield np.float64


def _ties(shape, seed=0, dtype=np.float32):
    """Small integers (many ties) as ``dtype``."""
    return np.random.default_rng(seed).integers(0, 4, size=shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# mode


@pytest.mark.parametrize("kwargs", [{}, dict(axis=1), dict(axis=-1, keepdims=True),
                                    dict(axis=None), dict(axis=None, keepdims=True)],
                         ids=str)
def test_mode_against_scipy(kwargs):
    for a in (_ties((5, 7)), _ties((4, 6), seed=1, dtype=np.int32)):
        a = a.copy()
        if a.dtype.kind == "f":
            a[1, :3] = np.nan  # NaNs are one value, counted together
        got = stats.mode(jnp.asarray(a), **kwargs)
        want = st.mode(a, **kwargs)
        assert isinstance(got, stats._core.ModeResult)
        assert got.mode.dtype == a.dtype and got.mode.shape == np.shape(want.mode)
        np.testing.assert_array_equal(got.mode, want.mode)
        np.testing.assert_array_equal(got.count, want.count)


def test_mode_edges_and_transformations():
    got = stats.mode(jnp.zeros((0, 3)))  # an empty axis: NaN with a zero count, as in JAX
    assert np.isnan(got.mode).all() and (np.asarray(got.count) == 0).all()
    assert got.mode.dtype == dtypes.default_float_dtype() == got.count.dtype
    assert stats.mode(jnp.zeros((0, 3)), axis=1).mode.shape == (0,)
    assert int(stats.mode(jnp.array(5)).mode) == 5  # a scalar is one value
    batch = jnp.asarray(_ties((3, 8)))
    per_row = xjax.vmap(stats.mode)(batch)
    np.testing.assert_array_equal(per_row.mode, stats.mode(batch, axis=1).mode)
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        stats.mode(batch, nan_policy="drop")
    for policy in ("omit", "raise"):
        with pytest.raises(NotImplementedError):
            stats.mode(batch, nan_policy=policy)
    with pytest.raises(TypeError, match="mode requires ndarray or scalar"):
        stats.mode([1, 2, 2])
    with pytest.raises(ValueError, match="out of bounds"):
        stats.mode(batch, axis=2)


# ---------------------------------------------------------------------------------------------
# rankdata


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_against_scipy(method, dtype):
    a = _ties((4, 6), dtype=dtype)
    for axis in (None, 0, 1):
        got = stats.rankdata(jnp.asarray(a), method, axis=axis)
        assert got.dtype == dtype  # the default float dtype
        np.testing.assert_array_equal(got, st.rankdata(a, method, axis=axis))
    ints = _ties((9,), seed=2, dtype=np.int32)
    np.testing.assert_array_equal(stats.rankdata(jnp.asarray(ints), method),
                                  st.rankdata(ints, method))


def test_rankdata_nans_and_errors():
    a = _ties((3, 5))
    a[1, 2] = np.nan
    np.testing.assert_array_equal(stats.rankdata(a, axis=1), st.rankdata(a, axis=1))
    assert np.isnan(stats.rankdata(a)).all()  # flattened: one NaN poisons every rank
    np.testing.assert_array_equal(stats.rankdata(jnp.array(3.)), [1.])
    with pytest.raises(ValueError, match="unknown method 'first'"):
        stats.rankdata(a, "first")
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        stats.rankdata(a, nan_policy="skip")
    with pytest.raises(NotImplementedError):
        stats.rankdata(a, nan_policy="omit")


# ---------------------------------------------------------------------------------------------
# sem


@pytest.mark.parametrize("kwargs", [{}, dict(axis=1, ddof=0), dict(axis=None),
                                    dict(axis=-1, keepdims=True), dict(ddof=2)], ids=str)
def test_sem_against_scipy(kwargs, dtype):
    a = np.random.default_rng(3).normal(size=(5, 4)).astype(dtype)
    got = stats.sem(jnp.asarray(a), **kwargs)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, st.sem(a.astype(np.float64), **kwargs), **TOLERANCES[dtype])


def test_sem_nan_policies_and_grad():
    a = np.random.default_rng(4).normal(size=(4, 5)).astype(np.float32)
    a[0, 1] = a[2, 3] = np.nan
    for axis in (0, 1, None):
        np.testing.assert_allclose(stats.sem(a, axis=axis, nan_policy="omit"),
                                   st.sem(a.astype(np.float64), axis=axis, nan_policy="omit"),
                                   rtol=2e-5)
    assert np.isnan(stats.sem(a, axis=None))  # 'propagate'
    assert stats.sem(jnp.array([1, 2, 4])).dtype == dtypes.default_float_dtype()
    with pytest.raises(ValueError, match="raise is not supported"):
        stats.sem(a, nan_policy="raise")
    x = np.array([0.3, -1.2, 2.5, 0.9], np.float32)
    grad = np.asarray(xjax.grad(lambda v: stats.sem(v))(jnp.asarray(x)))
    h = 1e-3
    for i in range(len(x)):
        step = np.eye(len(x), dtype=np.float64)[i] * h
        fd = (st.sem(x + step) - st.sem(x - step)) / (2 * h)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# gaussian_kde


def _data(d, n=25, seed=5):
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(d, n)) * np.arange(1, d + 1)[:, None] + 0.5
    return data[0] if d == 1 else data


BANDWIDTHS = [None, "silverman", 0.4, lambda kde: 0.8 * kde.neff ** -0.2]


@pytest.mark.parametrize("d", [1, 2])
def test_kde_against_scipy(d, dtype):
    data = _data(d).astype(dtype)
    weights = np.random.default_rng(6).uniform(0.2, 1., size=25).astype(dtype)
    points = np.random.default_rng(7).normal(size=(d, 6)).astype(dtype) * 2
    tol = TOLERANCES[dtype]
    for bw in BANDWIDTHS:
        for w in (None, weights):
            got = gaussian_kde(jnp.asarray(data), bw_method=bw, weights=w)
            want = st.gaussian_kde(data.astype(np.float64), bw_method=bw, weights=w)
            assert (got.d, got.n) == (want.d, want.n) and got.dataset.dtype == dtype
            for attr in ("neff", "weights", "covariance", "inv_cov"):
                np.testing.assert_allclose(getattr(got, attr), getattr(want, attr), **tol,
                                           err_msg=attr)
            for method in ("evaluate", "pdf", "__call__", "logpdf"):
                value = getattr(got, method)(jnp.asarray(points))
                assert value.dtype == dtype and value.shape == (6,)
                np.testing.assert_allclose(value, getattr(want, method)(points), **tol,
                                           err_msg=method)
    # far from the data the density underflows but its log does not
    far = np.full((d, 1), 60., dtype)
    np.testing.assert_allclose(got.logpdf(far), want.logpdf(far), rtol=1e-4)


def test_kde_integrals(dtype):
    tol = TOLERANCES[dtype]
    for d in (1, 2):
        data = _data(d).astype(dtype)
        got, want = gaussian_kde(jnp.asarray(data)), st.gaussian_kde(data.astype(np.float64))
        mean, cov = np.full(d, 0.3, dtype), np.eye(d, dtype=dtype) * 1.5
        np.testing.assert_allclose(got.integrate_gaussian(mean, cov),
                                   want.integrate_gaussian(mean, cov), **tol)
        other = _data(d, n=9, seed=8).astype(dtype)
        for first, second in ((got, gaussian_kde(other)), (gaussian_kde(other), got)):
            np.testing.assert_allclose(first.integrate_kde(second),
                                       want.integrate_kde(st.gaussian_kde(other)), **tol)
    weights = np.linspace(1, 2, 25).astype(dtype)
    got = gaussian_kde(jnp.asarray(data[0]), weights=weights)
    want = st.gaussian_kde(data[0].astype(np.float64), weights=weights)
    for low, high in ((-0.5, 1.2), (-np.inf, 0.), (-np.inf, np.inf)):
        np.testing.assert_allclose(got.integrate_box_1d(low, high),
                                   want.integrate_box_1d(low, high), **tol)


def test_kde_resample():
    data = _data(2)
    kde = gaussian_kde(jnp.asarray(data, np.float32))
    samples = np.asarray(kde.resample(xjax.random.key(0), (20000,)), np.float64)
    assert samples.shape == (2, 20000) and kde.resample(xjax.random.key(1)).shape == (2,)
    assert kde.resample(xjax.random.key(1), (3, 4)).shape == (2, 3, 4)
    # a draw is a data point plus kernel noise: mean of the data, covariance of data + kernel
    np.testing.assert_allclose(samples.mean(1), data.mean(1), atol=0.05)
    np.testing.assert_allclose(np.cov(samples), np.cov(data) + np.asarray(kde.covariance),
                               rtol=0.06, atol=0.05)
    # weights pick the points: with a narrow kernel each draw stays by the point it came from,
    # and the points are drawn as often as their weights say
    weights = np.array([0.1, 0.2, 0.3, 0.4])
    spread = gaussian_kde(jnp.array([0., 10., 20., 30.]), weights=weights, bw_method=0.01)
    draws = np.asarray(spread.resample(xjax.random.key(2), (4000,)))[0]
    nearest = np.rint(draws / 10).astype(int)
    assert np.abs(draws - 10 * nearest).max() < 1.
    np.testing.assert_allclose(np.bincount(nearest, minlength=4) / 4000, weights, atol=0.03)


def test_kde_pytree_and_transformations():
    data = jnp.asarray(_data(2), np.float32)
    kde = gaussian_kde(data)
    leaves, treedef = xjax.tree_util.tree_flatten(kde)
    assert len(leaves) == 5
    rebuilt = xjax.tree_util.tree_unflatten(treedef, leaves)
    points = jnp.asarray(np.random.default_rng(9).normal(size=(2, 4)), np.float32)
    np.testing.assert_allclose(rebuilt(points), kde(points), rtol=1e-6)
    np.testing.assert_allclose(xjax.jit(lambda k, p: k.logpdf(p))(kde, points),
                               kde.logpdf(points), rtol=1e-5)
    batched = xjax.vmap(lambda d: gaussian_kde(d).evaluate(points[0]))(data)
    for i in range(2):
        np.testing.assert_allclose(batched[i], gaussian_kde(data[i]).evaluate(points[0]),
                                   rtol=1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        kde.neff = 1.
    # the log density's derivative in the data, against central differences (float64)
    with xjax.config.override(jax_enable_x64=True):
        data64 = np.asarray(_data(1, n=6))
        x = jnp.array([0.1, 1.3])

        def loss(d):
            return jnp.sum(gaussian_kde(d).logpdf(x))
        grad = np.asarray(xjax.grad(loss)(jnp.asarray(data64)))
        for i in range(6):
            step = np.eye(6)[i] * 1e-5
            fd = (float(loss(data64 + step)) - float(loss(data64 - step))) / 2e-5
            np.testing.assert_allclose(grad[i], fd, rtol=1e-5, atol=1e-8)


def test_kde_errors():
    data = _data(2)
    kde = gaussian_kde(data)
    kde1 = gaussian_kde(data[0])
    cases = [
        (NotImplementedError, "complex data", lambda: gaussian_kde(data + 1j)),
        (ValueError, "multiple elements", lambda: gaussian_kde(np.ones(1))),
        (ValueError, "`bw_method` should be", lambda: gaussian_kde(data, bw_method="wide")),
        (ValueError, "of length n", lambda: gaussian_kde(data, weights=np.ones(3))),
        (ValueError, "one-dimensional", lambda: gaussian_kde(data, weights=np.ones((25, 2)))),
        (TypeError, "requires ndarray", lambda: gaussian_kde(data.tolist())),
        (ValueError, "points have dimension 3, dataset has dimension 2",
         lambda: kde(np.ones((3, 4)))),
        (NotImplementedError, "complex coordinates", lambda: kde(np.ones((2, 4)) + 1j)),
        (ValueError, "mean does not have dimension 2",
         lambda: kde.integrate_gaussian(np.ones(3), np.eye(2))),
        (ValueError, "covariance does not have dimension 2",
         lambda: kde.integrate_gaussian(np.ones(2), np.eye(3))),
        (ValueError, "not the same dimensionality", lambda: kde.integrate_kde(kde1)),
        (ValueError, "only handles 1D pdfs", lambda: kde.integrate_box_1d(0., 1.)),
        (ValueError, "must be scalars", lambda: kde1.integrate_box_1d(np.zeros(2), 1.)),
        (NotImplementedError, "integrate_box_1d", lambda: kde.integrate_box([0, 0], [1, 1])),
        (NotImplementedError, "bandwidth", lambda: kde.set_bandwidth("scott")),
    ]
    for error, message, call in cases:
        with pytest.raises(error, match=message):
            call()
    np.testing.assert_allclose(kde(data[:, 0]), kde(data[:, :1]), rtol=1e-6)  # one point


# ---------------------------------------------------------------------------------------------
# JAX 0.10.2 as a differential reference (skipped where JAX is not installed)


def test_against_jax():
    jax = pytest.importorskip("jax")
    js = jax.scipy.stats
    a = _ties((5, 6))
    a[2, 1] = np.nan
    for kwargs in ({}, dict(axis=1, keepdims=True), dict(axis=None)):
        got, want = stats.mode(a, **kwargs), js.mode(a, **kwargs)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    for method in ("average", "dense"):
        np.testing.assert_array_equal(stats.rankdata(a, method, axis=0),
                                      js.rankdata(a, method, axis=0))
    np.testing.assert_allclose(stats.sem(a, axis=1, nan_policy="omit"),
                               js.sem(a, axis=1, nan_policy="omit"), rtol=1e-6)
    data = _data(2).astype(np.float32)
    weights = np.linspace(1, 2, 25).astype(np.float32)
    got, want = gaussian_kde(data, weights=weights), js.gaussian_kde(data, weights=weights)
    # same key, same draws: the split, choice and multivariate_normal streams agree
    np.testing.assert_allclose(got.resample(xjax.random.key(3), (7,)),
                               want.resample(jax.random.key(3), (7,)), rtol=1e-5, atol=1e-6)
    points = data[:, :4] + 0.1
    np.testing.assert_allclose(got.logpdf(points), want.logpdf(points), rtol=1e-5)
