"""Samplers with rejection loops (``lax.while_loop``): gamma and log-gamma (Marsaglia and
Tsang), Poisson (Knuth's product of uniforms below 10, Hormann's transformed rejection
above), and those built on them: beta, Dirichlet, Student's t, chi-square, F, the
generalized normal and the uniform distribution on an Lp ball.

As in JAX, each gamma variate has its own key (``split(key, a.size)``) and its own loop: an
element's draws never depend on how long other elements loop, so results are the same in
any batch, under ``jit`` and per key under ``vmap``.
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src import higher_order as control_flow
from xjax._src.core import dtypes
from xjax._src.random import threefry
from xjax._src.random._common import (broadcast_shape_of, check_safe_to_cast, check_shape,
                                      float_dtype, int_dtype, sampler_jit)
from xjax._src.random.basic import normal_impl, normal_real_impl, uniform01
from xjax._src.random.keys import check_prng_key
from xjax._src.random.random_gamma import random_gamma
from xjax._src.random._common import lax_module as _lax, numpy_module as _jnp, split_keys as _split
from xjax._src.random.distributions import _exponential, rademacher_impl


# -- gamma --

def _gamma_one(key, alpha, *, log_space):
    """One Gamma(alpha) variate (or its log) from its own key, by Marsaglia-Tsang."""
    lax = _lax()
    dtype = alpha.dtype

    def const(value):
        return lax.full((), value, dtype)

    zero, one = const(0), const(1)
    # alpha < 1 samples Gamma(alpha + 1) and boosts it by U ** (1 / alpha)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, const(1.0 / 3.0))
    c = lax.div(const(1.0 / 3.0), lax.sqrt(d))

    def rejected(state):
        _, x_sq, v, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(const(0.0331), lax.mul(x_sq, x_sq))))
        log_test = lax.ge(lax.log(u), lax.add(lax.mul(x_sq, const(0.5)),
                                              lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))))
        return lax.bitwise_and(squeeze, log_test)

    def next_normal(state):
        key, subkey = _split(state[0], 2)
        x = normal_real_impl(subkey, (), dtype)
        return key, x, lax.add(one, lax.mul(x, c))

    def propose(state):
        key, x_key, u_key = _split(state[0], 3)
        _, x, v = control_flow.while_loop(lambda s: lax.le(s[2], zero), next_normal,
                                 (x_key, zero, const(-1)))
        u = uniform01(u_key, (), dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = _split(key, 2)
    # the initial state is rejected, so the loop draws at least one proposal
    _, _, v, _ = control_flow.while_loop(rejected, propose, (key, zero, one, const(2)))
    if log_space:
        u = uniform01(subkey, (), dtype)
        log_samples = lax.log1p(lax.neg(u))  # -Exponential, as log(1 - U)
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = lax.sub(one, uniform01(subkey, (), dtype))
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def gamma_impl(key, a, shape, dtype, log_space=False):
    """Gamma(a) variates of ``shape`` (traceable; ``key`` is raw key data)."""
    lax = _lax()
    jnp = _jnp()
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if tuple(a.shape) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    count = math.prod(shape)
    if count == 0:
        return lax.full(shape, 0, dtype)
    keys = lax.reshape(threefry.split(key, (count,)), (*shape, 2))
    # one loop per element (random_gamma_p maps them sequentially; JAX batches them with
    # vmap; each element's result is the same either way)
    return random_gamma(keys, a, log_space=log_space)


@sampler_jit(static_argnames=("shape", "dtype", "log_space"))
def _gamma(key, a, *, shape, dtype, log_space):
    return gamma_impl(key, a, shape, dtype, log_space)


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma random values, density proportional to ``x**(a - 1) * exp(-x)`` (unit scale).

    Parameters
    ----------
    key : a PRNG key
    a : float or array, broadcast-compatible with ``shape``
    shape : tuple of ints, optional (default: ``a.shape``)
    dtype : float dtype, optional

    Examples
    --------
    >>> from xjax import random
    >>> x = random.gamma(random.PRNGKey(0), 2.0, (1000,))
    >>> 1.8 < float(x.mean()) < 2.2
    True
    """
    data, _ = check_prng_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    shape = None if shape is None else broadcast_shape_of("gamma", shape, a)
    return _gamma(data, a, shape=shape, dtype=dtype, log_space=False)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """The logs of Gamma(a) variates, sampled in log space (accurate for small ``a``, whose
    samples underflow as floats)."""
    data, _ = check_prng_key("loggamma", key)
    dtype = float_dtype("gamma", dtype)
    shape = None if shape is None else broadcast_shape_of("gamma", shape, a)
    return _gamma(data, a, shape=shape, dtype=dtype, log_space=True)


# -- built on gamma --

@sampler_jit(static_argnames=("shape", "dtype"))
def _beta(key, a, b, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    key_a, key_b = _split(key, 2)
    log_gamma_a = gamma_impl(key_a, a, shape, dtype, log_space=True)
    log_gamma_b = gamma_impl(key_b, b, shape, dtype, log_space=True)
    # gamma_a / (gamma_a + gamma_b), scaled by the larger so that neither underflows
    log_max = lax.max(log_gamma_a, log_gamma_b)
    scaled_a = lax.exp(lax.sub(log_gamma_a, log_max))
    scaled_b = lax.exp(lax.sub(log_gamma_b, log_max))
    return lax.div(scaled_a, lax.add(scaled_a, scaled_b))


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) random values, density proportional to ``x**(a-1) * (1-x)**(b-1)``."""
    data, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_safe_to_cast("beta", dtype, a, b)
    shape = broadcast_shape_of("beta", shape, a, b)
    return _beta(data, a, b, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _dirichlet(key, alpha, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    alpha = lax.convert_element_type(alpha, dtype)
    log_gamma = gamma_impl(key, alpha, (*shape, alpha.shape[-1]), dtype, log_space=True)
    shifted = lax.exp(lax.sub(log_gamma, lax.stop_gradient(
        jnp.max(log_gamma, axis=-1, keepdims=True))))
    return lax.div(shifted, jnp.sum(shifted, axis=-1, keepdims=True))


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) random vectors (the last axis of ``alpha`` indexes categories)."""
    data, _ = check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    batch = tuple(np.shape(alpha)[:-1])
    if shape is None:
        shape = batch
    else:
        shape = tuple(shape)
        check_shape("dirichlet", shape, batch)
    return _dirichlet(data, alpha, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _t(key, df, *, shape, dtype):
    lax = _lax()
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _split(key, 2)
    n = normal_impl(key_n, shape, dtype)
    half_df = lax.div(df, lax.full((), 2, dtype))
    g = gamma_impl(key_g, half_df, shape, dtype)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t random values with ``df`` degrees of freedom."""
    data, _ = check_prng_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = broadcast_shape_of("t", shape, df)
    check_safe_to_cast("t", dtype, df)
    return _t(data, df, shape=shape, dtype=dtype)


def _chisquare_impl(key, df, shape, dtype):
    lax = _lax()
    df = lax.convert_element_type(df, dtype)
    two = lax.full((), 2, dtype)
    log_g = gamma_impl(key, lax.div(df, two), shape, dtype, log_space=True)
    return lax.mul(lax.exp(log_g), two)


@sampler_jit(static_argnames=("shape", "dtype"))
def _chisquare(key, df, *, shape, dtype):
    return _chisquare_impl(key, df, shape, dtype)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square random values with ``df`` degrees of freedom."""
    data, _ = check_prng_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = broadcast_shape_of("chisquare", shape, df)
    check_safe_to_cast("chisquare", dtype, df)
    return _chisquare(data, df, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _f(key, dfnum, dfden, *, shape, dtype):
    lax = _lax()
    dfnum = lax.convert_element_type(dfnum, dtype)
    dfden = lax.convert_element_type(dfden, dtype)
    key_dfd, key_dfn = _split(key, 2)
    num = lax.div(_chisquare_impl(key_dfn, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare_impl(key_dfd, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution random values with ``dfnum`` and ``dfden`` degrees of freedom."""
    data, _ = check_prng_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = broadcast_shape_of("f", shape, dfnum, dfden)
    check_safe_to_cast("f", dtype, dfnum, dfden)
    return _f(data, dfnum, dfden, shape=shape, dtype=dtype)


def _generalized_normal_impl(key, p, shape, dtype):
    key_g, key_r = _split(key, 2)
    g = gamma_impl(key_g, 1 / p, shape, dtype)
    r = rademacher_impl(key_r, shape, dtype)
    return r * g ** (1 / p)


@sampler_jit(static_argnames=("shape", "dtype"))
def _generalized_normal(key, p, *, shape, dtype):
    return _generalized_normal_impl(key, p, shape, dtype)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal random values, density proportional to ``exp(-|x|**p)``."""
    data, _ = check_prng_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    return _generalized_normal(data, p, shape=tuple(shape), dtype=dtype)


@sampler_jit(static_argnames=("d", "shape", "dtype"))
def _ball(key, p, *, d, shape, dtype):
    jnp = _jnp()
    k1, k2 = _split(key, 2)
    g = _generalized_normal_impl(k1, p, (*shape, d), dtype)
    e = _exponential(uniform01(k2, shape, dtype), dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def ball(key, d: int, p: float = 2, shape=(), dtype=None, *, out_sharding=None):
    """Points uniformly distributed in the unit Lp ball of dimension ``d``
    (shape ``(*shape, d)``)."""
    import operator
    data, _ = check_prng_key("ball", key)
    dtype = float_dtype("ball", dtype)
    return _ball(data, p, d=operator.index(d), shape=tuple(shape), dtype=dtype)


# -- Poisson --

def _poisson_knuth(key, lam, shape, dtype, max_iters):
    """Count uniforms until their product falls below exp(-lam) (small lam)."""
    lax = _lax()
    jnp = _jnp()

    def body(carry):
        i, k, rng, log_prod = carry
        rng, subkey = _split(rng, 2)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform01(subkey, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.any(log_prod > -lam) & (i < max_iters)

    k_init = lax.full(shape, 0, dtype)
    log_init = lax.full(shape, 0, np.float32)
    k = control_flow.while_loop(cond, body, (0, k_init, key, log_init))[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    """Hormann's transformed rejection with squeeze (PTRS), for lam >= 10."""
    lax = _lax()
    jnp = _jnp()
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split(key, 3)
        u = uniform01(subkey_0, shape, lam.dtype) - 0.5
        v = uniform01(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        return i + 1, k_out, accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    k_init = lax.full(shape, -1, lam.dtype)
    accepted = lax.full(shape, False, np.dtype(np.bool_))
    k = control_flow.while_loop(cond, body, (0, k_init, accepted, key))[1]
    return k.astype(dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _poisson(key, lam, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    use_knuth = (lam != lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    # rejection sampling's acceptance tends to 89%: any large rate keeps its lanes cheap
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson random integers with rate ``lam`` (int32 by default).

    Examples
    --------
    >>> from xjax import random
    >>> x = random.poisson(random.PRNGKey(0), 3.0, (1000,))
    >>> 2.8 < float(x.mean()) < 3.2
    True
    """
    data, _ = check_prng_key("poisson", key)
    jnp = _jnp()
    lax = _lax()
    dtype = int_dtype("poisson", dtype)
    shape = tuple(np.shape(lam)) if shape is None else broadcast_shape_of("poisson", shape,
                                                                           lam)
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
    return _poisson(data, lam, shape=shape, dtype=dtype)
