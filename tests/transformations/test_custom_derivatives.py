"""custom_jvp, custom_vjp, checkpoint and linear_transpose."""

import functools

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit
from xjax.core import Tracer
from xjax.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)


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


def test_checkpoint_traces_its_arguments_even_eagerly():
    # As JAX (Flax's nn.remat with static_argnums=() relies on it): a Python bool argument
    # becomes a tracer unless it is static.
    seen = []

    def f(x, train):
        seen.append(train)
        return x * 2.0

    assert float(xjax.checkpoint(f)(1.5, True)) == 3.0
    assert float(xjax.checkpoint(f, static_argnums=(1,))(1.5, True)) == 3.0
    assert isinstance(seen[0], Tracer) and seen[0].dtype == np.bool_
    assert seen[1] is True


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
        _, y = res
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


# -- symbolic zeros (``defjvp``/``defvjp(..., symbolic_zeros=True)``) --
#
# The expected "what the rule receives" records below are JAX 0.10.2's, observed with the
# same functions.

def _kind(t):
    """What a rule received: 'SZ' + shape, 'P(kind,perturbed)', 'tracer', 'value' or None."""
    if type(t) is SymbolicZero:
        return f"SZ{t.shape}"
    if type(t) is CustomVJPPrimal:
        return f"P({_kind(t.value)},{t.perturbed})"
    if t is None:
        return None
    return "tracer" if isinstance(t, Tracer) else "value"


def _fd(f, x, eps=1e-3):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def test_symbolic_zero_object():
    z = SymbolicZero(xjax.typeof(jnp.ones((2, 3))))
    assert repr(z) == "SymbolicZero" and str(z) == "SymbolicZero"
    assert (z.shape, z.dtype, z.ndim, z.size, z.weak_type) == ((2, 3), np.float32, 2, 6, False)
    assert z.aval == xjax.typeof(jnp.ones((2, 3)))
    with pytest.raises(AttributeError, match="instantiate"):
        z.instantiate()  # as in JAX: attributes come from the aval, which has none such
    with pytest.raises(TypeError):
        z + 1
    # a pytree leaf (not a registered node), compared by identity
    assert xjax.tree_util.tree_leaves([z, 1.0]) == [z, 1.0]
    assert SymbolicZero(z.aval) != z
    # the zero tangent of a primal: float0 for integers
    assert SymbolicZero.from_primal_value(jnp.ones(2)).aval == xjax.typeof(jnp.ones(2))
    assert SymbolicZero.from_primal_value(1.0).aval.weak_type
    assert SymbolicZero.from_primal_value(3).dtype == xjax.dtypes.float0


def test_zero_from_primal():
    zeros = zero_from_primal({"a": jnp.ones(2), "b": 3})
    np.testing.assert_array_equal(zeros["a"], [0.0, 0.0])
    assert zeros["b"].dtype == xjax.dtypes.float0
    sz = zero_from_primal((1.0, jnp.ones((2, 2))), symbolic_zeros=True)
    assert [type(z) for z in sz] == [SymbolicZero, SymbolicZero]
    assert sz[1].shape == (2, 2)


def test_custom_vjp_primal_and_tree_values():
    p = CustomVJPPrimal(1.0, True)
    assert (p.value, p.perturbed) == (1.0, True)
    assert repr(p) == "CustomVJPPrimal(value=1.0, perturbed=True)"
    assert p == CustomVJPPrimal(1.0, True)
    with pytest.raises(TypeError, match="unhashable"):
        hash(p)
    with pytest.raises(AttributeError):
        p.other = 1  # slots
    assert xjax.tree_util.tree_leaves([p]) == [p]
    tree = {"x": CustomVJPPrimal(1.0, True), "y": (CustomVJPPrimal(2, False),)}
    assert custom_vjp_primal_tree_values(tree) == {"x": 1.0, "y": (2,)}
    with pytest.raises(TypeError, match="unexpected leaf type <class 'float'>"):
        custom_vjp_primal_tree_values([1.0])


def _logged_custom_jvp(log):
    """f(x, y) = sin(x) * y whose rule (symbolic zeros) adds only the nonzero parts."""
    @xjax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        log.append((_kind(tx), _kind(ty)))
        out = f(x, y)
        t = jnp.zeros_like(out)
        if type(tx) is not SymbolicZero:
            t = t + jnp.cos(x) * tx * y
        if type(ty) is not SymbolicZero:
            t = t + jnp.sin(x) * ty
        return out, t

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


_JVP_CASES = {
    # name: (call, expected value as a function of numpy, what the rule receives)
    "jvp both": (lambda f: xjax.jvp(f, (0.5, 2.0), (1.0, 1.0))[1],
                 np.cos(0.5) * 2 + np.sin(0.5), ("value", "value")),
    "jvp x": (lambda f: xjax.jvp(lambda a: f(a, 2.0), (0.5,), (1.0,))[1],
              np.cos(0.5) * 2, ("value", "SZ()")),
    "grad x": (lambda f: grad(f)(0.5, 2.0), np.cos(0.5) * 2, ("tracer", "SZ()")),
    "grad y": (lambda f: grad(f, 1)(0.5, 2.0), np.sin(0.5), ("SZ()", "tracer")),
    "grad both": (lambda f: sum(grad(f, (0, 1))(0.5, 2.0)), np.cos(0.5) * 2 + np.sin(0.5),
                  ("tracer", "tracer")),
    "grad jit": (lambda f: grad(jit(f))(0.5, 2.0), np.cos(0.5) * 2, ("tracer", "SZ()")),
    "jit grad": (lambda f: jit(grad(f))(0.5, 2.0), np.cos(0.5) * 2, ("tracer", "SZ()")),
    "linearize": (lambda f: xjax.linearize(lambda a: f(a, 2.0), 0.5)[1](1.0),
                  np.cos(0.5) * 2, ("tracer", "SZ()")),
    "jacfwd": (lambda f: xjax.jacfwd(f)(0.5, 2.0), np.cos(0.5) * 2, ("tracer", "SZ()")),
    "vmap grad": (lambda f: xjax.vmap(grad(f))(jnp.arange(3.0), jnp.ones(3)),
                  np.cos(np.arange(3.0)), ("tracer", "SZ()")),
    "grad vmap": (lambda f: grad(lambda a: jnp.sum(xjax.vmap(f, (0, None))(a, 2.0)))(
        jnp.arange(3.0)), 2 * np.cos(np.arange(3.0)), ("tracer", "SZ()")),
    "jit grad vmap": (lambda f: jit(grad(lambda a: jnp.sum(xjax.vmap(f)(a, jnp.ones(3)))))(
        jnp.arange(3.0)), np.cos(np.arange(3.0)), ("tracer", "SZ()")),
    "hessian": (lambda f: xjax.hessian(f)(0.5, 2.0), -np.sin(0.5) * 2, ("tracer", "SZ()")),
}


@pytest.mark.parametrize("case", list(_JVP_CASES))
def test_custom_jvp_symbolic_zeros_what_the_rule_gets(case):
    call, expected, received = _JVP_CASES[case]
    log = []
    np.testing.assert_allclose(np.asarray(call(_logged_custom_jvp(log))), expected,
                               rtol=1e-5)
    assert log and set(log) == {received}


def test_custom_jvp_symbolic_zeros_agrees_with_finite_differences():
    f = _logged_custom_jvp([])
    np.testing.assert_allclose(grad(f)(0.7, 1.5), _fd(lambda a: f(a, 1.5), 0.7), rtol=1e-2)
    np.testing.assert_allclose(grad(f, 1)(0.7, 1.5), _fd(lambda b: f(0.7, b), 1.5), rtol=1e-2)


def test_custom_jvp_symbolic_zeros_integer_argument_and_pytrees():
    log = []

    @xjax.custom_jvp
    def f(d, n):
        return d["a"] * d["b"] * n

    def f_jvp(primals, tangents):
        (d, n), (td, tn) = primals, tangents
        log.append(({k: _kind(v) for k, v in td.items()}, _kind(tn), tn.dtype))
        ta = 0.0 if type(td["a"]) is SymbolicZero else td["a"] * d["b"] * n
        tb = 0.0 if type(td["b"]) is SymbolicZero else d["a"] * td["b"] * n
        return f(d, n), ta + tb

    f.defjvp(f_jvp, symbolic_zeros=True)
    assert float(grad(lambda a: f({"a": a, "b": 2.0}, 3))(1.0)) == 6.0
    assert log == [({"a": "tracer", "b": "SZ()"}, "SZ()", xjax.dtypes.float0)]
    # all tangents zero: the rule is not called
    log.clear()
    assert float(xjax.jvp(lambda b: f({"a": 1.0, "b": b}, 3), (2.0,), (0.0,))[1]) == 0.0
    assert log[0][0] == {"a": "SZ()", "b": "value"}


def test_custom_jvp_without_symbolic_zeros_gets_zero_arrays():
    log, received = [], []

    @xjax.custom_jvp
    def f(x, n):
        return x * n

    def f_jvp(primals, tangents):
        log.append(tuple((_kind(t), getattr(t, "dtype", None)) for t in tangents))
        received.append(tangents)
        return f(*primals), tangents[0] * primals[1]

    f.defjvp(f_jvp)
    assert float(grad(f)(1.0, 3)) == 3.0
    assert log == [(("tracer", np.float32), ("value", xjax.dtypes.float0))]
    log.clear()
    xjax.jvp(lambda a: f(a, 3.0), (1.0,), (1.0,))
    assert [kind for kind, _ in log[0]] == ["value", "value"]
    assert float(received[-1][1]) == 0.0  # zeros, not a SymbolicZero


def _zero_second_output():
    """h(x) = (sin x, cos x) whose rule declares the second output's tangent a symbolic
    zero (deliberately not the true derivative)."""
    @xjax.custom_jvp
    def h(x):
        return jnp.sin(x), jnp.cos(x)

    def h_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return h(x), (jnp.cos(x) * t, SymbolicZero(xjax.typeof(x).to_tangent_aval()))

    h.defjvp(h_jvp, symbolic_zeros=True)
    return h


def test_custom_jvp_rule_may_return_symbolic_zeros():
    h = _zero_second_output()
    _, (t0, t1) = xjax.jvp(h, (0.5,), (1.0,))
    np.testing.assert_allclose([t0, t1], [np.cos(0.5), 0.0], rtol=1e-6)
    assert float(grad(lambda a: h(a)[1])(0.5)) == 0.0
    np.testing.assert_allclose(grad(lambda a: h(a)[0] + h(a)[1])(0.5), np.cos(0.5), rtol=1e-6)
    assert float(jit(grad(lambda a: h(a)[1]))(0.5)) == 0.0
    assert float(grad(lambda a: jit(h)(a)[1])(0.5)) == 0.0
    xs = jnp.arange(3.0)
    _, (t0, t1) = xjax.vmap(lambda a: xjax.jvp(h, (a,), (1.0,)))(xs)
    np.testing.assert_allclose(t0, np.cos(np.arange(3.0)), rtol=1e-6)
    np.testing.assert_array_equal(t1, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad(lambda a: jnp.sum(xjax.vmap(h)(a)[1]))(xs), [0, 0, 0])
    np.testing.assert_allclose(grad(lambda a: jnp.sum(xjax.vmap(h)(a)[0]))(xs),
                               np.cos(np.arange(3.0)), rtol=1e-6)


def test_custom_jvp_symbolic_zero_of_the_wrong_type_is_jaxs_error():
    @xjax.custom_jvp
    def h(x):
        return jnp.sin(x)

    h.defjvp(lambda p, t: (h(p[0]), SymbolicZero(xjax.typeof(jnp.ones(3)))),
             symbolic_zeros=True)
    with pytest.raises(TypeError, match=r"Expected float32\[\] \(tangent type of "
                                        r"float32\[\]\) but got float32\[3\]"):
        xjax.jvp(h, (0.5,), (1.0,))


def _logged_custom_vjp(log):
    """f(x, y) = (sin(x) * y, cos(x)), its rule with symbolic zeros."""
    @xjax.custom_vjp
    def f(x, y):
        return jnp.sin(x) * y, jnp.cos(x)

    def fwd(x, y):
        log.append(("fwd", _kind(x), _kind(y)))
        return f(x.value, y.value), (x.value, y.value, x.perturbed)

    def bwd(res, g):
        x, y, x_perturbed = res
        g0, g1 = g
        log.append(("bwd", _kind(g0), _kind(g1), type(x_perturbed).__name__))
        gx = jnp.zeros_like(x)
        if type(g0) is not SymbolicZero:
            gx = gx + jnp.cos(x) * y * g0
        if type(g1) is not SymbolicZero:
            gx = gx - jnp.sin(x) * g1
        gy = None if type(g0) is SymbolicZero else jnp.sin(x) * g0
        return gx, gy

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


_X, _XS, _YS = 0.5, np.arange(3.0), np.array([1.0, 2.0, 3.0])
_VJP_CASES = {
    "x out0": (lambda f: grad(lambda a, b: f(a, b)[0])(_X, 2.0), np.cos(_X) * 2,
               {("fwd", "P(value,True)", "P(value,False)"),
                ("bwd", "value", "SZ()", "bool")}),
    "y out0": (lambda f: grad(lambda a, b: f(a, b)[0], 1)(_X, 2.0), np.sin(_X),
               {("fwd", "P(value,False)", "P(value,True)"),
                ("bwd", "value", "SZ()", "bool")}),
    "x out1": (lambda f: grad(lambda a, b: f(a, b)[1])(_X, 2.0), -np.sin(_X),
               {("fwd", "P(value,True)", "P(value,False)"),
                ("bwd", "SZ()", "value", "bool")}),
    "y out1": (lambda f: grad(lambda a, b: f(a, b)[1], 1)(_X, 2.0), 0.0,
               {("fwd", "P(value,False)", "P(value,True)"),
                ("bwd", "SZ()", "value", "bool")}),
    "both outputs": (lambda f: grad(lambda a: f(a, 2.0)[0] * f(a, 3.0)[1])(_X),
                     np.cos(_X) * 2 * np.cos(_X) - np.sin(_X) * 2 * np.sin(_X),
                     {("fwd", "P(value,True)", "P(value,False)"),
                      ("bwd", "SZ()", "value", "bool"), ("bwd", "value", "SZ()", "bool")}),
    "vjp with cotangents": (lambda f: xjax.vjp(lambda a: f(a, 2.0), _X)[1]((1.0, 0.0))[0],
                            np.cos(_X) * 2, {("fwd", "P(value,True)", "P(value,False)"),
                                             ("bwd", "value", "value", "bool")}),
    "grad jit": (lambda f: grad(lambda a: jit(f)(a, 2.0)[0])(_X), np.cos(_X) * 2,
                 {("fwd", "P(tracer,True)", "P(tracer,False)"),
                  ("bwd", "tracer", "SZ()", "bool")}),
    "vmap grad": (lambda f: xjax.vmap(grad(lambda a, b: f(a, b)[1], 1))(_XS, _YS),
                  np.zeros(3), {("fwd", "P(tracer,False)", "P(tracer,True)"),
                                ("bwd", "SZ()", "value", "bool")}),
    "grad vmap": (lambda f: grad(lambda a: jnp.sum(xjax.vmap(f)(a, jnp.full(3, 2.0))[0]))(_XS),
                  2 * np.cos(_XS), {("fwd", "P(tracer,True)", "P(tracer,False)"),
                                    ("bwd", "tracer", "SZ()", "bool")}),
    "grad vmap y": (lambda f: grad(lambda b: jnp.sum(xjax.vmap(f)(_XS, b)[0]))(_YS),
                    np.sin(_XS), {("fwd", "P(tracer,False)", "P(tracer,True)"),
                                  ("bwd", "tracer", "SZ()", "bool")}),
    "jit grad vmap": (lambda f: jit(grad(lambda a, b: jnp.sum(xjax.vmap(f)(a, b)[0])))(
        _XS, _YS), np.cos(_XS) * _YS, {("fwd", "P(tracer,True)", "P(tracer,False)"),
                                       ("bwd", "tracer", "SZ()", "bool")}),
    "scan": (lambda f: grad(lambda a: xjax.lax.scan(lambda c, y: (f(c, y)[0], None), a,
                                                     jnp.asarray(_YS))[0])(_X),
             None, {("fwd", "P(tracer,True)", "P(tracer,False)"),
                    ("bwd", "tracer", "SZ()", "bool")}),
    "checkpoint": (lambda f: grad(xjax.checkpoint(lambda a, b: f(a, b)[0]))(_X, 2.0),
                   np.cos(_X) * 2, {("fwd", "P(tracer,True)", "P(tracer,False)"),
                                    ("bwd", "tracer", "SZ()", "bool")}),
}


@pytest.mark.parametrize("case", list(_VJP_CASES))
def test_custom_vjp_symbolic_zeros_what_the_rules_get(case):
    call, expected, received = _VJP_CASES[case]
    log = []
    got = np.asarray(call(_logged_custom_vjp(log)))
    if expected is not None:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    assert set(log) == received


def test_custom_vjp_symbolic_zeros_scan_agrees_with_finite_differences():
    f = _logged_custom_vjp([])

    def loop(a):
        return xjax.lax.scan(lambda c, y: (f(c, y)[0], None), a, jnp.asarray(_YS))[0]

    np.testing.assert_allclose(grad(loop)(_X), _fd(loop, _X), rtol=1e-2)
    ys = jnp.asarray(_YS)

    def loop_ys(b):
        return xjax.lax.scan(lambda c, y: (f(c, y)[0], None), _X, b)[0]

    fd = [_fd(lambda e, i=i: loop_ys(ys.at[i].add(e)), 0.0) for i in range(3)]
    np.testing.assert_allclose(grad(loop_ys)(ys), fd, rtol=1e-2)


def test_custom_vjp_symbolic_zeros_jit_grad_stages_the_rules():
    log = []
    f = _logged_custom_vjp(log)
    np.testing.assert_allclose(jit(grad(lambda a: f(a, 2.0)[0]))(_X), np.cos(_X) * 2,
                               rtol=1e-6)
    assert log[0] == ("fwd", "P(tracer,True)", "P(value,False)")
    assert log[1][2:] == ("SZ()", "bool")


def test_custom_vjp_symbolic_zeros_integer_pytree_and_nondiff_arguments():
    log = []

    @functools.partial(xjax.custom_vjp, nondiff_argnums=(0,))
    def f(fn, d, n):
        return fn(d["a"]) * d["b"] * n

    def fwd(fn, d, n):
        log.append((fn is jnp.sin, {k: _kind(v) for k, v in d.items()}, _kind(n)))
        d = custom_vjp_primal_tree_values(d)
        return f(fn, d, n.value), (d, n.value)

    def bwd(fn, res, g):
        d, n = res
        return {"a": jnp.cos(d["a"]) * d["b"] * n * g, "b": None}, None

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    assert float(grad(lambda a: f(jnp.sin, {"a": a, "b": 2.0}, 3))(0.0)) == 6.0
    assert log == [(True, {"a": "P(value,True)", "b": "P(value,False)"}, "P(value,False)")]
    gd = grad(lambda d: f(jnp.sin, d, 3))({"a": 0.0, "b": 2.0})
    assert (float(gd["a"]), float(gd["b"])) == (6.0, 0.0)


def test_custom_vjp_bwd_may_return_symbolic_zeros_and_lists():
    @xjax.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x.value, y.value), y.value),
             lambda y, g: [g * y, SymbolicZero(xjax.typeof(y))], symbolic_zeros=True)
    assert grad(f, (0, 1))(2.0, 3.0) == (3.0, 0.0)
    # also without symbolic zeros
    f.defvjp(lambda x, y: (f(x, y), y), lambda y, g: (g * y, SymbolicZero(xjax.typeof(y))))
    assert grad(f, (0, 1))(2.0, 3.0) == (3.0, 0.0)
    # a symbolic zero of the wrong type is JAX's error
    f.defvjp(lambda x, y: (f(x, y), y), lambda y, g: (g * y, SymbolicZero(xjax.typeof(
        jnp.ones(3)))))
    with pytest.raises(ValueError, match=r"at output\[1\] the SymbolicZero had shape/dtype "
                                         r"float32\[3\] while the corresponding input had "
                                         r"shape/dtype float32\[\]"):
        grad(f, (0, 1))(2.0, 3.0)
    f.defvjp(lambda x, y: (f(x, y), y), lambda y, g: (g * jnp.ones(2), None))
    with pytest.raises(ValueError, match=r"at output\[0\] the bwd rule produced an output "
                                         r"of type float32\[2\]"):
        grad(f)(2.0, 3.0)


def test_custom_vjp_without_symbolic_zeros_gets_values_and_zero_arrays():
    log = []

    @xjax.custom_vjp
    def f(x):
        return jnp.sin(x), jnp.cos(x)

    def fwd(x):
        log.append(_kind(x))
        return f(x), x

    def bwd(x, g):
        log.append(tuple(_kind(c) for c in g))
        log.append(float(g[1]))
        return (jnp.cos(x) * g[0] - jnp.sin(x) * g[1],)

    f.defvjp(fwd, bwd)
    np.testing.assert_allclose(grad(lambda a: f(a)[0])(_X), np.cos(_X), rtol=1e-6)
    assert log == ["value", ("value", "value"), 0.0]


def test_custom_vjp_optimize_remat_with_symbolic_zeros_is_not_implemented():
    f = xjax.custom_vjp(lambda x: x)
    with pytest.raises(NotImplementedError, match="does not support symbolic zeros"):
        f.defvjp(lambda x: (x, None), lambda r, g: (g,), symbolic_zeros=True,
                 optimize_remat=True)
    f.defvjp(lambda x: (x, None), lambda r, g: (2 * g,), optimize_remat=True)
    assert float(grad(f)(1.0)) == 2.0


def test_custom_vjp_python_residuals_stay_python_values():
    """Python scalars among the residuals reach bwd unchanged (not as arrays), under jit
    and vmap too, as in JAX (Equinox keeps ``perturbed`` flags there)."""
    seen = []

    @xjax.custom_vjp
    def f(x):
        return jnp.sin(x)

    def bwd(res, g):
        x, flag, scale = res
        seen.append((type(flag), isinstance(scale, float) and not hasattr(scale, "shape")))
        return (jnp.cos(x) * g * (scale if flag else 0.0),)

    f.defvjp(lambda x: (f(x.value), (x.value, x.perturbed, 2.0)), bwd, symbolic_zeros=True)
    np.testing.assert_allclose(grad(f)(_X), 2 * np.cos(_X), rtol=1e-6)
    np.testing.assert_allclose(jit(grad(f))(_X), 2 * np.cos(_X), rtol=1e-6)
    np.testing.assert_allclose(grad(lambda a: jnp.sum(xjax.vmap(f)(a)))(_XS),
                               2 * np.cos(_XS), rtol=1e-6)
    assert set(seen) == {(bool, True)}


def _custom_programs(lib):
    """A custom_jvp function, one closing over a traced value (a const), and a custom_vjp
    function, as the jaxpr printing tests below trace them."""
    @lib.custom_jvp
    def f(x):
        return lib.numpy.sin(x)

    @f.defjvp
    def my_rule(primals, tangents):
        return f(primals[0]), lib.numpy.cos(primals[0]) * tangents[0]

    def closing(y):
        @lib.custom_jvp
        def h(x):
            return x * y
        h.defjvp(lambda p, t: (h(p[0]), t[0] * y))
        return h(2.0)

    @lib.custom_vjp
    def g(x):
        return lib.numpy.sin(x)

    def g_fwd(x):
        return g(x), lib.numpy.cos(x)

    def g_bwd(r, ct):
        return (r * ct,)

    g.defvjp(g_fwd, g_bwd)
    return f, closing, g


def test_custom_call_equations_print_as_jax():
    """Measured on JAX 0.10.2: the function's name first, the rules by their names,
    ``symbolic_zeros`` always, ``num_consts`` only when there are consts."""
    f, closing, g = _custom_programs(xjax)
    text = str(xjax.make_jaxpr(f)(1.0))
    assert "custom_jvp_call[\n      name=f\n      call_jaxpr=" in text
    assert "jvp=my_rule\n      symbolic_zeros=False\n    ] a" in text
    assert "num_consts" not in text
    text = str(xjax.make_jaxpr(closing)(1.0))
    assert "name=h" in text and "jvp=<lambda>\n      num_consts=1\n" in text
    text = str(xjax.make_jaxpr(g)(1.0))
    assert ("name=g\n      bwd=g_bwd\n      call_jaxpr=" in text
            and "fwd=g_fwd\n      symbolic_zeros=False\n    ] a" in text)
    relu = str(xjax.make_jaxpr(xjax.nn.relu)(1.0))
    assert "name=relu" in relu and "jvp=jvp" in relu


def test_custom_call_jaxprs_match_jax():
    jax = pytest.importorskip("jax")
    for ours, theirs in zip(_custom_programs(xjax), _custom_programs(jax), strict=True):
        assert str(xjax.make_jaxpr(ours)(1.0)) == str(jax.make_jaxpr(theirs)(1.0))
    assert (str(xjax.make_jaxpr(xjax.grad(_custom_programs(xjax)[2]))(1.0))
            == str(jax.make_jaxpr(jax.grad(_custom_programs(jax)[2]))(1.0)))
