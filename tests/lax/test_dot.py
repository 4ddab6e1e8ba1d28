"""dot_general: dimension numbers (batch dims first in the output), preferred_element_type,
integer/bool dots, mixed input dtypes, precision, the dot/batch_matmul wrappers, JAX's error
messages and jaxpr printing, and differential checks against JAX where it is installed."""

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


def _einsum_reference(lhs, rhs, dims):
    """dot_general by einsum: batch dims, then lhs free, then rhs free."""
    (lc, rc), (lb, rb) = dims
    letters = iter("abcdefghijklmnop")
    lhs_sub = [None] * lhs.ndim
    rhs_sub = [None] * rhs.ndim
    for i, j in zip(lb, rb):
        lhs_sub[i] = rhs_sub[j] = next(letters)
    batch = [lhs_sub[i] for i in lb]
    for i, j in zip(lc, rc):
        lhs_sub[i] = rhs_sub[j] = next(letters)
    for sub in (lhs_sub, rhs_sub):
        for k, s in enumerate(sub):
            if s is None:
                sub[k] = next(letters)
    lhs_free = [lhs_sub[i] for i in range(lhs.ndim) if i not in lc and i not in lb]
    rhs_free = [rhs_sub[i] for i in range(rhs.ndim) if i not in rc and i not in rb]
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(batch + lhs_free + rhs_free)}"
    return np.einsum(spec, lhs.astype(np.float64), rhs.astype(np.float64))


CASES = [  # lhs shape, rhs shape, dimension numbers
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (2, 4, 5), (((2,), (1,)), ((1,), (0,)))),      # batch dim not leading
    ((2, 3, 4, 5), (2, 5, 6, 3), (((3, 0), (1, 0)), ((1,), (3,)))),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((2, 3), (4,), (((), ()), ((), ()))),                     # outer product
    ((5, 2, 3), (3, 5), (((2,), (0,)), ((0,), (1,)))),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_dimension_numbers(mode, case):
    lhs_shape, rhs_shape, dims = CASES[case]
    rng = np.random.default_rng(case)
    lhs = rng.standard_normal(lhs_shape).astype(np.float32)
    rhs = rng.standard_normal(rhs_shape).astype(np.float32)
    out = run(mode, lambda x, y: lax.dot_general(x, y, dims), lhs, rhs)
    want = _einsum_reference(lhs, rhs, dims)
    assert out.shape == want.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_integer_and_bool_dots(mode):
    a = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    b = np.arange(40, dtype=np.int8).reshape(2, 4, 5)
    dims = (((2,), (1,)), ((0,), (0,)))
    wide = _einsum_reference(a, b, dims).astype(np.int64)
    out = run(mode, lambda x, y: lax.dot_general(x, y, dims), a, b)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, wide.astype(np.int8))   # wraps like int8 arithmetic
    out = run(mode, lambda x, y: lax.dot_general(x, y, dims, preferred_element_type=np.int32),
              a, b)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, wide)
    p = np.array([[True, False], [False, False]])
    q = np.array([[True, True], [False, True]])
    out = run(mode, lambda x, y: lax.dot(x, y), p, q)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, [[True, True], [False, False]])
    out = run(mode, lambda x, y: lax.dot(x, y, preferred_element_type=np.int32), p, q)
    np.testing.assert_array_equal(out, [[1, 1], [0, 0]])


@pytest.mark.parametrize("mode", MODES)
def test_preferred_element_type_and_mixed_dtypes(mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(dtypes.bfloat16)
    y = rng.standard_normal((4, 2)).astype(dtypes.bfloat16)
    out = run(mode, lambda x, y: lax.dot(x, y, preferred_element_type=np.float32), x, y)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, _einsum_reference(x, y, (((1,), (0,)), ((), ()))),
                               rtol=1e-5, atol=1e-5)
    z = rng.standard_normal((4, 2)).astype(np.float32)
    out = run(mode, lambda x, z: lax.dot(x, z), x, z)       # bfloat16 . float32 -> float32
    assert out.dtype == np.float32
    i = np.arange(8, dtype=np.int32).reshape(4, 2)
    out = run(mode, lambda x, i: lax.dot(x, i), np.ones((3, 4), np.float32), i)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.tile(i.sum(0), (3, 1)))


def test_precision_values():
    P = lax.Precision
    x = np.ones((2, 2), np.float32)
    for precision in (None, "highest", P.HIGH, ("float32", "bfloat16"), (P.DEFAULT, P.HIGHEST)):
        np.testing.assert_array_equal(lax.dot(x, x, precision=precision), 2 * x)
    assert P("tensorfloat32") is P.HIGH and P("fastest") is P.DEFAULT
    assert repr(P.HIGHEST) == "Precision.HIGHEST" and str(P.HIGHEST) == "HIGHEST"
    text = str(xjax.make_jaxpr(lambda x: lax.dot(x, x, precision="highest"))(x))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text


def test_wrappers():
    a, b = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    assert lax.batch_matmul(a, b).shape == (2, 3, 5)
    assert lax.dot(np.ones(3, np.float32), np.ones(3, np.float32)).shape == ()
    assert lax.dot(np.ones((2, 3), np.float32), np.ones(3, np.float32)).shape == (2,)
    dims = (((2,), (1,)), ((0,), (0,)))
    assert lax.dot(a, b, dimension_numbers=dims).shape == (2, 3, 5)


def test_jaxpr_printing():
    x = np.ones((3, 4), np.float32)
    text = str(xjax.make_jaxpr(lambda x, y: lax.dot_general(
        x, y, (((1,), (0,)), ((), ())), preferred_element_type=np.float32))(x, x.T))
    assert "dimension_numbers=(([1], [0]), ([], []))" in text
    assert "preferred_element_type=float32" in text


def test_jaxpr_printing_hides_unset_params():
    x = np.ones((3, 4), np.float32)
    text = str(xjax.make_jaxpr(lambda x, y: lax.dot(x, y))(x, x.T))
    assert "c:f32[3,3] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b" in text


ERRORS = [  # (call, exception, JAX 0.10.2's message)
    (lambda: lax.dot_general(np.ones((3, 4), np.int32), np.ones((4, 2), np.int32),
                             (((1,), (0,)), ((), ())), preferred_element_type=np.int8),
     TypeError, "`preferred_element_type` must not be narrower than the original type, got "
     "preferred_element_type of int8 for result type of int32."),
    (lambda: lax.dot_general(np.ones((3, 4)), np.ones((3, 2)), (((1,), (0,)), ((), ()))),
     TypeError, "dot_general requires contracting dimensions to have the same shape, got (4,) "
     "and (3,)."),
    (lambda: lax.dot_general(np.ones((3, 4)), np.ones((4, 2)), (((2,), (0,)), ((), ()))),
     TypeError, "dot_general requires lhs dimension numbers to be nonnegative and less than "
     "the number of axes of the lhs value, got lhs_batch of () and lhs_contracting of (2,) "
     "for lhs of rank 2"),
    (lambda: lax.dot_general(np.ones((2, 3, 4)), np.ones((3, 4, 5)),
                             (((2,), (1,)), ((0,), (0,)))),
     TypeError, "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
     "the same shape, got (2,) and (3,)."),
    (lambda: lax.dot_general(np.ones((2, 3, 4)), np.ones((2, 4, 5)),
                             (((0,), (0,)), ((0,), (0,)))),
     TypeError, "dot_general requires lhs batch dimensions to be disjoint from contracting "
     "dimensions, got lhs_batch (0,) and lhs_contracting (0,)."),
    (lambda: lax.dot_general(np.ones((2, 3, 4)), np.ones((2, 4, 5)),
                             (((2,), (1,)), ((0,), ()))),
     TypeError, "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, "
     "got lhs_batch (0,) and rhs_batch ()."),
    (lambda: lax.dot_general(np.ones((4, 4)), np.ones((4, 4)), (((1, 1), (0, 0)), ((), ()))),
     TypeError, "dot_general requires lhs contracting dimensions to be distinct, got "
     "lhs_contracting (1, 1)."),
    (lambda: lax.dot(np.ones((2, 3, 4)), np.ones((4, 5))), ValueError,
     "jax.lax.dot: dimension_numbers must be specified when not performing simple un-batched "
     "matrix-matrix, matrix-vector, or vector-vector products; got lhs_shape=(2, 3, 4) "
     "rhs_shape=(4, 5)"),
    (lambda: lax.batch_matmul(np.ones(3), np.ones((3, 2))), ValueError,
     "Arguments to batch_matmul must be at least 2D, got 1, 2"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_jax(case):
    call, exc, message = ERRORS[case]
    with pytest.raises(exc, match=re.escape(message)):
        call()


def test_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    for lhs_shape, rhs_shape, dims in CASES:
        for dtype, pref in ((np.float32, None), (np.int8, None), (np.int8, np.int32),
                            (dtypes.bfloat16, np.float32), (np.bool_, None)):
            lhs = (rng.standard_normal(lhs_shape) * 3).astype(dtype)
            rhs = (rng.standard_normal(rhs_shape) * 3).astype(dtype)
            want = jax.lax.dot_general(lhs, rhs, dims, preferred_element_type=pref)
            got = lax.dot_general(lhs, rhs, dims, preferred_element_type=pref)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got, np.float64),
                                       np.asarray(want, np.float64), rtol=1e-5, atol=1e-4)


def _fma_chain(a, b):
    """a . b accumulated left to right with one rounding per step (fused multiply-add)."""
    total = np.float32(np.float64(a[0]) * np.float64(b[0]))
    for x, y in zip(a[1:], b[1:]):
        total = np.float32(np.float64(total) + np.float64(x) * np.float64(y))
    return total


def test_jitted_vector_dot_accumulates_with_fma_as_jaxlib():
    # jaxlib rewrites vector-vector dots as a fused multiply-reduce (FMA accumulation); so
    # does xjax's lowering, where the plugin's dot kernel would round every product
    rng = np.random.default_rng(0)
    dot = xjax.jit(lambda a, b: lax.dot_general(a, b, (((0,), (0,)), ((), ()))))
    for _ in range(50):
        a, b = rng.standard_normal((2, 4)).astype(np.float32)
        assert np.asarray(dot(a, b)) == _fma_chain(a, b)


@pytest.mark.parametrize("n", [4, 33, 300])
def test_jitted_vector_and_batched_dots_match_jax_bitwise(n):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal((2, 6, n)).astype(np.float32)
    vector_dot = xjax.jit(xjax.numpy.dot)(a[0], b[0])
    np.testing.assert_array_equal(vector_dot, jax.jit(jax.numpy.dot)(a[0], b[0]))
    batched = xjax.jit(xjax.vmap(xjax.numpy.dot))(a, b)
    np.testing.assert_array_equal(batched, jax.jit(jax.vmap(jax.numpy.dot))(a, b))
