"""jnp polynomial functions against NumPy (and JAX's result dtypes and concreteness
rules), under jit and grad."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core import errors

needs_linalg = pytest.mark.skipif(not hasattr(jnp, "linalg"),
                                  reason="jnp.linalg is not available yet")

POLYS = [np.array([1.0, -3.0, 2.0]), np.array([2.0]), np.array([0.5, 0.0, -1.0, 4.0]),
         np.array([3.0, 1.0])]


@pytest.mark.parametrize("a", POLYS)
@pytest.mark.parametrize("b", POLYS)
def test_arithmetic(a, b):
    a, b = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(jnp.polyadd(a, b), np.polyadd(a, b), rtol=1e-6)
    np.testing.assert_allclose(jnp.polysub(a, b), np.polysub(a, b), rtol=1e-6)
    np.testing.assert_allclose(jnp.polymul(a, b), np.polymul(a, b), rtol=1e-6)
    q, r = jnp.polydiv(a, b)
    want_q, want_r = np.polydiv(a, b)
    np.testing.assert_allclose(q, want_q, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(r)[-len(want_r):], want_r, rtol=1e-5, atol=1e-5)
    q, r = jnp.polydiv(a, b, trim_leading_zeros=True)
    # JAX trims leading remainder terms below sqrt(eps), NumPy only exact zeros
    np.testing.assert_allclose(r, want_r[-len(r):], rtol=1e-5, atol=1e-5)


def test_dtypes_follow_jax():
    i = np.array([1, 2], np.int32)
    assert jnp.polyadd(i, i).dtype == np.int32
    assert jnp.polymul(i, i).dtype == np.float32
    assert jnp.polyder(i).dtype == np.float32
    assert jnp.polyint(i).dtype == np.float32


@pytest.mark.parametrize("p", POLYS)
@pytest.mark.parametrize("m", [0, 1, 2, 3])
def test_derivatives_and_integrals(p, m):
    p = p.astype(np.float32)
    np.testing.assert_allclose(jnp.polyder(p, m), np.polyder(p, m), rtol=1e-6)
    np.testing.assert_allclose(jnp.polyint(p, m), np.polyint(p, m), rtol=1e-6)
    if m:
        k = np.arange(1.0, m + 1, dtype=np.float32)
        np.testing.assert_allclose(jnp.polyint(p, m, k=k), np.polyint(p, m, k=k),
                                   rtol=1e-6)


@pytest.mark.parametrize("zeros", [np.array([1.0, 2.0]), np.array([0.5, -1.0, 3.0]),
                                   np.array([])])
def test_poly(zeros):
    np.testing.assert_allclose(jnp.poly(zeros.astype(np.float32)), np.poly(zeros),
                               rtol=1e-6)


@pytest.mark.parametrize("N", [None, 1, 4])
@pytest.mark.parametrize("increasing", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_vander(N, increasing, dtype):
    x = np.array([1, 2, 3, 5], dtype)
    got = jnp.vander(x, N, increasing)
    np.testing.assert_array_equal(got, np.vander(x, N, increasing))
    assert got.dtype == dtype


@pytest.mark.parametrize("trim", ["fb", "f", "b"])
def test_trim_zeros(trim):
    x = np.array([0, 0, 1, 0, 2, 0], np.int32)
    np.testing.assert_array_equal(jnp.trim_zeros(x, trim), np.trim_zeros(x, trim))
    with pytest.raises(errors.ConcretizationTypeError, match="trim_zeros"):
        xjax.jit(jnp.trim_zeros)(x)


def test_polyval_and_grad():
    p = np.array([1.0, -3.0, 2.0], np.float32)
    x = np.linspace(-2, 2, 5).astype(np.float32)
    np.testing.assert_allclose(xjax.jit(jnp.polyval)(p, x), np.polyval(p, x), rtol=1e-6)
    g = xjax.grad(lambda p: jnp.polyint(jnp.polymul(p, p)).sum())(p)
    eps = 1e-3

    def f(p):
        return np.polyint(np.polymul(p, p)).sum()

    numeric = [(f(p + eps * e) - f(p - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g, numeric, rtol=1e-3)


@needs_linalg
def test_roots():
    p = np.array([1.0, -6.0, 11.0, -6.0], np.float32)
    got = np.sort_complex(np.asarray(jnp.roots(p)))
    np.testing.assert_allclose(got, np.sort_complex(np.roots(p)), rtol=1e-4, atol=1e-4)
    got = np.sort_complex(np.asarray(jnp.roots(np.array([0.0, 1.0, -3.0, 2.0, 0.0]))))
    np.testing.assert_allclose(got, [0, 1, 2], atol=1e-4)


@needs_linalg
@pytest.mark.parametrize("deg", [1, 2, 3])
def test_polyfit(deg):
    rng = np.random.default_rng(0)
    x = np.linspace(-1, 1, 12).astype(np.float32)
    y = (x ** 2 - 0.5 * x + rng.normal(0, 0.05, 12)).astype(np.float32)
    np.testing.assert_allclose(jnp.polyfit(x, y, deg), np.polyfit(x, y, deg), rtol=1e-3,
                               atol=1e-3)
