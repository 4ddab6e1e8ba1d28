"""NumPy indexing (``x[idx]``), ``take``/``take_along_axis`` and ``x.at[idx]`` updates,
against NumPy (with JAX's out-of-bounds rules: reads clamp, updates are dropped)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors

X = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
I = np.array  # integer index arrays (NumPy) as the tests write them


def _jax_index(idx):
    """The index with NumPy integer/bool arrays replaced by xjax Arrays."""
    if isinstance(idx, tuple):
        return tuple(_jax_index(i) for i in idx)
    if isinstance(idx, np.ndarray):
        return jnp.asarray(idx)
    return idx


INDICES = [
    0, -1, 1, (1, 2), (0, -1, 3), (1, 2, 3, 4), (-2, -3, -4, -5),
    slice(None), slice(1, None), slice(None, None, -1), (slice(None), slice(0, 2)),
    (slice(None), slice(None, None, 2)), (slice(None), slice(None, None, -2), slice(1, 3)),
    (slice(None), slice(2, 0, -1)), (slice(None), slice(5, -5, -1)), (Ellipsis, 1),
    (0, Ellipsis, slice(1, 4, 2)), (None,), (None, 0), (0, None, slice(None), None),
    (Ellipsis, None), (1, Ellipsis, None, -1), (), Ellipsis, (slice(10, 20),),
    (slice(None), slice(3, 1)),
    I([0, 1]), I([1, 0, 1]), I([[0], [1]]), I([-1, -2]), (slice(None), I([2, 0])),
    (I([0, 1]), I([1, 2])), (I([0, 1]), slice(None), I([1, 2])),
    (slice(None), I([0, 1]), I([1, 2])), (slice(None), 0, slice(None), I([1, 2])),
    (slice(None), I([0, 1]), 1), (0, slice(None), I([0, 1])), (Ellipsis, I([0, 4, 2])),
    (None, 0, None, slice(None), I([0, 1])), (I([0, 1]), None, I([0, 1])),
    (I([[0, 1], [1, 0]]), slice(None), I([[0], [2]])), (slice(None, None, -1), I([0, 2])),
    (I([0, 1]), slice(1, 3), slice(None, None, -2), I([4, 0])), (1, I([2, 0]), 3),
    (0, 0, I([], dtype=np.int32)), (I([True, False]),),
    (slice(None), I([True, False, True])), (I([[True, False, True], [False, False, True]]),),
    (I([True, False]), slice(None), I([1, 3])), (Ellipsis, I([True, False, True, True, False])),
    True, (0, False), (np.int32(1), np.int64(-1)), ([0, 1], 0), (0, [1, 2]),
]


@pytest.mark.parametrize("idx", INDICES, ids=[repr(i).replace(" ", "") for i in INDICES])
def test_getitem_matches_numpy(idx):
    expected = X[idx]
    out = jnp.asarray(X)[_jax_index(idx)]
    assert isinstance(out, xjax.Array)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("idx", [i for i in INDICES if not (
    isinstance(i, np.ndarray) and i.dtype == bool or isinstance(i, tuple) and any(
        isinstance(j, np.ndarray) and j.dtype == bool for j in i))],
    ids=lambda i: repr(i).replace(" ", ""))
def test_getitem_under_jit(idx):
    out = xjax.jit(lambda x: x[_jax_index(idx)])(jnp.asarray(X))
    np.testing.assert_array_equal(np.asarray(out), X[idx])


def test_traced_integer_indices():
    x = jnp.asarray(X)
    f = xjax.jit(lambda x, i, j: x[i, :, j])
    np.testing.assert_array_equal(f(x, 1, -2), X[1, :, -2])
    g = xjax.jit(lambda x, i: x[i])
    np.testing.assert_array_equal(g(x, jnp.array([1, 0])), X[[1, 0]])
    h = xjax.jit(lambda x, i: x[:, i, 1:3])
    np.testing.assert_array_equal(h(x, 2), X[:, 2, 1:3])
    v = jnp.arange(10)
    loop_sum = 0
    for i in range(10):
        loop_sum = loop_sum + xjax.jit(lambda i: v[i])(i)
    assert int(loop_sum) == 45


def test_traced_scalar_index_below_minus_size_clamps_after_one_wrap():
    # as JAX: -4 on 3 elements counts from the end once (-1) and clamps to 0; never wraps
    # twice (which read x[2])
    x = jnp.arange(3.0)
    read = xjax.jit(lambda x, i: x[i])
    for i, expected in [(-1, 2.0), (-3, 0.0), (-4, 0.0), (-5, 0.0), (-100, 0.0), (7, 2.0)]:
        assert float(read(x, i)) == expected, i
    matrix = jnp.arange(12.0).reshape(3, 4)
    assert float(xjax.jit(lambda m, i: m[i, -1])(matrix, -4)) == 3.0


def test_out_of_bounds_reads_clamp():
    x = jnp.arange(10)
    assert int(x[10]) == 9 and int(x[-11]) == 0
    np.testing.assert_array_equal(x[jnp.array([12, -20])], [9, 0])
    assert int(xjax.jit(lambda x, i: x[i])(x, 15)) == 9
    np.testing.assert_array_equal(xjax.jit(lambda x, i: x[i])(x, jnp.array([12, -20])), [9, 0])
    assert int(x.at[12].get()) == 9
    np.testing.assert_array_equal(x.at[jnp.array([-11, 10])].get(mode="clip"), [0, 9])
    np.testing.assert_array_equal(x.at[jnp.array([-11, 10])].get(mode="fill"),
                                  [np.iinfo(np.int32).min] * 2)
    np.testing.assert_array_equal(x.at[jnp.array([-11, 10])].get(mode="fill", fill_value=7),
                                  [7, 7])


def test_index_errors():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match="Using a non-tuple sequence for multidimensional "
                                        "indexing is not allowed"):
        jnp.arange(10)[[0, 2]]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got "
                                        "indexer with type float64"):
        x[1.0]
    with pytest.raises(TypeError, match="with type float32"):
        x[jnp.array(1.0)]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="Too many indices: array is 4-dimensional, but 5 "
                                         "were indexed"):
        x[0, 0, 0, 0, 0]
    with pytest.raises(IndexError, match="boolean index did not match shape"):
        x[jnp.array([True, False, True])]
    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        xjax.jit(lambda x, i: x[i:i + 2])(jnp.arange(10), 1)
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 2))[0]


def test_boolean_mask_under_jit_is_an_error():
    x = jnp.asarray(np.random.default_rng(0).standard_normal(10).astype(np.float32))
    negatives = x[x < 0]
    np.testing.assert_array_equal(negatives, np.asarray(x)[np.asarray(x) < 0])
    with pytest.raises(errors.NonConcreteBooleanIndexError,
                       match=r"Array boolean indices must be concrete; got bool\[10\]"):
        xjax.jit(lambda x: x[x < 0])(x)
    with pytest.raises(IndexError):
        xjax.jit(lambda x: x[x < 0])(x)


def test_item_assignment_is_refused():
    x = jnp.arange(3)
    with pytest.raises(TypeError, match=r"does not support item assignment\. JAX arrays are "
                                        r"immutable\. Instead of ``x\[idx\] = y``, use "
                                        r"``x = x.at\[idx\].set\(y\)``"):
        x[0] = 10


def test_iteration_yields_rows():
    rows = list(jnp.eye(3))
    assert len(rows) == 3
    np.testing.assert_array_equal(rows[1], [0, 1, 0])


# -- take ------------------------------------------------------------------------------------


def test_take():
    a = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(jnp.take(jnp.asarray(a), jnp.array([0, 2]), axis=1),
                                  np.take(a, [0, 2], axis=1))
    np.testing.assert_array_equal(jnp.take(jnp.asarray(a), 4), np.take(a, 4))
    np.testing.assert_array_equal(jnp.take(jnp.asarray(a), jnp.array([[0, 5], [1, 2]])),
                                  np.take(a, [[0, 5], [1, 2]]))
    out = jnp.take(jnp.arange(5.), jnp.array([0, 7]))
    assert float(out[0]) == 0 and np.isnan(float(out[1]))
    np.testing.assert_array_equal(jnp.take(jnp.arange(5), jnp.array([0, 7])),
                                  [0, np.iinfo(np.int32).min])
    np.testing.assert_array_equal(jnp.take(jnp.arange(5), jnp.array([0, -1])), [0, 4])
    np.testing.assert_array_equal(jnp.take(jnp.arange(5), jnp.array([7, -7]), mode="clip"),
                                  [4, 0])
    np.testing.assert_array_equal(jnp.take(jnp.arange(5), jnp.array([7, -7]), mode="wrap"),
                                  [2, 3])
    np.testing.assert_array_equal(jnp.arange(5).take(jnp.array([1])), [1])


def test_take_along_axis():
    a = np.arange(6).reshape(2, 3)
    idx = np.array([[0], [2]])
    np.testing.assert_array_equal(jnp.take_along_axis(jnp.asarray(a), jnp.asarray(idx), 1),
                                  np.take_along_axis(a, idx, 1))
    idx = np.argsort(-a, axis=0)
    np.testing.assert_array_equal(jnp.take_along_axis(jnp.asarray(a), jnp.asarray(idx), 0),
                                  np.take_along_axis(a, idx, 0))
    np.testing.assert_array_equal(
        jnp.take_along_axis(jnp.asarray(a), jnp.array([[0, 5]]), axis=1),
        [[0, np.iinfo(np.int32).min], [3, np.iinfo(np.int32).min]])


# -- .at[] ----------------------------------------------------------------------------------

AT_INDICES = [
    0, -1, (1, 2), (0, -1, 3, 4), slice(1, None), slice(None, None, -1),
    (slice(None), slice(0, 2)), (slice(None), slice(None, None, 2), 1), (Ellipsis, 1),
    (None, 0), (0, None, slice(None), None), I([0, 1]), I([[0], [1]]),
    (slice(None), I([2, 0])), (I([0, 1]), I([1, 2])), (I([0, 1]), slice(None), I([1, 2])),
    (slice(None), 0, slice(None), I([1, 2])), (None, 0, None, slice(None), I([0, 1])),
    (I([1, 0]), slice(1, 3), slice(None, None, -2), I([4, 0])), (I([True, False]),),
    (slice(None), I([True, False, True])), (), Ellipsis,
]
AT_OPS = {
    "set": lambda a, i, v: _np_set(a, i, v),
    "add": lambda a, i, v: _np_ufunc_at(np.add, a, i, v),
    "subtract": lambda a, i, v: _np_ufunc_at(np.subtract, a, i, v),
    "multiply": lambda a, i, v: _np_ufunc_at(np.multiply, a, i, v),
    "min": lambda a, i, v: _np_ufunc_at(np.minimum, a, i, v),
    "max": lambda a, i, v: _np_ufunc_at(np.maximum, a, i, v),
}


def _np_set(a, idx, v):
    out = a.copy()
    out[idx] = v
    return out


def _np_ufunc_at(ufunc, a, idx, v):
    out = a.copy()
    ufunc.at(out, idx, np.broadcast_to(v, a[idx].shape))
    return out


@pytest.mark.parametrize("op", sorted(AT_OPS))
@pytest.mark.parametrize("idx", AT_INDICES, ids=[repr(i).replace(" ", "") for i in AT_INDICES])
def test_at_updates_match_numpy(op, idx):
    values = np.float32(7) if op != "multiply" else np.float32(3)
    shape = X[idx].shape
    arrays = [values, (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 20) / 3]
    for v in arrays:
        expected = AT_OPS[op](X, idx, v)
        out = getattr(jnp.asarray(X).at[_jax_index(idx)], op)(jnp.asarray(v))
        assert out.dtype == np.float32 and out.shape == X.shape
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


@pytest.mark.parametrize("idx", [0, (slice(None), I([2, 0])), (slice(None), slice(None, None, -2)),
                                 (I([0, 1]), None, I([1, 2]))],
                         ids=lambda i: repr(i).replace(" ", ""))
def test_at_updates_under_jit(idx):
    f = xjax.jit(lambda x, v: x.at[_jax_index(idx)].add(v))
    expected = _np_ufunc_at(np.add, X, idx, np.float32(2))
    np.testing.assert_array_equal(f(jnp.asarray(X), 2.0), expected)
    g = xjax.jit(lambda x, i, v: x.at[i].set(v))
    np.testing.assert_array_equal(g(jnp.arange(5), 1, 9), [0, 9, 2, 3, 4])


def test_at_out_of_bounds_updates_are_dropped():
    x = jnp.arange(10)
    np.testing.assert_array_equal(x.at[12].set(5), np.arange(10))
    np.testing.assert_array_equal(x.at[-11].add(1), np.arange(10))
    np.testing.assert_array_equal(x.at[jnp.array([-11, 10, 3])].set(100),
                                  [0, 1, 2, 100, 4, 5, 6, 7, 8, 9])
    np.testing.assert_array_equal(x.at[10].set(5, mode="clip"), [0, 1, 2, 3, 4, 5, 6, 7, 8, 5])
    np.testing.assert_array_equal(x.at[jnp.array([1, 12])].add(5),
                                  [0, 6, 2, 3, 4, 5, 6, 7, 8, 9])
    y = jnp.zeros((3, 4))
    np.testing.assert_array_equal(y.at[:, 7].set(1.0), np.zeros((3, 4)))
    np.testing.assert_array_equal(y.at[5:, 1].set(1.0), np.zeros((3, 4)))
    np.testing.assert_array_equal(xjax.jit(lambda y, i: y.at[i].set(1.0))(y, 3),
                                  np.zeros((3, 4)))


def test_at_repeated_indices_accumulate():
    np.testing.assert_array_equal(jnp.arange(5).at[jnp.array([0, 0, 2])].add(1),
                                  [2, 1, 3, 3, 4])
    np.testing.assert_array_equal(jnp.ones(3).at[jnp.array([1, 1])].multiply(3.), [1, 9, 1])


def test_at_divide_power_apply_and_dtypes():
    x = jnp.arange(10)
    out = x.at[1].divide(2)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [0, .5, 2, 3, 4, 5, 6, 7, 8, 9])
    np.testing.assert_array_equal(x.at[2].power(3), [0, 1, 8, 3, 4, 5, 6, 7, 8, 9])
    np.testing.assert_array_equal(x.at[jnp.array([1, 3])].apply(lambda v: v * 10),
                                  [0, 10, 2, 30, 4, 5, 6, 7, 8, 9])
    np.testing.assert_array_equal(x.at[12].apply(lambda v: v * 10), np.arange(10))
    np.testing.assert_array_equal(x.at[0].set(1.7), [1, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert x.at[0].set(1.7).dtype == np.int32
    np.testing.assert_array_equal(x.at[0].mul(5), np.arange(10))
    w = jnp.full(3, 2.0)
    assert w.at[0].set(1.0).weak_type
    with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
        x.at[2:5].set(jnp.array([1, 2]))


def test_seed_examples():
    a = jnp.zeros((3, 3), dtype=jnp.float32)
    np.testing.assert_array_equal(a.at[1, :].set(1.0), [[0, 0, 0], [1, 1, 1], [0, 0, 0]])
    x = jnp.arange(10)
    y = x.at[0].set(10)
    np.testing.assert_array_equal(x, np.arange(10))
    np.testing.assert_array_equal(y, [10, 1, 2, 3, 4, 5, 6, 7, 8, 9])


def test_take_refuses_non_integer_indices_as_jax():
    with pytest.raises(ValueError, match="indices must have an integer type"):
        jnp.take(jnp.arange(3.0), 1.5)
    with pytest.raises(ValueError, match="indices must have an integer type"):
        jnp.take(jnp.arange(3.0), jnp.array([0.0, 1.0]))
    # booleans are read as 0 and 1 (not as a mask), as JAX's take does
    np.testing.assert_array_equal(jnp.take(jnp.arange(3.0), jnp.array([True, False])),
                                  [1.0, 0.0])
