"""Collectives that move data between the instances of a named vmap axis: ``ppermute``,
``pshuffle``, ``pbroadcast``, ``all_to_all``, ``pswapaxes``, ``psum_scatter``, and
``ragged_all_to_all``, ``psend``, ``precv``, ``pcast``.

Under ``vmap(f, axis_name="i")`` each call sees one instance's value; the batching rule
(a ``NeedsTrace`` rule) sees them all, stacked along the batch axis, and computes the
collective with ordinary lax operations. With several names (``("i", "j")``), the instances
are numbered row-major over the names in the order given (as ``axis_index`` does); the
innermost frame then rewrites the collective through ``all_gather``/``psum``/``axis_index``
over the same names (correct, and slower than the one-name rules: it gathers the axis).

Every one of these is linear: ``jvp`` applies it to the tangent and ``transpose`` is the
adjoint collective (``ppermute`` by the inverse permutation, ``all_to_all`` with the split
and concat axes swapped, ``psum_scatter`` <-> ``all_gather``), so ``grad`` works through them
under the same vmap.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Absent, Primitive
from xjax._src.core.pytree import tree_map
from xjax._src.lax.ad_helpers import late_rule, linear_jvp_of
from xjax._src.lax.ad_rules import linear_jvp
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, move_axis
from xjax._src.lax.parallel import (_canonical_axis, _check_bound, _linear_index, _merge_axes,
                                    _names, _no_groups, _rerun, _take, _unbound_impl,
                                    all_gather_p, axis_size, psum_p)
from xjax._src.lax.operands import to_operand
from xjax._src.lax.compare import eq, select
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.elementwise import mul
from xjax._src.lax.reduce import reduce_sum
from xjax._src.lax.shape import broadcast_in_dim, expand_dims, full, reshape, squeeze
from xjax._src.lax.slicing import dynamic_index_in_dim, dynamic_slice_in_dim
from xjax._src.lowering import collectives
from xjax._src.lowering.stablehlo import aval_type, tensor_type

_NO_LOWERING = Absent("ragged_all_to_all is computed by vmap only: no lowering over devices "
                      "yet")


def _zeros_like(x):
    aval = get_aval(x)
    return full(aval.shape, 0, aval.dtype)


def _const(values, dtype):
    return to_operand(np.asarray(values, dtype))


def _pick(table, index, dtype):
    """``table[index]`` for a constant 1-D ``table`` and a traced int32 ``index``."""
    return dynamic_index_in_dim(_const(table, dtype), index, 0, keepdims=False)


def _masked(pred, x):
    """``x`` where the scalar ``pred`` holds, else zeros."""
    shape = tuple(get_aval(x).shape)
    return select(broadcast_in_dim(pred, shape, ()), x, _zeros_like(x))


# -- ppermute --

def _check_perm(perm, size: int, axis_name) -> tuple:
    """``perm`` as a tuple of non-negative ``(source, destination)`` pairs, checked."""
    pairs = []
    for pair in perm:
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(f"ppermute perm must be a sequence of (source, destination) "
                             f"pairs, got {perm}")
        src, dst = (operator.index(i) for i in pair)
        for i in (src, dst):
            if not -size <= i < size:
                raise ValueError(f"ppermute perm index {i} is out of range for axis "
                                 f"{axis_name} of size {size}; got perm {perm}")
        pairs.append((src % size, dst % size))
    srcs, dsts = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    return tuple(pairs)


def _source_table(perm, size: int):
    """For each destination, its source (0 where none) and whether it has one."""
    src_of = {dst: src for src, dst in perm}
    return ([src_of.get(k, 0) for k in range(size)],
            [k in src_of for k in range(size)])


def _ppermute_abstract_eval(aval, *, axis_name, perm):
    _check_bound(axis_name)
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type)


def _ppermute_by_gather(x, axis_name, perm):
    """ppermute as per-instance code: pick the source's value out of an all_gather."""
    size = axis_size(axis_name)
    sources, has_source = _source_table(perm, size)
    gathered = all_gather_p.bind(x, axes=axis_name, axis=0, tiled=False, size=size)
    index = _linear_index(axis_name)
    out = dynamic_index_in_dim(gathered, _pick(sources, index, np.int32), 0, keepdims=False)
    if not all(has_source):
        out = _masked(_pick(has_source, index, np.bool_), out)
    return out


def _ppermute_batch(trace, vals, dims, *, axis_name, perm):
    (x,), (dim,) = vals, dims
    if trace.axis_name not in axis_name:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), dim
    if len(axis_name) > 1:
        return _rerun(trace, lambda v: _ppermute_by_gather(v, axis_name, perm), vals, dims)
    size = trace.axis_size
    sources, has_source = _source_table(perm, size)
    full = all(has_source)
    if full and (dim is None or sources == list(range(size))):
        return x, dim
    if dim is None:
        x, dim = bdim_at_front(x, dim, size), 0
    out = _take(x, sources, dim)
    if not full:
        shape = tuple(get_aval(out).shape)
        mask = broadcast_in_dim(_const(has_source, np.bool_), shape, (dim,))
        out = select(mask, out, _zeros_like(out))
    return out, dim


def _ppermute_transpose(ct, x, *, axis_name, perm):
    inverse = tuple((dst, src) for src, dst in perm)
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


def _ppermute_lower(ctx, x, *, axis_name, perm):
    """Each group of partitions (the instances of ``axis_name``) permutes within itself;
    a destination with no source receives zeros, as XLA's collective_permute gives."""
    b = ctx.builder
    mesh = collectives.partition_mesh(b, "ppermute")
    pairs = [(int(row[src]), int(row[dst]))
             for row in collectives.replica_groups(mesh, axis_name) for src, dst in perm]
    table = np.asarray(pairs, np.int64).reshape(-1, 2)
    attrs = {"channel_handle": collectives.channel_handle(b),
             "source_target_pairs": collectives.groups_attribute(table)}
    return b.op1("stablehlo.collective_permute", [x], aval_type(ctx.avals_out[0]), attrs)


ppermute_p = Primitive("ppermute", abstract_eval=_ppermute_abstract_eval, impl=_unbound_impl,
                       lower=_ppermute_lower, jvp=late_rule(linear_jvp, "ppermute"),
                       transpose=_ppermute_transpose, batch=NeedsTrace(_ppermute_batch))


def ppermute(x, axis_name, perm):
    """Send each instance's ``x`` to another instance of the named axis.

    Parameters
    ----------
    x : array or pytree of arrays
        This instance's value.
    axis_name : hashable or tuple of hashables
        The vmap axis name(s); several names number the instances row-major.
    perm : sequence of (int, int)
        ``(source, destination)`` pairs: the instance ``destination`` receives the value of
        ``source``. Sources are distinct, destinations are distinct; a destination that
        receives nothing gets zeros. Indices may be negative (counted from the end).

    Returns
    -------
    array or pytree of arrays
        The value received, shaped like ``x``.

    Raises
    ------
    ValueError
        If a source or destination repeats, or an index is out of range.
    NameError
        If ``axis_name`` is not bound by an enclosing vmap.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> shift = lambda v: xjax.lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
    >>> xjax.vmap(shift, axis_name="i")(jnp.array([1., 2., 3.]))
    Array([3., 1., 2.], dtype=float32)
    """
    axes = _names(axis_name)
    size = axis_size(axes)
    perm = _check_perm(perm, size, axis_name)
    return tree_map(lambda leaf: ppermute_p.bind(to_operand(leaf), axis_name=axes, perm=perm),
                    x)


def pshuffle(x, axis_name, perm):
    """:func:`ppermute` with the permutation given as sources: instance ``i`` receives the
    value of instance ``perm[i]``.

    Raises
    ------
    ValueError
        If ``perm`` is not a permutation of ``range(len(perm))``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = lambda v: xjax.lax.pshuffle(v, "i", [2, 0, 1])
    >>> xjax.vmap(f, axis_name="i")(jnp.array([1., 2., 3.]))
    Array([3., 1., 2.], dtype=float32)
    """
    perm = [operator.index(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


# -- pbroadcast --

def _pbroadcast_by_psum(x, axis_name, source):
    """pbroadcast as per-instance code: the source's value, summed with zeros elsewhere."""
    is_source = eq(_linear_index(axis_name), _const(source, np.int32))
    return psum_p.bind(_masked(is_source, x), axes=axis_name)


def _pbroadcast_batch(trace, vals, dims, *, axis_name, source):
    (x,), (dim,) = vals, dims
    if trace.axis_name not in axis_name:
        return pbroadcast_p.bind(x, axis_name=axis_name, source=source), dim
    if len(axis_name) > 1:
        return _rerun(trace, lambda v: _pbroadcast_by_psum(v, axis_name, source), vals, dims)
    if dim is None:
        return x, None
    return _take(x, [source] * trace.axis_size, dim), dim


def _pbroadcast_transpose(ct, x, *, axis_name, source):
    total = psum_p.bind(ct, axes=axis_name)
    return [_masked(eq(_linear_index(axis_name), _const(source, np.int32)), total)]


def _pbroadcast_lower(ctx, x, *, axis_name, source):
    """The source instance's value, the others' replaced by zeros, summed over the group."""
    b = ctx.builder
    mesh = collectives.partition_mesh(b, "pbroadcast")
    aval = ctx.avals_in[0]
    here = collectives.instance_index(b, mesh, axis_name)
    is_source = b.op1("stablehlo.compare", [here, b.constant(np.int32(source))], "tensor<i1>",
                      {"comparison_direction": "#stablehlo<comparison_direction EQ>"})
    mask = b.op1("stablehlo.broadcast_in_dim", [is_source], tensor_type(aval.shape, np.bool_),
                 "broadcast_dimensions = array<i64>")
    zeros = b.op1("stablehlo.broadcast_in_dim", [b.constant(np.zeros((), aval.dtype))],
                  aval_type(aval), "broadcast_dimensions = array<i64>")
    masked = b.op1("stablehlo.select", [mask, x, zeros], aval_type(aval))
    op = "stablehlo.or" if aval.dtype == np.bool_ else "stablehlo.add"
    return collectives.all_reduce(b, masked, aval_type(aval), aval.dtype, op, mesh, axis_name)


pbroadcast_p = Primitive("pbroadcast", abstract_eval=lambda aval, *, axis_name, source:
                         _ppermute_abstract_eval(aval, axis_name=axis_name, perm=()),
                         impl=_unbound_impl, lower=_pbroadcast_lower,
                         jvp=late_rule(linear_jvp, "pbroadcast"),
                         transpose=_pbroadcast_transpose, batch=NeedsTrace(_pbroadcast_batch))


def pbroadcast(x, axis_name, source):
    """Every instance of the named axis receives the value of instance ``source``.

    The same as ``psum(where(axis_index(axis_name) == source, x, 0), axis_name)``.

    Parameters
    ----------
    x : array or pytree of arrays
        This instance's value.
    axis_name : hashable or tuple of hashables
        The vmap axis name(s).
    source : int
        The index (in ``[0, axis_size)``) of the instance whose value is copied.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = lambda v: xjax.lax.pbroadcast(v, "i", 1)
    >>> xjax.vmap(f, axis_name="i")(jnp.array([1., 2., 3.]))
    Array([2., 2., 2.], dtype=float32)
    """
    axes = _names(axis_name)
    size = axis_size(axes)
    source = operator.index(source)
    if not 0 <= source < size:
        raise ValueError(f"pbroadcast source {source} is out of range for axis {axis_name} "
                         f"of size {size}")
    return tree_map(lambda leaf: pbroadcast_p.bind(to_operand(leaf), axis_name=axes,
                                                   source=source), x)


# -- all_to_all --
# The primitive acts in the tiled form (split_axis divided by the axis size, concat_axis
# multiplied by it); the untiled form inserts and removes a size-1 axis around it, as JAX's.

def _all_to_all_abstract_eval(aval, *, axis_name, split_axis, concat_axis, tiled):
    _check_bound(axis_name)
    size = axis_size(axis_name)
    shape = list(aval.shape)
    if shape[split_axis] % size:
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to be "
                         f"divisible by the size of the named axis {axis_name} ({size})")
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(tuple(shape), aval.dtype, False)


def _all_to_all_by_gather(x, axis_name, split_axis, concat_axis):
    """all_to_all as per-instance code: gather every instance's value, keep this instance's
    chunk of split_axis from each, and lay the sources along concat_axis."""
    size = axis_size(axis_name)
    chunk = get_aval(x).shape[split_axis] // size
    gathered = all_gather_p.bind(x, axes=axis_name, axis=0, tiled=False, size=size)
    start = mul(_linear_index(axis_name), _const(chunk, np.int32))
    mine = dynamic_slice_in_dim(gathered, start, chunk, split_axis + 1)
    return _merge_axes(move_axis(mine, 0, concat_axis), concat_axis)


def _all_to_all_batch(trace, vals, dims, *, axis_name, split_axis, concat_axis, tiled):
    (x,), (dim,) = vals, dims
    params = dict(axis_name=axis_name, tiled=tiled)
    if trace.axis_name not in axis_name:
        if dim is None:
            return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                     **params), None
        x = move_axis(x, dim, 0)
        return all_to_all_p.bind(x, split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                                 **params), 0
    if len(axis_name) > 1:
        return _rerun(trace, lambda v: _all_to_all_by_gather(v, axis_name, split_axis,
                                                             concat_axis), vals, dims)
    size = trace.axis_size
    x = bdim_at_front(x, dim, size)  # [source, *shape]
    shape = tuple(get_aval(x).shape[1:])
    chunk = shape[split_axis] // size
    # Split split_axis into [destination, chunk]; destinations become the batch axis.
    x = reshape(x, (size,) + shape[:split_axis] + (size, chunk) + shape[split_axis + 1:])
    x = move_axis(x, 1 + split_axis, 0)  # [destination, source, *shape']
    # Lay the sources along concat_axis, source-major.
    x = move_axis(x, 1, 1 + concat_axis)
    return _merge_axes(x, 1 + concat_axis), 0


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, tiled):
    return [all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                              concat_axis=split_axis, tiled=tiled)]


def _all_to_all_lower(ctx, x, *, axis_name, split_axis, concat_axis, tiled):
    b = ctx.builder
    mesh = collectives.partition_mesh(b, "all_to_all")
    groups = collectives.replica_groups(mesh, axis_name)
    attrs = {"channel_handle": collectives.channel_handle(b),
             "concat_dimension": f"{concat_axis} : i64",
             "replica_groups": collectives.groups_attribute(groups),
             "split_count": f"{groups.shape[1]} : i64",
             "split_dimension": f"{split_axis} : i64"}
    return b.op1("stablehlo.all_to_all", [x], aval_type(ctx.avals_out[0]), attrs)


all_to_all_p = Primitive("all_to_all", abstract_eval=_all_to_all_abstract_eval,
                         impl=_unbound_impl, lower=_all_to_all_lower,
                         jvp=late_rule(linear_jvp, "all_to_all"),
                         transpose=_all_to_all_transpose, batch=NeedsTrace(_all_to_all_batch))


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Split ``split_axis`` into one chunk per instance, send chunk ``k`` to instance ``k``,
    and lay the chunks received along ``concat_axis`` in order of their source.

    Parameters
    ----------
    x : array or pytree of arrays
        This instance's value.
    axis_name : hashable or tuple of hashables
        The vmap axis name(s).
    split_axis : int
        The axis of ``x`` split among the instances. Untiled, its size must equal the axis
        size; tiled, be divisible by it.
    concat_axis : int
        Untiled: where the new axis of sources goes in the result (of the rank of ``x``).
        Tiled: the axis of ``x`` the received chunks are concatenated along.
    axis_index_groups : None
        Only None is supported (as under JAX's vmap).
    tiled : bool
        Keep the rank (split and concatenate) instead of removing split_axis and inserting
        a new axis at concat_axis.

    Returns
    -------
    array or pytree of arrays

    Raises
    ------
    ValueError
        If split_axis's size does not match (untiled) or divide (tiled) the axis size.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = lambda v: xjax.lax.all_to_all(v, "i", 0, 0)
    >>> xjax.vmap(f, axis_name="i")(jnp.arange(4.).reshape(2, 2))
    Array([[0., 2.],
           [1., 3.]], dtype=float32)
    """
    _no_groups(axis_index_groups, "all_to_all")
    axes = _names(axis_name)
    size = axis_size(axes)

    def one(leaf):
        leaf = to_operand(leaf)
        shape = get_aval(leaf).shape
        rank = len(shape)
        split = _canonical_axis(split_axis, rank, "all_to_all split_axis")
        concat = _canonical_axis(concat_axis, rank, "all_to_all concat_axis")
        if tiled:
            if shape[split] % size:
                raise ValueError(f"The size of all_to_all split_axis ({shape[split]}) has to "
                                 f"be divisible by the size of the named axis {axis_name} "
                                 f"({size})")
        elif shape[split] != size:
            raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                             f"equal x.shape[split_axis], but they are {size} and "
                             f"{shape[split]} respectively.")
        elif split < concat:
            concat += 1  # concat is a position after split is removed
            leaf = expand_dims(leaf, (concat,))
        elif split > concat:
            leaf = expand_dims(leaf, (concat,))
            split += 1
        out = all_to_all_p.bind(leaf, axis_name=axes, split_axis=split, concat_axis=concat,
                                tiled=tiled)
        if not tiled and split != concat:
            out = squeeze(out, (split,))
        return out
    return tree_map(one, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named axis with the positional ``axis`` of ``x``:
    ``all_to_all(x, axis_name, axis, axis)``; ``x.shape[axis]`` must equal the axis size.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = lambda v: xjax.lax.pswapaxes(v, "i", 0)
    >>> xjax.vmap(f, axis_name="i")(jnp.arange(4.).reshape(2, 2))
    Array([[0., 2.],
           [1., 3.]], dtype=float32)
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# -- psum_scatter (the reduce_scatter primitive) --

def _reduce_scatter_abstract_eval(aval, *, axis_name, scatter_dimension, axis_size, tiled):
    _check_bound(axis_name)
    shape = list(aval.shape)
    _check_scatter(shape[scatter_dimension], axis_size, tiled)
    if tiled:
        shape[scatter_dimension] //= axis_size
    else:
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _check_scatter(dim_size: int, size: int, tiled: bool) -> None:
    if tiled and dim_size % size:
        raise ValueError(f"tiled reduce_scatter operand scatter dimension size {dim_size} "
                         f"must be divisible by shard_count {size}")
    if not tiled and dim_size != size:
        raise ValueError(f"reduce_scatter operand scatter dimension size {dim_size} must "
                         f"match shard count {size}")


def _reduce_scatter_by_psum(x, axis_name, scatter_dimension, tiled):
    """psum_scatter as per-instance code: this instance's part of the psum."""
    total = psum_p.bind(x, axes=axis_name)
    index = _linear_index(axis_name)
    if not tiled:
        return dynamic_index_in_dim(total, index, scatter_dimension, keepdims=False)
    chunk = get_aval(x).shape[scatter_dimension] // axis_size(axis_name)
    return dynamic_slice_in_dim(total, mul(index, _const(chunk, np.int32)), chunk,
                                scatter_dimension)


def _reduce_scatter_batch(trace, vals, dims, *, axis_name, scatter_dimension, axis_size,
                          tiled):
    (x,), (dim,) = vals, dims
    params = dict(axis_name=axis_name, axis_size=axis_size, tiled=tiled)
    if trace.axis_name not in axis_name:
        if dim is None:
            return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension,
                                         **params), None
        x = move_axis(x, dim, 0)
        return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension + 1,
                                     **params), 0
    if len(axis_name) > 1:
        return _rerun(trace, lambda v: _reduce_scatter_by_psum(v, axis_name,
                                                               scatter_dimension, tiled),
                      vals, dims)
    size = trace.axis_size
    if dim is None:
        total = mul(x, convert_element_type(size, get_aval(x).dtype))
    else:
        total = reduce_sum(x, (dim,))
    if tiled:
        shape = tuple(get_aval(total).shape)
        total = reshape(total, shape[:scatter_dimension] + (size, shape[scatter_dimension]
                                                            // size)
                        + shape[scatter_dimension + 1:])
    return total, scatter_dimension


def _reduce_scatter_transpose(ct, x, *, axis_name, scatter_dimension, axis_size, tiled):
    return [all_gather_p.bind(ct, axes=axis_name, axis=scatter_dimension, tiled=tiled,
                              size=axis_size)]


def _reduce_scatter_lower(ctx, x, *, axis_name, scatter_dimension, axis_size, tiled):
    """XLA's reduce_scatter keeps the scattered axis (length divided by the group size);
    the untiled form then drops it."""
    b = ctx.builder
    mesh = collectives.partition_mesh(b, "psum_scatter")
    aval = ctx.avals_in[0]
    shape = list(aval.shape)
    shape[scatter_dimension] //= axis_size
    op = "stablehlo.or" if aval.dtype == np.bool_ else "stablehlo.add"
    region = collectives.reducer_region(b, aval.dtype, op)
    attrs = {"scatter_dimension": f"{scatter_dimension} : i64",
             **collectives.group_attributes(b, mesh, axis_name)}
    out = b.op1("stablehlo.reduce_scatter", [x], tensor_type(shape, aval.dtype), attrs,
                regions=[region])
    if not tiled:
        out = b.op1("stablehlo.reshape", [out], aval_type(ctx.avals_out[0]))
    return out


reduce_scatter_p = Primitive("reduce_scatter", abstract_eval=_reduce_scatter_abstract_eval,
                             impl=_unbound_impl, lower=_reduce_scatter_lower,
                             jvp=late_rule(linear_jvp, "reduce_scatter"),
                             transpose=_reduce_scatter_transpose,
                             batch=NeedsTrace(_reduce_scatter_batch))


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum(x, axis_name)``, of which each instance keeps only its own part along
    ``scatter_dimension``.

    Parameters
    ----------
    x : array or pytree of arrays
        This instance's value.
    axis_name : hashable or tuple of hashables
        The vmap axis name(s).
    scatter_dimension : int
        The axis of the sum split among the instances.
    axis_index_groups : None
        Only None is supported (as under JAX's vmap).
    tiled : bool
        False: ``x.shape[scatter_dimension]`` must equal the axis size and that axis is
        removed. True: it must be divisible by the axis size and is divided by it.

    Raises
    ------
    ValueError
        If the scatter dimension does not match (untiled) or divide (tiled) the axis size.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = lambda v: xjax.lax.psum_scatter(v, "i")
    >>> xjax.vmap(f, axis_name="i")(jnp.arange(4.).reshape(2, 2))
    Array([2., 4.], dtype=float32)
    """
    _no_groups(axis_index_groups, "psum_scatter")
    axes = _names(axis_name)
    if not axes:
        return x
    size = axis_size(axes)

    def one(leaf):
        leaf = to_operand(leaf)
        shape = get_aval(leaf).shape
        dim = _canonical_axis(scatter_dimension, len(shape), "psum_scatter scatter_dimension")
        _check_scatter(shape[dim], size, tiled)
        return reduce_scatter_p.bind(leaf, axis_name=axes, scatter_dimension=dim,
                                     axis_size=size, tiled=tiled)
    return tree_map(one, x)


# -- ragged_all_to_all --

def _ragged_all_to_all_abstract_eval(operand, output, input_offsets, send_sizes,
                                     output_offsets, recv_sizes, *, axis_name):
    for aval, what in ((input_offsets, "input_offsets"), (send_sizes, "send_sizes"),
                       (output_offsets, "output_offsets"), (recv_sizes, "recv_sizes")):
        if not dtypes.is_integer(aval.dtype):
            raise ValueError(f"ragged_all_to_all {what} must be integer type.")
    for aval, what in ((input_offsets, "input_offsets"), (send_sizes, "send_sizes"),
                       (output_offsets, "output_offsets"), (recv_sizes, "recv_sizes")):
        if len(aval.shape) != 1 or aval.shape[0] < 1:
            raise ValueError(f"ragged_all_to_all {what} must be rank 1 with positive "
                             f"dimension size, but got shape {aval.shape}")
    _check_bound(axis_name)
    return ShapedArray(output.shape, output.dtype, False)


def _ragged_all_to_all_batch(trace, vals, dims, *, axis_name):
    if trace.axis_name not in axis_name and all(d is None for d in dims):
        return ragged_all_to_all_p.bind(*vals, axis_name=axis_name), None
    raise NotImplementedError(
        "ragged_all_to_all is not supported under vmap: JAX defines it only over a "
        "shard_map or pmap axis (its vmap rule asks for a feature request), and xjax's "
        "shard_map and pmap run on vmap")


ragged_all_to_all_p = Primitive(
    "ragged_all_to_all", abstract_eval=_ragged_all_to_all_abstract_eval, impl=_unbound_impl,
    lower=_NO_LOWERING, jvp=linear_jvp_of("ragged_all_to_all", (0, 1)),
    transpose=Absent("ragged_all_to_all never runs in xjax (its shard_map and pmap run on "
                     "vmap); its vmap rule raises NotImplementedError first"),
    batch=NeedsTrace(_ragged_all_to_all_batch))


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """The ragged version of :func:`all_to_all` (JAX's signature and checks).

    Not supported: JAX defines it over shard_map and pmap axes only, and xjax computes both
    with vmap, whose rule JAX leaves unwritten.
    Under a vmap of ``axis_name`` this raises NotImplementedError; with ``axis_name``
    unbound, NameError; with non-integer or non-1-D offsets and sizes, ValueError.
    """
    _no_groups(axis_index_groups, "ragged_all_to_all")
    axes = _names(axis_name)
    args = [to_operand(a) for a in (operand, output, input_offsets, send_sizes,
                                    output_offsets, recv_sizes)]
    _ragged_all_to_all_abstract_eval(*[get_aval(a) for a in args], axis_name=axes)
    return ragged_all_to_all_p.bind(*args, axis_name=axes)


# -- psend, precv, pcast --

def _needs_shard_map(api: str, axis_name):
    _check_bound(_names(axis_name))
    raise NotImplementedError(
        f"lax.{api} is one-sided device-to-device communication across a real multi-device "
        f"mesh, which xjax's single-device shard_map (computed with vmap) cannot express; "
        f"JAX does not define {api} under vmap either")


def psend(x, axis_name, perm):
    """Not supported: one-sided send, defined by JAX only under shard_map on a multi-device
    mesh (xjax's shard_map runs on one device, with vmap).

    Raises NameError if ``axis_name`` is unbound, else NotImplementedError.
    """
    _needs_shard_map("psend", axis_name)


def precv(token, out_shape, axis_name, perm):
    """Not supported: one-sided receive, defined by JAX only under shard_map on a multi-device
    mesh (xjax's shard_map runs on one device, with vmap).

    Raises NameError if ``axis_name`` is unbound, else NotImplementedError.
    """
    _needs_shard_map("precv", axis_name)


_PCAST_TO = {"varying", "reduced", "unreduced"}


def pcast(x, axis_name, *, to):
    """Cast the varying-ness of ``x`` over the named axes (JAX's shard_map type system).

    vmap (which runs xjax's shard_map) tracks no varying-ness, so ``to="varying"`` returns
    ``x`` unchanged (after checking that the names are bound). ``"reduced"`` and
    ``"unreduced"`` are types xjax's shard_map does not track: NotImplementedError.

    Raises
    ------
    TypeError
        If ``axis_name`` is a set.
    ValueError
        If ``to`` is not one of ``"varying"``, ``"reduced"``, ``"unreduced"``.
    NameError
        If a name is not bound by an enclosing vmap.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = lambda v: xjax.lax.pcast(v, "i", to="varying")
    >>> xjax.vmap(f, axis_name="i")(jnp.array([1., 2.]))
    Array([1., 2.], dtype=float32)
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"{axis_name=} must be a tuple or a str. Got {axis_name}")
    axes = _names(axis_name)
    if not axes:
        return x
    if to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {_PCAST_TO}")
    _check_bound(axes)
    if to != "varying":
        raise NotImplementedError(f"pcast to={to!r}: xjax's shard_map runs on vmap and does "
                                  "not track reduced or unreduced values (types of JAX's "
                                  "sharded shard_map)")
    return x


__all__ = ["ppermute", "pshuffle", "pbroadcast", "all_to_all", "pswapaxes", "psum_scatter",
           "ragged_all_to_all", "psend", "precv", "pcast",
           "ppermute_p", "all_to_all_p", "ragged_all_to_all_p"]
