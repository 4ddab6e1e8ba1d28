"""lax.while_loop and lax.fori_loop: values against Python loops, eager and jitted; JAX's
errors; forward-mode derivatives (and JAX's error for reverse mode); fori_loop with static
bounds differentiated in reverse to second order; vmap, with batched predicates."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, jvp, lax, vmap
from xjax._src.higher_order.loops import REVERSE_MODE_ERROR
from xjax._src.testing.check_grads import check_grads


def _collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def _collatz(n):
    def body(c):
        n, steps = c
        n = lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1

    return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]


@pytest.mark.parametrize("jitted", [False, True])
def test_while_against_python(jitted):
    f = jit(_collatz) if jitted else _collatz
    for n in (1, 6, 7, 27):
        assert int(f(jnp.int32(n))) == _collatz_steps(n)


def test_while_pytree_carry_and_closures():
    scale = jnp.array([1.0, 2.0])

    def f(x):
        def body(c):
            return {"x": c["x"] * 2.0 + scale, "i": c["i"] + 1}
        return lax.while_loop(lambda c: c["i"] < 3, body, {"x": x, "i": 0})

    out = jit(f)(jnp.zeros(2))
    np.testing.assert_allclose(out["x"], [7.0, 14.0])
    assert int(out["i"]) == 3


def test_while_weak_carry_is_promoted():
    out = lax.while_loop(lambda c: c < 10, lambda c: c + 1.5, 0)
    assert out.dtype == np.float32 and float(out) == 10.5
    weak = lax.while_loop(lambda c: c < 10, lambda c: c * 2, 1)
    assert weak.weak_type and int(weak) == 16


def test_while_lowers_to_stablehlo_while():
    f = jit(lambda x: lax.while_loop(lambda c: c < 100.0, lambda c: c * 2.0, x))
    assert "stablehlo.while" in f.lower(1.0).as_text()
    assert float(f(1.0)) == 128.0
    assert float(f(200.0)) == 200.0


def test_while_errors():
    with pytest.raises(TypeError) as info:
        lax.while_loop(lambda c: c < 10, lambda c: (c + 1).astype(jnp.float32), jnp.int32(0))
    assert str(info.value) == (
        "while_loop body function carry input and carry output must have equal types, but "
        "they differ:\n\nThe input carry c has type int32[] but the corresponding output "
        "carry component has type float32[], so the dtypes do not match.\n\nRevise the "
        "function so that all output types match the corresponding input types.")
    with pytest.raises(TypeError, match=r"input carry c has type float32\[2\] but the "
                                        r"corresponding output carry component has type "
                                        r"float32\[3\], so the shapes do not match"):
        lax.while_loop(lambda c: c.sum() < 10, lambda c: jnp.ones(3), jnp.ones(2))
    with pytest.raises(TypeError, match="must have the same pytree structure"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: c[0] + 1, (1, 2))
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, but got "
                                        r"output type\(s\) \[ShapedArray\(int32\[\], "
                                        r"weak_type=True\)\]\."):
        lax.while_loop(lambda c: c, lambda c: c - 1, 3)
    with pytest.raises(TypeError, match=r"output type\(s\) \[ShapedArray\(bool\[2\]\)\]"):
        lax.while_loop(lambda c: c < 3, lambda c: c - 1, jnp.ones(2))
    with pytest.raises(TypeError, match="body_fun and cond_fun arguments should be callable"):
        lax.while_loop(None, lambda c: c, 1)


def test_while_carry_component_named_by_path():
    with pytest.raises(TypeError, match=r"The input carry component c\[1\] has type int32\[\]"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5), (0, jnp.int32(1)))


def test_disable_jit_runs_in_python():
    with xjax.config.override(jax_disable_jit=True):
        assert int(lax.while_loop(lambda c: c < 5, lambda c: c + 2, 0)) == 6
        assert int(lax.fori_loop(0, 4, lambda i, c: c + i, 0)) == 6


# -- fori_loop -------------------------------------------------------------------------------

def test_seed_fori_loop_and_iterator():
    array = jnp.arange(10)
    assert int(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0)) == 45
    iterator = iter(range(10))
    with pytest.warns(xjax.errors.ImpureFunctionWarning, match="'iterator'"):
        assert int(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0)) == 0
    assert next(iterator) == 1  # the body was traced once


def test_fori_static_bounds_is_a_scan_traced_bounds_a_while():
    static = xjax.make_jaxpr(lambda x: lax.fori_loop(0, 10, lambda i, c: c + i * x, 0.0))(1.0)
    assert [e.primitive.name for e in static.eqns] == ["scan"]
    assert static.eqns[0].params["length"] == 10
    dynamic = xjax.make_jaxpr(lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i * x, 0.0))
    assert [e.primitive.name for e in dynamic(1.0, 3).eqns] == ["while"]


@pytest.mark.parametrize("jitted", [False, True])
def test_fori_values(jitted):
    def f(x, n):
        return lax.fori_loop(2, n, lambda i, c: c * x + i, 1.0)

    def ref(x, n):
        c = 1.0
        for i in range(2, n):
            c = c * x + i
        return c

    g = jit(f) if jitted else f
    for n in (0, 2, 3, 7):
        np.testing.assert_allclose(g(1.5, n), ref(1.5, n), rtol=1e-6)
    np.testing.assert_allclose(lax.fori_loop(2, 7, lambda i, c: c * 1.5 + i, 1.0), ref(1.5, 7),
                               rtol=1e-6)


def test_fori_bounds_dtypes():
    with pytest.raises(TypeError, match="lower and upper arguments to fori_loop must have "
                                        "equal types, got float32 and int32"):
        lax.fori_loop(0.0, 3, lambda i, c: c + i, 0.0)
    out = jit(lambda n: lax.fori_loop(jnp.int16(0), n, lambda i, c: c + i, jnp.int16(0)))
    assert int(out(jnp.int16(4))) == 6
    with pytest.raises(ValueError, match="Can only use `unroll` in `fori_loop` if the loop "
                                         "bounds are statically known."):
        jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0, unroll=2))(3)
    assert int(lax.fori_loop(0, 5, lambda i, c: c + i, 0, unroll=2)) == 10


# -- differentiation -------------------------------------------------------------------------

def _while_fn(x):
    def body(c):
        v, i = c
        return jnp.sin(v) * x + 0.5 * v, i + 1
    return lax.while_loop(lambda c: c[1] < 4, body, (x, 0))[0]


def _while_ref(x):
    v = x
    for _ in range(4):
        v = np.sin(v) * x + 0.5 * v
    return v


@pytest.mark.parametrize("jitted", [False, True])
def test_while_forward_mode_second_order(jitted):
    f = jit(_while_fn) if jitted else _while_fn
    x = jnp.array([0.3, -0.7])
    np.testing.assert_allclose(f(x), _while_ref(np.asarray(x)), rtol=1e-6)
    check_grads(f, (x,), order=2, modes=("fwd",))


def test_while_jvp_value():
    out, tangent = jvp(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c * 2.0, x),
                       (1.0,), (1.0,))
    assert float(out) == 4.0 and float(tangent) == 4.0


def test_while_linearize_works():
    out, f_jvp = xjax.linearize(_while_fn, jnp.float32(0.3))
    eps = 1e-3
    numeric = (_while_ref(0.3 + eps) - _while_ref(0.3 - eps)) / (2 * eps)
    np.testing.assert_allclose(f_jvp(jnp.float32(1.0)), numeric, rtol=1e-3)


def test_while_reverse_mode_raises_jax_error():
    with pytest.raises(ValueError) as info:
        grad(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c * 2.0, x))(1.0)
    assert str(info.value) == REVERSE_MODE_ERROR
    assert REVERSE_MODE_ERROR == (
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop.")
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jit(grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x)))(1.0, 3)


def test_fori_static_bounds_reverse_mode():
    def f(x, n=3):
        return lax.fori_loop(0, n, lambda i, c: jnp.sin(c) * x + i, x)

    assert float(grad(f)(1.0)) == pytest.approx(float(grad(jit(f))(1.0)), rel=1e-6)
    check_grads(f, (jnp.array([0.3, 0.7]),), order=2, modes=("fwd", "rev"))
    check_grads(jit(f), (jnp.array([0.3, 0.7]),), order=2, modes=("fwd", "rev"))
    # concrete bounds under grad (not jit) are static too, as in JAX
    assert float(grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x))(1.0, 3)) == 8.0


def test_fori_grads_against_jax():
    jax = pytest.importorskip("jax")

    def mine(x):
        return lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * x + i * c, x)

    def theirs(x):
        return jax.lax.fori_loop(0, 5, lambda i, c: jax.numpy.sin(c) * x + i * c, x)

    for x in (0.3, -0.8):
        np.testing.assert_allclose(grad(mine)(x), jax.grad(theirs)(x), rtol=1e-5)
        np.testing.assert_allclose(grad(grad(mine))(x), jax.grad(jax.grad(theirs))(x),
                                   rtol=1e-4)


# -- vmap ------------------------------------------------------------------------------------

def test_vmap_batched_carry_unbatched_predicate():
    x = np.arange(4.0, dtype=np.float32)
    f = vmap(lambda v: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2.0 + 1.0, c[1] + 1),
                                      (v, 0))[0])
    np.testing.assert_allclose(f(x), x * 8 + 7)


def test_vmap_batched_predicate_runs_until_every_lane_is_done():
    x = np.array([1.0, 0.3, 5.0, 200.0], np.float32)
    f = vmap(lambda v: lax.while_loop(lambda c: c < 100.0, lambda c: c * 3.0, v))
    want = []
    for v in x:
        while v < 100.0:
            v = v * 3.0
        want.append(v)
    np.testing.assert_allclose(f(x), want, rtol=1e-6)
    np.testing.assert_allclose(jit(f)(x), want, rtol=1e-6)


def test_vmap_batched_upper_bound_of_fori():
    ns = np.array([0, 1, 4, 2], np.int32)
    f = vmap(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))
    np.testing.assert_array_equal(f(ns), [sum(range(n)) for n in ns])


def test_vmap_collatz_against_loop():
    ns = np.array([1, 6, 7, 27], np.int32)
    np.testing.assert_array_equal(vmap(_collatz)(ns), [_collatz_steps(int(n)) for n in ns])


def test_vmap_of_forward_derivative():
    x = np.array([0.3, -0.7, 1.1], np.float32)
    got = vmap(lambda v: jvp(_while_fn, (v,), (jnp.float32(1.0),))[1])(x)
    eps = 1e-3
    want = [(_while_ref(v + eps) - _while_ref(v - eps)) / (2 * eps) for v in x]
    np.testing.assert_allclose(got, want, rtol=2e-3)


def test_eager_calls_reuse_the_tracing_of_a_body_as_jax_does():
    # JAX caches loop bodies and branches by function: their Python side effects run once.
    traces = {"scan": 0, "while": 0, "cond": 0}

    def scan_body(carry, x):
        traces["scan"] += 1
        return carry + x, x * 2

    def while_cond(c):
        traces["while"] += 1
        return c < 3

    def branch(x):
        traces["cond"] += 1
        return x + 1

    for _ in range(3):
        carry, ys = xjax.lax.scan(scan_body, 0.0, jnp.arange(3.0))
        assert float(carry) == 3.0 and ys.tolist() == [0.0, 2.0, 4.0]
        assert int(xjax.lax.while_loop(while_cond, lambda c: c + 1, 0)) == 3
        assert float(xjax.lax.cond(True, branch, lambda x: -x, 1.0)) == 2.0
    assert traces == {"scan": 1, "while": 1, "cond": 1}
    # New input types trace again.
    xjax.lax.scan(scan_body, 0, jnp.arange(3))
    assert traces["scan"] == 2


def test_tracings_under_a_transformation_are_not_reused():
    # The body reads an enclosing jit's tracer: each trace of the jit must see its own.
    outer = {}

    def body(carry, x):
        return carry + outer["y"], x

    def program(y):
        outer["y"] = y
        return xjax.lax.scan(body, 0.0, jnp.arange(2.0))[0]

    assert float(xjax.jit(program)(1.0)) == 2.0
    assert float(xjax.jit(lambda y: program(y))(2.0)) == 4.0
