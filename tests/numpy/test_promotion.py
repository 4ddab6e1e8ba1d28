"""NumPy-style promotion in xjax.numpy: JAX's table for ``a + b``, weak types, Python scalars."""

import pathlib
import warnings

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core.config import config

TABLE = pathlib.Path(__file__).parent.parent / "data" / "promotion-table.tsv"
PY_SCALARS = {"int": 1, "float": 1.0, "complex": 1j}


def _rows():
    rows = []
    for line in TABLE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        x64, a, b, out, weak = line.split("\t")
        rows.append(pytest.param(x64 == "1", a, b, out, weak == "True",
                                 id=f"x64={x64}-{a}-{b}"))
    return rows


def _operand(name):
    if name in PY_SCALARS:
        return PY_SCALARS[name]
    dtype = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    return jnp.asarray(np.ones((), dtype))


@pytest.mark.parametrize("x64,a,b,out,weak", _rows())
def test_add_follows_jax_promotion_table(x64, a, b, out, weak):
    with config.override(jax_enable_x64=x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = jnp.add(_operand(a), _operand(b))
        assert (result.dtype.name, result.weak_type) == (out, weak)


@pytest.mark.parametrize("x64,a,b,out,weak", [r for r in _rows()
                                              if "complex" not in r.values[1:3]][::7])
def test_promotion_is_the_same_under_jit(x64, a, b, out, weak):
    with config.override(jax_enable_x64=x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, y = _operand(a), _operand(b)
        result = xjax.jit(lambda x, y: x + y)(x, y)
        assert (result.dtype.name, result.weak_type) == (out, weak)


def test_weak_types_of_created_arrays():
    assert jnp.array(1).weak_type and jnp.array(1).dtype == np.int32
    assert jnp.asarray(1.0).weak_type and jnp.asarray(1.0).dtype == np.float32
    assert jnp.full(2, 7).weak_type
    assert not jnp.array([1]).weak_type
    assert not jnp.array(True).weak_type
    assert not jnp.sum(jnp.array(1)).weak_type
    assert not jnp.sum(jnp.asarray(1.0)).weak_type


def test_int8_plus_python_int_wraps():
    out = jnp.ones(3, jnp.int8) + 300
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, [45, 45, 45])


def test_python_int_too_large_for_int32_overflows():
    with pytest.raises(OverflowError):
        jnp.ones(3, jnp.int8) + 2 ** 40
    with pytest.raises(OverflowError):
        jnp.array(2 ** 31)


def test_int_array_plus_python_float_is_weak_float32():
    for dtype in (jnp.int8, jnp.int32, jnp.uint16):
        out = jnp.ones(3, dtype) + 1.5
        assert (out.dtype, out.weak_type) == (np.float32, True)


def test_add_of_python_scalars_is_weak():
    out = jnp.add(1, 1.0)
    assert repr(out) == "Array(2., dtype=float32, weak_type=True)"


def test_float64_inputs_become_float32_without_x64():
    assert jnp.asarray(np.ones(3)).dtype == np.float32
    assert jnp.array(np.float64(1)).dtype == np.float32
    assert jnp.array(np.int64(5)).dtype == np.int32
    with config.override(jax_enable_x64=True):
        assert jnp.asarray(np.ones(3)).dtype == np.float64
        assert jnp.array(1.0).dtype == np.float64


def test_numpy_operands_are_strongly_typed():
    out = jnp.ones(3, jnp.float16) + np.float32(1)
    assert (out.dtype, out.weak_type) == (np.float32, False)
    out = np.ones(3, np.float32) + jnp.ones(3, jnp.float16)
    assert isinstance(out, xjax.Array) and out.dtype == np.float32


def test_unary_functions_keep_the_weak_type():
    assert jnp.exp(2).weak_type and jnp.exp(2).dtype == np.float32
    assert jnp.sqrt(2.0).weak_type
    assert jnp.negative(2).weak_type and jnp.negative(2).dtype == np.int32
    assert not jnp.log2(2.0).weak_type


def test_true_divide_of_ints_is_float():
    out = jnp.true_divide(jnp.array([1, 2]), 2)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [0.5, 1.0])


def test_clip_of_int_by_float_bound_is_weak_float():
    out = jnp.clip(jnp.arange(5), 1.5, 3)
    assert (out.dtype, out.weak_type) == (np.float32, True)
    np.testing.assert_array_equal(out, [1.5, 1.5, 2, 3, 3])


def test_rank_promotion_inserts_leading_dims():
    out = jnp.ones((3, 4)) + jnp.arange(4.0)
    assert out.shape == (3, 4)
    with config.override(jax_numpy_rank_promotion="raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion"):
            jnp.ones((3, 4)) + jnp.arange(4.0)
        assert (jnp.ones((3, 4)) + 1.0).shape == (3, 4)


def test_incompatible_shapes_raise():
    with pytest.raises(TypeError, match="incompatible shapes"):
        jnp.ones(3) + jnp.ones(4)


def test_promote_types_and_result_type_are_exported():
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
    assert jnp.result_type(jnp.int8, 1.0) == np.float32
    assert jnp.result_type(1) == np.int32
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.iinfo(jnp.int8).max == 127
    assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps
    assert jnp.can_cast(jnp.int8, jnp.int32)
    assert jnp.dtype("float32") == np.float32
