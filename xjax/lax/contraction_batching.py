"""Batching rules of dot_general and conv_general_dilated (DESIGN.md §4), each one
application on the whole batch.

Imports of lax functions are local: the modules defining the primitives import this one.
"""

from __future__ import annotations

from xjax.core.ad_util import get_aval
from xjax.lax.batch_rules import move_axis, not_mapped


def _skip(dims, d) -> tuple:
    """Per-example axes ``dims`` renumbered in an array with an extra axis at ``d``."""
    return tuple(a if a < d else a + 1 for a in dims)


def dot_general_batch(args, dims, *, dimension_numbers, **params):
    """Both sides batched: a new leading batch-dimension pair. One side batched: its batch
    axis stays where it is as a free dimension, whose output position is tracked (the
    output is batch dims, lhs free dims, rhs free dims)."""
    from xjax.lax.dot import DotDimensionNumbers, dot_general_p
    (lhs, rhs), (dl, dr) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if dl is not not_mapped and dr is not not_mapped:
        lhs, rhs = move_axis(lhs, dl, 0), move_axis(rhs, dr, 0)
        dn = ((_skip(lc, 0), _skip(rc, 0)), ((0, *_skip(lb, 0)), (0, *_skip(rb, 0))))
        out_dim = 0
    elif dl is not not_mapped:
        lc, lb = _skip(lc, dl), _skip(lb, dl)
        lhs_free = [a for a in range(len(get_aval(lhs).shape)) if a not in lc + lb]
        out_dim = len(lb) + lhs_free.index(dl)
        dn = ((lc, rc), (lb, rb))
    else:
        rc, rb = _skip(rc, dr), _skip(rb, dr)
        rhs_free = [a for a in range(len(get_aval(rhs).shape)) if a not in rc + rb]
        lhs_rank = len(get_aval(lhs).shape)
        out_dim = lhs_rank - len(lc) + rhs_free.index(dr)  # batch + lhs free come first
        dn = ((lc, rc), (lb, rb))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=DotDimensionNumbers(dn),
                              **params), out_dim


def _merge_into(x, src: int, dst: int):
    """Axis ``src`` merged into axis ``dst`` (numbered without ``src``) as its major part."""
    from xjax.lax.shape import reshape
    shape = list(get_aval(x).shape)
    size = shape.pop(src)
    x = move_axis(x, src, dst)
    shape[dst] *= size
    return reshape(x, tuple(shape))


def _split_out(x, axis: int, major: int):
    """Axis ``axis`` split into ``(major, rest)``."""
    from xjax.lax.shape import reshape
    shape = list(get_aval(x).shape)
    shape[axis:axis + 1] = [major, shape[axis] // major]
    return reshape(x, tuple(shape))


def _groups_outermost(x, bdim: int, axis: int, groups: int):
    """The batch axis ``bdim`` merged into axis ``axis`` (per-example numbering) below its
    ``groups`` leading groups: groups stay outermost, as grouped convolutions need."""
    x = _split_out(x, axis + int(bdim <= axis), groups)
    x = _merge_into(x, bdim + int(axis < bdim), axis + 1)
    return _merge_into(x, axis, axis)


def conv_general_dilated_batch(args, dims, *, dimension_numbers, feature_group_count,
                               batch_group_count, **params):
    """The batch folds into the convolution's own dimensions: into the lhs batch (lhs
    batched), the kernel's output features (rhs batched), or feature groups (both), then
    splits out of the output."""
    from xjax.lax.convolution import conv_general_dilated_p
    (lhs, rhs), (dl, dr) = args, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers

    def conv(lhs, rhs, feature_groups, batch_groups):
        return conv_general_dilated_p.bind(lhs, rhs, dimension_numbers=dimension_numbers,
                                           feature_group_count=feature_groups,
                                           batch_group_count=batch_groups, **params)

    if dl is not not_mapped and dr is not not_mapped:
        size = get_aval(lhs).shape[dl]
        new_rhs = _merge_into(rhs, dr, rhs_spec[0])
        if batch_group_count > 1:
            out = conv(_merge_into(lhs, dl, lhs_spec[0]), new_rhs, feature_group_count,
                       batch_group_count * size)
        else:
            out = conv(_merge_into(lhs, dl, lhs_spec[1]), new_rhs, feature_group_count * size,
                       batch_group_count)
        return _split_out(out, out_spec[1], size), out_spec[1]
    if dl is not not_mapped:
        size = get_aval(lhs).shape[dl]
        if batch_group_count == 1:
            new_lhs = _merge_into(lhs, dl, lhs_spec[0])
        else:
            new_lhs = _groups_outermost(lhs, dl, lhs_spec[0], batch_group_count)
        out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
        return _split_out(out, out_spec[0], size), out_spec[0]
    size = get_aval(rhs).shape[dr]
    if feature_group_count == 1 and batch_group_count == 1:
        out = conv(lhs, _merge_into(rhs, dr, rhs_spec[0]), 1, 1)
        return _split_out(out, out_spec[1], size), out_spec[1]
    groups = feature_group_count if feature_group_count > 1 else batch_group_count
    out = conv(lhs, _groups_outermost(rhs, dr, rhs_spec[0], groups), feature_group_count,
               batch_group_count)
    out = _split_out(out, out_spec[1], groups)
    out = _split_out(out, out_spec[1] + 1, size)
    return _merge_into(out, out_spec[1], out_spec[1] + 1), out_spec[1]
