"""lax.scan: values against Python loops (pytrees, reverse, unroll, xs None, length 0),
eager and jitted; JAX's errors; derivatives to second order in both modes; vmap against a
loop; lax.map and lax.associative_scan."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, lax, vmap
from xjax._src.testing.check_grads import check_grads


def _f32(*shape, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _step(carry, x):
    h, count = carry
    h = jnp.tanh(h * 0.9 + x["a"]) + x["b"]
    return (h, count + 1), {"h": h, "sum": jnp.sum(h)}


def _python_scan(f, init, xs, length, reverse=False):
    carry, ys = init, []
    order = reversed(range(length)) if reverse else range(length)
    for i in order:
        x = None if xs is None else xjax.tree_util.tree_map(lambda v, i=i: v[i], xs)
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, ys


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 3, True])
def test_scan_pytrees_against_python(reverse, unroll, jitted):
    xs = {"a": _f32(7, 3), "b": _f32(7, 3, seed=1)}
    init = (jnp.zeros(3), 0)

    def f(init, xs):
        return lax.scan(_step, init, xs, reverse=reverse, unroll=unroll)

    f = jit(f) if jitted else f
    (h, count), ys = f(init, xs)
    (h_ref, count_ref), ys_ref = _python_scan(_step, init, xs, 7, reverse)
    np.testing.assert_allclose(h, h_ref, rtol=1e-5, atol=1e-6)
    assert int(count) == 7
    np.testing.assert_allclose(ys["h"], np.stack([y["h"] for y in ys_ref]), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ys["sum"], np.stack([y["sum"] for y in ys_ref]), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("jitted", [False, True])
def test_scan_without_xs_and_with_consts(jitted):
    table = jnp.arange(5.0)

    def f(c):
        return lax.scan(lambda c, _: (c * 2.0, table * c), c, None, length=3)

    f = jit(f) if jitted else f
    c, ys = f(1.0)
    assert float(c) == 8.0
    np.testing.assert_allclose(ys, np.stack([np.arange(5.0) * k for k in (1, 2, 4)]))


@pytest.mark.parametrize("jitted", [False, True])
def test_zero_length_scan(jitted):
    f = lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs)  # noqa: E731
    f = jit(f) if jitted else f
    c, ys = f(jnp.ones(2), jnp.zeros((0, 2)))
    np.testing.assert_allclose(c, [1.0, 1.0])
    assert ys.shape == (0, 2) and ys.dtype == np.float32


def test_scan_ys_none_and_weak_carry():
    c, ys = lax.scan(lambda c, x: (c + x, None), 0, jnp.ones(3))
    assert ys is None
    assert c.dtype == np.float32 and float(c) == 3.0  # the weak int carry was promoted
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.ones(3))
    assert not c.weak_type and ys.weak_type


def test_scan_jaxpr_and_lowering():
    def rnn(h, xs, w):
        return lax.scan(lambda h, x: (jnp.tanh(w @ h + x), h.sum()), h, xs)

    args = (jnp.ones(3), jnp.ones((5, 3)), jnp.ones((3, 3)))
    jaxpr = xjax.make_jaxpr(rnn)(*args)
    (eqn,) = jaxpr.eqns
    assert eqn.primitive.name == "scan"
    assert {k: v for k, v in eqn.params.items() if k != "jaxpr"} == dict(
        length=5, num_carry=1, num_consts=1, reverse=False, unroll=1)
    text = jit(rnn).lower(*args).as_text()
    assert "stablehlo.while" in text and "stablehlo.dynamic_update_slice" in text


def test_scan_unroll_params():
    def f(unroll):
        jaxpr = xjax.make_jaxpr(lambda: lax.scan(lambda c, x: (c + x, x), 0.0, jnp.ones(5),
                                                 unroll=unroll))()
        return jaxpr.eqns[-1].params["unroll"]

    assert f(2) == 2 and f(True) == 5 and f(False) == 1
    with pytest.raises(ValueError, match="`unroll` must be a `bool` or a non-negative `int`."):
        f(-1)


def test_eager_via_xla_agrees_with_numpy_impl():
    xs = {"a": _f32(4, 2), "b": _f32(4, 2, seed=1)}
    eager = lax.scan(_step, (jnp.zeros(2), 0), xs, reverse=True)
    with xjax.config.override(xjax_eager_via_xla=True):
        compiled = lax.scan(_step, (jnp.zeros(2), 0), xs, reverse=True)
    np.testing.assert_allclose(compiled[0][0], eager[0][0], rtol=1e-6)
    np.testing.assert_allclose(compiled[1]["h"], eager[1]["h"], rtol=1e-6)


def test_disable_jit_scans_in_python():
    with xjax.config.override(jax_disable_jit=True):
        c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
    assert float(c) == 3.0
    np.testing.assert_allclose(ys, [0.0, 0.0, 1.0])


# -- errors ----------------------------------------------------------------------------------

def test_carry_type_errors():
    with pytest.raises(TypeError) as info:
        lax.scan(lambda c, x: (c.astype(jnp.int32), x), 1.0, jnp.ones(3))
    assert str(info.value) == (
        "scan body function carry input and carry output must have equal types, but they "
        "differ:\n\nThe input carry c has type float32[] but the corresponding output carry "
        "component has type int32[], so the dtypes do not match.\n\nRevise the function so "
        "that all output types match the corresponding input types.")
    with pytest.raises(TypeError, match=r"float32\[2\], so the shapes do not match"):
        lax.scan(lambda c, x: (jnp.ones(2), x), 1.0, jnp.ones(3))
    with pytest.raises(TypeError) as info:
        lax.scan(lambda c, x: ((c, c), x), 1.0, jnp.ones(3))
    assert "must have the same pytree structure" in str(info.value)
    assert "The input carry c is a <class 'xjax._src.core.avals.ShapedArray'> but the " \
           "corresponding component of the carry output is a <class 'tuple'>, so their " \
           "Python types differ." in str(info.value)


def test_scan_argument_errors():
    with pytest.raises(TypeError, match=r"scan body output must be a pair, got ~float32\[\]."):
        lax.scan(lambda c, x: c, 0.0, jnp.ones(3))
    with pytest.raises(ValueError, match="scan got values with different leading axis sizes: "
                                         "3, 4."):
        lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match=r"scan got `length` argument of 4 which disagrees "
                                         r"with leading axis sizes \[3\]."):
        lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=4)
    with pytest.raises(ValueError, match="scan got no values to scan over and `length` not "
                                         "provided."):
        lax.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(TypeError, match="lax.scan: f argument should be callable."):
        lax.scan(None, 0.0, jnp.ones(3))


# -- differentiation -------------------------------------------------------------------------

def _rnn(h, xs, w):
    def step(h, x):
        h = jnp.tanh(w @ h + x)
        return h, jnp.sum(h * h)
    h, ys = lax.scan(step, h, xs)
    return h, ys


RNN_ARGS = (0.1 * jnp.ones(3), jnp.asarray(_f32(4, 3, seed=1)),
            jnp.asarray(_f32(3, 3, seed=2, scale=0.5)))


@pytest.mark.parametrize("jitted", [False, True])
def test_rnn_check_grads_second_order(jitted):
    f = jit(_rnn) if jitted else _rnn
    check_grads(f, RNN_ARGS, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("reverse", [False, True])
def test_grads_of_each_operand_kind(reverse):
    def f(c, xs, k):
        def step(c, x):
            return jnp.sin(c) * k + x, c * x
        c, ys = lax.scan(step, c, xs, reverse=reverse, unroll=2)
        return c + jnp.sum(ys)

    args = (jnp.float32(0.3), jnp.asarray(_f32(5)), jnp.float32(1.2))
    for nums in ((0,), (1,), (2,), (0, 1, 2)):
        def partial_f(*diff, nums=nums):
            full = list(args)
            for i, value in zip(nums, diff):
                full[i] = value
            return f(*full)

        check_grads(partial_f, [args[i] for i in nums], order=2, modes=("fwd", "rev"))


def test_grad_against_python_unrolled_loop():
    def looped(h, xs, w):
        total = 0.0
        for i in range(xs.shape[0]):
            h = jnp.tanh(w @ h + xs[i])
            total = total + jnp.sum(h * h)
        return jnp.sum(h) + total

    def scanned(h, xs, w):
        h, ys = _rnn(h, xs, w)
        return jnp.sum(h) + jnp.sum(ys)

    want = grad(looped, argnums=(0, 1, 2))(*RNN_ARGS)
    for fn in (scanned, jit(scanned)):
        got = grad(fn, argnums=(0, 1, 2))(*RNN_ARGS)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_grads_against_jax():
    jax = pytest.importorskip("jax")

    def theirs(h, xs, w):
        def step(h, x):
            h = jax.numpy.tanh(w @ h + x)
            return h, jax.numpy.sum(h * h)
        h, ys = jax.lax.scan(step, h, xs)
        return jax.numpy.sum(h) + jax.numpy.sum(ys)

    def mine(h, xs, w):
        h, ys = _rnn(h, xs, w)
        return jnp.sum(h) + jnp.sum(ys)

    np_args = [np.asarray(a) for a in RNN_ARGS]
    got = grad(mine, argnums=(0, 1, 2))(*np_args)
    want = jax.grad(theirs, argnums=(0, 1, 2))(*np_args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5, atol=1e-6)


def test_grad_through_jit_inside_scan_and_scan_inside_jit():
    inner = jit(lambda c, x: (jnp.sin(c) * x, c))

    def f(c, xs):
        c, ys = lax.scan(inner, c, xs)
        return c + jnp.sum(ys)

    xs = jnp.asarray(_f32(4, seed=3))
    g1, g2, g3 = grad(f)(0.5, xs), grad(jit(f))(0.5, xs), jit(grad(f))(0.5, xs)
    np.testing.assert_allclose(g1, g2, rtol=1e-6)
    np.testing.assert_allclose(g1, g3, rtol=1e-6)


def test_nested_control_flow_grads():
    def f(x):
        def step(c, k):
            c = lax.cond(k % 2 == 0, lambda c: jnp.sin(c) * x, lambda c: c * c + x, c)
            return c, c
        c, ys = lax.scan(step, x, jnp.arange(4))
        return c + jnp.sum(ys)

    check_grads(f, (jnp.float32(0.4),), order=2, modes=("fwd", "rev"))
    check_grads(jit(f), (jnp.float32(0.4),), order=2, modes=("fwd", "rev"))


def test_linearize_and_jvp():
    f = lambda h: jnp.sum(_rnn(h, *RNN_ARGS[1:])[1])  # noqa: E731
    out, f_jvp = xjax.linearize(f, RNN_ARGS[0])
    _, tangent = xjax.jvp(f, (RNN_ARGS[0],), (jnp.ones(3),))
    np.testing.assert_allclose(f_jvp(jnp.ones(3)), tangent, rtol=1e-5)


# -- vmap ------------------------------------------------------------------------------------

def _loop(f, *args, axes=None):
    axes = axes or [0] * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)])
            for i in range(n)]
    return xjax.tree_util.tree_map(lambda *v: np.stack([np.asarray(x) for x in v]), *outs)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (None, 0, None), (0, None, None),
                                     (None, None, 0), (None, 1, None)])
def test_vmap_against_a_loop(in_axes):
    h = _f32(2, 3, seed=4)
    xs = _f32(2, 4, 3, seed=5)
    w = _f32(2, 3, 3, seed=6, scale=0.5)
    args = [h, xs, w]
    args = [a[0] if ax is None else a for a, ax in zip(args, in_axes)]
    if in_axes[1] == 1:
        args[1] = np.moveaxis(xs, 0, 1)
    got = vmap(_rnn, in_axes=in_axes)(*args)
    want = _loop(_rnn, *args, axes=in_axes)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    got_jit = jit(vmap(_rnn, in_axes=in_axes))(*args)
    np.testing.assert_allclose(got_jit[1], want[1], rtol=1e-5, atol=1e-6)


def test_vmap_carry_batched_by_the_body():
    # the carry starts unbatched and becomes batched through the batched xs
    def f(xs):
        return lax.scan(lambda c, x: (c + x, c), 0.0, xs)

    xs = _f32(3, 4)
    got = vmap(f)(xs)
    want = _loop(f, xs)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_vmap_of_grad_and_grad_of_vmap():
    xs = _f32(3, 4, seed=7)

    def f(k, xs):
        c, ys = lax.scan(lambda c, x: (jnp.sin(c) * k + x, c * c), 0.2, xs)
        return c + jnp.sum(ys)

    ks = np.array([0.5, 1.0, 1.5], np.float32)
    per_example = vmap(grad(f), in_axes=(0, 0))(ks, xs)
    want = np.stack([np.asarray(grad(f)(k, x)) for k, x in zip(ks, xs)])
    np.testing.assert_allclose(per_example, want, rtol=1e-5)
    total = grad(lambda ks: jnp.sum(vmap(f)(ks, xs)))(ks)
    np.testing.assert_allclose(total, want, rtol=1e-5)


# -- map and associative_scan ----------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 5, 8])
def test_map(batch_size):
    xs = {"a": _f32(5, 2), "b": np.arange(5, dtype=np.int32)}

    def f(x):
        return jnp.sin(x["a"]) * x["b"], x["b"] + 1

    got = lax.map(f, xs, batch_size=batch_size)
    np.testing.assert_allclose(got[0], np.sin(xs["a"]) * xs["b"][:, None], rtol=1e-6)
    np.testing.assert_array_equal(got[1], xs["b"] + 1)
    jaxpr = xjax.make_jaxpr(lambda xs: lax.map(f, xs, batch_size=batch_size))(xs)
    assert "scan" in str(jaxpr) or (batch_size or 0) > 5


def test_map_grad():
    check_grads(lambda x: lax.map(jnp.sin, x), (jnp.asarray(_f32(4)),), order=2)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan(n, reverse):
    x = _f32(n, 3)
    got = lax.associative_scan(jnp.add, x, reverse=reverse)
    want = np.cumsum(x[::-1], 0)[::-1] if reverse else np.cumsum(x, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got_max = lax.associative_scan(jnp.maximum, x, axis=0)
    np.testing.assert_array_equal(got_max, np.maximum.accumulate(x, 0))


def test_associative_scan_pytree_and_axis():
    a, b = _f32(4, 5), _f32(4, 5, seed=1)

    def affine(x, y):  # composition of x -> a1 x + b1, then a2 x + b2
        return (x[0] * y[0], x[1] * y[0] + y[1])

    got = lax.associative_scan(affine, (a, b), axis=1)
    ra, rb = a[:, :1].copy(), b[:, :1].copy()
    want_a, want_b = [ra], [rb]
    for j in range(1, 5):
        ra, rb = ra * a[:, j:j + 1], rb * a[:, j:j + 1] + b[:, j:j + 1]
        want_a.append(ra)
        want_b.append(rb)
    np.testing.assert_allclose(got[0], np.concatenate(want_a, 1), rtol=1e-5)
    np.testing.assert_allclose(got[1], np.concatenate(want_b, 1), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="must have the same first dimension"):
        lax.associative_scan(affine, (a, b[:3]))


def test_loop_invariant_residuals_are_recomputed_not_stacked():
    def f(h, xs, w):
        def step(h, x):
            h = jnp.tanh(jnp.exp(w) * h + x)
            return h, h
        h, ys = lax.scan(step, h, xs)
        return jnp.sum(h) + jnp.sum(ys)

    args = (0.1 * jnp.ones(3), 0.3 * jnp.ones((4, 3)), jnp.array([0.1, -0.2, 0.3]))
    jaxpr = xjax.make_jaxpr(grad(f, argnums=(0, 2)))(*args)
    forward, backward = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    # exp(w) is not stacked by the forward scan: the backward scan computes it again (the
    # number of other stacked residuals depends on how tanh's jvp rule is written)
    assert "exp" in [e.primitive.name for e in backward.params["jaxpr"].eqns]
    assert sum(v.aval.shape == (4, 3) for v in forward.outvars) <= 4
    check_grads(f, args, order=2, modes=("fwd", "rev"))
