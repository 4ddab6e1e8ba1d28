"""Regressions found by differential fuzzing of take/take_along_axis/put_along_axis and
lax.index_take against JAX (references: NumPy and Python's modulo)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

pytestmark = pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")


def test_index_take_wraps_indices_like_python_modulo():
    x = np.arange(12.0).reshape(3, 4)
    rows, cols = np.array([-2, 2, 5, -7]), np.array([-1, 9, 0, 3])
    want = x[rows % 3, cols % 4]
    for f in (lax.index_take, xjax.jit(lax.index_take, static_argnums=2)):
        np.testing.assert_array_equal(np.asarray(f(x, (rows, cols), (0, 1))), want)
    got = lax.index_take(x, (np.array([-1, 6], np.int8),), (1,))
    np.testing.assert_array_equal(np.asarray(got), x[:, np.array([-1, 6]) % 4].T)


def test_take_rejects_modes_jax_rejects():
    x = jnp.arange(5)
    with pytest.raises(ValueError, match="Invalid mode"):
        jnp.take(x, jnp.array([1]), mode="promise_in_bounds")
    with pytest.raises(ValueError, match="integer type"):
        jnp.take(x, np.array([True, False]), mode="clip")
    # in 'fill' mode booleans read as 0 and 1
    np.testing.assert_array_equal(np.asarray(jnp.take(x, np.array([True, False]))), [1, 0])


def test_take_from_empty_axis():
    with pytest.raises(IndexError, match="empty axis"):
        jnp.take(jnp.zeros((0, 2)), jnp.array([0, 1]), axis=0)
    with pytest.raises(IndexError):
        np.take(np.zeros((0, 2)), np.array([0, 1]), axis=0)  # NumPy agrees


def test_take_along_axis_checks_and_empty_axis():
    x = np.zeros((0, 2), np.float32)
    idx = np.array([[1, -1], [1, -1]])
    got = jnp.take_along_axis(x, idx, axis=0, mode="clip")
    assert got.shape == (2, 2) and got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), 0)
    with pytest.raises(TypeError, match="integer type"):
        jnp.take_along_axis(jnp.arange(3), np.array([True, False]), axis=0)
    with pytest.raises(ValueError, match="1D"):
        jnp.take_along_axis(jnp.arange(6).reshape(2, 3), np.zeros((2, 1), int), axis=None)


def test_put_along_axis_counts_negative_indices_once():
    x = np.arange(6).reshape(2, 3)
    idx = np.array([[-4], [1]])  # -4 + 3 = -1: still out of bounds, so dropped
    got = jnp.put_along_axis(x, idx, np.array([[7], [8]]), axis=1, inplace=False)
    want = x.copy()
    want[1, 1] = 8
    np.testing.assert_array_equal(np.asarray(got), want)
    got = jnp.put_along_axis(x, np.array([[-1], [-3]]), 9, axis=1, inplace=False)
    want = x.copy()
    np.put_along_axis(want, np.array([[-1], [-3]]), 9, axis=1)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_jit_with_empty_bool_constant_of_rank_three():
    shape = (2, 0, 3)
    f = xjax.jit(lambda x: lax.dynamic_update_slice(x, np.ones(shape, bool), (0, 0, 0)))
    assert f(np.zeros(shape, bool)).shape == shape


def test_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.arange(12.0).reshape(3, 4)
    idxs = (np.array([-2, 2, 5, -7]), np.array([-1, 9, 0, 3]))
    np.testing.assert_array_equal(np.asarray(lax.index_take(x, idxs, (0, 1))),
                                  np.asarray(jax.lax.index_take(x, idxs, (0, 1))))
    a = np.arange(6).reshape(2, 3)
    got = jnp.put_along_axis(a, np.array([[-4], [1]]), 5, axis=1, inplace=False)
    want = jax.numpy.put_along_axis(a, np.array([[-4], [1]]), 5, axis=1, inplace=False)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    z = np.zeros((0, 2), np.float32)
    got = jnp.take_along_axis(z, np.array([[1, -1]]), axis=0)
    want = jax.numpy.take_along_axis(z, np.array([[1, -1]]), axis=0)
    assert got.shape == want.shape and got.dtype == want.dtype
