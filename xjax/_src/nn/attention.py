"""Scaled dot-product attention (``xjax.nn.dot_product_attention``), JAX's reference ("xla")
implementation: the same masks, dtypes and float32 softmax.

Layout: ``B`` batch, ``T`` query length, ``S`` key length, ``N`` query heads, ``K`` key/value
heads (``N`` a multiple of ``K``: grouped-query attention), ``H`` head size.
"""

from __future__ import annotations

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.core import dtypes
from xjax._src.nn.functions import logsumexp, softmax


def _ensure_4d(t):
    t = jnp.asarray(t)
    missing = 4 - t.ndim
    if missing > 0:
        return jnp.expand_dims(t, axis=tuple(range(missing)))
    return t


def _check_shape_and_dtype(t, shape, dtype, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for want, got in zip(shape, t.shape, strict=True):
        if want != -1 and got != want:
            raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def _large_negative(dtype):
    # Capped at float32's range: the softmax runs in float32 and must see a finite value.
    biggest = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
    return jnp.asarray(-0.7 * biggest, dtype=dtype)


def _combined_mask(T, S, mask, is_causal, q_seqlen, kv_seqlen, window):
    """The boolean mask (broadcastable to ``(B, N, T, S)``) of allowed logits, or None."""
    masks = []
    if mask is not None:
        masks.append(mask)
    if is_causal:
        masks.append(jnp.tril(jnp.ones((T, S), dtype=bool))[None, None])
    if window is not None:
        left, right = window
        q_pos = jnp.arange(T)[:, None]
        k_pos = jnp.arange(S)[None, :]
        masks.append(((q_pos >= k_pos - right) & (q_pos <= k_pos + left))[None, None])
    if q_seqlen is not None or kv_seqlen is not None:
        padding = jnp.ones((1, T, S), dtype=bool)
        if q_seqlen is not None:
            padding = padding & (jnp.arange(T)[None, :, None] < q_seqlen[:, None, None])
        if kv_seqlen is not None:
            padding = padding & (jnp.arange(S)[None, None, :] < kv_seqlen[:, None, None])
        masks.append(padding[:, None])
    if not masks:
        return None
    combined = masks[0]
    for m in masks[1:]:
        combined = jnp.logical_and(combined, m)
    return combined


def _check_heads(t, n_heads, name):
    if t is not None and t.shape[1] not in (1, n_heads):
        # JAX asserts this while regrouping the heads.
        raise AssertionError(f"{name} has {t.shape[1]} heads; expected 1 or {n_heads}")


def _attention_xla(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                   window, return_residual):
    B, T, N, H = query.shape
    _, S, K, _ = key.shape
    G = N // K
    _check_heads(bias, N, "bias")
    _check_heads(mask, N, "mask")
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    grouped_q = jnp.reshape(query, (B, T, K, G, H))
    # BTKGH x BSKH -> BKTGS (batch B, K; contract H), then BKGTS -> BNTS with n = k * G + g.
    logits = lax.dot_general(grouped_q, key, (((4,), (3,)), ((0, 2), (0, 2))),
                             preferred_element_type=logits_dtype)
    logits = jnp.reshape(jnp.transpose(logits, (0, 1, 3, 2, 4)), (B, N, T, S))
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    allowed = _combined_mask(T, S, mask, is_causal, q_seqlen, kv_seqlen, window)
    if allowed is not None:
        logits = jnp.where(allowed, logits, _large_negative(logits.dtype))
    logits = logits.astype(np.float32)  # the softmax always runs in float32, as in JAX
    probs = softmax(logits, axis=-1).astype(key.dtype)
    # BKGTS x BSKH -> BKGTH (batch B, K; contract S) -> BTKGH -> BTNH.
    grouped_probs = jnp.reshape(probs, (B, K, G, T, S))
    encoded = lax.dot_general(grouped_probs, value, (((4,), (1,)), ((0, 1), (0, 2))))
    encoded = jnp.reshape(jnp.transpose(encoded, (0, 3, 1, 2, 4)), (B, T, N, H))
    if q_seqlen is not None:
        valid = jnp.arange(T)[None, :] < q_seqlen[:, None]
        encoded = encoded * valid[:, :, None, None].astype(encoded.dtype)
    if not return_residual:
        return encoded
    lse = logsumexp(logits, axis=-1).astype(key.dtype)
    return encoded, lax.stop_gradient(jnp.transpose(lse, (0, 2, 1)))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual: bool = False):
    """Scaled dot-product attention ``softmax(q k^T * scale + bias, masked) v``.

    Parameters
    ----------
    query : array ``(B, T, N, H)`` (or ``(T, N, H)``)
    key, value : arrays ``(B, S, K, H)`` with ``N % K == 0`` (grouped-query attention)
    bias : array broadcastable to ``(B, N, T, S)``, optional
        Added to the logits.
    mask : bool array broadcastable to ``(B, N, T, S)``, optional
        False entries are excluded from the softmax.
    scale : float, optional
        Of the logits; ``1 / sqrt(H)`` by default.
    is_causal : bool
        Apply a causal (lower-triangular) mask.
    query_seq_lengths, key_value_seq_lengths : int32 arrays ``(B,)``, optional
        Valid lengths; padded queries give zero outputs.
    local_window_size : int or (int, int), optional
        Sliding window ``(left, right)`` each query may attend within.
    implementation : None or "xla"
        Only JAX's XLA reference implementation exists here; "cudnn" raises.
    return_residual : bool
        Also return the softmax's logsumexp ``(B, T, N)``.

    Returns
    -------
    array of ``query``'s shape (and the residual if asked).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> q = jnp.ones((1, 2, 1, 4)); v = jnp.arange(8.).reshape(1, 2, 1, 4)
    >>> xjax.nn.dot_product_attention(q, q, v)[0, 0, 0]
    Array([2., 3., 4., 5.], dtype=float32)
    """
    output_shape = jnp.asarray(query).shape
    query, key, value = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_seqlen = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_seqlen = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = key.shape
    _check_shape_and_dtype(value, [B, S, K, H], key.dtype, "value")
    _check_shape_and_dtype(query, [B, -1, -1, H], key.dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(q_seqlen, [B], np.dtype("int32"), "query_seq_lengths")
    _check_shape_and_dtype(kv_seqlen, [B], np.dtype("int32"), "key_value_seq_lengths")
    if query.shape[-2] % K != 0:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                         f"but got {query.shape[-2]} vs {K}")
    scale = (1.0 / np.sqrt(H)) if scale is None else scale
    if implementation == "cudnn":
        raise NotImplementedError("dot_product_attention(implementation='cudnn') is not "
                                  "supported; use implementation='xla' or None")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _attention_xla(query, key, value, bias, mask, is_causal, scale, q_seqlen,
                         kv_seqlen, local_window_size, return_residual)
    if return_residual:
        out, residual = out
        return jnp.reshape(out, output_shape), jnp.reshape(residual, output_shape[:-1])
    return jnp.reshape(out, output_shape)
