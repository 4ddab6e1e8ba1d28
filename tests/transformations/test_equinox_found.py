"""Transformation behaviour Equinox's own tests found differing from JAX: float0
cotangents, Python scalars kept through ``jvp`` and ``custom_jvp`` rules, ``linearize``'s
result as a pytree, ``pmap(...).lower``, ``custom_jvp`` under ``vmap`` with unbatched
operands, and ``nn.relu``'s ``custom_jvp``.

References: NumPy, finite differences; JAX where installed.
"""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

FLOAT0 = xjax.dtypes.float0


# -- float0 cotangents are NumPy arrays, as in JAX --

def _scan_with_int_carry(init, xs):
    final, ys = lax.scan(lambda c, x: (c + 1, 2.0 * x + c), init, xs)
    return ys, final


@pytest.mark.parametrize("jitted", [False, True])
def test_float0_cotangents_are_numpy_arrays(jitted):
    def cotangents(init, xs):
        out, pullback = xjax.vjp(_scan_with_int_carry, init, xs)
        return pullback(out)

    run = xjax.jit(cotangents) if jitted else cotangents
    ct_init, ct_xs = run(0, jnp.arange(4.0))
    assert type(ct_init) is np.ndarray and ct_init.dtype == FLOAT0 and ct_init.shape == ()
    # NumPy's comparison works on it (no lax operation accepts float0)
    assert bool(np.all(ct_init == ct_init))
    # ys = 2 xs + step, so the cotangent of xs is twice that of ys (here ys itself)
    np.testing.assert_allclose(np.asarray(ct_xs), 2 * (2 * np.arange(4.0) + np.arange(4)))


def test_float0_cotangents_match_jax():
    jax = pytest.importorskip("jax")

    def theirs(init, xs):
        final, ys = jax.lax.scan(lambda c, x: (c + 1, 2.0 * x + c), init, xs)
        return ys, final

    ct_theirs = jax.jit(lambda i, x: jax.vjp(theirs, i, x)[1]((x, i)))(0, np.arange(4.0))[0]
    ct_ours = xjax.jit(lambda i, x: xjax.vjp(_scan_with_int_carry, i, x)[1]((x, i)))(
        0, jnp.arange(4.0))[0]
    assert isinstance(ct_theirs, np.ndarray) and isinstance(ct_ours, np.ndarray)
    assert ct_ours.dtype == ct_theirs.dtype and ct_ours.shape == ct_theirs.shape


def test_float0_arrays_pass_through_jit():
    # the cotangents of integer inputs go back into jitted updates (optimizers do that)
    grads = xjax.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(1.0, 2)
    g_x, g_i = xjax.jit(lambda g: g)(grads)
    assert float(g_x) == 2.0
    assert type(g_i) is np.ndarray and g_i.dtype == FLOAT0
    zeros = np.zeros((2, 3), FLOAT0)
    out, doubled = xjax.jit(lambda z, x: (z, 2 * x))(zeros, 1.5)
    assert out.dtype == FLOAT0 and out.shape == (2, 3) and float(doubled) == 3.0


# -- jvp keeps the values it is given --

def test_jvp_returns_its_inputs_unchanged():
    for primal, tangent in [(2.0, 3.0), (np.float32(2.0), np.float32(3.0)),
                            (np.ones(2, np.float32), np.ones(2, np.float32))]:
        out, t_out = xjax.jvp(lambda x: x, (primal,), (tangent,))
        assert type(out) is type(primal) and type(t_out) is type(tangent)
    out, t_out = xjax.jvp(lambda x: (x, 2.0), (1.0,), (1.0,))
    assert out == (1.0, 2.0) and type(out[1]) is float
    assert isinstance(t_out[1], xjax.Array) and float(t_out[1]) == 0.0


def test_jvp_of_an_operation_gives_arrays():
    # a primitive's outputs are arrays, even when its rule passes a tangent on unchanged
    out, t_out = xjax.jvp(lambda x: x + 1, (1.0,), (1.0,))
    assert isinstance(out, xjax.Array) and isinstance(t_out, xjax.Array)
    assert (float(out), float(t_out)) == (2.0, 1.0)
    out, t_out = xjax.jvp(jnp.sin, (0.5,), (2.0,))
    np.testing.assert_allclose([float(out), float(t_out)], [np.sin(0.5), 2 * np.cos(0.5)],
                               rtol=1e-6)


def test_jvp_output_types_match_jax():
    jax = pytest.importorskip("jax")
    for fun in [lambda x: x, lambda x: (x, 2.0), lambda x: x * 2]:
        theirs = jax.jvp(fun, (2.0,), (3.0,))
        ours = xjax.jvp(fun, (2.0,), (3.0,))
        assert [type(v) is float for v in jax.tree_util.tree_leaves(theirs)] == \
            [type(v) is float for v in xjax.tree_util.tree_leaves(ours)]


def test_custom_jvp_rule_sees_and_returns_python_scalars():
    seen = []

    @xjax.custom_jvp
    def square(x):
        return x ** 2

    @square.defjvp
    def square_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        seen.append((type(x), type(t)))
        return square(x), 2 * x * t

    out, t_out = xjax.jvp(square, (3.0,), (0.5,))
    assert seen == [(float, float)]
    assert (out, t_out) == (9.0, 3.0) and type(out) is float and type(t_out) is float
    # under jit the same rule computes with tracers and gives arrays
    out, t_out = xjax.jit(lambda x, t: xjax.jvp(square, (x,), (t,)))(3.0, 0.5)
    assert (float(out), float(t_out)) == (9.0, 3.0)


# -- linearize --

def test_linearized_function_is_a_pytree_of_its_residuals():
    y, f_jvp = xjax.linearize(lambda x: jnp.sin(x) * x, jnp.arange(3.0))
    leaves = xjax.tree_util.tree_leaves(f_jvp)
    assert leaves and all(isinstance(leaf, xjax.Array) for leaf in leaves)
    x = np.arange(3.0)
    np.testing.assert_allclose(np.asarray(f_jvp(jnp.ones(3))), np.cos(x) * x + np.sin(x),
                               rtol=1e-6)


def test_linearize_under_vmap_and_jit():
    # the linearized function leaves vmap and jit (its residuals batched, as JAX's)
    xs = jnp.arange(6.0).reshape(2, 3)
    ys, f_jvp = xjax.jit(xjax.vmap(lambda x: xjax.linearize(jnp.sin, x)))(xs)
    np.testing.assert_allclose(np.asarray(ys), np.sin(np.asarray(xs)), rtol=1e-6)
    (residual,) = xjax.tree_util.tree_leaves(f_jvp)
    np.testing.assert_allclose(np.asarray(residual), np.cos(np.asarray(xs)), rtol=1e-6)
    tangents = xjax.vmap(lambda f, t: f(t))(f_jvp, jnp.ones((2, 3)))
    np.testing.assert_allclose(np.asarray(tangents), np.cos(np.asarray(xs)), rtol=1e-6)


# -- pmap --

def test_pmap_lowers_ahead_of_time():
    f = xjax.pmap(lambda x, y: 2 * x + y)
    x, y = jnp.array([3]), jnp.array([4])
    lowered = f.lower(x, y)
    assert "stablehlo" in lowered.as_text()
    np.testing.assert_array_equal(np.asarray(lowered.compile()(x, y)), [10])


# -- custom_jvp under vmap --

def test_custom_jvp_under_vmap_keeps_unbatched_operands_unbatched():
    # The body branches on an unbatched predicate: it must stay a cond (only the taken
    # branch runs), not become a select of both branches.
    calls = []

    def record(x):
        calls.append(np.asarray(x))
        return np.asarray(x)

    @xjax.custom_jvp
    def guarded(x, pred):
        def taken(y):
            return xjax.pure_callback(record, xjax.ShapeDtypeStruct(y.shape, y.dtype), y,
                                      vmap_method="sequential")
        return lax.cond(pred, taken, lambda y: y, x)

    guarded.defjvp(lambda primals, tangents: (guarded(*primals), tangents[0]))
    xs = jnp.arange(3.0)
    out = xjax.vmap(guarded, in_axes=(0, None))(xs, False)
    assert calls == []
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0))
    closed = xjax.make_jaxpr(xjax.vmap(guarded, in_axes=(0, None)))(xs, False)
    body = closed.jaxpr.eqns[-1].params["call_jaxpr"].jaxpr
    assert any(e.primitive.name == "cond" for e in body.eqns)
    assert body.invars[1].aval.shape == ()


def test_custom_jvp_under_vmap_with_an_unbatched_operand_differentiates():
    @xjax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    f.defjvp(lambda p, t: (f(*p), jnp.cos(p[0]) * p[1] * t[0] + jnp.sin(p[0]) * t[1]))
    x = np.arange(3.0, dtype=np.float32)
    batched = xjax.vmap(f, in_axes=(0, None))
    _, tangent = xjax.jvp(batched, (jnp.asarray(x), 2.0), (jnp.ones(3), 1.0))
    np.testing.assert_allclose(np.asarray(tangent), 2 * np.cos(x) + np.sin(x), rtol=1e-6)
    grad_y = xjax.grad(lambda y: batched(jnp.asarray(x), y).sum())(2.0)
    np.testing.assert_allclose(float(grad_y), np.sin(x).sum(), rtol=1e-6)
    grad_x = xjax.vmap(xjax.grad(f), in_axes=(0, None))(jnp.asarray(x), 2.0)
    np.testing.assert_allclose(np.asarray(grad_x), 2 * np.cos(x), rtol=1e-6)


# -- nn.relu --

@pytest.mark.parametrize("name", ["relu", "relu6"])
def test_relu_is_a_custom_jvp_function(name):
    fun = getattr(xjax.nn, name)
    closed = xjax.make_jaxpr(fun)(jnp.ones(2))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["custom_jvp_call"]
    x = jnp.array([-1.0, 0.0, 0.5, 6.0, 7.0])
    want = {"relu": [0.0, 0.0, 1.0, 1.0, 1.0], "relu6": [0.0, 0.0, 1.0, 0.0, 0.0]}[name]
    np.testing.assert_array_equal(np.asarray(xjax.vmap(xjax.grad(fun))(x)), want)


def test_relu_jaxpr_matches_jax():
    jax = pytest.importorskip("jax")
    theirs = jax.make_jaxpr(jax.nn.relu)(np.ones(2, np.float32))
    ours = xjax.make_jaxpr(xjax.nn.relu)(jnp.ones(2))
    assert [e.primitive.name for e in ours.jaxpr.eqns] == \
        [e.primitive.name for e in theirs.jaxpr.eqns]
