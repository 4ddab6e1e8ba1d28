"""The benchmark workloads, written once against a NumPy-like namespace.

Each workload is ``setup(ns) -> callable``; ``ns`` has ``np`` (the array module: xjax.numpy,
jax.numpy or numpy), ``jit`` (identity for NumPy), ``asarray`` and ``block`` (wait for a
result). A workload that an implementation cannot run returns None for it.
"""

import numpy as np

WORKLOADS = {}


def workload(name, needs_jit=False):
    def register(setup):
        WORKLOADS[name] = (setup, needs_jit)
        return setup
    return register


def _selu(jnp):
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    return selu


def _norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


@workload("matmul_3000_f32")
def matmul(ns):
    x = ns.asarray(np.random.default_rng(0).standard_normal((3000, 3000)).astype(np.float32))
    return lambda: ns.block(ns.np.dot(x, x.T))


@workload("selu_1e6_eager")
def selu_eager(ns):
    x = ns.asarray(np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32))
    selu = _selu(ns.np)
    return lambda: ns.block(selu(x))


@workload("selu_1e6_jit", needs_jit=True)
def selu_jit(ns):
    x = ns.asarray(np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32))
    selu = ns.jit(_selu(ns.np))
    return lambda: ns.block(selu(x))


@workload("norm_10000x10_eager")
def norm_eager(ns):
    X = ns.asarray(np.random.default_rng(0).random((10000, 10)).astype(np.float32))
    return lambda: ns.block(_norm(X))


@workload("norm_10000x10_jit", needs_jit=True)
def norm_jit(ns):
    X = ns.asarray(np.random.default_rng(0).random((10000, 10)).astype(np.float32))
    norm = ns.jit(_norm)
    return lambda: ns.block(norm(X))


@workload("jit_call_4", needs_jit=True)
def jit_call(ns):
    x = ns.asarray(np.arange(4, dtype=np.float32))
    f = ns.jit(lambda x: x + 1.0)
    return lambda: ns.block(f(x))


@workload("eager_exp_4")
def eager_exp(ns):
    x = ns.asarray(np.arange(4, dtype=np.float32))
    return lambda: ns.block(ns.np.exp(x))


def _rnn_scan(ns):
    """A 1000-step scan of ``h = tanh(W h + x)`` with hidden size 64."""
    rng = np.random.default_rng(0)
    w = ns.asarray((rng.standard_normal((64, 64)) / 8).astype(np.float32))
    xs = ns.asarray(rng.standard_normal((1000, 64)).astype(np.float32))
    h0 = ns.asarray(np.zeros(64, np.float32))
    lax = __import__(ns.np.__name__.split(".")[0]).lax

    def rnn(h, xs, w):
        def step(h, x):
            h = ns.np.tanh(w @ h + x)
            return h, h
        return lax.scan(step, h, xs)

    return rnn, (h0, xs, w)


@workload("rnn_scan_1000_jit", needs_jit=True)
def rnn_scan_jit(ns):
    rnn, args = _rnn_scan(ns)
    f = ns.jit(rnn)
    return lambda: ns.block(f(*args)[1])


@workload("rnn_scan_compile", needs_jit=True)
def rnn_scan_compile(ns):
    """Tracing, lowering and compiling the scan: a fresh jit of a new function per call."""
    rnn, args = _rnn_scan(ns)

    def compile_and_run():
        f = ns.jit(lambda h, xs, w: rnn(h, xs, w))
        return ns.block(f(*args)[1])

    return compile_and_run


@workload("random_normal_1e6_jit", needs_jit=True)
def random_normal_jit(ns):
    if ns.impl == "numpy":
        rng = np.random.default_rng(0)
        return lambda: rng.standard_normal(1_000_000, dtype=np.float32)
    if ns.impl == "xjax":
        from xjax import random
    else:
        from jax import random
    key = random.PRNGKey(0)
    sample = ns.jit(lambda key: random.normal(key, (1_000_000,)))
    return lambda: ns.block(sample(key))


@workload("linalg_solve_500")
def linalg_solve_500(ns):
    """jnp.linalg.solve of a 500x500 float32 system with one right-hand side (eagerly: JAX
    runs its jitted LU solve, xjax its primitives' LAPACK kernels)."""
    rng = np.random.default_rng(0)
    a = ns.asarray(rng.standard_normal((500, 500)).astype(np.float32))
    b = ns.asarray(rng.standard_normal(500).astype(np.float32))
    return lambda: ns.block(ns.np.linalg.solve(a, b))


@workload("linalg_solve_500_jit", needs_jit=True)
def linalg_solve_500_jit(ns):
    """The same solve compiled: JAX calls LAPACK through custom calls, xjax compiles its
    blocked lax LU and XLA's triangular solves."""
    rng = np.random.default_rng(0)
    a = ns.asarray(rng.standard_normal((500, 500)).astype(np.float32))
    b = ns.asarray(rng.standard_normal(500).astype(np.float32))
    solve = ns.jit(ns.np.linalg.solve)
    return lambda: ns.block(solve(a, b))


@workload("fft_2pow20")
def fft_2pow20(ns):
    """jnp.fft.fft of 2**20 complex64 points."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(1 << 20) + 1j * rng.standard_normal(1 << 20)).astype(np.complex64)
    x = ns.asarray(x)
    return lambda: ns.block(ns.np.fft.fft(x))


# -- transformations (issues 3 and 4): need grad/vmap, so JAX and xjax only --

def _sum_logistic(jnp):
    return lambda x: jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


@workload("grad_sum_logistic_3_eager", needs_jit=True)
def grad_sum_logistic_eager(ns):
    g = ns.transforms.grad(_sum_logistic(ns.np))
    x = ns.asarray(np.arange(3, dtype=np.float32))
    return lambda: ns.block(g(x))


def _mlp_params(ns, sizes=(784, 512, 512, 10)):
    rng = np.random.default_rng(0)
    return [(ns.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
             ns.asarray(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]


def _mlp_loss(jnp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(jnp.dot(h, w) + b)
        w, b = params[-1]
        logits = jnp.dot(h, w) + b
        logits = logits - jnp.max(logits, axis=1, keepdims=True)
        log_probs = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
        return -jnp.mean(jnp.sum(log_probs * y, axis=1))
    return loss


@workload("mlp_value_and_grad_jit", needs_jit=True)
def mlp_step(ns):
    params = _mlp_params(ns)
    rng = np.random.default_rng(1)
    x = ns.asarray(rng.standard_normal((128, 784)).astype(np.float32))
    y = ns.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)])
    step = ns.jit(ns.transforms.value_and_grad(_mlp_loss(ns.np)))

    def run():
        value, grads = step(params, x, y)
        return ns.block(value)
    return run


def _apply_matrix_setup(ns):
    rng = np.random.default_rng(0)
    mat = ns.asarray(rng.standard_normal((150, 100)).astype(np.float32))
    batched_x = ns.asarray(rng.standard_normal((10, 100)).astype(np.float32))
    return mat, batched_x


@workload("vmap_apply_matrix_jit", needs_jit=True)
def vmap_apply_matrix(ns):
    mat, batched_x = _apply_matrix_setup(ns)
    f = ns.jit(lambda vs: ns.transforms.vmap(lambda v: ns.np.dot(mat, v))(vs))
    return lambda: ns.block(f(batched_x))


@workload("naive_apply_matrix_eager", needs_jit=True)
def naive_apply_matrix(ns):
    mat, batched_x = _apply_matrix_setup(ns)
    return lambda: ns.block(ns.np.stack([ns.np.dot(mat, v) for v in batched_x]))
