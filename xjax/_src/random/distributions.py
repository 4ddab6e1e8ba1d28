"""Continuous and discrete samplers built by transforming uniform or normal variates (no
rejection loops): truncated normal, exponential, Laplace, logistic, Gumbel, Cauchy,
Rademacher, lognormal, Pareto, Rayleigh, Weibull, Maxwell, triangular, Wald, geometric.

Each follows JAX's algorithm step for step, so the same key gives JAX's numbers.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.config import config
from xjax._src.random import threefry
from xjax._src.lax.special import erf_inv
from xjax._src.lax.transcendental import log1p
from xjax._src.random._common import (broadcast_shape_of, canonical_shape, check_safe_to_cast,
                                      float_dtype, int_dtype, sampler_jit)
from xjax._src.random.basic import normal_impl, uniform_impl
from xjax._src.random.keys import check_prng_key
from xjax._src.random._common import lax_module as _lax, numpy_module as _jnp, split_keys


def _const(value, dtype):
    return np.asarray(value, dtype)


def _uniform(key, shape, dtype, minval=0.0, maxval=1.0):
    return uniform_impl(key, _const(minval, dtype), _const(maxval, dtype), shape, dtype)


# -- truncated normal --

@sampler_jit(static_argnames=("shape", "dtype"))
def _truncated_normal(key, lower, upper, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    sqrt2 = lax.full((), np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = uniform_impl(key, a, b, shape, dtype)
    out = lax.mul(sqrt2, erf_inv(u))
    # keep rounding (or u == a) from reaching the bounds: clip into the open interval
    return jnp.clip(out,
                    lax.nextafter(lax.stop_gradient(lower), lax.full_like(lower, np.inf)),
                    lax.nextafter(lax.stop_gradient(upper), lax.full_like(upper, -np.inf)))


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Standard normal values truncated to the open interval ``(lower, upper)``.

    Examples
    --------
    >>> from xjax import random
    >>> x = random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (1000,))
    >>> bool((x > -1).all() and (x < 1).all())
    True
    """
    data, _ = check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    shape = broadcast_shape_of("truncated_normal", shape, lower, upper)
    return _truncated_normal(data, lower, upper, shape=shape, dtype=dtype)


# -- samplers of one uniform variate --

def _unary_sampler(name, transform, minval=0.0, maxval=1.0):
    """A sampler ``name(key, shape=(), dtype=None)`` returning ``transform(u)`` for ``u``
    uniform in ``[minval(dtype), maxval)``."""

    @sampler_jit(static_argnames=("shape", "dtype"))
    def sample(key, *, shape, dtype):
        low = minval(dtype) if callable(minval) else minval
        return transform(_uniform(key, shape, dtype, low, maxval), dtype)

    sample.__name__ = f"_{name}"

    def sampler(key, shape=(), dtype=None, *, out_sharding=None):
        data, _ = check_prng_key(name, key)
        return sample(data, shape=canonical_shape(shape), dtype=float_dtype(name, dtype))

    sampler.__name__ = sampler.__qualname__ = name
    return sampler


def _exponential(u, dtype):
    lax = _lax()
    return lax.neg(log1p(lax.neg(u)))  # log(1 - u): its argument is in (0, 1]


def _laplace(u, dtype):
    lax = _lax()
    return lax.mul(lax.sign(u), log1p(lax.neg(lax.abs(u))))


def _logistic(u, dtype):
    lax = _lax()
    return lax.sub(lax.log(u), log1p(lax.neg(u)))


def _cauchy(u, dtype):
    lax = _lax()
    return lax.tan(lax.mul(lax.full((), np.pi, dtype), lax.sub(u, lax.full((), 0.5, dtype))))


exponential = _unary_sampler("exponential", _exponential)
exponential.__doc__ = """Exponential random values, density ``exp(-x)`` on ``x >= 0``.

    Examples
    --------
    >>> from xjax import random
    >>> bool((random.exponential(random.PRNGKey(0), (100,)) >= 0).all())
    True
    """
laplace = _unary_sampler("laplace", _laplace,
                         minval=lambda dtype: -1.0 + dtypes.finfo(dtype).epsneg)
laplace.__doc__ = "Laplace random values, density ``exp(-|x|) / 2``."
logistic = _unary_sampler("logistic", _logistic, minval=lambda dtype: dtypes.finfo(dtype).tiny)
logistic.__doc__ = "Logistic random values, density ``exp(-x) / (1 + exp(-x))**2``."
cauchy = _unary_sampler("cauchy", _cauchy, minval=lambda dtype: dtypes.finfo(dtype).eps)
cauchy.__doc__ = "Cauchy random values, density proportional to ``1 / (x**2 + 1)``."


# -- Gumbel --

def gumbel_impl(key, shape, dtype, mode):
    lax = _lax()
    jnp = _jnp()
    info = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest(key, shape)
    if mode in ("high", "highest"):
        both = _uniform(key, (2, *shape), dtype)
        high, low = (lax.index_in_dim(both, i, keepdims=False) for i in range(2))
        x = jnp.where(high >= 0.5, high, high + 2.0 ** -info.nmant * low + info.tiny)
        return -jnp.log(-log1p(-x))
    u = _uniform(key, shape, dtype, info.tiny, 1.0)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


def _gumbel_highest(key, shape):
    """Gumbel noise from 64 random bits per value (float32 only): the uniform variate is
    built from the leading set bit of a 64-bit fixed-point number, so tiny values keep
    their precision."""
    lax = _lax()
    jnp = _jnp()
    u32 = np.dtype(np.uint32)
    info = dtypes.finfo(np.float32)
    words = threefry.random_bits(key, 32, (2, *shape))
    neg = lax.bitwise_not(words)
    low_word = lax.index_in_dim(neg, 1, keepdims=False)
    carry = lax.convert_element_type(lax.eq(low_word, lax.full((), 0xFFFFFFFF, u32)), u32)
    increment = jnp.stack([carry, jnp.ones_like(low_word)])
    neg = neg + increment  # 1 - bits, in 64-bit fixed point
    flip = lax.lt(lax.index_in_dim(words, 0, keepdims=False), lax.full((), 1 << 31, u32))
    x = _safe_int_to_float(jnp.where(flip, words, neg), info)
    return jnp.where(flip, -jnp.log(-log1p(-x)), -jnp.log(-jnp.log(x)))


def _safe_int_to_float(words, info):
    """uint32[2, ...] fixed-point fractions to float32 in (0, 1), rounding down."""
    lax = _lax()
    jnp = _jnp()
    u32 = np.dtype(np.uint32)
    hi, lo = (lax.index_in_dim(words, i, keepdims=False) for i in range(2))
    hi_clz, lo_clz = lax.clz(hi), lax.clz(lo)
    thirty_two = lax.full((), 32, u32)
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hi_clz),
        jnp.where(hi_clz == 32, lax.shift_left(lo, lo_clz),
                  lax.shift_right_logical(lo, lax.sub(thirty_two, hi_clz))))
    mantissa = lax.shift_right_logical(mantissa, lax.full((), info.bits - info.nmant - 1, u32))
    mantissa = lax.bitwise_and(mantissa, lax.full((), (1 << info.nmant) - 1, u32))
    leading = jnp.where(hi_clz == 32, lax.add(thirty_two, lo_clz), hi_clz)
    exponent = lax.shift_left(lax.sub(lax.full((), -info.minexp, u32), leading),
                              lax.full((), info.nmant, u32))
    exponent = lax.bitwise_and(exponent, lax.full(
        (), (1 << (info.bits - 2)) - (1 << (info.nmant - 1)), u32))
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


@sampler_jit(static_argnames=("shape", "dtype", "mode"))
def _gumbel(key, *, shape, dtype, mode):
    return gumbel_impl(key, shape, dtype, mode)


def gumbel(key, shape=(), dtype=None, mode: str | None = None, *, out_sharding=None):
    """Gumbel random values, density ``exp(-(x + exp(-x)))``.

    ``mode`` ("low", "high" or "highest") sets how many random bits each value uses, so
    how far into the tail the samples reach.
    """
    data, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    if mode is None:
        mode = "high" if getattr(config, "jax_use_high_dynamic_range_gumbel", False) else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(data, shape=canonical_shape(shape), dtype=dtype, mode=mode)


# -- Rademacher --

def rademacher_impl(key, shape, dtype):
    """-1 or 1 from a fair coin (JAX's ``bernoulli(key, 0.5)``), in ``dtype``."""
    lax = _lax()
    p = np.asarray(0.5, dtypes.default_float_dtype())
    u = _uniform(key, shape, p.dtype)
    coin = lax.convert_element_type(lax.lt(u, p), dtype)
    return lax.convert_element_type(lax.sub(lax.mul(lax.full((), 2, dtype), coin),
                                            lax.full((), 1, dtype)), dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _rademacher(key, *, shape, dtype):
    return rademacher_impl(key, shape, dtype)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Random signs: -1 or 1 with equal probability (int32 by default)."""
    data, _ = check_prng_key("rademacher", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype)
    return _rademacher(data, shape=canonical_shape(shape), dtype=dtype)


# -- samplers with parameters --

@sampler_jit(static_argnames=("shape", "dtype"))
def _lognormal(key, sigma, *, shape, dtype):
    lax = _lax()
    return lax.exp(lax.mul(normal_impl(key, shape, dtype), lax.convert_element_type(sigma,
                                                                                    dtype)))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    """Lognormal random values: ``exp(sigma * normal)``."""
    data, _ = check_prng_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype, allow_complex=True)
    shape = broadcast_shape_of("lognormal", shape, sigma)
    check_safe_to_cast("lognormal", dtype, sigma)
    return _lognormal(data, sigma, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _pareto(key, b, *, shape, dtype):
    lax = _lax()
    b = lax.convert_element_type(b, dtype)
    return lax.exp(lax.div(_exponential(_uniform(key, shape, dtype), dtype), b))


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto random values, density ``b / x**(b + 1)`` on ``x >= 1``."""
    data, _ = check_prng_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = broadcast_shape_of("pareto", shape, b)
    check_safe_to_cast("pareto", dtype, b)
    return _pareto(data, b, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _rayleigh(key, scale, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    u = _uniform(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    root = lax.sqrt(lax.mul(lax.log(u), lax.full((), -2, dtype)))
    return lax.mul(scale, root)


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh random values of scale ``scale``."""
    data, _ = check_prng_key("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    shape = broadcast_shape_of("rayleigh", shape, scale)
    check_safe_to_cast("rayleigh", dtype, scale)
    return _rayleigh(data, scale, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _weibull_min(key, scale, concentration, *, shape, dtype):
    jnp = _jnp()
    u = _uniform(key, shape, dtype)
    return jnp.power(-log1p(-u), 1.0 / concentration) * scale


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull random values with ``scale`` and ``concentration``."""
    data, _ = check_prng_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    return _weibull_min(data, scale, concentration, shape=canonical_shape(shape), dtype=dtype)


def _maxwell_impl(key, shape, dtype):
    jnp = _jnp()
    x = normal_impl(key, (*shape, 3), dtype)
    return jnp.sqrt(jnp.sum(x * x, axis=-1))


@sampler_jit(static_argnames=("shape", "dtype"))
def _maxwell(key, *, shape, dtype):
    return _maxwell_impl(key, shape, dtype)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """One-sided Maxwell random values: the length of a standard normal 3-vector."""
    data, _ = check_prng_key("maxwell", key)
    return _maxwell(data, shape=canonical_shape(shape), dtype=float_dtype("maxwell", dtype))


@sampler_jit(static_argnames=("shape", "dtype"))
def _double_sided_maxwell(key, loc, scale, *, shape, dtype):
    params_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = (shape or params_shape) + params_shape
    maxwell_key, sign_key = split_keys(key, 2)
    values = _maxwell_impl(maxwell_key, shape, dtype)
    signs = rademacher_impl(sign_key, shape, dtype)
    return signs * values * scale + loc


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell random values centred at ``loc`` with scale ``scale``."""
    data, _ = check_prng_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell(data, loc, scale, shape=canonical_shape(shape), dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _triangular(key, left, mode, right, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    left, mode, right = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                         for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular random values on ``[left, right]`` peaking at ``mode``."""
    data, _ = check_prng_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = broadcast_shape_of("triangular", shape, left, mode, right)
    check_safe_to_cast("triangular", dtype, left, mode, right)
    return _triangular(data, left, mode, right, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _wald(key, mean, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    k1, k2 = split_keys(key, 2)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = normal_impl(k1, shape, dtype)
    z = _uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) random values with mean ``mean``."""
    data, _ = check_prng_key("wald", key)
    dtype = float_dtype("wald", dtype)
    shape = broadcast_shape_of("wald", shape, mean)
    check_safe_to_cast("wald", dtype, mean)
    return _wald(data, mean, shape=shape, dtype=dtype)


@sampler_jit(static_argnames=("shape", "dtype"))
def _geometric(key, p, *, shape, dtype):
    lax = _lax()
    jnp = _jnp()
    p = jnp.asarray(p)
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.to_inexact_dtype(p.dtype))
    u = _uniform(key, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)  # as JAX: avoids log(0) without changing other samples
    log_one_minus_p = jnp.broadcast_to(log1p(-p), shape)
    return (lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1).astype(dtype)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric random values: the number of trials up to the first success."""
    data, _ = check_prng_key("geometric", key)
    dtype = int_dtype("geometric", dtype)
    shape = broadcast_shape_of("geometric", shape, p)
    return _geometric(data, p, shape=shape, dtype=dtype)
