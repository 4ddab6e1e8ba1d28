"""``vmap``: vectorizing a function over an axis of its arguments (DESIGN.md §5)."""

from __future__ import annotations

import functools

from xjax.core.ad_util import get_aval
from xjax.core.array import Array
from xjax.core.pytree import prefix_leaves, tree_flatten, tree_unflatten
from xjax.interpreters.batching import batch_flat
from xjax.lax.batch_rules import bdim_at_front, move_axis, not_mapped
from xjax.lax.rules import to_operand


def _is_none(x):
    return x is None


def _broadcast_prefix(prefix, tree, what):
    """One entry of ``prefix`` (a pytree prefix of ``tree``, None as a leaf) per leaf of
    ``tree``."""
    try:
        return prefix_leaves(prefix, tree, is_leaf=_is_none)
    except (ValueError, TypeError) as e:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {prefix!r} for value tree "
                         f"{tree_flatten(tree)[1]}.") from e


def _check_axis_spec(spec, what):
    leaves = tree_flatten(spec, is_leaf=_is_none)[0]
    for leaf in leaves:
        if leaf is not None and not isinstance(leaf, int):
            raise TypeError(f"vmap {what} must be an int, None, or (nested) container with "
                            f"those types as leaves, but got {spec!r}.")


def _output_operand(value):
    if isinstance(value, (str, bytes)) or value is None or (
            not isinstance(value, Array) and not hasattr(value, "__array__")
            and not isinstance(value, (bool, int, float, complex))):
        raise TypeError(f"Output from batched function {value!r} with type {type(value)} is "
                        "not a valid JAX type")
    return to_operand(value)


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorize ``fun`` over an axis of its arguments.

    Parameters
    ----------
    fun : callable
    in_axes : int, None, or a tuple (pytree prefix) of them, one entry per positional
        argument: the axis of each argument to map over (None: not mapped). Keyword
        arguments are mapped over axis 0.
    out_axes : int, None, or a pytree prefix of the output: where the mapped axis goes.
    axis_name : hashable, optional
        Names the mapped axis for collectives (``lax.psum`` and friends).
    axis_size : int, optional
        The size of the mapped axis when no argument is mapped.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.vmap(lambda v: jnp.dot(v, v))(jnp.ones((3, 2)))
    Array([2., 2., 2.], dtype=float32)
    """
    if isinstance(in_axes, list):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries "
                        "corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")

    @functools.wraps(fun, updated=())
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes specification must be a tree prefix of the "
                             f"corresponding value, got specification {in_axes} for value "
                             f"tree {tree_flatten(args)[1]}.")
        flat_args, in_tree = tree_flatten((args, kwargs))
        flat_args = [to_operand(a) for a in flat_args]
        arg_axes = _broadcast_prefix(in_axes, args, "in_axes")
        axes = arg_axes + [0] * (len(flat_args) - len(arg_axes))
        axes = _normalize_axes(flat_args, axes, fun)
        size = _mapped_size(flat_args, axes, axis_size, args, in_tree)
        out_tree_box = []

        def flat_fun(*xs):
            call_args, call_kwargs = tree_unflatten(in_tree, xs)
            out = fun(*call_args, **call_kwargs)
            flat_out, out_tree = tree_flatten(out)
            out_tree_box.append((out, out_tree))
            return [_output_operand(o) for o in flat_out]

        vals, dims = batch_flat(flat_fun, flat_args, axes, axis_name, size)
        out_value, out_tree = out_tree_box[0]
        flat_out_axes = _broadcast_prefix(out_axes, tree_unflatten(out_tree, vals), "out_axes")
        outs = [_place_output(v, d, a, size) for v, d, a in zip(vals, dims, flat_out_axes,
                                                                strict=True)]
        return tree_unflatten(out_tree, outs)

    return vmapped


def _normalize_axes(flat_args, axes, fun):
    out = []
    for x, axis in zip(flat_args, axes, strict=True):
        if axis is None:
            out.append(not_mapped)
            continue
        out.append(normalize_mapped_axis(x, axis, "vmap"))
    return out


def normalize_mapped_axis(x, axis: int, transform: str) -> int:
    """``axis`` of ``x`` made non-negative, or JAX's ValueError naming ``transform``."""
    ndim = len(get_aval(x).shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{transform} was requested to map its argument along axis {axis}, "
                         f"which implies that its rank should be at least "
                         f"{axis + 1 if axis >= 0 else -axis}, but is only {ndim} (its "
                         f"shape is {get_aval(x).shape})")
    return axis % ndim


def _mapped_size(flat_args, axes, axis_size, args, in_tree):
    sizes = {}
    for i, (x, axis) in enumerate(zip(flat_args, axes, strict=True)):
        if axis is not not_mapped:
            sizes.setdefault(get_aval(x).shape[axis], []).append((i, axis, x))
    if not sizes:
        if axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        return axis_size
    if len(sizes) > 1:
        lines = []
        for size, entries in sizes.items():
            for i, axis, x in entries:
                aval = get_aval(x)
                lines.append(f"  * one axis had size {size}: axis {axis} of argument "
                             f"{i} of type {aval.str_short()};")
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n" +
                         "\n".join(lines))
    size = next(iter(sizes))
    if axis_size is not None and axis_size != size:
        raise ValueError(f"vmap got axis_size={axis_size} but the mapped axes have size {size}")
    return size


def _place_output(val, dim, out_axis, size):
    if out_axis is None:
        if dim is not not_mapped:
            raise ValueError("vmap has mapped output but out_axes is None")
        return val
    ndim = len(get_aval(val).shape) + (dim is not_mapped)
    out_axis = out_axis % ndim if out_axis < 0 else out_axis
    if dim is not_mapped:
        return move_axis(bdim_at_front(val, not_mapped, size), 0, out_axis)
    return move_axis(val, dim, out_axis)
