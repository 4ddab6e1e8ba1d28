"""Slicing, gather and scatter: clamping of dynamic starts, gather/scatter modes and
dimension numbers (batching dims included), JAX's error messages, and differential checks
against JAX where it is installed."""

import re

import numpy as np
import pytest

import xjax
from xjax import lax

MODES = ["eager", "jit", "xla"]
GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers


def run(mode, fun, *args):
    if mode == "jit":
        return xjax.jit(fun)(*args)
    if mode == "xla":
        with xjax.config.override(xjax_eager_via_xla=True):
            return fun(*args)
    return fun(*args)


X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("mode", MODES)
def test_slice_with_strides(mode):
    x = np.arange(30, dtype=np.int32).reshape(5, 6)
    out = run(mode, lambda x: lax.slice(x, (1, 0), (5, 6), (2, 4)), x)
    np.testing.assert_array_equal(out, x[1:5:2, 0:6:4])
    np.testing.assert_array_equal(run(mode, lambda x: lax.slice_in_dim(x, -3, -1, axis=1), x),
                                  x[:, -3:-1])
    np.testing.assert_array_equal(run(mode, lambda x: lax.index_in_dim(x, -1, 1, False), x),
                                  x[:, -1])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("starts,expected_starts", [
    ((2, 3), (1, 2)),      # clamped so the 2x2 window fits
    ((-1, -10), (1, 0)),   # -1 -> 2 -> clamped to 1; -10 -> -6 -> clamped to 0
    ((0, 1), (0, 1)),
])
def test_dynamic_slice_clamps(mode, starts, expected_starts):
    i, j = expected_starts
    out = run(mode, lambda x, a, b: lax.dynamic_slice(x, (a, b), (2, 2)), X,
              np.int32(starts[0]), np.int32(starts[1]))
    np.testing.assert_array_equal(out, X[i:i + 2, j:j + 2])
    out = run(mode, lambda x: lax.dynamic_slice(x, starts, (2, 2)), X)
    np.testing.assert_array_equal(out, X[i:i + 2, j:j + 2])


@pytest.mark.parametrize("mode", MODES)
def test_dynamic_update_slice_clamps(mode):
    update = -np.ones((2, 2), np.float32)
    out = run(mode, lambda x, u, a: lax.dynamic_update_slice(x, u, (a, np.int32(-1))), X,
              update, np.int32(5))
    want = X.copy()
    want[1:3, 2:4] = -1
    np.testing.assert_array_equal(out, want)
    out = run(mode, lambda x: lax.dynamic_update_index_in_dim(x, np.zeros(3, np.float32), 1, 1),
              X)
    want = X.copy()
    want[:, 1] = 0
    np.testing.assert_array_equal(out, want)


def test_dynamic_slice_in_dim_helpers():
    x = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, 4, 3), [2, 3, 4])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, -1, keepdims=False), 4)
    np.testing.assert_array_equal(
        lax.dynamic_update_slice_in_dim(np.zeros(6, np.float32), np.ones(3, np.float32), 4, 0),
        [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(
        lax.index_take(X, (np.array([0, 2]), np.array([1, 3])), (0, 1)), [1, 11])


def test_dynamic_slice_without_negative_indices():
    out = lax.dynamic_slice(X, (-1, 0), (2, 2), allow_negative_indices=False)
    np.testing.assert_array_equal(out, X[0:2, 0:2])  # -1 clamps to 0 instead of wrapping


def test_dynamic_slice_traced_negative_start_jaxpr():
    text = str(xjax.make_jaxpr(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 3)))(X, 1))
    assert "lt b 0:i32[]" in text and "select_n" in text
    assert "dynamic_slice[slice_sizes=(2, 3)]" in text


ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
BATCHED = GDN(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(1,),
              operand_batching_dims=(0,), start_indices_batching_dims=(0,))
OP15 = np.arange(15, dtype=np.int32).reshape(3, 5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("gather_mode,fill,expected", [
    (None, None, [[8, 9, 10, 11], [0, 1, 2, 3]]),            # promise: XLA clamps
    ("clip", None, [[8, 9, 10, 11], [0, 1, 2, 3]]),
    ("fill", None, [[np.nan] * 4, [np.nan] * 4]),
    ("fill", -1, [[-1] * 4, [-1] * 4]),
])
def test_gather_modes(mode, gather_mode, fill, expected):
    idx = np.array([[5], [-1]], np.int32)
    out = run(mode, lambda x, i: lax.gather(x, i, ROWS, (1, 4), mode=gather_mode,
                                            fill_value=fill), X, idx)
    np.testing.assert_array_equal(out, np.asarray(expected, np.float32))


@pytest.mark.parametrize("mode", MODES)
def test_gather_fill_defaults_by_dtype(mode):
    idx = np.array([[5]], np.int32)
    for dtype, fill in ((np.int32, -2**31), (np.uint8, 255), (np.bool_, True),
                        (np.int8, -128)):
        out = run(mode, lambda x, i: lax.gather(x, i, ROWS, (1, 4), mode="fill"),
                  X.astype(dtype), idx)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, np.full((1, 4), fill, dtype))


@pytest.mark.parametrize("mode", MODES)
def test_gather_batching_dims(mode):
    idx = np.array([[0], [3], [4]], np.int32)
    out = run(mode, lambda x, i: lax.gather(x, i, BATCHED, (1, 2), mode="fill"), OP15, idx)
    np.testing.assert_array_equal(out, [[0, 1], [8, 9], [-2**31, -2**31]])
    out = run(mode, lambda x, i: lax.gather(x, i, BATCHED, (1, 2), mode="clip"), OP15, idx)
    np.testing.assert_array_equal(out, [[0, 1], [8, 9], [13, 14]])


@pytest.mark.parametrize("mode", MODES)
def test_gather_offset_dims_before_batch_dims(mode):
    dnums = GDN(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
    idx = np.array([[3], [0]], np.int32)
    out = run(mode, lambda x, i: lax.gather(x, i, dnums, (3, 1)), X, idx)
    np.testing.assert_array_equal(out, X[:, [3, 0]])


ROWS_S = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
             scatter_dims_to_operand_dims=(0,))
BATCHED_S = SDN(update_window_dims=(1,), inserted_window_dims=(),
                scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                scatter_indices_batching_dims=(0,))


@pytest.mark.parametrize("mode", MODES)
def test_scatter_drops_out_of_bounds_windows(mode):
    idx = np.array([[1], [7], [-1]], np.int32)
    updates = np.full((3, 4), 100, np.float32)
    out = run(mode, lambda x, i, u: lax.scatter_add(x, i, u, ROWS_S), X, idx, updates)
    want = X.copy()
    want[1] += 100
    np.testing.assert_array_equal(out, want)
    # a window partly out of bounds is dropped entirely
    dnums = SDN((1,), (0,), (1,))
    out = run(mode, lambda x, i, u: lax.scatter(x, i, u, dnums), X, np.array([[3]], np.int32),
              np.zeros((1, 2), np.float32))
    np.testing.assert_array_equal(out, X)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_clip(mode):
    idx = np.array([[9], [-4]], np.int32)
    updates = np.stack([np.full(4, 1.0), np.full(4, 2.0)]).astype(np.float32)
    out = run(mode, lambda x, i, u: lax.scatter(x, i, u, ROWS_S, mode="clip"), X, idx, updates)
    want = X.copy()
    want[2], want[0] = 1, 2
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_combiners_with_duplicates(mode):
    dnums = SDN((), (0,), (0,))
    x = np.array([5, 5, 5, 5], np.int32)
    idx = np.array([[1], [1], [3], [9]], np.int32)
    u = np.array([2, 3, 7, 1], np.int32)
    cases = {lax.scatter_add: [5, 10, 5, 12], lax.scatter_sub: [5, 0, 5, -2],
             lax.scatter_mul: [5, 30, 5, 35], lax.scatter_min: [5, 2, 5, 5],
             lax.scatter_max: [5, 5, 5, 7]}
    for fun, want in cases.items():
        out = run(mode, lambda x, i, u: fun(x, i, u, dnums), x, idx, u)
        np.testing.assert_array_equal(out, want, err_msg=fun.__name__)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_batching_dims(mode):
    idx = np.array([[0], [3], [4]], np.int32)
    u = np.full((3, 2), 100, np.int32)
    out = run(mode, lambda x, i, u: lax.scatter_add(x, i, u, BATCHED_S), OP15, idx, u)
    np.testing.assert_array_equal(out, [[100, 101, 2, 3, 4], [5, 6, 7, 108, 109],
                                        [10, 11, 12, 13, 14]])
    out = run(mode, lambda x, i, u: lax.scatter_add(x, i, u, BATCHED_S, mode="clip"), OP15,
              idx, u)
    np.testing.assert_array_equal(out[2], [10, 11, 12, 113, 114])


def test_scatter_jaxpr_matches_jax():
    text = str(xjax.make_jaxpr(lambda x, i, u: lax.scatter_add(x, i, u, ROWS_S))(
        X, np.array([[1]], np.int32), np.ones((1, 4), np.float32)))
    assert "scatter-add[" in text
    assert ("dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), "
            "inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), "
            "operand_batching_dims=(), scatter_indices_batching_dims=())") in text
    assert "mode=GatherScatterMode.FILL_OR_DROP" in text
    assert "update_jaxpr={ lambda ; " in text and "add" in text
    text = str(xjax.make_jaxpr(lambda x, i: lax.gather(x, i, ROWS, (1, 4), mode="fill"))(
        X, np.array([[1]], np.int32)))
    assert "fill_value=nan" in text and "slice_sizes=(1, 4)" in text


def test_modes_parse():
    M = lax.GatherScatterMode
    assert M.from_any("clip") is M.CLIP
    assert M.from_any(None) is M.FILL_OR_DROP
    assert M.from_any("drop") is M.FILL_OR_DROP
    assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS
    with pytest.raises(ValueError, match='Unknown gather mode "bogus"'):
        M.from_any("bogus")


ERRORS = [  # (call, exception, JAX 0.10.2's message)
    (lambda: lax.dynamic_slice(X, (np.int8(1), np.int32(1)), (2, 2)), TypeError,
     "index arguments to dynamic_slice must be integers of the same type, got: int8, int32"),
    (lambda: lax.dynamic_slice(X, (1,), (2, 2)), ValueError,
     "Length of slice indices must match number of operand dimensions (1 vs (3, 4))"),
    (lambda: lax.dynamic_slice(X, (1, 1), (4, 2)), TypeError,
     "slice slice_sizes must be less than or equal to operand shape, got slice_sizes (4, 2) "
     "for operand shape (3, 4)."),
    (lambda: lax.dynamic_slice(X, (1, 1), (-1, 2)), TypeError,
     "slice slice_sizes must be greater than or equal to zero, got slice_sizes of (-1, 2)."),
    (lambda: lax.dynamic_update_slice(X, np.zeros((2, 2), np.int32), (2, 3)), TypeError,
     "lax.dynamic_update_slice requires arguments to have the same dtypes, got float32, "
     "int32."),
    (lambda: lax.dynamic_update_slice(X, np.zeros(2, np.float32), (2, 3)), TypeError,
     "dynamic_update_slice update must have the same rank as operand, got update shape (2,) "
     "for operand shape (3, 4)."),
    (lambda: lax.dynamic_update_slice(X, np.zeros((4, 2), np.float32), (2, 3)), TypeError,
     "dynamic_update_slice update shape must be smaller than operand shape, got update shape "
     "(4, 2) for operand shape (3, 4)."),
    (lambda: lax.dynamic_update_slice(X, np.zeros((2, 2), np.float32),
                                      (np.int8(1), np.uint32(1))), TypeError,
     "index arguments to dynamic_update_slice must be integers of the same type, got int8, "
     "uint32"),
    (lambda: lax.slice(X, (0, 0), (3, 4), (2,)), TypeError,
     "slice strides must have length equal to the number of dimensions of the operand, got "
     "strides (2,) for operand shape (3, 4)."),
    (lambda: lax.slice(X, (2, 0), (1, 1)), TypeError,
     "slice limit_indices must be greater than or equal to start_indices, got start_indices "
     "(2, 0) and limit_indices (1, 1)."),
    (lambda: lax.gather(X, np.array([[1.0]]), ROWS, (1, 4)), ValueError,
     "indices must have an integer type"),
    (lambda: lax.gather(X, np.array([[1]]), ROWS, (2, 4)), TypeError,
     "Gather op can only collapse slice dims with bound 1, but bound is 2 for index 0 at "
     "position 0."),
    (lambda: lax.gather(X, np.array([[1, 2]]), ROWS, (1, 4)), TypeError,
     "Gather op has 1 elements in start_index_map and the bound of dimension "
     "index_vector_dim=1 of indices is 2. These two numbers must be equal."),
    (lambda: lax.scatter_add(X, np.array([[1]]), np.zeros((1, 4), np.int32), ROWS_S),
     TypeError, "lax.scatter requires arguments to have the same dtypes, got float32, int32."),
    (lambda: lax.scatter_add(X > 0, np.array([[1]]), np.ones((1, 4), bool), ROWS_S),
     TypeError, "add does not accept dtype bool at position 0. Accepted dtypes at position 0 "
     "are subtypes of integer, floating, complexfloating."),
    (lambda: lax.scatter(X, np.array([[1]]), np.ones((1, 5), np.float32), ROWS_S), TypeError,
     "Bounds of the window dimensions of updates must not exceed the bounds of the "
     "corresponding dimensions of operand. For dimension 1, updates bound is 5, operand bound "
     "is 4."),
    (lambda: lax.scatter(X, np.array([[1]]), np.ones((2, 4), np.float32), ROWS_S), TypeError,
     "Bounds of the scatter dimensions of updates must be the same as the bounds of the "
     "corresponding dimensions of scatter indices. For scatter dimension 0, updates bound is "
     "2, indices bound is 1."),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_jax(case):
    call, exc, message = ERRORS[case]
    with pytest.raises(exc, match=re.escape(message)):
        call()


def test_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    idx = rng.integers(-2, 7, (6, 2)).astype(np.int32)
    gdn = GDN(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    jgdn = jax.lax.GatherDimensionNumbers((1,), (0, 1), (0, 1))
    sdn = SDN(update_window_dims=(1,), inserted_window_dims=(0, 1),
              scatter_dims_to_operand_dims=(0, 1))
    jsdn = jax.lax.ScatterDimensionNumbers((1,), (0, 1), (0, 1))
    updates = rng.standard_normal((6, 3)).astype(np.float32)
    for mode in ("clip", "fill", "promise_in_bounds"):
        want = jax.lax.gather(x, idx, jgdn, (1, 1, 3), mode=mode)
        got = lax.gather(x, idx, gdn, (1, 1, 3), mode=mode)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=mode)
    for mode in ("clip", "drop"):
        for ours, theirs in ((lax.scatter_add, jax.lax.scatter_add),
                             (lax.scatter_max, jax.lax.scatter_max)):
            want = theirs(x, idx, updates, jsdn, mode=mode)
            got = ours(x, idx, updates, sdn, mode=mode)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6,
                                       err_msg=mode)
    for starts in ((3, -1, 0), (-7, 4, 2), (1, 1, 1)):
        want = jax.lax.dynamic_slice(x, starts, (2, 3, 2))
        np.testing.assert_array_equal(np.asarray(lax.dynamic_slice(x, starts, (2, 3, 2))),
                                      np.asarray(want))
        u = np.ones((2, 3, 2), np.float32)
        want = jax.lax.dynamic_update_slice(x, u, starts)
        np.testing.assert_array_equal(np.asarray(lax.dynamic_update_slice(x, u, starts)),
                                      np.asarray(want))
