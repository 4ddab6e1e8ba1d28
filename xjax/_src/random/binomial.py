"""Binomial and multinomial samplers, as JAX samples them (and TensorFlow before it):
inversion by summed geometric variates while ``n * p <= 10``, else Hormann's transformed
rejection (BTRS); a multinomial draw is a scan of binomials over the categories."""

from __future__ import annotations

import numpy as np

from xjax._src import higher_order as control_flow
from xjax._src.core import dtypes
from xjax._src.random import threefry
from xjax._src.lax.transcendental import log1p
from xjax._src.random._common import canonical_shape, check_shape, float_dtype, sampler_jit
from xjax._src.random.basic import uniform01
from xjax._src.random.keys import check_prng_key
from xjax._src.random._common import lax_module as _lax, numpy_module as _jnp, split_keys as _split

# Stirling's series remainder log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]
# for k = 0 .. 9, where the series is not yet accurate
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k):
    lax = _lax()
    jnp = _jnp()
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_table = k <= 9
    k = lax.clamp(lax.full((), 0.0, k.dtype), k, lax.full((), 9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(use_table, table[jnp.asarray(jnp.floor(k), dtype="int32")], approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    lax = _lax()
    jnp = _jnp()
    log1minusprob = log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = _split(key, 2)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform01(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return jnp.any(geom_sum <= count) & (i < max_iters)

    zeros = lax.full(shape, 0, prob.dtype)
    k = control_flow.while_loop(cond, body, (0, zeros, zeros, key))[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    lax = _lax()
    jnp = _jnp()
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split(key, 3)
        u = uniform01(subkey_0, shape, prob.dtype) - 0.5
        v = uniform01(subkey_1, shape, prob.dtype)
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
                 - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= bound))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return jnp.any(~accepted) & (i < max_iters)

    k_init = lax.full(shape, -1, prob.dtype)
    carry = (0, k_init, lax.full(shape, False, np.dtype(np.bool_)), key)
    return control_flow.while_loop(cond, body, carry)[1].astype(dtype)


def binomial_impl(key, count, prob, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    prob = jnp.asarray(prob)
    if not dtypes.is_inexact(prob.dtype):
        prob = prob.astype(dtypes.to_inexact_dtype(prob.dtype))
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = (count != count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = q != q
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)  # as NumPy does for float counts
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    # NaN for a NaN or negative p or a NaN or negative count; inf for an infinite count
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dtype) - samples)


@sampler_jit(static_argnames=("shape", "dtype"))
def _binomial(key, count, prob, *, shape, dtype):
    return binomial_impl(key, count, prob, shape, dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial random values: successes in ``n`` trials of probability ``p`` (a float
    dtype, as in JAX).

    Examples
    --------
    >>> from xjax import random
    >>> x = random.binomial(random.PRNGKey(0), 20, 0.3, (1000,))
    >>> 5.5 < float(x.mean()) < 6.5
    True
    """
    data, _ = check_prng_key("binomial", key)
    dtype = float_dtype("binomial", dtype)
    shape = None if shape is None else canonical_shape(shape)
    return _binomial(data, n, p, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype", "unroll"))
def _multinomial(key, n, p, *, shape, dtype, unroll):
    lax = _lax()
    jnp = _jnp()
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)

    def draw(remainder, ratio_key):
        ratio, key = ratio_key
        count = binomial_impl(key, remainder, jnp.clip(ratio, 0, 1), None, remainder.dtype)
        return remainder - count, count

    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = threefry.split(key, (ratios.shape[0],))
    _, counts = control_flow.scan(draw, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of ``n`` trials over the outcomes of the last axis of ``p``."""
    jnp = _jnp()
    data, _ = check_prng_key("multinomial", key)
    n, p = jnp.asarray(n), jnp.asarray(p)
    common = dtypes.to_inexact_dtype(dtypes.result_type(n, p))
    n, p = n.astype(common), p.astype(common)
    shape = tuple(p.shape) if shape is None else canonical_shape(shape)
    dtype = float_dtype("multinomial", dtype)
    return _multinomial(data, n, p, shape=shape, dtype=dtype, unroll=unroll)
