"""Differentiation: jvp, vjp, grad and friends, composed with each other and with jit,
checked against finite differences and closed forms."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, lax
from xjax.test_util import check_grads


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def _logistic_derivatives(x):
    s = 1 / (1 + np.exp(-x))
    return s * (1 - s), s * (1 - s) * (1 - 2 * s), s * (1 - s) * (1 - 6 * s + 6 * s * s)


def test_seed_grad_of_sum_logistic():
    got = grad(sum_logistic)(jnp.arange(3.0))
    np.testing.assert_allclose(got, [0.25, 0.19661194, 0.10499357], rtol=1e-6)
    eps = 1e-3
    x = np.arange(3.0, dtype=np.float32)
    fd = [(sum_logistic(x + eps * v) - sum_logistic(x - eps * v)) / (2 * eps)
          for v in np.eye(3, dtype=np.float32)]
    np.testing.assert_allclose(got, np.array(fd), atol=1e-3)


def test_seed_triple_composition_with_jit():
    got = grad(jit(grad(jit(grad(sum_logistic)))))(1.0)
    np.testing.assert_allclose(got, -0.0353256, rtol=1e-5)


@pytest.mark.parametrize("compose", ["GGG", "JGGG", "GJGG", "GGJG", "GGGJ", "GJGJG"])
def test_third_derivative_under_every_jit_placement(compose):
    fun = sum_logistic
    for letter in reversed(compose):
        fun = grad(fun) if letter == "G" else jit(fun)
    np.testing.assert_allclose(fun(0.5), _logistic_derivatives(0.5)[2], rtol=1e-4)


def test_seed_grad_takes_the_first_argument():
    f = lambda w, x: w * x  # noqa: E731
    assert grad(f)(13., 42.) == 42.


def test_python_control_flow_is_differentiated_eagerly():
    def loop(x):
        for _ in range(3):
            x = x * x
        return x

    def branch(x):
        if x > 0:
            return jnp.sin(x)
        return x * x

    def recursive(x, n=3):
        return x if n == 0 else recursive(jnp.cos(x), n - 1)

    scale = 2.0

    def closure(x):
        return scale * x ** 3

    np.testing.assert_allclose(grad(loop)(1.5), 8 * 1.5 ** 7, rtol=1e-5)
    np.testing.assert_allclose(grad(branch)(1.0), np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(grad(branch)(-2.0), -4.0, rtol=1e-6)
    x = 0.3
    expected = -np.sin(np.cos(np.cos(x))) * -np.sin(np.cos(x)) * -np.sin(x)
    np.testing.assert_allclose(grad(recursive)(x), expected, rtol=1e-5)
    np.testing.assert_allclose(grad(closure)(2.0), 24.0, rtol=1e-6)


def test_jvp_and_vjp():
    y, t = xjax.jvp(jnp.sin, (1.0,), (2.0,))
    np.testing.assert_allclose([y, t], [np.sin(1.0), 2 * np.cos(1.0)], rtol=1e-6)
    y, f_vjp = xjax.vjp(lambda x, z: x * z, 3.0, 4.0)
    assert f_vjp(1.0) == (4.0, 3.0)


def test_value_and_grad_argnums_has_aux():
    def f(x, y):
        return jnp.sum(x * y), {"aux": x + 1}

    (value, aux), (gx, gy) = xjax.value_and_grad(f, argnums=(0, 1), has_aux=True)(
        jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]))
    assert float(value) == 11.0
    np.testing.assert_array_equal(aux["aux"], [2.0, 3.0])
    np.testing.assert_array_equal(gx, [3.0, 4.0])
    np.testing.assert_array_equal(gy, [1.0, 2.0])


def test_grad_of_pytree_argument():
    params = {"w": jnp.array([1.0, 2.0]), "b": jnp.array(0.5)}
    g = grad(lambda p: jnp.sum(p["w"] * 3.0) + p["b"] ** 2)(params)
    np.testing.assert_allclose(g["w"], [3.0, 3.0])
    np.testing.assert_allclose(g["b"], 1.0)


def test_jacobians_and_hessian():
    def f(x):
        return jnp.array([x[0] ** 2 * x[1], jnp.sin(x[1])])

    x = jnp.array([1.5, 0.5])
    expected = np.array([[2 * 1.5 * 0.5, 1.5 ** 2], [0.0, np.cos(0.5)]])
    np.testing.assert_allclose(xjax.jacfwd(f)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(xjax.jacrev(f)(x), expected, rtol=1e-6)
    h = xjax.hessian(lambda x: x[0] ** 2 * x[1] + jnp.sin(x[1]))(x)
    np.testing.assert_allclose(h, [[2 * 0.5, 2 * 1.5], [2 * 1.5, -np.sin(0.5)]], rtol=1e-6)
    seed_hessian = jit(xjax.jacfwd(xjax.jacrev(sum_logistic)))
    d2 = _logistic_derivatives(np.arange(3.0))[1]
    np.testing.assert_allclose(seed_hessian(jnp.arange(3.0)), np.diag(d2), rtol=1e-5, atol=1e-7)


def test_linearize():
    y, f_jvp = xjax.linearize(jnp.sin, 1.0)
    np.testing.assert_allclose(f_jvp(2.0), 2 * np.cos(1.0), rtol=1e-6)


def test_stop_gradient():
    assert float(grad(lambda x: x * lax.stop_gradient(x))(3.0)) == 3.0


def test_check_grads_through_jit():
    check_grads(jit(lambda x: jnp.sum(jnp.tanh(x) * x)), (jnp.array([0.3, -0.7]),), order=2)


def test_errors():
    with pytest.raises(TypeError, match="but got int32. If you want to use Boolean- or "
                                        "integer-valued inputs, use vjp or set allow_int"):
        grad(lambda x: x * 2.0)(3)  # JAX 0.10.2's message names no argument
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. "
                                        r"Output had shape: \(2,\)"):
        grad(lambda x: x * 2.0)(jnp.ones(2))
    g = grad(lambda x, n: x * n, allow_int=True, argnums=(0, 1))(2.0, 3)
    assert g[1].dtype == xjax.dtypes.float0
    _, f_vjp = xjax.vjp(lambda x: (x, x), 1.0)
    with pytest.raises(TypeError, match="Tree structure of cotangent"):
        f_vjp(1.0)


def test_jvp_aux_keeps_non_array_leaves_as_they_are():
    """As JAX: Python numbers, strings and NumPy arrays in aux come back unchanged; traced
    leaves come back as their primal values (a primal given as a Python float stays one,
    an Array primal stays an Array)."""
    f = lambda x: (x * 2, {"n": 3, "s": "hi", "np": np.ones(2), "a": x, "b": x * 3})
    _, _, aux = xjax.jvp(f, (1.0,), (1.0,), has_aux=True)
    assert aux["n"] == 3 and type(aux["n"]) is int
    assert aux["s"] == "hi"
    assert type(aux["np"]) is np.ndarray
    assert type(aux["a"]) is float and aux["a"] == 1.0
    assert type(aux["b"]) is xjax.Array and float(aux["b"]) == 3.0
    _, _, aux = xjax.jvp(f, (jnp.float32(1.0),), (jnp.float32(1.0),), has_aux=True)
    assert type(aux["a"]) is xjax.Array


def test_jacobian_functions_wrap_the_function_they_differentiate():
    # Equinox follows __wrapped__ to warn about transformed callables stored on modules.
    def f(x):
        return x ** 2

    assert xjax.jacfwd(f).__wrapped__ is f and xjax.jacrev(f).__wrapped__ is f
    assert xjax.hessian(f).__wrapped__.__wrapped__ is f
    assert xjax.jacfwd(f).__name__ == "f"


def test_linear_transpose_takes_avals_and_shape_dtype_structs():
    # Equinox passes ShapedArrays; JAX accepts anything with a shape and dtype.
    for primal in (xjax.core.ShapedArray((2,), np.float32),
                   xjax.ShapeDtypeStruct((2,), np.float32), np.zeros(2, np.float32)):
        (ct,) = xjax.linear_transpose(lambda x: 3.0 * x, primal)(np.ones(2, np.float32))
        np.testing.assert_array_equal(ct, [3.0, 3.0])


def _inner_jaxprs(closed):
    """The jaxprs of the jit equations of ``closed``'s top level, in order."""
    return [eqn.params["jaxpr"].jaxpr for eqn in closed.jaxpr.eqns
            if eqn.primitive.name == "jit"]


def test_grad_through_jit_keeps_no_residual_only_dead_tangents_read():
    """log_softmax stops the gradient of its shift by the maximum, so the maximum's tangent
    (where the maximum sits, and how often) is dead: the forward jit neither computes nor
    saves it, as JAX's, and the gradient is unchanged (checked against finite differences)."""
    x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))

    def loss(v):
        return -xjax.nn.log_softmax(v)[:, 0].sum()

    forward, backward = _inner_jaxprs(xjax.make_jaxpr(grad(loss))(x))
    assert [e.primitive.name for e in forward.eqns] == [
        "reduce_max", "max", "broadcast_in_dim", "stop_gradient", "sub", "exp", "reduce_sum",
        "broadcast_in_dim", "log", "sub"]
    assert len(forward.outvars) == 3 and len(backward.invars) == 3  # 2 residuals + ct
    check_grads(loss, (x,), order=1, modes=["rev"])


def test_grad_of_jit_with_a_stopped_branch_saves_only_what_the_backward_pass_reads():
    x = jnp.linspace(0.1, 1.0, 6).reshape(2, 3)

    def g(v):
        y = jnp.sin(v)
        return jnp.sum(y * lax.stop_gradient(jnp.cos(y) * 2))

    (inner,) = _inner_jaxprs(xjax.make_jaxpr(grad(jit(g)))(x))[:1]
    residuals = inner.outvars[1:]
    assert len(residuals) == 2  # cos(v) for sin's derivative, and the stopped factor
    got = grad(jit(g))(x)
    y = np.sin(np.asarray(x, np.float64))
    np.testing.assert_allclose(got, np.cos(np.asarray(x)) * np.cos(y) * 2, rtol=1e-6)


def test_derivative_jaxprs_match_jax_where_a_tangent_dies():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)

    def program(lib):
        return lambda v: -lib.nn.log_softmax(v)[:, 0].sum()

    ours = _inner_jaxprs(xjax.make_jaxpr(grad(program(xjax)))(x))
    theirs = [eqn.params["jaxpr"].jaxpr for eqn in
              jax.make_jaxpr(jax.grad(program(jax)))(x).jaxpr.eqns
              if eqn.primitive.name == "jit"]
    assert str(ours[0]) == str(theirs[0])
    assert [len(j.invars) for j in ours] == [len(j.invars) for j in theirs]


def test_jacobians_of_integer_outputs_as_jax():
    """Measured on JAX 0.10.2: jacfwd gives an integer output's block as zeros of its dtype;
    jacrev refuses integer outputs (and honours allow_int for integer inputs)."""
    x = np.array([0.1, 0.5, 0.2], np.float32)
    block = xjax.jacfwd(lambda v: jnp.argmax(v))(x)
    assert block.dtype == np.int32 and block.shape == (3,) and not np.asarray(block).any()
    both = xjax.jacfwd(lambda v: (jnp.argmax(v), v * 2))(x)
    np.testing.assert_array_equal(np.asarray(both[1]), 2 * np.eye(3))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs .* but got "
                                        "int32. For differentiation of functions with "
                                        "integer outputs, use jax.vjp directly."):
        xjax.jacrev(lambda v: jnp.argmax(v))(x)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs .* but got int32"):
        xjax.jacrev(lambda v: v * 2, allow_int=True)(np.arange(3))
    zeros = xjax.jacrev(lambda v: v * 2.0, allow_int=True)(np.arange(3))
    assert zeros.dtype == np.int32 and zeros.shape == (3, 3) and not np.asarray(zeros).any()
    with pytest.raises(TypeError, match="jacrev with output element type key<fry>"):
        xjax.jacrev(lambda v: xjax.random.split(xjax.random.key(0)))(1.0)


_ERROR_CASES = [("jacfwd", {}, lambda: np.ones(2, np.complex64)),
                ("jacfwd", {}, lambda: np.arange(2)), ("jacrev", {}, lambda: np.arange(2)),
                ("grad", {}, lambda: 1), ("value_and_grad", {}, lambda: np.int8(3)),
                ("grad", {}, lambda: True), ("jacfwd", {"holomorphic": True},
                                             lambda: np.ones(2, np.float32)),
                ("jacrev", {"holomorphic": True}, lambda: np.ones(2, np.float32)),
                ("grad", {"holomorphic": True}, lambda: 1.0),
                ("jacrev", {}, lambda: np.ones(2, np.complex64))]


def test_differentiation_input_errors_match_jax():
    jax = pytest.importorskip("jax")

    def message(lib, api, kwargs, make_arg, key=False):
        arg = lib.random.key(0) if key else make_arg()
        scalar = api in ("grad", "value_and_grad")
        try:
            getattr(lib, api)(lambda v: (v * 1).sum() if scalar else v * 1, **kwargs)(arg)
        except TypeError as e:
            return str(e)
        return "ok"

    for api, kwargs, make_arg in _ERROR_CASES:
        assert message(xjax, api, kwargs, make_arg) == message(jax, api, kwargs, make_arg), api
    for api in ("jacfwd", "jacrev", "grad"):  # a key's dtype, not its data's
        assert message(xjax, api, {}, None, key=True) == message(jax, api, {}, None, key=True)
