"""device_put_p and sharding_constraint_p: identities on one device that appear in jaxprs as
JAX's do, with jvp, transpose and batching; compared with JAX where installed."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import Mesh, PartitionSpec as P, SingleDeviceSharding, set_mesh


def _x():
    return jnp.arange(12.0).reshape(3, 4)


def test_device_put_jaxprs_match_jax():
    jax = pytest.importorskip("jax")
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    pairs = [(lambda api: (lambda x: api.device_put(x))),
             (lambda api: api.grad(lambda x: api.device_put(x).sum())),
             (lambda api: (lambda x: api.device_put((x, 2 * x), may_alias=False)))]
    for make in pairs:
        assert str(xjax.make_jaxpr(make(xjax))(x)) == str(jax.make_jaxpr(make(jax))(x))


def test_device_put_values_under_transformations():
    x = _x()
    f = lambda x: (xjax.device_put(x) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(xjax.grad(f)(x), 2 * np.asarray(x))
    np.testing.assert_allclose(xjax.jit(xjax.grad(f))(x), 2 * np.asarray(x))
    _, t = xjax.jvp(lambda x: xjax.device_put(x), (x,), (jnp.ones_like(x),))
    np.testing.assert_array_equal(t, np.ones((3, 4)))
    a, b = xjax.vmap(lambda x: xjax.device_put((x, 2 * x)))(x)
    np.testing.assert_array_equal(b, 2 * np.asarray(x))
    with pytest.raises(ValueError, match="donate=True"):
        xjax.grad(lambda x: xjax.device_put(x, donate=True).sum())(x)


def test_sharding_constraint_binds_and_differentiates():
    x = _x()
    s = SingleDeviceSharding(xjax.devices()[0])
    f = lambda x: lax.with_sharding_constraint(x, s)  # noqa: E731
    text = str(xjax.make_jaxpr(f)(x))
    assert "sharding_constraint[" in text and "unconstrained_dims=frozenset({})" in text
    np.testing.assert_array_equal(f(x), x)
    g = xjax.grad(lambda x: (f(x) ** 2).sum())
    np.testing.assert_allclose(xjax.jit(g)(x), 2 * np.asarray(x))
    np.testing.assert_array_equal(xjax.vmap(f)(x), x)
    assert "sharding_constraint" in str(xjax.make_jaxpr(g)(x))


def test_sharding_constraint_with_partition_spec_needs_a_mesh():
    x = _x()
    with pytest.raises(RuntimeError, match="mesh"):
        lax.with_sharding_constraint(x, P("x"))
    mesh = Mesh(np.array(xjax.devices()[:1]), ("x",))
    with set_mesh(mesh):
        f = lambda x: lax.with_sharding_constraint(x, P("x", P.UNCONSTRAINED))  # noqa: E731
        text = str(xjax.make_jaxpr(f)(x))
        assert "unconstrained_dims=frozenset({1})" in text and "NamedSharding" in text
        np.testing.assert_array_equal(xjax.jit(f)(x), x)


def test_sharding_constraint_jaxpr_matches_jax_but_mesh():
    jax = pytest.importorskip("jax")
    x = np.ones((2, 3), np.float32)
    ours = str(xjax.make_jaxpr(lambda x: lax.with_sharding_constraint(
        x, SingleDeviceSharding(xjax.devices()[0])))(x))
    theirs = str(jax.make_jaxpr(lambda x: jax.lax.with_sharding_constraint(
        x, jax.sharding.SingleDeviceSharding(jax.devices()[0])))(x))
    drop_mesh = lambda t: [ln for ln in t.splitlines() if "context_mesh" not in ln]  # noqa
    assert drop_mesh(ours) == drop_mesh(theirs)


def test_approx_top_k_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    x[0, 1], x[0, 2] = -0.0, 0.0
    makers = [lambda L: (lambda x: L.approx_max_k(x, 2)),
              lambda L: (lambda x: L.approx_min_k(x, 3, reduction_dimension=0,
                                                  recall_target=0.9))]
    for make in makers:
        assert str(xjax.make_jaxpr(make(lax))(x)) == str(jax.make_jaxpr(make(jax.lax))(x))
        want = make(jax.lax)(x)
        for got in (make(lax)(x), xjax.jit(make(lax))(x)):
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)
        grad = xjax.grad(lambda x: (make(lax)(x)[0] ** 2).sum())(x)
        np.testing.assert_array_equal(
            grad, jax.grad(lambda x: (make(jax.lax)(x)[0] ** 2).sum())(x))
        values, indices = xjax.vmap(make(lax))(np.stack([x, -x]))
        np.testing.assert_array_equal(values[0], want[0])
        np.testing.assert_array_equal(indices[1], make(lax)(-x)[1])


def test_approx_top_k_numpy_reference_and_errors():
    x = np.array([[3., 1., 4., 1., 5.], [9., 2., 6., 5., 3.]], np.float32)
    values, indices = lax.approx_max_k(x, 2)
    np.testing.assert_array_equal(values, [[5., 4.], [9., 6.]])
    np.testing.assert_array_equal(indices, [[4, 2], [0, 2]])
    with pytest.raises(NotImplementedError):
        lax.approx_max_k(x, 2, aggregate_to_topk=False)
    with pytest.raises(ValueError):
        lax.approx_min_k(x, 6)


def test_vmap_of_a_named_sharding_constraint_leaves_the_batch_dimension_unconstrained():
    mesh = xjax.make_mesh((1,), ("x",), axis_types=(xjax.sharding.AxisType.Auto,))
    s = xjax.sharding.NamedSharding(mesh, P("x"))
    f = xjax.vmap(lambda x: lax.with_sharding_constraint(x, s), in_axes=1)
    x = _x()
    np.testing.assert_array_equal(f(x), np.asarray(x).T)
    text = str(xjax.make_jaxpr(f)(x))
    assert "spec=P('x', UNCONSTRAINED)" in text and "unconstrained_dims=frozenset({1})" in text
    jax = pytest.importorskip("jax")
    their_mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    theirs = jax.vmap(lambda x: jax.lax.with_sharding_constraint(
        x, jax.sharding.NamedSharding(their_mesh, jax.P("x"))), in_axes=1)
    drop_mesh = lambda t: [ln for ln in t.splitlines() if "context_mesh" not in ln]  # noqa
    assert drop_mesh(text) == drop_mesh(str(jax.make_jaxpr(theirs)(np.asarray(x))))


def test_sharding_constraint_over_an_abstract_mesh_under_a_trace():
    mesh = xjax.sharding.AbstractMesh((2,), ("x",), axis_types=(xjax.sharding.AxisType.Auto,))
    s = xjax.sharding.NamedSharding(mesh, P("x"))
    f = xjax.jit(lambda x: lax.with_sharding_constraint(x, s) * 2)
    np.testing.assert_array_equal(f(np.arange(4.0)), np.arange(4.0) * 2)
