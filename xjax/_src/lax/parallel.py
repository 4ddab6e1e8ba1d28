"""Collectives over a named axis: ``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
``axis_index``.

A name is bound by a vmap (a BatchTrace with that ``axis_name``) or by the manual mesh axes
of a ``shard_map`` body being traced (``core.axis_env``). Under a vmap each collective is
computed by its batching rule (a ``NeedsTrace`` rule, which sees every instance); in a
``shard_map`` body it stays an equation, and is lowered to XLA's collective over the
devices of the mesh axes (``lowering.collectives``). Outside both, the name is unbound
(NameError).
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core import axis_env, dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Absent, Primitive
from xjax._src.core.pytree import tree_map
from xjax._src.core.trace import current_trace, set_current_trace
from xjax._src.lax import reduce
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.lax.ad_rules import instantiate, linear_jvp
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, move_axis
from xjax._src.lax.convert import _convert_element_type, convert_element_type
from xjax._src.lax.elementwise import add, div, mul
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import iota, reshape, transpose
from xjax._src.lax.slicing import index_take
from xjax._src.lowering import collectives
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _bound_names() -> list:
    names, trace = [], current_trace()
    while trace is not None:
        name = getattr(trace, "axis_name", None)
        if name is not None:
            names.append(name)
        trace = trace.parent
    for sizes in axis_env.bound_frames():
        names.extend(sizes)
    return names


def _check_bound(axes) -> None:
    bound = _bound_names()
    for name in axes:
        if name not in bound:
            raise NameError(f"unbound axis name: {name}. The following axis names (e.g. "
                            f"defined by vmap) are available to collective operations: "
                            f"{bound}")


def _unbound_impl(*args, **params):
    # reached only outside every vmap of the name: eager evaluation has no named axes
    axes = _names(params.get("axes", params.get("axis_name")))
    _check_bound(axes)
    raise NameError(f"unbound axis name: {axes[0]}")


def _reducer_abstract_eval(aval, *, axes):
    _check_bound(axes)
    return aval


def _make_reducer(name, reduce_name):
    def batch(trace, vals, dims, *, axes):
        (x,), (dim,) = vals, dims
        if trace.axis_name not in axes:
            return primitive.bind(x, axes=axes), dim
        rest = tuple(a for a in axes if a != trace.axis_name)
        if dim is None:
            if reduce_name == "sum":
                # the count keeps x's weak type, so psum(2, "i") stays weakly typed as in JAX
                aval = get_aval(x)
                count = Array(np.asarray(trace.axis_size, aval.dtype), aval.weak_type)
                out = mul(x, count)
            else:
                out = x
        else:
            out = getattr(reduce, f"reduce_{reduce_name}")(x, (dim,))
        if rest:
            out = primitive.bind(out, axes=rest)
        return out, None

    primitive = Primitive(name, abstract_eval=_reducer_abstract_eval, impl=_unbound_impl,
                          lower=_reducer_lowering(name, reduce_name),
                          jvp=_linear_or_absent(name), transpose=_transpose_or_absent(name),
                          batch=NeedsTrace(batch))
    return primitive


_REDUCER_OPS = {"sum": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum"}


def _reducer_lowering(name, reduce_name):
    def lower(ctx, x, *, axes):
        mesh = collectives.partition_mesh(ctx.builder, name)
        aval = ctx.avals_in[0]
        return collectives.all_reduce(ctx.builder, x, aval_type(aval), aval.dtype,
                                      _REDUCER_OPS[reduce_name], mesh, axes)
    return lower


def _linear_or_absent(name):
    if name != "psum":
        return Absent(f"as in JAX 0.10.2, which defines no JVP rule for {name} either")

    def jvp(primals, tangents, *, axes):
        return psum_p.bind(primals[0], axes=axes), psum_p.bind(instantiate(tangents[0]),
                                                               axes=axes)
    return jvp


def _transpose_or_absent(name):
    if name != "psum":
        return Absent("nonlinear: reverse mode goes through its jvp")

    def transpose(ct, x, *, axes):
        return [psum_p.bind(ct, axes=axes)]
    return transpose


psum_p = _make_reducer("psum", "sum")
pmax_p = _make_reducer("pmax", "max")
pmin_p = _make_reducer("pmin", "min")


def _bool_as_int(leaf):
    # JAX sums booleans as int32 (counts), for psum and so for pmean
    x = to_operand(leaf)
    aval = get_aval(x)
    if aval.dtype == np.bool_:
        return _convert_element_type(x, np.int32)
    return x


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum ``x`` (a pytree) over the named vmap axis ``axis_name``; booleans are counted
    (summed as int32), as in JAX.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.vmap(lambda v: v / xjax.lax.psum(v, "i"), axis_name="i")(jnp.array([1., 3.]))
    Array([0.25, 0.75], dtype=float32)
    """
    _no_groups(axis_index_groups, "psum")
    axes = _names(axis_name)
    return tree_map(lambda leaf: psum_p.bind(_bool_as_int(leaf), axes=axes), x)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` over the named axis."""
    _no_groups(axis_index_groups, "pmax")
    axes = _names(axis_name)
    return tree_map(lambda leaf: pmax_p.bind(to_operand(leaf), axes=axes), x)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` over the named axis."""
    _no_groups(axis_index_groups, "pmin")
    axes = _names(axis_name)
    return tree_map(lambda leaf: pmin_p.bind(to_operand(leaf), axes=axes), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` over the named axis: ``psum(x) / size`` with NumPy's true division, so
    integer and boolean means are floating point, as in JAX.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.vmap(lambda v: xjax.lax.pmean(v, "i"), axis_name="i")(jnp.array([1, 2]))
    Array([1.5, 1.5], dtype=float32)
    """
    _no_groups(axis_index_groups, "pmean")
    size = axis_size(axis_name)

    def mean(total):
        aval = get_aval(total)
        dtype = aval.dtype if dtypes.is_inexact(aval.dtype) else dtypes.default_float_dtype()
        total = _convert_element_type(total, dtype, weak_type=aval.weak_type)
        return div(total, Array(np.asarray(size, dtype), weak_type=True))
    return tree_map(mean, psum(x, axis_name))


def axis_size(axis_name) -> int:
    """The size of the named vmap axis (a Python int)."""
    size, trace = 1, current_trace()
    remaining = set(_names(axis_name))
    while trace is not None:
        name = getattr(trace, "axis_name", None)
        if name in remaining:
            size *= trace.axis_size
            remaining.discard(name)
        trace = trace.parent
    for sizes in axis_env.bound_frames():
        for name in [n for n in remaining if n in sizes]:
            size *= sizes[name]
            remaining.discard(name)
    if remaining:
        _check_bound(tuple(remaining))
    return size


# -- helpers shared with parallel_permute --

def _rerun(trace, fn, vals, dims):
    """Evaluate ``fn`` (per-instance code) on the batched ``vals`` under ``trace`` itself,
    so every primitive it binds is batched by its own rule; return ``(val, dim)``.

    Collectives over several names use this: at the innermost frame they are rewritten with
    ``all_gather``/``psum``/``axis_index`` over the same names, which nest correctly."""
    with set_current_trace(trace):
        out = fn(*[trace.wrap(v, d) for v, d in zip(vals, dims, strict=True)])
    return trace.unpack(out)


def _linear_index(axes):
    """The row-major index of this instance over the named ``axes`` (an int32 scalar)."""
    out = None
    for name in axes:
        idx = axis_index_p.bind(axis_name=name)
        if out is None:
            out = idx
        else:
            size = convert_element_type(axis_size(name), np.int32)
            out = add(mul(out, size), idx)
    return out


def _take(x, indices, axis: int):
    """``x`` indexed along ``axis`` by the constant int ``indices`` (the result's ``axis``
    has ``len(indices)`` entries)."""
    idx = to_operand(np.asarray(indices, np.int32))
    return move_axis(index_take(x, (idx,), (axis,)), 0, axis)


def _merge_axes(x, axis: int):
    """``x`` with axes ``axis`` and ``axis + 1`` merged into one (row-major)."""
    shape = tuple(get_aval(x).shape)
    return reshape(x, shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])


# -- all_gather and axis_index --

def _all_gather_abstract_eval(aval, *, axes, axis, tiled, size):
    _check_bound(axes)
    shape = list(aval.shape)
    if tiled:
        shape[axis] *= size
    else:
        shape.insert(axis, size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _all_gather_batch(trace, vals, dims, *, axes, axis, tiled, size):
    (x,), (dim,) = vals, dims
    name = trace.axis_name
    if name not in axes:
        if dim is None:
            return all_gather_p.bind(x, axes=axes, axis=axis, tiled=tiled, size=size), None
        x = move_axis(x, dim, 0)
        return all_gather_p.bind(x, axes=axes, axis=axis + 1, tiled=tiled, size=size), 0
    # This frame's instances, stacked at ``axis``: the gather over this name alone.
    stacked = move_axis(bdim_at_front(x, dim, trace.axis_size), 0, axis)
    pos = axes.index(name)
    before, after = axes[:pos], axes[pos + 1:]
    if before or after:
        # Gather the rest over the outer frames, then put the names in their listed
        # (row-major) order: [before..., this, after...].
        rest = before + after
        gathered = all_gather_p.bind(stacked, axes=rest, axis=axis, tiled=False,
                                     size=axis_size(rest))
        shape = tuple(get_aval(gathered).shape)
        n_before, n_after = axis_size(before), axis_size(after)
        split = shape[:axis] + (n_before, n_after, trace.axis_size) + shape[axis + 2:]
        perm = list(range(len(split)))
        perm[axis + 1], perm[axis + 2] = axis + 2, axis + 1
        stacked = reshape(transpose(reshape(gathered, split), tuple(perm)),
                          shape[:axis] + (size,) + shape[axis + 2:])
    if tiled:
        stacked = _merge_axes(stacked, axis)
    return stacked, None


def _all_gather_transpose(ct, x, *, axes, axis, tiled, size):
    return [parallel_permute.reduce_scatter_p.bind(ct, axis_name=axes, scatter_dimension=axis,
                                  axis_size=size, tiled=tiled)]


def _all_gather_lower(ctx, x, *, axes, axis, tiled, size):
    """XLA's all_gather concatenates along an existing axis: the untiled form gathers
    along a size-1 axis inserted first."""
    b = ctx.builder
    mesh = collectives.partition_mesh(b, "all_gather")
    aval = ctx.avals_in[0]
    if not tiled:
        shape = aval.shape[:axis] + (1,) + aval.shape[axis:]
        dims = [d for d in range(len(shape)) if d != axis]
        x = b.op1("stablehlo.broadcast_in_dim", [x], tensor_type(shape, aval.dtype),
                  {"broadcast_dimensions": i64_array(dims)})
    attrs = {"all_gather_dim": f"{axis} : i64",
             **collectives.group_attributes(b, mesh, axes)}
    return b.op1("stablehlo.all_gather", [x], aval_type(ctx.avals_out[0]), attrs)


all_gather_p = Primitive("all_gather", abstract_eval=_all_gather_abstract_eval,
                         impl=_unbound_impl, lower=_all_gather_lower,
                         jvp=late_rule(linear_jvp, "all_gather"),
                         transpose=_all_gather_transpose,
                         batch=NeedsTrace(_all_gather_batch))


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Gather ``x`` from every instance of the named axis.

    Parameters
    ----------
    x : array or pytree of arrays
        This instance's value.
    axis_name : hashable or tuple of hashables
        The vmap axis name(s); several names gather over their product, row-major.
    axis_index_groups : None
        Only None is supported (as under JAX's vmap).
    axis : int
        Where the gathered axis goes in the result.
    tiled : bool
        Concatenate along ``axis`` instead of stacking a new axis.
    to : {"varying", "invarying", "reduced"}
        The result's varying-ness (shard_map's types). vmap, which runs xjax's shard_map,
        tracks none, so "varying" and "invarying" give the same values; "reduced" raises
        NotImplementedError.

    Returns
    -------
    array or pytree of arrays
        The same on every instance.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.vmap(lambda v: xjax.lax.all_gather(v, "i"), axis_name="i")(jnp.array([1., 2.]))
    Array([[1., 2.],
           [1., 2.]], dtype=float32)
    """
    if to not in ("varying", "reduced", "invarying"):
        raise ValueError("Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` "
                         "values are: {'varying', 'reduced', 'invarying'}")
    _no_groups(axis_index_groups, "all_gather")
    axes = _names(axis_name)
    if not axes:
        return x
    size = axis_size(axis_name)
    if to == "reduced":
        raise NotImplementedError("all_gather to='reduced': xjax's shard_map runs on vmap and "
                                  "does not track reduced (or unreduced) values, which are "
                                  "types of JAX's sharded shard_map")

    def gather(leaf):
        leaf = to_operand(leaf)
        rank = len(get_aval(leaf).shape)
        ax = _canonical_axis(axis, rank + (0 if tiled else 1), "all_gather axis")
        return all_gather_p.bind(leaf, axes=axes, axis=ax, tiled=tiled, size=size)
    return tree_map(gather, x)


def _no_groups(axis_index_groups, api: str) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(f"{api}: axis_index_groups is not supported under vmap "
                                  "(as in JAX), nor yet under xjax's pmap and shard_map")


def _canonical_axis(axis, rank: int, what: str) -> int:
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of bounds for rank {rank}")
    return axis % rank


def _axis_index_abstract_eval(*, axis_name):
    _check_bound((axis_name,))
    return ShapedArray((), np.dtype(np.int32), False)


def _axis_index_batch(trace, vals, dims, *, axis_name):
    if trace.axis_name != axis_name:
        return axis_index_p.bind(axis_name=axis_name), None
    return iota(np.int32, trace.axis_size), 0


def _axis_index_lower(ctx, *, axis_name):
    mesh = collectives.partition_mesh(ctx.builder, "axis_index")
    return collectives.instance_index(ctx.builder, mesh, (axis_name,))


axis_index_p = Primitive("axis_index", abstract_eval=_axis_index_abstract_eval,
                         impl=lambda *, axis_name: _unbound_impl(axes=(axis_name,)),
                         lower=_axis_index_lower,
                         jvp=Absent("integer output: no derivative"),
                         transpose=Absent("integer output: no derivative"),
                         batch=NeedsTrace(_axis_index_batch))


def axis_index(axis_name):
    """The index of the current instance along the named vmap axis (an int32 scalar).

    A tuple of names gives the row-major index over their product, as in JAX.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.vmap(lambda v: xjax.lax.axis_index("i"), axis_name="i")(jnp.zeros(3))
    Array([0, 1, 2], dtype=int32)
    """
    if isinstance(axis_name, (tuple, list)):
        axes = tuple(axis_name)
        _check_bound(axes)
        return _linear_index(axes)
    return axis_index_p.bind(axis_name=axis_name)


__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "psum_p", "pmax_p", "pmin_p", "all_gather_p", "axis_index_p"]


# The data-moving collectives (ppermute, all_to_all, reduce_scatter, ...) import this module's
# names; all_gather's transpose uses reduce_scatter at call time only, so their module is
# imported last.
from xjax._src.lax import parallel_permute  # noqa: E402
