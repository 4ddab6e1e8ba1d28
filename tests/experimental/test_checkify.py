"""xjax.experimental.checkify: user checks and automatic (NaN, division, index) checks,
functionalized under jit, vmap, grad and control flow; messages compared with JAX's."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.experimental import checkify

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # eager NaNs on purpose


def positive_log(x):
    checkify.check(x > 0, "x must be positive, got {}", x)
    return jnp.log(x)


def test_check_eagerly_raises_and_passes():
    with pytest.raises(checkify.JaxRuntimeError,
                       match=r"x must be positive, got -1.0 \(`check` failed\)"):
        positive_log(jnp.float32(-1.))
    assert issubclass(checkify.JaxRuntimeError, ValueError)
    np.testing.assert_allclose(positive_log(jnp.float32(2.)), np.log(2.), rtol=1e-6)


def test_check_under_jit_without_checkify_raises():
    with pytest.raises(ValueError, match="Cannot abstractly evaluate a checkify.check which "
                                         "was not functionalized"):
        xjax.jit(positive_log)(jnp.float32(1.))
    assert "check" in str(xjax.make_jaxpr(positive_log)(jnp.float32(1.)))


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit], ids=["eager", "jit"])
def test_checkify_user_check(wrap):
    checked = wrap(checkify.checkify(positive_log))
    err, out = checked(jnp.float32(-1.))
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"
    assert str(err) == "Error(x must be positive, got -1.0 (`check` failed))"
    assert np.isnan(out)
    err, out = checked(jnp.float32(np.e))
    assert err.get() is None and err.get_exception() is None
    np.testing.assert_allclose(out, 1.0, rtol=1e-6)
    err.throw()  # nothing failed: no exception


def test_throw_and_exception():
    err, _ = checkify.checkify(positive_log)(jnp.float32(-2.))
    with pytest.raises(checkify.JaxRuntimeError, match="got -2.0") as info:
        err.throw()
    assert type(info.value.__cause__).__name__ == "FailedCheckError"
    with pytest.raises(checkify.JaxRuntimeError):
        checkify.check_error(err)


def test_first_failing_check_is_reported():
    def f(x):
        checkify.check(x > 0, "first")
        checkify.check(x > 1, "second {}", x)
        checkify.check(x > 2, "third")
        return x
    assert checkify.checkify(f)(jnp.float32(-1.))[0].get() == "first (`check` failed)"
    assert checkify.checkify(f)(jnp.float32(0.5))[0].get() == "second 0.5 (`check` failed)"
    assert checkify.checkify(f)(jnp.float32(1.5))[0].get() == "third (`check` failed)"


def test_kwargs_formatting_and_pytree_args():
    def f(x):
        checkify.check(jnp.all(x["a"] > 0), "bad {a} {b}", a=x["a"], b=x["b"])
        return x
    err, _ = checkify.checkify(f)({"a": jnp.array([1., -1.]), "b": jnp.int32(3)})
    assert err.get() == "bad [ 1. -1.] 3 (`check` failed)"


def test_vmap_of_checkify_reports_each_element():
    err, out = xjax.vmap(checkify.checkify(positive_log))(jnp.array([1., -1., -2.]))
    assert err.get() == ("at mapped index 1: x must be positive, got -1.0 (`check` failed)\n"
                         "at mapped index 2: x must be positive, got -2.0 (`check` failed)")
    assert type(err.get_exception()).__name__ == "BatchedError"
    np.testing.assert_allclose(out[0], 0.0)


def test_checkify_of_vmap_reports_one_element():
    err, _ = checkify.checkify(xjax.vmap(positive_log))(jnp.array([1., -1., -2.]))
    assert err.get() == "x must be positive, got -2.0 (`check` failed)"  # the last, as JAX
    with pytest.raises(checkify.JaxRuntimeError, match="got -2.0"):
        xjax.vmap(positive_log)(jnp.array([1., -1., -2.]))


def test_grad_inside_and_outside():
    def f(x):
        checkify.check(x > 0, "neg {}", x)
        return jnp.sin(x) * x
    err, g = checkify.checkify(xjax.grad(f))(jnp.float32(2.))
    assert err.get() is None
    np.testing.assert_allclose(g, np.sin(2.) + 2 * np.cos(2.), rtol=1e-6)
    err, _ = xjax.jit(checkify.checkify(xjax.grad(f)))(jnp.float32(-3.))
    assert err.get() == "neg -3.0 (`check` failed)"
    g = xjax.grad(lambda x: checkify.checkify(f)(x)[1])(jnp.float32(2.))
    np.testing.assert_allclose(g, np.sin(2.) + 2 * np.cos(2.), rtol=1e-6)
    # custom_jvp inside keeps its rule under differentiation (relu'(0) = 0)
    g = xjax.grad(lambda x: checkify.checkify(lambda y: xjax.nn.relu(y) * 2)(x)[1])(0.)
    assert float(g) == 0.0


def scan_body(carry, x):
    checkify.check(x < 3, "x too big: {}", x)
    return carry + x, x * 2


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit], ids=["eager", "jit"])
def test_scan_errors_leave_the_loop(wrap):
    f = wrap(checkify.checkify(lambda xs: lax.scan(scan_body, 0., xs)))
    err, (total, ys) = f(jnp.arange(5.))
    assert err.get() == "x too big: 3.0 (`check` failed)"  # the first failing iteration
    assert float(total) == 10.0 and ys.tolist() == [0., 2., 4., 6., 8.]
    assert f(jnp.arange(2.))[0].get() is None
    err, _ = xjax.vmap(checkify.checkify(lambda xs: lax.scan(scan_body, 0., xs)))(
        jnp.array([[0., 1.], [4., 5.]]))
    assert err.get() == "at mapped index 1: x too big: 4.0 (`check` failed)"


def counting_loop(x):
    def cond(c):
        checkify.check(c[0] < 100, "cond saw {}", c[0])
        return c[0] < 10

    def body(c):
        checkify.check(c[0] != 4, "body saw 4")
        return c[0] + 1, c[1] * 2.
    return lax.while_loop(cond, body, (x, 1.))


def test_while_loop_checks_body_and_predicate():
    g = checkify.checkify(counting_loop)
    assert g(jnp.int32(0))[0].get() == "body saw 4 (`check` failed)"
    assert g(jnp.int32(5))[0].get() is None
    assert g(jnp.int32(200))[0].get() == "cond saw 200 (`check` failed)"
    err, (n, y) = xjax.jit(g)(jnp.int32(0))
    assert err.get() == "body saw 4 (`check` failed)" and int(n) == 10 and float(y) == 1024.
    err, _ = xjax.vmap(g)(jnp.array([0, 5, 200]))
    assert err.get() == ("at mapped index 0: body saw 4 (`check` failed)\n"
                         "at mapped index 2: cond saw 200 (`check` failed)")


def branches(p, x):
    def true_fun(x):
        checkify.check(x > 0, "true branch {}", x)
        return jnp.sin(x)
    return lax.cond(p, true_fun, jnp.log, x)


def test_cond_branches():
    h = checkify.checkify(branches, errors=checkify.all_checks)
    assert h(True, jnp.float32(-1.))[0].get() == "true branch -1.0 (`check` failed)"
    assert h(False, jnp.float32(-1.))[0].get() == "nan generated by primitive: log."
    assert h(True, jnp.float32(1.))[0].get() is None
    assert xjax.jit(h)(True, -2.)[0].get() == "true branch -2.0 (`check` failed)"
    err, _ = xjax.vmap(h)(jnp.array([True, False, True]), jnp.array([-1., -1., 1.]))
    assert err.get() == ("at mapped index 0: true branch -1.0 (`check` failed)\n"
                         "at mapped index 1: nan generated by primitive: log.")


def test_nested_jit_is_functionalized():
    err, _ = checkify.checkify(xjax.jit(positive_log))(jnp.float32(-1.))
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"


def test_nan_checks():
    f = checkify.checkify(lambda x: jnp.sin(x) * x, errors=checkify.float_checks)
    assert f(jnp.float32(np.inf))[0].get() == "nan generated by primitive: sin."
    assert f(jnp.float32(1.))[0].get() is None
    # not enabled by default
    assert checkify.checkify(jnp.log)(jnp.float32(-1.))[0].get() is None
    err, _ = xjax.jit(checkify.checkify(jnp.log, errors=checkify.nan_checks))(-1.)
    assert err.get() == "nan generated by primitive: log."


def test_div_checks():
    div = checkify.checkify(lambda x, y: x / y, errors=checkify.div_checks)
    assert div(jnp.float32(1.), jnp.float32(0.))[0].get() == "division by zero"
    assert div(jnp.float32(1.), jnp.float32(2.))[0].get() is None
    floordiv = checkify.checkify(lambda x: x // 0, errors=checkify.div_checks)
    assert floordiv(jnp.int32(1))[0].get() == "division by zero"


def oob_message(shape, index, axis, size):
    return (f"out-of-bounds indexing for array of shape {shape}: index {index} is out of "
            f"bounds for axis {axis} with size {size}. ")


def test_index_checks():
    take = checkify.checkify(lambda x, i: x[i], errors=checkify.index_checks)
    assert take(jnp.arange(3.), jnp.int32(5))[0].get() == oob_message((3,), 5, 0, 3)
    assert take(jnp.arange(3.), jnp.int32(2))[0].get() is None
    assert xjax.jit(take)(jnp.arange(3.), 7)[0].get() == oob_message((3,), 7, 0, 3)
    gather = checkify.checkify(lambda x: x[jnp.array([0, 7])], errors=checkify.index_checks)
    assert gather(jnp.ones((3, 4)))[0].get() == oob_message((3, 4), 7, 0, 3)
    scatter = checkify.checkify(lambda x, i: x.at[i].set(1.), errors=checkify.index_checks)
    assert scatter(jnp.arange(3.), jnp.int32(5))[0].get() == oob_message((3,), 5, 0, 3)
    dslice = checkify.checkify(lambda x, i: lax.dynamic_slice(x, (i,), (2,)),
                               errors=checkify.index_checks)
    assert dslice(jnp.arange(3.), jnp.int32(2))[0].get() == oob_message((3,), 2, 0, 3)
    assert dslice(jnp.arange(3.), jnp.int32(1))[0].get() is None


def test_debug_check():
    f = lambda x: checkify.debug_check(x > 0, "dbg")
    f(jnp.float32(-1.))  # dropped without checkify
    xjax.jit(f)(-1.)
    assert checkify.checkify(f)(jnp.float32(-1.))[0].get() == "dbg (`check` failed)"


def test_check_error_is_functionalized():
    def with_inner_jit(x):
        err, out = xjax.jit(checkify.checkify(positive_log))(x)
        checkify.check_error(err)
        return out
    with pytest.raises(checkify.JaxRuntimeError, match="got -1.0"):
        with_inner_jit(jnp.float32(-1.))
    err, _ = checkify.checkify(with_inner_jit)(jnp.float32(-1.))
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"


def test_argument_errors_as_jax():
    with pytest.raises(TypeError, match=r"check takes a scalar pred as argument, got \[ True "
                                        r"False\]"):
        checkify.check(jnp.array([True, False]), "m")
    with pytest.raises(TypeError, match="Formatting arguments to checkify.check need to be "
                                        "PyTrees of arrays, but got 3 of type <class 'int'>"):
        checkify.check(True, "m {}", 3)
    with pytest.raises(TypeError, match="check_error takes an Error as argument, got type "
                                        "<class 'int'> instead."):
        checkify.check_error(3)
    # array arguments are traced, as in JAX: no Python control flow on their values
    with pytest.raises(xjax.errors.TracerBoolConversionError):
        checkify.checkify(lambda x: x if x > 0 else -x)(jnp.float32(1.))


def test_error_sets():
    assert checkify.all_checks == (checkify.user_checks | checkify.nan_checks
                                   | checkify.index_checks | checkify.div_checks)
    assert checkify.float_checks == checkify.nan_checks | checkify.div_checks
    assert checkify.automatic_checks == checkify.float_checks | checkify.index_checks
    assert checkify.init_error.get() is None


# -- JAX as a differential reference ---------------------------------------------------------

JAX_CASES = [
    ("user", lambda m: (m.checkify.checkify(lambda x: _check_pos(m, x)),
                        [np.float32(-1.5)])),
    ("nan", lambda m: (m.checkify.checkify(lambda x: m.jnp.sin(x) * m.jnp.log(x),
                                           errors=m.checkify.float_checks), [np.float32(-1.)])),
    ("div", lambda m: (m.checkify.checkify(lambda x, y: x / y, errors=m.checkify.div_checks),
                       [np.float32(1.), np.float32(0.)])),
    ("gather", lambda m: (m.checkify.checkify(lambda x, i: x[i], errors=m.checkify.all_checks),
                          [np.ones((2, 5), np.float32), np.array([[1], [6]], np.int32)])),
    ("scan", lambda m: (m.checkify.checkify(
        lambda xs: m.lax.scan(lambda c, x: (_check_pos(m, x) + c, None), 0., xs)),
        [np.array([1., 2., -3., -4.], np.float32)])),
]


def _check_pos(m, x):
    m.checkify.check(x > 0, "need positive {}", x)
    return x


class _Namespace:
    def __init__(self, **kw):
        self.__dict__.update(kw)


@pytest.mark.parametrize("name,case", JAX_CASES, ids=[c[0] for c in JAX_CASES])
@pytest.mark.parametrize("batched", [False, True])
def test_messages_match_jax(name, case, batched):
    jax = pytest.importorskip("jax")
    from jax.experimental import checkify as jax_checkify
    ours = _Namespace(checkify=checkify, jnp=jnp, lax=lax)
    theirs = _Namespace(checkify=jax_checkify, jnp=jax.numpy, lax=jax.lax)
    f, args = case(ours)
    g, _ = case(theirs)
    if batched:
        args = [np.stack([a, a * 0 + 1]) for a in args]
        f, g = xjax.vmap(f), jax.vmap(g)
    err, out = xjax.jit(f)(*args)
    jax_err, jax_out = jax.jit(g)(*args)
    assert err.get() == jax_err.get()
    ours_leaves, jax_leaves = xjax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(jax_out)
    assert len(ours_leaves) == len(jax_leaves)
    for a, b in zip(ours_leaves, jax_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_custom_vjp_and_checkpoint_bodies_are_checked():
    @xjax.custom_vjp
    def f(x):
        return jnp.sin(x)
    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, g: (3 * g * r,))

    def h(x):
        checkify.check(x > 0, "neg")
        return f(jnp.log(x))
    checked = checkify.checkify(h, errors=checkify.all_checks)
    # the user's bwd rule runs under grad of the checkified function
    g = xjax.grad(lambda x: checked(x)[1])(2.)
    np.testing.assert_allclose(g, 3 / 2 * np.cos(np.log(2.)), rtol=1e-6)
    assert checked(jnp.float32(-2.))[0].get() == "neg (`check` failed)"
    remat = checkify.checkify(xjax.checkpoint(lambda x: h(x) * 2))
    assert remat(jnp.float32(-2.))[0].get() == "neg (`check` failed)"


def test_check_message_formats_its_arguments_as_arrays():
    # Chex's chexify prints a dict of the checked values: JAX shows them as Arrays.
    def f(x):
        checkify.check(x > 0, "bad {x}", x={"b": x})
        return x

    err, _ = checkify.checkify(f)(jnp.float32(-1.0))
    assert err.get() == "bad {'b': Array(-1., dtype=float32)} (`check` failed)"
