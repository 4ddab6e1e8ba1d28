"""Host callbacks: xjax.pure_callback, xjax.experimental.io_callback, xjax.debug.print and
xjax.debug.callback, eagerly and under jit, vmap, grad and control flow."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.experimental import io_callback
from xjax._src.runtime import XlaRuntimeError, ffi

pytestmark = pytest.mark.skipif(ffi.HOST_CALLBACK_TARGET not in ffi.ffi_targets("cpu"),
                                reason="the CPU plugin has no FFI extension")

both = pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])


def _maybe_jit(f, jit):
    return xjax.jit(f) if jit else f


def _spec(x):
    return xjax.ShapeDtypeStruct(x.shape, x.dtype)


# -- pure_callback --


@both
def test_pure_callback_values_and_argument_types(jit):
    seen = []

    def cb(a, scale):
        seen.append((type(a), a.shape, a.dtype))
        return np.sin(np.asarray(a)) * scale["s"]

    f = _maybe_jit(lambda x: xjax.pure_callback(cb, _spec(x), x, {"s": 3.0}) + x, jit)
    x = jnp.arange(4.0)
    np.testing.assert_allclose(f(x), np.sin(np.arange(4.0)) * 3 + np.arange(4.0), rtol=1e-6)
    assert seen and all(t is xjax.Array and s == (4,) and d == np.float32
                        for t, s, d in seen)


@both
def test_pure_callback_pytree_results_and_kwargs(jit):
    def cb(x, *, y):
        return {"sum": np.asarray(x + y), "n": np.int32(x.size)}

    spec = {"sum": xjax.ShapeDtypeStruct((2,), jnp.float32),
            "n": xjax.ShapeDtypeStruct((), jnp.int32)}
    f = _maybe_jit(lambda x, y: xjax.pure_callback(cb, spec, x, y=y), jit)
    out = f(jnp.array([1.0, 2.0]), jnp.array([10.0, 20.0]))
    np.testing.assert_array_equal(out["sum"], [11.0, 22.0])
    assert int(out["n"]) == 2 and out["n"].dtype == np.int32


@both
def test_pure_callback_wrong_result_is_an_error(jit):
    f = _maybe_jit(lambda x: xjax.pure_callback(lambda a: np.zeros(2, np.float32), _spec(x), x),
                   jit)
    with pytest.raises((RuntimeError, XlaRuntimeError), match="Incorrect output shape"):
        np.asarray(f(jnp.ones(3)))
    g = _maybe_jit(lambda x: xjax.pure_callback(lambda a: np.zeros(3, np.int32), _spec(x), x),
                   jit)
    with pytest.raises((RuntimeError, XlaRuntimeError), match="Incorrect output dtype"):
        np.asarray(g(jnp.ones(3)))


def test_pure_callback_exception_propagates_from_jit():
    def cb(a):
        raise ValueError("callback exploded")

    f = xjax.jit(lambda x: xjax.pure_callback(cb, _spec(x), x) * 2)
    with pytest.raises(XlaRuntimeError, match="callback exploded"):
        np.asarray(f(jnp.ones(3)))
    # the next call of a good program still works
    ok = xjax.jit(lambda x: xjax.pure_callback(lambda a: np.asarray(a) + 1, _spec(x), x))
    np.testing.assert_array_equal(ok(jnp.ones(3)), [2.0, 2.0, 2.0])


def test_pure_callback_rejects_64_bit_results_and_unknown_vmap_method():
    with pytest.raises(ValueError, match="64-bit"):
        xjax.pure_callback(lambda: np.zeros(2), xjax.ShapeDtypeStruct((2,), np.float64))
    with pytest.raises(ValueError, match="vmap_method"):
        xjax.pure_callback(lambda: np.zeros(2, np.float32),
                           xjax.ShapeDtypeStruct((2,), jnp.float32), vmap_method="bogus")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("method,shapes", [
    ("sequential", ((3,), (3,))),
    ("sequential_unrolled", ((3,), (3,))),
    ("expand_dims", ((4, 3), (1, 3))),
    ("broadcast_all", ((4, 3), (4, 3))),
    ("legacy_vectorized", ((4, 3), (3,))),
])
def test_pure_callback_vmap_methods(method, shapes, jit):
    seen = []

    def cb(a, b):
        seen.append((a.shape, b.shape))
        return np.asarray(a) * 2 + np.asarray(b)

    def f(x, y):
        shape = np.broadcast_shapes(x.shape, y.shape)
        return xjax.pure_callback(cb, xjax.ShapeDtypeStruct(shape, x.dtype), x, y,
                                  vmap_method=method)

    x = jnp.arange(12.0).reshape(4, 3)
    y = jnp.array([100.0, 200.0, 300.0])
    out = _maybe_jit(xjax.vmap(f, in_axes=(0, None)), jit)(x, y)
    np.testing.assert_array_equal(out, np.arange(12.0).reshape(4, 3) * 2 + [100, 200, 300])
    assert set(seen) == {shapes}
    if method.startswith("sequential"):
        assert len(seen) == 4
    # mapped over a non-leading axis
    out_t = xjax.vmap(f, in_axes=(1, None), out_axes=1)(x.T, y)
    np.testing.assert_array_equal(out_t, out.T)


def test_pure_callback_vmap_without_method_is_an_error():
    f = lambda x: xjax.pure_callback(lambda a: a, _spec(x), x)  # noqa: E731
    with pytest.raises(NotImplementedError, match="vmap_method=None"):
        xjax.vmap(f)(jnp.ones((2, 3)))


def test_pure_callback_is_not_differentiable():
    f = lambda x: xjax.pure_callback(lambda a: a, _spec(x), x).sum()  # noqa: E731
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        xjax.grad(f)(jnp.ones(3))
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        xjax.jvp(f, (jnp.ones(3),), (jnp.ones(3),))


def test_pure_callback_with_custom_jvp_differentiates():
    @xjax.custom_jvp
    def sin(x):
        return xjax.pure_callback(lambda a: np.sin(np.asarray(a)), _spec(x), x,
                                  vmap_method="expand_dims")

    @sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return sin(x), jnp.cos(x) * t

    g = xjax.jit(xjax.grad(lambda x: sin(x).sum()))(jnp.array([0.0, 1.0]))
    np.testing.assert_allclose(g, np.cos([0.0, 1.0]), rtol=1e-6)


def test_pure_callback_retrace_reuses_the_compiled_program():
    calls = []

    def cb(a):
        calls.append(1)
        return np.asarray(a)

    f = xjax.jit(lambda x: xjax.pure_callback(cb, _spec(x), x))
    f(jnp.ones(2))
    size = len(ffi._callbacks)
    f(jnp.ones(2))
    f(jnp.zeros(2))
    assert len(ffi._callbacks) == size
    assert len(calls) == 3


# -- io_callback --


@both
def test_io_callback_runs_in_program_order(jit):
    log = []

    def record(tag):
        def cb(v):
            log.append((tag, float(v)))
            return np.float32(len(log))
        return cb

    def f(x):
        spec = xjax.ShapeDtypeStruct((), jnp.float32)
        a = io_callback(record("a"), spec, x, ordered=True)
        b = io_callback(record("b"), spec, x * 2, ordered=True)
        c = io_callback(record("c"), spec, x * 3, ordered=True)
        return a + b + c

    for _ in range(5):
        log.clear()
        out = _maybe_jit(f, jit)(1.0)
        assert log == [("a", 1.0), ("b", 2.0), ("c", 3.0)]
        assert float(out) == 6.0


def test_io_callback_without_results_is_not_removed():
    log = []
    f = xjax.jit(lambda x: (io_callback(lambda v: log.append(float(v)), None, x), x + 1)[1])
    np.testing.assert_array_equal(f(1.0), 2.0)
    np.testing.assert_array_equal(f(5.0), 6.0)
    assert log == [1.0, 5.0]


def test_io_callback_in_loops_runs_every_iteration_in_order():
    log = []

    def f(x):
        def body(i, c):
            io_callback(lambda a, b: log.append((int(a), float(b))), None, i, c, ordered=True)
            return c + 1.0
        return lax.fori_loop(0, 4, body, x)

    assert float(xjax.jit(f)(10.0)) == 14.0
    assert log == [(0, 10.0), (1, 11.0), (2, 12.0), (3, 13.0)]


def test_io_callback_vmap_and_its_errors():
    seen = []

    def cb(a):
        seen.append(float(a))
        return np.asarray(a) + 1

    spec = xjax.ShapeDtypeStruct((), jnp.float32)
    out = xjax.jit(xjax.vmap(lambda x: io_callback(cb, spec, x)))(jnp.arange(3.0))
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    assert seen == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        xjax.vmap(lambda x: io_callback(cb, spec, x, ordered=True))(jnp.arange(3.0))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        xjax.grad(lambda x: io_callback(cb, spec, x))(1.0)


# -- debug.print and debug.callback --


@both
def test_debug_print_formats_values(jit, capsys):
    def f(x):
        xjax.debug.print("x={} y={y}", x, y=x * 2)
        xjax.debug.print("no placeholders", x)
        return x

    _maybe_jit(f, jit)(jnp.arange(3))
    assert capsys.readouterr().out == "x=[0 1 2] y=[0 2 4]\nno placeholders [0 1 2]\n"


def test_debug_print_under_jit_prints_each_call(capsys):
    f = xjax.jit(lambda x: (xjax.debug.print("v={}", x), x + 1)[1])
    f(1.0)
    f(2.0)
    assert capsys.readouterr().out == "v=1.0\nv=2.0\n"


def test_debug_print_in_scan_and_fori_loop(capsys):
    def scanned(xs):
        def body(c, x):
            xjax.debug.print("c={} x={}", c, x)
            return c + x, c
        return lax.scan(body, 0.0, xs)

    xjax.jit(scanned)(jnp.array([1.0, 2.0, 3.0]))
    assert capsys.readouterr().out == "c=0.0 x=1.0\nc=1.0 x=2.0\nc=3.0 x=3.0\n"

    def looped(x):
        def body(i, c):
            xjax.debug.print("i={i} c={c}", i=i, c=c)
            return c * 2
        return lax.fori_loop(0, 3, body, x)

    assert float(xjax.jit(looped)(1.0)) == 8.0
    assert capsys.readouterr().out == "i=0 c=1.0\ni=1 c=2.0\ni=2 c=4.0\n"


@both
def test_debug_print_under_vmap_prints_each_element(jit, capsys):
    f = xjax.vmap(lambda x, y: xjax.debug.print("{} {}", x, y), in_axes=(0, None))
    _maybe_jit(f, jit)(jnp.arange(3), jnp.float32(7))
    assert capsys.readouterr().out == "0 7.0\n1 7.0\n2 7.0\n"


def test_debug_print_under_grad_prints_primals(capsys):
    def f(x):
        xjax.debug.print("x={}", x)
        return x * x

    assert float(xjax.grad(f)(3.0)) == 6.0
    assert float(xjax.jit(xjax.grad(f))(4.0)) == 8.0
    assert capsys.readouterr().out == "x=3.0\nx=4.0\n"


def test_debug_print_ordered(capsys):
    def f(x):
        for i in range(5):
            xjax.debug.print("step {} {}", i, x, ordered=True)
        return x

    xjax.jit(f)(1.0)
    assert capsys.readouterr().out == "".join(f"step {i} 1.0\n" for i in range(5))


def test_debug_callback_under_jit_and_its_errors():
    got = []
    f = xjax.jit(lambda x: xjax.debug.callback(lambda v, w: got.append((np.asarray(v), w)), x,
                                               w=3))
    assert f(jnp.arange(2.0)) is None
    np.testing.assert_array_equal(got[0][0], [0.0, 1.0])
    assert got[0][1] == 3

    def bad(v):
        raise KeyError("debug callback failed here")

    with pytest.raises(XlaRuntimeError, match="debug callback failed here"):
        xjax.block_until_ready(xjax.jit(lambda x: (xjax.debug.callback(bad, x), x)[1])(1.0))


def test_prints_keep_program_order_across_loops_and_cond(capsys):
    def f(x):
        xjax.debug.print("before {}", x)
        y = lax.fori_loop(0, 2, lambda i, c: (xjax.debug.print("loop {}", i), c + 1)[1], x)
        xjax.debug.print("between")
        z = lax.cond(x > 0, lambda v: (xjax.debug.print("then {}", v), v)[1],
                     lambda v: (xjax.debug.print("else {}", v), v)[1], x)
        _, ys = lax.scan(lambda c, t: (xjax.debug.print("scan {}", t), (c, t))[1], 0.0,
                         jnp.arange(2.0))
        lax.while_loop(lambda c: c < 2, lambda c: (xjax.debug.print("while {}", c), c + 1)[1],
                       0)
        xjax.debug.print("end")
        return y + z + ys.sum()

    g = xjax.jit(f)
    for _ in range(3):
        g(1.0)
        assert capsys.readouterr().out == (
            "before 1.0\nloop 0\nloop 1\nbetween\nthen 1.0\nscan 0.0\nscan 1.0\nwhile 0\n"
            "while 1\nend\n")


def test_debug_print_two_call_form(capsys):
    xjax.jit(lambda x: xjax.debug.print(ordered=True)("two {x}", x=x))(jnp.int32(2))
    assert capsys.readouterr().out == "two 2\n"


def test_ordered_callbacks_in_a_nested_jit_stay_in_program_order():
    """The nested jit's call takes and returns the caller's token, so its callbacks are
    ordered with the caller's (independent callbacks: only the token orders them)."""
    log = []

    def record(tag):
        return lambda: log.append(tag)

    @xjax.jit
    def inner(x):
        io_callback(record("inner"), None, ordered=True)
        return x * 2

    @xjax.jit
    def outer(x):
        io_callback(record("before"), None, ordered=True)
        y = inner(inner(x))
        io_callback(record("after"), None, ordered=True)
        return y

    text = outer.lower(1.0).as_text()
    assert "(!stablehlo.token, tensor<f32>) -> (!stablehlo.token, tensor<f32>)" in text
    for _ in range(5):
        log.clear()
        np.testing.assert_array_equal(outer(1.0), 4.0)
        assert log == ["before", "inner", "inner", "after"]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_an_error_in_a_callback_is_a_jax_runtime_error(jit):
    # As JAX, eagerly too: Equinox's filter_pure_callback tests for RuntimeError.
    def fails(x):
        raise ValueError("boom")

    def f(x):
        return xjax.pure_callback(fails, xjax.ShapeDtypeStruct((), jnp.float32), x)

    with pytest.raises(xjax.errors.JaxRuntimeError, match="boom") as info:
        (xjax.jit(f) if jit else f)(jnp.float32(1.0))
    assert isinstance(info.value, RuntimeError)
