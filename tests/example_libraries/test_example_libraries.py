"""xjax.example_libraries: optimizers against hand-written NumPy updates, stax layers against
NumPy, and training programs against the same programs run on JAX (where installed)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.example_libraries import optimizers, stax

# ---------------------------------------------------------------------------------------------
# optimizers against NumPy

LR = 0.05


def _np_momentum(x, g, s, i, mass=0.9):
    v = mass * s.get("v", 0 * x) + g
    return x - LR * v, {"v": v}


def _np_nesterov(x, g, s, i, mass=0.9):
    v = mass * s.get("v", 0 * x) + g
    return x - LR * (mass * v + g), {"v": v}


def _np_adagrad(x, g, s, i, momentum=0.9):
    g_sq = s.get("g_sq", 0 * x) + g ** 2
    inv = np.where(g_sq > 0, 1 / np.sqrt(np.where(g_sq > 0, g_sq, 1)), 0)
    m = (1 - momentum) * g * inv + momentum * s.get("m", 0 * x)
    return x - LR * m, {"g_sq": g_sq, "m": m}


def _np_rmsprop(x, g, s, i, gamma=0.9, eps=1e-8):
    avg = s.get("avg", 0 * x) * gamma + g ** 2 * (1 - gamma)
    return x - LR * g / np.sqrt(avg + eps), {"avg": avg}


def _np_rmsprop_momentum(x, g, s, i, gamma=0.9, eps=1e-8, momentum=0.9):
    avg = s.get("avg", 0 * x) * gamma + g ** 2 * (1 - gamma)
    mom = momentum * s.get("mom", 0 * x) + LR * g / np.sqrt(avg + eps)
    return x - mom, {"avg": avg, "mom": mom}


def _np_adam(x, g, s, i, b1=0.9, b2=0.999, eps=1e-8):
    m = (1 - b1) * g + b1 * s.get("m", 0 * x)
    v = (1 - b2) * g ** 2 + b2 * s.get("v", 0 * x)
    m_hat, v_hat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
    return x - LR * m_hat / (np.sqrt(v_hat) + eps), {"m": m, "v": v}


def _np_adamax(x, g, s, i, b1=0.9, b2=0.999, eps=1e-8):
    m = (1 - b1) * g + b1 * s.get("m", 0 * x)
    u = np.maximum(b2 * s.get("u", 0 * x), np.abs(g))
    return x - LR / (1 - b1 ** (i + 1)) * m / (u + eps), {"m": m, "u": u}


def _np_sm3(x, g, s, i, momentum=0.9):
    # One accumulator per index of each axis; each element uses the smallest of its own.
    xs = np.atleast_1d(x)
    gs = np.atleast_1d(g)
    accs = s.get("accs", [np.zeros(n) for n in xs.shape])
    low = np.full(xs.shape, np.inf)
    for axis, acc in enumerate(accs):
        shape = [1] * xs.ndim
        shape[axis] = -1
        low = np.minimum(low, acc.reshape(shape))
    accum = low + gs ** 2
    inv = np.where(accum > 0, 1 / np.sqrt(np.where(accum > 0, accum, 1)), 0)
    m = (1 - momentum) * gs * inv + momentum * s.get("m", 0 * xs)
    new_x = xs - LR * m
    accs = [accum.max(axis=tuple(a for a in range(xs.ndim) if a != axis))
            for axis in range(xs.ndim)]
    return new_x.reshape(np.shape(x)), {"m": m, "accs": accs}


def _np_sgd(x, g, s, i):
    return x - LR * g, {}


OPTIMIZERS = {
    "sgd": (optimizers.sgd, (), _np_sgd),
    "momentum": (optimizers.momentum, (0.9,), _np_momentum),
    "nesterov": (optimizers.nesterov, (0.9,), _np_nesterov),
    "adagrad": (optimizers.adagrad, (), _np_adagrad),
    "rmsprop": (optimizers.rmsprop, (), _np_rmsprop),
    "rmsprop_momentum": (optimizers.rmsprop_momentum, (), _np_rmsprop_momentum),
    "adam": (optimizers.adam, (), _np_adam),
    "adamax": (optimizers.adamax, (), _np_adamax),
    "sm3": (optimizers.sm3, (), _np_sm3),
}


def _quadratic_grads(params, targets):
    # Gradient of sum((p - target)^2 * weight): simple, different per element, never zero.
    return {k: 2 * (params[k] - targets[k]) * (1 + np.arange(params[k].size).reshape(
        np.shape(params[k]))) for k in params}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_updates_match_numpy(name):
    make, extra, np_update = OPTIMIZERS[name]
    rng = np.random.RandomState(1)
    params = {"w": rng.randn(3, 2).astype(np.float32), "b": rng.randn(2).astype(np.float32),
              "s": np.float32(0.5)}
    targets = {k: np.asarray(rng.randn(*np.shape(v)), np.float32) for k, v in params.items()}
    opt_init, opt_update, get_params = make(LR, *extra)
    state = opt_init(params)
    update = xjax.jit(opt_update)
    ref = {k: np.asarray(v, np.float64) for k, v in params.items()}
    ref_states = {k: {} for k in params}
    for i in range(6):
        current = {k: np.asarray(v) for k, v in get_params(state).items()}
        grads = _quadratic_grads(current, targets)
        state = update(i, grads, state)
        for k in ref:
            ref[k], ref_states[k] = np_update(ref[k], grads[k].astype(np.float64),
                                              ref_states[k], i)
    got = get_params(state)
    for k in ref:
        assert got[k].shape == np.shape(params[k]) and got[k].dtype == np.float32
        np.testing.assert_allclose(np.asarray(got[k]), ref[k], rtol=2e-5, atol=2e-6)


def test_schedules_match_formulas():
    steps = np.arange(0, 12)
    cases = [
        (optimizers.constant(0.3), lambda i: 0.3 + 0 * i),
        (optimizers.exponential_decay(0.5, 4, 0.3), lambda i: 0.5 * 0.3 ** (i / 4)),
        (optimizers.inverse_time_decay(0.5, 3, 2.0), lambda i: 0.5 / (1 + 2.0 * i / 3)),
        (optimizers.inverse_time_decay(0.5, 3, 2.0, staircase=True),
         lambda i: 0.5 / (1 + 2.0 * np.floor(i / 3))),
        (optimizers.polynomial_decay(1.0, 8, 0.1, power=2.0),
         lambda i: (1 - np.minimum(i, 8) / 8) ** 2 * 0.9 + 0.1),
        (optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1]),
         lambda i: np.select([i <= 2, i <= 5], [1.0, 0.5], 0.1)),
    ]
    for schedule, formula in cases:
        got = [float(schedule(jnp.asarray(i))) for i in steps]
        np.testing.assert_allclose(got, formula(steps.astype(np.float64)), rtol=1e-6)
    jitted = xjax.jit(optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1]))
    assert float(jitted(3)) == 0.5


def test_schedule_in_an_optimizer_and_make_schedule_errors():
    opt_init, opt_update, get_params = optimizers.sgd(optimizers.exponential_decay(1.0, 1, 0.5))
    state = opt_init(jnp.zeros(2))
    for i in range(3):
        state = opt_update(i, jnp.ones(2), state)
    np.testing.assert_allclose(np.asarray(get_params(state)), -(1 + 0.5 + 0.25) * np.ones(2))
    assert optimizers.make_schedule(0.1)(7) == 0.1
    with pytest.raises(TypeError):
        optimizers.make_schedule(jnp.ones(2))
    with pytest.raises(ValueError, match="boundaries and values must be sequences"):
        optimizers.piecewise_constant(1, [1.0, 2.0])
    with pytest.raises(ValueError, match="one shorter than values"):
        optimizers.piecewise_constant([1, 2], [1.0, 2.0])


def test_l2_norm_and_clip_grads():
    tree = {"a": np.array([3.0, 0.0], np.float32), "b": [np.array([[4.0]], np.float32)]}
    assert float(optimizers.l2_norm(tree)) == pytest.approx(5.0)
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(np.asarray(clipped["a"]), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(clipped["b"][0]), [[0.8]], rtol=1e-6)
    unclipped = optimizers.clip_grads(tree, 10.0)
    np.testing.assert_array_equal(np.asarray(unclipped["a"]), tree["a"])


def test_state_is_a_pytree_and_serializes():
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    params = {"w": jnp.ones((2, 2)), "b": [jnp.zeros(2)]}
    state = opt_init(params)
    assert isinstance(state, optimizers.OptimizerState)
    assert len(xjax.tree.leaves(state)) == 2 * 3  # (x, m, v) per parameter array
    doubled = xjax.tree.map(lambda x: 2 * x, state)
    assert isinstance(doubled, optimizers.OptimizerState)
    np.testing.assert_array_equal(np.asarray(get_params(doubled)["w"]), 2 * np.ones((2, 2)))
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    x, m, v = marked["w"].subtree
    np.testing.assert_array_equal(np.asarray(x), np.ones((2, 2)))
    repacked = optimizers.pack_optimizer_state(marked)
    assert repacked.tree_def == state.tree_def and repacked.subtree_defs == state.subtree_defs
    state = opt_update(0, params, repacked)
    assert xjax.tree.structure(get_params(state)) == xjax.tree.structure(params)


def test_update_with_a_mismatched_gradient_tree_raises():
    opt_init, opt_update, _ = optimizers.momentum(0.1, 0.9)
    state = opt_init({"w": jnp.ones(2)})
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        opt_update(0, {"v": jnp.ones(2)}, state)

    @optimizers.optimizer
    def shape_changing(step_size):
        return (lambda x: (x, x), lambda i, g, s: (s[0], s[1], s[1]), lambda s: s[0])
    opt_init, opt_update, _ = shape_changing(0.1)
    with pytest.raises(TypeError, match="did not match its input structure"):
        opt_update(0, jnp.ones(2), opt_init(jnp.ones(2)))


def test_public_names_match_jax():
    pytest.importorskip("jax")
    import jax.example_libraries.optimizers as jax_optimizers
    import jax.example_libraries.stax as jax_stax
    for ours, theirs in [(optimizers, jax_optimizers), (stax, jax_stax)]:
        missing = [n for n in dir(theirs) if not n.startswith("_") and not hasattr(ours, n)]
        assert not missing, missing


# ---------------------------------------------------------------------------------------------
# stax layers against NumPy


def test_dense_and_serial_shapes_and_values():
    init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init_fun(xjax.random.key(0), (-1, 5))
    assert out_shape == (-1, 3)
    assert [p[0].shape for p in params if p] == [(5, 4), (4, 3)]
    x = np.random.RandomState(0).randn(2, 5).astype(np.float32)
    (w1, b1), _, (w2, b2), _ = [tuple(np.asarray(a) for a in p) for p in params]
    h = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    want = h - np.log(np.exp(h).sum(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(apply_fun(params, x)), want, rtol=1e-5, atol=1e-6)


def test_pooling_matches_numpy_windows():
    x = np.random.RandomState(0).randn(1, 4, 5, 2).astype(np.float32)
    for layer, reduce in [(stax.MaxPool, np.max), (stax.SumPool, np.sum),
                          (stax.AvgPool, np.mean)]:
        init_fun, apply_fun = layer((2, 3), strides=(2, 1))
        out_shape, _ = init_fun(None, x.shape)
        got = np.asarray(apply_fun((), x))
        assert got.shape == out_shape == (1, 2, 3, 2)
        want = np.array([[[reduce(x[0, 2 * i:2 * i + 2, j:j + 3, c]) for c in range(2)]
                          for j in range(3)] for i in range(2)])[None]
        np.testing.assert_allclose(got, want, rtol=1e-5)
    # SAME padding: the average divides by the window's elements inside the input only.
    init_fun, apply_fun = stax.AvgPool((2, 2), padding="SAME")
    got = np.asarray(apply_fun((), x))
    assert got.shape == init_fun(None, x.shape)[0] == x.shape
    np.testing.assert_allclose(got[0, -1, -1], x[0, -1, -1], rtol=1e-6)


def test_batchnorm_flatten_fanin_and_dropout():
    x = np.random.RandomState(0).randn(6, 3).astype(np.float32)
    init_fun, apply_fun = stax.BatchNorm(axis=0)
    _, (beta, gamma) = init_fun(xjax.random.key(0), x.shape)
    params = (beta + 0.5, gamma * 2.0)
    want = 2.0 * (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5) + 0.5
    np.testing.assert_allclose(np.asarray(apply_fun(params, x)), want, rtol=1e-4, atol=1e-5)
    assert stax.Flatten[0](None, (2, 3, 4))[0] == (2, 12)
    assert stax.Flatten[1]((), np.ones((2, 3, 4))).shape == (2, 12)
    cat_init, cat_apply = stax.FanInConcat(axis=1)
    assert cat_init(None, [(2, 3), (2, 4)])[0] == (2, 7)
    np.testing.assert_array_equal(np.asarray(cat_apply((), [np.zeros((2, 3)), np.ones((2, 4))])),
                                  np.hstack([np.zeros((2, 3)), np.ones((2, 4))]))
    _, drop = stax.Dropout(0.75)
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        drop((), x)
    kept = np.asarray(drop((), np.ones((200, 50)), rng=xjax.random.key(3)))
    assert set(np.unique(kept)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((kept != 0).mean() - 0.75) < 0.02
    _, identity = stax.Dropout(0.75, mode="test")
    np.testing.assert_array_equal(np.asarray(identity((), x, rng=xjax.random.key(3))), x)


# ---------------------------------------------------------------------------------------------
# against JAX: the same layers, keys and programs


def _layers(S):
    return {
        "dense": (S.Dense(4), (3, 5)),
        "conv": (S.Conv(3, (2, 2), strides=(1, 2), padding="SAME"), (2, 5, 6, 2)),
        "general_conv": (S.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 2)), (2, 2, 6, 5)),
        "conv_transpose": (S.ConvTranspose(3, (2, 2), strides=(2, 2)), (2, 3, 4, 2)),
        "conv1d_transpose": (S.Conv1DTranspose(2, (3,), padding="SAME"), (2, 5, 3)),
        "batchnorm": (S.BatchNorm(), (4, 3, 3, 2)),
        "batchnorm_scale": (S.BatchNorm(axis=0, center=False), (5, 3)),
        "batchnorm_center": (S.BatchNorm(axis=(0,), scale=False), (5, 3)),
        "max_pool": (S.MaxPool((2, 2), strides=(2, 1)), (2, 5, 5, 3)),
        "sum_pool": (S.SumPool((2, 3), padding="SAME"), (2, 5, 5, 3)),
        "avg_pool": (S.AvgPool((3, 2), strides=(2, 2), padding="SAME"), (2, 5, 5, 3)),
        "avg_pool_nchw": (S.AvgPool((2, 2), spec="NCHW", padding="SAME"), (2, 3, 5, 5)),
        "elementwise": (S.serial(S.Tanh, S.Relu, S.Exp, S.Softplus, S.Sigmoid, S.Elu,
                                 S.LeakyRelu, S.Selu, S.Gelu, S.Identity, S.Softmax), (3, 4)),
        "fan_sum": (S.serial(S.FanOut(3), S.parallel(S.Dense(2), S.Dense(2), S.Identity),
                             S.FanInSum), (3, 2)),
        "fan_concat": (S.serial(S.FanOut(2), S.parallel(S.Dense(2), S.Dense(3)),
                                S.FanInConcat()), (3, 4)),
        "shape_dependent": (S.shape_dependent(lambda s: S.Dense(s[-1] * 2)), (3, 4)),
        "dropout": (S.Dropout(0.7), (4, 5)),
    }


def test_layers_match_jax():
    jax = pytest.importorskip("jax")
    from jax.example_libraries import stax as jax_stax
    ours, theirs = _layers(stax), _layers(jax_stax)
    rng = np.random.RandomState(0)
    for name, ((init_fun, apply_fun), shape) in ours.items():
        (jax_init, jax_apply), _ = theirs[name]
        out_shape, params = init_fun(xjax.random.key(1), shape)
        jax_out_shape, jax_params = jax_init(jax.random.key(1), shape)
        assert tuple(out_shape) == tuple(jax_out_shape), name
        leaves, jax_leaves = xjax.tree.leaves(params), jax.tree.leaves(jax_params)
        assert len(leaves) == len(jax_leaves), name
        for got, want in zip(leaves, jax_leaves):  # same keys, same bits
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=name)
        x = rng.randn(*shape).astype(np.float32)
        got = apply_fun(params, x, rng=xjax.random.key(2))
        want = jax_apply(jax_params, x, rng=jax.random.key(2))
        assert got.shape == tuple(out_shape), name
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-6,
                                   err_msg=name)


def _train(jax, stax_module, optimizers_module, model, input_shape, make_opt, steps=5):
    """Train ``model`` on fixed random data; the same program for JAX and xjax."""
    jnp_ = jax.numpy
    init_fun, apply_fun = model(stax_module)
    key = jax.random.PRNGKey(0)
    _, params = init_fun(key, (-1,) + input_shape[1:])
    rng = np.random.RandomState(0)
    x = rng.randn(*input_shape).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.randint(0, 4, input_shape[0])]

    def loss(p, k):
        return -jnp_.mean(jnp_.sum(apply_fun(p, x, rng=k) * y, axis=-1))
    opt_init, opt_update, get_params = make_opt(optimizers_module)
    state = opt_init(params)

    @jax.jit
    def step(i, state, k):
        value, grads = jax.value_and_grad(loss)(get_params(state), k)
        return value, opt_update(i, grads, state)
    losses = []
    for i in range(steps):
        value, state = step(i, state, jax.random.fold_in(key, i))
        losses.append(float(value))
    return losses, [np.asarray(a) for a in jax.tree.leaves(get_params(state))]


def _mlp(S):
    return S.serial(S.Dense(16), S.Relu, S.Dropout(0.8), S.Dense(16), S.Tanh, S.Dense(4),
                    S.LogSoftmax)


def _convnet(S):
    return S.serial(S.Conv(4, (3, 3), padding="SAME"), S.Relu,
                    S.MaxPool((2, 2), strides=(2, 2)), S.Conv(6, (3, 3)), S.Gelu,
                    S.AvgPool((2, 2), padding="SAME"), S.Flatten, S.FanOut(2),
                    S.parallel(S.Dense(4), S.serial(S.Dense(4), S.Elu)), S.FanInSum,
                    S.LogSoftmax)


@pytest.mark.parametrize("model, input_shape, make_opt", [
    (_mlp, (8, 6), lambda O: O.adam(1e-2)),
    (_mlp, (8, 6), lambda O: O.momentum(O.exponential_decay(0.1, 2, 0.5), 0.9)),
    (_convnet, (4, 8, 8, 2), lambda O: O.adam(1e-2)),
], ids=["mlp-adam", "mlp-momentum-schedule", "convnet-adam"])
def test_training_matches_jax(model, input_shape, make_opt):
    jax = pytest.importorskip("jax")
    from jax.example_libraries import optimizers as jax_optimizers
    from jax.example_libraries import stax as jax_stax
    losses, params = _train(xjax, stax, optimizers, model, input_shape, make_opt)
    jax_losses, jax_params = _train(jax, jax_stax, jax_optimizers, model, input_shape, make_opt)
    np.testing.assert_allclose(losses, jax_losses, rtol=1e-5)
    assert losses[-1] < losses[0]
    for got, want in zip(params, jax_params):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
