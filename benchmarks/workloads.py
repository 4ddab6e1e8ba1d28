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
