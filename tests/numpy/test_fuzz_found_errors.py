"""Regression tests for differences from JAX 0.10.2 that fuzzing found: gathers with an empty
result under jit, the derivatives of ``.at[].apply`` and scatter-multiply, and the classes of
errors (out-of-range axes, bad permutations, ``view`` across item sizes, shapes that do not
broadcast). Values are checked against NumPy; errors against JAX's classes and messages (the
tests comparing with JAX itself are skipped without it)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax


def _eager_and_jit(fun, *args):
    """``fun(*args)`` eagerly and under jit."""
    return [fun(*args), xjax.jit(fun)(*args)]


def _raises_exactly(error, message, fun, *args):
    """``fun(*args)`` raises ``error`` itself (not a subclass such as NumPy's AxisError),
    eagerly and under jit."""
    for call in (fun, xjax.jit(fun)):
        with pytest.raises(error, match=message) as info:
            call(*args)
        assert type(info.value) is error, type(info.value)


# -- 1. gathers with an empty result --

def _searchsorted_rows(x):
    return jnp.searchsorted(jnp.sort(x.ravel()), x)


@pytest.mark.parametrize("batch", [0, 3])
def test_vmapped_searchsorted_with_any_batch(batch):
    x = np.random.default_rng(0).standard_normal((batch, 2, 4)).astype(np.float32)
    want = np.array([np.searchsorted(np.sort(r.ravel()), r) for r in x]).reshape(x.shape)
    for got in [xjax.vmap(_searchsorted_rows)(x), xjax.jit(xjax.vmap(_searchsorted_rows))(x)]:
        assert got.shape == (batch, 2, 4) and got.dtype == np.int32
        np.testing.assert_array_equal(got, want)


def test_gather_of_nothing_lowers():
    # a batching dimension of size 0 keeps slice size 1, which JAX's shape rule allows and
    # StableHLO's does not
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
    operand, indices = np.zeros((0, 8), np.float32), np.zeros((0, 2, 4, 1), np.int32)
    for mode in ["promise_in_bounds", "clip", "fill"]:
        for out in _eager_and_jit(
                lambda o, i: lax.gather(o, i, dn, (1, 1), mode=mode), operand, indices):
            assert out.shape == (0, 2, 4) and out.dtype == np.float32
    rows = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))
    for out in _eager_and_jit(lambda o, i: lax.gather(o, i, rows, (1, 3)),
                              np.ones((4, 3), np.float32), np.zeros((0, 1), np.int32)):
        assert out.shape == (0, 3)


def test_vmapped_gather_over_an_empty_batch_slices_nothing_of_it():
    # as JAX's batching rule: the paired batching dimension gets slice size 0, not 1
    jaxpr = xjax.make_jaxpr(xjax.vmap(lambda o, i: o[i]))(np.zeros((0, 8), np.float32),
                                                          np.zeros((0,), np.int32))
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "gather"]
    assert eqn.params["slice_sizes"][0] == 0


def test_vmapped_searchsorted_with_empty_batch_as_jax():
    jax = pytest.importorskip("jax")
    x = np.zeros((0, 2, 4), np.float32)
    want = jax.jit(jax.vmap(lambda x: jax.numpy.searchsorted(jax.numpy.sort(x.ravel()), x)))(x)
    got = xjax.jit(xjax.vmap(_searchsorted_rows))(x)
    assert got.shape == want.shape and got.dtype == want.dtype


# -- 2. derivatives of .at[].apply and of scatter-multiply --

_APPLY_MESSAGE = "scatter_apply JVP not implemented"
_MUL_MESSAGE = "scatter_mul gradients are only implemented if `unique_indices=True`"


@pytest.mark.parametrize("index", [1, slice(1, 3), np.array([0, 2]), np.array([1, 1])],
                         ids=["int", "slice", "array", "repeated"])
def test_apply_is_not_differentiable(index):
    x = jnp.arange(1.0, 5.0)

    def total(x):
        return x.at[index].apply(jnp.sin).sum()

    for differentiate in (lambda: xjax.grad(total)(x),
                          lambda: xjax.jit(xjax.grad(total))(x),
                          lambda: xjax.jvp(lambda x: x.at[index].apply(jnp.sin), (x,), (x,)),
                          lambda: xjax.vjp(lambda x: x.at[index].apply(jnp.sin), x),
                          lambda: xjax.linearize(lambda x: x.at[index].apply(jnp.sin), x)):
        with pytest.raises(NotImplementedError, match=_APPLY_MESSAGE):
            differentiate()


def test_apply_values_and_constant_operands():
    xs = np.arange(1.0, 5.0, dtype=np.float32)
    want = xs.copy()
    for i in [0, 2, 2]:
        want[i] = np.float32(want[i] * 2 + 1)
    for out in _eager_and_jit(lambda x: x.at[np.array([0, 2, 2])].apply(lambda v: v * 2 + 1),
                              jnp.asarray(xs)):
        np.testing.assert_array_equal(out, want)
    # differentiating with respect to something else is fine
    g = xjax.grad(lambda s: (jnp.asarray(xs).at[1:3].apply(jnp.sin) * s).sum())(np.float32(2))
    expected = xs.copy()
    expected[1:3] = np.sin(expected[1:3])
    np.testing.assert_allclose(g, expected.sum(), rtol=1e-6)


def test_apply_may_not_close_over_traced_values():
    x = jnp.arange(4.0)
    message = "Reduction computations can't close over Tracers"
    with pytest.raises(NotImplementedError, match=message):
        xjax.jit(lambda x, s: x.at[1].apply(lambda v: v * s))(x, 2.0)
    with pytest.raises(NotImplementedError, match=message):
        xjax.grad(lambda s: x.at[1].apply(lambda v: v * s).sum())(2.0)


@pytest.mark.parametrize("index", [np.array([0, 0, 2]), np.array([0, 1, 2]),
                                   np.array([True, False, True, True])],
                         ids=["repeated", "unique", "mask"])
def test_multiply_by_index_arrays_has_no_gradient_in_the_values(index):
    x = jnp.arange(1.0, 5.0)
    v = jnp.full(np.shape(np.arange(4)[index]), 2.0)
    for fun in (lambda v: x.at[index].multiply(v).sum(), lambda v: x.at[index].divide(v).sum(),
                lambda v: x.at[index].power(v).sum()):
        for grad in (xjax.grad(fun), xjax.jit(xjax.grad(fun))):
            with pytest.raises(NotImplementedError, match=_MUL_MESSAGE):
                grad(v)
        with pytest.raises(NotImplementedError, match=_MUL_MESSAGE):
            xjax.jvp(fun, (v,), (v,))


def test_multiply_gradients_that_exist():
    xs = np.arange(1.0, 5.0, dtype=np.float32)
    x, idx = jnp.asarray(xs), np.array([0, 0, 2])
    v = np.array([2.0, 3.0, 4.0], np.float32)
    # in the operand: the product of the updates at each position
    per_position = np.ones(4, np.float32)
    np.multiply.at(per_position, idx, v)
    for g in _eager_and_jit(xjax.grad(lambda x: x.at[idx].multiply(v).sum()), x):
        np.testing.assert_allclose(g, per_position)
    # in the values, with unique indices promised: the operand where each value goes
    unique = np.array([3, 0, 1])
    for g in _eager_and_jit(xjax.grad(
            lambda v: x.at[unique].multiply(v, unique_indices=True).sum()), v):
        np.testing.assert_allclose(g, xs[unique])


@pytest.mark.parametrize("index", [1, np.array(1), slice(0, 2), slice(None, None, -1),
                                   (Ellipsis, 1), (None, 1), (1, slice(1, 3))],
                         ids=["int", "int0d", "slice", "reversed", "ellipsis", "newaxis",
                              "int-slice"])
def test_multiply_by_basic_indices_is_differentiable(index):
    # without index arrays each position is selected once: JAX marks the scatter unique
    xs = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    x = jnp.asarray(xs)
    v = np.full(np.shape(xs[index]), 2.0, np.float32)
    for g in _eager_and_jit(xjax.grad(lambda v: x.at[index].multiply(v).sum()), v):
        np.testing.assert_allclose(g, xs[index])


def test_lax_scatter_mul_gradient_in_the_updates_needs_unique_indices():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    x, idx = np.arange(1.0, 5.0, dtype=np.float32), np.array([[3], [1]], np.int32)
    u = np.array([2.0, 5.0], np.float32)
    with pytest.raises(NotImplementedError, match=_MUL_MESSAGE):
        xjax.grad(lambda u: lax.scatter_mul(x, idx, u, dn).sum())(u)
    g = xjax.grad(lambda u: lax.scatter_mul(x, idx, u, dn, unique_indices=True).sum())(u)
    np.testing.assert_allclose(g, x[[3, 1]])


@pytest.mark.parametrize("index", [1, slice(0, 2), (Ellipsis, 1), np.array([1]),
                                   (np.array([0, 1]), np.array([2, 0])), ([0, 1],),
                                   np.array([[True, False, True], [False, False, True]]), True],
                         ids=["int", "slice", "ellipsis", "array", "arrays", "list", "mask",
                              "true"])
def test_multiply_gradients_as_jax(index):
    jax = pytest.importorskip("jax")
    xs = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    v = np.full(np.shape(xs[index]), 2.0, np.float32)

    def outcome(m):
        try:
            return np.asarray(m.grad(lambda v: m.numpy.asarray(xs).at[index].multiply(v).sum())(v))
        except NotImplementedError as e:
            return str(e)

    want, got = outcome(jax), outcome(xjax)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want)


# -- 3. error classes --

X = np.ones((2, 3), np.float32)
_OUT_OF_BOUNDS = "axis {} is out of bounds for array of dimension {}"

_AXIS_CASES = [
    # (name, function, JAX's class, JAX's message)
    ("sum", lambda x: jnp.sum(x, axis=2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("sum-negative", lambda x: jnp.sum(x, axis=-3), ValueError, _OUT_OF_BOUNDS.format(-3, 2)),
    ("max", lambda x: jnp.max(x, axis=2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("cumsum", lambda x: jnp.cumsum(x, axis=2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("mean", lambda x: jnp.mean(x, axis=2), IndexError, "tuple index out of range"),
    ("mean-tuple", lambda x: jnp.mean(x, axis=(0, 2)), IndexError, "tuple index out of range"),
    ("mean-where", lambda x: jnp.mean(x, axis=2, where=x > 0), ValueError,
     _OUT_OF_BOUNDS.format(2, 2)),
    ("var", lambda x: jnp.var(x, axis=2), IndexError, "tuple index out of range"),
    ("std", lambda x: jnp.std(x, axis=-3), IndexError, "tuple index out of range"),
    ("nanmean", lambda x: jnp.nanmean(x, axis=2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("average", lambda x: jnp.average(x, axis=2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("argmax", lambda x: jnp.argmax(x, axis=2), IndexError, "tuple index out of range"),
    ("argmin-method", lambda x: jnp.asarray(x).argmin(axis=-3), IndexError,
     "tuple index out of range"),
    ("argmax-tuple", lambda x: jnp.argmax(x, axis=(0, 1)), TypeError,
     "'tuple' object cannot be interpreted as an integer"),
    ("squeeze", lambda x: jnp.squeeze(x[:1], 2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("expand_dims", lambda x: jnp.expand_dims(x, 3), ValueError, _OUT_OF_BOUNDS.format(3, 3)),
    ("moveaxis", lambda x: jnp.moveaxis(x, 2, 0), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("swapaxes", lambda x: jnp.swapaxes(x, 2, 0), IndexError,
     "index 2 is out of bounds for axis 0 with size 2"),
    ("concatenate", lambda x: jnp.concatenate([x, x], axis=2), ValueError,
     _OUT_OF_BOUNDS.format(2, 2)),
    ("stack", lambda x: jnp.stack([x, x], axis=3), ValueError, _OUT_OF_BOUNDS.format(3, 3)),
    ("flip", lambda x: jnp.flip(x, 2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("roll", lambda x: jnp.roll(x, 1, 2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("split", lambda x: jnp.split(x, 1, axis=2), IndexError, "tuple index out of range"),
    ("norm", lambda x: jnp.linalg.norm(x, axis=2), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("transpose", lambda x: jnp.transpose(x, (0, 2)), ValueError, _OUT_OF_BOUNDS.format(2, 2)),
    ("transpose-rank-0", lambda x: jnp.transpose(x[0, 0], (0,)), ValueError,
     _OUT_OF_BOUNDS.format(0, 0)),
]


@pytest.mark.parametrize("fun,error,message", [c[1:] for c in _AXIS_CASES],
                         ids=[c[0] for c in _AXIS_CASES])
def test_out_of_range_axes_raise_jax_class(fun, error, message):
    _raises_exactly(error, message, fun, X)


@pytest.mark.parametrize("fun,error,message", [
    (lambda x: jnp.flip(x, (0, -2)), TypeError, r"rev dimensions must be unique, got \(0, 0\)"),
    (lambda x: jnp.squeeze(x[:1], (0, -2)), ValueError, r"dimensions are not unique: \(0, 0\)"),
    (lambda x: lax.squeeze(x[:1], (0, -2)), ValueError, r"dimensions are not unique: \(0, 0\)"),
    (lambda x: jnp.sum(x, axis=(0, 0)), ValueError, r"duplicate value in 'axis': \(0, 0\)"),
    (lambda x: jnp.squeeze(x, 1), ValueError, "cannot select an axis to squeeze out"),
], ids=["flip", "squeeze", "lax.squeeze", "sum", "squeeze-non-unit"])
def test_repeated_or_unsqueezable_axes(fun, error, message):
    _raises_exactly(error, message, fun, X)


_NOT_A_PERMUTATION = "transpose permutation isn't a permutation of operand dimensions"


@pytest.mark.parametrize("fun,error,message", [
    (lambda x: jnp.transpose(x, (0, 0)), TypeError, _NOT_A_PERMUTATION),
    (lambda x: jnp.transpose(x, (1, -1)), TypeError, r"got permutation \(1, 1\)"),
    (lambda x: jnp.transpose(x, (0,)), TypeError, _NOT_A_PERMUTATION),
    (lambda x: jnp.asarray(x).transpose(0, 0), TypeError, _NOT_A_PERMUTATION),
    (lambda x: jnp.permute_dims(x, (1, 1)), TypeError, _NOT_A_PERMUTATION),
    (lambda x: lax.transpose(x, (0, 2)), TypeError, _NOT_A_PERMUTATION),
    (lambda x: lax.transpose(x, (-1, 0)), TypeError, _NOT_A_PERMUTATION),
    (lambda x: lax.transpose(x[0, 0], (0,)), TypeError, r"for operand shape \(\)"),
], ids=["duplicate", "negative-duplicate", "short", "method", "permute_dims", "lax-range",
        "lax-negative", "lax-rank-0"])
def test_invalid_permutations(fun, error, message):
    _raises_exactly(error, message, fun, X)


def test_valid_permutations_still_work():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for out in _eager_and_jit(lambda x: jnp.transpose(x, (-1, 0, 1)), x):
        np.testing.assert_array_equal(out, np.transpose(x, (-1, 0, 1)))
    for out in _eager_and_jit(lambda x: jnp.swapaxes(x, -1, 0), x):
        np.testing.assert_array_equal(out, np.swapaxes(x, -1, 0))
    for out in _eager_and_jit(lambda x: jnp.transpose(x[0, 0, 0], ()), x):
        assert out.shape == ()


_VIEW_VALUES = np.array([[1.5, -2.25, 3.0, 1e-3], [0.0, -0.0, np.inf, 7.0]], np.float32)


@pytest.mark.parametrize("source", [np.float32, np.int16, np.uint8, np.bool_, np.float16,
                                    np.complex64])
@pytest.mark.parametrize("target", [np.uint8, np.int8, np.int16, np.float16, np.int32,
                                    np.float32, np.complex64, np.bool_])
def test_view_across_item_sizes_as_numpy(source, target):
    raw = _VIEW_VALUES.view(np.uint8).reshape(2, 16)
    if np.bool_ in (source, target):  # only bytes 0 and 1 are booleans
        raw = raw % 2
    x = raw.view(source)
    want = x.view(target)
    for out in _eager_and_jit(lambda a: a.view(target), jnp.asarray(x)):
        assert out.shape == want.shape and out.dtype == want.dtype
        # compared as bytes: NaN payloads and signed zeros must survive
        np.testing.assert_array_equal(np.asarray(out).view(np.uint8), want.view(np.uint8))


def test_view_float64_is_float32_without_x64():
    x = jnp.asarray(_VIEW_VALUES)
    out = x.view(np.float64)
    assert out.dtype == np.float32 and out.shape == (2, 4)
    np.testing.assert_array_equal(out, _VIEW_VALUES)


@pytest.mark.parametrize("fun,message", [
    (lambda x: x[0, 0].view(np.uint8), "view\\(\\) of a 0d array is only supported if the "
                                        "itemsize is unchanged"),
    (lambda x: x[:, :3].view(np.uint8)[:, :3].view(np.int16),
     "When changing to a larger dtype, its size must be a divisor"),
], ids=["rank-0", "not-divisible"])
def test_view_errors(fun, message):
    _raises_exactly(ValueError, message, fun, jnp.asarray(_VIEW_VALUES))


def test_view_of_empty_and_rank_0_arrays():
    for out in _eager_and_jit(lambda a: a.view(np.int16), jnp.zeros((2, 0), jnp.uint8)):
        assert out.shape == (2, 0) and out.dtype == np.int16
    for out in _eager_and_jit(lambda a: a.view(np.int32), jnp.float32(1.5)):
        assert out.shape == () and int(out) == np.float32(1.5).view(np.int32)


@pytest.mark.parametrize("target", [np.uint8, np.int16, np.float16, np.int32, np.bool_])
def test_astype_across_item_sizes_as_numpy(target):
    x = np.array([[0.0, 1.0, 2.5, 7.0], [3.0, 0.5, 100.0, 1.0]], np.float32)
    for out in _eager_and_jit(lambda a: a.astype(target), jnp.asarray(x)):
        assert out.shape == x.shape and out.dtype == np.dtype(target)
        np.testing.assert_array_equal(out, x.astype(target))


_SHAPE_CASES = [
    # (name, function of NumPy arrays, JAX's class, JAX's message)
    ("add", lambda: jnp.add(np.ones(3), np.ones(4)), TypeError,
     r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)"),
    ("add-ranks", lambda: jnp.add(np.ones((2, 3)), np.ones(2)), ValueError,
     r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(2,\)\]"),
    ("multiply-ranks", lambda: jnp.multiply(np.ones((2, 3), np.int32), np.ones(2, np.int32)),
     ValueError, "Incompatible shapes for broadcasting"),
    ("power-ints", lambda: jnp.power(np.ones(3, np.int32), np.ones(4, np.int32)), TypeError,
     r"and got incompatible shapes for broadcasting: \(3,\), \(4,\)"),
    ("matmul", lambda: jnp.matmul(np.ones((2, 3)), np.ones((2, 3))), TypeError,
     "dot_general requires contracting dimensions to have the same shape"),
    ("dot", lambda: jnp.dot(np.ones(3), np.ones(4)), TypeError,
     "dot_general requires contracting dimensions to have the same shape"),
    ("concatenate", lambda: jnp.concatenate([np.ones((2, 3)), np.ones((3, 2))]), TypeError,
     "Cannot concatenate arrays with shapes that differ in dimensions other than the one"),
    ("stack", lambda: jnp.stack([np.ones((2, 3)), np.ones((3, 2))]), ValueError,
     "All input arrays must have the same shape"),
    ("where", lambda: jnp.where(np.ones(3) > 0, np.ones(3), np.ones(4)), ValueError,
     "Incompatible shapes for broadcasting"),
    ("reshape", lambda: jnp.reshape(np.ones(6), (4,)), ValueError,
     r"cannot reshape array of size 6 into shape \(4,\)"),
    ("hypot-complex", lambda: jnp.hypot(np.ones(3, np.complex64), np.ones(3, np.complex64)),
     ValueError, "jnp.hypot is not well defined for complex-valued inputs"),
]


@pytest.mark.parametrize("fun,error,message", [c[1:] for c in _SHAPE_CASES],
                         ids=[c[0] for c in _SHAPE_CASES])
def test_shape_errors_on_numpy_arrays(fun, error, message):
    _raises_exactly(error, message, fun)


def test_reshape_of_numpy_arrays_keeps_working():
    x = np.arange(6, dtype=np.float32)
    for out in _eager_and_jit(lambda: jnp.reshape(x, (2, 3), order="F")):
        np.testing.assert_array_equal(out, x.reshape((2, 3), order="F"))
    # arrays of xjax keep JAX's own error for the same mistake
    with pytest.raises(TypeError, match="cannot reshape array of shape"):
        jnp.reshape(jnp.asarray(x), (4,))


def test_integer_power_still_broadcasts():
    base, exponent = np.array([[2], [3]], np.int32), np.array([0, 1, 2, 3], np.int32)
    for out in _eager_and_jit(jnp.power, base, exponent):
        np.testing.assert_array_equal(out, np.power(base, exponent))


def _error_class_or_shape(fun):
    try:
        return np.shape(fun())
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)


def test_error_classes_as_jax():
    jax = pytest.importorskip("jax")
    jax_cases = {
        "sum": lambda m: m.numpy.sum(X, axis=2),
        "mean": lambda m: m.numpy.mean(X, axis=2),
        "max": lambda m: m.numpy.max(X, axis=2),
        "argmax": lambda m: m.numpy.argmax(X, axis=2),
        "cumsum": lambda m: m.numpy.cumsum(X, axis=2),
        "squeeze": lambda m: m.numpy.squeeze(X[:1], 2),
        "expand_dims": lambda m: m.numpy.expand_dims(X, 3),
        "moveaxis": lambda m: m.numpy.moveaxis(X, 2, 0),
        "concatenate": lambda m: m.numpy.concatenate([X, X], axis=2),
        "stack": lambda m: m.numpy.stack([X, X], axis=3),
        "flip": lambda m: m.numpy.flip(X, 2),
        "roll": lambda m: m.numpy.roll(X, 1, 2),
        "swapaxes": lambda m: m.numpy.swapaxes(X, 2, 0),
        "split": lambda m: m.numpy.split(X, 1, axis=2),
        "transpose-rank-0": lambda m: m.numpy.transpose(np.float32(1), (0,)),
        "transpose": lambda m: m.numpy.transpose(X, (0, 0)),
        "lax.transpose": lambda m: m.lax.transpose(X, (0, 2)),
        "add": lambda m: m.numpy.add(np.ones(3), np.ones(4)),
        "add-ranks": lambda m: m.numpy.add(np.ones((2, 3)), np.ones(2)),
        "matmul": lambda m: m.numpy.matmul(np.ones((2, 3)), np.ones((2, 3))),
        "concatenate-shapes": lambda m: m.numpy.concatenate([np.ones((2, 3)), np.ones((3, 2))]),
        "reshape": lambda m: m.numpy.reshape(np.ones(6), (4,)),
        "view": lambda m: m.numpy.asarray(X).view(np.uint8),
        "view-rank-0": lambda m: m.numpy.asarray(X)[0, 0].view(np.int16),
    }
    for name, case in jax_cases.items():
        want = _error_class_or_shape(lambda: case(jax))
        got = _error_class_or_shape(lambda: case(xjax))
        assert got == want, name
        want_jit = _error_class_or_shape(lambda: jax.jit(lambda: case(jax))())
        got_jit = _error_class_or_shape(lambda: xjax.jit(lambda: case(xjax))())
        assert got_jit == want_jit, name + " under jit"


def test_kron_of_booleans_is_refused_as_jax():
    with pytest.raises(TypeError, match="mul does not accept dtype bool"):
        jnp.kron(np.array([True, False]), np.array([True, True]))
    np.testing.assert_array_equal(jnp.kron(np.array([1, 2]), np.array([3, 4])),
                                  np.kron([1, 2], [3, 4]))


def test_take_along_axis_defaults_to_the_last_axis():
    arr, idx = np.arange(6).reshape(2, 3), np.array([[0], [2]])
    np.testing.assert_array_equal(jnp.take_along_axis(arr, idx),
                                  np.take_along_axis(arr, idx, axis=-1))


def test_fix_is_not_a_name_of_jax_numpy():
    # removed from jax.numpy by JAX 0.10 (jnp.trunc is the same function)
    assert not hasattr(jnp, "fix")
