"""Collectives over a named vmap axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index``.

Each is a primitive whose batching rule needs the BatchTrace (its axis name and size): a
``NeedsTrace`` rule. Outside any vmap of that name, the name is unbound (NameError).
"""

from __future__ import annotations

from xjax.core.ad_util import get_aval
from xjax.core.avals import ShapedArray
from xjax.core.primitive import Absent, Primitive
from xjax.core.pytree import tree_map
from xjax.core.trace import current_trace
from xjax.lax.batch_rules import NeedsTrace
from xjax.lax.rules import to_operand



def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _bound_names() -> list:
    names, trace = [], current_trace()
    while trace is not None:
        name = getattr(trace, "axis_name", None)
        if name is not None:
            names.append(name)
        trace = trace.parent
    return names


def _check_bound(axes) -> None:
    bound = _bound_names()
    for name in axes:
        if name not in bound:
            raise NameError(f"unbound axis name: {name}. The following axis names (e.g. "
                            f"defined by vmap) are available to collective operations: "
                            f"{bound}")


def _unbound_impl(*args, axes, **params):
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
        from xjax import lax
        if dim is None:
            if reduce_name == "sum":
                out = lax.mul(x, lax.convert_element_type(trace.axis_size, get_aval(x).dtype))
            else:
                out = x
        else:
            out = getattr(lax, f"reduce_{reduce_name}")(x, (dim,))
        if rest:
            out = primitive.bind(out, axes=rest)
        return out, None

    primitive = Primitive(name, abstract_eval=_reducer_abstract_eval, impl=_unbound_impl,
                          lower=Absent("collectives are resolved by vmap before lowering"),
                          jvp=_linear_or_absent(name), transpose=_transpose_or_absent(name),
                          batch=NeedsTrace(batch))
    return primitive


def _linear_or_absent(name):
    if name != "psum":
        return Absent("not yet written: derivatives of pmax/pmin arrive with issue 3's "
                      "collectives follow-up")

    def jvp(primals, tangents, *, axes):
        from xjax.lax.ad_rules import instantiate
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


def psum(x, axis_name):
    """Sum ``x`` (a pytree) over the named vmap axis ``axis_name``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.vmap(lambda v: v / xjax.lax.psum(v, "i"), axis_name="i")(jnp.array([1., 3.]))
    Array([0.25, 0.75], dtype=float32)
    """
    axes = _names(axis_name)
    return tree_map(lambda leaf: psum_p.bind(to_operand(leaf), axes=axes), x)


def pmax(x, axis_name):
    """Maximum of ``x`` over the named axis."""
    axes = _names(axis_name)
    return tree_map(lambda leaf: pmax_p.bind(to_operand(leaf), axes=axes), x)


def pmin(x, axis_name):
    """Minimum of ``x`` over the named axis."""
    axes = _names(axis_name)
    return tree_map(lambda leaf: pmin_p.bind(to_operand(leaf), axes=axes), x)


def pmean(x, axis_name):
    """Mean of ``x`` over the named axis."""
    from xjax import lax
    axes = _names(axis_name)
    size = axis_size(axis_name)

    def mean(leaf):
        total = psum_p.bind(to_operand(leaf), axes=axes)
        return lax.div(total, lax.convert_element_type(size, get_aval(total).dtype))
    return tree_map(mean, x)


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
    if remaining:
        _check_bound(tuple(remaining))
    return size


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
    from xjax.lax.batch_rules import bdim_at_front, move_axis
    (x,), (dim,) = vals, dims
    if trace.axis_name not in axes:
        return all_gather_p.bind(x, axes=axes, axis=axis, tiled=tiled, size=size), dim
    stacked = move_axis(bdim_at_front(x, dim, trace.axis_size), 0, axis)
    if tiled:
        from xjax.lax.shape import reshape
        shape = list(get_aval(stacked).shape)
        merged = shape[:axis] + [shape[axis] * shape[axis + 1]] + shape[axis + 2:]
        stacked = reshape(stacked, tuple(merged))
    return stacked, None


all_gather_p = Primitive("all_gather", abstract_eval=_all_gather_abstract_eval,
                         impl=_unbound_impl,
                         lower=Absent("collectives are resolved by vmap before lowering"),
                         jvp=Absent("not yet written: derivatives of collectives arrive with "
                                    "issue 3's collectives follow-up"),
                         transpose=Absent("not yet written: derivatives of collectives arrive "
                                          "with issue 3's collectives follow-up"),
                         batch=NeedsTrace(_all_gather_batch))


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Gather ``x`` from every element of the named axis, stacked along ``axis``."""
    axes = _names(axis_name)
    size = axis_size(axis_name)

    def gather(leaf):
        leaf = to_operand(leaf)
        rank = len(get_aval(leaf).shape)
        ax = axis % (rank + (0 if tiled else 1))
        return all_gather_p.bind(leaf, axes=axes, axis=ax, tiled=tiled, size=size)
    return tree_map(gather, x)


def _axis_index_abstract_eval(*, axis_name):
    _check_bound((axis_name,))
    import numpy as np
    return ShapedArray((), np.dtype(np.int32), False)


def _axis_index_batch(trace, vals, dims, *, axis_name):
    if trace.axis_name != axis_name:
        return axis_index_p.bind(axis_name=axis_name), None
    from xjax.lax.shape import iota
    import numpy as np
    return iota(np.int32, trace.axis_size), 0


axis_index_p = Primitive("axis_index", abstract_eval=_axis_index_abstract_eval,
                         impl=lambda *, axis_name: _unbound_impl(axes=(axis_name,)),
                         lower=Absent("collectives are resolved by vmap before lowering"),
                         jvp=Absent("integer output: no derivative"),
                         transpose=Absent("integer output: no derivative"),
                         batch=NeedsTrace(_axis_index_batch))


def axis_index(axis_name):
    """The index of the current element along the named vmap axis (an int32 scalar)."""
    return axis_index_p.bind(axis_name=axis_name)


__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "psum_p", "pmax_p", "pmin_p", "all_gather_p", "axis_index_p"]
