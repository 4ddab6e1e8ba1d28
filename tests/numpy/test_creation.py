"""Array creation: array/asarray conversion rules, filled arrays, ranges, eye; reprs."""

import operator
import warnings

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors
from xjax._src.core.trace import Tracer


def _same(x, expected, dtype=None, weak=False):
    assert isinstance(x, xjax.Array)
    np.testing.assert_array_equal(np.asarray(x), expected)
    if dtype is not None:
        assert x.dtype == dtype
    assert x.weak_type == weak


def test_reprs():
    assert repr(jnp.array([1., 2.])) == "Array([1., 2.], dtype=float32)"
    assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(jnp.array(1)) == "Array(1, dtype=int32, weak_type=True)"
    assert repr(jnp.float32(1)) == "Array(1., dtype=float32)"
    assert repr(jnp.zeros((2, 0))) == "Array([], shape=(2, 0), dtype=float32)"


@pytest.mark.parametrize("value,dtype,weak", [
    (1, np.int32, True), (1.0, np.float32, True), (1j, np.complex64, True),
    (True, np.bool_, False), ([1, 2], np.int32, False), ([1, 2.0], np.float32, False),
    ([1, True], np.int32, False), ((1, 2), np.int32, False), ([], np.float32, False),
    (np.float32(3), np.float32, False), (np.float64(1), np.float32, False),
    (np.int64(5), np.int32, False), (np.array([1.5], np.float16), np.float16, False),
    ([[1.5]], np.float32, False), ([np.float64(1), 2], np.float32, False),
])
def test_array_dtype_rules(value, dtype, weak):
    out = jnp.array(value)
    _same(out, np.asarray(value, dtype), dtype, weak)


def test_array_with_dtype():
    _same(jnp.array(1.7, dtype=jnp.int32), 1, np.int32)
    _same(jnp.array([1.5, 2], dtype=jnp.int32), [1, 2], np.int32)
    _same(jnp.array([[1.5]], dtype=jnp.bfloat16), [[1.5]], ml_dtypes.bfloat16)
    _same(jnp.array(jnp.array(1.0), dtype=jnp.int32), 1, np.int32)
    with pytest.raises(OverflowError):
        jnp.array(300, dtype=jnp.int8)
    with pytest.warns(UserWarning, match="float64 requested in array is not available"):
        assert jnp.array(1.0, dtype=jnp.float64).dtype == np.float32


def test_array_of_arrays_stacks_and_promotes():
    out = jnp.array([jnp.ones(2), np.ones(2)])
    _same(out, np.ones((2, 2)), np.float32)
    _same(jnp.array([jnp.array(1, jnp.int8), 2]), [1, 2], np.int8)
    _same(jnp.array([jnp.array(1), 2.5]), [1, 2.5], np.float32)
    _same(jnp.array([[jnp.array(1.0), 2.0], [3.0, 4.0]]), [[1, 2], [3, 4]], np.float32)


def test_array_keeps_weak_type_of_arrays_and_ndmin():
    _same(jnp.array(jnp.array(1.0)), 1.0, np.float32, True)
    out = jnp.array(1, ndmin=2)
    assert out.shape == (1, 1) and out.weak_type


def test_array_refuses_strings_and_none():
    with pytest.raises(TypeError):
        jnp.array("abc")
    with pytest.raises(ValueError):
        jnp.array(None)
    with pytest.raises(ValueError):
        jnp.array([[1, 2], [3]])
    with pytest.raises(OverflowError):
        jnp.array([2 ** 31])


def test_asarray_returns_the_same_array():
    x = jnp.arange(3)
    assert jnp.asarray(x) is x
    _same(jnp.asarray(x, dtype=jnp.float32), [0, 1, 2], np.float32)


def test_scalar_types_are_dtypes_and_constructors():
    assert np.dtype(jnp.float32) == np.float32
    assert jnp.zeros(2, jnp.int8).dtype == np.int8
    assert jnp.float32 == np.float32 and hash(jnp.float32) == hash(np.float32)
    assert isinstance(np.float32(1), jnp.float32)
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    _same(jnp.int32(2.7), 2, np.int32)
    _same(jnp.bfloat16(1.5), 1.5, ml_dtypes.bfloat16)
    _same(jnp.float32(jnp.arange(3)), [0, 1, 2], np.float32)
    assert jnp.bool_(3).dtype == np.bool_
    with pytest.warns(UserWarning):
        assert jnp.float64(1).dtype == np.float32


def test_scalar_types_compare_with_each_other():
    ne, eq = operator.ne, operator.eq
    assert ne(jnp.float16, jnp.float32) is True and eq(jnp.float16, jnp.float32) is False
    assert eq(jnp.float32, jnp.float32) is True and ne(jnp.float32, jnp.float32) is False
    assert jnp.float32 == np.dtype("float32") and jnp.float32 != "float32"
    assert ne(jnp.float32, np.float32) is False and np.float32 == jnp.float32
    assert len({jnp.float16, jnp.float32, np.float32}) == 2


@pytest.mark.parametrize("fn,fill", [(jnp.zeros, 0), (jnp.ones, 1), (jnp.empty, 0)])
def test_filled(fn, fill):
    _same(fn((2, 3)), np.full((2, 3), fill), np.float32)
    _same(fn(3, dtype=int), np.full(3, fill), np.int32)
    _same(fn((2, 2), dtype=bool), np.full((2, 2), fill, bool), np.bool_)
    _same(fn(np.int64(3)), np.full(3, fill), np.float32)
    _same(fn(jnp.array(3)), np.full(3, fill), np.float32)
    _same(fn(()), fill, np.float32)


def test_zeros_warns_for_float64():
    with pytest.warns(UserWarning, match="requested in zeros"):
        assert jnp.zeros(2, dtype=jnp.float64).dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.zeros(2, dtype=float).dtype == np.float32


def test_full():
    _same(jnp.full(2, 7), [7, 7], np.int32, True)
    _same(jnp.full(2, 7.0, dtype=jnp.int32), [7, 7], np.int32)
    _same(jnp.full((2,), jnp.array(3.0)), [3, 3], np.float32, True)
    _same(jnp.full((2, 3), jnp.array([1, 2, 3])), [[1, 2, 3]] * 2, np.int32)
    _same(jnp.full((2,), 1e10, dtype=jnp.int32), [2147483647] * 2, np.int32)
    with pytest.raises(TypeError, match="full requires ndarray or scalar arguments"):
        jnp.full((2, 3), [1, 2, 3])


def test_like_functions():
    _same(jnp.zeros_like(jnp.array(1.0)), 0.0, np.float32, True)
    _same(jnp.ones_like(3), 1, np.int32, True)
    _same(jnp.ones_like(jnp.ones(3), shape=(2,)), [1, 1], np.float32)
    _same(jnp.full_like(jnp.ones(2, jnp.int32), 2.5), [2, 2], np.int32)
    _same(jnp.full_like(jnp.array(1.), 2), 2.0, np.float32, True)
    _same(jnp.empty_like(jnp.ones((2, 2), jnp.int8)), np.zeros((2, 2)), np.int8)
    _same(jnp.zeros_like(jnp.ones(2), dtype=jnp.int8), [0, 0], np.int8)
    with pytest.raises(TypeError, match="zeros_like requires ndarray or scalar arguments"):
        jnp.zeros_like([1, 2])


def test_like_functions_accept_shape_dtype_struct():
    spec = xjax.ShapeDtypeStruct((2, 3), jnp.int8)
    _same(jnp.zeros_like(spec), np.zeros((2, 3)), np.int8)
    _same(jnp.ones_like(spec), np.ones((2, 3)), np.int8)
    _same(jnp.empty_like(spec), np.zeros((2, 3)), np.int8)
    _same(jnp.full_like(spec, 3), np.full((2, 3), 3), np.int8)
    _same(jnp.full_like(spec, jnp.array([1, 2, 3])), [[1, 2, 3]] * 2, np.int8)
    _same(jnp.zeros_like(spec, dtype=jnp.float32, shape=(4,)), np.zeros(4), np.float32)
    weak_spec = xjax.ShapeDtypeStruct((2,), jnp.float32, weak_type=True)
    _same(jnp.ones_like(weak_spec), [1, 1], np.float32, weak=False)
    _same(xjax.jit(lambda: jnp.ones_like(spec))(), np.ones((2, 3)), np.int8)


def test_shape_errors():
    with pytest.raises(TypeError, match="must have every element be nonnegative"):
        jnp.zeros(-1)
    with pytest.raises(TypeError, match=r"Shapes must be 1D sequences .*got \(2, 1.5\)"):
        jnp.zeros((2, 1.5))


@pytest.mark.parametrize("args,kwargs", [
    ((5,), {}), ((3.0,), {}), ((0, 5, 2), {}), ((5.0, 0, -1.5), {}), ((0.5, 3), {}),
    ((1, 2, 0.3), {}), ((4,), {"dtype": np.int8}), ((5,), {"dtype": np.float32}),
    ((2, 9, 3), {"dtype": np.float32}),
])
def test_arange_matches_numpy(args, kwargs):
    out = jnp.arange(*args, **kwargs)
    expected = np.arange(*args, **kwargs)
    if expected.dtype == np.float64:
        expected = np.arange(*args, dtype=np.float32)
    if expected.dtype == np.int64:
        expected = expected.astype(np.int32)
    _same(out, expected, expected.dtype)


def test_arange_of_concrete_array():
    _same(jnp.arange(jnp.array(4)), [0, 1, 2, 3], np.int32)


@pytest.mark.parametrize("kwargs", [
    {}, {"endpoint": False}, {"num": 1}, {"num": 0}, {"num": 7, "dtype": np.int32},
    {"num": 1000}, {"num": 2},
])
def test_linspace_matches_numpy(kwargs):
    start, stop = kwargs.pop("start", 0), kwargs.pop("stop", 10)
    out = jnp.linspace(start, stop, **kwargs)
    dtype = kwargs.pop("dtype", np.float32)
    expected = np.linspace(start, stop, **kwargs).astype(dtype)
    assert out.dtype == dtype and out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6, atol=1e-5)


def test_linspace_retstep_and_array_bounds():
    out, step = jnp.linspace(0, 1, 5, retstep=True)
    np.testing.assert_allclose(np.asarray(out), [0, .25, .5, .75, 1.])
    assert float(step) == 0.25
    _, step = jnp.linspace(0, 1, 1, retstep=True)
    assert np.isnan(float(step))
    out = jnp.linspace(jnp.array([0., 1.]), 2, 3)
    np.testing.assert_allclose(np.asarray(out), np.linspace([0., 1.], 2, 3))
    out = jnp.linspace(jnp.array([0., 1.]), 2, 3, axis=1)
    np.testing.assert_allclose(np.asarray(out), np.linspace([0., 1.], 2, 3, axis=1))
    _same(jnp.linspace(0, 10, 5, dtype=int), [0, 2, 5, 7, 10], np.int32)


def test_logspace():
    np.testing.assert_allclose(np.asarray(jnp.logspace(0, 3, 4)), [1, 10, 100, 1000],
                               rtol=1e-5)


def test_eye_and_identity():
    _same(jnp.eye(3), np.eye(3), np.float32)
    _same(jnp.eye(2, 3, k=1, dtype=int), np.eye(2, 3, k=1), np.int32)
    _same(jnp.eye(2, k=-1), np.eye(2, k=-1), np.float32)
    _same(jnp.identity(2, dtype=bool), np.eye(2, dtype=bool), np.bool_)


def test_creation_under_jit_is_traced():
    seen = {}

    @xjax.jit
    def f(x):
        seen["array"] = jnp.array(x.shape)
        seen["ones"] = jnp.ones(3)
        seen["eye"] = jnp.eye(2)
        seen["arange"] = jnp.arange(3)
        seen["asarray"] = jnp.asarray(np.ones(2))
        return jnp.array(x.shape).prod() + jnp.eye(2).sum() + jnp.arange(3).sum()

    assert int(f(jnp.ones((2, 3)))) == 6 + 2 + 3
    assert all(isinstance(v, Tracer) for v in seen.values())


def test_traced_sizes_raise_jax_errors():
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        xjax.jit(lambda n: jnp.zeros(n))(3)
    with pytest.raises(errors.ConcretizationTypeError, match="jnp.arange argument 'stop'"):
        xjax.jit(lambda n: jnp.arange(n))(3)
    with pytest.raises(TypeError, match=r"got \[Traced<ShapedArray\(int32\[\]\)>"):
        xjax.jit(lambda x: x.reshape(jnp.array(x.shape).prod()))(jnp.ones((2, 3)))


def test_copy():
    x = jnp.arange(3)
    _same(jnp.copy(x), [0, 1, 2], np.int32)


def test_arange_under_jit_stages_iota_as_jax():
    """JAX stages arange as iota (times step, plus start), not as a constant."""
    text = str(xjax.make_jaxpr(lambda: jnp.arange(2, 10, 2))())
    assert "iota[dimension=0 dtype=int32 shape=(4,)" in text
    assert "mul 2:i32[]" in text and "add 2:i32[]" in text
    assert "iota" in str(xjax.make_jaxpr(lambda: jnp.arange(5.0))())
    for args in [(10,), (2, 10), (10, 0, -3), (0.0, 1.0, 0.25), (5.0,)]:
        np.testing.assert_array_equal(np.asarray(xjax.jit(lambda a=args: jnp.arange(*a))()),
                                      np.asarray(jnp.arange(*args)))


def test_array_and_copy_give_a_new_array_with_its_own_buffer():
    import xjax
    a = jnp.arange(3.0)
    for copied in (jnp.array(a), jnp.copy(a), jnp.array(a, copy=True)):
        assert copied is not a
        np.testing.assert_array_equal(copied, a)
    assert jnp.asarray(a) is a  # asarray does not copy
    # Donating the copy leaves the original intact.
    copied = jnp.array(a)
    xjax.jit(lambda x: x * 2, donate_argnums=0)(copied)
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
