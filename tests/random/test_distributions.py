"""Every sampler against JAX 0.10.2 for the same keys, in both Threefry layouts (skipped
without JAX); eager against jit; shapes, dtypes and JAX's errors.

Most samplers are bit-equal to JAX's (xjax evaluates log1p and erf_inv as JAX's XLA does,
see xjax/_src/lax/cpu_math.py). The others agree to a few ulp: they go through exp, tan or
reductions that xjax's XLA build rounds or orders differently from the one inside jaxlib.
"""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import dtypes, random

_F32 = np.float32
_COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 0.5]], _F32)
_P = np.array([0.1, 0.2, 0.3, 0.25, 0.15], _F32)

# name -> (sampler of (random module, key), tolerance): 0 is bit-equal, else relative
SAMPLERS = {
    "bits_u8": (lambda r, k: r.bits(k, (13,), np.uint8), 0),
    "bits_u16": (lambda r, k: r.bits(k, (7,), np.uint16), 0),
    "uniform_f16": (lambda r, k: r.uniform(k, (50,), dtype=np.float16), 0),
    "uniform_bf16": (lambda r, k: r.uniform(k, (50,), dtype="bfloat16"), 0),
    "uniform_bounds": (lambda r, k: r.uniform(k, (2, 5), minval=np.arange(5, dtype=_F32),
                                              maxval=10.0), 0),
    "normal": (lambda r, k: r.normal(k, (200,)), 0),
    "normal_c64": (lambda r, k: r.normal(k, (20,), dtype=np.complex64), 0),
    "normal_f16": (lambda r, k: r.normal(k, (20,), dtype=np.float16), 0),
    "randint_neg": (lambda r, k: r.randint(k, (30,), -100, 100), 0),
    "randint_u8": (lambda r, k: r.randint(k, (30,), 0, 256, np.uint8), 0),
    "randint_i8": (lambda r, k: r.randint(k, (30,), -128, 127, np.int8), 0),
    "randint_full": (lambda r, k: r.randint(k, (30,), -2 ** 31, 2 ** 31 - 1), 0),
    "randint_empty_range": (lambda r, k: r.randint(k, (5,), 10, 3), 0),
    "randint_array_bounds": (lambda r, k: r.randint(k, (2, 3), np.array([0, 5, 10]), 20), 0),
    "bernoulli_high": (lambda r, k: r.bernoulli(k, 0.3, (50,), mode="high"), 0),
    "bernoulli_array": (lambda r, k: r.bernoulli(k, np.array([0.1, 0.9], _F32)), 0),
    "truncated_normal": (lambda r, k: r.truncated_normal(k, -1.5, 0.5, (100,)), 0),
    "exponential": (lambda r, k: r.exponential(k, (100,)), 0),
    "laplace": (lambda r, k: r.laplace(k, (100,)), 0),
    "logistic": (lambda r, k: r.logistic(k, (100,)), 0),
    "cauchy": (lambda r, k: r.cauchy(k, (100,)), 0),
    "gumbel": (lambda r, k: r.gumbel(k, (100,)), 0),
    "gumbel_high": (lambda r, k: r.gumbel(k, (100,), mode="high"), 0),
    "gumbel_highest": (lambda r, k: r.gumbel(k, (100,), mode="highest"), 1e-6),
    "rademacher": (lambda r, k: r.rademacher(k, (40,)), 0),
    "lognormal": (lambda r, k: r.lognormal(k, 0.5, (40,)), 0),
    "pareto": (lambda r, k: r.pareto(k, 3.0, (40,)), 1e-6),
    "rayleigh": (lambda r, k: r.rayleigh(k, 2.0, (40,)), 0),
    "weibull_min": (lambda r, k: r.weibull_min(k, 2.0, 1.5, (40,)), 0),
    "maxwell": (lambda r, k: r.maxwell(k, (40,)), 1e-6),
    "double_sided_maxwell": (lambda r, k: r.double_sided_maxwell(k, 1.0, 2.0, (40,)), 1e-6),
    "triangular": (lambda r, k: r.triangular(k, 0.0, 0.3, 1.0, (40,)), 0),
    "wald": (lambda r, k: r.wald(k, 1.5, (40,)), 0),
    "geometric": (lambda r, k: r.geometric(k, 0.3, (40,)), 0),
    "permutation_2d": (lambda r, k: r.permutation(k, np.arange(60).reshape(20, 3)), 0),
    "permutation_independent": (lambda r, k: r.permutation(k, np.arange(12).reshape(3, 4),
                                                           axis=1, independent=True), 0),
    "permutation_3000": (lambda r, k: r.permutation(k, 3000), 0),
    "choice": (lambda r, k: r.choice(k, 10, (7,)), 0),
    "choice_no_replace": (lambda r, k: r.choice(k, 10, (7,), replace=False), 0),
    "choice_p": (lambda r, k: r.choice(k, 5, (20,), p=_P), 0),
    "choice_p_no_replace": (lambda r, k: r.choice(k, 5, (3,), replace=False, p=_P), 0),
    "choice_axis": (lambda r, k: r.choice(k, np.arange(12.0).reshape(4, 3), (2,), axis=1), 0),
    "categorical": (lambda r, k: r.categorical(k, np.log(np.array([[0.1, 0.2, 0.7],
                                                                   [0.5, 0.25, 0.25]], _F32)),
                                               shape=(6, 2)), 0),
    "categorical_no_replace": (lambda r, k: r.categorical(k, np.zeros((2, 6), _F32),
                                                          shape=(3, 2), replace=False), 0),
    "gamma": (lambda r, k: r.gamma(k, np.array([0.3, 1.0, 2.5, 7.0, 0.05], _F32)), 0),
    "gamma_shape": (lambda r, k: r.gamma(k, 2.0, (50,)), 0),
    "loggamma": (lambda r, k: r.loggamma(k, np.array([0.3, 1.0, 2.5, 0.01], _F32), (3, 4)),
                 1e-6),
    "beta": (lambda r, k: r.beta(k, 0.5, 2.0, (20,)), 0),
    "dirichlet": (lambda r, k: r.dirichlet(k, np.array([0.5, 1.0, 3.0], _F32), (4,)), 1e-6),
    "t": (lambda r, k: r.t(k, 3.0, (20,)), 0),
    "chisquare": (lambda r, k: r.chisquare(k, 3.0, (20,)), 0),
    "f": (lambda r, k: r.f(k, 3.0, 5.0, (20,)), 0),
    "generalized_normal": (lambda r, k: r.generalized_normal(k, 1.5, (20,)), 0),
    "ball": (lambda r, k: r.ball(k, 3, 2.0, (5,)), 1e-6),
    "poisson": (lambda r, k: r.poisson(k, np.array([0.5, 3.0, 9.9, 10.0, 50.0, 1e3, 0.0],
                                                   _F32), (3, 7)), 0),
    "binomial": (lambda r, k: r.binomial(k, np.array([5.0, 20.0, 100.0, 1e3, 3.5, 0.0, 50.0], _F32),
                                         np.array([0.3, 0.7, 0.05, 0.5, 0.5, 0.5, 0.9], _F32),
                                         (2, 7)), 0),
    "binomial_invalid": (lambda r, k: r.binomial(k, np.array([-1.0, np.inf, 5.0], _F32),
                                                 np.array([0.5, 0.5, np.nan], _F32)), 0),
    "multinomial": (lambda r, k: r.multinomial(k, np.array([10.0, 50.0], _F32),
                                               np.array([[0.1, 0.9], [0.5, 0.5]], _F32),
                                               shape=(4, 2, 2)), 0),
    "multivariate_normal": (lambda r, k: r.multivariate_normal(
        k, np.array([1.0, 2.0, 3.0], _F32), _COV, (4,)), 1e-5),
    "multivariate_normal_batch": (lambda r, k: r.multivariate_normal(
        k, np.zeros((2, 3), _F32), np.stack([_COV, 2 * _COV])), 1e-5),
    "orthogonal": (lambda r, k: r.orthogonal(k, 4), 1e-5),
    "orthogonal_rect": (lambda r, k: r.orthogonal(k, 3, (2,), m=5), 1e-5),
    "orthogonal_complex": (lambda r, k: r.orthogonal(k, 3, dtype=np.complex64), 1e-5),
}


@pytest.fixture(params=[True, False], ids=["partitionable", "legacy"])
def mode(request):
    jax = pytest.importorskip("jax")
    old = xjax.config.jax_threefry_partitionable, jax.config.jax_threefry_partitionable
    xjax.config.update("jax_threefry_partitionable", request.param)
    jax.config.update("jax_threefry_partitionable", request.param)
    yield jax
    xjax.config.update("jax_threefry_partitionable", old[0])
    jax.config.update("jax_threefry_partitionable", old[1])


def _compare(got, want, tol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (what, got.shape, want.shape, got.dtype, want.dtype)
    if tol == 0:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=tol, atol=tol,
                                   err_msg=what)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_matches_jax(name, mode):
    jax = mode
    sample, tol = SAMPLERS[name]
    for seed in (0, 123):
        want = sample(jax.random, jax.random.PRNGKey(seed))
        _compare(sample(random, random.PRNGKey(seed)), want, tol, f"{name} seed {seed}")


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_matches_eager(name):
    sample, tol = SAMPLERS[name]
    key = random.PRNGKey(5)
    eager = sample(random, key)
    jitted = xjax.jit(lambda k: sample(random, k))(key)
    # constants the outer jit bakes in may be folded by XLA's evaluator (erf of a bound,
    # say), which rounds differently from compiled code: a few ulp, as in JAX
    _compare(jitted, eager, _JIT_TOL.get(name, 0), name)


_JIT_TOL = {"truncated_normal": 1e-4, "f": 1e-5, "pareto": 1e-6, "ball": 1e-5}


# -- dtypes and shapes --

@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32])
def test_float_dtypes(dtype):
    key = random.PRNGKey(0)
    for fn in (random.uniform, random.normal, random.exponential, random.laplace,
               random.logistic, random.cauchy, random.gumbel):
        out = fn(key, (3, 2), dtype)
        assert out.shape == (3, 2) and out.dtype == np.dtype(dtype), fn.__name__
    assert random.gamma(key, 2.0, (4,), dtype).dtype == np.dtype(dtype)


def test_float64_with_x64():
    with xjax.config.override(jax_enable_x64=True):
        key = random.PRNGKey(0)
        x = random.uniform(key, (1000,), np.float64)
        assert x.dtype == np.float64
        # 52 random mantissa bits: values are not all float32-representable
        assert not np.array_equal(np.asarray(x), np.asarray(x).astype(np.float32))
        assert random.normal(key, (3,)).dtype == np.float64
        assert random.bits(key, (3,), np.uint64).dtype == np.uint64
        assert random.randint(key, (3,), 0, 10).dtype == np.int64


def test_bits_u64_matches_jax_with_x64():
    jax = pytest.importorskip("jax")
    with xjax.config.override(jax_enable_x64=True):
        jax.config.update("jax_enable_x64", True)
        try:
            for partitionable in (True, False):
                with xjax.config.override(jax_threefry_partitionable=partitionable):
                    jax.config.update("jax_threefry_partitionable", partitionable)
                    want = jax.random.bits(jax.random.PRNGKey(3), (5,), np.uint64)
                    got = random.bits(random.PRNGKey(3), (5,), np.uint64)
                    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
                    want = jax.random.uniform(jax.random.PRNGKey(3), (5,), np.float64)
                    got = random.uniform(random.PRNGKey(3), (5,), np.float64)
                    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        finally:
            jax.config.update("jax_enable_x64", False)
            jax.config.update("jax_threefry_partitionable", True)


def test_shapes_from_parameters():
    key = random.PRNGKey(0)
    assert random.gamma(key, np.ones((2, 3), _F32)).shape == (2, 3)
    assert random.beta(key, np.ones(3, _F32), 2.0).shape == (3,)
    assert random.bernoulli(key, np.full((4,), 0.5, _F32)).shape == (4,)
    assert random.truncated_normal(key, np.zeros(2, _F32), 1.0).shape == (2,)
    assert random.dirichlet(key, np.ones((2, 4), _F32)).shape == (2, 4)
    assert random.poisson(key, np.ones(5, _F32)).shape == (5,)
    assert random.t(key, 3.0).shape == ()
    assert random.ball(key, 4, shape=(3,)).shape == (3, 4)
    assert random.orthogonal(key, 3, (2,)).shape == (2, 3, 3)
    assert random.choice(key, np.arange(6).reshape(2, 3), (4,), axis=1).shape == (2, 4)
    assert random.categorical(key, np.zeros((3, 5), _F32), axis=0).shape == (5,)
    assert random.rademacher(key, (3,)).dtype == np.int32


def test_bounds():
    key = random.PRNGKey(0)
    x = np.asarray(random.truncated_normal(key, -0.5, 0.25, (5000,)))
    assert x.min() > -0.5 and x.max() < 0.25
    u = np.asarray(random.uniform(key, (5000,), minval=1.0, maxval=1.5))
    assert u.min() >= 1.0 and u.max() < 1.5
    r = np.asarray(random.randint(key, (5000,), -3, 4, np.int8))
    assert r.dtype == np.int8 and r.min() == -3 and r.max() == 3
    s = np.asarray(random.choice(key, 50, (50,), replace=False))
    assert sorted(s.tolist()) == list(range(50))
    q = np.asarray(random.orthogonal(key, 5))
    np.testing.assert_allclose(q @ q.T, np.eye(5), atol=1e-5)
    d = np.asarray(random.dirichlet(key, np.ones(4, _F32), (10,)))
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-6)
    b = np.asarray(random.ball(key, 3, 1.0, (1000,)))
    assert np.abs(b).sum(-1).max() <= 1.0 + 1e-6


# -- errors, as JAX words them --

def test_dtype_errors():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float dtype"):
        random.uniform(key, (2,), np.int32)
    with pytest.raises(ValueError, match="dtype argument to `normal` must be a float or "
                                         "complex dtype"):
        random.normal(key, (2,), np.int32)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        random.randint(key, (2,), 0, 3, np.float32)
    with pytest.raises(ValueError, match="dtype argument to `bits` must be an unsigned int"):
        random.bits(key, (2,), np.int32)
    with pytest.raises(TypeError, match="bernoulli probability `p` must have a floating dtype"):
        random.bernoulli(key, 1, (2,))
    with pytest.raises(ValueError, match="got mode='medium', expected 'high' or 'low'"):
        random.bernoulli(key, 0.5, (2,), mode="medium")
    with pytest.raises(ValueError, match="Must provide valid mode for gumbel"):
        random.gumbel(key, (2,), mode="medium")


def test_shape_errors():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="gamma parameter shapes must be broadcast-compatible "
                                         "with shape argument"):
        random.gamma(key, np.ones((2, 3), _F32), (3,))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes="
                                         r"\[\(2,\), \(3,\), \(\)\]"):
        random.beta(key, np.ones(3, _F32), 1.0, (2,))
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        random.choice(key, 3, (4,), replace=False)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        random.choice(key, 3, (2,), p=np.ones(4, _F32) / 4)
    with pytest.raises(TypeError, match="shape argument of jax.random.choice must be a "
                                        "sequence"):
        random.choice(key, 3, 2)
    with pytest.raises(TypeError, match="x must be an integer or at least 1-dimensional"):
        random.permutation(key, 3.0)
    with pytest.raises(ValueError, match="method must be one of"):
        random.multivariate_normal(key, np.zeros(2), np.eye(2), method="lu")
    with pytest.raises(ValueError, match="dirichlet requires alpha.ndim >= 1"):
        random.dirichlet(key, 1.0)


def test_float64_parameter_is_not_cast_silently():
    with xjax.config.override(jax_enable_x64=True):
        with pytest.raises(dtypes.TypePromotionError, match="cannot safely cast argument of "
                                                            "type float64 to float32"):
            random.t(random.PRNGKey(0), jnp.ones(2, jnp.float64), dtype=np.float32)


def test_choice_of_zero_draws():
    out = random.choice(random.PRNGKey(0), 5, (0,))
    assert out.shape == (0,)


_VMAPPED = ["gamma", "loggamma", "beta", "dirichlet", "t", "poisson", "binomial", "multinomial",
            "permutation_2d", "choice_p", "categorical", "truncated_normal", "normal_c64",
            "gumbel_highest", "orthogonal", "multivariate_normal", "randint_u8", "ball"]


# Gamma's rejection loop draws normals one at a time; vmapped, XLA compiles that loop as
# vector code whose erf_inv rounds a last bit differently now and then (the same draws are
# accepted, the samples agree to ~1 ulp). Unbatched, the loop is JAX's bits.
_GAMMA_LOOP = {"gamma", "loggamma", "beta", "dirichlet", "t", "ball"}


@pytest.mark.parametrize("name", _VMAPPED)
def test_vmap_over_keys_matches_each_key(name):
    """Rejection loops, sorts and factorizations under vmap: each key's numbers are the ones
    it gives alone."""
    sample, tol = SAMPLERS[name]
    keys = random.split(random.PRNGKey(9), 3)
    batched = xjax.vmap(lambda k: sample(random, k))(keys)
    tol = 1e-5 if name in _GAMMA_LOOP or tol else 0
    for i in range(3):
        _compare(np.asarray(batched)[i], sample(random, keys[i]), tol, f"{name} key {i}")
