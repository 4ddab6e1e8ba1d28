"""jax.lax names filled in one go: broadcast_shapes, dtype, shape_as_value,
with_sharding_constraint, approx_max_k/approx_min_k, optimization_barrier, custom_root.

Checks against NumPy and hand-derived results; those against JAX skip without it."""

import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax


def _jax():
    return pytest.importorskip("jax")


# -- broadcast_shapes --

@pytest.mark.parametrize("shapes", [((1,), (4,)), ((3, 1), (4,)), ((3, 1), (1, 4), (5, 1, 1)),
                                    ((),), ((2, 0), (1,)), ((2, 3),), ([2, 1], (3,))])
def test_broadcast_shapes_matches_numpy(shapes):
    assert lax.broadcast_shapes(*shapes) == np.broadcast_shapes(*map(tuple, shapes))


def test_broadcast_shapes_errors():
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: "
                                         r"shapes=\[\(3, 1\), \(4, 1\)\]"):
        lax.broadcast_shapes((3, 1), (4, 1))
    with pytest.raises(TypeError, match="Only non-negative indices"):
        lax.broadcast_shapes((2, -1))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        lax.broadcast_shapes((2,), (2.0,))
    with pytest.raises(TypeError, match="At least one shape"):
        lax.broadcast_shapes()


def test_broadcast_shapes_against_jax():
    jax = _jax()
    for shapes in [((3, 1), (1, 4), (5, 1, 1)), ((7,), (1, 7)), ((0, 1), (1, 5))]:
        assert lax.broadcast_shapes(*shapes) == jax.lax.broadcast_shapes(*shapes)


# -- dtype and shape_as_value --

_DTYPE_INPUTS = [1.0, 1, True, 1j, float, int, bool, complex, np.float64, np.int64, np.uint8,
                 "int64", "float16", np.dtype("float64"), np.arange(3), np.arange(3.0),
                 np.float64(2.0), np.int8(1), "bfloat16"]


@pytest.mark.parametrize("value", _DTYPE_INPUTS, ids=repr)
def test_dtype_against_jax(value):
    jax = _jax()
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = lax.dtype(value)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = jax.lax.dtype(value)
    assert got == want
    assert len(ours) == len(theirs)


def test_dtype_without_jax():
    assert lax.dtype(1.0) == np.float32  # x64 disabled under the test suite
    assert lax.dtype(np.arange(3)) == np.int32
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in "
                                         "dtype"):
        assert lax.dtype(np.float64) == np.float32
    assert lax.dtype(jnp.ones(2, jnp.bfloat16)) == jnp.bfloat16
    with pytest.raises(ValueError, match="Invalid argument to dtype"):
        lax.dtype(None)
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        lax.dtype("U3")


def test_dtype_keeps_an_x64_array_dtype():
    with xjax.config.override(jax_enable_x64=True):
        x = jnp.ones(2, jnp.float64)
        assert lax.dtype(np.float64) == np.float64
    assert x.dtype == np.float64
    assert lax.dtype(x) == np.float64  # an x64 value keeps its dtype, as in JAX


def test_shape_as_value():
    out = lax.shape_as_value((2, 3))
    np.testing.assert_array_equal(out, np.array([2, 3]))
    assert out.dtype == np.int32
    empty = lax.shape_as_value(())
    assert empty.shape == (0,) and empty.dtype == np.int32
    assert lax.shape_as_value((2**31,)).dtype == np.int64


# -- with_sharding_constraint --

class _FakeSharding:
    """What the checks see of a JAX Sharding: an object with a device_set."""

    device_set = frozenset()


def test_with_sharding_constraint_is_identity_on_pytrees():
    s = _FakeSharding()
    tree = {"a": jnp.arange(3.0), "b": (jnp.ones((2, 2), jnp.int32), 2.0)}
    out = lax.with_sharding_constraint(tree, s)
    assert xjax.tree_util.tree_structure(out) == xjax.tree_util.tree_structure(tree)
    for got, want in zip(xjax.tree_util.tree_leaves(out), xjax.tree_util.tree_leaves(tree),
                         strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert type(out["b"][1]) is xjax.Array and out["b"][1].aval.weak_type
    out = lax.with_sharding_constraint(tree, {"a": s, "b": (s, s)})
    np.testing.assert_array_equal(out["a"], tree["a"])
    f = xjax.jit(lambda x: lax.with_sharding_constraint(x * 2, s))
    np.testing.assert_array_equal(f(jnp.arange(3.0)), np.arange(3.0) * 2)
    g = xjax.grad(lambda x: lax.with_sharding_constraint(x * x, s).sum())
    np.testing.assert_allclose(g(jnp.arange(3.0)), 2 * np.arange(3.0))


def test_with_sharding_constraint_errors():
    x = jnp.ones(3)
    with pytest.raises(ValueError, match="got sharding None which is not allowed"):
        lax.with_sharding_constraint(x, None)
    with pytest.raises(ValueError, match="must be a tree prefix"):
        lax.with_sharding_constraint((x, x), (_FakeSharding(),))
    with pytest.raises(ValueError, match="must be a tree prefix"):
        lax.with_sharding_constraint({"a": x}, [_FakeSharding()])
    with pytest.raises(TypeError, match="not a valid JAX type"):
        lax.with_sharding_constraint("abc", _FakeSharding())
    with pytest.raises(TypeError, match="expected to be PartitionSpec instances or None"):
        lax.with_sharding_constraint(x, 3)


def test_with_sharding_constraint_partition_spec_needs_a_mesh():
    jax = _jax()
    with pytest.raises(RuntimeError, match="non-empty mesh"):
        lax.with_sharding_constraint(jnp.ones(3), jax.sharding.PartitionSpec())
    s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    np.testing.assert_array_equal(lax.with_sharding_constraint(jnp.arange(4), s),
                                  np.arange(4))


# -- approx_max_k / approx_min_k --

def _reference(x, k, axis, largest):
    """A stable sort with -0.0 == 0.0 (NumPy's stable argsort orders them so)."""
    key = -x if largest else x
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_approx_k_matches_a_stable_sort(largest, axis):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (5, 6)).astype(np.float32)
    x[0, :3] = [-0.0, 0.0, -np.inf]
    fun = lax.approx_max_k if largest else lax.approx_min_k
    k = 3
    want_values, want_idx = _reference(x, k, axis, largest)
    for f in (fun, xjax.jit(fun, static_argnums=(1, 2))):
        values, idx = f(jnp.asarray(x), k, axis)
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_array_equal(values, want_values)
        assert idx.dtype == np.int32 and values.dtype == np.float32
        np.testing.assert_array_equal(np.signbit(values), np.signbit(want_values))


def test_approx_k_batches_and_differentiates():
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.permutation(12).astype(np.float32).reshape(3, 4))
    batched = xjax.vmap(lambda r: lax.approx_min_k(r, 2))(x)
    looped = [lax.approx_min_k(r, 2) for r in x]
    for i, (v, j) in enumerate(looped):
        np.testing.assert_array_equal(batched[0][i], v)
        np.testing.assert_array_equal(batched[1][i], j)
    from xjax.test_util import check_grads
    check_grads(lambda x: lax.approx_max_k(x, 2)[0], (x,), order=2)
    check_grads(lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0], (x,), order=2)
    g = xjax.grad(lambda x: lax.approx_min_k(x, 2)[0].sum())(x)
    np.testing.assert_array_equal(g, np.asarray(
        np.asarray(x) <= np.sort(np.asarray(x), axis=1)[:, 1:2], np.float32))


def test_approx_k_errors():
    x = jnp.ones((2, 8))
    with pytest.raises(ValueError, match="operand must be a floating type"):
        lax.approx_max_k(jnp.arange(4), 2)
    with pytest.raises(TypeError, match=">= 1 dimension"):
        lax.approx_max_k(jnp.ones(()), 1)
    with pytest.raises(ValueError, match="k must be smaller than the size of reduction_dim 8, "
                                         "got 9"):
        lax.approx_max_k(x, 9)
    with pytest.raises(ValueError, match="k must be positive, got 0"):
        lax.approx_min_k(x, 0)
    with pytest.raises(NotImplementedError, match="aggregate_to_topk=False"):
        lax.approx_max_k(x, 2, aggregate_to_topk=False)


@pytest.mark.parametrize("largest", [True, False])
def test_approx_k_against_jax(largest):
    """Values agree with JAX's; indices agree where values are distinct (JAX's CPU fallback
    sorts unstably, so its order among ties, -0.0 and 0.0 included, is unspecified)."""
    jax = _jax()
    rng = np.random.default_rng(2)
    ties = rng.integers(-3, 4, (4, 9)).astype(np.float32)
    ties[1, :4] = [0.0, -0.0, np.inf, -np.inf]
    distinct = rng.permutation(36).astype(np.float32).reshape(4, 9) - 18
    name = "approx_max_k" if largest else "approx_min_k"
    for axis, k in [(-1, 4), (0, 2)]:
        for x in (ties, distinct):
            values, idx = getattr(lax, name)(jnp.asarray(x), k, axis)
            want_values, want_idx = getattr(jax.lax, name)(x, k, axis)
            np.testing.assert_array_equal(np.asarray(values), np.asarray(want_values))
            np.testing.assert_array_equal(np.take_along_axis(x, np.asarray(idx), axis),
                                          np.asarray(values))
            if x is distinct:
                np.testing.assert_array_equal(np.asarray(idx), np.asarray(want_idx))


# -- optimization_barrier --

def test_optimization_barrier_values_and_jaxpr():
    x, i = jnp.arange(3.0), jnp.arange(3)
    f = lambda x, i: lax.optimization_barrier((lax.sin(x), {"i": i}))  # noqa: E731
    for g in (f, xjax.jit(f)):
        s, d = g(x, i)
        np.testing.assert_allclose(s, np.sin(np.arange(3.0)), rtol=1e-6)
        np.testing.assert_array_equal(d["i"], np.arange(3))
    text = str(xjax.make_jaxpr(f)(x, i))
    assert "optimization_barrier" in text
    assert "stablehlo.optimization_barrier" in xjax.jit(f).lower(x, i).as_text()
    out = lax.optimization_barrier(1.0)
    assert type(out) is xjax.Array and out.aval.weak_type


def test_optimization_barrier_derivatives_as_jax():
    i = jnp.arange(3)

    def f(x):
        y, j = lax.optimization_barrier((x * x, i))
        return y * j.astype(jnp.float32)

    x = jnp.array([1.0, 2.0, 3.0])
    primal, tangent = xjax.jvp(f, (x,), (jnp.ones(3),))
    np.testing.assert_array_equal(tangent, 2 * np.asarray(x) * np.arange(3))
    grad = xjax.grad(lambda x: f(x).sum())(x)
    np.testing.assert_array_equal(grad, 2 * np.asarray(x) * np.arange(3))
    # the transposed program puts the cotangent through a barrier too, as JAX's does
    jaxpr = str(xjax.make_jaxpr(xjax.grad(lambda x: f(x).sum()))(x))
    assert jaxpr.count("optimization_barrier") == 2
    out = xjax.vmap(lambda r: lax.optimization_barrier((r, 3.0)), out_axes=(1, None))(
        jnp.ones((2, 3)))
    assert out[0].shape == (3, 2) and out[1].shape == ()


def test_optimization_barrier_jaxpr_against_jax():
    jax = _jax()
    f = lambda x: lax.optimization_barrier((x, x * 2))  # noqa: E731
    g = lambda x: jax.lax.optimization_barrier((x, x * 2))  # noqa: E731
    ours = xjax.make_jaxpr(xjax.grad(lambda x: sum(f(x)).sum()))(jnp.ones(3))
    theirs = jax.make_jaxpr(jax.grad(lambda x: sum(g(x)).sum()))(np.ones(3, np.float32))
    assert str(ours).count("optimization_barrier") == \
        str(theirs).count("optimization_barrier")


# -- custom_root --

def _newton(f, x):
    """Newton's method, its result cut from autodiff: any derivative of custom_root's
    output must come from the implicit rule."""
    for _ in range(12):
        x = x - f(x) / xjax.grad(f)(x)
    return lax.stop_gradient(x)


def _scalar_tangent_solve(g, y):
    return y / g(1.0)


def _sqrt(a):
    return lax.custom_root(lambda x: x * x - a, 1.0, _newton, _scalar_tangent_solve)


def test_custom_root_implicit_derivatives():
    a = jnp.array([1.0, 4.0, 9.0, 2.0])
    want = 0.5 / np.sqrt(np.asarray(a))
    np.testing.assert_allclose(xjax.vmap(_sqrt)(a), np.sqrt(a), rtol=1e-6)
    np.testing.assert_allclose(xjax.vmap(xjax.grad(_sqrt))(a), want, rtol=1e-6)
    np.testing.assert_allclose(xjax.jit(xjax.vmap(xjax.grad(_sqrt)))(a), want, rtol=1e-6)
    _, tangent = xjax.jvp(_sqrt, (2.0,), (1.0,))
    np.testing.assert_allclose(tangent, 0.5 / np.sqrt(2.0), rtol=1e-6)
    np.testing.assert_allclose(xjax.grad(xjax.grad(_sqrt))(4.0), -0.25 * 4.0 ** -1.5,
                               rtol=1e-5)


def _vector_solve(f, x):
    for _ in range(10):
        x = x - jnp.linalg.solve(xjax.jacfwd(f)(x), f(x))
    x = lax.stop_gradient(x)
    return x, jnp.sum(x)


def _vector_tangent_solve(g, y):
    return jnp.linalg.solve(xjax.jacfwd(g)(y), y)


def _cube_root(a, b):
    return lax.custom_root(lambda x: x ** 3 - a * b, jnp.ones(2), _vector_solve,
                           _vector_tangent_solve, has_aux=True)


def test_custom_root_vector_with_aux():
    a = jnp.array([8.0, 27.0])
    (x, total) = _cube_root(a, 1.0)
    np.testing.assert_allclose(x, [2.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(total, 5.0, rtol=1e-6)
    # d(ab)^(1/3)/da = b^(1/3) / (3 a^(2/3))
    jac = xjax.jacrev(lambda a: _cube_root(a, 2.0)[0])(a)
    np.testing.assert_allclose(jac, np.diag(2.0 ** (1 / 3) / (3 * np.asarray(a) ** (2 / 3))),
                               rtol=1e-5, atol=1e-7)
    # the aux output gets zero tangents, as in JAX
    assert float(xjax.grad(lambda b: _cube_root(a, b)[1])(1.0)) == 0.0


def test_custom_root_errors():
    with pytest.raises(TypeError, match=r"f\(\) output pytree structure must match "
                                        "initial_guess"):
        lax.custom_root(lambda x: (x, x), 1.0, _newton, _scalar_tangent_solve)
    with pytest.raises(ValueError, match="has_aux was set to True"):
        lax.custom_root(lambda x: x - 1.0, 1.0, _newton, _scalar_tangent_solve,
                        has_aux=True)


def test_custom_root_against_jax():
    jax = _jax()

    def jvector_solve(f, x):
        for _ in range(10):
            x = x - jax.numpy.linalg.solve(jax.jacfwd(f)(x), f(x))
        return x, jax.numpy.sum(x)

    def jtangent_solve(g, y):
        return jax.numpy.linalg.solve(jax.jacfwd(g)(y), y)

    def theirs(a, b):
        return jax.lax.custom_root(lambda x: x ** 3 - a * b, np.ones(2, np.float32),
                                   jvector_solve, jtangent_solve, has_aux=True)

    a = np.array([8.0, 27.0], np.float32)
    got = xjax.jacrev(lambda a: _cube_root(a, 2.0)[0])(jnp.asarray(a))
    want = jax.jacrev(lambda a: theirs(a, 2.0)[0])(a)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    got = xjax.grad(lambda b: _cube_root(jnp.asarray(a), b)[0].sum())(1.0)
    want = jax.grad(lambda b: theirs(a, b)[0].sum())(1.0)
    np.testing.assert_allclose(got, want, rtol=1e-5)
