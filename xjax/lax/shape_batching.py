"""Batching rules of the shape, stacking, reduction and cumulative primitives (DESIGN.md §4):
the batch axis goes first and the axis parameters shift by one, so each rule is one
application of the primitive on the whole batch.

Imports of lax functions are local: this module is imported by the modules that define the
primitives.
"""

from __future__ import annotations

from xjax.core.ad_util import get_aval
from xjax.core.primitive import registry
from xjax.lax.batch_rules import batch_size, bdim_at_front, move_axis, not_mapped


def _shift(axes) -> tuple:
    return tuple(a + 1 for a in axes)


def batch_at_front(name, new_params):
    """The rule of a one-operand primitive whose parameters only name axes: the batch axis
    goes first and ``new_params(operand_shape_with_batch, **params)`` gives the parameters
    of the batched application (the operand's shape is the batched one). ``name`` names the primitive (looked up when the rule runs, so modules
    can pass the rule while defining the primitive)."""

    def batch(args, dims, **params):
        primitive = registry[name]
        (x,), (d,) = args, dims
        x = move_axis(x, d, 0)
        out = primitive.bind(x, **new_params(get_aval(x).shape, **params))
        if primitive.multiple_results:
            return out, [0] * len(out)
        return out, 0

    return batch


def shifted_axes(name):
    """``new_params`` for a primitive whose parameter ``name`` is a tuple of axes."""

    def new_params(shape, **params):
        return {**params, name: _shift(params[name])}

    return new_params


def shifted_axis(name):
    """``new_params`` for a primitive whose parameter ``name`` is one axis."""

    def new_params(shape, **params):
        return {**params, name: params[name] + 1}

    return new_params


# -- shape.py --

def reshape_batch(args, dims, *, new_sizes, dimensions, sharding):
    from xjax.lax.shape import reshape_p, transpose_p
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    if dimensions is not None:  # the permutation first, on the per-example axes
        x = transpose_p.bind(x, permutation=(0,) + _shift(dimensions))
    size = get_aval(x).shape[0]
    return reshape_p.bind(x, new_sizes=(size, *new_sizes), dimensions=None,
                          sharding=sharding), 0


def broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions, sharding):
    from xjax.lax.shape import broadcast_in_dim_p
    (x,), (d,) = args, dims
    x = move_axis(x, d, 0)
    size = get_aval(x).shape[0]
    return broadcast_in_dim_p.bind(x, shape=(size, *shape),
                                   broadcast_dimensions=(0,) + _shift(broadcast_dimensions),
                                   sharding=sharding), 0


def transpose_batch(args, dims, *, permutation):
    """The batch axis stays where it is on input and comes first on output."""
    from xjax.lax.shape import transpose_p
    (x,), (d,) = args, dims
    actual = tuple(p if p < d else p + 1 for p in permutation)
    return transpose_p.bind(x, permutation=(d,) + actual), 0


def concatenate_batch(args, dims, *, dimension):
    from xjax.lax.shape import concatenate_p
    size = batch_size(args, dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return concatenate_p.bind(*moved, dimension=dimension + 1), 0


def pad_batch(args, dims, *, padding_config):
    """A batched padding value: pad with any value, then select the padding value where a
    padded mask of ones says the position is padding."""
    from xjax import lax
    from xjax.lax.shape import broadcast_in_dim_p, pad_p, scalar_constant
    (x, value), (dx, dv) = args, dims
    size = batch_size(args, dims)
    x = bdim_at_front(x, dx, size)
    config = ((0, 0, 0),) + tuple(padding_config)
    if dv is not_mapped:
        return pad_p.bind(x, value, padding_config=config), 0
    aval = get_aval(x)
    padded = pad_p.bind(x, scalar_constant(0, aval.dtype), padding_config=config)
    ones = lax.full(aval.shape[1:], True, bool)
    mask = pad_p.bind(ones, scalar_constant(False, bool), padding_config=tuple(padding_config))
    out_shape = get_aval(padded).shape
    mask = broadcast_in_dim_p.bind(mask, shape=out_shape,
                                   broadcast_dimensions=tuple(range(1, len(out_shape))),
                                   sharding=None)
    values = broadcast_in_dim_p.bind(move_axis(value, dv, 0), shape=out_shape,
                                     broadcast_dimensions=(0,), sharding=None)
    return lax.select(mask, padded, values), 0


def iota_batch(args, dims, **params):
    raise AssertionError("iota has no operands, so it is never batched")


# -- stacking.py --

def stack_batch(args, dims, *, axis):
    from xjax.lax.stacking import stack_p
    size = batch_size(args, dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return stack_p.bind(*moved, axis=axis + 1), 0


def tile_params(shape, *, reps):
    return {"reps": (1, *reps)}

