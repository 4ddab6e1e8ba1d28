"""The distribution modules of ``xjax.scipy.stats`` (all but ``norm``, which has its own file)
against ``scipy.stats``: every public function on grids inside and outside each support, in
float32 and float64, with broadcast parameters, JAX's NaN conventions for invalid
parameters, under ``jit``, and derivatives against finite differences; a few checks against
JAX 0.10.2 itself where it is installed."""

import warnings

import numpy as np
import pytest
import scipy.stats as st

import xjax
import xjax.numpy as jnp
from xjax.scipy import stats

# the eager (NumPy) evaluation warns about the logs of 0 that the distributions use
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# The public functions of each jax.scipy.stats module in JAX 0.10.2.
JAX_FUNCTIONS = {
    "bernoulli": ["cdf", "logpmf", "pmf", "ppf"],
    "beta": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"],
    "betabinom": ["logpmf", "pmf"],
    "binom": ["logpmf", "pmf"],
    "cauchy": ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"],
    "chi2": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"],
    "dirichlet": ["logpdf", "pdf"],
    "expon": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"],
    "gamma": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"],
    "gennorm": ["cdf", "logpdf", "pdf"],
    "geom": ["logpmf", "pmf"],
    "gumbel_l": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"],
    "gumbel_r": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"],
    "laplace": ["cdf", "logpdf", "pdf"],
    "logistic": ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"],
    "multinomial": ["logpmf", "pmf"],
    "multivariate_normal": ["logpdf", "pdf"],
    "nbinom": ["logpmf", "pmf"],
    "norm": ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"],
    "pareto": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"],
    "poisson": ["cdf", "entropy", "logpmf", "pmf"],
    "t": ["logpdf", "pdf"],
    "truncnorm": ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"],
    "uniform": ["cdf", "logpdf", "pdf", "ppf"],
    "vonmises": ["logpdf", "pdf"],
    "wrapcauchy": ["logpdf", "pdf"],
}

QUANTILE_FUNCS = ("ppf", "isf")
Q_GRID = [-0.1, 0., 0.02, 0.3, 0.5, 0.75, 0.99, 1., 1.1]
Q_OPEN = [0.02, 0.3, 0.5, 0.75, 0.99]  # where JAX's closed form departs from SciPy at 0 and 1

# name: x grid (points in and out of the support), valid parameter sets (the first two of
# equal length, to be stacked for the broadcasting check), invalid sets with the functions
# that give NaN for them (as JAX and SciPy both do), and optionally a q grid.
SPECS = {
    "beta": dict(x=[-0.5, 0., 0.05, 0.3, 0.5, 0.8, 0.99, 1., 1.5, 2.],
                 params=[(2., 3., 0., 1.), (0.7, 1.6, -0.5, 2.), (2., 3.)],
                 invalid=[((-1., 2.), ("logpdf", "pdf")), ((2., 0.), ("logpdf", "pdf")),
                          ((2., 2., 0., -1.), ("logpdf", "pdf"))]),
    "cauchy": dict(x=[-30., -2., -0.5, 0., 0.3, 1., 4., 50.],
                   params=[(0., 1.), (0.5, 2.), ()], q=Q_OPEN),
    "chi2": dict(x=[-1., 0.05, 0.5, 1., 2.5, 6., 20.],
                 params=[(3., 0., 1.), (2.5, -0.5, 1.5), (1.,)]),
    "expon": dict(x=[-1., 0., 0.1, 1., 3., 10.], params=[(0., 1.), (0.5, 2.), ()]),
    "gamma": dict(x=[-1., 0.05, 0.5, 1., 2.5, 6., 20.],
                  params=[(2., 0., 1.), (0.5, -0.5, 1.5), (1.,)]),
    "gennorm": dict(x=[-3., -1., -0.2, 0., 0.4, 1.5, 3.], params=[(1.,), (2.5,), (0.7,)]),
    "gumbel_l": dict(x=[-5., -1., 0., 0.5, 2., 4.], params=[(0., 1.), (0.5, 2.)], q=Q_OPEN,
                     invalid=[((0., -1.), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"))]),
    "gumbel_r": dict(x=[-4., -1., 0., 0.5, 2., 6.], params=[(0., 1.), (0.5, 2.)], q=Q_OPEN,
                     invalid=[((0., 0.), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"))]),
    "laplace": dict(x=[-4., -1., 0., 0.3, 1., 5.], params=[(0., 1.), (0.5, 2.)]),
    "logistic": dict(x=[-30., -2., 0., 0.5, 3., 40.], params=[(0., 1.), (0.5, 2.), ()]),
    "pareto": dict(x=[0.5, 1., 1.3, 2., 5., 50.], params=[(2., 0., 1.), (1.5, 0.5, 0.7)]),
    "t": dict(x=[-20., -2., 0., 0.4, 3., 50.], params=[(3., 0., 1.), (1.5, 0.5, 2.), (30.,)]),
    "truncnorm": dict(x=[-3., -1., -0.5, 0., 0.7, 1.5, 2., 4.],
                      params=[(-1., 2., 0., 1.), (0.5, 3., 0.2, 1.5), (-10., -5., 15., 2.),
                              (4., 9., -10., 2.)],
                      invalid=[((1., -1.), JAX_FUNCTIONS["truncnorm"]),
                               ((1., 1.), JAX_FUNCTIONS["truncnorm"])]),
    "uniform": dict(x=[-1., 0., 0.3, 1., 1.4, 3.], params=[(0., 1.), (0.5, 2.), ()]),
    "vonmises": dict(x=[-4., -1., 0., 0.5, 2., 3.1, 7.], params=[(1.,), (30.,)],
                     invalid=[((-1.,), ("logpdf", "pdf"))]),
    "wrapcauchy": dict(x=[-0.5, 0., 0.5, 2., 3.14, 5., 6.2, 7.], params=[(0.5,), (0.05,)],
                       invalid=[((1.5,), ("logpdf", "pdf")), ((0.,), ("logpdf", "pdf"))]),
    "bernoulli": dict(x=[-1., 0., 1., 2.], params=[(0.3,), (0.8,)],
                      q=[-0.1, 0.1, 0.3, 0.7, 0.9, 1., 1.1],
                      invalid=[((1.5,), ("cdf", "ppf")), ((-0.2,), ("cdf", "ppf"))]),
    "betabinom": dict(x=[-1., 0., 1., 2., 4., 5., 7.],
                      params=[(5., 2., 3., 0.), (4., 0.5, 0.5, 1.), (0., 1., 1.)],
                      invalid=[((-1., 2., 2.), ("logpmf", "pmf")),
                               ((5., -1., 2.), ("logpmf", "pmf")),
                               ((5., 2., 0.), ("logpmf", "pmf"))]),
    "binom": dict(x=[-1., 0., 1., 3., 5., 6.],
                  params=[(5., 0.3, 0.), (4., 0.6, 1.), (5., 0.), (5., 1.), (0., 0.3)]),
    "geom": dict(x=[-1., 0., 1., 2., 5.], params=[(0.3, 0.), (0.6, 1.)]),
    "nbinom": dict(x=[-1., 0., 1., 3., 8.], params=[(3., 0.4, 0.), (2.5, 0.7, 1.)]),
    "poisson": dict(x=[-1., 0., 1., 2.5, 3., 10.], params=[(2.5, 0.), (0.7, 1.), (0.,)]),
}

TOLERANCES = {np.float32: dict(rtol=2e-4, atol=2e-6), np.float64: dict(rtol=1e-9, atol=1e-12)}


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def dtype(request):
    """float32 as is; float64 with x64 switched on for the test and restored after it."""
    if request.param is np.float32:
        yield np.float32
        return
    with xjax.config.override(jax_enable_x64=True):
        yield np.float64


def _functions(name):
    return [f for f in JAX_FUNCTIONS[name] if f != "entropy"]


def _scipy(name, fn, arg, params):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(getattr(st, name), fn)(arg, *params)


def _grid(name, fn):
    spec = SPECS[name]
    return spec.get("q", Q_GRID) if fn in QUANTILE_FUNCS else spec["x"]


def _check(name, fn, arg, params, dtype):
    arg = np.asarray(arg, dtype)
    params = tuple(np.asarray(p, dtype) if np.ndim(p) else p for p in params)
    got = getattr(getattr(stats, name), fn)(jnp.asarray(arg), *params)
    want = _scipy(name, fn, arg.astype(np.float64), params)
    assert got.dtype == dtype and got.shape == np.shape(want), (fn, params)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, **TOLERANCES[dtype],
                               err_msg=f"{name}.{fn}{params}")


def test_public_functions_are_jaxs():
    for name, functions in JAX_FUNCTIONS.items():
        module = getattr(stats, name)
        assert sorted(module.__all__) == functions, name
        assert all(callable(getattr(module, f)) for f in functions)
    for name in ("gaussian_kde", "mode", "rankdata", "sem"):
        assert callable(getattr(stats, name))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_against_scipy(name, dtype):
    spec = SPECS[name]
    for fn in _functions(name):
        for params in spec["params"]:
            if name == "bernoulli" and fn in ("cdf", "ppf"):
                params = params[:1]  # no loc there
            _check(name, fn, _grid(name, fn), params, dtype)
        # broadcasting: the first two parameter sets stacked along a new leading axis
        stacked = tuple(np.array([[a], [b]]) for a, b in zip(*spec["params"][:2], strict=True))
        _check(name, fn, _grid(name, fn), stacked, dtype)


@pytest.mark.parametrize("name", sorted(n for n in SPECS if "invalid" in SPECS[n]))
def test_invalid_parameters_give_nan(name):
    for params, functions in SPECS[name]["invalid"]:
        for fn in functions:
            got = getattr(getattr(stats, name), fn)(jnp.asarray(_grid(name, fn), np.float32),
                                                     *params)
            assert np.isnan(np.asarray(got)).all(), (fn, params)
            assert np.isnan(_scipy(name, fn, np.asarray(_grid(name, fn)), params)).all()


def test_bernoulli_loc_and_jax_edge_conventions():
    k = np.array([0., 1., 2., 3.])
    for fn in ("logpmf", "pmf"):
        np.testing.assert_allclose(getattr(stats.bernoulli, fn)(jnp.asarray(k), 0.3, 1.),
                                   getattr(st.bernoulli, fn)(k, 0.3, 1.), rtol=1e-6)
    # JAX's ppf is 0 at q = 0 (SciPy returns -1 there); cdf is 1 - p between 0 and 1
    assert float(stats.bernoulli.ppf(0., 0.3)) == 0.
    np.testing.assert_allclose(stats.bernoulli.cdf(0.5, 0.3), st.bernoulli.cdf(0.5, 0.3))


def test_nan_arguments_follow_jax():
    x = jnp.array([np.nan], np.float32)
    assert float(stats.wrapcauchy.logpdf(x, 0.5)[0]) == -np.inf  # off the support
    assert float(stats.uniform.cdf(x)[0]) == 0.  # jnp.select's default
    for fn in (stats.bernoulli.cdf, stats.bernoulli.ppf):
        assert np.isnan(fn(x, 0.5)[0])
    assert np.isnan(stats.vonmises.logpdf(1., 0.))  # kappa = 0: NaN in JAX (SciPy: uniform)
    for fn in (stats.expon.ppf, stats.pareto.ppf, stats.uniform.ppf):
        assert np.isnan(fn(x, *([2.] if fn is stats.pareto.ppf else []))[0])


def test_tails_stay_finite():
    far = jnp.array([-60., 60.], np.float32)
    np.testing.assert_allclose(stats.logistic.logpdf(far), st.logistic.logpdf([-60., 60.]),
                               rtol=1e-6)
    np.testing.assert_allclose(stats.gumbel_r.logsf(jnp.array([30.], np.float32)),
                               st.gumbel_r.logsf(30.), rtol=1e-5)
    np.testing.assert_allclose(stats.vonmises.logpdf(jnp.array([1.], np.float32), 500.),
                               st.vonmises.logpdf(1., 500.), rtol=1e-5)
    # a truncation interval far in a tail
    x = np.array([-40.5, -40.2])
    np.testing.assert_allclose(stats.truncnorm.logpdf(jnp.asarray(x, np.float32), -41., -40.),
                               st.truncnorm.logpdf(x, -41., -40.), rtol=1e-4)


def test_python_scalars_give_weak_results():
    # as in JAX: no array argument, no committed dtype (the clipped point of the cdfs too)
    for module, params in ((stats.beta, (2., 3.)), (stats.gamma, (2.,)), (stats.chi2, (3.,))):
        for fn in JAX_FUNCTIONS[module.__name__.rsplit(".", 1)[1]]:
            result = getattr(module, fn)(0.5, *params)
            assert result.weak_type and result.dtype == np.float32, (module.__name__, fn)
    assert not stats.beta.cdf(np.float32(0.5), 2., 3.).weak_type


def test_poisson_entropy(dtype):
    # (SciPy's own sum loses digits from about 1e4 on)
    mu = np.array([0., 0.3, 2., 9.5, 10., 40., 99.5, 100., 150., 1e3], dtype)
    got = stats.poisson.entropy(jnp.asarray(mu))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, st.poisson.entropy(mu.astype(np.float64)),
                               rtol=3e-6 if dtype is np.float32 else 1e-8, atol=1e-6)
    assert stats.poisson.entropy(2., jnp.zeros((2, 3))).shape == (2, 3)  # loc broadcasts
    assert np.isnan(stats.poisson.entropy(jnp.array([-1., np.nan]))).all()


# ---------------------------------------------------------------------------------------------
# the multivariate distributions


def test_multivariate_normal(dtype):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    cov = (a @ a.T + np.eye(3)).astype(dtype)
    mean = rng.normal(size=3).astype(dtype)
    x = rng.normal(size=(4, 3)).astype(dtype)
    tol = TOLERANCES[dtype]
    for fn in ("logpdf", "pdf"):
        got = getattr(stats.multivariate_normal, fn)(jnp.asarray(x), mean, cov)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, getattr(st.multivariate_normal, fn)(x, mean, cov), **tol)
        # scalar (isotropic) covariance, and a univariate normal with a scalar mean
        np.testing.assert_allclose(getattr(stats.multivariate_normal, fn)(x, mean, dtype(2.)),
                                   getattr(st.multivariate_normal, fn)(x, mean, 2.), **tol)
        np.testing.assert_allclose(getattr(stats.multivariate_normal, fn)(x[:, 0], 0.5, 2.),
                                   st.norm.logpdf(x[:, 0], 0.5, np.sqrt(2.)) if fn == "logpdf"
                                   else st.norm.pdf(x[:, 0], 0.5, np.sqrt(2.)), **tol)
    # a batch of covariances broadcast against the points
    batch = np.stack([cov, 2 * cov])[:, None]
    got = stats.multivariate_normal.logpdf(x, mean, batch)
    assert got.shape == (2, 4)
    np.testing.assert_allclose(got[1], st.multivariate_normal.logpdf(x, mean, 2 * cov), **tol)
    with pytest.raises(ValueError, match="incompatible shapes"):
        stats.multivariate_normal.logpdf(x, mean, cov[:2, :2])
    with pytest.raises(NotImplementedError, match="allow_singular"):
        stats.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)


def test_dirichlet(dtype):
    alpha = np.array([0.5, 2., 3.], dtype)
    x = np.random.default_rng(1).dirichlet(alpha, size=5).T.astype(dtype)
    x[-1] = 1 - x[:-1].sum(0)  # on the simplex in the test's precision
    tol = dict(rtol=2e-4, atol=1e-5) if dtype is np.float32 else TOLERANCES[dtype]
    x64 = x.astype(np.float64)
    want = st.dirichlet.logpdf(x64 / x64.sum(0), alpha.astype(np.float64))  # SciPy is strict
    got = stats.dirichlet.logpdf(jnp.asarray(x), alpha)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(stats.dirichlet.pdf(x[:-1], alpha), np.exp(want), **tol)  # K - 1
    np.testing.assert_allclose(stats.dirichlet.logpdf(x[:, 0], alpha), want[0], **tol)
    off = np.array([[0.5, 0.6], [0.6, 0.], [-0.1, 0.4]], dtype)  # bad sum, a zero, a negative
    assert (np.asarray(stats.dirichlet.logpdf(off, alpha)) == -np.inf).all()
    with pytest.raises(ValueError, match="one-dimensional"):
        stats.dirichlet.logpdf(x, alpha[None])
    with pytest.raises(ValueError, match="one entry fewer"):
        stats.dirichlet.logpdf(x[:1], alpha)


def test_multinomial(dtype):
    p = np.array([0.2, 0.3, 0.5], dtype)
    counts = np.array([[1, 2, 3], [0, 0, 6], [2, 2, 2], [1, 1, 1]])
    got = stats.multinomial.logpmf(jnp.asarray(counts), 6, p)
    assert got.dtype == dtype
    p64 = p.astype(np.float64)
    want = st.multinomial.logpmf(counts, 6, p64 / p64.sum())  # SciPy wants an exact sum
    np.testing.assert_allclose(got, want, **TOLERANCES[dtype])  # the last row: -inf
    np.testing.assert_allclose(stats.multinomial.pmf(counts[0], 6, p), np.exp(want[0]),
                               **TOLERANCES[dtype])
    with pytest.raises(ValueError, match="integer type"):
        stats.multinomial.logpmf(counts.astype(np.float32), 6, p)


# ---------------------------------------------------------------------------------------------
# transformations


def _all_functions(name):
    """One function returning every function of distribution ``name`` on the spec's grids, so
    that a single compilation covers the whole module."""
    module, params = getattr(stats, name), SPECS[name]["params"][0]

    def run(x, q):
        return [getattr(module, fn)(q if fn in QUANTILE_FUNCS else x,
                                    *(params[:1] if name == "bernoulli" and fn in ("cdf", "ppf")
                                      else params))
                for fn in _functions(name)]
    return run


@pytest.mark.parametrize("name", sorted(SPECS))
def test_jit_matches_eager(name):
    x = jnp.asarray(SPECS[name]["x"], np.float32)
    q = jnp.asarray(SPECS[name].get("q", Q_GRID), np.float32)
    run = _all_functions(name)
    for got, want in zip(xjax.jit(run)(x, q), run(x, q), strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


# points and parameters for the derivative checks: inside the support, away from kinks
GRAD_CASES = {
    "beta": ([0.2, 0.55, 0.9], (2., 3., 0., 1.)),
    "cauchy": ([-1.5, 0.3, 2.], (0.5, 2.)),
    "chi2": ([0.5, 2., 5.], (3., 0., 1.5)),
    "expon": ([0.7, 1.5, 4.], (0.5, 2.)),
    "gamma": ([0.4, 1.5, 4.], (2.5, 0.1, 1.2)),
    "gennorm": ([-1.2, -0.3, 0.8], (1.7,)),
    "gumbel_l": ([-1.5, 0.2, 1.], (0.5, 2.)),
    "gumbel_r": ([-1., 0.4, 2.], (0.5, 2.)),
    "laplace": ([-2., -0.7, 1.5], (0.5, 2.)),
    "logistic": ([-2., 0.3, 1.5], (0.5, 2.)),
    "pareto": ([1.5, 2., 5.], (1.5, 0.5, 0.7)),
    "t": ([-2., 0.3, 1.5], (3.5, 0.5, 2.)),
    "truncnorm": ([-0.5, 0.4, 1.5], (-1., 2., 0.2, 1.1)),
    "uniform": ([0.7, 1.2, 2.], (0.5, 2.)),
    "vonmises": ([-1., 0.3, 2.], (1.5,)),
    "wrapcauchy": ([0.5, 2., 4.], (0.4,)),
    "bernoulli": ([0., 1., 1.], (0.3,)),
    "betabinom": ([0., 2., 4.], (5., 2., 3.)),
    "binom": ([0., 2., 4.], (5., 0.3)),
    "geom": ([1., 2., 4.], (0.3,)),
    "nbinom": ([0., 2., 4.], (3., 0.4)),
    "poisson": ([0., 2., 4.], (2.5,)),
}
GRAD_Q = [0.1, 0.45, 0.8]
DISCRETE = ("bernoulli", "betabinom", "binom", "geom", "nbinom", "poisson")
# as JAX: no derivative of the regularized incomplete beta function in its shape parameters
NO_SHAPE_GRAD = {("beta", fn) for fn in ("cdf", "logcdf", "sf", "logsf")}


def _finite_difference(fn, args, i, h=1e-4):
    def at(shift):
        moved = list(args)
        moved[i] = moved[i] + shift
        return float(np.sum(np.asarray(fn(*moved))))
    return (at(h) - at(-h)) / (2 * h)


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_against_finite_differences(name):
    points, params = GRAD_CASES[name]
    module = getattr(stats, name)
    with xjax.config.override(jax_enable_x64=True):
        for fn_name in _functions(name):
            fn = getattr(module, fn_name)
            fn_params = params[:1] if name == "bernoulli" and fn_name in ("cdf", "ppf") else params
            arg = GRAD_Q if fn_name in QUANTILE_FUNCS else points
            args = [jnp.asarray(arg, np.float64)] + [jnp.float64(p) for p in fn_params]
            # the (integer) points of a discrete distribution are not differentiated
            first = 1 if name in DISCRETE and fn_name not in QUANTILE_FUNCS else 0
            last = 1 if (name, fn_name) in NO_SHAPE_GRAD else len(args)
            argnums = tuple(range(first, last))
            grads = xjax.grad(lambda *a: jnp.sum(fn(*a)), argnums=argnums)(*args)
            for i, g in zip(argnums, grads, strict=True):
                want = _finite_difference(fn, args, i)
                np.testing.assert_allclose(np.sum(np.asarray(g)), want, rtol=1e-5, atol=1e-7,
                                           err_msg=f"{name}.{fn_name} d/darg{i}")
    if NO_SHAPE_GRAD & {(name, f) for f in _functions(name)}:
        with pytest.raises(ValueError, match="Betainc gradient"):
            xjax.grad(lambda a: jnp.sum(module.cdf(0.5, a, 2.)))(2.)


# ---------------------------------------------------------------------------------------------
# JAX 0.10.2 as a differential reference (skipped where JAX is not installed)

JAX_CHECKED = ("betabinom", "gumbel_r", "pareto", "wrapcauchy")


@pytest.mark.parametrize("name", JAX_CHECKED)
def test_against_jax(name):
    jax = pytest.importorskip("jax")
    jax_module = getattr(jax.scipy.stats, name)
    assert sorted(f for f in dir(jax_module) if not f.startswith("_")) == JAX_FUNCTIONS[name]
    spec = SPECS[name]
    for fn in _functions(name):
        arg = np.append(np.asarray(_grid(name, fn), np.float32), np.nan)
        for params in spec["params"][:1] + [p for p, _ in spec.get("invalid", [])[:1]]:
            got = getattr(getattr(stats, name), fn)(jnp.asarray(arg), *params)
            want = getattr(jax_module, fn)(jax.numpy.asarray(arg), *params)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-7,
                                       err_msg=f"{name}.{fn}{params}")
        # Python scalars: the same dtype and weak type
        scalar_args = (0.5,) + spec["params"][0]
        got, want = getattr(getattr(stats, name), fn)(*scalar_args), getattr(jax_module, fn)(
            *scalar_args)
        assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), fn


def test_grads_against_jax():
    jax = pytest.importorskip("jax")
    x = np.array([-0.5, 0.4, 1.5, 2.5], np.float32)  # the last point is past the truncation
    for fn in ("logpdf", "logcdf"):
        def loss(module, np_mod):
            return lambda *a: np_mod.sum(getattr(module, fn)(*a))
        got = xjax.grad(loss(stats.truncnorm, jnp), argnums=(0, 1, 2, 3, 4))(
            jnp.asarray(x), -1., 2., 0.2, 1.1)
        want = jax.grad(loss(jax.scipy.stats.truncnorm, jax.numpy), argnums=(0, 1, 2, 3, 4))(
            jax.numpy.asarray(x), -1., 2., 0.2, 1.1)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=1e-6,
                                       err_msg=fn)
    mu = np.array([0.5, 3., 50., 150.], np.float32)
    np.testing.assert_allclose(stats.poisson.entropy(jnp.asarray(mu)),
                               jax.scipy.stats.poisson.entropy(jax.numpy.asarray(mu)), rtol=2e-5)
