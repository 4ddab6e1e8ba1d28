"""custom_vmap and sequential_vmap (xjax.custom_batching)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.custom_batching import custom_vmap, sequential_vmap


def _make_f(calls):
    @custom_vmap
    def f(x, y):
        return jnp.sin(x) + y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, list(in_batched)))
        return jnp.cos(xs) + ys, True

    return f


def test_unbatched_calls_the_function():
    calls = []
    f = _make_f(calls)
    np.testing.assert_allclose(f(1.0, 2.0), np.sin(1.0) + 2.0, rtol=1e-6)
    np.testing.assert_allclose(xjax.jit(f)(1.0, 2.0), np.sin(1.0) + 2.0, rtol=1e-6)
    assert calls == []


@pytest.mark.parametrize("wrap", ["eager", "jit_outside", "jit_inside"])
def test_vmap_uses_the_rule(wrap):
    calls = []
    f = _make_f(calls)
    g = xjax.vmap(f, in_axes=(0, None))
    if wrap == "jit_outside":
        g = xjax.jit(g)
    elif wrap == "jit_inside":
        g = xjax.vmap(xjax.jit(f), in_axes=(0, None))
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(g(x, 1.0), np.cos(x) + 1.0, rtol=1e-6)
    assert calls == [(3, [True, False])]


def test_nested_vmap_and_in_axes():
    calls = []
    f = _make_f(calls)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = xjax.vmap(xjax.vmap(f), in_axes=(1, 1))(x, x)
    np.testing.assert_allclose(out, (np.cos(x) + x).T, rtol=1e-6)
    assert calls[0] == (2, [True, True])


def test_pytree_arguments_and_unbatched_outputs():
    @custom_vmap
    def f(d):
        return {"s": d["a"].sum(), "b": d["b"] * 2.0}

    @f.def_vmap
    def rule(axis_size, in_batched, d):
        assert in_batched == [{"a": True, "b": False}]
        return {"s": d["a"].sum(axis=1), "b": d["b"] * 2.0}, {"s": True, "b": False}

    a = np.ones((4, 2), np.float32)
    out = xjax.vmap(f, in_axes=({"a": 0, "b": None},))({"a": a, "b": jnp.float32(3.0)})
    np.testing.assert_allclose(out["s"], np.full(4, 2.0))
    np.testing.assert_allclose(out["b"], 6.0)


def test_jvp_and_vmap_of_jvp_use_the_rule():
    calls = []
    f = _make_f(calls)
    p, t = xjax.jvp(f, (1.0, 2.0), (1.0, 0.0))
    np.testing.assert_allclose([p, t], [np.sin(1.0) + 2.0, np.cos(1.0)], rtol=1e-6)
    x = np.arange(3.0, dtype=np.float32)
    p, t = xjax.vmap(lambda x: xjax.jvp(f, (x, 2.0), (1.0, 0.0)))(x)
    np.testing.assert_allclose(p, np.cos(x) + 2.0, rtol=1e-6)
    np.testing.assert_allclose(t, -np.sin(x), rtol=1e-6, atol=1e-7)
    p, t = xjax.jvp(xjax.vmap(f), (x, np.ones(3, np.float32)),
                    (np.ones(3, np.float32), np.zeros(3, np.float32)))
    np.testing.assert_allclose(t, -np.sin(x), rtol=1e-6, atol=1e-7)
    assert calls


def test_jvp_matches_jax():
    jax = pytest.importorskip("jax")

    def build(cv, np_mod):
        @cv
        def f(x, y):
            return np_mod.sin(x) * y

        @f.def_vmap
        def rule(axis_size, in_batched, xs, ys):
            return np_mod.cos(xs) * ys, True
        return f

    fx = build(custom_vmap, jnp)
    fj = build(jax.custom_batching.custom_vmap, jax.numpy)
    x = np.linspace(0, 1, 4).astype(np.float32)
    for fn, mod in ((fx, xjax), (fj, jax)):
        out = mod.vmap(lambda x: mod.jvp(fn, (x, 2.0), (1.0, 1.0)))(x)
        if mod is xjax:
            ours = out
        else:
            theirs = out
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_grad_raises_as_jax():
    f = _make_f([])
    with pytest.raises(ValueError, match="Linearization failed"):
        xjax.grad(f)(1.0, 2.0)
    with pytest.raises(ValueError, match="Linearization failed"):
        xjax.grad(xjax.jit(f))(1.0, 2.0)


def test_custom_vjp_outside_gives_reverse_mode():
    @custom_vmap
    def inner(x, y):
        return jnp.sin(x) * y

    @inner.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        return jnp.cos(xs) * ys, True

    # (JAX forwards f.def_vmap through custom_vjp; xjax's custom_vjp does not yet)
    f = xjax.custom_vjp(inner)

    f.defvjp(lambda x, y: (f(x, y), (jnp.cos(x), jnp.sin(x), y)),
             lambda res, g: (res[0] * g * res[2], res[1] * g))
    np.testing.assert_allclose(xjax.vmap(f)(jnp.zeros(3), jnp.ones(3)), np.ones(3))
    np.testing.assert_allclose(xjax.grad(f)(jnp.zeros(()), jnp.ones(())), 1.0)


def test_errors():
    @custom_vmap
    def f(x):
        return x * 2.0

    with pytest.raises(AttributeError, match="No batching rule defined"):
        f(1.0)

    @f.def_vmap
    def bad_tree(axis_size, in_batched, xs):
        return xs * 3.0, [True]

    with pytest.raises(ValueError, match="do not match"):
        xjax.vmap(f)(jnp.ones(2))

    @f.def_vmap
    def bad_shape(axis_size, in_batched, xs):
        return xs.sum(), True

    with pytest.raises(ValueError, match="custom vmap rule"):
        xjax.vmap(f)(jnp.ones(2))

    y = jnp.ones(3)

    def closes_over_batched(y):
        @custom_vmap
        def g(x):
            return x + y

        g.def_vmap(lambda n, b, xs: (xs, True))
        return g(1.0)

    with pytest.raises(NotImplementedError, match="closes over"):
        xjax.vmap(closes_over_batched)(y)


def test_make_jaxpr_shows_the_primitive():
    f = _make_f([])
    text = str(xjax.make_jaxpr(f)(1.0, 2.0))
    assert "custom_vmap_call" in text and "sin" in text


def test_sequential_vmap_is_a_loop():
    seen = []

    @sequential_vmap
    def f(x, y):
        seen.append(x.shape)
        return x * 2.0 + y

    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(xjax.vmap(f, in_axes=(0, None))(x, 1.0), x * 2 + 1)
    assert seen[-1] == ()  # traced once per example shape, as a lax.map body
    jaxpr = str(xjax.make_jaxpr(xjax.vmap(f, in_axes=(0, None)))(x, 1.0))
    assert "scan" in jaxpr
    np.testing.assert_allclose(xjax.jit(xjax.vmap(f))(x, x), x * 3)
