"""The CPU's radix-sort custom call (``xjax_sort``) against XLA's own comparison sort and
NumPy: the same bits and the same order of equal keys, for every key dtype it takes, short
rows (insertion) and long ones (radix), any sorted dimension, payloads (argsort), NaNs,
signed zeros and infinities."""

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.lax import sorting
from xjax._src.runtime import ffi

pytestmark = pytest.mark.skipif(ffi.SORT_TARGET not in ffi.ffi_targets("cpu"),
                                reason="the CPU plugin has no FFI extension")


def _xla_sort(monkeypatch, fun, *args):
    """``fun`` jitted with the radix sort switched off: XLA's comparison sort."""
    with monkeypatch.context() as m:
        m.setattr(sorting, "_radix_sort_applies", lambda *a, **k: False)
        return _outputs(xjax.jit(fun)(*args))


def _outputs(result):
    results = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(r) for r in results]


def _assert_same_bits(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


def _keys(dtype, shape, rng):
    """Random keys with many ties and, for floats, NaNs of both signs, signed zeros and
    infinities."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        return np.where(rng.random(shape) < 0.5, wide, (wide % 7).astype(dtype))
    x = (rng.standard_normal(shape) * 4).round(1).astype(dtype)  # rounding: ties
    specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf], dtype)
    mask = rng.random(shape) < 0.2
    return np.where(mask, specials[rng.integers(0, specials.size, shape)], x)


KEY_DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.int16,
              np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def test_sort_lowers_to_the_custom_call_on_the_cpu():
    text = xjax.jit(jnp.sort).lower(np.ones(8, np.float32)).as_text()
    assert ffi.SORT_TARGET in text and "stablehlo.sort" not in text
    # two keys: XLA's sort
    text = xjax.jit(lambda a, b: lax.sort((a, b), num_keys=2)).lower(
        np.ones(8, np.float32), np.ones(8, np.float32)).as_text()
    assert ffi.SORT_TARGET not in text and "stablehlo.sort" in text


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((33,), 0), ((5000,), 0),
                                        ((40, 50), 1), ((40, 50), 0), ((3, 100, 4), 1),
                                        ((2, 3, 70), -1), ((0, 5), 1), ((4, 0), 1)])
def test_sort_and_argsort_match_xla_and_numpy(monkeypatch, dtype, shape, axis):
    rng = np.random.default_rng(abs(hash((np.dtype(dtype).name, shape, axis))) % 2**32)
    x = _keys(dtype, shape, rng)
    for fun in (lambda v: jnp.sort(v, axis=axis), lambda v: jnp.argsort(v, axis=axis)):
        got = _outputs(xjax.jit(fun)(x))
        _assert_same_bits(got, _xla_sort(monkeypatch, fun, x))
        _assert_same_bits(got, _outputs(fun(x)))  # eager: NumPy's kernel


def _plain_keys(dtype, shape, rng):
    """Keys whose integer images keep every bit (no -0.0, only the canonical NaN): the sorted
    keys are read back from their images instead of gathered."""
    x = _keys(dtype, shape, rng)
    if x.dtype.kind in "iub":
        return x
    x = np.where(np.isnan(x), np.array(np.nan, x.dtype), x)
    return np.where(x == 0, np.zeros((), x.dtype), x)


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,axis", [((40, 50), 1), ((70000,), 0), ((2, 66000), 1)])
def test_keys_read_back_from_their_images(monkeypatch, dtype, shape, axis):
    # rows of 2**16 or more take 11-bit digits where the image is 4 bytes and sorted alone
    rng = np.random.default_rng(abs(hash((np.dtype(dtype).name, shape))) % 2**32)
    x = _plain_keys(dtype, shape, rng)
    for fun in (lambda v: jnp.sort(v, axis=axis), lambda v: jnp.argsort(v, axis=axis)):
        got = _outputs(xjax.jit(fun)(x))
        _assert_same_bits(got, _xla_sort(monkeypatch, fun, x))
        _assert_same_bits(got, _outputs(fun(x)))


def test_rows_with_and_without_lossy_keys_and_iota_payloads(monkeypatch):
    # per row: keys with or without -0.0 (gathered or read back), a payload that is or is
    # not 0..n-1 (the order itself or a gather)
    rng = np.random.default_rng(4)
    keys = _plain_keys(np.float32, (4, 300), rng)
    keys[1::2, ::7] = -0.0
    payload = np.tile(np.arange(300, dtype=np.int32), (4, 1))
    payload[2:] = rng.permutation(300)
    fun = lambda k, v: lax.sort((k, v), dimension=1, num_keys=1)  # noqa: E731
    got = _outputs(xjax.jit(fun)(keys, payload))
    _assert_same_bits(got, _xla_sort(monkeypatch, fun, keys, payload))
    order = np.argsort(np.where(keys == 0, 0, keys), axis=1, kind="stable")
    np.testing.assert_array_equal(got[1], np.take_along_axis(payload, order, 1))


@pytest.mark.parametrize("payload", [np.int32, np.complex128, np.float16, np.bool_])
def test_payloads_follow_the_keys(monkeypatch, payload):
    rng = np.random.default_rng(1)
    keys = _keys(np.float32, (6, 300), rng)
    values = rng.standard_normal((6, 300)).astype(payload)
    fun = lambda k, v, w: lax.sort((k, v, w), dimension=1, num_keys=1)  # noqa: E731
    extra = np.arange(1800, dtype=np.int64).reshape(6, 300)
    got = _outputs(xjax.jit(fun)(keys, values, extra))
    _assert_same_bits(got, _xla_sort(monkeypatch, fun, keys, values, extra))
    order = np.lexsort([np.where(np.isnan(keys), np.inf, keys), np.isnan(keys)], axis=1)
    np.testing.assert_array_equal(got[2], np.take_along_axis(extra, order, 1))


def test_unstable_integer_sort_alone_takes_the_custom_call(monkeypatch):
    x = np.random.default_rng(2).integers(-50, 50, 1000).astype(np.int32)
    fun = lambda v: lax.sort(v, is_stable=False)  # noqa: E731
    assert ffi.SORT_TARGET in xjax.jit(fun).lower(x).as_text()
    _assert_same_bits(_outputs(xjax.jit(fun)(x)), [np.sort(x)])
    # an unstable float sort keeps XLA's (its order of -0.0 and 0.0 is XLA's to choose)
    assert ffi.SORT_TARGET not in xjax.jit(
        lambda v: lax.sort(v, is_stable=False)).lower(x.astype(np.float32)).as_text()


def test_sort_under_vmap_and_grad(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    fun = lambda v: xjax.vmap(jnp.sort)(v)  # noqa: E731
    _assert_same_bits(_outputs(xjax.jit(fun)(x)), _xla_sort(monkeypatch, fun, x))
    grad = xjax.jit(xjax.grad(lambda v: (jnp.sort(v) * np.arange(64.0, dtype=np.float32)).sum()))
    got = np.asarray(grad(x[0]))
    want = np.zeros(64, np.float32)
    want[np.argsort(x[0], kind="stable")] = np.arange(64.0)
    np.testing.assert_array_equal(got, want)
