"""The xjax.numpy functions built on control flow, against NumPy."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def test_gcd_lcm_against_numpy():
    rng = np.random.default_rng(0)
    a = rng.integers(-60, 60, (4, 5)).astype(np.int32)
    b = rng.integers(-60, 60, (5,)).astype(np.int32)
    np.testing.assert_array_equal(jnp.gcd(a, b), np.gcd(a, b))
    np.testing.assert_array_equal(jnp.lcm(a, b), np.lcm(a, b))
    assert jnp.gcd(12, 18).weak_type and int(jnp.gcd(12, 18)) == 6
    assert jnp.lcm(jnp.int8(4), 6).dtype == np.int8
    with pytest.raises(ValueError, match="Arguments to jax.numpy.gcd must be integers."):
        jnp.gcd(1.0, 2)


def test_gcd_is_a_while_loop():
    jaxpr = xjax.make_jaxpr(jnp.gcd)(np.int32(4), np.int32(6))
    assert "while" in str(jaxpr)


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_against_numpy(side, method):
    a = np.array([1.0, 2.0, 2.0, 3.0, 7.5, np.nan], np.float32)
    v = np.array([[2.0, 0.0, 9.0], [np.nan, 2.5, 7.5]], np.float32)
    got = jnp.searchsorted(a, v, side=side, method=method)
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))
    assert got.dtype == np.int32
    ints = np.array([1, 3, 5], np.int32)
    np.testing.assert_array_equal(jnp.searchsorted(ints, 4, side=side, method=method),
                                  np.searchsorted(ints, 4, side=side))


def test_searchsorted_details():
    np.testing.assert_array_equal(
        jnp.searchsorted(np.array([3, 1, 2]), np.array([2, 3]), sorter=np.array([1, 2, 0])),
        [1, 2])
    np.testing.assert_array_equal(jnp.searchsorted(np.zeros(0, np.float32), [1.0, 2.0]), [0, 0])
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        jnp.searchsorted(np.ones((2, 2)), 4)
    with pytest.raises(ValueError, match="invalid argument side='middle'"):
        jnp.searchsorted(np.ones(2), 4, side="middle")


@pytest.mark.parametrize("right", [False, True])
def test_digitize_against_numpy(right):
    x = np.array([0.2, 6.4, 3.0, 1.6, 10.0, -1.0], np.float32)
    for bins in (np.array([0.0, 1.0, 2.5, 4.0, 10.0], np.float32),
                 np.array([10.0, 4.0, 2.5, 1.0, 0.0], np.float32)):
        np.testing.assert_array_equal(jnp.digitize(x, bins, right=right),
                                      np.digitize(x, bins, right=right))
    np.testing.assert_array_equal(jnp.digitize(x, np.zeros(0, np.float32)), np.zeros(6))


def test_polyval_against_numpy():
    p = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    x = np.linspace(-2, 2, 7).astype(np.float32)
    np.testing.assert_allclose(jnp.polyval(p, x), np.polyval(p, x), rtol=1e-5)
    assert int(jnp.polyval(np.array([1, 2, 3]), 2)) == 11
    assert "scan" in str(xjax.make_jaxpr(jnp.polyval)(p, x))
    np.testing.assert_allclose(xjax.grad(lambda x: jnp.polyval(p, x))(0.5),
                               np.polyval(np.polyder(p), 0.5), rtol=1e-5)


def test_piecewise_against_numpy():
    x = np.arange(-3.0, 4.0, dtype=np.float32)
    conds = [x < 0, x > 1]
    funcs = [lambda v: -v, lambda v: v * 10, 7.0]
    np.testing.assert_allclose(jnp.piecewise(x, conds, funcs), np.piecewise(x, conds, funcs))
    np.testing.assert_allclose(jnp.piecewise(x, [x < 0], [lambda v: -v]),
                               np.piecewise(x, [x < 0], [lambda v: -v]))
    xi = np.arange(-3, 4, dtype=np.int32)
    got = jnp.piecewise(xi, [xi < 0], [lambda v: -v * 1.5, 2])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [4, 3, 1, 2, 2, 2, 2])
    with pytest.raises(ValueError, match=r"with 1 condition\(s\), either 1 or 2 functions are "
                                         "expected; got 3"):
        jnp.piecewise(x, [x < 0], [lambda v: -v, 1, 2])
