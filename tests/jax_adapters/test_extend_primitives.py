"""Primitives defined by user code, as JAX's "JAX Internals: primitives" tutorial defines
them: ``xjax.extend.core.Primitive`` with rules attached through ``def_impl``,
``def_abstract_eval``, ``xjax.interpreters.ad``, ``batching`` and ``mlir``.

References: NumPy, finite differences, hand-derived derivatives; JAX where installed.
"""

import re

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.core import ShapedArray
from xjax.extend import backend, core, linear_util
from xjax.interpreters import ad, batching
from xjax._src.jax_adapters import interpreters_mlir as mlir

_counter = iter(range(10**6))


def fresh_name(base: str) -> str:
    """A primitive name no other test uses (JAX allows repeated names; messages are
    clearer with distinct ones)."""
    return f"{base}_{next(_counter)}"


def same_shape_aval(*avals, **_params):
    return ShapedArray(avals[0].shape, avals[0].dtype)


# -- the tutorial's multiply_add, built rule by rule ------------------------------------------

def define_multiply_add(name="multiply_add", *, lowering=True, jvp=True, transpose=True,
                        batch=True):
    """The tutorial's ``multiply_add`` primitive with the rules asked for; returns
    ``(primitive, multiply_add, square_add)``."""
    p = core.Primitive(name)

    def multiply_add(x, y, z):
        return p.bind(x, y, z)

    def square_add(a, b):
        return multiply_add(a, a, b)

    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))

    def abstract_eval(xs, ys, zs):
        assert xs.shape == ys.shape == zs.shape
        return ShapedArray(xs.shape, xs.dtype)
    p.def_abstract_eval(abstract_eval)

    if lowering:
        mlir.register_lowering(p, mlir.lower_fun(lambda x, y, z: x * y + z,
                                                 multiple_results=False))
    if jvp:
        def value_and_jvp(arg_values, arg_tangents):
            x, y, z = arg_values
            xt, yt, zt = arg_tangents

            def make_zero(tan):
                return lax.full_like(x, 0) if type(tan) is ad.Zero else tan
            out = multiply_add(x, y, z)
            tangent = multiply_add(make_zero(xt), y,
                                   multiply_add(x, make_zero(yt), make_zero(zt)))
            return out, tangent
        ad.primitive_jvps[p] = value_and_jvp
    if transpose:
        def transpose_rule(ct, x, y, z):
            if not ad.is_undefined_primal(x):
                assert ad.is_undefined_primal(y)
                ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else \
                    multiply_add(x, ct, lax.full_like(x, 0))
                return None, ct_y, ct
            assert ad.is_undefined_primal(x)
            ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else \
                multiply_add(ct, y, lax.full_like(y, 0))
            return ct_x, None, ct
        ad.primitive_transposes[p] = transpose_rule
    if batch:
        def batch_rule(vector_arg_values, batch_axes):
            assert batch_axes[0] == batch_axes[1] == batch_axes[2]
            return multiply_add(*vector_arg_values), batch_axes[0]
        batching.primitive_batchers[p] = batch_rule
    return p, multiply_add, square_add


@pytest.fixture(scope="module")
def tutorial():
    return define_multiply_add()


def test_tutorial_eager_and_jit(tutorial):
    _, multiply_add, square_add = tutorial
    assert float(square_add(2.0, 10.0)) == 14.0
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y, z = x + 1.5, x - 4.0
    np.testing.assert_allclose(np.asarray(multiply_add(x, y, z)), x * y + z)
    jitted = xjax.jit(multiply_add)(x, y, z)
    assert jitted.dtype == np.float32 and jitted.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(jitted), x * y + z)
    np.testing.assert_allclose(float(xjax.jit(square_add)(2.0, 10.0)), 14.0)


def test_tutorial_jaxprs_print_the_primitive(tutorial):
    _, _, square_add = tutorial
    text = str(xjax.make_jaxpr(square_add)(2.0, 10.0))
    assert text == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = multiply_add a a b in (c,) }"
    jvp_text = str(xjax.make_jaxpr(
        lambda a, b: xjax.jvp(square_add, (a, b), (1.0, 1.0)))(2.0, 10.0))
    assert jvp_text.count("multiply_add") == 3


def test_tutorial_jvp_against_finite_differences(tutorial):
    _, multiply_add, square_add = tutorial
    out, tangent = xjax.jvp(square_add, (2.0, 10.0), (1.0, 1.0))
    assert float(out) == 14.0
    assert float(tangent) == pytest.approx(2 * 2.0 * 1.0 + 1.0)
    rng = np.random.default_rng(0)
    x, y, z, tx, ty, tz = (rng.normal(size=(4,)) for _ in range(6))
    _, t = xjax.jvp(multiply_add, (x, y, z), (tx, ty, tz))
    eps = 1e-3
    fd = ((x + eps * tx) * (y + eps * ty) + (z + eps * tz)
          - ((x - eps * tx) * (y - eps * ty) + (z - eps * tz))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-4, atol=1e-5)


def test_tutorial_grad_and_vjp(tutorial):
    _, multiply_add, square_add = tutorial
    assert float(xjax.grad(square_add)(2.0, 10.0)) == pytest.approx(4.0)
    assert float(xjax.jit(xjax.grad(square_add))(2.0, 10.0)) == pytest.approx(4.0)
    da, db = xjax.grad(square_add, argnums=(0, 1))(3.0, 10.0)
    assert (float(da), float(db)) == pytest.approx((6.0, 1.0))
    x = np.array([1.0, -2.0, 0.5], np.float32)
    y = np.array([3.0, 4.0, -1.0], np.float32)
    z = np.array([0.1, 0.2, 0.3], np.float32)
    out, vjp_fun = xjax.vjp(multiply_add, x, y, z)
    ct = np.array([1.0, 2.0, -3.0], np.float32)
    gx, gy, gz = vjp_fun(ct)
    np.testing.assert_allclose(np.asarray(out), x * y + z)
    np.testing.assert_allclose(np.asarray(gx), ct * y)
    np.testing.assert_allclose(np.asarray(gy), ct * x)
    np.testing.assert_allclose(np.asarray(gz), ct)
    grad_text = str(xjax.make_jaxpr(xjax.grad(square_add))(2.0, 10.0))
    assert "multiply_add" in grad_text and "add_any" in grad_text


def test_tutorial_vmap(tutorial):
    _, multiply_add, square_add = tutorial
    a = np.array([2.0, 3.0], np.float32)
    b = np.array([10.0, 20.0], np.float32)
    np.testing.assert_allclose(np.asarray(xjax.vmap(square_add)(a, b)), a * a + b)
    np.testing.assert_allclose(np.asarray(xjax.jit(xjax.vmap(square_add))(a, b)), a * a + b)
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = xjax.vmap(multiply_add, in_axes=1, out_axes=1)(m, m + 1, m - 1)
    np.testing.assert_allclose(np.asarray(got), m * (m + 1) + (m - 1))
    # the tutorial's rule wants every operand batched: vmap of jvp batches them all
    _, tangents = xjax.vmap(lambda v, t: xjax.jvp(square_add, (v, v), (t, t)))(a, b)
    np.testing.assert_allclose(np.asarray(tangents), 2 * a * b + b)


def test_tutorial_inside_other_transformations(tutorial):
    _, _, square_add = tutorial
    assert float(xjax.grad(xjax.jit(square_add))(3.0, 1.0)) == pytest.approx(6.0)
    a = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(xjax.vmap(xjax.jit(square_add))(a, a + 1)),
                               a * a + a + 1)

    def body(carry, x):
        return square_add(carry, x), carry
    xs = np.arange(3, dtype=np.float32)
    carry, ys = xjax.lax.scan(body, np.float32(0.5), xs)
    expected, seen = np.float32(0.5), []
    for x in xs:
        seen.append(expected)
        expected = expected * expected + x
    assert float(carry) == pytest.approx(expected)
    np.testing.assert_allclose(np.asarray(ys), seen)
    # d carry_3 / d carry_0 = prod(2 * carry_i)
    slope = xjax.grad(lambda c: xjax.lax.scan(body, c, xs)[0])(np.float32(0.5))
    assert float(slope) == pytest.approx(np.prod([2 * c for c in seen]))


def test_eager_through_xla_uses_the_lowering(tutorial):
    _, multiply_add, _ = tutorial
    previous = xjax.config.xjax_eager_via_xla
    xjax.config.update("xjax_eager_via_xla", True)
    try:
        x = np.array([1.0, 2.0], np.float32)
        np.testing.assert_allclose(np.asarray(multiply_add(x, x, x)), x * x + x)
    finally:
        xjax.config.update("xjax_eager_via_xla", previous)


# -- a primitive with several results ------------------------------------------------------

@pytest.fixture(scope="module")
def sincos():
    p = core.Primitive(fresh_name("sincos"))
    p.multiple_results = True
    p.def_impl(lambda x: (np.sin(x), np.cos(x)))
    p.def_abstract_eval(lambda x: (ShapedArray(x.shape, x.dtype),
                                   ShapedArray(x.shape, x.dtype)))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: (jnp.sin(x), jnp.cos(x)),
                                             multiple_results=True))

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s, c = p.bind(x)
        return (s, c), (c * t, -s * t)
    ad.primitive_jvps[p] = jvp
    batching.defvectorized(p)
    return p


def test_multiple_results_eager_jit_jaxpr(sincos):
    x = np.linspace(-2, 2, 5).astype(np.float32)
    for run in (sincos.bind, xjax.jit(sincos.bind)):
        s, c = run(x)
        np.testing.assert_allclose(np.asarray(s), np.sin(x), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(c), np.cos(x), rtol=1e-6)
    text = str(xjax.make_jaxpr(sincos.bind)(x))
    assert re.search(rf"b:f32\[5\] c:f32\[5\] = {sincos.name} a", text), text


def test_multiple_results_derivatives_and_vmap(sincos):
    def f(x):
        s, c = sincos.bind(x)
        return s * c  # sin(2x) / 2

    x = np.float32(0.7)
    assert float(xjax.grad(f)(x)) == pytest.approx(np.cos(2 * x), rel=1e-5)
    eps = 1e-3
    fd = (np.sin(2 * (x + eps)) - np.sin(2 * (x - eps))) / (4 * eps)
    assert float(xjax.jvp(f, (x,), (np.float32(1.0),))[1]) == pytest.approx(fd, rel=1e-3)
    xs = np.linspace(0, 1, 4).astype(np.float32)
    np.testing.assert_allclose(np.asarray(xjax.vmap(xjax.grad(f))(xs)), np.cos(2 * xs),
                               rtol=1e-5)
    s, c = xjax.vmap(sincos.bind, in_axes=1, out_axes=0)(np.stack([xs, xs]))
    np.testing.assert_allclose(np.asarray(s), np.sin(np.stack([xs, xs]).T), rtol=1e-6)


# -- the ad helpers ------------------------------------------------------------------------

def test_defjvp_and_defjvp2():
    cube = core.Primitive(fresh_name("cube"))
    cube.def_impl(lambda x: np.power(x, 3))
    cube.def_abstract_eval(same_shape_aval)
    ad.defjvp(cube, lambda t, x: 3 * x * x * t)
    assert float(xjax.grad(cube.bind)(2.0)) == pytest.approx(12.0)
    assert float(xjax.grad(xjax.grad(cube.bind))(2.0)) == pytest.approx(12.0)

    expo = core.Primitive(fresh_name("expo"))
    expo.def_impl(np.exp)
    expo.def_abstract_eval(same_shape_aval)
    ad.defjvp2(expo, lambda t, ans, x: ans * t)
    assert float(xjax.grad(expo.bind)(0.5)) == pytest.approx(np.exp(0.5), rel=1e-6)


def test_deflinear2_and_defbilinear():
    scale = core.Primitive(fresh_name("scale"))
    scale.def_impl(lambda x, *, k: np.multiply(x, k))
    scale.def_abstract_eval(same_shape_aval)
    mlir.register_lowering(scale, mlir.lower_fun(lambda x, *, k: x * k, False))
    ad.deflinear2(scale, lambda ct, x, *, k: [scale.bind(ct, k=k)])
    f = lambda x: jnp.sum(scale.bind(x, k=2.5) ** 2)  # noqa: E731
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_allclose(np.asarray(xjax.grad(f)(x)), 2 * 2.5 * 2.5 * x)
    np.testing.assert_allclose(np.asarray(xjax.jit(xjax.grad(f))(x)), 2 * 2.5 * 2.5 * x)

    mul = core.Primitive(fresh_name("mul"))
    mul.def_impl(np.multiply)
    mul.def_abstract_eval(same_shape_aval)
    ad.defbilinear(mul, lambda ct, x, y: mul.bind(ct, y), lambda ct, x, y: mul.bind(x, ct))
    gx, gy = xjax.grad(lambda a, b: jnp.sum(mul.bind(a, b)), argnums=(0, 1))(x, x + 3)
    np.testing.assert_allclose(np.asarray(gx), x + 3)
    np.testing.assert_allclose(np.asarray(gy), x)


def test_defbroadcasting_batches_mixed_operands():
    addp = core.Primitive(fresh_name("badd"))
    addp.def_impl(np.add)
    addp.def_abstract_eval(lambda x, y: ShapedArray(np.broadcast_shapes(x.shape, y.shape),
                                                    x.dtype))
    mlir.register_lowering(addp, mlir.lower_fun(jnp.add, multiple_results=False))
    batching.defbroadcasting(addp)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    c = np.array([10.0, 20.0, 30.0, 40.0], np.float32)
    for run in (lambda f: f, xjax.jit):
        got = run(xjax.vmap(addp.bind, in_axes=(0, None)))(a, c)
        np.testing.assert_allclose(np.asarray(got), a + c)
        got = run(xjax.vmap(addp.bind, in_axes=(0, None)))(a, np.float32(2.0))
        np.testing.assert_allclose(np.asarray(got), a + 2)
        got = run(xjax.vmap(addp.bind, in_axes=(0, 1)))(a, a.T.copy())
        np.testing.assert_allclose(np.asarray(got), 2 * a)


# -- missing rules: JAX's errors -----------------------------------------------------------

def test_missing_abstract_eval_fails_when_traced_but_eager_runs_impl():
    p = core.Primitive(fresh_name("noaval"))
    p.def_impl(lambda x, y: np.add(x, y))
    assert float(p.bind(1.0, 2.0)) == 3.0  # JAX runs impl eagerly without abstract eval
    msg = f"Abstract evaluation for '{p.name}' not implemented"
    with pytest.raises(NotImplementedError, match=re.escape(msg)):
        xjax.jit(p.bind)(1.0, 2.0)
    with pytest.raises(NotImplementedError, match=re.escape(msg)):
        xjax.make_jaxpr(p.bind)(1.0, 2.0)


def test_missing_impl():
    p = core.Primitive(fresh_name("noimpl"))
    p.def_abstract_eval(same_shape_aval)
    with pytest.raises(NotImplementedError,
                       match=re.escape(f"Evaluation rule for '{p.name}' not implemented")):
        p.bind(1.0)
    # tracing needs no impl
    assert p.name in str(xjax.make_jaxpr(p.bind)(1.0))


def test_missing_jvp_transpose_batching_lowering():
    name = fresh_name("multiply_add")
    p, multiply_add, square_add = define_multiply_add(name, lowering=False, jvp=False,
                                                      transpose=False, batch=False)
    with pytest.raises(NotImplementedError,
                       match=re.escape(f"Differentiation rule for '{name}' not implemented")):
        xjax.jvp(square_add, (2.0, 10.0), (1.0, 1.0))
    with pytest.raises(NotImplementedError,
                       match=re.escape(f"Batching rule for '{name}' not implemented")):
        xjax.vmap(square_add)(np.ones(2), np.ones(2))
    with pytest.raises(NotImplementedError,
                       match=re.escape(f"MLIR translation rule for primitive '{name}' not "
                                       "found for platform")):
        xjax.jit(square_add)(2.0, 10.0)
    ad.defjvp(p, lambda t, x, y, z: t * y, lambda t, x, y, z: x * t, lambda t, x, y, z: t)
    assert float(xjax.jvp(square_add, (2.0, 10.0), (1.0, 1.0))[1]) == pytest.approx(5.0)
    # defjvp's tangent is built with lax multiplies: grad transposes those, not p
    assert float(xjax.grad(square_add)(2.0, 10.0)) == pytest.approx(4.0)
    lin = core.Primitive(fresh_name("linear_op"))
    lin.def_impl(lambda x: np.multiply(x, 2))
    lin.def_abstract_eval(same_shape_aval)
    ad.primitive_jvps[lin] = lambda primals, tangents: (lin.bind(*primals), lin.bind(*tangents))
    with pytest.raises(NotImplementedError, match=re.escape(
            f"Transpose rule (for reverse-mode differentiation) for '{lin.name}' "
            "not implemented")):
        xjax.grad(lin.bind)(1.0)
    with pytest.raises(NotImplementedError, match="not implemented"):
        ad.get_primitive_transpose(lin)


def test_mlir_binding_rules_are_refused_when_run():
    p = core.Primitive(fresh_name("hlo_rule"))
    p.def_impl(lambda x: np.negative(x))
    p.def_abstract_eval(same_shape_aval)

    def hlo_lowering(ctx, xc):  # builds hlo.NegOp(xc) with MLIR's bindings in JAX
        return [mlir.hlo.NegOp(xc).result]
    assert mlir.register_lowering(p, hlo_lowering, platform="cpu") is hlo_lowering
    assert float(p.bind(3.0)) == -3.0  # eager uses impl
    with pytest.raises(NotImplementedError, match="lower_fun"):
        xjax.jit(p.bind)(3.0)


def test_lowering_rule_emitting_a_python_callback():
    # Equinox's noinline lowers this way: the rule sees JAX's ctx (avals, module_context)
    # and emits a host call that receives NumPy arrays.
    p = core.Primitive(fresh_name("host_cube"))
    p.multiple_results = True
    p.def_abstract_eval(lambda x, n: [ShapedArray(x.shape, x.dtype)])
    seen = []

    def host(x, n):
        seen.append((type(x), type(n)))
        return (x ** int(n),)

    def lowering(ctx, x, n):
        assert ctx.avals_out[0].shape == (3,) and ctx.module_context.platforms == ("cpu",)
        results, token, keepalive = mlir.emit_python_callback(
            ctx, host, None, [x, n], ctx.avals_in, ctx.avals_out, has_side_effect=False)
        ctx.module_context.add_keepalive(keepalive)
        assert token is None
        return results
    mlir.register_lowering(p, lowering)
    x = np.array([1.0, 2.0, -3.0], np.float32)
    out = xjax.jit(lambda x: p.bind(x, np.int32(3))[0] + 1)(x)
    np.testing.assert_array_equal(np.asarray(out), x ** 3 + 1)
    assert seen == [(np.ndarray, np.ndarray)]


def test_lowering_only_primitive_runs_eagerly_through_xla():
    p = core.Primitive(fresh_name("softplus_like"))
    p.def_abstract_eval(same_shape_aval)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: jnp.log1p(jnp.exp(x)),
                                             multiple_results=False))
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    np.testing.assert_allclose(np.asarray(p.bind(x)), np.log1p(np.exp(x)), rtol=1e-6)


def test_apply_primitive_impl_and_subclass_with_multiple_results():
    from xjax.interpreters import xla

    class SplitHalves(core.Primitive):
        multiple_results = True

    p = SplitHalves(fresh_name("split_halves"))
    assert p.multiple_results

    def halves_aval(x):
        half = ShapedArray((x.shape[0] // 2,), x.dtype)
        return [half, half]
    p.def_abstract_eval(halves_aval)
    p.def_impl(lambda x: xla.apply_primitive(p, x))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: (x[: x.shape[0] // 2],
                                                        x[x.shape[0] // 2:])))
    x = np.arange(6, dtype=np.float32)
    for run in (p.bind, xjax.jit(p.bind)):
        lo, hi = run(x)
        np.testing.assert_array_equal(np.asarray(lo), x[:3])
        np.testing.assert_array_equal(np.asarray(hi), x[3:])


def test_lower_fun_output_must_match_abstract_eval():
    p = core.Primitive(fresh_name("liar"))
    p.def_impl(lambda x: x)
    p.def_abstract_eval(same_shape_aval)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: jnp.sum(x), multiple_results=False))
    with pytest.raises(TypeError, match="abstract evaluation says"):
        xjax.jit(p.bind)(np.ones(3, np.float32))


def test_abstract_eval_must_return_shaped_arrays():
    p = core.Primitive(fresh_name("bad_aval"))
    p.def_abstract_eval(lambda x: (x.shape, x.dtype))
    with pytest.raises(TypeError, match="must return a ShapedArray"):
        xjax.make_jaxpr(p.bind)(1.0)


# -- the rule tables read xjax's own rules too ---------------------------------------------

def test_rule_tables_see_xjax_primitives():
    sin_p = core.primitives.sin_p
    assert sin_p in ad.primitive_jvps and sin_p in batching.primitive_batchers
    assert callable(ad.primitive_jvps[sin_p])
    assert ad.primitive_transposes.get(sin_p) is None  # sin is not linear
    assert ad.get_primitive_transpose(core.primitives.neg_p) is not None
    with pytest.raises(TypeError, match="keys must be primitives"):
        ad.primitive_jvps["sin"] = lambda p, t: (p, t)
    assert batching.not_mapped is None


def test_zero_helpers():
    z = ad.Zero.from_primal_value(np.ones(3, np.float32))
    assert type(z) is ad.Zero and z.aval.shape == (3,)
    np.testing.assert_array_equal(np.asarray(ad.instantiate_zeros(z)), np.zeros(3))
    assert ad.is_undefined_primal(ad.UndefinedPrimal(z.aval))
    assert ad.add_tangents(z, 1.0) == 1.0


# -- the rest of xjax.extend ---------------------------------------------------------------

def test_extend_core_jaxpr_helpers():
    closed = xjax.make_jaxpr(lambda x, y: jnp.sin(x) * y)(1.0, 2.0)
    assert isinstance(closed, core.ClosedJaxpr) and isinstance(closed.jaxpr, core.Jaxpr)
    out, = core.jaxpr_as_fun(closed)(0.5, 3.0)
    assert float(out) == pytest.approx(np.sin(0.5) * 3.0, rel=1e-6)
    eqn = closed.jaxpr.eqns[0]
    assert isinstance(eqn, core.JaxprEqn) and eqn.primitive is core.primitives.sin_p
    again = core.new_jaxpr_eqn(eqn.invars, eqn.outvars, eqn.primitive, eqn.params, set())
    assert again.primitive is eqn.primitive
    aval = ShapedArray((4, 5), np.float32)
    assert core.mapped_aval(4, 0, aval).shape == (5,)
    assert core.unmapped_aval(3, 1, aval).shape == (4, 3, 5)
    assert core.primal_dtype_to_tangent_dtype(np.int32) == xjax.dtypes.float0


def test_extend_backend_and_linear_util():
    cpu = backend.get_backend("cpu")
    assert cpu.platform == "cpu" and cpu.device_count() == len(cpu.devices()) >= 1
    assert backend.get_backend() in backend.backends().values()
    wrapped = linear_util.wrap_init(lambda x, scale: x * scale, {"scale": 3})
    assert isinstance(wrapped, linear_util.WrappedFun) and wrapped.call_wrapped(2) == 6


# -- JAX as a differential reference -------------------------------------------------------

def test_tutorial_matches_jax(tutorial):
    jax = pytest.importorskip("jax")
    from jax.extend import core as jcore
    from jax.interpreters import ad as jad
    from jax.interpreters import batching as jbatching
    from jax.interpreters import mlir as jmlir

    p = jcore.Primitive("multiply_add")
    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    p.def_abstract_eval(lambda x, y, z: jax.core.ShapedArray(x.shape, x.dtype))
    jmlir.register_lowering(p, jmlir.lower_fun(lambda x, y, z: x * y + z,
                                               multiple_results=False))

    def jvp(primals, tangents):
        x, y, z = primals
        zero = lambda t: jax.lax.full_like(x, 0) if type(t) is jad.Zero else t  # noqa: E731
        xt, yt, zt = map(zero, tangents)
        return p.bind(x, y, z), p.bind(xt, y, p.bind(x, yt, zt))
    jad.primitive_jvps[p] = jvp

    def transpose(ct, x, y, z):
        if not jad.is_undefined_primal(x):
            return None, p.bind(x, ct, jax.lax.full_like(x, 0)), ct
        return p.bind(ct, y, jax.lax.full_like(y, 0)), None, ct
    jad.primitive_transposes[p] = transpose
    jbatching.primitive_batchers[p] = lambda vals, axes: (p.bind(*vals), axes[0])

    _, _, x_square_add = tutorial
    j_square_add = lambda a, b: p.bind(a, a, b)  # noqa: E731
    vec, ones = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    # (how JAX runs it, how xjax runs it)
    cases = [
        (lambda f: f(2.0, 10.0), lambda f: f(2.0, 10.0)),
        (lambda f: jax.jit(f)(2.0, 10.0), lambda f: xjax.jit(f)(2.0, 10.0)),
        (lambda f: jax.grad(f)(3.0, 10.0), lambda f: xjax.grad(f)(3.0, 10.0)),
        (lambda f: jax.jit(jax.grad(f))(3.0, 10.0), lambda f: xjax.jit(xjax.grad(f))(3.0, 10.0)),
        (lambda f: jax.jvp(f, (3.0, 1.0), (0.5, 2.0))[1],
         lambda f: xjax.jvp(f, (3.0, 1.0), (0.5, 2.0))[1]),
        (lambda f: jax.vmap(f)(vec, ones), lambda f: xjax.vmap(f)(vec, ones)),
    ]
    with jax.default_device(jax.devices("cpu")[0]):
        for run_jax, run_xjax in cases:
            np.testing.assert_allclose(np.asarray(run_xjax(x_square_add)),
                                       np.asarray(run_jax(j_square_add)), rtol=1e-6)
        jvp_of = lambda lib, f: lambda a, b: lib.jvp(f, (a, b), (1.0, 1.0))  # noqa: E731
        jaxprs = [(x_square_add, j_square_add),
                  (xjax.grad(x_square_add), jax.grad(j_square_add)),
                  (jvp_of(xjax, x_square_add), jvp_of(jax, j_square_add))]
        for x_fun, j_fun in jaxprs:
            assert str(xjax.make_jaxpr(x_fun)(2.0, 10.0)) == \
                str(jax.make_jaxpr(j_fun)(2.0, 10.0))


def test_missing_rule_messages_match_jax():
    jax = pytest.importorskip("jax")
    from jax.extend import core as jcore
    from jax.interpreters import ad as jad

    name = fresh_name("bare")

    def make(lib_core, aval_type, ad_module):
        p = lib_core.Primitive(name)
        p.def_impl(lambda x: np.multiply(x, 2))
        p.def_abstract_eval(lambda x: aval_type(x.shape, x.dtype))
        linear = lib_core.Primitive(name + "_linear")
        linear.def_impl(lambda x: np.multiply(x, 2))
        linear.def_abstract_eval(lambda x: aval_type(x.shape, x.dtype))
        ad_module.primitive_jvps[linear] = lambda ps, ts: (linear.bind(*ps), linear.bind(*ts))
        bare = lib_core.Primitive(name + "_bare")
        bare.def_impl(lambda x: np.multiply(x, 2))
        return p, linear, bare

    def messages(lib, prims):
        p, linear, bare = prims
        attempts = [lambda: lib.jvp(p.bind, (1.0,), (1.0,)),
                    lambda: lib.vmap(p.bind)(np.ones(2, np.float32)),
                    lambda: lib.jit(p.bind)(1.0),
                    lambda: lib.grad(linear.bind)(1.0),
                    lambda: lib.make_jaxpr(bare.bind)(1.0)]
        out = []
        for attempt in attempts:
            with pytest.raises(NotImplementedError) as info:
                attempt()
            out.append(str(info.value).splitlines()[0])
        return out

    with jax.default_device(jax.devices("cpu")[0]):
        expected = messages(jax, make(jcore, jax.core.ShapedArray, jad))
    got = messages(xjax, make(core, ShapedArray, ad))
    if xjax.default_backend() != "cpu":
        expected[2] = expected[2].replace("platform cpu", "platform cuda")
    assert got == expected


def test_register_lowering_on_an_xjax_primitive_for_another_platform_keeps_its_own():
    # a rule for a platform xjax is not running on leaves the primitive's lowering alone
    other = "tpu"
    neg_p = core.primitives.neg_p
    before = neg_p.lower
    try:
        mlir.register_lowering(neg_p, mlir.lower_fun(lambda x: x * 0, False), platform=other)
        assert float(xjax.jit(lambda x: -x)(np.float32(2.0))) == -2.0
    finally:
        neg_p.lower = before
        mlir._platform_rules.pop(neg_p, None)
        mlir._native_rules.pop(neg_p, None)
