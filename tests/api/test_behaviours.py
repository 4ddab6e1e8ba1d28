"""The corner cases of ../shared/api/jax-behaviours.md (JAX 0.10.2, measured) that the
foundation covers: error classes, weak types, caching, bounds, printing."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors, lax
from xjax.tree_util import tree_map, tree_structure


# -- error classes --

def test_error_hierarchy():
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    assert issubclass(errors.ConcretizationTypeError, TypeError)
    assert issubclass(errors.TracerIntegerConversionError, TypeError)
    assert issubclass(errors.TracerArrayConversionError, TypeError)


def test_conversions_of_tracers():
    with pytest.raises(errors.ConcretizationTypeError):
        xjax.jit(lambda x: int(x))(1.0)
    with pytest.raises(errors.ConcretizationTypeError):
        xjax.jit(lambda x: float(x))(1.0)
    with pytest.raises(errors.TracerIntegerConversionError):
        xjax.jit(lambda n: range(n))(3)
    with pytest.raises(errors.TracerArrayConversionError):
        xjax.jit(lambda x: np.asarray(x))(jnp.ones(2))


def test_escaped_tracer():
    box = []
    xjax.jit(lambda x: box.append(x) or x)(jnp.ones(2))
    with pytest.raises(errors.UnexpectedTracerError):
        jnp.sin(box[0])


def test_shapes_must_be_concrete():
    with pytest.raises(TypeError) as info:
        xjax.jit(lambda n: jnp.zeros(n))(3)
    assert not isinstance(info.value, errors.ConcretizationTypeError)
    with pytest.raises(errors.ConcretizationTypeError):
        xjax.jit(lambda n: jnp.arange(n))(3)


def test_ambiguous_truth_value():
    with pytest.raises(ValueError):
        bool(jnp.array([1, 2]))


def test_lax_never_promotes():
    with pytest.raises(TypeError, match="lax.add requires arguments to have the same dtypes"):
        lax.add(1, 1.0)


def test_list_indices_and_list_reductions_are_type_errors():
    x = jnp.arange(4)
    with pytest.raises(TypeError):
        x[[0, 2]]
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum([1, 2, 3])


def test_int32_overflow_of_python_ints():
    with pytest.raises(OverflowError):
        jnp.array(2 ** 31)


def test_tree_map_list_vs_tuple():
    with pytest.raises(ValueError):
        tree_map(lambda a, b: a, [1, 2], (1, 2))


# -- weak types --

@pytest.mark.parametrize("make,weak", [
    (lambda: jnp.array(1), True), (lambda: jnp.asarray(1.0), True), (lambda: jnp.full(2, 7), True),
    (lambda: jnp.array([1]), False), (lambda: jnp.sum(jnp.array(1)), False)])
def test_weak_types_of_creation(make, weak):
    assert make().weak_type is weak


def test_weak_promotion_corners():
    i8 = jnp.array([1], jnp.int8)
    out = i8 + 1.5
    assert out.dtype == jnp.float32 and out.weak_type
    out = jnp.array([1], jnp.int32) + 1j
    assert out.dtype == jnp.complex64 and out.weak_type
    out = jnp.array([1], jnp.float32) + 1j
    assert out.dtype == jnp.complex64 and not out.weak_type
    assert (jnp.array([1], jnp.float16) + jnp.array([1], jnp.bfloat16)).dtype == jnp.float32
    assert (jnp.array([1], jnp.uint32) + jnp.array([1], jnp.int32)).dtype == jnp.int32
    assert int((jnp.array([1], jnp.int8) + 300)[0]) == 45


def test_jit_retraces_on_weak_type_change():
    traces = []

    @xjax.jit
    def f(x):
        traces.append(1)
        return x

    f(1.0)
    f(jnp.float32(1.0))
    assert len(traces) == 2


# -- caching --

def test_wrappers_of_one_function_share_the_cache():
    state = {"g": 0.0}

    def impure(x):
        return x + state["g"]

    assert float(xjax.jit(impure)(4.0)) == 4.0
    state["g"] = 10.0
    assert float(xjax.jit(impure)(5.0)) == 5.0
    assert xjax.jit(impure)(jnp.array([4.0])).tolist() == [14.0]


# -- bounds --

def test_out_of_bounds_reads_clamp_and_updates_drop():
    x = jnp.arange(5)
    assert int(x.at[10].get()) == 4
    assert x.at[10].set(99).tolist() == [0, 1, 2, 3, 4]
    assert x.at[10].add(99).tolist() == [0, 1, 2, 3, 4]


def test_take_fills_out_of_bounds():
    assert np.isnan(float(jnp.take(jnp.arange(3.0), jnp.array([5]))[0]))
    assert int(jnp.take(jnp.arange(3), jnp.array([5]))[0]) == np.iinfo(np.int32).min


def test_dynamic_slice_clamps_start():
    x = jnp.arange(5)
    assert lax.dynamic_slice(x, (4,), (2,)).tolist() == [3, 4]


def test_float_to_int_saturates():
    assert int(jnp.array(1e10).astype(jnp.int32)) == 2147483647
    assert int(jnp.array(np.nan).astype(jnp.int32)) == 0


# -- printing --

def test_treedef_repr():
    assert repr(tree_structure((1, [2, 3], {"a": 4, "b": None}))) == \
        "PyTreeDef((*, [*, *], {'a': *, 'b': None}))"


def test_tracers_are_instances_of_array():
    """As in JAX, ``isinstance(x, jax.Array)`` holds for traced values too."""
    import xjax
    seen = []

    def f(x):
        seen.append((isinstance(x, xjax.Array), isinstance(x, jnp.ndarray)))
        return x * 2.0

    xjax.jit(f)(1.0)
    xjax.grad(f)(1.0)
    xjax.vmap(f)(jnp.ones(2))
    assert seen == [(True, True)] * 3
    assert not isinstance(np.ones(2), xjax.Array)
    assert not isinstance(1.0, xjax.Array)


@pytest.mark.parametrize("fun", ["logaddexp", "logaddexp2"])
def test_logaddexp_derivative_splits_ties(fun):
    """JAX's custom derivative: exp(x_i - out), 0.5 each at x1 == x2 (the true derivative,
    which the max/abs formula alone gets wrong at ties)."""
    f = getattr(jnp, fun)
    g1, g2 = xjax.grad(f, argnums=(0, 1))(1.0, 1.0)
    assert (float(g1), float(g2)) == (0.5, 0.5)
    eps = 1e-3
    numeric = (float(f(np.float64(1 + eps), 1.5)) - float(f(np.float64(1 - eps), 1.5))) / (2 * eps)
    np.testing.assert_allclose(float(xjax.grad(f)(1.0, 1.5)), numeric, rtol=1e-3)
    np.testing.assert_allclose(np.asarray(xjax.jit(xjax.vmap(xjax.grad(f)))(
        jnp.arange(3.0), jnp.ones(3))), [1 / (1 + np.e), 0.5, np.e / (1 + np.e)]
        if fun == "logaddexp" else [1 / 3, 0.5, 2 / 3], rtol=1e-6)


def test_derivatives_of_weak_inputs_stay_weak():
    """As in JAX, the cotangent seed and Jacobian blocks keep the weak type of the values
    they stand for, so gradients of Python scalars are weakly typed."""
    cube = lambda x: x ** 3  # noqa: E731
    for out in (xjax.grad(cube)(1.0), xjax.jacfwd(cube)(1.0), xjax.jacrev(cube)(1.0),
                xjax.hessian(cube)(1.0), xjax.grad(lambda x: lax.max(x, 2.0))(1.0),
                xjax.grad(lambda x, y: jnp.maximum(x, y))(1.0, 1.0)):
        assert out.weak_type, repr(out)
    assert not xjax.grad(cube)(jnp.float32(1.0)).weak_type
    assert not xjax.jacfwd(cube)(jnp.ones(2)).weak_type


def test_jacfwd_through_inner_jit_matches_finite_differences():
    """Forward-mode Jacobians of functions that call jitted functions (xjax.nn's are
    jitted): the batched jit returns its outputs batched, which must not break jacfwd."""
    inner = xjax.jit(lambda a: jnp.log1p(jnp.exp(a)))
    f = lambda a: jnp.sum(inner(a) * a)  # noqa: E731
    x = np.array([0.3, -1.2, 2.5], np.float32)
    hess = np.asarray(xjax.jacfwd(xjax.grad(f))(jnp.asarray(x)))
    np.testing.assert_allclose(hess, np.asarray(xjax.hessian(f)(jnp.asarray(x))), rtol=1e-5)
    eps = 1e-3
    g = xjax.grad(f)
    numeric = np.stack([(np.asarray(g(jnp.asarray(x + eps * e))) -
                         np.asarray(g(jnp.asarray(x - eps * e)))) / (2 * eps)
                        for e in np.eye(3, dtype=np.float32)], axis=1)
    np.testing.assert_allclose(hess, numeric, rtol=2e-2, atol=2e-2)
    assert xjax.jacfwd(xjax.nn.softplus)(1.0).weak_type


def test_jvp_and_jacfwd_return_aux_as_plain_values():
    """has_aux: the auxiliary output comes back as values, not as tracers of the (finished)
    jvp; jacfwd(has_aux=True) works through an inner jit (xjax.nn functions are jitted)."""
    f = lambda x: (jnp.sum(x * x), x * 2)  # noqa: E731
    _, _, aux = xjax.jvp(f, (jnp.arange(3.0),), (jnp.ones(3),), has_aux=True)
    assert type(aux) is xjax.Array
    np.testing.assert_array_equal(aux, [0.0, 2.0, 4.0])
    g = lambda x: (jnp.sum(xjax.nn.softplus(x) * x), xjax.nn.sigmoid(x))  # noqa: E731
    x = np.array([0.0, 1.0, 2.0], np.float32)
    jac, aux = xjax.jacfwd(g, has_aux=True)(jnp.asarray(x))
    sp = np.log1p(np.exp(x))
    np.testing.assert_allclose(np.asarray(jac), sp + x / (1 + np.exp(-x)), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(aux), 1 / (1 + np.exp(-x)), rtol=1e-6)


def test_python_bools_are_never_weakly_typed():
    # JAX: weak types are for Python int/float/complex; a Python bool is a plain bool
    assert not xjax.lax.reshape(True, (1,)).weak_type
    assert not xjax.lax.bitwise_and(True, False).weak_type
    assert not xjax.jit(lambda b: b)(True).weak_type
    assert not xjax.make_jaxpr(lambda b: b)(True).in_avals[0].weak_type
    assert xjax.lax.reshape(1, (1,)).weak_type  # ints still are


def test_device_put_of_a_python_bool_is_not_weak():
    assert not xjax.device_put(True).weak_type
    assert xjax.device_put(1).weak_type and xjax.device_put(1.5).weak_type
    assert xjax.device_put(2.0).shape == ()


def test_eager_floating_point_errors_do_not_warn():
    # XLA never warns; NumPy, which computes xjax's eager results, would.
    import warnings
    zero = jnp.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(zero / zero).all()
        assert np.isinf(jnp.exp(jnp.float32(1000.0)))
        assert np.isnan(jnp.log(zero - 1)).all()
        # Inside a loop run eagerly, too.
        _, carried = lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] / 0.0),
                                    (0, zero))
        assert np.isnan(carried).all()
    # NumPy itself still warns outside xjax's computations.
    with pytest.warns(RuntimeWarning):
        np.zeros(2) / np.zeros(2)
