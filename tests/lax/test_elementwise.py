"""Elementwise arithmetic: the semantics where XLA (and so JAX) differs from NumPy, JAX's
error messages and weak types, jaxpr printing. Expected values were measured on JAX 0.10.2;
each is checked eagerly (NumPy impls) and under jit (XLA)."""

import re

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.core import dtypes

MODES = ["eager", "jit"]
I32_MIN = np.iinfo(np.int32).min


def run(mode, fun, *args):
    return xjax.jit(fun)(*args) if mode == "jit" else fun(*args)


def f32(*values):
    return np.array(values, np.float32)


def i32(*values):
    return np.array(values, np.int32)


def assert_same(got, want):
    """Equal values (NaN == NaN), dtypes and signs of zeros."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    if dtypes.is_float(want.dtype):  # signs of zeros (and of everything but NaN)
        got32, want32 = got.astype(np.float32), want.astype(np.float32)
        numbers = ~np.isnan(want32)
        np.testing.assert_array_equal(np.signbit(got32[numbers]), np.signbit(want32[numbers]))


# -- no promotion, dtype classes, shapes --


def test_lax_never_promotes():
    msg = ("lax.add requires arguments to have the same dtypes, got int32, float32. (Tip: "
           "jnp.add is a similar function that does automatic type promotion on inputs).")
    with pytest.raises(TypeError, match=re.escape(msg)):
        lax.add(1, 1.0)
    with pytest.raises(TypeError, match="lax.mul requires arguments to have the same dtypes, "
                                        r"got float32, int32\. \(Tip: jnp.multiply"):
        lax.mul(f32(1), i32(1))
    with pytest.raises(TypeError, match="got int8, int32"):
        lax.add(np.ones(2, np.int8), 2)


@pytest.mark.parametrize("fun,args,message", [
    (lax.floor, (i32(1),), "floor does not accept dtype int32. Accepted dtypes are subtypes "
                           "of floating."),
    (lax.exp, (i32(1),), "exp does not accept dtype int32. Accepted dtypes are subtypes of "
                         "floating, complexfloating."),
    (lax.abs, (np.ones(2, np.uint8),), "abs does not accept dtype uint8. Accepted dtypes are "
                                       "subtypes of floating, complexfloating, signedinteger."),
    (lax.sign, (np.ones(2, bool),), "sign does not accept dtype bool. Accepted dtypes are "
                                    "subtypes of integer, floating, complexfloating."),
    (lax.add, (np.ones(2, bool), np.ones(2, bool)),
     "add does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, complexfloating."),
    (lax.add, (f32(1), np.ones(1, bool)),
     "add does not accept dtype bool at position 1. Accepted dtypes at position 1 are "
     "subtypes of integer, floating, complexfloating."),
    (lax.rem, (np.ones(1, np.complex64),) * 2,
     "rem does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating."),
    (lax.conj, (np.ones(1, np.float16),), "conj does not accept dtype float16. Accepted "
                                          "dtypes are subtypes of float32, complexfloating, "
                                          "float64."),
    (lax.complex, (np.ones(1, np.float16),) * 2,
     "complex does not accept dtype float16 at position 0. Accepted dtypes at position 0 are "
     "subtypes of float32, float64."),
    (lax.real, (f32(1),), "real does not accept dtype float32. Accepted dtypes are subtypes "
                          "of complexfloating."),
])
def test_dtype_errors(fun, args, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        fun(*args)


def test_shape_rules():
    with pytest.raises(TypeError, match=re.escape("add: arrays must have the same number of "
                                                  "dimensions, got {1, 2}")):
        lax.add(np.ones((2, 3), np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=re.escape("add got incompatible shapes for "
                                                  "broadcasting: (2, 3), (3, 2).")):
        lax.add(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))
    # size-1 dims broadcast both ways; rank-0 operands broadcast to any rank
    out = lax.add(np.ones((1, 2), np.float32), np.ones((3, 1), np.float32))
    assert out.shape == (3, 2)
    assert lax.add(np.ones((2, 3), np.float32), np.float32(1)).shape == (2, 3)


def test_shape_checked_before_dtype():
    with pytest.raises(TypeError, match="same number of dimensions"):
        lax.add(np.ones((2, 3), bool), np.ones(3, np.float32))


# -- weak types --


@pytest.mark.parametrize("mode", MODES)
def test_weak_types(mode):
    assert run(mode, lambda: lax.add(1.0, 2.0)).aval.weak_type
    assert not lax.add(f32(1, 2), 2.0).aval.weak_type
    assert not lax.add(np.float32(1), 2.0).aval.weak_type
    assert lax.is_finite(1.0).aval.weak_type
    assert lax.abs(1j).dtype == np.float32 and lax.abs(1j).aval.weak_type
    assert lax.conj(1.0).dtype == np.complex64 and lax.conj(1.0).aval.weak_type
    assert lax.integer_pow(2.0, 2).aval.weak_type
    assert lax.round(2.5).aval.weak_type
    assert not lax.complex(1.0, np.float32(2)).aval.weak_type


# -- division and remainder: XLA's integer semantics --


@pytest.mark.parametrize("mode", MODES)
def test_integer_division_truncates(mode):
    x, y = i32(-7, 7, -7, 7, 5, -5, I32_MIN), i32(2, -2, -2, 2, 0, 0, -1)
    assert_same(run(mode, lax.div, x, y), i32(-3, -3, 3, 3, -1, -1, I32_MIN))
    assert_same(run(mode, lax.rem, x, y), i32(-1, 1, -1, 1, 5, -5, 0))


@pytest.mark.parametrize("mode", MODES)
def test_unsigned_division_by_zero(mode):
    x, y = np.array([5, 7], np.uint8), np.array([0, 2], np.uint8)
    assert_same(run(mode, lax.div, x, y), np.array([255, 3], np.uint8))
    assert_same(run(mode, lax.rem, x, y), np.array([5, 1], np.uint8))


@pytest.mark.parametrize("mode", MODES)
def test_float_remainder_has_sign_of_dividend(mode):
    x, y = f32(5.5, -5.5, -7.0, 7.0, np.inf), f32(2, 2, 0, np.inf, 2)
    assert_same(run(mode, lax.rem, x, y), f32(1.5, -1.5, np.nan, 7.0, np.nan))


@pytest.mark.parametrize("mode", MODES)
def test_complex_division_by_zero(mode):
    x = np.array([1 + 1j, -1 + 2j], np.complex64)
    y = np.array([0j, complex(-0.0, 0.0)], np.complex64)
    out = np.asarray(run(mode, lax.div, x, y))
    np.testing.assert_array_equal(out, np.array([complex(np.inf, np.inf),
                                                 complex(np.inf, -np.inf)], np.complex64))


# -- float division by a broadcast divisor: JAX's XLA multiplies by the reciprocal --


def _reciprocal_product(x, y):
    """NumPy reference for JAX's ``x / broadcast(y)``: ``x * (1 / y)``, each step rounded
    to the dtype (bfloat16 computed in float32 and rounded once)."""
    if x.dtype == dtypes.bfloat16:
        return (x.astype(np.float32) * (np.float32(1) / y.astype(np.float32))).astype(x.dtype)
    return x * (np.ones((), x.dtype) / y)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, dtypes.bfloat16])
def test_division_by_broadcast_is_reciprocal_product(mode, dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, (300, 7)).astype(dtype)
    row, scalar = rng.uniform(0.5, 3, 7).astype(dtype), np.asarray(2.9, dtype)
    jnp = xjax.numpy
    got = run(mode, lambda x, v: jnp.asarray(x) / v, x, row)
    assert_same(got, _reciprocal_product(x, row))
    assert_same(run(mode, lax.div, x, scalar), _reciprocal_product(x, scalar))
    if dtype != dtypes.bfloat16:  # (in float32, bfloat16's product rounds as the quotient)
        # the reference does differ from exact division here, so the check can fail
        assert (np.asarray(_reciprocal_product(x, row)) != x / row).any()


def test_quotient_of_quotients_is_left_to_xla():
    """XLA folds single-use quotients first, (a/b)/(c/d) = (a*d)/(b*c), and only then turns
    divisions by broadcasts into products: the lowering must not pre-empt the fold (JAX's
    random.f computes its ratio this way)."""
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.5, 2, (2, 300)).astype(np.float32)
    v, w = np.float32(3.0), np.float32(5.0)
    got = xjax.jit(lambda x, y, v, w: (x / v) / (y / w))(x, y, v, w)
    assert_same(got, (x * w) / (v * y))
    assert (np.asarray(got) != (x * (1 / v)) / (y * (1 / w))).any()


@pytest.mark.parametrize("mode", MODES)
def test_division_of_equal_shapes_is_exact(mode):
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-4, 4, (2, 500)).astype(np.float32)
    assert_same(run(mode, lax.div, x, y), x / y)
    c = (x + 1j * y).astype(np.complex64)
    row = c[:3]
    want = np.asarray(lax.div(c[:, None], np.broadcast_to(row, (500, 3))))
    np.testing.assert_allclose(np.asarray(run(mode, lambda a, b: a[:, None] / b, c, row)),
                               want, rtol=1e-6)


def test_division_by_broadcast_matches_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(2)
    x, v = rng.random((1000, 10)).astype(np.float32), rng.random(10).astype(np.float32)
    for fun in (lambda n: lambda x, v: x / v, lambda n: lambda x, v: x / n.sqrt(v),
                lambda n: lambda x, v: x / 3.0):
        want = np.asarray(jax.jit(fun(jax.numpy))(x, v))
        np.testing.assert_array_equal(np.asarray(xjax.jit(fun(xjax.numpy))(x, v)), want)
        np.testing.assert_array_equal(np.asarray(fun(xjax.numpy)(xjax.numpy.asarray(x), v)),
                                      np.asarray(fun(jax.numpy)(jax.numpy.asarray(x), v)))


@pytest.mark.parametrize("mode", MODES)
def test_integer_overflow_wraps(mode):
    big = i32(2 ** 31 - 1)
    assert_same(run(mode, lax.add, big, i32(1)), i32(I32_MIN))
    assert_same(run(mode, lax.neg, i32(I32_MIN)), i32(I32_MIN))
    assert_same(run(mode, lax.abs, i32(I32_MIN)), i32(I32_MIN))
    assert_same(run(mode, lax.neg, np.array([3], np.uint8)), np.array([253], np.uint8))
    assert_same(run(mode, lax.mul, np.array([200], np.uint8), np.array([2], np.uint8)),
                np.array([144], np.uint8))


# -- powers --


@pytest.mark.parametrize("mode", MODES)
def test_integer_pow(mode):
    assert_same(run(mode, lambda x: lax.integer_pow(x, -2), f32(2.0, 0.0)), f32(0.25, np.inf))
    assert_same(run(mode, lambda x: lax.integer_pow(x, 0), f32(2.0, np.nan)), f32(1, 1))
    assert_same(run(mode, lambda x: lax.integer_pow(x, 31), i32(2, 3)),
                i32(I32_MIN, 1264544299))
    assert_same(run(mode, lax.reciprocal, f32(4.0)), f32(0.25))


def test_integer_pow_errors_and_jaxpr():
    with pytest.raises(TypeError, match=re.escape("Integers cannot be raised to negative "
                                                  "powers, got integer_pow(int32[2], -2)")):
        lax.integer_pow(i32(1, 2), -2)
    text = str(xjax.make_jaxpr(lax.reciprocal)(1.0))
    assert "integer_pow[y=-1]" in text


@pytest.mark.parametrize("mode", MODES)
def test_pow(mode):
    out = run(mode, lax.pow, f32(2.0, -2.0, 0.0), i32(2, 3, -1))  # integer exponents
    assert_same(out, f32(4.0, -8.0, np.inf))
    out = run(mode, lax.pow, f32(-8.0, 2.0), f32(1 / 3, 0.5))
    np.testing.assert_allclose(np.asarray(out), [np.nan, np.sqrt(2)], rtol=1e-6)
    with pytest.raises(TypeError, match="two inexact dtypes must match, but got float32 and "
                                        "complex64 respectively"):
        lax.pow(f32(1), np.ones(1, np.complex64))
    with pytest.raises(TypeError, match="pow does not accept dtype int32 at position 0"):
        lax.pow(i32(2), i32(2))


# -- sign, abs, rounding --


@pytest.mark.parametrize("mode", MODES)
def test_sign(mode):
    assert_same(run(mode, lax.sign, f32(-0.0, 0.0, np.nan, -3.0, 2.0)),
                f32(-0.0, 0.0, np.nan, -1.0, 1.0))
    assert_same(run(mode, lax.sign, np.array([0, 3, 255], np.uint8)),
                np.array([0, 1, 1], np.uint8))
    out = np.asarray(run(mode, lax.sign, np.array([3 + 4j, 0j], np.complex64)))
    np.testing.assert_allclose(out, [0.6 + 0.8j, 0j], rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_round(mode):
    x = f32(0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.4, np.inf, np.nan)
    assert_same(run(mode, lax.round, x), f32(1, 2, 3, -1, -3, 0, -0.0, np.inf, np.nan))
    even = run(mode, lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), x)
    assert_same(even, f32(0, 2, 2, -0.0, -2, 0, -0.0, np.inf, np.nan))


def test_round_param():
    assert "round[rounding_method=1]" in str(
        xjax.make_jaxpr(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))(1.0))
    assert "round[rounding_method=0]" in str(xjax.make_jaxpr(lax.round)(1.0))
    with pytest.raises(ValueError, match="2 is not a valid RoundingMethod"):
        lax.round(2.5, 2)


@pytest.mark.parametrize("mode", MODES)
def test_floor_ceil_is_finite(mode):
    x = f32(-1.5, -0.0, 2.5, np.inf, np.nan)
    assert_same(run(mode, lax.floor, x), f32(-2, -0.0, 2, np.inf, np.nan))
    assert_same(run(mode, lax.ceil, x), f32(-1, -0.0, 3, np.inf, np.nan))
    assert_same(run(mode, lax.is_finite, x), np.array([True, True, True, False, False]))


# -- max / min --


@pytest.mark.parametrize("mode", MODES)
def test_max_min_propagate_nan_and_order_zeros(mode):
    x, y = f32(1.0, np.nan, 0.0, -0.0, -np.inf), f32(np.nan, 2.0, -0.0, 0.0, 3.0)
    assert_same(run(mode, lax.max, x, y), f32(np.nan, np.nan, 0.0, 0.0, 3.0))
    assert_same(run(mode, lax.min, x, y), f32(np.nan, np.nan, -0.0, -0.0, -np.inf))


@pytest.mark.parametrize("mode", MODES)
def test_complex_max_is_lexicographic(mode):
    x = np.array([1 + 1j, 1 + 2j, np.nan], np.complex64)
    y = np.array([1 + 2j, 0 + 5j, 1], np.complex64)
    out = np.asarray(run(mode, lax.max, x, y))
    np.testing.assert_array_equal(out, np.array([1 + 2j, 1 + 2j, 1], np.complex64))


@pytest.mark.parametrize("mode", MODES)
def test_nextafter(mode):
    out = run(mode, lax.nextafter, f32(1.0, 0.0, 0.0, np.nan), f32(2.0, 1.0, -1.0, 1.0))
    assert_same(out, np.array([np.nextafter(np.float32(1), np.float32(2)), 1.4e-45, -1.4e-45,
                               np.nan], np.float32))


# -- complex parts --


@pytest.mark.parametrize("mode", MODES)
def test_complex_parts(mode):
    z = run(mode, lax.complex, f32(1.0, np.inf), f32(2.0, 0.0))
    np.testing.assert_array_equal(np.asarray(z), np.array([1 + 2j, complex(np.inf, 0)]))
    assert z.dtype == np.complex64
    assert_same(run(mode, lax.real, z), f32(1.0, np.inf))
    assert_same(run(mode, lax.imag, z), f32(2.0, 0.0))
    conj = run(mode, lax.conj, z)
    np.testing.assert_array_equal(np.asarray(conj), np.conj(np.asarray(z)))
    out = run(mode, lax.conj, f32(3.0))
    assert out.dtype == np.complex64 and complex(np.asarray(out)[0]) == 3 + 0j
    assert_same(run(mode, lax.abs, np.array([3 + 4j], np.complex64)), f32(5.0))


def test_conj_jaxpr():
    assert "conj[input_dtype=float32]" in str(xjax.make_jaxpr(lax.conj)(np.float32(1)))


@pytest.mark.parametrize("mode", MODES)
def test_complex_atan2(mode):
    y = np.array([1 + 1j, -1 + 0.5j], np.complex64)
    x = np.array([2 - 1j, -2 - 1j], np.complex64)
    out = np.asarray(run(mode, lax.atan2, y, x))
    np.testing.assert_allclose(out, [0.2940013 + 0.64123726j, -2.804222 - 0.37908682j],
                               rtol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_low_precision_floats(mode):
    """float16/bfloat16 compute in float32 and round once, as XLA does."""
    x = np.array([0.1, 1.7, -3.3], dtypes.bfloat16)
    out = run(mode, lax.exp, x)
    assert out.dtype == dtypes.bfloat16
    want = np.exp(x.astype(np.float32)).astype(dtypes.bfloat16)
    np.testing.assert_allclose(np.asarray(out).astype(np.float32), want.astype(np.float32),
                               rtol=1e-2)
    h = np.array([60000.0], np.float16)
    assert np.isinf(np.asarray(run(mode, lax.add, h, h))[0])
