"""The derivative primitives of max/min pooling (select_and_gather_add,
select_and_scatter_add) and the general select_and_scatter: NumPy references, finite
differences, eager/jit/vmap/grad, and JAX's jaxprs and values (ties included)."""

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.higher_order.reduce_window import select_and_scatter


def _pool(kind, dims, strides, padding, base=None, wdil=None):
    computation, init = (lax.max, -np.inf) if kind == "max" else (lax.min, np.inf)

    def f(x):
        return lax.reduce_window(x, np.array(init, x.dtype), computation, dims, strides,
                                 padding, base, wdil)
    return f


def _reference_grad(x, ct, kind, dims, strides):
    """VALID pooling: each window's cotangent goes to its first extreme element."""
    out = np.zeros_like(x)
    pick = np.argmax if kind == "max" else np.argmin
    for i in range(ct.shape[0]):
        for j in range(ct.shape[1]):
            window = x[i * strides[0]:i * strides[0] + dims[0],
                       j * strides[1]:j * strides[1] + dims[1]]
            a, b = np.unravel_index(pick(window), window.shape)
            out[i * strides[0] + a, j * strides[1] + b] += ct[i, j]
    return out


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("jit", [False, True])
def test_grad_matches_numpy_reference_with_ties(kind, jit):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, (6, 7)).astype(np.float32)  # many ties
    dims, strides = (3, 2), (1, 2)
    f = _pool(kind, dims, strides, "VALID")
    ct = rng.standard_normal(f(x).shape).astype(np.float32)
    vjp = (lambda x, ct: xjax.vjp(f, x)[1](ct)[0])
    got = (xjax.jit(vjp) if jit else vjp)(x, ct)
    np.testing.assert_allclose(got, _reference_grad(x, ct, kind, dims, strides), rtol=1e-6)


@pytest.mark.parametrize("config", [((2, 2), (2, 2), "VALID"), ((3, 2), (1, 1), "SAME"),
                                    ((2, 3), (1, 2), ((1, 1), (0, 1)))])
def test_jvp_and_vjp_against_finite_differences(config):
    from xjax._src.testing.check_grads import check_grads
    rng = np.random.default_rng(1)
    x = (rng.permutation(30).reshape(5, 6) * 0.5).astype(np.float32)  # no ties
    check_grads(_pool("max", *config), (x,), order=2, modes=("fwd", "rev"))
    check_grads(_pool("min", *config), (x,), order=1, modes=("fwd", "rev"))


def test_window_dilation_vjp_beyond_jax_is_adjoint_of_jvp():
    """JAX raises for window dilation; xjax transposes by taps: <ct, J t> = <J^T ct, t>."""
    rng = np.random.default_rng(2)
    f = _pool("max", (2, 2), (1, 2), ((1, 0), (0, 1)), (2, 1), (2, 2))
    x = rng.standard_normal((4, 5)).astype(np.float32)
    x[0, :3] = 1.0  # ties too
    t = rng.standard_normal(x.shape).astype(np.float32)
    out, jt = xjax.jvp(f, (x,), (t,))
    ct = rng.standard_normal(out.shape).astype(np.float32)
    (jct,) = xjax.vjp(f, x)[1](ct)
    np.testing.assert_allclose(np.vdot(ct, jt), np.vdot(jct, t), rtol=1e-5)


def test_vmap_of_grad_matches_loop():
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((3, 5, 6)).astype(np.float32)
    g = xjax.grad(lambda x: _pool("max", (2, 2), (2, 1), "SAME")(x).sum())
    batched = xjax.vmap(g)(xs)
    np.testing.assert_array_equal(batched, np.stack([g(x) for x in xs]))
    jvp = xjax.vmap(lambda x, t: xjax.jvp(_pool("min", (2, 3), (1, 1), "VALID"), (x,),
                                          (t,))[1], in_axes=(0, None))
    t = rng.standard_normal((5, 6)).astype(np.float32)
    want = [xjax.jvp(_pool("min", (2, 3), (1, 1), "VALID"), (x,), (t,))[1] for x in xs]
    np.testing.assert_array_equal(jvp(xs, t), np.stack(want))


def test_unsupported_select_prim_raises():
    x = np.ones((4,), np.float32)
    with pytest.raises(TypeError, match="select_prim"):
        lax.select_and_scatter_add_p.bind(x[:2], x, select_prim=lax.eq_p,
                                          window_dimensions=(2,), window_strides=(2,),
                                          padding=((0, 0),))


def test_general_select_and_scatter():
    x = np.array([[1., 5., 2.], [4., 3., 0.], [7., 1., 8.]], np.float32)
    s = np.array([[10., 20.], [30., 40.]], np.float32)

    def f(x, s):
        return select_and_scatter(x, lax.ge, (2, 2), (1, 1), ((0, 0), (0, 0)), s,
                                  np.float32(1), lax.mul)
    want = np.ones((3, 3), np.float32)
    want[0, 1] = 10 * 20
    want[2, 0], want[2, 2] = 30, 40
    np.testing.assert_array_equal(f(x, s), want)
    np.testing.assert_array_equal(xjax.jit(f)(x, s), want)
    with pytest.raises(NotImplementedError, match="padding"):
        select_and_scatter(x, lax.ge, (2, 2), (1, 1), ((1, 0), (0, 0)),
                           np.ones((3, 2), np.float32), np.float32(0), lax.add)


# -- JAX differential tests --

_CONFIGS = [((2, 2), (2, 2), "VALID", None, None), ((3, 2), (1, 1), "SAME", None, None),
            ((2, 3), (1, 2), ((1, 2), (0, 1)), None, None),
            ((2, 2), (2, 1), ((1, 0), (2, 1)), (2, 1), None),
            ((2, 2), (1, 1), "VALID", None, (1, 2))]


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("config", _CONFIGS, ids=[str(i) for i in range(len(_CONFIGS))])
def test_against_jax_with_ties_nans_and_infs(kind, config):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    identity = -np.inf if kind == "max" else np.inf
    ours = _pool(kind, *config)
    computation = jax.lax.max if kind == "max" else jax.lax.min

    def theirs(x):
        return jax.lax.reduce_window(x, np.array(identity, x.dtype), computation, *config)

    their_jvp = jax.jit(lambda x, t: jax.jvp(theirs, (x,), (t,))[1])
    their_vjp = jax.jit(lambda x, ct: jax.vjp(theirs, x)[1](ct)[0])
    our_jvp = xjax.jit(lambda x, t: xjax.jvp(ours, (x,), (t,))[1])
    our_vjp = xjax.jit(lambda x, ct: xjax.vjp(ours, x)[1](ct)[0])
    cases = [(np.float32, v) for v in ([0., 1., 2.], [identity, 1., -identity],
                                       [np.nan, 0., 1.])]
    cases += [(np.float16, [0., 1., 2.]), (xjax.numpy.bfloat16, [0., 1., 2.])]
    for dtype, values in cases:
        x = rng.choice(values, (5, 6)).astype(dtype)
        t = rng.standard_normal(x.shape).astype(dtype)
        want_t = their_jvp(x, t)
        np.testing.assert_array_equal(np.asarray(our_jvp(x, t), np.float64),
                                      np.asarray(want_t, np.float64))
        if config[4] is not None:
            continue  # JAX has no VJP with window dilation
        ct = rng.standard_normal(want_t.shape).astype(dtype)
        want = their_vjp(x, ct)
        for got in (xjax.vjp(ours, x)[1](ct)[0], our_vjp(x, ct)):
            np.testing.assert_array_equal(np.asarray(got, np.float64),
                                          np.asarray(want, np.float64))


def test_eager_jvp_without_ties_matches_jax():
    """Eager select_and_gather_add is a row-major NumPy fold; without ties it equals XLA's
    (with ties, XLA's order depends on its passes: jit matches JAX there, as tested above)."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(5)
    for config in _CONFIGS:
        x = (rng.permutation(30).reshape(5, 6) * 0.5).astype(np.float32)
        t = rng.standard_normal(x.shape).astype(np.float32)
        theirs = jax.jvp(lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, *config),
                         (x,), (t,))[1]
        np.testing.assert_array_equal(xjax.jvp(_pool("max", *config), (x,), (t,))[1], theirs)


@pytest.mark.parametrize("transform", ["grad", "jvp", "grad2"])
def test_jaxpr_text_matches_jax(transform):
    jax = pytest.importorskip("jax")
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)

    def program(api, L, J):
        def pool(x):
            return L.reduce_window(x, -J.inf, L.max, (2, 2), (2, 2), "VALID").sum()
        if transform == "grad":
            return api.make_jaxpr(api.grad(pool))(x)
        if transform == "jvp":
            return api.make_jaxpr(lambda x, t: api.jvp(pool, (x,), (t,)))(x, x)
        assert transform == "grad2"
        return api.make_jaxpr(api.grad(lambda x: api.grad(pool)(x).sum()))(x)

    want = str(program(jax, jax.lax, jax.numpy))
    got = str(program(xjax, lax, xjax.numpy))
    assert got == want
