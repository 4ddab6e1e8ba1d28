"""Stacking and splitting primitives of JAX 0.10: split, stack, unstack and tile (jnp.split,
jnp.stack and jnp.tile bind them, so jaxprs show them). Lowered to slices, broadcasts,
reshapes and a concatenate.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Primitive
from xjax._src.lax.ad_helpers import linear_jvp_of
from xjax._src.lax.ad_rules import Zero, instantiate, is_undefined, transpose_by_parts
from xjax._src.lax.batch_rules import batch_at_front, batch_size, bdim_at_front, shifted_axis
from xjax._src.lax import concat_pad  # it imports this module: used at call time only
from xjax._src.lax.reduce import reduce_sum
from xjax._src.lax.shape import as_operand, canonicalize_axis, index_tuple, reshape
from xjax._src.lowering.stablehlo import aval_type, i64_array

# -- split --


def _split_abstract_eval(operand, *, sizes, axis):
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {operand.ndim}")
    if sum(sizes) != operand.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                         f"operand shape {list(operand.shape)}")
    return [ShapedArray(operand.shape[:axis] + (s,) + operand.shape[axis + 1:], operand.dtype,
                        operand.weak_type) for s in sizes]


def _split_impl(x, *, sizes, axis):
    return np.split(np.asarray(x), np.cumsum(sizes)[:-1], axis)


def _slice_along(b, x, aval, axis, start, stop, out_type):
    starts = [0] * aval.ndim
    limits = list(aval.shape)
    starts[axis], limits[axis] = start, stop
    return b.op1("stablehlo.slice", [x], out_type,
                 {"start_indices": i64_array(starts), "limit_indices": i64_array(limits),
                  "strides": i64_array([1] * aval.ndim)})


def _split_lower(ctx, x, *, sizes, axis):
    aval = ctx.avals_in[0]
    outs, start = [], 0
    for size, out_aval in zip(sizes, ctx.avals_out, strict=True):
        outs.append(_slice_along(ctx.builder, x, aval, axis, start, start + size,
                                 aval_type(out_aval)))
        start += size
    return outs


def _split_transpose(cts, operand, *, sizes, axis):
    if all(type(ct) is Zero for ct in cts):
        return [Zero(operand.aval)]
    return [concat_pad.concatenate([instantiate(ct) for ct in cts], axis)]


split_p = Primitive("split", abstract_eval=_split_abstract_eval, impl=_split_impl,
                    lower=_split_lower, jvp=linear_jvp_of("split"), transpose=_split_transpose,
                    batch=batch_at_front("split", shifted_axis("axis")),
                    multiple_results=True)


def split(operand, sizes, axis: int = 0):
    """Split ``operand`` along ``axis`` into pieces of the given ``sizes``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> [p.shape for p in lax.split(jnp.ones((6, 4)), (1, 5))]
    [(1, 4), (5, 4)]
    """
    operand = as_operand(operand)
    axis = canonicalize_axis(axis, operand.ndim)
    return split_p.bind(operand, sizes=index_tuple(sizes), axis=axis)


# -- stack, unstack --

def _stack_abstract_eval(*operands, axis):
    dtype = operands[0].dtype
    if any(o.dtype != dtype for o in operands[1:]):
        got = ", ".join(o.dtype.name for o in operands)
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got {got}.")
    shape = operands[0].shape
    if any(o.shape != shape for o in operands[1:]):
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(o.shape) for o in operands)}.")
    if not 0 <= axis <= len(shape):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension "
                         f"{len(shape) + 1}")
    out = shape[:axis] + (len(operands),) + shape[axis:]
    return ShapedArray(out, dtype, all(o.weak_type for o in operands))


def _stack_lower(ctx, *xs, axis):
    b = ctx.builder
    aval = ctx.avals_in[0]
    one = ShapedArray(aval.shape[:axis] + (1,) + aval.shape[axis:], aval.dtype)
    pieces = [b.op1("stablehlo.reshape", [x], aval_type(one)) for x in xs]
    return b.op1("stablehlo.concatenate", pieces, aval_type(ctx.avals_out[0]),
                 {"dimension": f"{axis} : i64"})


def _stack_transpose(ct, *operands, axis):
    """Each linear operand gets its slice of ``ct``."""
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None for x in operands]
    pieces = unstack_p.bind(ct, axis=axis)
    return [piece if is_undefined(x) else None
            for piece, x in zip(pieces, operands, strict=True)]


def _stack_batch(args, dims, *, axis):
    size = batch_size(args, dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return stack_p.bind(*moved, axis=axis + 1), 0


stack_p = Primitive("stack", abstract_eval=_stack_abstract_eval,
                    impl=lambda *xs, axis: np.stack(xs, axis), lower=_stack_lower,
                    jvp=linear_jvp_of("stack"), transpose=_stack_transpose, batch=_stack_batch)


def stack(operands, axis: int = 0):
    """Stack equal-shaped ``operands`` along a new dimension ``axis``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.stack([jnp.ones(3), jnp.zeros(3)], 1).shape
    (3, 2)
    """
    operands = [as_operand(o) for o in operands]
    if not operands:
        raise ValueError("Need at least one array to stack.")
    axis = canonicalize_axis(axis, operands[0].ndim + 1)
    return stack_p.bind(*operands, axis=axis)


def _unstack_abstract_eval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type)] * x.shape[axis]


def _unstack_impl(x, *, axis):
    x = np.asarray(x)
    return [np.take(x, i, axis) for i in range(x.shape[axis])]


def _unstack_lower(ctx, x, *, axis):
    aval = ctx.avals_in[0]
    one = ShapedArray(aval.shape[:axis] + (1,) + aval.shape[axis + 1:], aval.dtype)
    b = ctx.builder
    return [b.op1("stablehlo.reshape", [_slice_along(b, x, aval, axis, i, i + 1,
                                                     aval_type(one))], aval_type(out))
            for i, out in enumerate(ctx.avals_out)]


def _unstack_transpose(cts, x, *, axis):
    if all(type(ct) is Zero for ct in cts):
        return [Zero(x.aval)]
    return [stack_p.bind(*[instantiate(ct) for ct in cts], axis=axis)]


unstack_p = Primitive("unstack", abstract_eval=_unstack_abstract_eval, impl=_unstack_impl,
                      lower=_unstack_lower, jvp=linear_jvp_of("unstack"),
                      transpose=_unstack_transpose,
                      batch=batch_at_front("unstack", shifted_axis("axis")),
                      multiple_results=True)


def unstack(x, axis: int = 0):
    """The slices of ``x`` along ``axis``, as a tuple of arrays without that dimension."""
    x = as_operand(x)
    return tuple(unstack_p.bind(x, axis=canonicalize_axis(axis, x.ndim)))


# -- tile --

def _tile_abstract_eval(x, *, reps):
    if len(reps) != x.ndim:
        raise TypeError("reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={x.ndim}.")
    if any(r < 0 for r in reps):
        raise TypeError(f"reps must be nonnegative, got {reps}.")
    shape = tuple(r * s for r, s in zip(reps, x.shape, strict=True))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _tile_lower(ctx, x, *, reps):
    aval = ctx.avals_in[0]
    interleaved = [d for pair in zip(reps, aval.shape, strict=True) for d in pair]
    wide = ShapedArray(interleaved, aval.dtype)
    b = ctx.builder
    big = b.op1("stablehlo.broadcast_in_dim", [x], aval_type(wide),
                {"broadcast_dimensions": i64_array(range(1, 2 * aval.ndim, 2))})
    return b.op1("stablehlo.reshape", [big], aval_type(ctx.avals_out[0]))


def _tile_transpose(ct, x, *, reps):
    """Sum the copies: ``ct`` as ``(reps[0], shape[0], reps[1], ...)``, reduced over the
    repetitions."""
    shape = x.aval.shape
    interleaved = [d for pair in zip(reps, shape, strict=True) for d in pair]
    return reduce_sum(reshape(ct, interleaved), tuple(range(0, 2 * len(shape), 2)))


def _tile_batch_params(shape, *, reps):
    return {"reps": (1, *reps)}


tile_p = Primitive("tile", abstract_eval=_tile_abstract_eval,
                   impl=lambda x, *, reps: np.tile(x, reps), lower=_tile_lower,
                   jvp=linear_jvp_of("tile"), transpose=transpose_by_parts(_tile_transpose),
                   batch=batch_at_front("tile", _tile_batch_params))


def tile(operand, reps):
    """Repeat ``operand`` ``reps[i]`` times along each dimension ``i``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.tile(jnp.array([1, 2]), (2,))
    Array([1, 2, 1, 2], dtype=int32)
    """
    return tile_p.bind(as_operand(operand), reps=tuple(operator.index(r) for r in reps))


__all__ = ["split", "stack", "unstack", "tile", "split_p", "stack_p", "unstack_p", "tile_p"]
