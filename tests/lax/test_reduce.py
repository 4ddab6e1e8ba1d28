"""Reductions and cumulative reductions: wrapping integer arithmetic, identities of empty
reductions, argmax/argmin ties and NaNs, weak types, JAX's error messages, and differential
checks against JAX where it is installed."""

import re

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.core import dtypes

MODES = ["eager", "jit", "xla"]


def run(mode, fun, *args):
    if mode == "jit":
        return xjax.jit(fun)(*args)
    if mode == "xla":
        with xjax.config.override(xjax_eager_via_xla=True):
            return fun(*args)
    return fun(*args)


@pytest.mark.parametrize("mode", MODES)
def test_integer_reductions_wrap(mode):
    x = np.array([100, 100, 100], np.int8)
    assert run(mode, lambda x: lax.reduce_sum(x, (0,)), x) == 44
    assert run(mode, lambda x: lax.reduce_prod(x, (0,)),
               np.array([16, 16, 2], np.int8)) == 0
    np.testing.assert_array_equal(run(mode, lambda x: lax.cumsum(x), x), [100, -56, 44])
    out = run(mode, lambda x: lax.reduce_sum(x, (0,)), x)
    assert out.dtype == np.int8


@pytest.mark.parametrize("mode", MODES)
def test_sums_are_accurate(mode):
    # NumPy's sequential sum along axis 0 would be off by ~1e-6 here; XLA's tree is not
    rng = np.random.default_rng(1701)
    x = rng.random((10000, 10)).astype(np.float32)
    want = x.astype(np.float64).sum(0)
    np.testing.assert_allclose(run(mode, lambda x: lax.reduce_sum(x, (0,)), x), want,
                               rtol=2e-7)


@pytest.mark.parametrize("mode", MODES)
def test_empty_reductions_give_identities(mode):
    def reduce_all(fun, dtype):
        return run(mode, lambda x: fun(x, (0,)), np.zeros((0, 2), dtype))

    assert np.all(reduce_all(lax.reduce_max, np.float32) == -np.inf)
    assert np.all(reduce_all(lax.reduce_min, np.int8) == 127)
    assert np.all(reduce_all(lax.reduce_max, np.uint8) == 0)
    assert not np.any(reduce_all(lax.reduce_max, np.bool_))
    assert np.all(reduce_all(lax.reduce_and, np.bool_))
    assert np.all(reduce_all(lax.reduce_and, np.uint8) == 255)
    assert np.all(reduce_all(lax.reduce_sum, np.float16) == 0)
    assert np.all(reduce_all(lax.reduce_prod, np.int32) == 1)


@pytest.mark.parametrize("mode", MODES)
def test_bitwise_reductions(mode):
    assert run(mode, lambda x: lax.reduce_and(x, (0,)), np.array([7, 3], np.int8)) == 3
    assert run(mode, lambda x: lax.reduce_or(x, (0,)), np.array([4, 3], np.uint8)) == 7
    assert run(mode, lambda x: lax.reduce_xor(x, (0,)), np.array([7, 3], np.int8)) == 4
    assert run(mode, lambda x: lax.reduce_xor(x, (0,)), np.array([True, True, True]))


@pytest.mark.parametrize("mode", MODES)
def test_complex_max_min_are_lexicographic(mode):
    x = np.array([1 + 2j, 1 + 3j, 2 + 0j, 2 - 1j], np.complex64)
    assert run(mode, lambda x: lax.reduce_max(x, (0,)), x) == 2 + 0j
    assert run(mode, lambda x: lax.reduce_min(x, (0,)), x) == 1 + 2j
    np.testing.assert_array_equal(run(mode, lambda x: lax.cummax(x), x),
                                  [1 + 2j, 1 + 3j, 2 + 0j, 2 + 0j])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16])
def test_argmax_argmin_nan_and_ties(mode, dtype):
    x = np.array([[np.nan, 1, np.nan], [2, 2, 1], [0, -0.0, 0]], np.float32).astype(dtype)
    np.testing.assert_array_equal(run(mode, lambda x: lax.argmax(x, 1, np.int32), x),
                                  [0, 0, 0])
    y = np.array([[3, np.nan, 0], [2, 1, 1], [-0.0, 0, 5]], np.float32).astype(dtype)
    np.testing.assert_array_equal(run(mode, lambda x: lax.argmin(x, 1, np.int32), y),
                                  [1, 1, 0])


@pytest.mark.parametrize("mode", MODES)
def test_argmax_ints_bools_index_dtype(mode):
    x = np.array([[1, 5, 5], [7, 7, 0]], np.uint8)
    out = run(mode, lambda x: lax.argmax(x, 1, np.uint8), x)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, [1, 0])
    np.testing.assert_array_equal(run(mode, lambda x: lax.argmin(x, 0, np.int16), x),
                                  [0, 0, 1])
    b = np.array([False, True, True])
    assert run(mode, lambda b: lax.argmax(b, 0, np.int32), b) == 1
    assert run(mode, lambda b: lax.argmin(b, 0, np.int32), b) == 0


@pytest.mark.parametrize("mode", MODES)
def test_cumulative(mode):
    x = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(run(mode, lambda x: lax.cumprod(x, reverse=True), x),
                                  [24, 24, 12, 4])
    np.testing.assert_array_equal(
        run(mode, lambda x: lax.cummin(x, reverse=True), np.array([3, 1, 2, 0], np.int32)),
        [0, 0, 0, 0])
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(run(mode, lambda m: lax.cumsum(m, 1, True), m),
                                  np.cumsum(m[:, ::-1], 1)[:, ::-1])
    out = run(mode, lambda x: lax.cumlogsumexp(x),
              np.array([-np.inf, -np.inf, 0.0, np.inf, 1.0], np.float32))
    np.testing.assert_array_equal(out, [-np.inf, -np.inf, 0.0, np.inf, np.inf])
    out = run(mode, lambda x: lax.cumlogsumexp(x), np.log(np.array([1, 2, 3], np.float32)))
    np.testing.assert_allclose(out, np.log([1, 3, 6]), rtol=1e-6)


def test_weak_types():
    weak = lax.full((3,), 1.0)
    assert lax.reduce_sum(weak, (0,)).weak_type
    assert lax.reduce_max(weak, (0,)).weak_type
    assert lax.cumsum(weak).weak_type
    assert not lax.argmax(weak, 0, np.int32).weak_type
    assert not lax.reduce_and(lax.full((3,), 1), (0,)).weak_type


def test_jaxpr_printing():
    x = np.ones((3, 4), np.float32)
    text = str(xjax.make_jaxpr(lambda x: (lax.reduce_sum(x, (0,)), lax.reduce_max(x, (1,)),
                                          lax.argmax(x, 0, np.int32),
                                          lax.cummax(x, 1, reverse=True)))(x))
    assert "reduce_sum[axes=(0,) out_sharding=None] a" in text
    assert "reduce_max[axes=(1,)] a" in text
    assert "argmax[axes=(0,) index_dtype=int32] a" in text
    assert "cummax[axis=1 reverse=True] a" in text


ERRORS = [  # (call, exception, JAX 0.10.2's message)
    (lambda: lax.reduce_sum(np.ones((3, 4), np.float32), (2,)), ValueError,
     "reduction axes (2,) contains out-of-bounds indices for float32[3,4]."),
    (lambda: lax.reduce_sum(np.ones((3, 4), np.float32), (0, 0)), ValueError,
     "duplicate value in 'axes' of reduction: (0, 0)"),
    (lambda: lax.reduce_sum(np.ones(3, bool), (0,)), TypeError,
     "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda: lax.reduce_prod(np.ones(3, bool), (0,)), TypeError,
     "reduce_prod does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda: lax.reduce_and(np.ones(3, np.float32), (0,)), TypeError,
     "logical reduction requires operand dtype bool or int, got float32."),
    (lambda: lax.argmax(np.ones((3, 4), np.float32), 2, np.int32), ValueError,
     "Invalid axis 2 for operand shape (3, 4)"),
    (lambda: lax.argmax(np.ones((3, 4), np.float32), 0, np.float32), TypeError,
     "index_dtype must be an integer type, but got float32"),
    (lambda: lax.argmax(np.ones(3, np.complex64), 0, np.int32), TypeError,
     "gt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, bool."),
    (lambda: lax.argmin(np.ones((0, 3), np.float32), 0, np.int32), ValueError,
     "argmin and argmax require non-empty reduced dimension. operand.shape=(0, 3) axis=0"),
    (lambda: lax.cumsum(np.ones(3, bool)), TypeError,
     "cumsum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda: lax.cumsum(np.ones((3, 4), np.float32), 2), ValueError,
     "axis 2 is out of bounds for array of shape (3, 4)"),
    (lambda: lax.cumsum(np.ones((3, 4), np.float32), -1), ValueError,
     "XLA operations do not allow negative axes"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_jax(case):
    call, exc, message = ERRORS[case]
    with pytest.raises(exc, match=re.escape(message)):
        call()


def test_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.int8, np.uint8, np.int32, dtypes.bfloat16):
        x = (rng.standard_normal((4, 5, 3)) * 4).astype(dtype)
        # JAX rounds bfloat16 sums at every step; xjax's impl rounds once
        atol = 0.2 if dtype == dtypes.bfloat16 else 0
        for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
            want = getattr(jax.lax, name)(x, (0, 2))
            got = getattr(lax, name)(x, (0, 2))
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got, np.float64),
                                       np.asarray(want, np.float64), rtol=1e-2, atol=atol,
                                       err_msg=name)
        for name in ("argmax", "argmin"):
            want = getattr(jax.lax, name)(x, 1, np.int32)
            np.testing.assert_array_equal(getattr(lax, name)(x, 1, np.int32), want)
        for name in ("cumsum", "cummax", "cummin"):
            want = getattr(jax.lax, name)(x, 1, reverse=True)
            got = getattr(lax, name)(x, 1, reverse=True)
            np.testing.assert_allclose(np.asarray(got, np.float64),
                                       np.asarray(want, np.float64), rtol=1e-2, atol=atol,
                                       err_msg=name)


@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1), (1, 2), (0, 2), (0, 1, 2)])
def test_eager_sum_of_narrow_arrays_is_the_rounded_exact_sum(axes):
    """Eager sums accumulate in float64 whichever axes are reduced (a column sum of a tall,
    narrow array takes a transposed, contiguous path): the float32 result is the float64
    sum rounded once."""
    x = np.random.default_rng(0).random((3, 4000, 5)).astype(np.float32)
    got = np.asarray(lax.reduce_sum(x, axes))
    np.testing.assert_array_equal(got, x.astype(np.float64).sum(axis=axes).astype(np.float32))


# -- the CPU lowering of large floating max/min over the minor dimension (in two stages) --

_SPLIT_CASES = [  # (shape, axes): minor chunk of 16, of 8, padded, merged trailing block,
    ((64, 1024), (1,)),  # a major axis reduced too, everything reduced, 3-D, 1-D
    ((40, 1000), (1,)),
    ((30, 999), (1,)),
    ((8, 20, 50), (1, 2)),
    ((16, 8, 300), (0, 2)),
    ((70, 130), (0, 1)),
    ((5000,), (0,)),
    ((1000, 10), (1,)),  # short minor blocks (9-31 elements): padded to two chunks
    ((500, 16), (1,)),
    ((300, 20), (1,)),
    ((700, 31), (1,)),
    ((600, 3, 5), (1, 2)),
]


@pytest.mark.parametrize("shape,axes", _SPLIT_CASES)
@pytest.mark.parametrize("kind", ["max", "min"])
def test_split_minor_max_min_gives_numpys_values(shape, axes, kind):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 3)] = np.inf if kind == "max" else -np.inf
    flat[:7] = np.nan  # NaN in a few reduced groups, nowhere else
    reducer = lax.reduce_max if kind == "max" else lax.reduce_min
    # with a column sum beside it the module keeps XLA's tree rewrite: the split form
    f = xjax.jit(lambda v: (reducer(v, axes), lax.reduce_sum(v, (0,))))
    text = f.lower(x).as_text()
    assert text.count("stablehlo.reduce") >= 3 and "optimization_barrier" in text
    ref = (np.max if kind == "max" else np.min)(x, axis=axes)
    np.testing.assert_array_equal(np.asarray(f(x)[0]), ref)
    alone = xjax.jit(lambda v: reducer(v, axes))  # split, or plain where the rewrite is off
    np.testing.assert_array_equal(np.asarray(alone(x)), ref)


@pytest.mark.parametrize("shape", [(64, 1024), (40, 1000), (30, 999), (8, 20, 50),
                                   (40, 128), (3, 4096)])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_short_minor_max_min_is_one_reduce_without_the_tree_rewrite(shape, kind):
    """Along 128-4096 minor elements a float max/min is one plain reduce (a vectorized loop
    once XLA's tree rewrite is off); a module that keeps the rewrite is lowered again with
    the split form, under which the plain one would run as a scalar chain."""
    from xjax._src.lowering.lower_jaxpr import TREE_REWRITE_OPTIONAL, lower_module
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[[0, 5, 77]] = np.nan
    axes = tuple(range(1, len(shape)))
    reducer = lax.reduce_max if kind == "max" else lax.reduce_min
    ref = (np.max if kind == "max" else np.min)(x, axis=axes)

    def lowered(fun):
        return lower_module(xjax.make_jaxpr(fun)(x), platform="cpu")

    alone = lowered(lambda v: reducer(v, axes))
    assert alone.compiler_options == TREE_REWRITE_OPTIONAL
    assert alone.text.count('"stablehlo.reduce"(') == 1
    assert "optimization_barrier" not in alone.text
    mixed = lowered(lambda v: (reducer(v, axes), v.sum(0)))
    assert mixed.compiler_options is None and "optimization_barrier" in mixed.text
    np.testing.assert_array_equal(np.asarray(xjax.jit(lambda v: reducer(v, axes))(x)), ref)
    rows = x.reshape(x.shape[0], -1)
    softmax = np.asarray(xjax.jit(lambda v: xjax.nn.softmax(v, axis=-1))(rows))
    e = np.exp(rows - rows.max(-1, keepdims=True).astype(np.float64))
    np.testing.assert_allclose(softmax, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
def test_split_minor_max_min_narrow_and_wide_floats(dtype):
    dtype = np.dtype(getattr(dtypes, dtype) if dtype == "bfloat16" else dtype)
    with xjax.config.override(jax_enable_x64=True):
        x = (np.random.default_rng(3).standard_normal((40, 300)) * 100).astype(dtype)
        x[5, 17] = np.nan
        x[9] = -np.inf
        for reducer, ref in ((lax.reduce_max, np.max), (lax.reduce_min, np.min)):
            out = xjax.jit(lambda v: reducer(v, (1,)))(x)
            assert out.dtype == dtype
            np.testing.assert_array_equal(np.asarray(out), ref(x, axis=1))


def test_small_or_major_max_stays_one_reduce():
    for shape, axes in [((64, 16), (1,)), ((1000, 4), (1,)), ((1000, 64), (0,))]:
        text = xjax.jit(lambda v: lax.reduce_max(v, axes)).lower(
            np.zeros(shape, np.float32)).as_text()
        assert text.count("stablehlo.reduce") == 1 and "optimization_barrier" not in text


@pytest.mark.parametrize("shape,axes", [((2**20,), (0,)), ((300, 400), (0, 1)),
                                        ((6, 64, 128), (1, 2)), ((4, 8, 8192), (0, 2))])
def test_split_large_sums_stay_accurate(shape, axes):
    x = np.random.default_rng(5).uniform(0, 1, shape).astype(np.float32)
    f = xjax.jit(lambda v: lax.reduce_sum(v, axes))
    assert "optimization_barrier" in f.lower(x).as_text()
    ref = np.sum(x.astype(np.float64), axis=axes)
    np.testing.assert_allclose(np.asarray(f(x)), ref, rtol=2e-7)
    small = xjax.jit(lambda v: lax.reduce_sum(v, (1,))).lower(np.zeros((50, 1000), np.float32))
    assert "optimization_barrier" not in small.as_text()  # 1000 per row: one reduce


def test_modules_of_short_minor_reductions_skip_the_tree_rewrite():
    """A module whose every reduce runs along at most 4096 trailing elements compiles
    without XLA's tree reduction rewrite (2x faster there), as accurately as JAX sums."""
    from xjax._src.lowering.lower_jaxpr import (ELEMENTAL_EMITTERS, TREE_REWRITE_OPTIONAL,
                                                lower_module)

    def options(fun, x, platform="cpu"):
        return lower_module(xjax.make_jaxpr(fun)(x), platform=platform).compiler_options

    def layer_norm(v):
        mu = v.mean(-1, keepdims=True)
        return (v - mu) / xjax.numpy.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + 1e-5)

    rows = np.random.default_rng(4).uniform(0, 1, (300, 4096)).astype(np.float32)
    assert options(layer_norm, rows) == TREE_REWRITE_OPTIONAL
    assert options(lambda v: v.sum(1), rows, platform=None) is None  # portable: untouched
    # a major-axis sum too: the rewrite stays (and the elemental emitters, lower_jaxpr)
    assert options(lambda v: (v.sum(1), v.sum(0)), rows) == ELEMENTAL_EMITTERS
    # a max along them is one plain reduce too; with a major-axis sum it is split in stages
    assert options(lambda v: v.sum(1) + v.max(1), rows) == TREE_REWRITE_OPTIONAL
    assert options(lambda v: (v.max(1), v.sum(0)), rows) is None
    assert options(lambda v: v.sum(1), np.zeros((3, 5000), np.float32)) == ELEMENTAL_EMITTERS
    out = np.asarray(xjax.jit(lambda v: v.sum(1))(rows))
    np.testing.assert_allclose(out, rows.astype(np.float64).sum(1), rtol=5e-7)
    normed = np.asarray(xjax.jit(layer_norm)(rows))
    ref = rows - rows.astype(np.float64).mean(-1, keepdims=True)
    ref = ref / np.sqrt((ref ** 2).mean(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(normed, ref, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(400, 20), (300, 31), (40, 1000), (4, 50, 64)])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argminmax_in_two_passes_gives_numpys_indices(name, shape, dtype):
    """Float argmax/argmin along 19+ trailing elements on the CPU (the split max/min, then
    the least index holding it or a NaN): the first occurrence, NaN first, ties, infinities
    and signed zeros as NumPy."""
    rng = np.random.default_rng(len(shape) + shape[-1])
    with xjax.config.override(jax_enable_x64=True):
        x = rng.integers(-3, 4, shape).astype(dtype)  # many ties
        rows = x.reshape(-1, shape[-1])
        rows[0] = np.nan
        rows[1, 5:] = np.nan
        rows[2] = -np.inf
        rows[3] = np.inf
        rows[4] = 0.0
        rows[4, ::2] = -0.0
        rows[5, 7] = np.inf
        rows[6, 9] = -np.inf
        fun = getattr(lax, name)
        f = xjax.jit(lambda v: fun(v, v.ndim - 1, np.int32))
        assert "optimization_barrier" in f.lower(x).as_text()
        np.testing.assert_array_equal(np.asarray(f(x)), getattr(np, name)(x, axis=-1))
