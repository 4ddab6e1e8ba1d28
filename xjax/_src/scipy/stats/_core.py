"""Summary statistics of ``xjax.scipy.stats``: :func:`mode`, :func:`rankdata` and
:func:`sem` (JAX's semantics: NaN policies beyond ``'propagate'`` mostly raise, since a
compiled function cannot look at the data)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.transformations.jit import jit
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import canonicalize_axis, check_arraylike, promote_args_inexact

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """What :func:`mode` returns: the most frequent value and how often it occurs."""
    mode: object
    count: object


def _check_nan_policy(fun_name, nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{fun_name}`, we cannot know whether `x` contains "
            f"nans. Please check if nans exist in `x` outside of the `{fun_name}` function.")


def _runs_of_sorted(s):
    """For values sorted along the last axis: is each the first of its run of equal values,
    and the positions of the first and last element of its run. NaNs (sorted last) form one
    run, as ``jnp.unique`` groups them."""
    n = s.shape[-1]
    same_as_previous = s[..., 1:] == s[..., :-1]
    if jnp.issubdtype(s.dtype, jnp.inexact):
        same_as_previous = same_as_previous | (jnp.isnan(s[..., 1:]) & jnp.isnan(s[..., :-1]))
    edge = jnp.ones(s.shape[:-1] + (1,), bool)
    starts_run = jnp.concatenate([edge, ~same_as_previous], axis=-1)
    ends_run = jnp.concatenate([~same_as_previous, edge], axis=-1)
    position = lax.broadcasted_iota(dtypes.default_int_dtype(), s.shape, s.ndim - 1)
    first = lax.cummax(jnp.where(starts_run, position, 0), axis=s.ndim - 1)
    last = lax.cummin(jnp.where(ends_run, position, n - 1), axis=s.ndim - 1, reverse=True)
    return starts_run, first, last


@jit(static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along ``axis`` (the smallest one among ties) and its count.

    Parameters
    ----------
    a : array_like
    axis : int or None
        The axis to reduce; ``None`` flattens ``a`` first.
    nan_policy : {'propagate'}
        NaNs count as one value. ``'omit'`` and ``'raise'`` raise NotImplementedError (as in
        JAX).
    keepdims : bool
        Keep the reduced axis (all axes for ``axis=None``) with size 1.

    Returns
    -------
    ModeResult
        ``(mode, count)``. Over an empty axis the mode is NaN and the count 0 (both floats).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import mode
    >>> mode(jnp.array([3, 1, 3, 2, 2]))
    ModeResult(mode=Array(2, dtype=int32), count=Array(2, dtype=int32))
    """
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is None:
        kept_shape = (1,) * x.ndim
        x = jnp.ravel(x)
        axis = 0
    else:
        axis = canonicalize_axis(axis, x.ndim)
        kept_shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    x = jnp.moveaxis(x, axis, -1)
    batch_shape = x.shape[:-1]
    if x.shape[-1] == 0:
        float_dtype = dtypes.default_float_dtype()
        value = jnp.full(batch_shape, np.nan, float_dtype)
        count = jnp.zeros(batch_shape, float_dtype)
    elif x.size == 0:  # no slices at all (and xjax's take_along_axis cannot gather from none)
        value = jnp.zeros(batch_shape, x.dtype)
        count = jnp.zeros(batch_shape, dtypes.default_int_dtype())
    else:
        s = jnp.sort(x, axis=-1)
        _, first, last = _runs_of_sorted(s)
        run_length = last - first + 1
        best = jnp.argmax(run_length, axis=-1)  # first maximum: the smallest value
        value = jnp.take_along_axis(s, best[..., None], axis=-1)[..., 0]
        count = jnp.max(run_length, axis=-1)
    if keepdims:
        value, count = jnp.reshape(value, kept_shape), jnp.reshape(count, kept_shape)
    return ModeResult(value, count)


def _rank_flat(a, method):
    order = jnp.argsort(a, stable=True)
    inverse = jnp.argsort(order, stable=True)  # where each element of a went in sorted order
    out_dtype = dtypes.default_float_dtype()
    if method == "ordinal":
        ranks = inverse + 1
    else:
        starts_run, first, last = _runs_of_sorted(a[order])
        if method == "dense":
            ranks = jnp.cumsum(starts_run.astype(dtypes.default_int_dtype()))[inverse]
        elif method == "min":
            ranks = first[inverse] + 1
        elif method == "max":
            ranks = last[inverse] + 1
        else:  # average of the tied positions
            ranks = 0.5 * (first[inverse] + last[inverse]).astype(out_dtype) + 1
    ranks = ranks.astype(out_dtype)
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return ranks
    return jnp.where(jnp.any(jnp.isnan(a)), np.nan, ranks)


@jit(static_argnames=("method", "axis", "nan_policy"))
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks (from 1) of the values of ``a``, ties resolved by ``method``.

    Parameters
    ----------
    a : array_like
    method : {'average', 'min', 'max', 'dense', 'ordinal'}
        What tied values get: the mean, lowest or highest of their positions, consecutive
        ranks of the distinct values (``'dense'``), or their positions in a stable order.
    axis : int or None
        Rank each slice along ``axis``; ``None`` ranks the flattened array.
    nan_policy : {'propagate'}
        Any NaN makes all ranks (of its slice) NaN; ``'omit'`` and ``'raise'`` raise
        NotImplementedError (as in JAX).

    Returns
    -------
    Array
        Ranks in the default float dtype.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import rankdata
    >>> rankdata(jnp.array([3, 1, 3, 2]))
    Array([3.5, 1. , 3.5, 2. ], dtype=float32)
    """
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(_rank_flat, axis, a, method)
    return _rank_flat(jnp.ravel(a), method)


# ddof is static here (JAX traces it): xjax's jnp.std needs a concrete ddof
@jit(static_argnames=("axis", "ddof", "nan_policy", "keepdims"))
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: ``std(a, ddof=ddof) / sqrt(n)`` along ``axis``.

    ``nan_policy='omit'`` leaves NaNs out of both the deviation and ``n``; other policies than
    ``'propagate'`` and ``'omit'`` raise ValueError.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import sem
    >>> sem(jnp.array([1., 2., 3., 4.]))
    Array(0.64549726, dtype=float32)
    """
    x, = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        n = x.size if axis is None else x.shape[axis]
        return jnp.std(x, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(n).astype(x.dtype)
    if nan_policy == "omit":
        n = jnp.sum(~jnp.isnan(x), axis, keepdims=keepdims)
        return jnp.nanstd(x, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(n).astype(x.dtype)
    raise ValueError(f"{nan_policy} is not supported")


__all__ = ["ModeResult", "mode", "rankdata", "sem"]
