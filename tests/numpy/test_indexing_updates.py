"""Regressions found by differential fuzzing of ``x.at[idx]`` against JAX: update values
combine in the promoted dtype before being cast back, ``apply`` runs once per selection,
updates that select nothing leave ``x`` alone, and a ``ds`` window of a whole axis."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

# JAX (and xjax) warn of casts its promotion would not make; several tests make them.
pytestmark = pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")


def test_unsafe_cast_warns_as_jax():
    x = jnp.zeros(3, jnp.int8)
    with pytest.warns(FutureWarning, match="from dtype=float32 to dtype=int8"):
        x.at[0].set(1.5)
    with pytest.warns(FutureWarning, match="from dtype=int32 to dtype=int8"):
        x.at[0].set(np.int32(3))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.at[0].set(3)  # a Python int that fits takes x's dtype
        jnp.zeros(3).at[0].add(np.int16(2))


def _both(f, *args):
    """f eagerly and jitted, as NumPy arrays."""
    return [np.asarray(g(*args)) for g in (f, xjax.jit(f))]


def test_float_addend_rounds_once_into_float16():
    x = np.array([1.123, 2.82, 2.268], np.float16)
    v = np.array([1.1124862, 0.59274626, 1.6724942], np.float32)
    want = (x.astype(np.float32) + v).astype(np.float16)  # one rounding, as JAX
    assert not np.array_equal(want, x + v.astype(np.float16))  # two roundings differ
    for got in _both(lambda x: x.at[:].add(v), jnp.asarray(x)):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)


def test_float_factors_into_int_combine_before_truncation():
    x = np.array([3, 5], np.int8)
    for got in _both(lambda x: x.at[np.array([0, 0, 1])].multiply(
            np.array([1.5, 1.5, 0.5], np.float32)), jnp.asarray(x)):
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, np.array([int(3 * 1.5 * 1.5), int(5 * 0.5)]))
    y = np.arange(4, dtype=np.int32)
    got = jnp.asarray(y).at[1:].subtract(0.5)
    np.testing.assert_array_equal(np.asarray(got), (y - np.array([0, .5, .5, .5])).astype(
        np.int32))


def test_float_values_into_bool_compare_as_floats():
    x = np.array([False, True])
    got = np.asarray(jnp.asarray(x).at[()].max(-0.5))
    np.testing.assert_array_equal(got, np.maximum(x, -0.5).astype(bool))
    got = np.asarray(jnp.asarray(x).at[:].min(0.25))
    np.testing.assert_array_equal(got, np.minimum(x, 0.25).astype(bool))


def test_bool_operands_multiply_divide_and_power_through_promotion():
    x = np.array([True, False, True])
    got = jnp.asarray(x).at[0].multiply(np.int8(0))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), [False, False, True])
    got = jnp.asarray(x).at[1:].divide(2.0)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), x / np.array([1, 2.0, 2.0]).astype(bool))
    with pytest.raises(TypeError):  # bool with bool stays bool: no multiply (as JAX)
        jnp.asarray(x).at[0].multiply(True)


def test_weak_type_of_x_is_kept():
    # a weak float32 x and float16 values add in float16 (2 + 1.0009765625 rounds to 3)
    out = xjax.jit(lambda x: x.at[()].add(np.float16(1.0009765625)))(2.0)
    assert out.dtype == np.float32 and out.weak_type
    assert float(out) == float(np.float16(2.0) + np.float16(1.0009765625))


def test_apply_runs_once_per_selection():
    x = np.arange(6, dtype=np.float32)
    idx = np.array([1, 1, 3, 7])
    f = lambda v: v * 2 + 1
    want = x.copy()
    for i in idx:
        if i < x.size:
            want[i] = f(want[i])
    for got in _both(lambda x: x.at[idx].apply(f), jnp.asarray(x)):
        np.testing.assert_array_equal(got, want)
    clipped = x.copy()
    for i in np.minimum(idx, x.size - 1):
        clipped[i] = f(clipped[i])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x).at[idx].apply(f, mode="clip")),
                                  clipped)
    # as in JAX, not differentiable even where each element is selected once
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        xjax.grad(lambda x: x.at[1:4].apply(jnp.sin).sum())(jnp.asarray(x))


def test_updates_that_select_nothing_return_x():
    x = np.zeros((0, 4), np.int32)
    for got in _both(lambda x: x.at[None, np.array([[0, 0, 0]])].power(2.5), jnp.asarray(x)):
        assert got.shape == (0, 4) and got.dtype == np.int32
    b = np.ones((1, 0), bool)
    got = jnp.asarray(b).at[...].multiply(np.ones((1, 0), bool))  # no multiply needed
    assert got.shape == (1, 0) and got.dtype == np.bool_
    with pytest.raises(IndexError, match="size 0"):
        jnp.zeros(0).at[np.int64(0)].max(1.0)
    with pytest.raises(IndexError, match="size 0"):
        xjax.jit(lambda x, i: x.at[i].set(1.0))(jnp.zeros(0), 0)


def test_ds_window_of_whole_axis_ignores_its_start():
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    for start in (-2, 0, 2, 9):
        got = jnp.asarray(x).at[xjax.ds(start, 4)].add(1)
        np.testing.assert_array_equal(np.asarray(got), x + 1)
        got = jnp.asarray(x).at[xjax.ds(start, 4)].get(mode="fill")
        np.testing.assert_array_equal(np.asarray(got), x)
    # a smaller window that does not fit is still dropped / filled whole
    got = jnp.asarray(x).at[xjax.ds(3, 2)].add(1)
    np.testing.assert_array_equal(np.asarray(got), x)


@pytest.mark.parametrize("case", range(6))
def test_matches_jax(case):
    jax = pytest.importorskip("jax")
    x16 = np.array([1.123, 2.82, 2.268], np.float16)
    cases = [
        (x16, lambda n, x: x.at[:].add(np.array([1.1124862, 0.59274626, 1.6724942],
                                                np.float32))),
        (np.array([3, 5], np.int8), lambda n, x: x.at[np.array([0, 0, 1])].multiply(
            np.array([1.5, 1.5, 0.5], np.float32))),
        (np.array([False, True]), lambda n, x: x.at[()].max(-0.5)),
        (np.array([True, False, True]), lambda n, x: x.at[1:].divide(2.0)),
        (np.arange(6, dtype=np.float32),
         lambda n, x: x.at[np.array([1, 1, 3, 7])].apply(lambda v: v * 2 + 1)),
        (np.arange(20, dtype=np.int32).reshape(4, 5),
         lambda n, x: x.at[n.ds(-2, 4)].add(1)),
    ]
    x, f = cases[case]
    want = f(jax, jax.numpy.asarray(x))
    got = f(xjax, jnp.asarray(x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
