"""lax.cond and lax.switch: values against Python, eager and jitted; JAX's errors; jaxprs
and lowering; derivatives to second order; vmap with unbatched and batched predicates."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, lax, vmap
from xjax._src.testing.check_grads import check_grads


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _branches(p, x, y):
    return lax.cond(p, lambda a, b: {"s": a + b, "p": (a * b, a)},
                    lambda a, b: {"s": a - b, "p": (a / 2, b)}, x, y)


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("pred", [True, False])
def test_cond_pytrees_against_python(pred, jitted):
    x, y = _f32(3), _f32(3, seed=1)
    f = jit(_branches) if jitted else _branches
    got = f(pred, x, y)
    if pred:
        want = {"s": x + y, "p": (x * y, x)}
    else:
        want = {"s": x - y, "p": (x / 2, y)}
    np.testing.assert_allclose(got["s"], want["s"], rtol=1e-6)
    np.testing.assert_allclose(got["p"][0], want["p"][0], rtol=1e-6)
    np.testing.assert_allclose(got["p"][1], want["p"][1], rtol=1e-6)


@pytest.mark.parametrize("jitted", [False, True])
def test_cond_numeric_predicates_and_no_operands(jitted):
    def f(p):
        return lax.cond(p, lambda: jnp.float32(1.0), lambda: jnp.float32(2.0))

    f = jit(f) if jitted else f
    assert float(f(1.5)) == 1.0
    assert float(f(0)) == 2.0
    assert float(f(jnp.int32(-3))) == 1.0
    assert float(f(jnp.array(False))) == 2.0


def test_cond_closes_over_arrays_and_tracers():
    table = jnp.arange(4.0)

    @jit
    def f(p, x):
        scale = x * 2.0  # a tracer of the jit, captured by both branches
        return lax.cond(p, lambda: table * scale, lambda: table + scale)

    np.testing.assert_allclose(f(True, 3.0), np.arange(4.0) * 6.0)
    np.testing.assert_allclose(f(False, 3.0), np.arange(4.0) + 6.0)


def test_cond_old_calling_convention():
    out = lax.cond(True, 2.0, lambda x: x + 1.0, 5.0, lambda x: x - 1.0)
    assert float(out) == 3.0
    out = lax.cond(False, 2.0, lambda x: x + 1.0, 5.0, lambda x: x - 1.0)
    assert float(out) == 4.0


def test_cond_operand_keyword():
    assert float(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand=1.0)) == 2.0
    with pytest.raises(TypeError, match="if 'operand' keyword is passed"):
        lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=2.0)


def test_cond_result_weak_type_follows_false_branch():
    strong = lax.cond(True, lambda: 1.0, lambda: jnp.float32(2.0))
    weak = lax.cond(True, lambda: jnp.float32(2.0), lambda: 1.0)
    assert strong.dtype == np.float32 and not strong.weak_type
    assert weak.weak_type


@pytest.mark.parametrize("jitted", [False, True])
def test_switch_clamps_the_index(jitted):
    branches = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x]

    def f(i, x):
        return lax.switch(i, branches, x)

    f = jit(f) if jitted else f
    for i, want in [(-5, 4.0), (0, 4.0), (1, 6.0), (2, -3.0), (7, -3.0)]:
        assert float(f(i, 3.0)) == want, i


def test_switch_with_one_branch_calls_it():
    jaxpr = xjax.make_jaxpr(lambda i: lax.switch(i, [lambda x: x + 1.0], 1.0))(0)
    assert "cond" not in str(jaxpr)


def test_jaxpr_structure_and_forwarded_outputs():
    jaxpr = xjax.make_jaxpr(
        lambda p, x: lax.cond(p, lambda x: (x, x + 1.0), lambda x: (x, x * 2.0), x))(True, 1.0)
    eqns = jaxpr.eqns
    assert [e.primitive.name for e in eqns] == ["convert_element_type", "cond"]
    cond_eqn = eqns[1]
    # the output both branches forward from their input is not an output of the cond
    assert len(cond_eqn.outvars) == 1
    assert jaxpr.jaxpr.outvars[0] is jaxpr.jaxpr.invars[1]
    false_branch, true_branch = cond_eqn.params["branches"]
    assert [e.primitive.name for e in false_branch.eqns] == ["mul"]
    assert [e.primitive.name for e in true_branch.eqns] == ["add"]


def test_lowers_to_stablehlo_case():
    f = jit(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))
    assert "stablehlo.case" in f.lower(True, 1.0).as_text()
    np.testing.assert_allclose(f(True, 1.0), np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(f(False, 1.0), np.cos(1.0), rtol=1e-6)


def test_eager_via_xla_agrees_with_numpy_impl():
    def f(i, x):
        return lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x)

    x = _f32(4)
    with xjax.config.override(xjax_eager_via_xla=True):
        compiled = [np.asarray(f(i, x)) for i in range(3)]
    eager = [np.asarray(f(i, x)) for i in range(3)]
    for c, e in zip(compiled, eager):
        np.testing.assert_allclose(c, e, rtol=1e-6)


def test_disable_jit_runs_the_branch_in_python():
    calls = []

    def true_fun(x):
        calls.append("true")
        return x

    with xjax.config.override(jax_disable_jit=True):
        lax.cond(True, true_fun, lambda x: x, 1.0)
    assert calls == ["true"]


# -- errors ----------------------------------------------------------------------------------

def test_branch_output_types_differ():
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0)
    message = str(info.value)
    assert message.startswith("cond branches must have equal output types but they differ.")
    assert ("The output of true_fun has type float32[] but the corresponding output of "
            "false_fun has type int32[], so the dtypes do not match.") in message
    assert message.endswith("Revise true_fun and/or false_fun so that all output types match.")


def test_branch_output_shapes_differ():
    with pytest.raises(TypeError, match=r"has type float32\[\] but the corresponding output "
                                        r"of false_fun has type float32\[3\], so the shapes "
                                        "do not match"):
        lax.cond(True, lambda x: x, lambda x: jnp.ones(3), 1.0)


def test_branch_output_trees_differ():
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)
    message = str(info.value)
    assert message.startswith("cond branch outputs must have the same pytree structure")
    assert ("true_fun output is a <class 'tuple'> but false_fun output is a pytree leaf, so "
            "their Python types differ.") in message


def test_switch_branch_types_differ():
    with pytest.raises(TypeError, match="switch branches must have equal output types"):
        lax.switch(0, [lambda x: x, lambda x: x, lambda x: x.astype(jnp.int32)], 1.0)


def test_predicate_errors():
    with pytest.raises(TypeError, match=r"Pred must be a scalar, got \[ True False\] of shape "
                                        r"\(2,\)\."):
        lax.cond(jnp.array([True, False]), lambda x: x, lambda x: x, 1.0)
    with pytest.raises(TypeError, match="cond predicate is None"):
        lax.cond(None, lambda x: x, lambda x: x, 1.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number"):
        lax.cond(1j, lambda x: x, lambda x: x, 1.0)
    with pytest.raises(TypeError, match="true_fun and false_fun arguments should be callable"):
        lax.cond(True, 1, lambda x: x, 1.0)


def test_switch_index_errors():
    with pytest.raises(TypeError, match="Index type must be an integer, got 1.0 as float32"):
        lax.switch(1.0, [lambda x: x], 1.0)
    with pytest.raises(TypeError, match=r"Branch index must be scalar, got \[1\] of shape"):
        lax.switch(jnp.array([1]), [lambda x: x, lambda x: -x], 1.0)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], 1.0)
    with pytest.raises(TypeError, match="branches argument should be a sequence of callables"):
        lax.switch(0, [1, 2], 1.0)


def test_traced_predicate_cannot_drive_python_if():
    @jit
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(xjax.errors.TracerBoolConversionError):
        f(1.0)
    g = jit(lambda x: lax.cond(x > 0, lambda x: x, lambda x: -x, x))
    assert float(g(-2.0)) == 2.0


# -- differentiation -------------------------------------------------------------------------

def _smooth(x, y):
    return lax.cond(jnp.sum(x) > 0, lambda a, b: jnp.sin(a) * b,
                    lambda a, b: a * jnp.cos(b) + b, x, y)


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_check_grads_second_order(sign, jitted):
    f = jit(_smooth) if jitted else _smooth
    check_grads(f, (sign * jnp.ones(3), jnp.arange(3.0)), order=2, modes=("fwd", "rev"))


def test_switch_grads():
    def f(i, x):
        return lax.switch(i, [jnp.sin, lambda v: v * v, lambda v: jnp.exp(v) + v], x)

    for i, want in [(0, np.cos(0.5)), (1, 1.0), (2, np.exp(0.5) + 1), (9, np.exp(0.5) + 1)]:
        np.testing.assert_allclose(grad(f, argnums=1)(i, 0.5), want, rtol=1e-6)
    check_grads(lambda x: f(1, x), (jnp.array([0.5, -1.0]),), order=2)


def test_grad_of_a_closed_over_value_and_of_jit():
    def f(w):
        return lax.cond(w > 0, lambda x: x * w * w, lambda x: x + w, 3.0)

    assert float(grad(f)(2.0)) == 12.0
    assert float(grad(f)(-2.0)) == 1.0
    assert float(grad(jit(f))(2.0)) == 12.0
    assert float(jit(grad(f))(-2.0)) == 1.0


def test_integer_outputs_have_no_tangent():
    def f(x):
        out, count = lax.cond(x > 0, lambda v: (v * 2.0, 1), lambda v: (v * 3.0, 2), x)
        return out * count

    assert float(grad(f)(1.0)) == 2.0
    assert float(grad(f)(-1.0)) == 6.0


def test_grads_against_jax():
    jax = pytest.importorskip("jax")
    x, y = _f32(3), _f32(3, seed=1)
    for pred_sign in (1.0, -1.0):
        xs = pred_sign * np.abs(x)
        mine = grad(lambda a, b: jnp.sum(_smooth(a, b)), argnums=(0, 1))(xs, y)
        theirs = jax.grad(lambda a, b: jax.numpy.sum(jax.lax.cond(
            jax.numpy.sum(a) > 0, lambda a, b: jax.numpy.sin(a) * b,
            lambda a, b: a * jax.numpy.cos(b) + b, a, b)), argnums=(0, 1))(xs, y)
        for m, t in zip(mine, theirs):
            np.testing.assert_allclose(m, np.asarray(t), rtol=1e-5, atol=1e-6)


# -- vmap ------------------------------------------------------------------------------------

def _loop(f, *args):
    return np.stack([np.asarray(f(*[a[i] for a in args])) for i in range(len(args[0]))])


def test_vmap_unbatched_predicate():
    x = _f32(4, 3)
    f = vmap(lambda v: lax.cond(True, jnp.sin, jnp.cos, v))
    np.testing.assert_allclose(f(x), np.sin(x), rtol=1e-6)
    g = vmap(lambda p, v: lax.cond(p, jnp.sin, jnp.cos, v), in_axes=(None, 0))
    np.testing.assert_allclose(g(False, x), np.cos(x), rtol=1e-6)


def test_vmap_batched_predicate_selects():
    x = _f32(6, 2)
    preds = np.array([True, False, True, True, False, False])

    def f(p, v):
        return lax.cond(p, lambda v: (jnp.sin(v), v.sum()), lambda v: (jnp.cos(v), -v.sum()), v)

    got = vmap(f)(preds, x)
    want0 = _loop(lambda p, v: f(p, v)[0], preds, x)
    want1 = _loop(lambda p, v: f(p, v)[1], preds, x)
    np.testing.assert_allclose(got[0], want0, rtol=1e-6)
    np.testing.assert_allclose(got[1], want1, rtol=1e-6)
    np.testing.assert_allclose(jit(vmap(f))(preds, x)[0], want0, rtol=1e-6)


def test_vmap_batched_switch_index():
    idx = np.array([-1, 0, 1, 2, 5], np.int32)
    x = _f32(5)

    def f(i, v):
        return lax.switch(i, [lambda v: v + 1.0, lambda v: v * 2.0, lambda v: -v], v)

    np.testing.assert_allclose(vmap(f)(idx, x), _loop(f, idx, x), rtol=1e-6)
    np.testing.assert_allclose(vmap(f, in_axes=(0, None))(idx, 3.0), [4.0, 4.0, 6.0, -3.0,
                                                                      -3.0])


def test_vmap_batched_operand_in_one_branch_only():
    x = _f32(4)

    def f(v):
        return lax.cond(True, lambda v: v * 2.0, lambda v: jnp.float32(0.0), v)

    np.testing.assert_allclose(vmap(f)(x), x * 2.0, rtol=1e-6)


def test_grad_of_vmap_and_vmap_of_grad():
    x = _f32(5)
    g = vmap(grad(lambda v: lax.cond(v > 0, jnp.sin, lambda v: v * v, v)))
    want = np.where(x > 0, np.cos(x), 2 * x)
    np.testing.assert_allclose(g(x), want, rtol=1e-5)
    h = grad(lambda v: jnp.sum(vmap(lambda s: lax.cond(s > 0, jnp.sin, lambda s: s * s, s))(v)))
    np.testing.assert_allclose(h(x), want, rtol=1e-5)
