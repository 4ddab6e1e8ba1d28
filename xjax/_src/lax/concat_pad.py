"""concatenate and pad: the structural primitives that lengthen axes, by joining operands or
by adding padding (possibly negative, and between elements). Their transposes slice the
cotangent back apart.

Semantics follow the StableHLO spec (https://openxla.org/stablehlo/spec); error messages
follow JAX's shape rules. Weak types: a result is weak when every array operand is.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Primitive
from xjax._src.lax import sharding_rules
from xjax._src.lax import reduce, slicing  # they import this module: used at call time only
from xjax._src.lax import stacking  # it imports this module: used at call time only
from xjax._src.lax.ad_helpers import linear_jvp_of, operand_aval
from xjax._src.lax.ad_rules import Zero, get_aval, is_undefined
from xjax._src.lax.batch_rules import batch_size, bdim_at_front, move_axis, not_mapped
from xjax._src.lax.compare import select
from xjax._src.lax.elementwise import sub
from xjax._src.lax.shape import as_operand, broadcast_in_dim_p, full, scalar_constant
from xjax._src.lowering.stablehlo import aval_type, i64_array


def _all_weak(*avals) -> bool:
    return all(a.weak_type for a in avals)


def _op(ctx, name, operands, attributes=None):
    """One StableHLO op whose result has the equation's output type."""
    return ctx.builder.op1(name, operands, aval_type(ctx.avals_out[0]), attributes)


# -- concatenate --

def _concatenate_abstract_eval(*operands, dimension):
    dtype = operands[0].dtype
    if any(o.dtype != dtype for o in operands[1:]):
        got = ", ".join(o.dtype.name for o in operands)
        raise TypeError(f"lax.concatenate requires arguments to have the same dtypes, got "
                        f"{got}. (Tip: jnp.concatenate is a similar function that does "
                        "automatic type promotion on inputs).")
    shapes = ", ".join(str(o.shape) for o in operands)
    if len({o.ndim for o in operands}) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: "
                        f"got {shapes}.")
    if not 0 <= dimension < operands[0].ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                        f"shapes {shapes}.")
    others = {tuple(s for i, s in enumerate(o.shape) if i != dimension) for o in operands}
    if len(others) != 1:
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                        f"than the one being concatenated: concatenating along dimension "
                        f"{dimension} for shapes {shapes}.")
    shape = list(operands[0].shape)
    shape[dimension] = sum(o.shape[dimension] for o in operands)
    return ShapedArray(shape, dtype, _all_weak(*operands))


def _concatenate_lower(ctx, *xs, dimension):
    return _op(ctx, "stablehlo.concatenate", list(xs), {"dimension": f"{dimension} : i64"})


def _concatenate_transpose(ct, *operands, dimension):
    """The part of ``ct`` each linear operand came from: one ``split`` into every
    operand's part, as JAX's rule."""
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None for x in operands]
    sizes = tuple(operand_aval(x).shape[dimension] for x in operands)
    parts = stacking.split(ct, sizes, axis=dimension)
    return [part if is_undefined(x) else None for part, x in zip(parts, operands, strict=True)]


def _concatenate_batch(args, dims, *, dimension):
    size = batch_size(args, dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return concatenate_p.bind(*moved, dimension=dimension + 1), 0


concatenate_p = Primitive(
    "concatenate", abstract_eval=_concatenate_abstract_eval,
    impl=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    lower=_concatenate_lower, jvp=linear_jvp_of("concatenate"),
    transpose=_concatenate_transpose, batch=_concatenate_batch,
    sharding_rule=sharding_rules.concatenate)


def concatenate(operands, dimension: int):
    """Concatenate ``operands`` (same dtype and rank) along ``dimension``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.concatenate([jnp.ones((2, 3)), jnp.zeros((1, 3))], 0).shape
    (3, 3)
    """
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1 and type(operands[0]) is Array:
        return operands[0]
    return concatenate_p.bind(*[as_operand(o) for o in operands],
                              dimension=operator.index(dimension))


# -- pad --

def _padded_size(size: int, lo: int, hi: int, interior: int) -> int:
    return lo + hi + (0 if size == 0 else (size - 1) * (interior + 1) + 1)


def _pad_abstract_eval(operand, padding_value, *, padding_config):
    if operand.dtype != padding_value.dtype:
        raise TypeError("pad operand and padding_value must be same dtype: got "
                        f"{operand.dtype.name} and {padding_value.dtype.name}.")
    if padding_value.ndim:
        raise ValueError("padding_value must be a scalar; got "
                         f"np.shape(padding_value)={padding_value.shape}")
    if len(padding_config) != operand.ndim:
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape "
                         f"{operand.shape}")
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError("interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    shape = tuple(_padded_size(s, *cfg)
                  for s, cfg in zip(operand.shape, padding_config, strict=True))
    if any(s < 0 for s in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{shape}, for padding_config {padding_config} and operand shape "
                         f"{operand.shape}")
    return ShapedArray(shape, operand.dtype, _all_weak(operand, padding_value))


def _pad_impl(x, padding_value, *, padding_config):
    x = np.asarray(x)
    out_shape = [_padded_size(s, *cfg)
                 for s, cfg in zip(x.shape, padding_config, strict=True)]
    out = np.full(out_shape, padding_value, dtype=x.dtype)
    src, dst = [], []
    for size, out_size, (lo, _, interior) in zip(x.shape, out_shape, padding_config,
                                                 strict=True):
        step = interior + 1
        # operand element k lands at lo + k * step; keep those inside [0, out_size)
        first = -(lo // step) if lo < 0 else 0  # ceil(-lo / step)
        last = min(size - 1, (out_size - 1 - lo) // step) if out_size else -1
        if last < first:
            return out
        src.append(slice(first, last + 1))
        dst.append(slice(lo + first * step, lo + last * step + 1, step))
    out[tuple(dst)] = x[tuple(src)]
    return out


def _pad_lower(ctx, x, padding_value, *, padding_config):
    lows, highs, interiors = zip(*padding_config, strict=True) if padding_config else ((),) * 3
    return _op(ctx, "stablehlo.pad", [x, padding_value],
               {"edge_padding_low": i64_array(lows), "edge_padding_high": i64_array(highs),
                "interior_padding": i64_array(interiors)})


def _unpad(ct, padding_config):
    """The operand's cotangent: undo the edge padding (negative edges pad back with zeros),
    then keep every ``interior + 1``-th element."""
    unpadded = pad(ct, scalar_constant(0, get_aval(ct).dtype),
                   tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    shape = get_aval(unpadded).shape
    return slicing.slice(unpadded, (0,) * len(shape), shape,
                         tuple(interior + 1 for _, _, interior in padding_config))


def _pad_transpose(ct, operand, padding_value, *, padding_config):
    """Linear jointly in the operand and the padding value: the padding value's cotangent
    is the sum of ``ct`` over the padding positions."""
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None for x in (operand, padding_value)]
    ct_operand = _unpad(ct, padding_config)
    ct_value = None
    if is_undefined(padding_value):
        everything = tuple(range(get_aval(ct).ndim))
        ct_value = sub(reduce.reduce_sum(ct, everything),
                       reduce.reduce_sum(ct_operand, everything))
    return [ct_operand if is_undefined(operand) else None, ct_value]


def _pad_batch(args, dims, *, padding_config):
    """A batched padding value: pad with any value, then select the padding value where a
    padded mask of ones says the position is padding."""
    (x, value), (dx, dv) = args, dims
    size = batch_size(args, dims)
    x = bdim_at_front(x, dx, size)
    config = ((0, 0, 0),) + tuple(padding_config)
    if dv is not_mapped:
        return pad_p.bind(x, value, padding_config=config), 0
    aval = get_aval(x)
    padded = pad_p.bind(x, scalar_constant(0, aval.dtype), padding_config=config)
    ones = full(aval.shape[1:], True, bool)
    mask = pad_p.bind(ones, scalar_constant(False, bool), padding_config=tuple(padding_config))
    out_shape = get_aval(padded).shape
    mask = broadcast_in_dim_p.bind(mask, shape=out_shape,
                                   broadcast_dimensions=tuple(range(1, len(out_shape))),
                                   sharding=None)
    values = broadcast_in_dim_p.bind(move_axis(value, dv, 0), shape=out_shape,
                                     broadcast_dimensions=(0,), sharding=None)
    return select(mask, padded, values), 0


pad_p = Primitive("pad", abstract_eval=_pad_abstract_eval, impl=_pad_impl, lower=_pad_lower,
                  jvp=linear_jvp_of("pad"), transpose=_pad_transpose, batch=_pad_batch)


def pad(operand, padding_value, padding_config):
    """Pad ``operand`` with ``padding_value``: ``(low, high, interior)`` per dimension.

    Negative ``low``/``high`` remove elements from that edge; ``interior`` inserts that many
    padding elements between neighbours.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.pad(jnp.array([1, 2, 3]), 0, [(1, -1, 1)])
    Array([0, 1, 0, 2, 0], dtype=int32)
    """
    config = tuple(tuple(operator.index(v) for v in cfg) for cfg in padding_config)
    return pad_p.bind(as_operand(operand), as_operand(padding_value), padding_config=config)


__all__ = ["concatenate", "pad", "concatenate_p", "pad_p"]
