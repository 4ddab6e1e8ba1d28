"""Comparisons, select_n and clamp: results, weak types, JAX's error messages (measured on
JAX 0.10.2), eagerly and under jit."""

import re

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.core import dtypes
from xjax._src.lax.compare import eq_to_p, le_to_p, lt_to_p

MODES = ["eager", "jit"]


def run(mode, fun, *args):
    return xjax.jit(fun)(*args) if mode == "jit" else fun(*args)


def f32(*values):
    return np.array(values, np.float32)


@pytest.mark.parametrize("mode", MODES)
def test_comparisons(mode):
    x, y = f32(np.nan, 0.0, 1.0, 2.0), f32(np.nan, -0.0, 2.0, 1.0)
    for fun, want in ((lax.eq, [False, True, False, False]), (lax.ne, [True, False, True, True]),
                      (lax.lt, [False, False, True, False]), (lax.le, [False, True, True, False]),
                      (lax.gt, [False, False, False, True]), (lax.ge, [False, True, False, True])):
        out = run(mode, fun, x, y)
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(out), want)


def test_comparison_weak_types_and_errors():
    assert lax.eq(1.0, 1.0).aval.weak_type
    assert not lax.eq(f32(1, 2), 1.0).aval.weak_type
    with pytest.raises(TypeError, match=re.escape("lax.eq requires arguments to have the same "
                                                  "dtypes, got int32, float32. (Tip: jnp.equal")):
        lax.eq(1, 1.0)
    with pytest.raises(TypeError, match="lt does not accept dtype complex64 at position 0"):
        lax.lt(np.ones(1, np.complex64), np.ones(1, np.complex64))


@pytest.mark.parametrize("mode", MODES)
def test_total_order_comparisons(mode):
    x = f32(-np.nan, -np.inf, -0.0, 0.0, np.nan, 1.0)
    y = f32(-np.inf, -np.inf, 0.0, -0.0, np.inf, np.nan)
    np.testing.assert_array_equal(np.asarray(run(mode, lt_to_p.bind, x, y)),
                                  [True, False, True, False, False, True])
    np.testing.assert_array_equal(np.asarray(run(mode, le_to_p.bind, x, y)),
                                  [True, True, True, False, False, True])
    np.testing.assert_array_equal(np.asarray(run(mode, eq_to_p.bind, x, x)), [True] * 6)


@pytest.mark.parametrize("mode", MODES)
def test_select_n_clamps_indices(mode):
    cases = [np.zeros(5, np.float32), np.ones(5, np.float32), np.full(5, 2, np.float32)]
    which = np.array([0, 1, 2, 5, -1], np.int32)
    out = run(mode, lax.select_n, which, *cases)
    np.testing.assert_array_equal(np.asarray(out), [0, 1, 2, 2, 0])
    two = run(mode, lax.select_n, np.array([-1, 0, 1, 7], np.int8), *[c[:4] for c in cases[:2]])
    np.testing.assert_array_equal(np.asarray(two), [0, 0, 1, 1])


@pytest.mark.parametrize("mode", MODES)
def test_select(mode):
    pred = np.array([True, False])
    out = run(mode, lax.select, pred, f32(1, 2), f32(3, 4))
    np.testing.assert_array_equal(np.asarray(out), [1, 4])
    out = run(mode, lambda p: lax.select_n(p, f32(1, 2), f32(3, 4)), np.bool_(True))
    np.testing.assert_array_equal(np.asarray(out), [3, 4])
    text = str(xjax.make_jaxpr(lax.select)(pred, f32(1, 2), f32(3, 4)))
    assert "select_n a c b" in text


@pytest.mark.parametrize("args,error,message", [
    ((np.array(True),), ValueError, "select_n() must have at least one case"),
    ((np.array([True]), f32(0), f32(1), f32(2)), TypeError,
     "select with boolean `which` cannot have > 2 cases."),
    ((f32(0, 1), f32(0, 1), f32(1, 2)), TypeError,
     "select `which` must be boolean or integer type, got float32."),
    ((np.array([True, False]), 0.0, 1.0), TypeError,
     "select `which` must be scalar or have the same shape as cases, got `which` shape (2,) "
     "but case shape ()."),
    ((np.array([True, False]), f32(0, 1), np.ones(2, np.int32)), TypeError,
     "lax.select requires arguments to have the same dtypes, got float32, int32. (Tip: "
     "jnp.where is a similar function"),
    ((np.array([True, False]), f32(0, 1), 1.0), TypeError,
     "select cases must have the same shapes, got [(2,), ()]."),
])
def test_select_n_errors(args, error, message):
    with pytest.raises(error, match=re.escape(message)):
        lax.select_n(*args)


def test_select_n_weak_type():
    assert lax.select_n(True, 1.0, 2.0).aval.weak_type
    assert not lax.select_n(True, 1.0, np.float32(2.0)).aval.weak_type


@pytest.mark.parametrize("mode", MODES)
def test_clamp(mode):
    x = f32(-1.0, 0.5, 2.0, np.nan)
    out = run(mode, lambda x: lax.clamp(np.float32(0), x, np.float32(1)), x)
    np.testing.assert_array_equal(np.asarray(out), [0.0, 0.5, 1.0, np.nan])
    # min > max: XLA's min(max(x, lo), hi) gives hi
    out = run(mode, lambda x: lax.clamp(np.float32(2), x, np.float32(1)), f32(-1, 2))
    np.testing.assert_array_equal(np.asarray(out), [1, 1])


@pytest.mark.parametrize("mode", MODES)
def test_complex_clamp_compares_real_parts(mode):
    lo = np.array([1 + 1j, 0, np.nan], np.complex64)
    x = np.array([1 + 2j, 1j, 2 + 0j], np.complex64)
    hi = np.array([2, 1j, 3], np.complex64)
    out = run(mode, lax.clamp, lo, x, hi)
    np.testing.assert_array_equal(np.asarray(out), np.array([1 + 1j, 0, 2], np.complex64))


def test_clamp_errors_and_weak_type():
    with pytest.raises(TypeError, match=re.escape(
            "clamp requires min.shape == operand.shape or min.shape == (), got "
            "min.shape=(3,), operand.shape=(2,).")):
        lax.clamp(np.zeros(3, np.float32), f32(1, 2), np.float32(1))
    with pytest.raises(TypeError, match=re.escape(
            "lax.clamp requires arguments to have the same dtypes, got int32, float32, int32.")):
        lax.clamp(0, f32(1, 2), 1)
    assert lax.clamp(0, 5, 3).aval.weak_type
    assert not lax.clamp(np.float32(0), 1.0, 2.0).aval.weak_type


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bfloat16", np.int8,
                                   np.uint16, np.int64, np.complex64, np.bool_])
def test_large_boolean_select_blends_bits_exactly(dtype):
    """Large boolean selects take a branch-free path: every bit as np.where (NaN payloads,
    signed zeros, infinities)."""
    rng = np.random.default_rng(0)
    dtype = np.dtype(dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    n = 1 << 15
    a = (rng.standard_normal(n) * 50).astype(dtype)
    b = (rng.standard_normal(n) * 50).astype(dtype)
    if dtypes.is_float(dtype):
        a[:4] = np.array([np.nan, -0.0, np.inf, -np.inf]).astype(dtype)
    which = rng.random(n) < 0.5
    with xjax.enable_x64(dtype.itemsize == 8 and dtype.kind != "c"):
        got = np.asarray(lax.select_n(which, b, a))
        got2d = np.asarray(lax.select_n(which.reshape(128, -1), b.reshape(128, -1),
                                        a.reshape(128, -1)))
    want = np.where(which, a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(got2d.view(np.uint8).ravel(), want.view(np.uint8))
