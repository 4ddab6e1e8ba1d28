"""``lax.reduce``: monoid computations use the dedicated reductions (jaxprs as JAX's); any
other computation binds the generic ``reduce`` primitive, checked against NumPy, under jit,
vmap and differentiation, and against JAX where it is installed."""

import re

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, lax, make_jaxpr, vmap
from xjax.test_util import check_grads

RNG = np.random.default_rng(0)


def _floats(*shape):
    return RNG.uniform(-2.0, 2.0, shape).astype(np.float32)


def _argmax_pair(a, b):
    """(value, index) pairs: the larger value wins; ties keep the lower index."""
    (av, ai), (bv, bi) = a, b
    pick = (av > bv) | ((av == bv) & (ai < bi))
    return lax.select(pick, av, bv), lax.select(pick, ai, bi)


def _argmax(x, axis):
    index = lax.broadcasted_iota(np.int32, x.shape, axis)
    return lax.reduce((x, index), (-np.inf, 0), _argmax_pair, (axis,))


def _primitives(fun, *args):
    return [e.primitive.name for e in make_jaxpr(fun)(*args).jaxpr.eqns]


# -- values against NumPy --------------------------------------------------------------------

MONOIDS = [
    ("sum", lax.add, 0.0, lambda a, b: a + b, np.sum),
    ("prod", lax.mul, 1.0, lambda a, b: a * b, np.prod),
    ("max", lax.max, -np.inf, lambda a, b: lax.max(a, b), np.max),
    ("min", lax.min, np.inf, lambda a, b: lax.min(a, b), np.min),
]


@pytest.mark.parametrize("name,monoid,init,lam,np_fun", MONOIDS, ids=[m[0] for m in MONOIDS])
@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2), (2, 1, 0)])
def test_monoid_and_lambda_agree_with_numpy(name, monoid, init, lam, np_fun, dims):
    x = _floats(3, 4, 2)
    want = np_fun(x, axis=dims)
    by_monoid = lax.reduce(x, init, monoid, dims)
    by_lambda = lax.reduce(x, init, lam, dims)
    assert _primitives(lambda v: lax.reduce(v, init, monoid, dims), x) == [f"reduce_{name}"]
    assert _primitives(lambda v: lax.reduce(v, init, lam, dims), x) == ["reduce"]
    for got in (by_monoid, by_lambda, jit(lambda v: lax.reduce(v, init, lam, dims))(x)):
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int16])
def test_integer_lambdas_are_exact(dtype):
    x = RNG.integers(0, 50, (5, 6)).astype(dtype)
    want_sum = np.sum(x, axis=1, dtype=dtype)
    want_poly = np.zeros(5, dtype)
    for j in range(6):  # a + b + a b, wrapping like XLA
        with np.errstate(over="ignore"):
            want_poly = (want_poly + x[:, j] + want_poly * x[:, j]).astype(dtype)
    zero = np.zeros((), dtype)
    poly = lambda a, b: a + b + a * b  # noqa: E731
    for f in (lambda v: lax.reduce(v, zero, lambda a, b: a + b, (1,)),
              lambda v: lax.reduce(v, zero, poly, (1,))):
        eager, jitted = f(x), jit(f)(x)
        assert eager.dtype == dtype and jitted.dtype == dtype
        np.testing.assert_array_equal(jitted, eager)
    np.testing.assert_array_equal(lax.reduce(x, zero, lambda a, b: a + b, (1,)), want_sum)
    np.testing.assert_array_equal(lax.reduce(x, zero, poly, (1,)), want_poly)


@pytest.mark.parametrize("axis", [0, 1])
def test_two_operand_argmax_agrees_with_numpy(axis):
    x = RNG.integers(0, 4, (6, 7)).astype(np.float32)  # many ties: the first index wins
    values, index = _argmax(jnp.asarray(x), axis)
    np.testing.assert_array_equal(index, np.argmax(x, axis=axis))
    np.testing.assert_array_equal(values, np.max(x, axis=axis))
    assert index.dtype == np.int32
    jit_values, jit_index = jit(_argmax, static_argnums=1)(x, axis)
    np.testing.assert_array_equal(jit_index, index)
    np.testing.assert_array_equal(jit_values, values)


def test_pytree_operands_keep_the_computations_structure():
    x, y = _floats(4, 3), _floats(4, 3)

    def comp(a, b):
        return {"s": a["s"] + b["s"], "p": a["p"] * b["p"]}

    out = lax.reduce({"s": x, "p": y}, {"s": 0.0, "p": 1.0}, comp, (0,))
    assert set(out) == {"s", "p"}
    np.testing.assert_allclose(out["s"], x.sum(0), rtol=1e-5)
    np.testing.assert_allclose(out["p"], y.prod(0), rtol=1e-5)


def test_empty_and_no_dimensions():
    poly = lambda a, b: a + b + a * b  # noqa: E731
    empty = np.zeros((0, 3), np.float32)
    for f in (lambda v: lax.reduce(v, 0.5, poly, (0,)),
              jit(lambda v: lax.reduce(v, 0.5, poly, (0,)))):
        np.testing.assert_array_equal(f(empty), np.full(3, 0.5, np.float32))
    x = _floats(2, 3)
    for f in (lambda v: lax.reduce(v, 0.0, poly, ()), jit(lambda v: lax.reduce(v, 0.0, poly, ()))):
        np.testing.assert_array_equal(f(x), x)


def test_computation_closing_over_an_array():
    weights = jnp.asarray(np.array([0.5, 2.0], np.float32))

    def comp(a, b):
        return a + b + weights[0] * a * b  # (1 + a/2)(1 + b/2) stays associative

    x = _floats(5) * 0.3
    want = (np.prod(1 + 0.5 * x.astype(np.float64)) - 1) / 0.5
    for f in (lambda v: lax.reduce(v, 0.0, comp, (0,)), jit(lambda v: lax.reduce(v, 0.0, comp,
                                                                                  (0,)))):
        np.testing.assert_allclose(f(x), want, rtol=1e-5)


def test_weak_types_follow_jax():
    poly = lambda a, b: a + b + a * b  # noqa: E731
    assert lax.reduce(3.0, 0.0, poly, ()).aval.weak_type
    assert lax.reduce(3.0, 0.0, lax.add, ()).aval.weak_type
    assert not lax.reduce(3.0, np.float32(0), poly, ()).aval.weak_type
    assert not lax.reduce(3.0, np.float32(0), lax.add, ()).aval.weak_type
    assert not lax.reduce(_floats(3), 0.0, poly, (0,)).aval.weak_type


# -- which primitive: JAX's _get_monoid_reducer ----------------------------------------------

def test_monoid_jaxprs():
    x = jnp.ones((3, 2))
    text = str(make_jaxpr(lambda v: lax.reduce(v, 0.0, lax.add, (0,)))(x))
    assert "reduce_sum[axes=(0,) out_sharding=None]" in text
    assert "reduce_prod[axes=(0, 1)]" in str(
        make_jaxpr(lambda v: lax.reduce(v, 1.0, lax.mul, (0, 1)))(x))
    assert "reduce_max[axes=(1,)]" in str(
        make_jaxpr(lambda v: lax.reduce(v, -np.inf, lax.max, (1,)))(x))
    b = jnp.array([True, False])
    assert _primitives(lambda v: lax.reduce(v, True, lax.bitwise_and, (0,)), b) == ["reduce_and"]
    i = jnp.arange(4)
    assert _primitives(lambda v: lax.reduce(v, 0, lax.bitwise_xor, (0,)), i) == ["reduce_xor"]
    assert _primitives(lambda v: lax.reduce(v, -1, lax.bitwise_and, (0,)), i) == ["reduce_and"]
    # not the identity, a float bitwise init, or a traced init: the generic primitive
    assert _primitives(lambda v: lax.reduce(v, 1.0, lax.add, (0,)), x) == ["reduce"]
    assert _primitives(lambda v, c: lax.reduce(v, c, lax.add, (0,)), x, 0.0) == ["reduce"]
    assert lax.reduce(x, 1.0, lax.add, (0,)).tolist() == [4.0, 4.0]


def test_generic_jaxpr_prints_as_jax():
    text = str(make_jaxpr(lambda v: lax.reduce(v, 0.0, lambda a, b: a + b, (0,)))(jnp.ones(3)))
    assert re.search(r"computation=<function test_generic_jaxpr_prints_as_jax\.<locals>\."
                     r"\S*<lambda> at 0xX+>\n", text)
    assert "dimensions=(0,)" in text
    assert "jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = add c d in (e,) }" in text
    assert text.rstrip().endswith("] a 0.0:f32[]\n  in (b,) }")


# -- transformations -------------------------------------------------------------------------

def _poly_sum(x):
    return lax.reduce(x, 0.0, lambda a, b: a + b + a * b, (0, 2))


@pytest.mark.parametrize("in_axes", [0, 1, -1])
def test_vmap_agrees_with_a_loop(in_axes):
    xs = _floats(3, 4, 2, 5) * 0.2
    got = vmap(_poly_sum, in_axes=in_axes)(xs)
    want = np.stack([_poly_sum(np.take(xs, i, axis=in_axes)) for i in range(xs.shape[in_axes])])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jit(vmap(_poly_sum, in_axes=in_axes))(xs), want, rtol=1e-5,
                               atol=1e-6)


def test_vmap_two_operands_one_unmapped():
    x = RNG.integers(0, 4, (3, 5)).astype(np.float32)
    index = np.arange(5, dtype=np.int32)
    f = vmap(lambda v, i: lax.reduce((v, i), (-np.inf, 0), _argmax_pair, (0,)),
             in_axes=(0, None))
    values, got = f(x, index)
    np.testing.assert_array_equal(got, np.argmax(x, axis=1))
    np.testing.assert_array_equal(values, np.max(x, axis=1))


def test_vmap_of_batched_init_raises():
    with pytest.raises(NotImplementedError, match="batched init values"):
        vmap(lambda c: lax.reduce(jnp.ones(3), c, lambda a, b: a * b, (0,)))(jnp.ones(2))


@pytest.mark.parametrize("shape,dims", [((5,), (0,)), ((3, 4, 2), (0, 2)), ((3, 4), (1,)),
                                        ((2, 3), ())])
def test_check_grads_of_an_associative_computation(shape, dims):
    x = jnp.asarray(_floats(*shape) * 0.3)

    def f(v):
        return lax.reduce(v, 0.0, lambda a, b: a + b + a * b, dims)

    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    check_grads(jit(f), (x,), order=1, modes=("fwd", "rev"))
    want = np.prod(1 + np.asarray(x, np.float64), axis=dims, keepdims=True) / (1 + np.asarray(x))
    np.testing.assert_allclose(grad(lambda v: f(v).sum())(x), np.broadcast_to(want, shape),
                               rtol=1e-5)


def test_grad_of_the_argmax_value_picks_the_maximum():
    x = jnp.asarray(RNG.permutation(12).astype(np.float32).reshape(3, 4))
    g = grad(lambda v: _argmax(v, 1)[0].sum())(x)
    want = (np.asarray(x) == np.asarray(x).max(1, keepdims=True)).astype(np.float32)
    np.testing.assert_array_equal(g, want)
    check_grads(lambda v: _argmax(v, 0)[0], (x,), order=1, modes=("fwd", "rev"))


def test_tangent_of_an_init_value_raises_as_in_jax():
    f = lambda c: lax.reduce(jnp.ones(3), c, lambda a, b: a * b, (0,))  # noqa: E731
    with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
        xjax.jvp(f, (1.0,), (1.0,))
    with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
        grad(f)(1.0)


# -- errors ----------------------------------------------------------------------------------

def test_errors():
    x = jnp.ones((2, 3))
    f = lambda a, b: a * b + 1  # noqa: E731
    with pytest.raises(ValueError, match="same tree structure as init_values"):
        lax.reduce((x, x), 0.0, f, (0,))
    with pytest.raises(ValueError, match=re.escape("non-scalar initial value: [(2,)]")):
        lax.reduce(x, jnp.zeros(2), f, (0,))
    with pytest.raises(TypeError, match="operand dtypes should match corresponding initial"):
        lax.reduce(x, jnp.int32(0), f, (0,))
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        lax.reduce(x, 0.0, f, (2,))
    with pytest.raises(ValueError, match="Duplicate reduction dimension: 0"):
        lax.reduce(x, 0.0, f, (0, 0))
    with pytest.raises(ValueError, match="Out-of-bounds dimension -1"):
        lax.reduce(x, 0.0, f, (-1,))
    with pytest.raises(ValueError, match="compatible shapes"):
        lax.reduce((x, x.T), (0.0, 0.0), lambda a, b: (a[0] * b[0], a[1] * b[1]), (0,))
    with pytest.raises(ValueError, match="must produce 2 tensors, but produces 1"):
        lax.reduce((x, x), (0.0, 0.0), lambda a, b: a[0], (0,))
    with pytest.raises(ValueError, match="'tensor<f32>' vs 'tensor<i32>'"):
        lax.reduce(x, 0.0, lambda a, b: (a * b).astype(jnp.int32), (0,))
    with pytest.raises(NotImplementedError, match="can't close over Tracers"):
        jit(lambda v, c: lax.reduce(v, 0.0, lambda a, b: a * b + c, (0,)))(x, 2.0)


# -- against JAX -----------------------------------------------------------------------------

def _normalized(text):
    return re.sub(r"computation=<function [^>]*>", "computation=<function>", text)


def test_jaxprs_match_jax():
    jax = pytest.importorskip("jax")
    plus = lambda a, b: a + b  # noqa: E731 (one function for both: same printed name)
    x = np.ones((2, 3), np.float32)
    for fn in (lambda L: lambda v: L.reduce(v, 0.0, plus, (0,)),
               lambda L: lambda v: L.reduce(v, 0.0, L.add, (0, 1)),
               lambda L: lambda v: L.reduce(v, 1.0, L.mul, (1,)),
               lambda L: lambda v: L.reduce(v, -np.inf, L.max, (1,)),
               lambda L: lambda v: L.reduce(v, 1.0, L.add, (1,))):
        mine = str(make_jaxpr(fn(lax))(x))
        theirs = str(jax.make_jaxpr(fn(jax.lax))(x))
        assert mine.strip() == theirs.strip()


def test_values_and_grads_match_jax():
    jax = pytest.importorskip("jax")

    def poly(a, b):
        return a + b + a * b

    def make(L):
        return lambda v: L.reduce(v, 0.0, poly, (0, 2))

    x = _floats(5, 3, 3) * 0.3  # odd lengths: the jvp's halving pads with the init value
    np.testing.assert_allclose(make(lax)(x), jax.jit(make(jax.lax))(x), rtol=1e-5)
    np.testing.assert_allclose(grad(lambda v: make(lax)(v).sum())(x),
                               jax.grad(lambda v: make(jax.lax)(v).sum())(x), rtol=1e-5)
    _, t_mine = xjax.jvp(make(lax), (x,), (np.ones_like(x),))
    _, t_theirs = jax.jvp(make(jax.lax), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t_mine, t_theirs, rtol=1e-5)

    def pair(a, b):
        (av, ai), (bv, bi) = a, b
        pick = (av > bv) | ((av == bv) & (ai < bi))
        return jnp.where(pick, av, bv), jnp.where(pick, ai, bi)

    def jpair(a, b):
        (av, ai), (bv, bi) = a, b
        pick = (av > bv) | ((av == bv) & (ai < bi))
        return jax.numpy.where(pick, av, bv), jax.numpy.where(pick, ai, bi)

    y = RNG.integers(0, 3, (4, 6)).astype(np.float32)
    idx = np.broadcast_to(np.arange(6, dtype=np.int32), (4, 6))
    mine = lax.reduce((y, idx), (-np.inf, 0), pair, (1,))
    theirs = jax.lax.reduce((y, idx), (-np.inf, 0), jpair, (1,))
    for m, t in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(m, t)
        assert m.dtype == t.dtype


def test_errors_match_jax():
    jax = pytest.importorskip("jax")
    x = np.ones((2, 3), np.float32)
    f = lambda a, b: a * b + 1  # noqa: E731
    cases = [
        lambda L: L.reduce((x, x), 0.0, f, (0,)),
        lambda L: L.reduce(x, np.zeros(2, np.float32), f, (0,)),
        lambda L: L.reduce(x, np.int32(0), f, (0,)),
        lambda L: L.reduce(x, 0.0, f, (2,)),
        lambda L: L.reduce(x, 0.0, f, (0, 0)),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(jax.lax)
        with pytest.raises(type(theirs.value)) as mine:
            case(lax)
        if type(theirs.value) is not ValueError or "verifier" not in str(theirs.value):
            assert str(mine.value) == str(theirs.value)
