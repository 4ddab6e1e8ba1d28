"""Tokens (create_token, after_all), stage, dce_sink, composite and platform_dependent:
values eagerly and under jit, behaviour under grad and vmap, jaxprs, JAX's errors, and
differential checks against JAX where it is installed."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.lax.tokens import Token


# -- tokens --


def test_tokens_eager_and_jit():
    t = lax.create_token()
    assert isinstance(t, Token) and isinstance(lax.create_token(3.0), Token)
    assert isinstance(lax.after_all(t, t), Token) and isinstance(lax.after_all(), Token)
    assert t.block_until_ready() is t
    assert isinstance(xjax.jit(lambda t: lax.after_all(t))(t), Token)
    assert isinstance(xjax.jit(lambda: lax.create_token())(), Token)
    tok, y = xjax.jit(lambda x: (lax.create_token(), x * 2))(1.0)
    assert isinstance(tok, Token) and float(y) == 2.0
    text = str(xjax.make_jaxpr(lambda: lax.after_all(lax.create_token(),
                                                     lax.create_token()))())
    assert "create_token" in text and "after_all a b" in text


def test_tokens_under_grad_and_vmap():
    assert float(xjax.grad(lambda x: (lax.create_token(), x * 5)[1])(1.0)) == 5.0
    out = xjax.vmap(lambda x: (lax.after_all(lax.create_token()), x * 2)[1])(jnp.ones(3))
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])


def test_after_all_rejects_non_tokens():
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(jnp.ones(3))
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(lax.create_token(), np.zeros(0, bool))


# -- stage --


def test_stage_is_the_identity_that_lifts():
    x = jnp.ones(2)
    assert lax.stage(x) is x
    y = lax.stage(3.0)
    assert type(y) is xjax.Array and y.dtype == np.float32 and y.weak_type
    z = lax.stage(np.arange(3))
    assert type(z) is xjax.Array and z.dtype == np.int32
    np.testing.assert_array_equal(z, [0, 1, 2])
    assert str(xjax.make_jaxpr(lambda x: lax.stage(x))(1.0)).count("stage") == 0
    np.testing.assert_array_equal(xjax.jit(lambda: lax.stage(np.ones(3)) + 1)(), [2, 2, 2])
    assert float(xjax.grad(lambda x: lax.stage(x) * 2)(1.0)) == 2.0
    np.testing.assert_array_equal(xjax.vmap(lambda x: lax.stage(x) * 2)(jnp.ones(2)), [2, 2])
    # the primitive itself: linear (transposes to the identity), batches elementwise
    assert float(xjax.grad(lambda x: lax.stage_p.bind(x) * 4)(1.0)) == 4.0
    np.testing.assert_array_equal(xjax.vmap(lax.stage_p.bind)(jnp.arange(3.0)), [0, 1, 2])
    np.testing.assert_array_equal(xjax.jit(lax.stage_p.bind)(jnp.arange(3.0)), [0, 1, 2])


# -- dce_sink --


def test_dce_sink():
    assert lax.dce_sink(1.0) is None
    text = str(xjax.make_jaxpr(lambda x: lax.dce_sink((x, x)))(1.0))
    assert text.count("dce_sink[prevent_mlir_dce=False] a") == 2
    assert float(xjax.jit(lambda x: (lax.dce_sink(x), x + 1)[1])(1.0)) == 2.0
    f = lambda x: (lax.dce_sink(x, prevent_mlir_dce=True), x + 1)[1]  # noqa: E731
    assert float(xjax.jit(f)(1.0)) == 2.0
    assert float(xjax.grad(lambda x: (lax.dce_sink(x * x), x * 3)[1])(1.0)) == 3.0
    np.testing.assert_array_equal(
        xjax.vmap(lambda x: (lax.dce_sink(x), x * 3)[1])(jnp.ones(2)), [3, 3])
    with pytest.raises(TypeError, match="Error interpreting argument to dce_sink as a JAX "
                                        "value.*position 0"):
        lax.dce_sink("a")


# -- composite --


def _my_tangent(x):
    return lax.composite(lambda x: lax.sin(x) / lax.cos(x), name="my.tangent")(x)


def test_composite_values_and_jaxpr():
    x = np.array([0.0, np.pi / 4, 3 * np.pi / 4, np.pi], np.float32)
    for fun in (_my_tangent, xjax.jit(_my_tangent)):
        np.testing.assert_allclose(fun(x), np.tan(x), rtol=1e-5, atol=1e-6)
    scale = lax.composite(lambda x, *, k=2: x * k, name="my.mul", version=3)
    np.testing.assert_array_equal(scale(jnp.ones(2), k=3), [3, 3])
    text = str(xjax.make_jaxpr(lambda x: scale(x, k=3))(jnp.ones(2)))
    assert "composite[" in text and "name=my.mul" in text and "version=3" in text
    assert "attributes=(('k', (3,), PyTreeDef(*)),)" in text


def test_composite_pytrees_constants_and_array_attributes():
    table = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def decomposition(pair, *, offset):
        a, b = pair
        return {"sum": a + b + table, "shifted": a + offset}

    f = lax.composite(decomposition, name="my.pair")
    a, b = np.ones((2, 3), np.float32), np.full((2, 3), 2.0, np.float32)
    offset = np.array([1.0, 2.0, 3.0], np.float32)
    for fun in (f, xjax.jit(lambda p: f(p, offset=offset))):
        out = fun((a, b), offset=offset) if fun is f else fun((a, b))
        np.testing.assert_array_equal(out["sum"], a + b + table)
        np.testing.assert_array_equal(out["shifted"], a + offset)


def test_composite_has_no_derivative_or_batching_rule():
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        xjax.grad(lambda x: _my_tangent(x).sum())(jnp.ones(2))
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        xjax.jvp(_my_tangent, (jnp.ones(2),), (jnp.ones(2),))
    with pytest.raises(NotImplementedError, match="Batching rule for 'composite'"):
        xjax.vmap(_my_tangent)(jnp.ones((3, 2)))


def test_composite_rejects_traced_attributes():
    f = lax.composite(lambda x, *, k: x * k, name="my.mul")
    with pytest.raises(xjax.errors.UnexpectedTracerError, match="as an attribute"):
        xjax.jit(lambda x, k: f(x, k=k))(jnp.ones(2), 2.0)


# -- platform_dependent --


def test_platform_dependent_picks_the_cpu_branch():
    def fun(y):
        return lax.platform_dependent(y, cpu=lambda x: x * 3, default=lambda x: x - 1)

    assert xjax.default_backend() == "cpu"
    assert float(fun(1.0)) == 3.0
    assert float(xjax.jit(fun)(2.0)) == 6.0
    assert float(xjax.grad(fun)(1.0)) == 3.0
    np.testing.assert_array_equal(xjax.vmap(fun)(jnp.arange(3.0)), [0, 3, 6])
    assert float(lax.platform_dependent(1.0, tpu=lambda x: x, default=lambda x: -x)) == -1.0
    g = lambda x: x * 2  # noqa: E731
    assert float(lax.platform_dependent(2.0, cpu=g, cuda=g)) == 4.0
    # several arguments, pytrees
    out = lax.platform_dependent({"a": 1.0}, 2.0, cpu=lambda d, b: d["a"] + b)
    assert float(out) == 3.0


def test_platform_dependent_errors():
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm' for lax.platform_dependent."):
        lax.platform_dependent(1.0, gpu=lambda x: x)
    with pytest.raises(TypeError, match="the 'cpu' branch must be a callable"):
        lax.platform_dependent(1.0, cpu=3)
    with pytest.raises(TypeError, match="the 'default' branch must be a callable"):
        lax.platform_dependent(1.0, cpu=lambda x: x, default=3)
    with pytest.raises(NotImplementedError, match="not found for platform cpu"):
        xjax.jit(lambda y: lax.platform_dependent(y, tpu=lambda x: x))(1.0)


# -- against JAX --


def test_against_jax():
    jax = pytest.importorskip("jax")
    x = np.array([0.1, 0.5, 1.0], np.float32)
    for lib in (jax, xjax):
        assert float(lib.lax.platform_dependent(2.0, cpu=lambda v: v + 1,
                                                default=lambda v: v)) == 3.0
    np.testing.assert_allclose(
        xjax.jit(_my_tangent)(x),
        jax.jit(lambda v: jax.lax.composite(lambda u: jax.lax.sin(u) / jax.lax.cos(u),
                                            name="my.tangent")(v))(x), rtol=1e-6)
    for value in (3.0, np.arange(3), np.ones(2, np.float32)):
        got, want = lax.stage(value), jax.lax.stage(value)
        assert got.dtype == want.dtype and got.weak_type == want.weak_type
        np.testing.assert_array_equal(got, want)
    assert jax.lax.dce_sink(1.0) is None and lax.dce_sink(1.0) is None
