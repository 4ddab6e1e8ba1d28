"""Wrong answers that fuzzing xjax against JAX 0.10.2 found, pinned: float floor division by
zero, ``take``'s 'clip' mode and axis errors, the tie order (and gradient routing) of
descending sorts, quantiles of rank-0 inputs and of empty reductions, ``float_power``'s
dtype and ``spacing``.

Each test checks an independent reference (NumPy, hand-computed values); values that only
JAX defines are hard-coded as measured from JAX 0.10.2, and where JAX is installed the
``*_matches_jax`` tests compare with it directly. Every case runs eagerly (NumPy kernels)
and under ``xjax.jit`` (the XLA lowering)."""

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def _eager_and_jit(fn, *args):
    """``fn(*args)`` evaluated eagerly and compiled, as NumPy arrays."""
    return [np.asarray(fn(*args)), np.asarray(xjax.jit(fn)(*args))]


def _raises_in_both(error, fn, *args):
    """``fn(*args)`` raises exactly ``error`` (not a subclass) eagerly and under jit."""
    for run in (fn, xjax.jit(fn)):
        with pytest.raises(error) as info:
            run(*args)
        assert type(info.value) is error


# --------------------------------------------------------------------------------------------
# 1. floor division by zero

FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32]
DIVIDENDS = [-1.5, 0.7, 0.0, -0.0, 3.0, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_float_floor_divide_by_zero_is_signed_inf(dtype, zero):
    x = np.array(DIVIDENDS, dtype)
    # NumPy's float64 kernel: x / 0 (+-inf, NaN for 0 and NaN), as JAX
    with np.errstate(all="ignore"):
        want = np.floor_divide(x.astype(np.float64), zero).astype(dtype)
    sign = np.copysign(1.0, zero)
    np.testing.assert_array_equal(want[:3].astype(np.float32), [-sign * np.inf, sign * np.inf,
                                                                np.nan])
    for got in _eager_and_jit(lambda x: jnp.floor_divide(x, zero), x):
        np.testing.assert_array_equal(got, want)
    for got in _eager_and_jit(lambda x: x // zero, jnp.asarray(x)):
        np.testing.assert_array_equal(got, want)
    # the divisor as an array of zeros
    for got in _eager_and_jit(lambda x, y: x // y, jnp.asarray(x),
                              jnp.full(x.shape, zero, dtype)):
        np.testing.assert_array_equal(got, want)


def test_python_float_floor_divided_by_zero_array():
    for dividend, want in [(2.0, np.inf), (-2.0, -np.inf), (0.0, np.nan)]:
        with np.errstate(all="ignore"):
            assert np.floor_divide(dividend, np.float32(0.0)) == want or np.isnan(want)
        for got in _eager_and_jit(lambda y, d=dividend: d // y, jnp.array(0.0)):
            np.testing.assert_array_equal(got, np.float32(want))
    for got in _eager_and_jit(lambda y: 2.0 // y, jnp.array(-0.0)):
        np.testing.assert_array_equal(got, np.float32(-np.inf))


def test_float_divmod_by_zero_and_by_inf():
    x = np.array(DIVIDENDS, np.float32)
    with np.errstate(all="ignore"):
        want_q, want_r = np.divmod(x, np.float32(0.0))
    for q, r in [jnp.divmod(x, 0.0), xjax.jit(jnp.divmod)(x, jnp.zeros_like(x))]:
        np.testing.assert_array_equal(q, want_q)
        np.testing.assert_array_equal(r, want_r)  # all NaN
    a = np.array([5.0, -5.0, 5.0, 7.0], np.float32)
    b = np.array([np.inf, np.inf, -np.inf, 2.0], np.float32)
    for got in _eager_and_jit(jnp.floor_divide, a, b):
        np.testing.assert_array_equal(got, [0.0, -1.0, -1.0, 3.0])  # = NumPy's


def test_floor_divide_by_zero_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.array(DIVIDENDS, np.float32)
    for zero in (0.0, -0.0):
        want = jax.numpy.floor_divide(x, zero)
        for got in _eager_and_jit(lambda x, z=zero: x // z, jnp.asarray(x)):
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(2.0 // jnp.array(0.0), 2.0 // jax.numpy.array(0.0))


# --------------------------------------------------------------------------------------------
# 2. take and take_along_axis: negative indices under 'clip', out-of-range axes

A = np.array([4, -5, -3, -4], np.int32)
INDICES = np.array([-3, -2, 2, 5, -5, 4, -4, 3], np.int32)
INT32_MIN = np.iinfo(np.int32).min


def test_take_clip_clamps_negative_indices_to_zero():
    # NumPy's take in mode 'clip' does not count negative indices from the end either
    want = np.take(A, INDICES, mode="clip")
    np.testing.assert_array_equal(want, [4, 4, -3, -4, 4, -4, 4, -4])
    for got in _eager_and_jit(lambda a, i: jnp.take(a, i, axis=0, mode="clip"), A, INDICES):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jnp.take(A, -1, mode="clip"), 4)
    m = np.arange(12).reshape(3, 4)
    i = np.array([[-1, 5], [2, -9]])
    for axis in (0, 1):
        for got in _eager_and_jit(lambda m, i, ax=axis: jnp.take(m, i, axis=ax, mode="clip"), m, i):
            np.testing.assert_array_equal(got, np.take(m, i, axis=axis, mode="clip"))


def test_take_clip_with_narrow_index_dtypes():
    big = np.arange(300)
    for dtype in (np.int8, np.uint8, np.int16):
        i = np.array([0, 5, 100, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
        for got in _eager_and_jit(lambda i: jnp.take(big, i, mode="clip"), i):
            np.testing.assert_array_equal(got, np.take(big, i, mode="clip"))


def test_take_other_modes_count_negative_indices_from_the_end():
    for got in _eager_and_jit(lambda a, i: jnp.take(a, i, mode="wrap"), A, INDICES):
        np.testing.assert_array_equal(got, np.take(A, INDICES, mode="wrap"))
    # 'fill' (the default): -n <= i < n reads a[i] (NumPy's meaning), the rest fill
    wrapped = np.where(INDICES < 0, INDICES + 4, INDICES)
    inside = (wrapped >= 0) & (wrapped < 4)
    want = np.where(inside, A[np.clip(wrapped, 0, 3)], INT32_MIN)
    for mode in ("fill", None):
        for got in _eager_and_jit(lambda a, i, md=mode: jnp.take(a, i, mode=md), A, INDICES):
            np.testing.assert_array_equal(got, want)


def test_take_along_axis_modes():
    b = np.array([[4, -5, -3, -4], [1, 2, 3, 4]], np.int32)
    i = np.array([[-3, -2, 2, 5], [-5, 4, -1, 0]], np.int32)
    wrapped = np.where(i < 0, i + 4, i)
    inside = (wrapped >= 0) & (wrapped < 4)
    read = np.take_along_axis(b, np.clip(wrapped, 0, 3), axis=1)
    filled = np.where(inside, read, INT32_MIN)
    unwrapped_clipped = np.take_along_axis(b, np.clip(i, 0, 3), axis=1)
    unwrapped_filled = np.where((i >= 0) & (i < 4), unwrapped_clipped, INT32_MIN)
    # (mode, wrap_negative_indices) -> expected. JAX's legacy default wraps negative indices
    # before clipping (unlike take), except in mode 'promise_in_bounds'.
    cases = {("clip", None): read, ("fill", None): filled, (None, None): filled,
             ("promise_in_bounds", None): unwrapped_clipped,
             ("clip", True): read, ("promise_in_bounds", True): read,
             ("clip", False): unwrapped_clipped, ("fill", False): unwrapped_filled,
             (None, False): unwrapped_filled}
    np.testing.assert_array_equal(read, [[-5, -3, -3, -4], [1, 4, 4, 1]])  # JAX 0.10.2's
    for (mode, wrap), want in cases.items():
        def fn(b, i, mode=mode, wrap=wrap):
            return jnp.take_along_axis(b, i, axis=1, mode=mode, wrap_negative_indices=wrap)
        for got in _eager_and_jit(fn, b, i):
            np.testing.assert_array_equal(got, want, err_msg=f"{mode}, {wrap}")


@pytest.mark.parametrize("axis", [1, -2, 5])
def test_take_axis_out_of_range_is_a_plain_value_error(axis):
    # JAX 0.10.2 raises ValueError itself, not NumPy's AxisError (which is an IndexError too)
    _raises_in_both(ValueError, lambda a: jnp.take(a, jnp.array([0]), axis=axis), A)
    b = np.ones((2, 3), np.float32)
    axis_2d = axis + 1 if axis > 0 else axis - 1
    _raises_in_both(ValueError, lambda b: jnp.take_along_axis(
        b, jnp.zeros((2, 3), jnp.int32), axis=axis_2d), b)


def test_take_matches_jax():
    jax = pytest.importorskip("jax")
    for mode in ("clip", "wrap", "fill", None):
        np.testing.assert_array_equal(jnp.take(A, INDICES, axis=0, mode=mode),
                                      jax.numpy.take(A, INDICES, axis=0, mode=mode))
    b = np.array([[4, -5, -3, -4], [1, 2, 3, 4]], np.int32)
    i = np.array([[-3, -2, 2, 5], [-5, 4, -1, 0]], np.int32)
    for mode in ("clip", "fill", None, "promise_in_bounds"):
        np.testing.assert_array_equal(jnp.take_along_axis(b, i, axis=1, mode=mode),
                                      jax.numpy.take_along_axis(b, i, axis=1, mode=mode))
    with pytest.raises(ValueError) as info:
        jax.numpy.take(A, np.array([0]), axis=1)
    assert type(info.value) is ValueError


# --------------------------------------------------------------------------------------------
# 3. descending sorts: the ascending order reversed, ties included


def _descending_order(a):
    """JAX's descending order: NumPy's stable ascending order, reversed."""
    return np.argsort(a, kind="stable")[::-1]


def test_descending_sort_routes_tied_cotangents_in_reverse():
    a = np.array([1.0, 1.0, 0.0], np.float32)
    cotangent = np.array([10.0, 20.0, 30.0], np.float32)
    want = np.zeros(3, np.float32)
    want[_descending_order(a)] = cotangent
    np.testing.assert_array_equal(want, [20.0, 10.0, 30.0])  # as JAX 0.10.2 gives

    def pullback(a, ct):
        return xjax.vjp(lambda a: jnp.sort(a, descending=True), a)[1](ct)[0]

    for got in _eager_and_jit(pullback, a, cotangent):
        np.testing.assert_array_equal(got, want)
    tangent = np.array([1.0, 2.0, 3.0], np.float32)
    _, jvp_out = xjax.jvp(lambda a: jnp.sort(a, descending=True), (a,), (tangent,))
    np.testing.assert_array_equal(jvp_out, tangent[_descending_order(a)])


def test_descending_sort_values_order_signed_zeros_as_reversed():
    a = np.array([0.0, -0.0, np.nan, 1.0], np.float32)
    want = np.sort(a, kind="stable")[::-1]  # [nan, 1, -0, 0]
    for got in _eager_and_jit(lambda a: jnp.sort(a, descending=True), a):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_descending_argsort_tie_order():
    a = np.array([1.0, 1.0, 0.0, 1.0, 2.0], np.float32)
    # stable: equal elements keep their order; not stable: JAX reverses the ascending order
    stable = np.argsort(-a, kind="stable")
    np.testing.assert_array_equal(stable, [4, 0, 1, 3, 2])
    for got in _eager_and_jit(lambda a: jnp.argsort(a, descending=True), a):
        np.testing.assert_array_equal(got, stable)
    for got in _eager_and_jit(lambda a: jnp.argsort(a, descending=True, stable=False), a):
        np.testing.assert_array_equal(got, _descending_order(a))  # [4, 3, 1, 0, 2]
    m = np.array([[3.0, 1.0, 3.0, 2.0], [1.0, 1.0, 0.0, 1.0]], np.float32)
    for axis in (0, 1):
        got = jnp.argsort(m, axis=axis, descending=True)
        np.testing.assert_array_equal(got, np.argsort(-m, axis=axis, kind="stable"))


def test_descending_sort_matches_jax():
    jax = pytest.importorskip("jax")
    a = np.array([1.0, 1.0, 0.0, -0.0, 0.0, np.nan, 2.0], np.float32)
    ct = np.arange(1.0, 8.0, dtype=np.float32)

    def pullback(jax_like, a):
        def sort(a):
            return jax_like.numpy.sort(a, descending=True)
        return jax_like.vjp(sort, a)[1](ct)[0]

    np.testing.assert_array_equal(pullback(xjax, a), pullback(jax, a))
    for stable in (True, False):
        np.testing.assert_array_equal(
            jnp.argsort(a, descending=True, stable=stable),
            jax.numpy.argsort(a, descending=True, stable=stable))


# --------------------------------------------------------------------------------------------
# 4. quantiles: keepdims of a rank-0 input, empty reductions

RANK0_KEEPDIMS = [
    (lambda x: jnp.median(x, keepdims=True), (1,)),
    (lambda x: jnp.nanmedian(x, keepdims=True), (1,)),
    (lambda x: jnp.quantile(x, 0.5, keepdims=True), (1,)),
    (lambda x: jnp.percentile(x, jnp.array([50.0, 50.0]), keepdims=True), (2, 1)),
    (lambda x: jnp.nanquantile(x, 0.5, axis=(), keepdims=True), (1,)),
    (lambda x: jnp.median(x), ()),
]


@pytest.mark.parametrize("fn,shape", RANK0_KEEPDIMS)
def test_quantile_of_rank0_with_keepdims_keeps_one_axis(fn, shape):
    # JAX 0.10.2 ravels a rank-0 input first (NumPy would give shape ())
    for got in _eager_and_jit(fn, jnp.array(3.0)):
        assert got.shape == shape
        np.testing.assert_array_equal(got, np.full(shape, 3.0, np.float32))


# (function, input shape, expected error) measured from JAX 0.10.2, where a quantile over
# no elements fails in its gather (TypeError) or, for the NaN-ignoring variants with a
# scalar result, in its indexing (IndexError)
EMPTY = [
    (lambda x: jnp.median(x), (0,), TypeError),
    (lambda x: jnp.median(x, axis=0), (0, 3), TypeError),
    (lambda x: jnp.median(x, keepdims=True), (0,), TypeError),
    (lambda x: jnp.median(x, axis=0), (0, 0), TypeError),
    (lambda x: jnp.quantile(x, 0.5), (0,), TypeError),
    (lambda x: jnp.quantile(x, jnp.array([0.2, 0.5]), axis=1), (3, 0), TypeError),
    (lambda x: jnp.percentile(x, 50.0), (0,), TypeError),
    (lambda x: jnp.percentile(x, 50.0, method="inverted_cdf"), (0,), TypeError),
    (lambda x: jnp.nanmedian(x), (0,), IndexError),
    (lambda x: jnp.nanquantile(x, 0.5, method="inverted_cdf"), (0,), IndexError),
    (lambda x: jnp.nanmedian(x, keepdims=True), (0,), TypeError),
    (lambda x: jnp.nanmedian(x, axis=0), (0, 3), TypeError),
    (lambda x: jnp.nanpercentile(x, jnp.array([50.0])), (0,), TypeError),
    (lambda x: jnp.nanquantile(x, 0.5, axis=0, method="inverted_cdf"), (0, 0), IndexError),
]


@pytest.mark.parametrize("fn,shape,error", EMPTY)
def test_quantile_of_empty_reduction_raises(fn, shape, error):
    _raises_in_both(error, fn, np.zeros(shape, np.float32))


def test_quantile_reading_nothing_is_empty():
    # positions of size 0 read nothing, so these succeed (JAX 0.10.2 too)
    cases = [(lambda x: jnp.quantile(x, jnp.zeros((0,))), (0,), (0,)),
             (lambda x: jnp.nanmedian(x, axis=0), (0, 0), (0,)),
             (lambda x: jnp.median(x, axis=1), (0, 3), (0,)),
             (lambda x: jnp.median(x, axis=0), (3, 0), (0,))]
    for fn, shape, out_shape in cases:
        for got in _eager_and_jit(fn, np.zeros(shape, np.float32)):
            assert got.shape == out_shape


def test_quantile_edge_cases_match_jax():
    jax = pytest.importorskip("jax")
    x = np.float32(3.0)
    assert jnp.median(x, keepdims=True).shape == jax.numpy.median(x, keepdims=True).shape
    for name in ("median", "nanmedian"):
        for shape in ((0,), (0, 3)):
            def call(module, name=name, shape=shape):
                try:
                    getattr(module.numpy, name)(np.zeros(shape, np.float32), axis=0)
                except Exception as error:  # noqa: BLE001 - the class is what is compared
                    return type(error)
            assert call(xjax) is call(jax) is not None


# --------------------------------------------------------------------------------------------
# 5. float_power keeps the promoted dtype; spacing


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_float_power_keeps_the_input_dtype(dtype):
    x = np.array([2.0, 3.0, -2.0, 0.5], dtype)
    want = np.power(x.astype(np.float64), x.astype(np.float64)).astype(dtype)
    for got in _eager_and_jit(jnp.float_power, x, x):
        assert got.dtype == dtype
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=float(ml_dtypes.finfo(dtype).eps))
    for got in _eager_and_jit(lambda x: jnp.float_power(x, 2), x):
        assert got.dtype == dtype
    # overflow happens in the narrow dtype
    np.testing.assert_array_equal(jnp.float_power(np.array([300.0], np.float16), 2), [np.inf])


def test_float_power_does_not_widen_with_x64():
    with xjax.config.override(jax_enable_x64=True):
        x = np.array([2.0, 3.0], np.float32)
        assert jnp.float_power(x, x).dtype == np.float32
        assert jnp.float_power(np.array([2, 3]), 2).dtype == np.float64


SPACING_INPUTS = [1.0, -1.0, 3.5, -3.5, 1e-5, -1e-5, 6e-8, -6e-8]


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_spacing_points_away_from_zero(dtype):
    x = np.array(SPACING_INPUTS, dtype)
    want = np.spacing(x)  # NumPy's (ml_dtypes' for bfloat16) kernel
    for got in _eager_and_jit(jnp.spacing, x):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_spacing_of_zero_is_the_signed_smallest_subnormal(dtype):
    # XLA flushes the subnormal difference to 0, so this is what JAX substitutes: the
    # smallest subnormal with the sign of x (JAX 0.10.2 gives -tiny for -0.0, NumPy +tiny)
    tiny = ml_dtypes.finfo(dtype).smallest_subnormal
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    want = np.array([tiny, -tiny, np.nan, np.nan, np.nan], dtype)
    for got in _eager_and_jit(jnp.spacing, x):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[:2]), [False, True])


def test_spacing_float16_steps_toward_positive_infinity():
    # as NumPy's float16 kernel: spacing(-1) is +2**-11, not -2**-10
    x = np.array(SPACING_INPUTS + [0.0, -0.0, np.nan], np.float16)
    with np.errstate(all="ignore"):
        want = np.spacing(x)
    np.testing.assert_array_equal(want[1], np.float16(2.0 ** -11))
    for got in _eager_and_jit(jnp.spacing, x):
        np.testing.assert_array_equal(got, want)
    # where NumPy says NaN, JAX 0.10.2 says inf: nextafter(-inf, inf) - -inf and the step
    # past the largest float16
    for got in _eager_and_jit(jnp.spacing, np.array([-np.inf, 65504.0], np.float16)):
        np.testing.assert_array_equal(got, [np.inf, np.inf])
    np.testing.assert_array_equal(jnp.spacing(jnp.float16(-1.0)), np.float16(2.0 ** -11))


def test_float_power_and_spacing_match_jax():
    jax = pytest.importorskip("jax")
    values = [1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.5, -1e-5, 65504.0]
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32):
        x = np.array(values, dtype)
        for got in _eager_and_jit(jnp.spacing, x):
            np.testing.assert_array_equal(got, jax.numpy.spacing(x))
        y = np.array([2.0, 3.0, 0.5], dtype)
        want = jax.numpy.float_power(y, y)
        assert jnp.float_power(y, y).dtype == want.dtype
        np.testing.assert_array_equal(jnp.float_power(y, y), want)


def test_jvp_of_logaddexp_with_numpy_primals():
    # found by tools/fuzz_programs.py: the custom rule is handed NumPy primals (as in JAX)
    x = np.array([1.0, -2.0, 0.5], np.float32)
    for fun, base in ((jnp.logaddexp, np.e), (jnp.logaddexp2, 2.0)):
        out, tangent = xjax.jvp(lambda a: fun(a, 2 * a), (x,), (np.ones_like(x),))
        expected = np.log(base ** x + base ** (2 * x)) / np.log(base)
        np.testing.assert_allclose(out, expected, rtol=1e-6)
        weights = (base ** x + 2 * base ** (2 * x)) / (base ** x + base ** (2 * x))
        np.testing.assert_allclose(tangent, weights, rtol=1e-5)
