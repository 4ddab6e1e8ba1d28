"""``approx_max_k`` and ``approx_min_k``: exact on this runtime, as JAX's CPU lowering is.

JAX binds an ``approx_top_k`` primitive whose CPU and GPU lowering is XLA's ApproxTopK
custom call with ``is_fallback=true``, which XLA rewrites to a sort and a slice: the
results are the exact top (or bottom) ``k``, sorted, with ``-0.0`` equal to ``0.0`` (the
comparator is ``>``/``<``, not the total order); the sort is not stable, so the order of
ties is unspecified there. xjax composes the same values from ``top_k`` (for the indices,
on keys where ``-0.0`` is ``0.0``; ties keep index order) and a gather of the operand at
those indices, so derivatives and batching come
from those primitives' rules. No ``approx_top_k_p`` primitive is defined; jaxprs show
``top_k`` and ``gather`` where JAX's show ``approx_top_k``.

Not supported: ``aggregate_to_topk=False`` (JAX then returns a backend-sized partial
result; NotImplementedError). With NaNs in the operand JAX's comparator is not a strict
weak order and its order is unspecified; here NaNs come first, as in ``top_k``.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax.core import dtypes
from xjax.lax.rules import to_operand

__all__ = ["approx_max_k", "approx_min_k"]


def _approx_top_k(operand, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    from xjax.lax.compare import eq
    from xjax.lax.compare import select
    from xjax.lax.elementwise import neg
    from xjax.lax.sorting import _take_along, top_k
    from xjax.lax.shape import full_like

    operand = to_operand(operand)
    k = operator.index(k)
    reduction_dimension = operator.index(reduction_dimension)
    operator.index(reduction_input_size_override)
    float(recall_target)
    shape = operand.shape
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if len(shape) == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {shape}")
    if not -len(shape) <= reduction_dimension < len(shape):
        raise ValueError(f"reduction_dimension {reduction_dimension} is out of bounds for an "
                         f"operand of rank {len(shape)}")
    axis = reduction_dimension % len(shape)
    if shape[axis] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {shape[axis]}, "
                         f"got {k}")
    if not dtypes.is_float(operand.dtype):
        raise ValueError("operand must be a floating type")
    if not aggregate_to_topk:
        raise NotImplementedError(
            "approx_max_k/approx_min_k with aggregate_to_topk=False are not supported by "
            "xjax (JAX returns a partial, backend-sized result there); use "
            "aggregate_to_topk=True")
    # -0.0 and 0.0 compare equal in JAX's comparator, so ties between them keep index order
    zero = full_like(operand, 0)
    key = select(eq(operand, zero), zero, operand)
    if not is_max_k:
        key = neg(key)
    _, indices = top_k(key, k, axis=axis)
    return [_take_along(operand, indices, axis), indices]


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices.

    On TPUs JAX computes an approximation whose expected recall is ``recall_target``; on
    CPUs and GPUs (and in xjax) the result is exact.

    Parameters
    ----------
    operand : array_like
        A floating-point array of rank at least 1.
    k : int
        How many values to return (``0 < k <= operand.shape[reduction_dimension]``).
    reduction_dimension : int
        The axis to search along (default: the last).
    recall_target : float
        The TPU algorithm's recall target; checked to be a number, otherwise unused.
    reduction_input_size_override : int
        The TPU algorithm's input size override; unused.
    aggregate_to_topk : bool
        Must be True (False raises NotImplementedError).

    Returns
    -------
    [values, indices] : list of two arrays
        ``operand``'s shape with ``reduction_dimension`` of size ``k``; values largest
        first (ties in index order, ``-0.0`` tied with ``0.0``; JAX leaves the order of
        ties unspecified), ``indices`` int32.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.approx_max_k(jnp.array([1., 4., 2., 3.]), 2)
    [Array([4., 3.], dtype=float32), Array([1, 3], dtype=int32)]
    """
    return _approx_top_k(operand, k, reduction_dimension, recall_target, True,
                         reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The ``k`` smallest values along ``reduction_dimension`` and their indices.

    Exact on this runtime, as on JAX's CPU and GPU backends. Parameters as
    :func:`approx_max_k`.

    Returns
    -------
    [values, indices] : list of two arrays
        Values smallest first (ties in index order, ``-0.0`` tied with ``0.0``),
        ``indices`` int32.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.approx_min_k(jnp.array([1., 4., 2., 3.]), 2)
    [Array([1., 2.], dtype=float32), Array([0, 2], dtype=int32)]
    """
    return _approx_top_k(operand, k, reduction_dimension, recall_target, False,
                         reduction_input_size_override, aggregate_to_topk)
