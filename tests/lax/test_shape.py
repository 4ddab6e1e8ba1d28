"""Structural primitives: results against NumPy (eager and under jit), JAX's error messages
and weak types, jaxpr printing, and (where JAX is installed) differential checks."""

import re

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.core import dtypes

MODES = ["eager", "jit"]


def run(mode, fun, *args):
    return xjax.jit(fun)(*args) if mode == "jit" else fun(*args)


def arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_in_dim(mode):
    x = arange((3, 1))
    out = run(mode, lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), x)
    np.testing.assert_array_equal(out, np.broadcast_to(x, (2, 3, 4)))
    # unsorted broadcast dimensions transpose as well
    y = arange((3, 4))
    out = run(mode, lambda y: lax.broadcast_in_dim(y, (4, 2, 3), (2, 0)), y)
    np.testing.assert_array_equal(out, np.broadcast_to(y.T[:, None, :], (4, 2, 3)))


@pytest.mark.parametrize("mode", MODES)
def test_reshape_squeeze_expand_collapse(mode):
    x = arange((2, 3, 4))
    np.testing.assert_array_equal(run(mode, lambda x: lax.reshape(x, (6, 4)), x),
                                  x.reshape(6, 4))
    np.testing.assert_array_equal(run(mode, lambda x: lax.reshape(x, (24,), (2, 0, 1)), x),
                                  x.transpose(2, 0, 1).reshape(24))
    np.testing.assert_array_equal(run(mode, lambda x: lax.collapse(x, 1), x), x.reshape(2, 12))
    np.testing.assert_array_equal(run(mode, lambda x: lax.collapse(x, -2, None), x),
                                  x.reshape(2, 12))
    y = arange((3, 1, 4, 1))
    np.testing.assert_array_equal(run(mode, lambda y: lax.squeeze(y, (-1, 1)), y),
                                  y.reshape(3, 4))
    out = run(mode, lambda x: lax.expand_dims(x, (0, -1)), x)
    assert out.shape == (1, 2, 3, 4, 1)
    assert lax.broadcast_to_rank(x, 5).shape == (1, 1, 2, 3, 4)
    assert lax.broadcast(x, (5, 6)).shape == (5, 6, 2, 3, 4)


@pytest.mark.parametrize("mode", MODES)
def test_transpose_rev_concatenate(mode):
    x = arange((2, 3, 4), np.int32)
    np.testing.assert_array_equal(run(mode, lambda x: lax.transpose(x, (2, 0, 1)), x),
                                  x.transpose(2, 0, 1))
    np.testing.assert_array_equal(run(mode, lambda x: lax.rev(x, (0, 2)), x), x[::-1, :, ::-1])
    y = arange((2, 1, 4), np.int32)
    np.testing.assert_array_equal(run(mode, lambda x, y: lax.concatenate([x, y, x], 1), x, y),
                                  np.concatenate([x, y, x], 1))


PAD_CASES = [  # operand, padding value, config, expected (measured on JAX 0.10.2)
    (np.arange(5), -1, [(-2, 3, 2)],
     [-1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, -1]),
    (np.arange(6).reshape(2, 3), 9, [(1, -1, 1), (-2, 1, 0)], [[9, 9], [2, 9], [9, 9]]),
    (np.arange(3), 9, [(-4, 1, 1)], [2, 9]),
    (np.zeros((0,)), 9, [(1, 1, 2)], [9, 9]),
    (np.arange(4), 7, [(-4, 0, 0)], []),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(PAD_CASES)))
def test_pad_negative_and_interior(mode, case):
    x, value, config, expected = PAD_CASES[case]
    x = np.asarray(x, np.int32)
    out = run(mode, lambda x, v: lax.pad(x, v, config), x, np.int32(value))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.asarray(expected, np.int32).reshape(out.shape))


@pytest.mark.parametrize("mode", MODES)
def test_iota(mode):
    np.testing.assert_array_equal(run(mode, lambda: lax.iota(np.int8, 4)),
                                  np.arange(4, dtype=np.int8))
    out = run(mode, lambda: lax.broadcasted_iota(np.complex64, (2, 3), 1))
    assert out.dtype == np.complex64 and not out.weak_type
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3), (2, 3)))


def test_full_and_full_like():
    out = lax.full((2, 3), 7)
    assert (out.dtype, out.weak_type) == (np.dtype(np.int32), True)
    out = lax.full((2,), 1.5, np.float16)
    assert (out.dtype, out.weak_type) == (np.dtype(np.float16), False)
    assert not lax.full((2,), np.float32(1)).weak_type
    assert lax.full((2,), True).dtype == np.bool_
    out = lax.full_like(np.ones((2, 2), np.int8), 3)
    assert out.dtype == np.int8 and out.shape == (2, 2)
    np.testing.assert_array_equal(out, np.full((2, 2), 3, np.int8))
    out = lax.full_like(np.ones(3, np.float32), 2, shape=(4,), dtype=np.int16)
    assert (out.shape, out.dtype) == ((4,), np.dtype(np.int16))
    z = lax.zeros_like_array(lax.full((3,), 1.0))
    assert z.weak_type and z.dtype == np.float32
    np.testing.assert_array_equal(z, np.zeros(3))


def test_full_of_traced_value():
    out = xjax.jit(lambda v: lax.full((2, 2), v, np.int32))(np.float32(2.7))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.full((2, 2), 2))


def test_weak_types():
    weak = lax.full((3,), 1.0)
    strong = np.ones(3, np.float32)
    assert lax.reshape(weak, (3, 1)).weak_type
    assert lax.broadcast_in_dim(weak, (2, 3), (1,)).weak_type
    assert lax.transpose(lax.reshape(weak, (3, 1)), (1, 0)).weak_type
    assert lax.rev(weak, (0,)).weak_type
    assert lax.pad(weak, 0.0, [(1, 1, 0)]).weak_type
    assert not lax.pad(weak, np.float32(0), [(1, 1, 0)]).weak_type
    assert lax.concatenate([weak, weak], 0).weak_type
    assert not lax.concatenate([weak, strong], 0).weak_type
    assert not lax.iota(np.int32, 3).weak_type


def test_shortcuts_return_the_operand():
    x = lax.full((2, 3), 1.0, np.float32)
    assert lax.reshape(x, (2, 3)) is x
    assert lax.transpose(x, (0, 1)) is x
    assert lax.squeeze(x, ()) is x
    assert lax.concatenate([x], 0) is x
    assert lax.broadcast(x, ()) is x


ERRORS = [  # (call, exception, JAX 0.10.2's message)
    (lambda: lax.broadcast_in_dim(np.ones((3, 4)), (3,), (0,)), TypeError,
     "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
     "broadcast_dimensions (0,) for operand ndim 2."),
    (lambda: lax.broadcast_in_dim(np.ones((3, 4)), (3, 5), (0, 1)), TypeError,
     "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
     "corresponding dimensions in the target broadcast shape; got operand of shape (3, 4), "
     "target broadcast shape (3, 5), broadcast_dimensions (0, 1) "),
    (lambda: lax.broadcast_in_dim(np.ones((3, 4)), (3, 4), (0, 2)), TypeError,
     "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got (0, 2) "
     "for operand ndim 2 and shape (3, 4)."),
    (lambda: lax.broadcast_in_dim(np.ones((3, 4)), (3, -4), (0, 1)), TypeError,
     "broadcast_in_dim shape must have every element be nonnegative, got (3, -4)."),
    (lambda: lax.reshape(np.ones((3, 4)), (-1, 3)), TypeError,
     "reshape new_sizes must all be positive, got (-1, 3)."),
    (lambda: lax.reshape(np.ones((3, 4)), (12,), (0,)), TypeError,
     "reshape dimensions must be a permutation of operand dimensions, got dimensions (0,) for "
     "shape (3, 4)."),
    (lambda: lax.squeeze(np.ones((3, 4)), (0,)), ValueError,
     "cannot select an axis to squeeze out which has size not equal to one, got "
     "shape=(3, 4) and dimensions=(0,)"),
    (lambda: lax.squeeze(np.ones((3, 4)), (2,)), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: lax.squeeze(np.ones((3, 1)), (1, 1)), ValueError,
     "dimensions are not unique: (1, 1)"),
    (lambda: lax.expand_dims(np.ones((3, 4)), (0, 0)), ValueError,
     "repeated axis in lax.expand_dims: (0, 0)"),
    (lambda: lax.transpose(np.ones((3, 4)), (0, 0)), TypeError,
     "transpose permutation isn't a permutation of operand dimensions, got permutation (0, 0) "
     "for operand shape (3, 4)."),
    (lambda: lax.rev(np.ones((3, 4)), (2,)), TypeError,
     "rev dimensions must all be less than operand ndim, got dimensions (2,) for operand "
     "ndim 2."),
    (lambda: lax.rev(np.ones((3, 4)), (1, 1)), TypeError,
     "rev dimensions must be unique, got (1, 1)."),
    (lambda: lax.concatenate([np.ones((3, 4), np.float32), np.ones((3, 4), np.int32)], 0),
     TypeError, "lax.concatenate requires arguments to have the same dtypes, got float32, "
     "int32. (Tip: jnp.concatenate is a similar function that does automatic type promotion "
     "on inputs)."),
    (lambda: lax.concatenate([np.ones((3, 4)), np.ones((3, 5))], 0), TypeError,
     "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
     "concatenated: concatenating along dimension 0 for shapes (3, 4), (3, 5)."),
    (lambda: lax.concatenate([np.ones((3, 4)), np.ones(3)], 0), TypeError,
     "Cannot concatenate arrays with different numbers of dimensions: got (3, 4), (3,)."),
    (lambda: lax.concatenate([np.ones((3, 4)), np.ones((3, 4))], 2), TypeError,
     "concatenate dimension out of bounds: dimension 2 for shapes (3, 4), (3, 4)."),
    (lambda: lax.concatenate([], 0), ValueError,
     "concatenate requires a non-empty sequences of arrays"),
    (lambda: lax.pad(np.ones((3, 4), np.float32), np.int32(0), [(1, 1, 0), (0, 0, 0)]),
     TypeError, "pad operand and padding_value must be same dtype: got float32 and int32."),
    (lambda: lax.pad(np.ones((3, 4), np.float32), 0, [(1, 1, 0), (0, 0, 0)]),
     TypeError, "pad operand and padding_value must be same dtype: got float32 and int32."),
    (lambda: lax.pad(np.ones((3, 4)), np.zeros(2), [(1, 1, 0), (0, 0, 0)]), ValueError,
     "padding_value must be a scalar; got np.shape(padding_value)=(2,)"),
    (lambda: lax.pad(np.ones((3, 4)), 0.0, [(1, 1, 0)]), ValueError,
     "length of padding_config must equal the number of axes of operand, got padding_config "
     "((1, 1, 0),) for operand shape (3, 4)"),
    (lambda: lax.pad(np.ones((3, 4)), 0.0, [(1, 1, -1), (0, 0, 0)]), ValueError,
     "interior padding in padding_config must be nonnegative, got padding_config "
     "((1, 1, -1), (0, 0, 0))"),
    (lambda: lax.pad(np.ones((3, 4)), 0.0, [(-2, -2, 0), (0, 0, 0)]), ValueError,
     "Dimension size after padding is not at least 0, got result shape (-1, 4), for "
     "padding_config ((-2, -2, 0), (0, 0, 0)) and operand shape (3, 4)"),
    (lambda: lax.iota(np.bool_, 3), TypeError,
     "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
     "complexfloating."),
    (lambda: lax.iota(np.int32, -1), TypeError,
     "iota shape must have every element be nonnegative, got (-1,)."),
    (lambda: lax.broadcasted_iota(np.int32, (2, 3), 2), ValueError,
     "iota dimension must be between 0 and len(shape), got dimension=2 for shape=(2, 3)"),
    (lambda: lax.full((2,), np.ones(2)), TypeError,
     "full must be called with scalar fill_value, got fill_value.shape (2,)."),
    (lambda: lax.full((2.0,), 1), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got (2.0,)."),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_jax(case):
    call, exc, message = ERRORS[case]
    with pytest.raises(exc, match=re.escape(message)):
        call()


def test_jaxpr_printing():
    x = np.ones((3, 4), np.float32)
    text = str(xjax.make_jaxpr(lambda x: lax.pad(lax.transpose(x, (1, 0)), 0.0,
                                                 [(1, 2, 0), (-1, 0, 1)]))(x))
    assert "transpose[permutation=(1, 0)] a" in text
    assert "pad[padding_config=((1, 2, 0), (-1, 0, 1))] b 0.0:f32[]" in text
    text = str(xjax.make_jaxpr(lambda x: lax.reshape(x, (4, 3)))(x))
    assert "reshape[dimensions=None new_sizes=(4, 3) sharding=None] a" in text
    text = str(xjax.make_jaxpr(lambda: lax.iota(np.int32, 5))())
    assert "iota[dimension=0 dtype=int32 shape=(5,) sharding=None]" in text


def test_jaxpr_printing_hides_default_params():
    text = str(xjax.make_jaxpr(lambda: lax.full((2, 3), 1.0))())
    assert "a:f32[2,3] = broadcast_in_dim 1.0:f32[]" in text
    x = np.ones((3, 4), np.float32)
    text = str(xjax.make_jaxpr(lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)))(x))
    assert "broadcast_in_dim[broadcast_dimensions=(1, 2)] a" in text


def test_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.int8, np.uint16, dtypes.bfloat16, np.bool_, np.complex64):
        x = (rng.standard_normal((3, 1, 4)) * 5).astype(dtype)
        v = np.asarray(1, dtype)
        funcs = [
            lambda m, x, v: m.pad(x, v, [(1, -1, 2), (0, 2, 1), (-2, 1, 0)]),
            lambda m, x, v: m.broadcast_in_dim(x, (2, 3, 5, 4), (1, 2, 3)),
            lambda m, x, v: m.rev(m.transpose(x, (2, 0, 1)), (0, 1)),
            lambda m, x, v: m.concatenate([x, x], 1),
            lambda m, x, v: m.reshape(x, (4, 3), (2, 1, 0)),
        ]
        for f in funcs:
            want = np.asarray(f(jax.lax, x, v))
            got = np.asarray(f(lax, x, v))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_split_stack_unstack_tile(mode):
    x = arange((6, 4), np.int32)
    parts = run(mode, lambda x: lax.split(x, (1, 0, 5), 0), x)
    assert [p.shape for p in parts] == [(1, 4), (0, 4), (5, 4)]
    np.testing.assert_array_equal(parts[2], x[1:])
    np.testing.assert_array_equal(run(mode, lambda x: lax.stack([x, -x], -1), x),
                                  np.stack([x, -x], -1))
    rows = run(mode, lambda x: lax.unstack(x, 1), x)
    assert len(rows) == 4
    np.testing.assert_array_equal(rows[3], x[:, 3])
    np.testing.assert_array_equal(run(mode, lambda x: lax.tile(x, (2, 3)), x), np.tile(x, (2, 3)))


STACKING_ERRORS = [  # (call, exception, JAX 0.10.2's message)
    (lambda: lax.split(np.ones((6, 4)), (1, 4), 0), ValueError,
     "Sum of sizes 5 must be equal to dimension 0 of the operand shape [6, 4]"),
    (lambda: lax.split(np.ones((6, 4)), (-1, 7), 0), ValueError,
     "Sizes passed to split must be nonnegative, got [-1, 7]"),
    (lambda: lax.split(np.ones((6, 4)), (1, 5), 2), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: lax.stack([np.ones((6, 4)), np.ones((6, 5))], 0), ValueError,
     "All input arrays must have the same shape. Got (6, 4), (6, 5)."),
    (lambda: lax.stack([np.ones((6, 4), np.float32), np.ones((6, 4), np.int32)], 0), TypeError,
     "lax.stack requires arguments to have the same dtypes, got float32, int32."),
    (lambda: lax.stack([np.ones((6, 4)), np.ones((6, 4))], 3), ValueError,
     "axis 3 is out of bounds for array of dimension 3"),
    (lambda: lax.tile(np.ones((6, 4)), (2,)), TypeError,
     "reps length must be equal to the ndim of x, got len(reps)=1 and x.ndim=2."),
]


@pytest.mark.parametrize("case", range(len(STACKING_ERRORS)))
def test_stacking_errors_match_jax(case):
    call, exc, message = STACKING_ERRORS[case]
    with pytest.raises(exc, match=re.escape(message)):
        call()


def test_stacking_jaxprs():
    x = np.ones((6, 4), np.float32)
    text = str(xjax.make_jaxpr(lambda x: lax.split(x, (1, 5), 0))(x))
    assert "b:f32[1,4] c:f32[5,4] = split[axis=0 sizes=(1, 5)] a" in text
    text = str(xjax.make_jaxpr(lambda x: lax.stack([x, x], 1))(x))
    assert "b:f32[6,2,4] = stack[axis=1] a a" in text
    text = str(xjax.make_jaxpr(lambda x: lax.tile(x, (2, 1)))(x))
    assert "b:f32[12,4] = tile[reps=(2, 1)] a" in text
