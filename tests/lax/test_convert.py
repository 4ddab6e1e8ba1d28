"""Dtype conversions: XLA's saturating float-to-int conversion, bool and complex rules,
dtype canonicalization, bitcasts that change the last dimension, reduce_precision; values
measured on JAX 0.10.2, checked eagerly and under jit."""

import re

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.core import dtypes

MODES = ["eager", "jit"]
SPECIALS = np.array([1e10, -1e10, np.nan, np.inf, -np.inf, 2.7, -2.7, 300.0], np.float32)


def run(mode, fun, *args):
    return xjax.jit(fun)(*args) if mode == "jit" else fun(*args)


def convert(dtype):
    return lambda x: lax.convert_element_type(x, dtype)


def check(out, want, dtype):
    out = np.asarray(out)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.array(want, dtype=dtype))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype,want", [
    (np.int32, [2147483647, -2147483648, 0, 2147483647, -2147483648, 2, -2, 300]),
    (np.int8, [127, -128, 0, 127, -128, 2, -2, 127]),
    (np.uint8, [255, 0, 0, 255, 0, 2, 0, 255]),
    (np.uint32, [4294967295, 0, 0, 4294967295, 0, 2, 0, 300]),
])
def test_float_to_int_saturates(mode, dtype, want):
    check(run(mode, convert(dtype), SPECIALS), want, dtype)


@pytest.mark.parametrize("mode", MODES)
def test_float_to_int64_saturates(mode):
    with xjax.config.override(jax_enable_x64=True):
        x = np.array([1e19, -1e19, np.nan, 2.0 ** 62, -2.5, 1e20], np.float64)
        check(run(mode, convert(np.int64), x),
              [2 ** 63 - 1, -2 ** 63, 0, 2 ** 62, -2, 2 ** 63 - 1], np.int64)
        check(run(mode, convert(np.uint64), x),
              [10 ** 19, 0, 0, 2 ** 62, 0, 2 ** 64 - 1], np.uint64)


@pytest.mark.parametrize("mode", MODES)
def test_bool_and_complex_conversions(mode):
    z = np.array([1 + 2j, 1j, 0], np.complex64)
    check(run(mode, convert(np.bool_), z), [True, False, False], np.bool_)  # real part only
    check(run(mode, convert(np.float32), z), [1, 0, 0], np.float32)
    check(run(mode, convert(np.int32), z), [1, 0, 0], np.int32)
    x = np.array([0.5, 0.0, np.nan, -0.0], np.float32)
    check(run(mode, convert(np.bool_), x), [True, False, True, False], np.bool_)
    check(run(mode, convert(np.float32), np.array([True, False])), [1, 0], np.float32)


@pytest.mark.parametrize("mode", MODES)
def test_int_and_float_conversions(mode):
    check(run(mode, convert(np.uint8), np.array([300, -1, 70000], np.int32)), [44, 255, 112],
          np.uint8)
    check(run(mode, convert(np.int32), np.array([4294967295, 3000000000], np.uint32)),
          [-1, -1294967296], np.int32)
    out = run(mode, convert(np.float16), np.array([1e10, 65520, 1e-8], np.float32))
    check(out, [np.inf, np.inf, 0], np.float16)
    out = run(mode, convert(dtypes.bfloat16), np.array([3.4e38, 1.0], np.float32))
    assert out.dtype == dtypes.bfloat16 and np.isinf(np.asarray(out)[0].astype(np.float32))


def test_canonicalization_and_no_op():
    x = np.ones(3, np.float32)
    assert lax.convert_element_type(x, np.float64).dtype == np.float32  # x64 disabled
    assert lax.convert_element_type(1, float).dtype == np.float32
    assert lax.convert_element_type(1.5, int).dtype == np.int32
    assert not lax.convert_element_type(1.0, np.float32).aval.weak_type
    assert "convert_element_type" not in str(xjax.make_jaxpr(convert(np.float32))(x))
    text = str(xjax.make_jaxpr(convert(np.int32))(1.0))
    assert "convert_element_type[new_dtype=int32 weak_type=False]" in text
    with pytest.raises(TypeError, match="JAX only supports number, bool, and string dtypes"):
        lax.convert_element_type(x, object)


@pytest.mark.parametrize("mode", MODES)
def test_bitcast_convert_type(mode):
    x = np.array([1.0, 2.0], np.float32)
    check(run(mode, lambda x: lax.bitcast_convert_type(x, np.int32), x), [1065353216,
                                                                          1073741824], np.int32)
    check(run(mode, lambda x: lax.bitcast_convert_type(x, np.uint8), x),
          [[0, 0, 128, 63], [0, 0, 0, 64]], np.uint8)
    check(run(mode, lambda x: lax.bitcast_convert_type(x, np.uint16), np.ones((2, 2), np.uint8)),
          [257, 257], np.uint16)
    out = run(mode, lambda x: lax.bitcast_convert_type(x, np.int32), np.float32(1.0))
    assert out.shape == () and int(np.asarray(out)) == 1065353216


def test_bitcast_errors():
    with pytest.raises(ValueError, match=re.escape(
            "Attempting to convert array of shape (2, 3) from uint8 of size 8 bits to uint16 of "
            "size 16, bits but 3 * 8 != 16")):
        lax.bitcast_convert_type(np.ones((2, 3), np.uint8), np.uint16)
    with pytest.raises(TypeError, match=re.escape(
            "lax.bitcast_convert_type does not support bool or complex values unless the "
            "operand and destination types match. Got operand dtype=bool, "
            "new_dtype=dtype('uint8').")):
        lax.bitcast_convert_type(np.ones(2, bool), np.uint8)
    text = str(xjax.make_jaxpr(lambda x: lax.bitcast_convert_type(x, np.int64))(np.int32(1)))
    assert "bitcast_convert_type[new_dtype=int32]" in text


@pytest.mark.parametrize("mode", MODES)
def test_reduce_precision(mode):
    x = np.array([np.nan, np.inf, 1.0001, 1e6, 1e-5, 6e-5, 1.5], np.float32)
    out = run(mode, lambda x: lax.reduce_precision(x, 5, 10), x)
    np.testing.assert_array_equal(np.asarray(out), [np.nan, np.inf, 1.0, np.inf, 0.0, 0.0, 1.5])
    out = run(mode, lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=0), x)
    np.testing.assert_array_equal(np.asarray(out),
                                  [np.nan, np.inf, 1.0, np.inf, 0.0, 2.0 ** -14, 2.0])
    assert lax.reduce_precision(1.0, 5, 10).aval.weak_type
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype int32"):
        lax.reduce_precision(np.int32(1), 5, 10)
    with pytest.raises(TypeError):
        lax.reduce_precision(1.0, 5.0, 10)
