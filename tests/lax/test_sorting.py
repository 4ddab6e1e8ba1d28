"""lax.sort, lax.sort_key_val and lax.top_k: JAX's orders (signed zeros, NaNs, complex),
errors, jaxprs, derivatives and batching; differential tests against JAX where it is
installed."""

import numpy as np
import pytest

import xjax
from xjax import lax


def _specials(dtype=np.float32):
    return np.array([np.nan, -np.nan, 0.0, -0.0, 1.0, -np.inf, np.inf, -2.0, 1.0], dtype)


def test_sort_float_order_nans_last_and_signed_zeros_stable():
    got = np.asarray(lax.sort(_specials()))
    np.testing.assert_array_equal(got[:5], [-np.inf, -2.0, 0.0, 0.0, 1.0])
    # -0.0 == 0.0 keeps the input order (0.0 came first)
    assert not np.signbit(got[2]) and np.signbit(got[3])
    assert np.isnan(got[-2:]).all()


@pytest.mark.parametrize("jit", [False, True])
def test_sort_key_val_permutes_values(jit):
    keys = _specials()
    values = np.arange(keys.size, dtype=np.int32)
    fun = xjax.jit(lax.sort_key_val) if jit else lax.sort_key_val
    k, v = fun(keys, values)
    np.testing.assert_array_equal(np.asarray(v), [5, 7, 2, 3, 4, 8, 6, 0, 1])
    np.testing.assert_array_equal(np.asarray(k)[:-2], keys[np.asarray(v)][:-2])


def test_sort_complex_lexicographic():
    x = np.array([1 + 2j, 1 - 1j, np.nan + 0j, 0 + 1j, 1 + 0j], np.complex64)
    for fun in (lax.sort, xjax.jit(lax.sort)):
        got = np.asarray(fun(x))
        np.testing.assert_array_equal(got[:4], [0 + 1j, 1 - 1j, 1 + 0j, 1 + 2j])
        assert np.isnan(got[4].real)


def test_sort_num_keys_two():
    a = np.array([1, 0, 1, 0], np.int32)
    b = np.array([3, 2, 1, 0], np.int32)
    c = np.arange(4, dtype=np.float32)
    out = lax.sort((a, b, c), num_keys=2)
    np.testing.assert_array_equal(np.asarray(out[2]), [3, 1, 2, 0])
    out1 = lax.sort((a, b, c), num_keys=1)
    np.testing.assert_array_equal(np.asarray(out1[2]), [1, 3, 0, 2])


def test_sort_returns_array_for_array_and_tuple_for_sequence():
    x = np.arange(3.0, dtype=np.float32)
    assert isinstance(lax.sort(x), xjax.Array)
    assert isinstance(lax.sort([x]), tuple)


@pytest.mark.parametrize("call,error,message", [
    (lambda: lax.sort((np.ones((3, 4), np.float32), np.ones(3, np.float32))), TypeError,
     "Arguments to sort must have equal shapes"),
    (lambda: lax.sort((np.ones(3), np.ones(3)), num_keys=3), ValueError,
     "num_keys=3 must be between 1 and len(operand)=2"),
    (lambda: lax.sort(np.ones((3, 4)), dimension=2), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: lax.sort(np.float32(1)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    (lambda: lax.top_k(np.ones((3, 4)), -1), ValueError,
     "k argument to top_k must be nonnegative, got -1"),
    (lambda: lax.top_k(np.ones((3, 4)), 5), ValueError,
     "k argument to top_k must be no larger than size along axis; got k=5 with "
     "shape=[3, 4] and axis=1"),
    (lambda: lax.top_k(np.ones(3, np.complex64), 1), ValueError,
     "top_k is not compatible with complex inputs."),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=None) as info:
        call()
    assert message in str(info.value)


def test_jaxprs_print_as_jax():
    x = np.ones((3, 4), np.float32)
    text = str(xjax.make_jaxpr(lambda x: lax.sort((x, x), dimension=0))(x))
    assert "sort[dimension=0 is_stable=True num_keys=1] a a" in text
    text = str(xjax.make_jaxpr(lambda x: lax.top_k(x, 2))(x))
    assert "b:f32[3,2] c:i32[3,2] = top_k[axis=1 k=2] a" in text


@pytest.mark.parametrize("jit", [False, True])
def test_top_k_total_order_and_ties(jit):
    x = np.array([1.0, -np.nan, np.nan, 2.0, -np.inf, -0.0, 0.0, 2.0], np.float32)
    fun = xjax.jit(lambda x: lax.top_k(x, 8)) if jit else (lambda x: lax.top_k(x, 8))
    values, indices = fun(x)
    np.testing.assert_array_equal(np.asarray(indices), [2, 3, 7, 0, 6, 5, 4, 1])
    assert np.signbit(np.asarray(values)[5]) and not np.signbit(np.asarray(values)[4])


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_top_k_against_stable_argsort(axis, dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (5, 6, 4)).astype(dtype)
    for fun in (lambda x: lax.top_k(x, 3, axis=axis),
                xjax.jit(lambda x: lax.top_k(x, 3, axis=axis))):
        values, indices = fun(x)
        order = np.argsort(-x.astype(np.int64), axis=axis, kind="stable")
        want = np.take(order, np.arange(3), axis=axis)
        np.testing.assert_array_equal(np.asarray(indices), want)
        np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(x, want, axis))


def test_sort_jvp_follows_permutation():
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]], np.float32)
    t = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, tangent = xjax.jvp(lambda x: lax.sort(x), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), [[1, 2, 0], [5, 3, 4]])
    out, tangent = xjax.jvp(lambda x: lax.top_k(x, 2)[0], (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), [[0, 2], [4, 3]])


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_vmap_sort_and_top_k(in_axes):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    v = rng.standard_normal((3, 4, 5)).astype(np.float32)
    moved = np.moveaxis(x, in_axes, 0)
    moved_v = np.moveaxis(v, in_axes, 0)
    got = xjax.vmap(lambda a, b: lax.sort_key_val(a, b, dimension=0), in_axes=in_axes)(x, v)
    for i in range(moved.shape[0]):
        want = lax.sort_key_val(moved[i], moved_v[i], dimension=0)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(np.asarray(g)[i], np.asarray(w))
    values, indices = xjax.vmap(lambda a: lax.top_k(a, 2), in_axes=in_axes)(x)
    for i in range(moved.shape[0]):
        want_v, want_i = lax.top_k(moved[i], 2)
        np.testing.assert_array_equal(np.asarray(values)[i], np.asarray(want_v))
        np.testing.assert_array_equal(np.asarray(indices)[i], np.asarray(want_i))


def test_vmap_sort_with_unbatched_payload():
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]], np.float32)
    payload = np.arange(3, dtype=np.int32)
    keys, perm = xjax.vmap(lambda k, v: lax.sort_key_val(k, v), in_axes=(0, None))(x, payload)
    np.testing.assert_array_equal(np.asarray(perm), [[1, 2, 0], [2, 0, 1]])


# -- against JAX --

jax = pytest.importorskip("jax")
jlax = pytest.importorskip("jax.lax")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint16, np.bool_,
                                   np.complex64])
def test_sort_matches_jax(dtype):
    rng = np.random.default_rng(2)
    if dtype == np.complex64:
        x = (rng.integers(-2, 3, (4, 7)) + 1j * rng.integers(-2, 3, (4, 7))).astype(dtype)
    elif dtype == np.bool_:
        x = rng.random((4, 7)) < 0.5
    else:
        x = rng.integers(0, 5, (4, 7)).astype(dtype)
    if dtype in (np.float32, np.float16):
        x[0, :4] = [np.nan, -0.0, 0.0, -np.nan]
    payload = np.arange(28, dtype=np.int32).reshape(4, 7)
    for dimension in (0, 1):
        got = lax.sort((x, payload), dimension=dimension)
        want = jlax.sort((x, payload), dimension=dimension)
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


def test_top_k_matches_jax():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (3, 9)).astype(np.float32)
    x[0, :4] = [np.nan, -0.0, 0.0, -np.nan]
    got = lax.top_k(x, 5)
    want = jlax.top_k(x, 5)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


def test_sort_grad_matches_jax():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    w = rng.standard_normal((3, 5)).astype(np.float32)

    def f(m, x):
        return (m.sort(x, dimension=0) * w).sum() + (m.top_k(x, 2)[0] ** 2).sum()

    got = xjax.grad(lambda x: f(lax, x))(x)
    want = jax.grad(lambda x: f(jlax, x))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
