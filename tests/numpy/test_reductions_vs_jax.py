"""Reductions, cumulative ops, sorting, set operations and statistics against JAX itself:
values, dtypes, shapes and error classes on fixed random inputs (NaN/inf, empty, bool,
unsigned, half floats, complex). Skips without JAX."""

import numpy as np
import pytest

import xjax
import xjax.numpy as xnp

RNG_SEED = 0
DTYPES = ["float32", "int32", "int8", "uint8", "bool", "float16", "complex64"]
SHAPES_AXES = [((5,), None), ((5,), -1), ((3, 4), 0), ((3, 4), (1, 0)), ((3, 4), 2),
               ((0, 3), 0), ((0, 3), None), ((2, 0, 3), 1)]
REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "ptp", "all", "any",
              "argmax", "nanargmin", "count_nonzero", "nansum", "nanmean", "nanvar", "nanmax",
              "median", "nanmedian"]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 5, shape).astype(dtype)
    x = rng.integers(-3, 3, shape) / 2
    if dtype.kind == "c":
        x = x + 1j * rng.integers(-2, 2, shape)
    x = x.astype(dtype)
    if x.size > 2 and dtype.kind == "f":
        x.reshape(-1)[[0, x.size // 2]] = [np.nan, np.inf]
    return x


def _run(module, fun, args):
    try:
        return "ok", fun(module, *args)
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return "error", error


def _assert_same(fun, *args, exact=False):
    jax = pytest.importorskip("jax")
    expected_kind, expected = _run(jax.numpy, fun, args)
    kind, out = _run(xnp, fun, args)
    if expected_kind == "error":
        assert kind == "error", f"JAX raised {expected!r}, xjax returned {out}"
        assert isinstance(out, type(expected)), (out, expected)
        return
    assert kind == "ok", f"xjax raised {out!r}, JAX returned {expected}"
    expected_leaves = jax.tree_util.tree_leaves(expected)
    leaves = xjax.tree_util.tree_leaves(out)
    assert len(leaves) == len(expected_leaves)
    for leaf, want_leaf in zip(leaves, expected_leaves):
        got, want = np.asarray(leaf), np.asarray(want_leaf)
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        assert bool(leaf.weak_type) == bool(getattr(want_leaf, "weak_type", False))
        if exact or got.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want)
        else:
            tol = 1e-2 if got.dtype.itemsize <= 2 else 2e-5
            np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                                       rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(name, dtype):
    rng = np.random.default_rng(RNG_SEED)
    for shape, axis in [SHAPES_AXES[i] for i in rng.choice(len(SHAPES_AXES), 2, False)]:
        if name in ("argmax", "nanargmin") and isinstance(axis, tuple):
            axis = -1
        if "median" in name and 0 in shape and axis is not None:
            continue  # JAX fails to gather from an empty reduced axis
        x = _data(shape, dtype, len(shape))
        keepdims = bool(rng.integers(2))
        _assert_same(lambda m, a: getattr(m, name)(a, axis=axis, keepdims=keepdims), x)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all", "mean", "var",
                                  "nansum", "nanmax", "nanmin"])
def test_where_initial_and_dtype(name):
    x = _data((3, 4), "float32", 1)
    mask = _data((3, 4), "bool", 2)
    extra = {"initial": 0.5} if name in ("max", "min", "nanmax", "nanmin") else {}
    _assert_same(lambda m, a, w: getattr(m, name)(a, axis=1, where=w, **extra), x, mask)
    if name in ("sum", "prod", "nansum", "nanmax", "nanmin", "max", "min"):
        _assert_same(lambda m, a: getattr(m, name)(a, axis=0, initial=2), np.zeros((0, 3),
                                                                                 np.float32))
    if name in ("sum", "prod", "nansum", "mean"):
        for dtype in ["bool", "int32", "float16", "complex64"][name == "mean":]:
            _assert_same(lambda m, a: getattr(m, name)(a, axis=0, dtype=dtype), x)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "cumulative_sum"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "bool", "float16"])
def test_cumulative(name, dtype):
    x = _data((3, 4), dtype, 3)
    extra = {"include_initial": True} if name == "cumulative_sum" else {}
    _assert_same(lambda m, a: getattr(m, name)(a, axis=1, **extra), x)
    if name != "cumulative_sum":
        _assert_same(lambda m, a: getattr(m, name)(a), x)


@pytest.mark.parametrize("name", ["cummax", "cummin", "cumsum", "cumprod"])
def test_lax_cumulative_reverse_and_grad(name):
    jax = pytest.importorskip("jax")
    x = _data((3, 4), "float32", 4)
    x = np.where(np.isfinite(x), x, 1).astype(np.float32)
    for reverse in (False, True):
        want = getattr(jax.lax, name)(x, axis=1, reverse=reverse)
        got = getattr(xjax.lax, name)(x, axis=1, reverse=reverse)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        grad_want = jax.grad(lambda a: getattr(jax.lax, name)(a, 1, reverse).sum())(x)
        grad_got = xjax.grad(lambda a: getattr(xjax.lax, name)(a, 1, reverse).sum())(x)
        np.testing.assert_allclose(grad_got, grad_want, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool", "float16", "complex64"])
def test_sorting(dtype):
    x = _data((3, 6), dtype, 5)
    for axis in (-1, 0, None):
        _assert_same(lambda m, a: m.sort(a, axis=axis), x, exact=True)
        _assert_same(lambda m, a: m.argsort(a, axis=axis, stable=True), x)
        _assert_same(lambda m, a: m.argsort(a, axis=axis, stable=True, descending=True), x)
    _assert_same(lambda m, a: m.lexsort(a), x)
    if dtype != "complex64":
        _assert_same(lambda m, a: m.partition(a, 2)[..., 2], x, exact=True)
        _assert_same(lambda m, a: m.searchsorted(m.sort(a[0]), a), x)
        _assert_same(lambda m, a: m.digitize(a, m.sort(a[0])), x)


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_unique_and_set_operations(dtype):
    x = _data((3, 6), dtype, 6)
    y = _data((5,), dtype, 7)
    for flags in [(False, False, False), (True, True, True)]:
        _assert_same(lambda m, a: m.unique(a, *flags), x, exact=True)
        _assert_same(lambda m, a: m.unique(a, *flags, axis=0), x[[0, 1, 0]], exact=True)
        _assert_same(lambda m, a: m.unique(a, *flags, size=20, fill_value=1), x, exact=True)
    for name in ["union1d", "intersect1d", "setdiff1d", "setxor1d"]:
        _assert_same(lambda m, a, b: getattr(m, name)(a, b), x[0], y, exact=True)
        _assert_same(lambda m, a, b: getattr(m, name)(a, b, size=8), x[0], y, exact=True)
        if dtype == "float32":
            _assert_same(lambda m, a, b: getattr(m, name)(a, b, size=3),
                         np.zeros((0,), x.dtype), y, exact=True)
    _assert_same(lambda m, a, b: m.isin(a, b), x, y)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_statistics(dtype):
    x = _data((3, 5), dtype, 8)
    x = np.where(np.isfinite(x), x, 0).astype(dtype)
    weights = np.array([1., 2, .5, 1, 3], np.float32)
    _assert_same(lambda m, a: m.cov(a), x)
    _assert_same(lambda m, a: m.corrcoef(a), x)
    _assert_same(lambda m, a: m.average(a, axis=1, weights=weights, returned=True), x)
    _assert_same(lambda m, a: m.histogram(a, bins=4, range=(-2, 2)), x)
    for method in ["linear", "lower", "higher", "midpoint", "nearest"]:
        _assert_same(lambda m, a: m.quantile(a, np.array([0., .3, 1.]), axis=1,
                                             method=method), x)
    _assert_same(lambda m, a: m.bincount(np.abs(a).astype(np.int32), length=6), x)


@pytest.mark.parametrize("name", ["mean", "var", "std", "argmax", "sum", "median", "cumsum"])
def test_out_of_range_axis_errors(name):
    _assert_same(lambda m, a: getattr(m, name)(a, axis=2), np.ones((2, 3), np.float32))
