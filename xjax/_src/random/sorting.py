"""Samplers that sort: ``permutation`` (JAX's repeated stable sort by random 32-bit keys),
``choice`` and ``categorical`` (Gumbel-max, and Gumbel-top-k without replacement)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from xjax._src.core import dtypes
from xjax._src.random import threefry
from xjax._src.random._common import canonical_shape, check_shape, sampler_jit
from xjax._src.random.keys import check_prng_key
from xjax._src.random._common import lax_module as _lax, numpy_module as _jnp
from xjax._src.core import errors
from xjax._src.core.array import Array
from xjax._src.core.trace import Tracer
from xjax._src.random.basic import randint, uniform
from xjax._src.random.distributions import gumbel

# -- permutation --

def shuffle_impl(key, x, axis: int):
    """``x`` shuffled along ``axis`` (each slice along it independently)."""
    lax = _lax()
    rounds = math.ceil(3 * np.log(max(1, x.size)) / np.log(dtypes.iinfo(np.uint32).max))
    # sorting by fresh 32-bit keys each round: once every pair of elements has had distinct
    # keys in some round the permutation is exactly uniform; the rounds make that likely
    for _ in range(rounds):
        keys = threefry.split(key, (2,))
        key, subkey = (lax.index_in_dim(keys, i, keepdims=False) for i in range(2))
        sort_keys = threefry.random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


@sampler_jit(static_argnames=("axis",))
def _shuffle(key, x, *, axis):
    return shuffle_impl(key, x, axis)


def permutation(key, x, axis: int = 0, independent: bool = False, *, out_sharding=None):
    """A random permutation of ``range(x)`` (int ``x``), or ``x`` shuffled along ``axis``.

    Parameters
    ----------
    key : a PRNG key
    x : int or array
    axis : int, default 0
    independent : bool, default False
        Shuffle each slice along ``axis`` independently, rather than permuting whole
        slices.

    Examples
    --------
    >>> from xjax import random
    >>> random.permutation(random.PRNGKey(0), 10)
    Array([0, 1, 8, 5, 6, 4, 3, 2, 7, 9], dtype=int32)
    """
    jnp = _jnp()
    data, _ = check_prng_key("permutation", key)
    _check_arraylike("permutation", x)
    ndim = np.ndim(x)
    axis = _canonical_axis(axis, ndim or 1)
    if not ndim:
        if not dtypes.is_integer(dtypes.dtype(x)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = _concrete_int(x, "argument x of jax.random.permutation()")
        return _shuffle(data, jnp.arange(r), axis=axis)
    x = jnp.asarray(x)
    if independent or ndim == 1:
        return _shuffle(data, x, axis=axis)
    order = _shuffle(data, jnp.arange(x.shape[axis]), axis=0)
    return jnp.take(x, order, axis, unique_indices=True)


# -- choice --

def choice(key, a, shape: Sequence[int] = (), replace: bool = True, p=None, axis: int = 0,
           mode: str | None = None):
    """Random samples from ``a`` (an array, or ``range(a)`` for an int).

    Parameters
    ----------
    key : a PRNG key
    a : int or array
    shape : tuple of ints, default ()
    replace : bool, default True
        Sample with replacement (independent draws) or without (distinct elements).
    p : 1-D array, optional
        Probabilities of the elements (uniform when None).
    axis : int, default 0
        The axis of ``a`` to sample along.
    mode : "low" or "high", optional
        Bits of the Gumbel sampler used without replacement with ``p``.

    Examples
    --------
    >>> from xjax import random
    >>> random.choice(random.PRNGKey(0), 5, (3,), replace=False).shape
    (3,)
    """
    jnp = _jnp()
    check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    _check_arraylike("choice", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = _concrete_int(a, "The error occurred in jax.random.choice()")
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        _check_arraylike("choice", p)
        p_arr = jnp.asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dtypes.to_inexact_dtype(p_arr.dtype))
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(dtypes.default_int_dtype())
        else:
            g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = _lax().top_k(g, n_draws)[1]
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    out_shape = tuple(shape) if arr.ndim == 0 else \
        arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:]
    return result.reshape(out_shape)


# -- categorical --

def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True,
                mode: str | None = None, *, out_sharding=None):
    """Random category indices drawn with probabilities ``softmax(logits, axis)``.

    Sampling with replacement takes the argmax of ``logits`` plus Gumbel noise; without
    replacement, the indices of the top ``k`` (the Gumbel-top-k trick).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import random
    >>> random.categorical(random.PRNGKey(0), jnp.zeros((2, 5))).shape
    (2,)
    """
    jnp = _jnp()
    lax = _lax()
    check_prng_key("categorical", key)
    _check_arraylike("categorical", logits)
    logits_arr = jnp.asarray(logits)
    batch_shape = tuple(np.delete(logits_arr.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape)
        check_shape("categorical", shape, batch_shape)
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= logits_arr.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits_arr.ndim, logits_arr.shape[axis])
        noise = gumbel(key, (*shape_prefix, *logits_shape), logits_arr.dtype, mode=mode)
        return jnp.argmax(noise + lax.expand_dims(logits_arr, tuple(range(len(shape_prefix)))),
                          axis=axis)
    logits_arr = logits_arr + gumbel(key, logits_arr.shape, logits_arr.dtype, mode=mode)
    k = math.prod(shape_prefix)
    if k > logits_arr.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits_arr.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(logits_arr, axis, -1), k)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dimensions)


# -- argument checks --

def _check_arraylike(name, *args):
    for i, x in enumerate(args):
        if not (type(x) is Array or isinstance(x, (Tracer, np.ndarray, np.generic))
                or isinstance(x, (bool, int, float, complex))):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                            f"position {i}.")


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _concrete_int(x, context):
    if isinstance(x, Tracer):
        raise errors.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {x}\n"
            f"{context}")
    return int(x)
