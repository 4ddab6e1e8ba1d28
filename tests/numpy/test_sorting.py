"""jnp sorting, set operations and quantiles against NumPy (with JAX's documented
deviations: NaN-last total order, unique's ``size``/``fill_value``, quantile methods), under
jit, grad and vmap."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax
import xjax.numpy as jnp
from xjax._src.core import errors

DTYPES = [np.float32, np.int32, np.int8, np.uint8, np.bool_]
SHAPES_AXES = [((7,), -1), ((7,), None), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 1),
               ((2, 3, 4), None), ((0, 3), 0)]


def _data(shape, dtype, seed=0, low=0, high=5):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(low, high, shape).astype(dtype)
    x = rng.integers(-4, 5, shape).astype(dtype)  # ties
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_sort_argsort(dtype, shape, axis):
    x = _data(shape, dtype)
    np.testing.assert_array_equal(jnp.sort(x, axis=axis), np.sort(x, axis=axis))
    np.testing.assert_array_equal(jnp.argsort(x, axis=axis),
                                  np.argsort(x, axis=axis, kind="stable"))
    got = jnp.argsort(x, axis=axis)
    assert got.dtype == np.int32


@pytest.mark.parametrize("shape,axis", SHAPES_AXES[:5])
def test_descending_is_stable(shape, axis):
    x = _data(shape, np.int32, high=3)
    got = np.asarray(jnp.argsort(x, axis=axis, descending=True))
    flat = x.ravel() if axis is None else x
    ax = 0 if axis is None else axis
    want = np.argsort(-flat.astype(np.int64), axis=ax, kind="stable")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jnp.sort(x, axis=axis, descending=True),
                                  np.flip(np.sort(flat, axis=ax), ax))


def test_sort_nans_last_and_complex():
    x = np.array([3.0, np.nan, -1.0, -np.inf, np.nan, 0.0], np.float32)
    np.testing.assert_array_equal(jnp.sort(x), np.sort(x))
    np.testing.assert_array_equal(jnp.argsort(x), np.argsort(x, kind="stable"))
    c = np.array([1 + 2j, 1 - 1j, 0 + 5j, 1 + 0j], np.complex64)
    np.testing.assert_array_equal(jnp.sort(c), np.sort(c))
    np.testing.assert_array_equal(jnp.sort_complex(np.array([3, 1, 2])),
                                  np.sort_complex(np.array([3, 1, 2])).astype(np.complex64))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=12), st.integers(0, 2))
def test_lexsort_hypothesis(values, seed):
    rng = np.random.default_rng(seed)
    a = np.array(values, np.int32)
    b = rng.integers(0, 3, a.size).astype(np.int32)
    np.testing.assert_array_equal(jnp.lexsort((a, b)), np.lexsort((a, b)))


@pytest.mark.parametrize("kth", [0, 2, 5, -1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_partition_property(kth, axis):
    x = _data((6, 6, 6), np.float32, seed=3)
    part = np.asarray(jnp.partition(x, kth, axis=axis))
    want = np.sort(x, axis=axis)
    k = kth % 6
    np.testing.assert_array_equal(np.take(part, k, axis=axis), np.take(want, k, axis=axis))
    assert (np.take(part, range(k), axis=axis) <=
            np.expand_dims(np.take(part, k, axis=axis), axis)).all()
    assert (np.take(part, range(k + 1, 6), axis=axis) >=
            np.expand_dims(np.take(part, k, axis=axis), axis)).all()
    idx = np.asarray(jnp.argpartition(x, kth, axis=axis))
    picked = np.take_along_axis(x, idx, axis)
    # the smallest k + 1 come first in order; the rest (in index order) hold the same values
    np.testing.assert_array_equal(np.take(picked, range(k + 1), axis=axis),
                                  np.take(part, range(k + 1), axis=axis))
    np.testing.assert_array_equal(np.sort(picked, axis=axis), want)


def test_partition_matches_jax_layout():
    np.testing.assert_array_equal(jnp.partition(np.array([5, 1, 4, 2, 3, 0]), 2),
                                  [0, 1, 2, 5, 4, 3])
    np.testing.assert_array_equal(jnp.argpartition(np.array([5, 1, 4, 2, 3, 0]), 2),
                                  [5, 1, 3, 0, 2, 4])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("shape", [(9,), (3, 4), (0,)])
def test_unique_all_outputs(dtype, shape):
    x = _data(shape, dtype, high=4)
    got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w.reshape(np.shape(g)))
    assert got[2].shape == x.shape  # JAX keeps the input's shape for the inverse


@pytest.mark.parametrize("axis", [0, 1])
def test_unique_axis(axis):
    x = np.array([[1, 2, 1], [3, 4, 3], [1, 2, 1], [0, 0, 0]], np.int32)
    got = jnp.unique(x, axis=axis, return_index=True, return_inverse=True,
                     return_counts=True)
    want = np.unique(x, axis=axis, return_index=True, return_inverse=True,
                     return_counts=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, np.reshape(w, np.shape(g)))


def test_unique_nans():
    x = np.array([1.0, np.nan, 2.0, np.nan], np.float32)
    np.testing.assert_array_equal(jnp.unique(x), [1.0, 2.0, np.nan])
    np.testing.assert_array_equal(jnp.unique(x, equal_nan=False), [1.0, 2.0, np.nan, np.nan])
    result = jnp.unique_all(x)
    np.testing.assert_array_equal(result.counts, [1, 1, 1, 1])
    np.testing.assert_array_equal(jnp.unique_values(x), [1.0, 2.0, np.nan, np.nan])


def test_unique_size_and_fill_under_jit():
    x = np.array([3, 1, 2, 1, 3, 3], np.int32)

    @xjax.jit
    def f(x):
        return jnp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                          size=5)

    values, index, inverse, counts = f(x)
    np.testing.assert_array_equal(values, [1, 2, 3, 1, 1])
    np.testing.assert_array_equal(index, [1, 2, 0, 1, 1])
    np.testing.assert_array_equal(inverse, [2, 0, 1, 0, 2, 2])
    np.testing.assert_array_equal(counts, [2, 1, 3, 0, 0])
    values = xjax.jit(lambda x: jnp.unique(x, size=2, fill_value=-1))(x)
    np.testing.assert_array_equal(values, [1, 2])
    values = xjax.jit(lambda x: jnp.unique(x, size=4, fill_value=-1))(x)
    np.testing.assert_array_equal(values, [1, 2, 3, -1])
    with pytest.raises(errors.ConcretizationTypeError, match="size argument"):
        xjax.jit(jnp.unique)(x)


def test_unique_array_api_variants():
    x = np.array([[3, 1], [1, 2]], np.int32)
    values, inverse = jnp.unique_inverse(x)
    np.testing.assert_array_equal(values, [1, 2, 3])
    np.testing.assert_array_equal(inverse, [[2, 0], [0, 1]])
    values, counts = jnp.unique_counts(x)
    np.testing.assert_array_equal(counts, [2, 1, 1])


SET_CASES = [
    (np.array([3, 1, 2, 1, 3, 3]), np.array([3, 4, 1])),
    (np.array([5.0, 2.0, 2.0]), np.array([1.0, 2.0])),
    (np.array([1, 2, 3]), np.array([], np.int32)),
    (np.array([7, 7, 8]), np.array([9, 8, 8, 10])),
]


@pytest.mark.parametrize("a,b", SET_CASES)
@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setdiff1d", "setxor1d"])
def test_set_operations(a, b, name):
    got = getattr(jnp, name)(a, b)
    want = getattr(np, name)(a, b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("a,b", SET_CASES[:2] + SET_CASES[3:])
def test_intersect1d_indices(a, b):
    got = jnp.intersect1d(a, b, return_indices=True)
    want = np.intersect1d(a, b, return_indices=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name,fill", [("intersect1d", 1), ("union1d", 1), ("setdiff1d", 0),
                                       ("setxor1d", 2)])
def test_set_operations_static_size_under_jit(name, fill):
    a, b = SET_CASES[0]
    want = getattr(np, name)(a, b)
    size = len(want) + 2
    got = xjax.jit(lambda a, b: getattr(jnp, name)(a, b, size=size))(a, b)
    np.testing.assert_array_equal(got[:len(want)], want)
    np.testing.assert_array_equal(got[len(want):], [fill, fill])
    got = xjax.jit(lambda a, b: getattr(jnp, name)(a, b, size=size, fill_value=-7))(a, b)
    np.testing.assert_array_equal(got[len(want):], [-7, -7])


# -- quantiles --

METHODS = ["linear", "lower", "higher", "midpoint", "inverted_cdf"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape,axis", [((8,), None), ((4, 6), 1), ((4, 6), 0),
                                        ((2, 3, 5), (0, 2)), ((3, 4), None)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantile_against_numpy(method, shape, axis, keepdims):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    q = np.array([0.0, 0.1, 0.5, 0.77, 1.0], np.float32)
    got = jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    want = np.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    got = jnp.percentile(x, 30.0, axis=axis, method=method, keepdims=keepdims)
    want = np.percentile(x, 30.0, axis=axis, method=method, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_quantile_nearest_rounds_halfway_down_as_jax():
    x = np.array([3.0, 1, 4, 1, 5, 9, 2, 6], np.float32)
    got = jnp.quantile(x, np.array([0.0, 0.25, 0.5, 0.7, 1.0], np.float32), method="nearest")
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0, 5.0, 9.0])


@pytest.mark.parametrize("shape,axis", [((7,), None), ((4, 6), 1), ((2, 3, 4), (1, 2))])
def test_median_and_nan_variants(shape, axis):
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(jnp.median(x, axis=axis), np.median(x, axis=axis), rtol=1e-6)
    x.ravel()[::3] = np.nan
    np.testing.assert_allclose(jnp.median(x, axis=axis), np.median(x, axis=axis), rtol=1e-6)
    np.testing.assert_allclose(jnp.nanmedian(x, axis=axis), np.nanmedian(x, axis=axis),
                               rtol=1e-6)
    np.testing.assert_allclose(jnp.nanquantile(x, 0.3, axis=axis),
                               np.nanquantile(x, 0.3, axis=axis), rtol=1e-5)
    np.testing.assert_allclose(jnp.nanpercentile(x, np.array([10, 90]), axis=axis),
                               np.nanpercentile(x, [10, 90], axis=axis), rtol=1e-5)


def test_quantile_dtypes_and_errors():
    assert jnp.median(np.array([1, 2], np.int8)).dtype == np.float32
    assert jnp.quantile(np.array([1, 2], np.float16), np.float32(0.5)).dtype == np.float16
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(np.ones(3), 0.5, method="hazen")
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf'"):
        jnp.quantile(np.ones(3), 0.5, weights=np.ones(3))
    with pytest.raises(ValueError, match="q must be have rank <= 1"):
        jnp.quantile(np.ones(3), np.ones((2, 2)) * 0.5)
    with pytest.raises(ValueError, match="complex"):
        jnp.median(np.ones(2, np.complex64))


def test_weighted_inverted_cdf():
    x = np.array([3.0, 1, 4, 1, 5], np.float32)
    w = np.array([1.0, 2, 1, 1, 3], np.float32)
    for q in (0.1, 0.4, 0.5, 0.9):
        got = jnp.quantile(x, q, weights=w, method="inverted_cdf")
        want = np.quantile(x, q, weights=w, method="inverted_cdf")
        np.testing.assert_allclose(got, want)


# -- transformations --

def test_sort_and_quantile_under_jit_grad_vmap():
    x = np.random.default_rng(6).standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_array_equal(xjax.jit(jnp.sort)(x), np.sort(x))
    np.testing.assert_allclose(xjax.jit(lambda x: jnp.median(x, axis=1))(x),
                               np.median(x, axis=1), rtol=1e-6)
    g = xjax.grad(lambda x: jnp.sort(x, axis=None)[-1])(x)
    want = np.zeros_like(x)
    want[np.unravel_index(np.argmax(x), x.shape)] = 1
    np.testing.assert_array_equal(g, want)
    g = xjax.grad(lambda x: jnp.median(x[0]))(x)
    order = np.argsort(x[0])
    want = np.zeros_like(x)
    want[0, order[2]] = 1.0
    np.testing.assert_allclose(g, want)
    np.testing.assert_array_equal(xjax.vmap(jnp.sort)(x), np.sort(x, axis=1))
    np.testing.assert_array_equal(xjax.vmap(jnp.argsort, in_axes=1)(x),
                                  np.argsort(x, axis=0).T)


# --- regressions found by differential fuzzing against JAX ---------------------------------

def test_unique_along_axis_collapses_nan_rows():
    x = np.array([[np.nan, 1.], [0., 2.], [np.nan, 1.]], np.float32)
    values, inverse, counts = jnp.unique(x, axis=0, return_inverse=True, return_counts=True)
    assert values.shape == (2, 2)
    np.testing.assert_array_equal(np.asarray(inverse).ravel(), [1, 0, 1])
    np.testing.assert_array_equal(counts, [1, 2])
    assert jnp.unique(x, axis=0, equal_nan=False).shape == (3, 2)


def test_set_operations_collapse_nans_as_unique_does():
    a = np.array([np.nan, 1., np.nan, 2.], np.float32)
    b = np.array([2., 3.], np.float32)
    # NumPy's set operations call unique (equal_nan=True), so one NaN survives
    np.testing.assert_array_equal(jnp.setdiff1d(a, b), np.setdiff1d(a, b))
    np.testing.assert_array_equal(jnp.setxor1d(a, b), np.setxor1d(a, b))


def test_set_operations_of_empty_arrays_with_size_pad():
    empty = np.zeros((0,), np.float32)
    other = np.array([1., 3.], np.float32)
    np.testing.assert_array_equal(jnp.setdiff1d(empty, other, size=3), np.zeros(3))
    np.testing.assert_array_equal(jnp.intersect1d(empty, other, size=2, fill_value=7), [7, 7])
    np.testing.assert_array_equal(jnp.setxor1d(empty, empty, size=2), np.zeros(2))
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(empty, size=2)
    np.testing.assert_array_equal(jnp.unique(empty, size=2, fill_value=5), [5, 5])


def test_intersect1d_indices_pad_with_array_sizes():
    a = np.array([3, 1, 2], np.int32)
    b = np.array([2, 5, 3, 9], np.int32)
    values, i1, i2 = jnp.intersect1d(a, b, return_indices=True, size=4)
    np.testing.assert_array_equal(values[:2], [2, 3])
    np.testing.assert_array_equal(i1, [2, 0, 3, 3])
    np.testing.assert_array_equal(i2, [0, 2, 4, 4])


def test_bincount_of_booleans():
    x = np.array([True, False, True])
    np.testing.assert_array_equal(jnp.bincount(x), np.bincount(x))
    np.testing.assert_array_equal(jnp.bincount(x, length=4), [1, 2, 0, 0])


@pytest.mark.parametrize("kind", ["normal", "ties_zeros_nans", "int", "float16"])
def test_eager_sorts_of_large_arrays_run_on_numpy_with_jax_order(kind):
    # 2**17 elements: above the size where eager jnp functions run compiled; sort and
    # argsort stay on NumPy there (XLA's CPU sort is 10-60x slower), in JAX's order:
    # -0.0 equals 0.0 (input order kept) and every NaN sorts last, in input order
    rng = np.random.default_rng(3)
    shape = (256, 512)
    if kind == "ties_zeros_nans":
        x = rng.choice(np.array([-0.0, 0.0, np.nan, -np.nan, 1.0, -np.inf], np.float32), shape)
    elif kind == "int":
        x = rng.integers(-9, 9, shape).astype(np.int32)
    else:
        x = rng.standard_normal(shape).astype(np.float16 if kind == "float16" else np.float32)
    bits = f"u{x.itemsize}"
    for axis in (0, 1, None):
        flat, along = (x.ravel(), 0) if axis is None else (x, axis)
        order = _stable_jax_order(flat, along)
        want = np.take_along_axis(flat, order, along)
        got = np.asarray(jnp.sort(x, axis=axis))
        np.testing.assert_array_equal(got.view(bits), want.view(bits))
        np.testing.assert_array_equal(np.asarray(jnp.argsort(x, axis=axis)), order)


def _stable_jax_order(x, axis):
    """A stable argsort in JAX's order: NaNs last, -0.0 equal to 0.0 (np.lexsort sorts by
    its last key first)."""
    if x.dtype.kind in "iu":
        return np.argsort(x, axis=axis, kind="stable")
    nan = np.isnan(x)
    value = np.where(nan | (x == 0), np.zeros((), x.dtype), x)
    return np.lexsort((value, nan), axis=axis)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_eager_medians_of_large_arrays(name):
    # eager and large: run directly (their sort on NumPy), not compiled
    rng = np.random.default_rng(8)
    x = rng.standard_normal((256, 513)).astype(np.float32)
    x[rng.random(x.shape) < 0.01] = np.nan
    x[3] = np.nan  # an all-NaN row
    for axis in (None, 0, 1):
        got = np.asarray(getattr(jnp, name)(x, axis=axis))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN slice warning
            want = getattr(np, name)(x.astype(np.float64), axis=axis)
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
