"""``approx_max_k`` and ``approx_min_k``, binding JAX's ``approx_top_k`` primitive: exact on
this runtime, as JAX's CPU lowering is. JAX lowers it on CPUs and GPUs to XLA's ApproxTopK
custom call with ``is_fallback=true``, which XLA rewrites to a sort and a slice: the exact
top (or bottom) ``k``, sorted, with ``-0.0`` equal to ``0.0`` (the comparator is ``>``/``<``,
not the total order); the sort is not stable, so the order of ties is unspecified there.
xjax's rules compute the same values from ``top_k`` semantics (on keys where ``-0.0`` is
``0.0``; ties keep index order) and a gather of the operand at those indices: the NumPy impl
directly, the lowering by tracing that composition, the jvp by gathering the tangent.

Not supported: ``aggregate_to_topk=False`` (JAX then returns a backend-sized partial
result; NotImplementedError). With NaNs in the operand JAX's comparator is not a strict
weak order and its order is unspecified; here NaNs come first, as in ``top_k``.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax.operands import to_operand
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.batch_rules import move_axis
from xjax._src.lax.compare import eq, select
from xjax._src.lax.elementwise import neg
from xjax._src.higher_order.linalg.common import lower_via_lax
from xjax._src.lax.shape import full_like
from xjax._src.lax.sorting import _take_along, top_k, _top_k_impl

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]


def _approx_top_k(operand, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
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
    return approx_top_k_p.bind(
        operand, k=k, reduction_dimension=reduction_dimension,
        recall_target=float(recall_target), is_max_k=bool(is_max_k),
        reduction_input_size_override=int(reduction_input_size_override),
        aggregate_to_topk=bool(aggregate_to_topk))


def _compose(operand, *, k, reduction_dimension, is_max_k, **unused):
    """The result with lax ops: ``top_k`` of keys where ``-0.0`` is ``0.0`` (JAX's
    comparator ties them, so ties keep index order), and the operand gathered there."""
    axis = reduction_dimension % len(get_aval(operand).shape)
    zero = full_like(operand, 0)
    key = select(eq(operand, zero), zero, operand)
    if not is_max_k:
        key = neg(key)
    _, indices = top_k(key, k, axis=axis)
    return [_take_along(operand, indices, axis), indices]


def _abstract_eval(operand, *, k, reduction_dimension, recall_target, is_max_k,
                   reduction_input_size_override, aggregate_to_topk):
    if not aggregate_to_topk:
        raise NotImplementedError("approx_top_k with aggregate_to_topk=False")
    shape = list(operand.shape)
    shape[reduction_dimension % len(shape)] = k
    return [ShapedArray(tuple(shape), operand.dtype, operand.weak_type),
            ShapedArray(tuple(shape), np.dtype(np.int32))]


def _impl(x, *, k, reduction_dimension, is_max_k, **unused):
    x = np.asarray(x)
    axis = reduction_dimension % x.ndim
    key = np.where(x == 0, np.zeros((), x.dtype), x)
    if not is_max_k:
        key = -key
    _, indices = _top_k_impl(key, k=k, axis=axis)
    return [np.take_along_axis(x, indices.astype(np.intp), axis), indices]


def _lower(ctx, *operands, **params):
    return lower_via_lax(_compose, "approx_top_k", multiple_results=True)(ctx, *operands,
                                                                          **params)


def _jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    values, indices = approx_top_k_p.bind(x, **params)
    index_tangent = Zero(tangent_aval(get_aval(indices)))
    if type(t) is Zero:
        return [values, indices], [Zero(tangent_aval(get_aval(values))), index_tangent]
    axis = params["reduction_dimension"] % len(get_aval(x).shape)
    return [values, indices], [_take_along(instantiate(t), indices, axis), index_tangent]


def _batch(args, dims, *, reduction_dimension, **params):
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    dim = reduction_dimension if reduction_dimension < 0 else reduction_dimension + 1
    return approx_top_k_p.bind(x, reduction_dimension=dim, **params), [0, 0]


approx_top_k_p = Primitive("approx_top_k", abstract_eval=_abstract_eval, impl=_impl,
                           lower=_lower, jvp=_jvp, transpose=NONLINEAR, batch=_batch,
                           multiple_results=True)


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
