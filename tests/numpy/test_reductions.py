"""Reductions against NumPy: axes, keepdims, where/initial, dtypes of results, errors."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

SHAPES_AXES = [((5,), None), ((5,), 0), ((2, 3), None), ((2, 3), 0), ((2, 3), 1),
               ((2, 3), -1), ((2, 3, 4), (0, 2)), ((2, 3, 4), (2, 1)), ((3, 0), 1)]
DTYPES = [np.float32, np.int32, np.int8, np.uint8, np.bool_]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def _expected_sum_dtype(dtype, name):
    if dtype == np.bool_ or dtype in (np.int8, np.int16):
        return np.dtype(np.int32)
    if dtype in (np.uint8, np.uint16):
        return np.dtype(np.uint32)
    return np.dtype(dtype)


@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_prod(name, dtype, shape, axis, keepdims):
    x = _data(shape, dtype)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert out.dtype == _expected_sum_dtype(np.dtype(dtype), name)
    assert not out.weak_type
    np.testing.assert_allclose(np.asarray(out), expected.astype(out.dtype), rtol=1e-5)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "any", "all", "ptp"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES[:-1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min_any_all(name, dtype, shape, axis, keepdims):
    if name == "ptp" and dtype == np.bool_:
        return
    x = _data(shape, dtype)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.float16])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES[:-1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_var_std(name, dtype, shape, axis, keepdims):
    x = _data(shape, dtype)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(x.astype(np.float64), axis=axis, keepdims=keepdims)
    assert out.dtype == (np.float16 if dtype == np.float16 else np.float32)
    tol = 2e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(np.asarray(out, np.float64), expected, rtol=tol, atol=tol)


def test_var_ddof_and_complex():
    x = np.array([1., 2., 4.], np.float32)
    np.testing.assert_allclose(np.asarray(jnp.var(jnp.asarray(x), ddof=1)), np.var(x, ddof=1))
    np.testing.assert_allclose(np.asarray(jnp.std(jnp.asarray(x), correction=1)),
                               np.std(x, ddof=1))
    assert np.isnan(float(jnp.var(jnp.asarray(x), ddof=5)))
    z = np.array([1 + 1j, 2], np.complex64)
    out = jnp.var(jnp.asarray(z))
    assert out.dtype == np.float32
    np.testing.assert_allclose(float(out), np.var(z), rtol=1e-6)


def test_mean_of_ints_and_dtype_argument():
    out = jnp.mean(jnp.array([1, 2]))
    assert repr(out) == "Array(1.5, dtype=float32)"
    out = jnp.mean(jnp.array([1, 2, 4], jnp.int8), dtype=jnp.int32)
    assert out.dtype == np.int32 and int(out) == 2
    assert np.isnan(float(jnp.mean(jnp.array([], jnp.float32))))


def test_where_and_initial():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(jnp.sum(jnp.asarray(x), where=mask), np.sum(x, where=mask))
    np.testing.assert_array_equal(jnp.sum(jnp.asarray(x), axis=1, where=mask),
                                  np.sum(x, axis=1, where=mask))
    np.testing.assert_array_equal(jnp.prod(jnp.asarray(x) + 1, where=mask, axis=0),
                                  np.prod(x + 1, where=mask, axis=0))
    np.testing.assert_array_equal(jnp.max(jnp.asarray(x), axis=1, initial=4.0),
                                  np.max(x, axis=1, initial=4.0))
    np.testing.assert_array_equal(jnp.min(jnp.array([3, 1]), where=jnp.array([True, False]),
                                          initial=10), 3)
    assert float(jnp.sum(jnp.ones(3), initial=2.)) == 5.0
    assert float(jnp.max(jnp.array([], jnp.float32), initial=5.)) == 5.0
    np.testing.assert_allclose(np.asarray(jnp.mean(jnp.asarray(x), where=mask)),
                               np.mean(x, where=mask))
    np.testing.assert_allclose(np.asarray(jnp.var(jnp.asarray(x), axis=1, where=mask)),
                               np.var(x, axis=1, where=mask))
    assert bool(jnp.all(jnp.array([False, True]), where=jnp.array([False, True])))


def test_sum_dtype_arguments():
    x = jnp.array([1, 2, 4], jnp.int8)
    assert jnp.sum(x, dtype=jnp.int8).dtype == np.int8
    assert jnp.sum(x, promote_integers=False).dtype == np.int8
    assert jnp.sum(jnp.array([1., 2.], jnp.float16)).dtype == np.float16
    assert jnp.sum(x, dtype=jnp.float32).dtype == np.float32


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("shape,axis", [((5,), None), ((2, 3), None), ((2, 3), 0),
                                        ((2, 3), 1), ((2, 3, 4), -1)])
def test_argmax_argmin(name, dtype, shape, axis):
    x = _data(shape, dtype, seed=3)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis))
    kept = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=True)
    np.testing.assert_array_equal(kept, getattr(np, name)(x, axis=axis, keepdims=True))


def test_argmax_propagates_nan():
    assert int(jnp.argmax(jnp.array([1., np.nan, 3.]))) == 1
    assert np.isnan(float(jnp.max(jnp.array([1., np.nan, 3.]))))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.bool_])
@pytest.mark.parametrize("shape,axis", [((5,), None), ((2, 3), None), ((2, 3), 0),
                                        ((2, 3), 1), ((2, 3), -1)])
def test_cumulative(name, dtype, shape, axis):
    x = _data(shape, dtype)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis)
    expected_dtype = np.int32 if dtype == np.bool_ else dtype
    assert out.dtype == expected_dtype
    expected = getattr(np, name)(x, axis=axis).astype(expected_dtype)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_cumsum_dtype_argument():
    out = jnp.cumsum(jnp.array([[1, 2], [3, 4]]), axis=1, dtype=jnp.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[1, 3], [3, 7]])


def test_nan_reductions_and_counts():
    x = np.array([[1., np.nan], [3., 4.]], np.float32)
    for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean"):
        np.testing.assert_allclose(np.asarray(getattr(jnp, name)(jnp.asarray(x), axis=0)),
                                   getattr(np, name)(x, axis=0), rtol=1e-6)
    np.testing.assert_array_equal(jnp.count_nonzero(jnp.array([[1, 0], [3, 7]])), 3)
    np.testing.assert_array_equal(jnp.count_nonzero(jnp.array([[1, 0], [3, 7]]), axis=0), [2, 1])
    np.testing.assert_allclose(np.asarray(jnp.average(jnp.arange(4.), weights=jnp.arange(4.))),
                               np.average(np.arange(4.), weights=np.arange(4.)))


def test_errors():
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments, got "
                                        "<class 'list'> at position 0."):
        jnp.sum([1, 2, 3])
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        jnp.max(jnp.array([], jnp.float32))
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.max(jnp.ones(3), where=jnp.array([True, False, True]))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.sum(jnp.ones((3, 4)), 2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        jnp.sum(jnp.ones((3, 4)), (0, 0))
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jnp.argmax(jnp.array([], jnp.float32))
    with pytest.raises(NotImplementedError, match="'out' argument to jnp.sum"):
        jnp.sum(jnp.ones(3), out=jnp.ones(()))


@pytest.mark.parametrize("name", ["sum", "mean", "std", "var", "max", "argmin", "cumsum",
                                  "prod", "any"])
def test_reductions_under_jit(name):
    x = jnp.asarray(_data((4, 3), np.float32, seed=5))
    fn = getattr(jnp, name)
    np.testing.assert_allclose(np.asarray(xjax.jit(lambda x: fn(x, axis=0))(x)),
                               np.asarray(fn(x, axis=0)), rtol=1e-6)
    if name in ("sum", "mean", "max"):
        mask = jnp.array([True, False, True])
        kwargs = {"initial": -10.} if name == "max" else {}
        masked = xjax.jit(lambda x, m: fn(x, axis=1, where=m, **kwargs))
        np.testing.assert_allclose(np.asarray(masked(x, mask)),
                                   np.asarray(fn(x, axis=1, where=mask, **kwargs)), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_half_float_sum_and_prod_accumulate_in_float32(name, dtype):
    """JAX sums and multiplies float16/bfloat16 in float32 and rounds once at the end."""
    import xjax
    x = np.random.default_rng(0).uniform(0.9, 1.1, 3000).astype(jnp.dtype(dtype))
    want = getattr(np, name)(x.astype(np.float32)).astype(x.dtype)
    for fun in (getattr(jnp, name), xjax.jit(getattr(jnp, name))):
        got = fun(x)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(np.asarray(got).astype(np.float32),
                                      np.asarray(want).astype(np.float32))
    jaxpr = str(xjax.make_jaxpr(getattr(jnp, name))(x))
    assert "f32[3000]" in jaxpr


# --- regressions found by differential fuzzing against JAX ---------------------------------

@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), None), ((0, 3), 0), ((3, 0), 1)])
def test_any_all_of_empty_use_their_identity(name, shape, axis):
    x = np.zeros(shape, np.float32)
    out = getattr(jnp, name)(x, axis=axis)
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis))
    assert out.dtype == np.bool_


@pytest.mark.parametrize("name,logical", [("sum", np.logical_or), ("prod", np.logical_and),
                                          ("nansum", np.logical_or)])
def test_sum_prod_with_bool_dtype_reduce_logically(name, logical):
    # JAX converts to bool first and reduces with or/and, so 0.3 counts as True
    x = np.array([[0.3, 0, 0], [0, 0, 2], [0.5, 0.5, 0]], np.float32)
    out = getattr(jnp, name)(x, axis=0, dtype=bool)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, logical.reduce(x != 0, axis=0))
    np.testing.assert_array_equal(jnp.sum(x, axis=1, dtype=bool, where=x < 1),
                                  np.any((x != 0) & (x < 1), axis=1))


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nanmax_nanmin_with_initial_ignore_all_nan_slices(name):
    x = np.array([[np.nan, 1.], [np.nan, np.nan]], np.float32)
    out = getattr(jnp, name)(x, axis=0, initial=0.5)
    np.testing.assert_array_equal(out, getattr(np, name[3:])(np.nan_to_num(
        x, nan=-np.inf if name == "nanmax" else np.inf), axis=0, initial=0.5))
    empty = getattr(jnp, name)(np.zeros((0, 2), np.float32), axis=0, initial=2.)
    np.testing.assert_array_equal(empty, [2., 2.])
    assert np.isnan(np.asarray(getattr(jnp, name)(x, axis=0)))[0]


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_var_std_take_a_mean(name):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5)).astype(np.float32)
    center = x.mean(axis=1, keepdims=True) + 0.25
    out = getattr(jnp, name)(x, axis=1, mean=center, ddof=1)
    expected = ((x - center) ** 2).sum(axis=1) / 4
    if "std" in name:
        expected = np.sqrt(expected)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_std_rejects_integer_dtype():
    with pytest.raises(ValueError, match="must be inexact"):
        jnp.std(jnp.ones(3), dtype=np.int32)


@pytest.mark.parametrize("name,error,message", [
    ("mean", IndexError, "tuple index out of range"),
    ("var", IndexError, "tuple index out of range"),
    ("std", IndexError, "tuple index out of range"),
    ("argmax", IndexError, "tuple index out of range"),
    ("argmin", IndexError, "tuple index out of range"),
    ("sum", ValueError, "axis 2 is out of bounds for array of dimension 2")])
def test_out_of_range_axis_raises_jax_class(name, error, message):
    # JAX's classes exactly (never NumPy's AxisError): mean/var/std/argmax read the axis'
    # length from the shape tuple first, sum checks the axis
    with pytest.raises(error, match=message) as info:
        getattr(jnp, name)(jnp.ones((2, 3)), axis=2)
    assert type(info.value) is error


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("shape,axis", [((0, 3), 1), ((3, 0), 0), ((0, 2, 3), (1, 2))])
def test_median_over_nonempty_axes_of_empty_array(name, shape, axis):
    x = np.zeros(shape, np.float32)
    out = getattr(jnp, name)(x, axis=axis)
    axes = axis if isinstance(axis, tuple) else (axis,)
    assert out.shape == tuple(size for d, size in enumerate(shape) if d not in axes)


def test_diff_past_the_length_is_empty():
    x = np.arange(12.).reshape(3, 4)
    for n, axis in [(6, 0), (5, -1), (3, 0)]:
        out = jnp.diff(x, n=n, axis=axis)
        assert out.shape == np.diff(x, n=n, axis=axis).shape
    assert jnp.diff(x > 3, n=5).dtype == np.bool_


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_and_std_gradients_have_jaxs_bits_when_jitted(fn):
    """var squares the centred values (``square``, whose derivative is ``2 x``) and divides
    by ``N - ddof`` computed before the sum, as JAX's ``_var``."""
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(5).uniform(0.1, 0.9, (8, 16)).astype(np.float32)
    for kwargs in ({}, {"axis": 0}, {"axis": 1, "ddof": 1}):
        ours = xjax.jit(xjax.grad(lambda v, k=kwargs: getattr(jnp, fn)(v, **k).sum()))(x)
        theirs = jax.jit(jax.grad(lambda v, k=kwargs: getattr(jax.numpy, fn)(v, **k).sum()))(x)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=str(kwargs))
