"""``jnp.pad`` in every mode: against ``np.pad`` (shapes, dtypes, per-axis widths and
values, pads longer than the axis), against JAX where it departs from NumPy (integer
rounding, float32 ramps, errors), and under ``jit``, ``vmap`` and ``grad``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax
import xjax.numpy as jnp
from xjax._src.core import errors
from xjax.test_util import check_grads

MODES = ["constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp", "maximum",
         "minimum", "mean", "median", "empty"]

SHAPES = [(5,), (1,), (3, 4), (1, 3), (2, 1, 3), (3, 2, 4)]

WIDTHS = [0, 2, (1, 3), ((2, 0),), "per_axis", "large"]


def _widths(spec, shape):
    """A ``pad_width`` for ``shape``: per-axis pairs, or pads longer than every axis."""
    if spec == "per_axis":
        return tuple(((i + 1) % 3, (2 * i) % 4) for i in range(len(shape)))
    if spec == "large":
        return tuple((2 * n + 1, 3 * n + 2) for n in shape)
    return spec


def _array(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-20, 20, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape).astype(dtype)
    return x


def _check(got, want, dtype):
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == want.shape
    if np.issubdtype(dtype, np.inexact):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


def _numpy_pad(x, widths, mode, **kwargs):
    want = np.pad(x, widths, mode, **kwargs)
    if mode == "empty":
        # NumPy leaves 'empty' pads uninitialised; JAX (jnp.empty = jnp.zeros) fills zeros.
        want = np.pad(x, widths, "constant")
    return want


def _jax():
    return pytest.importorskip("jax")


# -- against NumPy --

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("spec", WIDTHS, ids=str)
def test_float32_against_numpy(mode, shape, spec):
    x = _array(shape, np.float32)
    widths = _widths(spec, shape)
    _check(jnp.pad(x, widths, mode), _numpy_pad(x, widths, mode), np.float32)


# NumPy computes integer linear ramps in float64 where JAX uses float32, and a few of
# them floor differently: those are checked against JAX below.
@pytest.mark.parametrize("mode", [m for m in MODES if m != "linear_ramp"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 1, 3)], ids=str)
@pytest.mark.parametrize("spec", [2, "per_axis", "large"], ids=str)
def test_int32_against_numpy(mode, shape, spec):
    x = _array(shape, np.int32)
    widths = _widths(spec, shape)
    _check(jnp.pad(x, widths, mode), _numpy_pad(x, widths, mode), np.int32)


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric",
                                  "maximum", "minimum", "empty"])
@pytest.mark.parametrize("shape", [(4,), (2, 3)], ids=str)
def test_bool_against_numpy(mode, shape):
    x = _array(shape, np.bool_)
    widths = _widths("large", shape)
    _check(jnp.pad(x, widths, mode), _numpy_pad(x, widths, mode), np.bool_)


# NumPy's median of complex sorts lexicographically; JAX refuses (tested below).
@pytest.mark.parametrize("mode", [m for m in MODES if m != "median"])
@pytest.mark.parametrize("shape", [(4,), (2, 3)], ids=str)
def test_complex64_against_numpy(mode, shape):
    x = _array(shape, np.complex64)
    widths = _widths("per_axis", shape)
    kwargs = {"end_values": (1 + 2j, -3j)} if mode == "linear_ramp" else {}
    _check(jnp.pad(x, widths, mode, **kwargs), _numpy_pad(x, widths, mode, **kwargs),
           np.complex64)


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("shape", [(1,), (2,), (5,), (1, 3), (3, 2)], ids=str)
@pytest.mark.parametrize("spec", [2, "per_axis", "large"], ids=str)
def test_reflect_type_odd(mode, shape, spec):
    x = _array(shape, np.float32)
    widths = _widths(spec, shape)
    _check(jnp.pad(x, widths, mode, reflect_type="odd"),
           np.pad(x, widths, mode, reflect_type="odd"), np.float32)
    xi = _array(shape, np.int32)
    _check(jnp.pad(xi, widths, mode, reflect_type="odd"),
           np.pad(xi, widths, mode, reflect_type="odd"), np.int32)


@pytest.mark.parametrize("values", [-1.5, (7,), (7, 8), ((7, 8),), ((7,), (8,)),
                                    ((1, 2), (3, 4)), np.array([[5., -6.], [7., 8.]])],
                         ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_constant_values_shapes(values, dtype):
    x = _array((3, 2), dtype)
    widths = ((1, 2), (2, 1))
    want = np.pad(x, widths, constant_values=np.asarray(values).astype(dtype))
    _check(jnp.pad(x, widths, constant_values=values), want, dtype)
    _check(jnp.pad(x, widths, constant_values=jnp.asarray(values)), want, dtype)


def test_constant_values_per_axis_3d():
    x = _array((2, 3, 2), np.float32)
    values = ((1, 2), (3, 4), (5, 6))
    _check(jnp.pad(x, 1, constant_values=values), np.pad(x, 1, constant_values=values),
           np.float32)


@pytest.mark.parametrize("end_values", [0, 5.5, (-2., 3.), ((1., 2.),),
                                        ((1., 2.), (-3., 4.))], ids=str)
@pytest.mark.parametrize("spec", [3, "per_axis"], ids=str)
def test_linear_ramp_end_values(end_values, spec):
    x = _array((3, 4), np.float32)
    widths = _widths(spec, (3, 4))
    _check(jnp.pad(x, widths, "linear_ramp", end_values=end_values),
           np.pad(x, widths, "linear_ramp", end_values=end_values), np.float32)


@pytest.mark.parametrize("mode", ["maximum", "minimum", "mean", "median"])
@pytest.mark.parametrize("stat_length", [1, 2, 10, (1, 3), ((2, 1),), ((1, 2), (3, 1))],
                         ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_stat_length(mode, stat_length, dtype):
    x = _array((5, 4), dtype)
    widths = ((2, 1), (0, 3))
    _check(jnp.pad(x, widths, mode, stat_length=stat_length),
           np.pad(x, widths, mode, stat_length=stat_length), dtype)


def _np_custom(vector, pad_width, iaxis, kwargs):
    # NumPy's callable writes into the zero-padded row.
    before, after = pad_width
    inner = vector[before:len(vector) - after]
    vector[:before] = inner.sum() + kwargs.get("shift", 0)
    vector[len(vector) - after:] = iaxis - 1
    return vector


def _jnp_custom(row, pad_width, iaxis, kwargs):
    # JAX's callable returns the new row.
    before, after = pad_width
    inner = row[before:len(row) - after]
    row = row.at[:before].set(inner.sum() + kwargs.get("shift", 0))
    return row.at[len(row) - after:].set(iaxis - 1)


@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 2, 3)], ids=str)
@pytest.mark.parametrize("spec", [1, "per_axis"], ids=str)
def test_callable_mode(shape, spec):
    x = _array(shape, np.float32)
    widths = _widths(spec, shape)
    _check(jnp.pad(x, widths, _jnp_custom, shift=0.5),
           np.pad(x, widths, _np_custom, shift=0.5), np.float32)
    _check(jnp.pad(x, widths, _jnp_custom), np.pad(x, widths, _np_custom), np.float32)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       data=st.data(),
       mode=st.sampled_from([m for m in MODES if m != "linear_ramp"]))
@settings(max_examples=60, deadline=None)
def test_random_shapes_and_widths(shape, data, mode):
    shape = tuple(shape)
    widths = tuple(tuple(data.draw(st.integers(0, 9), label="w") for _ in range(2))
                   for _ in shape)
    x = _array(shape, np.float32, seed=len(shape))
    _check(jnp.pad(x, widths, mode), _numpy_pad(x, widths, mode), np.float32)


def test_zero_dim_input_is_returned():
    x = jnp.asarray(3.0)
    for mode in MODES:
        assert jnp.pad(x, 2, mode) is x
    out = jnp.pad(2.5, 1)
    assert out.shape == () and out.weak_type and float(out) == 2.5


def test_weak_type_is_kept():
    weak = xjax.lax.broadcast(1.0, (3,))
    assert weak.weak_type
    for mode in MODES:
        out = jnp.pad(weak, 1, mode)
        assert out.weak_type and out.dtype == np.float32, mode


def test_empty_axis_without_padding():
    x = np.zeros((0, 3), np.float32)
    for mode in ["constant", "edge", "wrap", "reflect", "symmetric", "empty"]:
        _check(jnp.pad(x, ((0, 0), (1, 2)), mode), _numpy_pad(x, ((0, 0), (1, 2)), mode),
               np.float32)
    _check(jnp.pad(x, 2), np.pad(x, 2), np.float32)


# -- against JAX (where JAX departs from NumPy) --

def _same_as_jax(fun):
    jax = _jax()
    import jax.numpy as jjnp
    want = fun(jjnp)
    got = fun(jnp)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.weak_type == want.weak_type
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    del jax


ROUNDING_VALUES = [[1, 2], [1, 4], [-3, 0], [5, 6, 8, 9], [-7, -6], [1, 2, 3, 6],
                   [2 ** 24 + 1, 2 ** 24 + 2]]


@pytest.mark.parametrize("dtype,values", [
    (dtype, v) for dtype in ["int32", "uint8", "int8"] for v in ROUNDING_VALUES
    if np.iinfo(dtype).min <= min(v) and max(v) <= np.iinfo(dtype).max], ids=str)
@pytest.mark.parametrize("mode", ["mean", "median"])
def test_integer_statistics_round_as_jax(values, mode, dtype):
    _same_as_jax(lambda m: m.pad(m.asarray(values, dtype=dtype), (2, 3), mode))
    _same_as_jax(lambda m: m.pad(m.asarray([values, values[::-1]], dtype=dtype), 1, mode,
                                 stat_length=(1, 2)))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float16", "float32"])
@pytest.mark.parametrize("end_values", [0, 10, (10, 0), 7.5], ids=str)
def test_linear_ramp_as_jax(dtype, end_values):
    _jax()
    import jax.numpy as jjnp
    x = np.array([[1, 2, 0], [3, 1, 1]]).astype(dtype)
    widths = (3, 4)
    want = jjnp.pad(x, widths, "linear_ramp", end_values=end_values)
    # JAX always runs XLA, which fuses linspace's ``start * (1 - t) + stop * t`` into FMAs;
    # under jit so do we, and integer ramps (floored) then agree exactly.
    got = xjax.jit(lambda a: jnp.pad(a, widths, "linear_ramp", end_values=end_values))(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # Eagerly (NumPy, no FMA) a float ramp value may differ in its last bit, so a floored
    # integer one by at most 1.
    eager = jnp.pad(x, widths, "linear_ramp", end_values=end_values)
    assert eager.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(eager).astype(np.float64),
                               np.asarray(want).astype(np.float64), rtol=1e-3, atol=1)


def test_odd_reflection_of_unsigned_wraps_as_jax():
    _same_as_jax(lambda m: m.pad(m.asarray([1, 5], dtype="uint8"), 3, "reflect",
                                 reflect_type="odd"))


def test_mean_of_bool_and_float16_as_jax():
    _same_as_jax(lambda m: m.pad(m.asarray([True, False, True]), 2, "mean"))
    _same_as_jax(lambda m: m.pad(m.asarray([1, 2, 4], dtype="float16"), 2, "mean"))


def test_negative_stat_length_as_jax():
    _same_as_jax(lambda m: m.pad(m.arange(12).reshape(3, 4), 1, "mean", stat_length=-1))


def test_constant_values_cast_as_jax():
    _same_as_jax(lambda m: m.pad(m.arange(6).reshape(2, 3), 1,
                                 constant_values=m.asarray([2.7, -1.5])))
    _same_as_jax(lambda m: m.pad(m.arange(6).reshape(2, 3), 1, constant_values=2.7))


def test_callable_with_negative_width_crops_as_jax():
    _same_as_jax(lambda m: m.pad(m.arange(5), -1, lambda r, p, i, k: r))


def _error_of(fun):
    try:
        fun()
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return e
    raise AssertionError("no error raised")


X = np.arange(6, dtype=np.int32).reshape(2, 3)

ERROR_CASES = {
    "unknown mode": lambda m: m.pad(X, 1, "foo"),
    "kwarg for edge": lambda m: m.pad(X, 1, "edge", constant_values=1),
    "kwarg for mean": lambda m: m.pad(X, 1, "mean", end_values=1),
    "negative width": lambda m: m.pad(X, ((1, -1), (0, 0))),
    "float width": lambda m: m.pad(X, 1.0),
    "float array width": lambda m: m.pad(X, np.array([1., 2.])),
    "bool width": lambda m: m.pad(X, True),
    "width shape": lambda m: m.pad(X, [1, 2, 3]),
    "width rank": lambda m: m.pad(X, [[[1, 2]]]),
    "uneven widths": lambda m: m.pad(X, [[1, 2], [3]]),
    "list input": lambda m: m.pad([1, 2, 3], 1),
    "stat_length 0": lambda m: m.pad(X, 1, "mean", stat_length=0),
    "constant_values shape": lambda m: m.pad(X, 1, constant_values=[7, 8, 9]),
    "edge empty axis": lambda m: m.pad(np.zeros((0, 3)), 1, "edge"),
    "wrap empty axis": lambda m: m.pad(np.zeros((0, 3)), 1, "wrap"),
    "reflect empty axis": lambda m: m.pad(np.zeros((0, 3)), 1, "reflect"),
    "symmetric empty axis": lambda m: m.pad(np.zeros((0, 3)), 1, "symmetric"),
    "maximum empty axis": lambda m: m.pad(np.zeros((0, 3)), 1, "maximum"),
    "linear_ramp empty axis": lambda m: m.pad(np.zeros((0, 3)), ((0, 0), (1, 1)),
                                              "linear_ramp"),
    "odd bool": lambda m: m.pad(np.array([True, False]), 1, "reflect", reflect_type="odd"),
    "median complex": lambda m: m.pad(np.array([1 + 2j, 3j], np.complex64), 1, "median"),
}

# Messages JAX writes itself (the others come from deeper layers, whose words differ).
SAME_MESSAGE = {"unknown mode", "kwarg for edge", "kwarg for mean", "negative width",
                "float width", "float array width", "bool width", "width shape",
                "width rank", "uneven widths", "stat_length 0", "constant_values shape",
                "edge empty axis", "wrap empty axis", "reflect empty axis",
                "symmetric empty axis", "median complex"}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_as_jax(case):
    _jax()
    import jax.numpy as jjnp
    want = _error_of(lambda: ERROR_CASES[case](jjnp))
    got = _error_of(lambda: ERROR_CASES[case](jnp))
    assert isinstance(got, type(want)) or type(want).__name__ == type(got).__name__, \
        (type(got), type(want), got)
    if case in SAME_MESSAGE:
        assert str(got) == str(want)


def test_errors_without_jax():
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'foo'"):
        jnp.pad(X, 1, "foo")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'wrap'"):
        jnp.pad(X, 1, "wrap", stat_length=1)
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(X, -1)
    with pytest.raises(TypeError, match="integral"):
        jnp.pad(X, 1.5)
    with pytest.raises(TypeError, match="integral"):
        jnp.pad(X, 1, "mean", stat_length=1.5)
    with pytest.raises(ValueError, match="empty axis"):
        jnp.pad(np.zeros((3, 0)), 1, "reflect")
    with pytest.raises(ValueError, match="reflect_type"):
        jnp.pad(X, 1, "reflect", reflect_type="foo")


# -- transformations --

TRANSFORM_CASES = [
    ("constant", {"constant_values": ((1., 2.), (3., 4.))}),
    ("edge", {}), ("wrap", {}), ("reflect", {}), ("symmetric", {"reflect_type": "odd"}),
    ("linear_ramp", {"end_values": (1., -2.)}), ("maximum", {}),
    ("mean", {"stat_length": 2}), ("median", {}), ("empty", {}),
]


@pytest.mark.parametrize("mode,kwargs", TRANSFORM_CASES, ids=[c[0] for c in TRANSFORM_CASES])
def test_jit_matches_eager(mode, kwargs):
    x = _array((3, 4), np.float32)
    widths = ((2, 5), (1, 0))
    fun = xjax.jit(lambda a: jnp.pad(a, widths, mode, **kwargs))
    _check(fun(x), np.asarray(jnp.pad(x, widths, mode, **kwargs)), np.float32)
    _check(fun(x), _numpy_pad(x, widths, mode, **kwargs), np.float32)


def test_jit_traced_constant_values_and_static_widths():
    x = _array((3, 2), np.float32)
    fun = xjax.jit(lambda a, c: jnp.pad(a, 2, constant_values=c))
    _check(fun(x, np.float32(-4.)), np.pad(x, 2, constant_values=-4.), np.float32)
    per_axis = np.array([[1., 2.], [3., 4.]], np.float32)
    _check(fun(x, per_axis), np.pad(x, 2, constant_values=per_axis), np.float32)
    pair = xjax.jit(lambda a, c: jnp.pad(a, 1, constant_values=[c, 2 * c]))
    _check(pair(x, np.float32(3.)), np.pad(x, 1, constant_values=[3., 6.]), np.float32)
    static = xjax.jit(lambda a, w: jnp.pad(a, w, "wrap"), static_argnums=1)
    _check(static(x, (1, 3)), np.pad(x, (1, 3), "wrap"), np.float32)


def test_traced_widths_are_rejected():
    with pytest.raises(errors.ConcretizationTypeError, match="pad_width argument of jnp.pad"):
        xjax.jit(lambda a, w: jnp.pad(a, w))(X, 1)
    with pytest.raises(errors.ConcretizationTypeError, match="stat_length"):
        xjax.jit(lambda a, s: jnp.pad(a, 1, "mean", stat_length=s))(X, 1)
    with pytest.raises(errors.ConcretizationTypeError, match="end_values"):
        xjax.jit(lambda a, e: jnp.pad(a, 1, "linear_ramp", end_values=e))(X, 1)


@pytest.mark.parametrize("mode,kwargs", TRANSFORM_CASES + [("callable", {})],
                         ids=[c[0] for c in TRANSFORM_CASES] + ["callable"])
def test_vmap_matches_loop(mode, kwargs):
    xs = _array((3, 4, 2), np.float32)
    widths = ((3, 1), (0, 2))
    if mode == "callable":
        mode, kwargs = _jnp_custom, {"shift": 1.0}

    def fun(a):
        return jnp.pad(a, widths, mode, **kwargs)

    want = np.stack([np.asarray(fun(x)) for x in xs])
    _check(xjax.vmap(fun)(xs), want, np.float32)
    _check(xjax.vmap(fun, in_axes=1, out_axes=2)(np.moveaxis(xs, 0, 1)),
           np.moveaxis(want, 0, 2), np.float32)


def test_vmap_over_constant_values():
    x = _array((2, 3), np.float32)
    cs = np.array([1., -2., 3.], np.float32)
    got = xjax.vmap(lambda c: jnp.pad(x, 1, constant_values=c))(cs)
    _check(got, np.stack([np.pad(x, 1, constant_values=c) for c in cs]), np.float32)


@pytest.mark.parametrize("mode,kwargs", [
    ("reflect", {}), ("reflect", {"reflect_type": "odd"}), ("symmetric", {}),
    ("wrap", {}), ("edge", {}), ("linear_ramp", {"end_values": (0.5, -1.)}),
    ("mean", {}), ("mean", {"stat_length": (1, 2)}), ("constant", {})],
    ids=str)
def test_grads(mode, kwargs):
    x = jnp.asarray(_array((3, 2), np.float32))
    widths = ((4, 2), (1, 3))
    check_grads(lambda a: jnp.pad(a, widths, mode, **kwargs), (x,), order=2,
                atol=1e-2, rtol=1e-2)


def test_grad_of_reflect_sums_mirrored_cotangents():
    x = np.arange(1., 5., dtype=np.float32)
    g = xjax.grad(lambda a: jnp.pad(a, (3, 2), "reflect").sum())(x)
    # Each element counts once plus once per mirrored copy of it.
    counts = np.zeros(4)
    np.add.at(counts, np.pad(np.arange(4), (3, 2), "reflect"), 1)
    np.testing.assert_array_equal(np.asarray(g), counts)


def test_grad_with_respect_to_constant_values():
    x = np.ones((2, 3), np.float32)
    g = xjax.grad(lambda c: jnp.pad(x, ((1, 2), (0, 1)), constant_values=c).sum())(2.0)
    assert float(g) == np.pad(x, ((1, 2), (0, 1))).size - x.size
