"""jnp.bincount and the histogram functions against NumPy, with JAX's static-size rules
(``length`` under jit), under jit and grad."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core import errors


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("minlength", [0, 3, 12])
def test_bincount(dtype, minlength):
    x = np.random.default_rng(0).integers(0, 8, 20).astype(dtype)
    np.testing.assert_array_equal(jnp.bincount(x, minlength=minlength),
                                  np.bincount(x, minlength=minlength))
    w = np.random.default_rng(1).standard_normal(20).astype(np.float32)
    np.testing.assert_allclose(jnp.bincount(x, w, minlength=minlength),
                               np.bincount(x, w, minlength=minlength), rtol=1e-5)


def test_bincount_length_and_jit():
    x = np.array([1, 2, 2, 5, -1], np.int32)  # negative values count as 0 in JAX
    np.testing.assert_array_equal(jnp.bincount(x, length=3), [1, 1, 2])
    np.testing.assert_array_equal(xjax.jit(lambda x: jnp.bincount(x, length=8))(x),
                                  [1, 1, 2, 0, 0, 1, 0, 0])
    with pytest.raises(errors.ConcretizationTypeError, match="static `length`"):
        xjax.jit(jnp.bincount)(x)
    with pytest.raises(TypeError, match="integer type"):
        jnp.bincount(np.array([1.0]))
    with pytest.raises(ValueError, match="only 1-dimensional"):
        jnp.bincount(np.array([[1]]))
    assert jnp.bincount(np.array([], np.int32)).shape == (0,)


CASES = [(np.float32, 10, None), (np.float32, 4, (0.0, 5.0)), (np.int32, 3, None),
         (np.float32, np.array([-3.0, -1.0, 0.5, 2.0, 4.0]), None)]


@pytest.mark.parametrize("dtype,bins,range_", CASES)
@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogram(dtype, bins, range_, density, weighted):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal(50) * 2).astype(dtype)
    w = rng.uniform(0, 2, 50).astype(np.float32) if weighted else None
    counts, edges = jnp.histogram(a, bins, range_, weights=w, density=density)
    want_counts, want_edges = np.histogram(a, bins, range_, weights=w, density=density)
    np.testing.assert_allclose(edges, want_edges, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(counts, want_counts, rtol=1e-4, atol=1e-6)
    assert counts.dtype == np.float32
    np.testing.assert_allclose(jnp.histogram_bin_edges(a, bins, range_), want_edges,
                               rtol=1e-5, atol=1e-6)


def test_histogram_constant_data_and_jit():
    a = np.full(5, 2.0, np.float32)
    np.testing.assert_allclose(jnp.histogram_bin_edges(a, 3), np.histogram_bin_edges(a, 3))
    b = np.array([1.0, 2, 2, 3, 7], np.float32)
    counts, edges = xjax.jit(lambda b: jnp.histogram(b, 3))(b)
    np.testing.assert_allclose(counts, np.histogram(b, 3)[0])
    with pytest.raises(NotImplementedError, match="string values for `bins`"):
        jnp.histogram(b, "auto")


@pytest.mark.parametrize("bins", [4, [2, 3], [np.array([-2.0, 0, 2]), 3]])
@pytest.mark.parametrize("density", [False, True])
def test_histogram2d_and_dd(bins, density):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(40).astype(np.float32)
    y = rng.standard_normal(40).astype(np.float32)
    got = jnp.histogram2d(x, y, bins=bins, density=density)
    want = np.histogram2d(x, y, bins=bins, density=density)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
    sample = np.stack([x, y, x * y], axis=1)
    hist, edges = jnp.histogramdd(sample, bins=3, density=density)
    want_hist, want_edges = np.histogramdd(sample, bins=3, density=density)
    np.testing.assert_allclose(hist, want_hist, rtol=1e-4, atol=1e-6)
    for g, w in zip(edges, want_edges, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_histogram_weights_grad():
    a = np.array([0.5, 1.5, 1.7, 2.5], np.float32)
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    g = xjax.grad(lambda w: jnp.histogram(a, 3, weights=w)[0][1])(w)
    np.testing.assert_array_equal(g, [0, 1, 1, 0])


def test_histogram_bins_in_the_dtype_of_data_and_weights():
    # float16 data with float32 weights: the edges are float32, as NumPy computes them
    rng = np.random.default_rng(0)
    a = rng.uniform(-1.5, 1.5, 20).astype(np.float16)  # no value on an edge
    w = rng.uniform(size=20).astype(np.float32)
    counts, edges = jnp.histogram(a, bins=5, weights=w)
    expected_counts, expected_edges = np.histogram(a.astype(np.float32), bins=5, weights=w)
    assert edges.dtype == np.float32
    np.testing.assert_allclose(edges, expected_edges, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(counts, expected_counts, rtol=1e-5)
