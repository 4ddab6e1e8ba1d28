"""``random.random_gamma_p``: the primitive under gamma and the samplers built on it, and its
derivative in ``a`` (the implicit reparameterization gradient, as JAX's)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax, random

ALPHAS = np.array([0.3, 0.9, 1.0, 2.5, 7.0], np.float32)
WEIGHTS = np.array([0.0, 1.0, 2.0], np.float32)


def test_primitive_is_exposed_and_staged():
    assert random.random_gamma_p.name == "random_gamma"
    jaxpr = str(xjax.make_jaxpr(lambda a: random.gamma(random.key(0), a))(jnp.ones(3)))
    assert "random_gamma[log_space=False]" in jaxpr
    jaxpr = str(xjax.make_jaxpr(lambda a: random.loggamma(random.key(0), a))(jnp.ones(3)))
    assert "random_gamma[log_space=True]" in jaxpr


def test_bind_takes_one_key_per_element():
    keys = random.key_data(random.split(random.key(3), 4))
    a = jnp.asarray(ALPHAS[:4])
    out = random.random_gamma_p.bind(keys, a, log_space=False)
    each = [random.random_gamma_p.bind(keys[i:i + 1], a[i:i + 1], log_space=False)[0]
            for i in range(4)]
    np.testing.assert_array_equal(np.asarray(out), np.asarray(jnp.stack(each)))
    with pytest.raises(TypeError, match="a.shape \\+ \\(2,\\)"):
        random.random_gamma_p.bind(keys[:3], a, log_space=False)


@pytest.mark.parametrize("log_space", [False, True])
def test_gradient_keeps_the_cdf_fixed(log_space):
    # x(a) with P(a, x(a)) = u fixed: dP/da + p(x; a) dx/da = 0
    key = random.key(7)
    a = jnp.asarray(ALPHAS)
    sampler = random.loggamma if log_space else random.gamma
    # under vmap each element is drawn with ``key`` itself: compare with per-element draws
    dsample = xjax.vmap(xjax.grad(lambda ai, k: sampler(k, ai)), in_axes=(0, None))(a, key)
    sample = jnp.stack([sampler(key, a[i]) for i in range(len(ALPHAS))])
    x = jnp.exp(sample) if log_space else sample
    dx = dsample * x if log_space else dsample  # d log(x) = dx / x
    density = jnp.exp((a - 1) * jnp.log(x) - x - lax.lgamma(a))
    np.testing.assert_allclose(np.asarray(density * dx), -np.asarray(lax.igamma_grad_a(a, x)),
                               rtol=2e-3, atol=1e-5)


@pytest.mark.parametrize("name", ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "t",
                                  "f"])
def test_gradients_match_jax(name):
    jax = pytest.importorskip("jax")
    a = ALPHAS[1:4]

    def fn(mod, key):
        return {"gamma": lambda a: mod.gamma(key, a).sum(),
                "loggamma": lambda a: mod.loggamma(key, a).sum(),
                "beta": lambda a: mod.beta(key, a, 2.0).sum(),
                "dirichlet": lambda a: (mod.dirichlet(key, a) * WEIGHTS).sum(),
                "chisquare": lambda a: mod.chisquare(key, a).sum(),
                "t": lambda a: mod.t(key, a).sum(),
                "f": lambda a: mod.f(key, a, 3.0).sum()}[name]

    got = xjax.grad(fn(random, random.PRNGKey(1)))(jnp.asarray(a))
    want = jax.grad(fn(jax.random, jax.random.PRNGKey(1)))(jax.numpy.asarray(a))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-6)


def test_jit_and_vmap_of_the_gradient_agree_with_eager():
    key = random.PRNGKey(2)
    a = jnp.asarray(ALPHAS)
    grad = xjax.grad(lambda a: random.gamma(key, a).sum())
    np.testing.assert_allclose(np.asarray(xjax.jit(grad)(a)), np.asarray(grad(a)), rtol=1e-6)
    keys = random.split(key, 3)
    batched = xjax.vmap(lambda k: xjax.grad(lambda a: random.gamma(k, a).sum())(a))(keys)
    for i in range(3):
        one = xjax.grad(lambda a: random.gamma(keys[i], a).sum())(a)
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(one), rtol=1e-5)
