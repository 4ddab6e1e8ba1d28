"""Building blocks of batching (vmap) rules (DESIGN.md §4-5), shared by primitive families.

batch rule: ``batch(args, dims, **params) -> (out, out_dim)`` (lists of outs and dims for
primitives with several results). ``dims[i]`` is the batched axis of ``args[i]``, or
``not_mapped`` (None). It runs with the parent trace current, so it computes with ordinary
lax calls, and should keep the work batched: one primitive application on the whole batch.

The rules use shape and slicing ops, which import this module while they define their
primitives: those imports are function-local.
"""

from __future__ import annotations

from xjax._src.core.ad_util import get_aval
from xjax._src.core.primitive import registry

not_mapped = None


class NeedsTrace:
    """A batch rule that also receives the BatchTrace (its axis name and size), as
    ``rule(trace, args, dims, **params)``: collectives over named axes, and jit (whose body
    may use the name). It is called even when no operand is mapped."""

    __slots__ = ("rule",)

    def __init__(self, rule):
        self.rule = rule

    def __call__(self, trace, args, dims, **params):
        return self.rule(trace, args, dims, **params)


def move_axis(x, src: int, dst: int):
    """``x`` with axis ``src`` moved to position ``dst`` (a transpose, or nothing)."""
    if src == dst:
        return x
    from xjax._src.lax.shape import transpose  # shape imports this module
    ndim = len(get_aval(x).shape)
    perm = [d for d in range(ndim) if d != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


def bdim_at_front(x, dim, size: int):
    """``x`` with its batch axis first; an unmapped ``x`` is broadcast to ``size``."""
    from xjax._src.lax.shape import broadcast_in_dim  # shape imports this module
    if dim is not_mapped:
        shape = get_aval(x).shape
        return broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))
    return move_axis(x, dim, 0)


def shift_axes(axes) -> tuple:
    """Per-example ``axes`` renumbered for a new leading batch axis."""
    return tuple(a + 1 for a in axes)


def batch_size(args, dims) -> int:
    for x, d in zip(args, dims, strict=True):
        if d is not not_mapped:
            return get_aval(x).shape[d]
    raise ValueError("no mapped operand")


def batch_elementwise(primitive):
    """The batching rule of an elementwise primitive (lax's implicit broadcasting of rank-0
    operands and size-1 dims is kept): the batch axis goes first; operands without it get a
    leading size-1 axis when they have the full rank, or stay rank-0."""

    def batch(args, dims, **params):
        from xjax._src.lax.shape import reshape  # shape imports this module
        ranks = [len(get_aval(x).shape) - (d is not not_mapped) for x, d in zip(args, dims)]
        rank = max(ranks)
        moved = []
        for x, d, r in zip(args, dims, ranks, strict=True):
            if d is not_mapped:
                moved.append(x if r == 0 else reshape(x, (1, *get_aval(x).shape)))
            else:
                x = move_axis(x, d, 0)
                if r < rank:  # a mapped scalar among rank-`rank` operands
                    x = reshape(x, (get_aval(x).shape[0],) + (1,) * rank)
                moved.append(x)
        out = primitive.bind(*moved, **params)
        if primitive.multiple_results:
            return out, [0] * len(out)
        return out, 0

    return batch


def batch_by_loop(primitive):
    """A slow but correct batching rule: apply the primitive to each example and stack.
    Only a stated fallback (DESIGN.md §4), never the rule of a primitive with a batched form."""

    def batch(args, dims, **params):
        from xjax._src.lax.concat_pad import concatenate  # concat_pad imports this module
        from xjax._src.lax.shape import reshape  # shape imports this module
        from xjax._src.lax.slicing import index_in_dim  # slicing imports this module
        size = batch_size(args, dims)
        per_example = []
        for i in range(size):
            sliced = [x if d is not_mapped else index_in_dim(x, i, d, keepdims=False)
                      for x, d in zip(args, dims, strict=True)]
            out = primitive.bind(*sliced, **params)
            per_example.append(out if primitive.multiple_results else [out])
        stacked = []
        for outs in zip(*per_example, strict=True):
            expanded = [reshape(o, (1, *get_aval(o).shape)) for o in outs]
            stacked.append(concatenate(expanded, 0) if len(expanded) > 1 else expanded[0])
        if primitive.multiple_results:
            return stacked, [0] * len(stacked)
        return stacked[0], 0

    return batch


def batch_at_front(name: str, new_params):
    """The rule of a one-operand primitive whose parameters only name axes: the batch axis
    goes first and ``new_params(batched_operand_shape, **params)`` gives the parameters of
    the batched application. ``name`` names the primitive (looked up when the rule runs, so
    a module can pass the rule while defining the primitive)."""

    def batch(args, dims, **params):
        primitive = registry[name]
        (x,), (d,) = args, dims
        x = move_axis(x, d, 0)
        out = primitive.bind(x, **new_params(get_aval(x).shape, **params))
        if primitive.multiple_results:
            return out, [0] * len(out)
        return out, 0

    return batch


def shifted_axes(param: str):
    """``new_params`` of :func:`batch_at_front` for a primitive whose parameter ``param`` is
    a tuple of axes."""

    def new_params(shape, **params):
        return {**params, param: shift_axes(params[param])}

    return new_params


def shifted_axis(param: str):
    """``new_params`` of :func:`batch_at_front` for a primitive whose parameter ``param`` is
    one axis."""

    def new_params(shape, **params):
        return {**params, param: params[param] + 1}

    return new_params
