"""Helpers shared by the samplers: jitting with the Threefry mode in the cache key, shape and
dtype checks with JAX's messages."""

from __future__ import annotations

import functools

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.config import config
from xjax._src import lax, numpy
from xjax._src.transformations.jit import jit
from xjax._src.lax.shape import canonicalize_shape


def sampler_jit(*, static_argnames=()):
    """``jit`` for an internal sampler whose static arguments are passed by keyword.

    As in JAX, samplers are compiled even when called eagerly: eager and jitted calls then
    run the same XLA code and give the same bits (floating-point steps such as ``erf_inv``
    round exactly as under ``jit``). The Threefry mode is a hidden static argument, so
    flipping ``jax_threefry_partitionable`` never reuses a stale executable.
    """

    def wrap(fun):

        @functools.wraps(fun)
        def with_mode(*args, _threefry_partitionable, **kwargs):
            return fun(*args, **kwargs)

        jitted = jit(with_mode, static_argnames=(*static_argnames, "_threefry_partitionable"))

        @functools.wraps(fun)
        def call(*args, **kwargs):
            return jitted(*args, _threefry_partitionable=config.jax_threefry_partitionable,
                          **kwargs)

        return call

    return wrap


def canonical_shape(shape) -> tuple:
    return canonicalize_shape(shape)


def check_shape(name: str, shape, *param_shapes) -> None:
    """JAX's error when parameter shapes do not broadcast to exactly ``shape``."""
    if not param_shapes:
        return
    try:
        result = tuple(np.broadcast_shapes(tuple(shape), *map(tuple, param_shapes)))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                         f"{[tuple(shape), *map(tuple, param_shapes)]}") from None
    if result != tuple(shape):
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         "argument, and the result of broadcasting the shapes must equal the "
                         f"shape argument, but got result {result} for shape argument "
                         f"{tuple(shape)}.")


def broadcast_shape_of(name: str, shape, *params) -> tuple:
    """The sample shape: ``shape`` checked against the parameters' shapes, or their
    broadcast shape when ``shape`` is None."""
    param_shapes = [np.shape(p) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*param_shapes)) if param_shapes else ()
    shape = canonical_shape(shape)
    check_shape(name, shape, *param_shapes)
    return shape


def float_dtype(name: str, dtype, allow_complex: bool = False) -> np.dtype:
    """The canonical float dtype a sampler returns (the default float when None)."""
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    ok = dtypes.is_float(dtype) or (allow_complex and dtypes.is_complex(dtype))
    if not ok:
        kind = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got {dtype}")
    return dtype


def int_dtype(name: str, dtype) -> np.dtype:
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dtype}")
    return dtype


def check_safe_to_cast(name: str, dtype, *args) -> None:
    """JAX's TypePromotionError for parameters that promotion would not cast to ``dtype``
    (a float64 parameter for float32 samples, a complex one for real samples)."""
    for arg in args:
        arg_dtype = dtypes.dtype(arg)
        if arg_dtype != dtype and dtypes.result_type(arg, dtype) != dtype:
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type "
                f"{np.dtype(arg_dtype).name} to {np.dtype(dtype).name}")


# Imported on first use: xjax.random loads while xjax.lax and xjax.numpy are still being
# set up (each module of this package used to carry its own copy of these).
def lax_module():
    """``xjax.lax``."""
    return lax


def numpy_module():
    """``xjax.numpy``."""
    return numpy


def split_keys(key, num: int) -> list:
    """``num`` keys split from ``key``, as a list."""
    from xjax._src.random import threefry  # threefry imports this module
    lax = lax_module()
    keys = threefry.split(key, (num,))
    return [lax.index_in_dim(keys, i, keepdims=False) for i in range(num)]
