"""``xjax.nn.initializers``: functions ``init(key, shape, dtype) -> Array`` for parameters.

Each factory (``normal(stddev)``, ``glorot_uniform()``, ...) returns an initializer; ``zeros``
and ``ones`` are initializers themselves. They draw from ``xjax.random`` exactly as JAX's draw
from ``jax.random``, so the same key gives the same numbers.

Examples
--------
>>> import xjax
>>> init = xjax.nn.initializers.glorot_normal()
>>> init(xjax.random.PRNGKey(0), (3, 4)).shape
(3, 4)
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from xjax._src import numpy as jnp, random
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import canonicalize_shape

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]


class Initializer(Protocol):
    """The type of initializers: ``init(key, shape, dtype=None, out_sharding=None)``."""

    def __call__(self, key, shape, dtype=None, out_sharding=None) -> Any:
        ...


def _dtype_or_default(dtype):
    return dtypes.default_float_dtype() if dtype is None else dtype


def _no_sharding(out_sharding, name):
    if out_sharding is not None:
        raise NotImplementedError(f"{name}: out_sharding is not supported")


def zeros(key, shape, dtype=None, out_sharding=None):
    """An initializer returning zeros (``key`` is unused).

    Examples
    --------
    >>> import xjax
    >>> xjax.nn.initializers.zeros(xjax.random.PRNGKey(0), (2,))
    Array([0., 0.], dtype=float32)
    """
    _no_sharding(out_sharding, "zeros")
    return jnp.zeros(shape, _dtype_or_default(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An initializer returning ones (``key`` is unused).

    Examples
    --------
    >>> import xjax
    >>> xjax.nn.initializers.ones(xjax.random.PRNGKey(0), (2,))
    Array([1., 1.], dtype=float32)
    """
    _no_sharding(out_sharding, "ones")
    return jnp.ones(shape, _dtype_or_default(dtype))


def constant(value, dtype=None) -> Initializer:
    """An initializer filling arrays with ``value``.

    Examples
    --------
    >>> import xjax
    >>> xjax.nn.initializers.constant(-7)(xjax.random.PRNGKey(0), (2,))
    Array([-7., -7.], dtype=float32)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "constant")
        return jnp.full(shape, value, dtype=_dtype_or_default(dtype))
    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``.

    Examples
    --------
    >>> import xjax
    >>> xjax.nn.initializers.uniform(10.0)(xjax.random.PRNGKey(0), (2,)).shape
    (2,)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype_or_default(dtype)
        return random.uniform(key, shape, dtype, out_sharding=out_sharding) * \
            jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """An initializer drawing from a normal distribution of mean 0 and ``stddev``.

    Examples
    --------
    >>> import xjax
    >>> xjax.nn.initializers.normal(5.0)(xjax.random.PRNGKey(0), (2,)).shape
    (2,)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype_or_default(dtype)
        return random.normal(key, shape, dtype, out_sharding=out_sharding) * \
            jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """An initializer drawing from a standard normal truncated to ``[lower, upper]``, scaled
    by ``stddev`` (the bounds are in units of the untruncated standard deviation).

    Examples
    --------
    >>> import xjax
    >>> xjax.nn.initializers.truncated_normal(5.0)(xjax.random.PRNGKey(0), (2,)).shape
    (2,)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype_or_default(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype,
                                       out_sharding=out_sharding) * jnp.array(stddev, dtype)
    return init


def _size(shape, axes):
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """``(fan_in, fan_out)`` of a weight ``shape``: input/output sizes times the receptive
    field (the product of the dimensions that are neither input, output nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size = _size(shape, in_axis)
    out_size = _size(shape, out_axis)
    batch_size = _size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _real_dtype(dtype):
    return np.array(0, dtype).real.dtype


def _complex_uniform(key, shape, dtype):
    """Complex values uniform on the disk of radius sqrt(2) (variance 1)."""
    key_r, key_theta = random.split(key)
    real_dtype = _real_dtype(dtype)
    dtype = dtypes.to_complex_dtype(real_dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Complex normal values with modulus truncated to ``upper`` (by inverting the CDF of
    the modulus)."""
    key_r, key_theta = random.split(key)
    real_dtype = _real_dtype(dtype)
    dtype = dtypes.to_complex_dtype(real_dtype)
    t = (1 - jnp.exp(jnp.array(-(upper ** 2), dtype))) * \
        random.uniform(key_r, shape, real_dtype).astype(dtype)
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


# Standard deviations of the standard normal truncated to (-2, 2), and of the complex
# standard normal with modulus truncated to 2.
_TRUNCATED_STDDEV = .87962566103423978
_COMPLEX_TRUNCATED_STDDEV = .95311164380491208


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None) -> Initializer:
    """An initializer with variance ``scale / n``, ``n`` given by ``mode`` from the weight's
    fans.

    Parameters
    ----------
    scale : float
    mode : {"fan_in", "fan_out", "fan_avg", "fan_geo_avg"}
    distribution : {"truncated_normal", "normal", "uniform"}
    in_axis, out_axis, batch_axis : int or sequence of ints
        The input, output and batch dimensions of the weight shape.
    dtype : dtype, optional

    Examples
    --------
    >>> import xjax
    >>> init = xjax.nn.initializers.variance_scaling(2.0, "fan_in", "normal")
    >>> init(xjax.random.PRNGKey(0), (3, 4)).shape
    (3, 4)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = canonicalize_shape(shape)
        dtype = _dtype_or_default(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        floating = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if floating:
                stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype,
                                               out_sharding=out_sharding) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(_COMPLEX_TRUNCATED_STDDEV, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype, out_sharding=out_sharding) * \
                jnp.sqrt(variance)
        if distribution == "uniform":
            if floating:
                return random.uniform(key, shape, dtype, -1, out_sharding=out_sharding) * \
                    jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return init


def _variance_scaling_family(name, scale, mode, distribution, doc):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = doc
    return factory


glorot_uniform = _variance_scaling_family(
    "glorot_uniform", 1.0, "fan_avg", "uniform",
    "Glorot (Xavier) uniform initializer: ``variance_scaling(1.0, 'fan_avg', 'uniform')``.")
glorot_normal = _variance_scaling_family(
    "glorot_normal", 1.0, "fan_avg", "truncated_normal",
    "Glorot (Xavier) normal initializer: "
    "``variance_scaling(1.0, 'fan_avg', 'truncated_normal')``.")
lecun_uniform = _variance_scaling_family(
    "lecun_uniform", 1.0, "fan_in", "uniform",
    "LeCun uniform initializer: ``variance_scaling(1.0, 'fan_in', 'uniform')``.")
lecun_normal = _variance_scaling_family(
    "lecun_normal", 1.0, "fan_in", "truncated_normal",
    "LeCun normal initializer: ``variance_scaling(1.0, 'fan_in', 'truncated_normal')``.")
he_uniform = _variance_scaling_family(
    "he_uniform", 2.0, "fan_in", "uniform",
    "He (Kaiming) uniform initializer: ``variance_scaling(2.0, 'fan_in', 'uniform')``.")
he_normal = _variance_scaling_family(
    "he_normal", 2.0, "fan_in", "truncated_normal",
    "He (Kaiming) normal initializer: "
    "``variance_scaling(2.0, 'fan_in', 'truncated_normal')``.")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def _random_orthogonal():
    fn = getattr(random, "orthogonal", None)
    if fn is None:
        raise NotImplementedError("orthogonal initializers need xjax.random.orthogonal (a QR "
                                  "decomposition), which does not exist yet")
    return fn


def orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An initializer of (semi-)orthogonal matrices: the weight, reshaped to a matrix whose
    columns run along ``column_axis``, has orthonormal rows or columns, times ``scale``.

    Examples
    --------
    >>> import xjax
    >>> init = xjax.nn.initializers.orthogonal()
    >>> init(xjax.random.PRNGKey(0), (3, 3)).shape
    (3, 3)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "orthogonal")
        dtype = _dtype_or_default(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = _random_orthogonal()(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An initializer for 3-, 4- and 5-D convolution kernels: zeros except an orthogonal
    matrix at the spatial centre (Xiao et al., 2018).

    Examples
    --------
    >>> import xjax
    >>> init = xjax.nn.initializers.delta_orthogonal()
    >>> init(xjax.random.PRNGKey(0), (3, 3, 3)).shape
    (3, 3, 3)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "delta_orthogonal")
        dtype = _dtype_or_default(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis,
                                  dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(ortho_matrix)
    return init
