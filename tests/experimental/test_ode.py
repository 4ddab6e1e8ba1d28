"""xjax.experimental.ode.odeint: against closed-form solutions, finite differences, Python
loops (vmap), and JAX's odeint where JAX is installed."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.experimental.ode import odeint


def decay(y, t, k):
    return -k * y


def oscillator(state, t, omega):
    return {"x": state["v"], "v": -omega ** 2 * state["x"]}


def lotka_volterra(y, t, params):
    prey, predator = y[0], y[1]
    a, b, c, d = params
    return jnp.stack([a * prey - b * prey * predator, c * prey * predator - d * predator])


TS = np.linspace(0.0, 2.0, 5).astype(np.float32)


def test_exponential_decay_matches_closed_form():
    y0 = jnp.array([1.0, -2.0, 0.5])
    ys = odeint(decay, y0, jnp.asarray(TS), 1.3)
    assert ys.shape == (5, 3) and ys.dtype == np.float32
    want = np.asarray(y0)[None] * np.exp(-1.3 * TS.astype(np.float64))[:, None]
    np.testing.assert_allclose(np.asarray(ys), want, rtol=2e-6, atol=1e-7)
    jitted = xjax.jit(lambda y0, k: odeint(decay, y0, jnp.asarray(TS), k))(y0, 1.3)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(ys), rtol=1e-6)


def test_harmonic_oscillator_pytree_state():
    ts = jnp.linspace(0.0, 3.0, 7)
    ys = odeint(oscillator, {"x": 1.0, "v": 0.0}, ts, 2.0)
    assert set(ys) == {"x", "v"} and ys["x"].shape == (7,)
    t = np.asarray(ts, np.float64)
    np.testing.assert_allclose(np.asarray(ys["x"]), np.cos(2 * t), atol=2e-6)
    np.testing.assert_allclose(np.asarray(ys["v"]), -2 * np.sin(2 * t), atol=4e-6)


def test_gradients_of_decay_match_closed_form():
    y0, k = jnp.array([1.0, 2.0]), 1.3
    T = float(TS[-1])
    g_k, g_y0 = xjax.grad(lambda k, y0: odeint(decay, y0, jnp.asarray(TS), k)[-1].sum(),
                          argnums=(0, 1))(k, y0)
    np.testing.assert_allclose(float(g_k), -T * 3.0 * np.exp(-k * T), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g_y0), np.exp(-k * T) * np.ones(2), rtol=1e-5)
    # d/dt_i sum_j y(t_j): -k y(t_i) for the later times; moving t_0 shifts every later
    # value by +k y(t_j).
    g_ts = xjax.grad(lambda ts: odeint(decay, 1.0, ts, k).sum())(jnp.asarray(TS))
    y = np.exp(-k * TS.astype(np.float64))
    want = np.concatenate([[k * y[1:].sum()], -k * y[1:]])
    np.testing.assert_allclose(np.asarray(g_ts), want, rtol=1e-5, atol=1e-6)


def test_second_order_gradient():
    T = float(TS[-1])
    f = lambda k: odeint(decay, 1.0, jnp.asarray(TS), k)[-1]
    np.testing.assert_allclose(float(xjax.grad(xjax.grad(f))(0.7)), T ** 2 * np.exp(-0.7 * T),
                               rtol=1e-4)


def test_gradients_match_finite_differences_in_x64():
    with xjax.enable_x64(True):
        ts = jnp.linspace(0.0, 1.5, 4)
        y0 = jnp.array([1.2, 0.8])
        params = jnp.array([1.1, 0.4, 0.3, 0.9])

        def loss(y0, params):
            ys = odeint(lotka_volterra, y0, ts, params)
            return jnp.sum(ys[1:] ** 2 * jnp.array([1.0, 2.0]))
        g_y0, g_params = xjax.grad(loss, argnums=(0, 1))(y0, params)
        assert g_params.dtype == np.float64
        eps = 1e-6
        for arg, grad in [(0, g_y0), (1, g_params)]:
            base = [np.asarray(y0), np.asarray(params)]
            for i in range(base[arg].size):
                plus, minus = [b.copy() for b in base], [b.copy() for b in base]
                plus[arg][i] += eps
                minus[arg][i] -= eps
                fd = (float(loss(*plus)) - float(loss(*minus))) / (2 * eps)
                np.testing.assert_allclose(float(grad[i]), fd, rtol=1e-6, atol=1e-8)


def test_gradient_through_a_closure():
    f = lambda k: odeint(lambda y, t: -k * y * t, 1.0, jnp.asarray(TS))[-1]
    T = float(TS[-1])  # y = exp(-k t^2 / 2)
    np.testing.assert_allclose(float(xjax.grad(f)(0.7)), -T ** 2 / 2 * np.exp(-0.7 * T ** 2 / 2),
                               rtol=1e-5)


def test_vmap_matches_a_python_loop():
    ks = jnp.array([0.5, 1.0, 2.0])
    batched = xjax.vmap(lambda k: odeint(decay, jnp.array([1.0, 3.0]), jnp.asarray(TS), k))(ks)
    looped = np.stack([np.asarray(odeint(decay, jnp.array([1.0, 3.0]), jnp.asarray(TS), k))
                       for k in [0.5, 1.0, 2.0]])
    # Batched steps round differently, so the adaptive steps differ slightly (JAX's too).
    np.testing.assert_allclose(np.asarray(batched), looped, rtol=1e-5, atol=1e-7)
    ends = jnp.array([0.5, 1.0])
    batched_t = xjax.vmap(lambda t1: odeint(decay, 1.0, jnp.stack([0.0, t1]), 2.0)[-1])(ends)
    np.testing.assert_allclose(np.asarray(batched_t), np.exp(-2.0 * np.array([0.5, 1.0])),
                               rtol=1e-6)
    g = xjax.grad(lambda k: xjax.vmap(lambda y0: odeint(decay, y0, jnp.asarray(TS), k)[-1])(
        jnp.arange(3.0)).sum())(2.0)
    T = float(TS[-1])
    np.testing.assert_allclose(float(g), -T * 3.0 * np.exp(-2.0 * T), rtol=1e-5)


def test_repeated_calls_reuse_the_compiled_solver():
    calls = []

    def counted(y, t, k):
        calls.append(1)
        return -k * y
    odeint(counted, jnp.ones(2), jnp.asarray(TS), 1.0)
    first = len(calls)
    odeint(counted, jnp.ones(2), jnp.asarray(TS), 2.0)
    # Only closure conversion traces `func` again; the jitted solver is not retraced.
    assert len(calls) == first + 1


def test_tolerances_and_step_limits():
    ts = jnp.asarray(TS)
    exact = np.exp(-1.3 * TS.astype(np.float64))
    loose = np.asarray(odeint(decay, 1.0, ts, 1.3, rtol=1e-3, atol=1e-3))
    tight = np.asarray(odeint(decay, 1.0, ts, 1.3))
    assert np.abs(tight - exact).max() < 1e-6 < 1e-4 < np.abs(loose - exact).max() < 1e-2
    capped = np.asarray(odeint(decay, 1.0, ts, 1.3, rtol=1e-3, atol=1e-3, hmax=0.01))
    assert np.abs(capped - exact).max() < np.abs(loose - exact).max()
    # Too few steps: the solver stops short and extrapolates its last polynomial.
    stopped = np.asarray(odeint(decay, 1.0, ts, 1.3, mxstep=2))
    assert np.abs(stopped - exact).max() > 1e-2


def test_errors():
    ts = jnp.asarray(TS)
    with pytest.raises(TypeError, match="contents of odeint \\*args must be arrays or scalars"):
        odeint(decay, 1.0, ts, "a")
    with pytest.raises(TypeError, match="contents of odeint \\*args must be arrays or scalars"):
        odeint(decay, 1.0, ts, {"k": lambda x: x})
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(decay, 1.0, jnp.arange(3), 1.0)
    with pytest.raises(AttributeError):  # as JAX: t must be an array, not a list
        odeint(decay, 1.0, [0.0, 1.0], 1.0)


def test_forward_mode_raises_type_error():
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        xjax.jvp(lambda k: odeint(decay, 1.0, jnp.asarray(TS), k), (1.0,), (1.0,))


def _problems(jnp_):
    """(func, y0, ts, args, kwargs) cases run identically on JAX and xjax."""
    ts = np.linspace(0.0, 3.0, 6).astype(np.float32)

    def lotka_volterra(y, t, params):
        a, b, c, d = params
        return jnp_.stack([a * y[0] - b * y[0] * y[1], c * y[0] * y[1] - d * y[1]])
    return [
        (decay, jnp_.array([1.0, 2.0]), ts, (1.3,), {}),
        (oscillator, {"x": 1.0, "v": 0.5}, ts, (2.0,), {}),
        (lotka_volterra, jnp_.array([1.0, 0.5]), ts, (jnp_.array([1.1, 0.4, 0.3, 0.9]),), {}),
        (lotka_volterra, jnp_.array([1.0, 0.5]), ts, (jnp_.array([1.1, 0.4, 0.3, 0.9]),),
         {"rtol": 1e-4, "atol": 1e-5, "hmax": 0.1}),
        (decay, jnp_.array([1.0, 2.0]), ts, (1.3,), {"mxstep": 3}),
        (lambda y, t: jnp_.sin(t) * jnp_.cos(y), jnp_.zeros(3), ts, (), {}),
    ]


@pytest.mark.parametrize("case", range(6))
def test_matches_jax(case):
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jax_odeint
    func, y0, ts, args, kwargs = _problems(jnp)[case]
    jfunc, jy0, jts, jargs, _ = _problems(jax.numpy)[case]
    ys = odeint(func, y0, jnp.asarray(ts), *args, **kwargs)
    want = jax_odeint(jfunc, jy0, jax.numpy.asarray(jts), *jargs, **kwargs)
    for got, ref in zip(xjax.tree.leaves(ys), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-6, atol=1e-7)
    if not args:
        return
    loss = lambda odeint_, func, y0, args: sum(
        (leaf[-1] ** 2).sum() for leaf in jax.tree.leaves(odeint_(func, y0, ts, *args,
                                                                  **kwargs)))
    grads = xjax.grad(lambda y0, args: loss(odeint, func, y0, args), argnums=(0, 1))(
        y0, args)
    jax_grads = jax.grad(lambda y0, args: loss(jax_odeint, jfunc, y0, args), argnums=(0, 1))(
        jy0, jargs)
    for got, ref in zip(xjax.tree.leaves(grads), jax.tree.leaves(jax_grads)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-5, atol=1e-6)
