"""xjax.nn.dot_product_attention against a NumPy float64 reference and JAX 0.10.2: masks,
bias, causal, sequence lengths, local windows, grouped-query heads, dtypes, residuals, jit."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import nn
from xjax._src.core import dtypes

try:
    import jax
    import jax.numpy as jjnp
except ImportError:
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is not installed")


def _reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None,
               kv_len=None, window=None):
    """Plain float64 attention with -inf masking (fully masked rows average uniformly,
    like the large-negative fill)."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    G = N // K
    k = np.repeat(k, G, axis=2)
    v = np.repeat(v, G, axis=2)
    scale = 1 / np.sqrt(H) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    allowed = np.ones((B, N, T, S), bool)
    if mask is not None:
        allowed &= mask
    if is_causal:
        allowed &= np.tril(np.ones((T, S), bool))
    if window is not None:
        left, right = window
        t, s = np.arange(T)[:, None], np.arange(S)[None, :]
        allowed &= (t >= s - right) & (t <= s + left)
    if q_len is not None:
        allowed &= (np.arange(T)[None, :, None] < np.asarray(q_len)[:, None, None])[:, None]
    if kv_len is not None:
        allowed &= (np.arange(S)[None, None, :] < np.asarray(kv_len)[:, None, None])[:, None]
    logits = np.where(allowed, logits, -0.7 * np.finfo(np.float32).max)
    logits -= logits.max(-1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(-1, keepdims=True)
    out = np.einsum("bnts,bsnh->btnh", p, v)
    if q_len is not None:
        out *= (np.arange(T)[None, :] < np.asarray(q_len)[:, None])[:, :, None, None]
    return out


def _qkv(B=2, T=5, S=6, N=4, K=2, H=8, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=s).astype(dtype)
                 for s in ((B, T, N, H), (B, S, K, H), (B, S, K, H)))


CASES = {
    "plain": {},
    "bias": {"bias": "full"},
    "bias_broadcast": {"bias": "heads1"},
    "mask": {"mask": True},
    "causal": {"is_causal": True},
    "scale": {"scale": 0.3},
    "seq_lengths": {"q_len": [3, 5], "kv_len": [4, 2]},
    "kv_lengths": {"kv_len": [6, 1]},
    "window": {"window": (1, 2)},
    "causal_mask_bias": {"is_causal": True, "mask": True, "bias": "full"},
}


def _case_args(case, B=2, T=5, S=6, N=4):
    rng = np.random.default_rng(1)
    spec = CASES[case]
    bias = mask = None
    if spec.get("bias") == "full":
        bias = rng.normal(size=(B, N, T, S)).astype(np.float32)
    elif spec.get("bias") == "heads1":
        bias = rng.normal(size=(1, 1, T, S)).astype(np.float32)
    if spec.get("mask"):
        mask = rng.uniform(size=(B, 1, T, S)) > 0.3
    q_len = None if "q_len" not in spec else np.array(spec["q_len"], np.int32)
    kv_len = None if "kv_len" not in spec else np.array(spec["kv_len"], np.int32)
    return dict(bias=bias, mask=mask, scale=spec.get("scale"),
                is_causal=spec.get("is_causal", False), q_len=q_len, kv_len=kv_len,
                window=spec.get("window"))


def _call(module, numpy_mod, q, k, v, a, **extra):
    conv = lambda t: None if t is None else numpy_mod.asarray(t)  # noqa: E731
    return module.dot_product_attention(
        conv(q), conv(k), conv(v), conv(a["bias"]), conv(a["mask"]), scale=a["scale"],
        is_causal=a["is_causal"], query_seq_lengths=conv(a["q_len"]),
        key_value_seq_lengths=conv(a["kv_len"]), local_window_size=a["window"], **extra)


@pytest.mark.parametrize("case", sorted(CASES))
def test_against_numpy_reference(case):
    q, k, v = _qkv()
    a = _case_args(case)
    got = _call(nn, jnp, q, k, v, a)
    want = _reference(q, k, v, a["bias"], a["mask"], a["scale"], a["is_causal"], a["q_len"],
                      a["kv_len"], a["window"])
    assert got.shape == q.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


@needs_jax
@pytest.mark.parametrize("case", sorted(CASES))
def test_against_jax(case):
    q, k, v = _qkv(seed=3)
    a = _case_args(case)
    got = _call(nn, jnp, q, k, v, a, implementation="xla")
    want = _call(jax.nn, jjnp, q, k, v, a, implementation="xla")
    np.testing.assert_allclose(got, np.asarray(want), rtol=2e-5, atol=2e-6)


@needs_jax
@pytest.mark.parametrize("dtype", [np.dtype(np.float16), dtypes.bfloat16], ids=str)
def test_low_precision_against_jax(dtype):
    q, k, v = _qkv(dtype=dtype, seed=4)
    got = nn.dot_product_attention(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v),
                                   is_causal=True)
    want = jax.nn.dot_product_attention(jjnp.asarray(q), jjnp.asarray(k), jjnp.asarray(v),
                                        is_causal=True)
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=2e-2, atol=2e-2)


@needs_jax
def test_residual_and_3d_inputs_against_jax():
    q, k, v = _qkv(B=1, seed=5)
    got, res = nn.dot_product_attention(jnp.asarray(q[0]), jnp.asarray(k[0]),
                                        jnp.asarray(v[0]), return_residual=True)
    want, want_res = jax.nn.dot_product_attention(jjnp.asarray(q[0]), jjnp.asarray(k[0]),
                                                  jjnp.asarray(v[0]), return_residual=True)
    assert got.shape == q[0].shape and res.shape == q[0].shape[:-1]
    np.testing.assert_allclose(got, np.asarray(want), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(res, np.asarray(want_res), rtol=2e-5, atol=2e-6)


def test_jit_matches_eager():
    q, k, v = _qkv(seed=6)
    f = lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    args = tuple(jnp.asarray(t) for t in (q, k, v))
    np.testing.assert_allclose(f(*args), xjax.jit(f)(*args), rtol=2e-6, atol=1e-6)


def test_errors():
    q, k, v = _qkv()
    q, k, v = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
    with pytest.raises(ValueError, match="value shape should be"):
        nn.dot_product_attention(q, k, v[:, :3])
    with pytest.raises(ValueError, match="query dtype should be float32"):
        nn.dot_product_attention(q.astype(jnp.float16), k, v)
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        nn.dot_product_attention(q, k, v, mask=jnp.ones((1, 1, 5, 6)))
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(jnp.ones((2, 5, 3, 8)), k, v)
    with pytest.raises(ValueError, match="query_seq_lengths dtype should be int32"):
        nn.dot_product_attention(q, k, v, query_seq_lengths=jnp.array([1., 2.]))
    with pytest.raises(ValueError, match="Unsupported implementation"):
        nn.dot_product_attention(q, k, v, implementation="magic")
    with pytest.raises(NotImplementedError, match="cudnn"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")


@needs_jax
def test_grads_match_jax():
    q, k, v = _qkv(B=1, T=3, S=4, N=2, K=1, H=4, seed=7)
    bias = np.random.default_rng(8).normal(size=(1, 2, 3, 4)).astype(np.float32)

    def loss(module, numpy_mod):
        def f(q, k, v, bias):
            out = module.dot_product_attention(q, k, v, bias, is_causal=True)
            return numpy_mod.sum(out * out)
        return f
    got = xjax.grad(loss(nn, jnp), argnums=(0, 1, 2, 3))(*map(jnp.asarray, (q, k, v, bias)))
    want = jax.grad(loss(jax.nn, jjnp), argnums=(0, 1, 2, 3))(*map(jjnp.asarray,
                                                                 (q, k, v, bias)))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-4, atol=1e-5)
