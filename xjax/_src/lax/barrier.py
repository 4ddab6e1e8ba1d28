"""``optimization_barrier``: an identity over a pytree that the compiler may not move
operations across (``stablehlo.optimization_barrier``).

Rules as JAX 0.10.2 defines them: the jvp puts the primals through one barrier and the
(instantiated) tangents through another; the transpose puts the (instantiated) cotangents
through a barrier; the batch rule keeps every batch dimension where it is.

Tangents of integer and boolean operands are float0 and carry no values; they stay
symbolic zeros instead of going through a barrier (a float0 array has no StableHLO type).
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Primitive
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.lax.ad_rules import Zero, instantiate, is_undefined
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.stablehlo import aval_type

__all__ = ["optimization_barrier", "optimization_barrier_p"]


def _optimization_barrier_abstract_eval(*operands):
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in operands]


def _optimization_barrier_impl(*operands):
    return [np.asarray(x) for x in operands]


def _optimization_barrier_lower(ctx, *operands):
    if not operands:
        return []
    return ctx.builder.op("stablehlo.optimization_barrier", list(operands),
                          [aval_type(a) for a in ctx.avals_out])


def _barrier_of_values(values):
    """``values`` with every non-Zero entry put through one barrier (Zeros of float0 avals
    pass; other Zeros are instantiated first, as JAX instantiates them)."""
    values = [v if type(v) is Zero and v.aval.dtype == dtypes.float0 else instantiate(v)
              for v in values]
    positions = [i for i, v in enumerate(values) if type(v) is not Zero]
    if not positions:
        return values
    outs = optimization_barrier_p.bind(*(values[i] for i in positions))
    result = list(values)
    for i, out in zip(positions, outs, strict=True):
        result[i] = out
    return result


def _optimization_barrier_jvp(primals, tangents):
    return (optimization_barrier_p.bind(*primals) if primals else [],
            _barrier_of_values(list(tangents)))


def _optimization_barrier_transpose(cts, *operands):
    linear = [i for i, x in enumerate(operands) if is_undefined(x)]
    outs = _barrier_of_values([cts[i] for i in linear])
    result = [None] * len(operands)
    for i, ct in zip(linear, outs, strict=True):
        result[i] = ct
    return result


def _optimization_barrier_batch(args, dims):
    return optimization_barrier_p.bind(*args), list(dims)


optimization_barrier_p = Primitive(
    "optimization_barrier",
    abstract_eval=_optimization_barrier_abstract_eval,
    impl=_optimization_barrier_impl,
    lower=_optimization_barrier_lower,
    jvp=_optimization_barrier_jvp,
    transpose=_optimization_barrier_transpose,
    batch=_optimization_barrier_batch,
    multiple_results=True)


def optimization_barrier(operand, /):
    """Prevent the compiler from moving operations across the barrier.

    Every output of the barrier is evaluated before any operation that uses one of the
    barrier's outputs; the values are returned unchanged. Useful to order computations
    or to stop XLA from fusing or rematerialising across a point.

    Parameters
    ----------
    operand : pytree of array_like
        The values to pass through the barrier.

    Returns
    -------
    pytree
        ``operand`` with the same structure; every leaf an array equal to the input leaf
        (Python scalars become weakly typed arrays).

    Examples
    --------
    >>> import xjax
    >>> from xjax import lax
    >>> xjax.jit(lambda x: lax.optimization_barrier(lax.sin(x)) + lax.sin(x))(0.)
    Array(0., dtype=float32, weak_type=True)
    """
    leaves, treedef = tree_flatten(operand)
    outs = optimization_barrier_p.bind(*(to_operand(x) for x in leaves))
    return tree_unflatten(treedef, outs)
