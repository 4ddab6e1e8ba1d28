"""Regressions found by differential fuzzing of ``x[idx]`` against JAX: where NumPy puts the
advanced-index dimensions when an ``...`` or ``None`` separates the advanced indices,
scalar boolean indices among integer arrays, and indices into axes of size 0."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
A = np.array([1, 0])
MASK = np.array([False, True])

# Each index here is one NumPy defines the same way as JAX.
PLACEMENT = [
    (MASK, Ellipsis, A),            # an empty `...` separates the advanced indices
    (None, MASK, Ellipsis, A),
    (A, Ellipsis, A),               # `...` of one axis
    (1, Ellipsis, A),
    (Ellipsis, 1, A),               # adjacent: in place
    (slice(None), 1, A),
    (A[:, None], None, A),          # `None` separates them
    (MASK, slice(None), A),
]

SCALAR_BOOLS = [
    (True,), (False,), (True, True), (A, True), (True, A), (A, slice(None), True),
    (True, slice(None), A), (1, True, A), (A, True, True), (True, Ellipsis, 1),
    (False, 1), (1, True), (True, MASK), (MASK, True, Ellipsis, A),
]


def _check(idx):
    expected = X[idx]
    for f in (lambda x: x[idx], xjax.jit(lambda x: x[idx])):
        got = np.asarray(f(jnp.asarray(X)))
        assert got.shape == expected.shape, idx
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("idx", PLACEMENT, ids=repr)
def test_separated_advanced_indices_go_first(idx):
    _check(idx)


@pytest.mark.parametrize("idx", SCALAR_BOOLS, ids=repr)
def test_scalar_booleans_are_advanced_indices(idx):
    _check(idx)


def test_scalar_boolean_gradient_and_vmap():
    x = jnp.asarray(X)
    g = xjax.grad(lambda x: x[A, True].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), np.isin(np.arange(2), A)[:, None, None]
                                  * np.ones_like(X))
    out = xjax.vmap(lambda x: x[True, A])(x)
    np.testing.assert_array_equal(np.asarray(out), np.stack([X[i][True, A] for i in range(2)]))


def test_false_with_index_arrays_does_not_broadcast():
    # arange(0) against a length-2 index array: JAX's ValueError (NumPy: IndexError).
    with pytest.raises(ValueError):
        jnp.asarray(X)[A, False]


@pytest.mark.parametrize("jit", [False, True])
def test_scalar_index_into_empty_axis_raises_index_error(jit):
    x = np.zeros((0, 3), np.float32)
    with pytest.raises(IndexError):
        x[0]  # NumPy agrees
    f = (lambda x, i: x[i]) if not jit else xjax.jit(lambda x, i: x[i])
    with pytest.raises(IndexError, match="size 0"):
        f(jnp.asarray(x), jnp.asarray(0) if not jit else 0)
    with pytest.raises(IndexError, match="size 0"):
        xjax.jit(lambda x, i: x[i, 1])(jnp.asarray(x), 0)


def test_empty_result_under_jit_does_not_gather():
    # the mask indexes an axis of size 0: XLA rejects a gather with slices of 1 there
    x = np.zeros((2, 1, 0, 4), bool)
    idx = (slice(5, None, 3), np.zeros((1, 0), bool))
    for f in (lambda x: x[idx], xjax.jit(lambda x: x[idx])):
        got = f(jnp.asarray(x))
        assert got.shape == x[idx].shape and got.dtype == np.bool_
    empty = np.zeros((0, 3), np.float32)
    out = xjax.jit(lambda x: x[np.array([], np.int32), 1])(jnp.asarray(empty))
    assert out.shape == empty[np.array([], np.int32), 1].shape


def test_matches_jax_on_these_indices():
    jax = pytest.importorskip("jax")
    for idx in PLACEMENT + SCALAR_BOOLS:
        want = jax.numpy.asarray(X)[idx]
        got = jnp.asarray(X)[idx]
        assert got.shape == want.shape, idx
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    with pytest.raises(ValueError):
        jax.numpy.asarray(X)[A, False]


def test_mask_axes_of_length_zero_select_nothing():
    # JAX accepts a mask axis of length 0 against any axis length (NumPy raises)
    x = jnp.asarray(X)
    assert x[np.zeros((0,), bool)].shape == (0, 3, 4)
    assert x[:, np.zeros((3, 0), bool)].shape == (2, 0)
    with pytest.raises(IndexError, match="did not match"):
        x[np.zeros((3,), bool)]


def test_error_classes_of_bad_indices():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match="string indexing"):
        x["a"]
    with pytest.raises(ValueError, match="must be a scalar"):
        x.at[np.array([5])].get(mode="fill", fill_value=np.array([1.0, 2.0]))


def test_mask_and_errors_match_jax():
    jax = pytest.importorskip("jax")
    for mask in (np.zeros((0,), bool), np.zeros((2, 0), bool)):
        assert jnp.asarray(X)[mask].shape == jax.numpy.asarray(X)[mask].shape
    for bad, cls in (("a", TypeError),):
        with pytest.raises(cls):
            jax.numpy.asarray(X)[bad]
    with pytest.raises(ValueError):
        jax.numpy.asarray(X).at[np.array([5])].get(mode="fill", fill_value=np.ones(2))
