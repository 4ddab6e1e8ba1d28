"""custom_jvp, custom_vjp, checkpoint and linear_transpose."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit


def _custom_sin_jvp():
    @xjax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * t

    return f


def test_custom_jvp_eager_jit_and_both_modes():
    f = _custom_sin_jvp()
    np.testing.assert_allclose(f(0.5), np.sin(0.5), rtol=1e-6)
    assert float(grad(f)(0.5)) == 2.0
    assert float(jit(grad(f))(0.5)) == 2.0
    assert float(grad(jit(f))(0.5)) == 2.0
    assert float(xjax.jvp(f, (0.5,), (1.0,))[1]) == 2.0
    assert "custom_jvp_call" in str(xjax.make_jaxpr(f)(0.5))


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @xjax.custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(lambda t, ans, x, y: 10.0 * t, None)
    assert float(grad(f)(2.0, 3.0)) == 10.0

    @xjax.custom_jvp
    def scaled(n, x):
        return x * n

    scaled.nondiff_argnums = (0,)

    @scaled.defjvp
    def scaled_jvp(n, primals, tangents):
        return scaled(n, primals[0]), tangents[0] * (n + 1.0)

    assert float(grad(lambda x: scaled(2.0, x))(1.0)) == 3.0


def test_custom_jvp_under_vmap_keeps_the_rule():
    f = _custom_sin_jvp()
    got = xjax.vmap(grad(f))(jnp.arange(3.0))
    np.testing.assert_array_equal(got, [2.0, 2.0, 2.0])


def test_custom_vjp():
    @xjax.custom_vjp
    def f(x, y):
        return jnp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, g):
        x, y = res
        return (3.0 * g, 5.0 * g)

    f.defvjp(fwd, bwd)
    assert grad(f, argnums=(0, 1))(0.5, 2.0) == (3.0, 5.0)
    assert float(jit(grad(f))(0.5, 2.0)) == 3.0
    with pytest.raises(TypeError, match="forward-mode"):
        xjax.jvp(f, (0.5, 2.0), (1.0, 1.0))


def test_custom_vjp_bwd_with_wrong_structure_is_a_clear_error():
    @xjax.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), None), lambda res, g: (g,))
    with pytest.raises(TypeError, match="bwd rule must produce"):
        grad(f)(1.0, 2.0)


def test_checkpoint_recomputes_and_agrees():
    def f(x):
        return jnp.sin(jnp.sin(x))

    g = xjax.checkpoint(f)
    for x in (0.3, -1.2):
        np.testing.assert_allclose(grad(g)(x), grad(f)(x), rtol=1e-6)
    np.testing.assert_allclose(jit(grad(g))(0.3), grad(f)(0.3), rtol=1e-6)
    text = str(xjax.make_jaxpr(grad(g))(0.3))
    # the two forward sins, and the first again in the backward pass (a plain grad has two)
    assert text.count("= sin ") >= 3


def test_linear_transpose():
    f_t = xjax.linear_transpose(lambda x, y: 2.0 * x + y, 1.0, 1.0)
    assert f_t(1.0) == (2.0, 1.0)


def _scaled_sin():
    @xjax.custom_vjp
    def f(x, y):
        return jnp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, g):
        x, y = res
        return (100.0 * g * y, None)  # deliberately not the true derivative

    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("wrap", ["plain", "jit"])
def test_grad_of_vmapped_custom_vjp_uses_the_custom_bwd(wrap):
    """vmap keeps the custom rule: differentiating a batched custom_vjp function runs the
    user's bwd (per example), as a Python loop of grads does."""
    f = _scaled_sin()
    xs, ys = jnp.arange(3.0), jnp.array([1.0, 2.0, 3.0])

    def loss(xs):
        return jnp.sum(xjax.vmap(f)(xs, ys))

    g = xjax.jit(xjax.grad(loss)) if wrap == "jit" else xjax.grad(loss)
    loop = [float(xjax.grad(f)(x, y)) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(np.asarray(g(xs)), loop)
    np.testing.assert_allclose(np.asarray(g(xs)), 100.0 * np.asarray(ys))
    jac = xjax.jacrev(lambda xs: xjax.vmap(f, in_axes=(0, None))(xs, 2.0))(xs)
    np.testing.assert_allclose(np.asarray(jac), 200.0 * np.eye(3))
    # primal values are the body's, batched
    np.testing.assert_allclose(np.asarray(xjax.vmap(f)(xs, ys)), np.sin(np.arange(3.0)) * ys,
                               rtol=1e-6)
    nested = xjax.grad(lambda m: jnp.sum(xjax.vmap(xjax.vmap(f, (0, None)), (0, None))(m, 3.0)))
    np.testing.assert_allclose(np.asarray(nested(jnp.ones((2, 2)))), np.full((2, 2), 300.0))


def test_custom_gradient():
    """xjax.custom_gradient: the rule's cotangents are used (here deliberately not the true
    derivative), through jit, vmap and nesting; the primal value is unchanged."""
    @xjax.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)

    assert float(f(3.0)) == 9.0 and float(grad(f)(3.0)) == 3.0
    np.testing.assert_allclose(
        np.asarray(jit(grad(lambda x: jnp.sum(xjax.vmap(f)(x))))(jnp.arange(3.0))),
        [0.0, 1.0, 2.0])
    assert float(grad(lambda x: f(f(x)))(2.0)) == 8.0  # rule(f(2)=4) * rule(2) = 4 * 2

    @xjax.custom_gradient
    def clipped(x, y):
        return x * y, lambda g: (jnp.clip(g * y, -1.0, 1.0), g * x * 10.0)

    gx, gy = grad(clipped, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (1.0, 20.0)

    @xjax.custom_gradient
    def single(x):
        return jnp.sin(x), lambda ct: ct * 7.0  # one argument: a bare cotangent is accepted

    assert float(grad(single)(1.0)) == 7.0


def test_forward_mode_of_custom_vjp_raises_type_error_everywhere():
    # JAX's TypeError whether the tangent would be computed eagerly, compiled or batched
    @xjax.custom_vjp
    def f(x):
        return x * 2.0
    f.defvjp(lambda x: (f(x), None), lambda r, g: (2 * g,))
    message = "can't apply forward-mode autodiff"
    for attempt in (lambda: xjax.jvp(f, (1.0,), (1.0,)),
                    lambda: xjax.jvp(xjax.jit(f), (1.0,), (1.0,)),
                    lambda: xjax.jit(lambda x: xjax.jvp(f, (x,), (1.0,)))(1.0),
                    lambda: xjax.jacfwd(f)(1.0),
                    lambda: xjax.vmap(lambda x: xjax.jvp(f, (x,), (x,)))(jnp.ones(2))):
        with pytest.raises(TypeError, match=message):
            attempt()
    # reverse mode, batched or not, still runs the user's bwd
    assert float(xjax.grad(f)(1.0)) == 2.0
    np.testing.assert_array_equal(xjax.vmap(xjax.grad(f))(jnp.ones(3)), [2.0, 2.0, 2.0])
