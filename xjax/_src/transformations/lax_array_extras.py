"""``jax.lax`` array helpers composed from existing primitives: ``empty``, ``broadcast_like``
and ``scatter_apply``.

``scatter_apply`` applies a unary function at the positions a scatter selects, once per
index vector that selects them (duplicates apply it repeatedly), as XLA's scatter does with
``lambda x, _: func(x)`` as its update computation. xjax's ``scatter`` primitive writes its
updates without a custom computation, so here the number of applications per element is
counted with ``scatter_add`` (which reads the indices exactly as the scatter would, in every
mode) and ``func`` is applied that many times where the count is positive. As in JAX, the
result is not differentiable (its custom JVP raises JAX's NotImplementedError) and ``func``
may not close over traced values.
"""

from __future__ import annotations

import functools

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.ad_util import get_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.trace import Tracer
from xjax._src.higher_order.jit_call import consts_as_args
from xjax._src.interpreters.staging import trace_to_jaxpr
from xjax._src.lax.compare import gt, select_n
from xjax._src.lax.operands import to_operand
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.elementwise import sub
from xjax._src.lax.gather_scatter import scatter_add
from xjax._src.lax.reduce import reduce_max
from xjax._src.lax.shape import as_operand, broadcast_in_dim, canonicalize_shape, full, reshape
from xjax._src.higher_order import while_loop
from xjax._src.transformations.custom_derivatives import custom_jvp
from xjax._src.transformations.vmap import vmap


def empty(shape, dtype, *, out_sharding=None):
    """An array whose values are unspecified (xjax fills it with zeros, as XLA's CPU does).

    Parameters
    ----------
    shape : int or sequence of int
    dtype : dtype
    out_sharding : None
        Only ``None`` (one device) is supported.

    Returns
    -------
    Array
        Of ``shape`` and ``dtype``; do not rely on its values.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.empty((2, 3), np.float32).shape
    (2, 3)
    """
    if out_sharding is not None:
        raise NotImplementedError("lax.empty: out_sharding is not supported by xjax "
                                  "(single-device only); pass None")
    shape = canonicalize_shape(shape)
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "lax.empty")
    return full(shape, 0, dtype)


def broadcast_like(arr, like_arr):
    """Broadcast ``arr`` to the shape of ``like_arr`` (NumPy's rules: new leading dimensions,
    size-1 dimensions stretched).

    Parameters
    ----------
    arr : array_like
    like_arr : array_like
        Only its shape is read.

    Returns
    -------
    Array
        ``arr``'s values and dtype, with ``like_arr``'s shape.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.broadcast_like(jnp.array([1, 2, 3]), jnp.zeros((2, 3)))
    Array([[1, 2, 3],
           [1, 2, 3]], dtype=int32)
    """
    shape = get_aval(like_arr).shape
    arr = as_operand(arr)
    aval = get_aval(arr)
    if aval.shape == shape:
        return arr
    if len(shape) < len(aval.shape):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={aval.shape} shape={shape}")
    lead = len(shape) - len(aval.shape)
    if not all(d in (1, s) for d, s in zip(aval.shape, shape[lead:], strict=True)):
        raise ValueError(f"Incompatible types for broadcasting: input type="
                         f"{aval.str_short()} and requested type="
                         f"{aval.update(shape=shape, weak_type=False).str_short()}")
    return broadcast_in_dim(arr, shape, tuple(range(lead, len(shape))))


def _elementwise(func, x, aval):
    """``func`` (written for scalars) applied to every element of ``x``, by vmap."""
    size = int(np.prod(aval.shape, dtype=np.int64))
    out = vmap(func)(reshape(x, (size,)))
    out_aval = get_aval(out)
    if out_aval.shape != (size,) or out_aval.dtype != aval.dtype:
        per_element = out_aval.update(shape=out_aval.shape[1:])
        raise TypeError("scatter_apply: func must map a scalar of the operand's dtype "
                        f"({aval.dtype.name}) to a scalar of the same dtype, got "
                        f"{per_element.str_short()}")
    return reshape(out, aval.shape)


def _check_no_closed_tracers(func, dtype):
    """JAX traces ``func`` into the scatter's update computation, which may close over
    concrete values only (not over the values of an enclosing jit, grad or vmap)."""
    closed = trace_to_jaxpr(lambda x: [to_operand(func(x))], [ShapedArray((), dtype)])
    if any(isinstance(c, Tracer) for c in consts_as_args(closed)[1]):
        raise NotImplementedError("Reduction computations can't close over Tracers. Please "
                                  "open an issue at https://github.com/jax-ml/jax.")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """Apply ``func`` to the elements of ``operand`` that a scatter selects.

    Each index vector selecting an element applies ``func`` to it once more (duplicates apply
    it repeatedly), as XLA's scatter with update computation ``lambda x, _: func(x)`` does.

    Parameters
    ----------
    operand : array_like
    scatter_indices : array_like of integers
        Index vectors along the last dimension.
    func : callable
        A unary function of a scalar, returning a scalar of the operand's dtype.
    dimension_numbers : ScatterDimensionNumbers
    update_shape : tuple of int
        The shape the updates of an equivalent ``scatter`` would have.
    indices_are_sorted, unique_indices : bool
        Promises about the indices.
    mode : str or GatherScatterMode, optional
        ``'clip'`` clamps indices; ``'drop'`` (the default, also ``None`` and ``'fill'``)
        skips windows that are out of bounds.

    Returns
    -------
    Array like ``operand``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                  scatter_dims_to_operand_dims=(0,))
    >>> lax.scatter_apply(jnp.arange(5.0), jnp.array([[1], [3], [3]]),
    ...                   lambda v: v * 2 + 1, dn, update_shape=(3,))
    Array([ 0.,  3.,  2., 15.,  4.], dtype=float32)
    """
    operand = as_operand(operand)
    aval = get_aval(operand)
    _check_no_closed_tracers(func, aval.dtype)
    update_shape = canonicalize_shape(update_shape)
    counts = scatter_add(full(aval.shape, 0, np.int32), scatter_indices,
                         full(update_shape, 1, np.int32), dimension_numbers,
                         indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)
    if 0 in aval.shape:
        return operand
    return _apply_counted(func, operand, counts)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _apply_counted(func, operand, counts):
    """``func`` applied ``counts`` times to each element of ``operand``."""
    aval = get_aval(operand)

    def step(x, remaining):
        hit = gt(remaining, full(aval.shape, 0, np.int32))
        applied = _elementwise(func, x, aval)
        return select_n(hit, x, applied), sub(remaining, convert_element_type(hit, np.int32))

    if type(counts) is Array:  # concrete: as many rounds as the most-hit element needs
        rounds = int(np.max(np.asarray(counts), initial=0))
        x, remaining = operand, counts
        for _ in range(rounds):
            x, remaining = step(x, remaining)
        return x
    axes = tuple(range(len(aval.shape)))
    x, _ = while_loop(lambda c: gt(reduce_max(c[1], axes), np.int32(0)),
                      lambda c: step(*c), (operand, counts))
    return x


@_apply_counted.defjvp
def _apply_counted_jvp(func, primals, tangents):
    # JAX's scatter_apply is a scatter with a custom update computation, which has no JVP
    raise NotImplementedError("scatter_apply JVP not implemented")


__all__ = ["empty", "broadcast_like", "scatter_apply"]
