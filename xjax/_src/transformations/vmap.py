"""``vmap``: vectorizing a function over an axis of its arguments (DESIGN.md §5)."""

from __future__ import annotations


import numpy as np

from xjax._src.core.ad_util import get_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.pytree import (keystr, prefix_leaves, tree_flatten, tree_flatten_with_path,
                                   tree_unflatten)
from xjax._src.core.trace import current_trace, set_current_trace
from xjax._src.interpreters.batching import (batch_flat, from_elt_handlers, is_vmappable,
                                             make_iota_handlers, to_elt_handlers, vmappables)
from xjax._src.interpreters.refs import (RefArgs, arg_aval, arg_operand, check_distinct_refs,
                                         write_value)
from xjax._src.lax.batch_rules import bdim_at_front, move_axis, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import iota
from xjax._src.transformations.ref import Ref, new_ref
from xjax._src.interpreters.staging import _source_location
from xjax._src.transformations.jit import flat_arg_names
from xjax._src.transformations.wrapping import wraps


def _is_none(x):
    return x is None


def _broadcast_prefix(prefix, tree, what, is_leaf=None):
    """One entry of ``prefix`` (a pytree prefix of ``tree``, None as a leaf) per leaf of
    ``tree`` (flattened with ``is_leaf``)."""
    try:
        if is_leaf is None:
            return prefix_leaves(prefix, tree, is_leaf=_is_none)
        leaves, prefix_tree = tree_flatten(prefix, is_leaf=_is_none)
        return [leaf for leaf, sub in zip(leaves, prefix_tree.flatten_up_to(tree), strict=True)
                for _ in tree_flatten(sub, is_leaf=is_leaf)[0]]
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


class _RefOutput(Exception):
    """A vmapped function returned a Ref (rare: outputs are converted again, Refs apart)."""


_HOST_VALUES = (bool, int, float, complex, np.ndarray, np.generic)


def _mapped_operand(x):
    """A mapped argument as an operand (a Ref stays a Ref); JAX's TypeError for a string."""
    if isinstance(x, str):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    return arg_operand(x)


def _output_operand(value):
    if isinstance(value, (str, bytes)) or value is None or (
            not isinstance(value, Array) and not hasattr(value, "__array__")
            and not isinstance(value, (bool, int, float, complex))):
        if type(value) is Ref:
            raise _RefOutput
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
        arguments are mapped over axis 0. A list at the top level is taken as a tuple.
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
    if isinstance(in_axes, list):  # as JAX: a top-level list stands for a tuple
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries "
                        "corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")

    @wraps(fun)
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                             "corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        is_leaf = is_vmappable if vmappables else None  # custom vmappable types are leaves
        flat_args, in_tree = tree_flatten((args, kwargs), is_leaf=is_leaf)
        arg_axes = _broadcast_prefix(in_axes, args, "in_axes", is_leaf)
        axes = arg_axes + [0] * (len(flat_args) - len(arg_axes))
        # As in JAX, unmapped arguments reach ``fun`` as they are (any Python object).
        flat_args = [a if axis is None or is_vmappable(a) else _mapped_operand(a)
                     for a, axis in zip(flat_args, axes, strict=True)]
        ref_positions = [i for i, a in enumerate(flat_args) if type(a) is Ref] \
            if Ref in map(type, flat_args) else None
        axes = _normalize_axes(flat_args, axes, fun)
        size = _mapped_size(flat_args, axes, axis_size,
                             lambda: _mapped_arg_descriptions(fun, args, kwargs))
        out_tree_box = []
        ref_outs = {}  # flat output position -> (Ref returned, whether made inside)
        custom = _CustomLeaves(flat_args, axes, size) if is_leaf else None

        def flat_fun(*xs):
            if custom:
                xs = custom.inputs(xs)
            call_args, call_kwargs = tree_unflatten(in_tree, xs)
            out = fun(*call_args, **call_kwargs)
            flat_out, out_tree = tree_flatten(out, is_leaf=is_leaf)
            out_tree_box.append((out, out_tree, flat_out))
            if custom:
                flat_out = custom.outputs(flat_out, _broadcast_prefix(out_axes, out, "out_axes",
                                                                      is_leaf))
            try:
                return [o if custom and is_vmappable(o) else _output_operand(o)
                        for o in flat_out]
            except _RefOutput:  # returned Refs come back as Refs (see _ref_outputs)
                for k, o in enumerate(flat_out):
                    if type(o) is Ref:
                        ref_outs[k] = (o, o._trace is current_trace())
                return [_output_operand(o if type(o) is not Ref else o._value)
                        for o in flat_out]

        in_dims = custom.in_dims if custom else axes
        if not ref_positions:
            vals, dims = batch_flat(flat_fun, flat_args, in_dims, axis_name, size)
        else:
            vals, dims = _batch_with_ref_args(fun, args, kwargs, flat_fun, flat_args,
                                              ref_positions, in_dims, axis_name, size)
        out_value, out_tree, returned = out_tree_box[0]
        flat_out_axes = _broadcast_prefix(out_axes, tree_unflatten(out_tree, vals), "out_axes",
                                          is_leaf)
        _check_unmapped_outputs(out_tree, vals, dims, flat_out_axes, is_leaf)
        outs = [v if is_vmappable(v) else _place_output(v, d, a, size, r)
                for v, d, a, r in zip(vals, dims, flat_out_axes, returned, strict=True)]
        if ref_outs:
            _ref_outputs(outs, ref_outs, [flat_args[i] for i in ref_positions or ()])
        return tree_unflatten(out_tree, outs)

    return vmapped


def _batch_with_ref_args(fun, args, kwargs, flat_fun, flat_args, positions, axes, axis_name,
                         size):
    """``batch_flat`` for arguments that include Refs: a mapped Ref is bound to its value,
    batched along its axis (the function sees the Ref typed per element), and its final
    value is written back with the batch axis where it was; a Ref mapped with None is passed
    as it is (writing it raises JAX's error, as for a closed-over Ref)."""
    if len({id(flat_args[i]) for i in positions}) != len(positions):
        check_distinct_refs(flat_args, positions, _flat_arg_names(fun, args, kwargs),
                            getattr(fun, "__name__", type(fun).__name__),
                            _source_location(fun), "vmap")
    refs = RefArgs(flat_args, positions)
    inner_avals = []
    for i, ref in zip(positions, refs.refs, strict=True):
        axis = axes[i]
        if axis is not_mapped:
            inner_avals.append(None)
            continue
        aval = ref.aval.inner_aval
        shape = aval.shape[:axis] + aval.shape[axis + 1:]
        inner_avals.append(ref.aval.update(ShapedArray(shape, aval.dtype, aval.weak_type)))
    vals, dims = batch_flat(refs.threading(flat_fun, inner_avals), refs.values(flat_args), axes,
                            axis_name, size)
    vals, finals = refs.split(vals)
    dims, final_dims = refs.split(dims)
    for k, value, dim in zip(refs.written, finals, final_dims, strict=True):
        axis = axes[positions[k]]
        write_value(refs.refs[k], _place_output(value, dim, axis, size))
    return vals, dims


def _ref_outputs(outs, ref_outs, arg_refs):
    """Returned Refs: a Ref argument comes back as itself (after its writes), a Ref made
    inside the function as a new Ref holding the batched value."""
    for k, (ref, made_inside) in ref_outs.items():
        if any(ref is r for r in arg_refs):
            outs[k] = ref
        elif made_inside:
            outs[k] = new_ref(outs[k])
        else:
            raise ValueError(f"vmapped function returned a mutable array reference of type "
                             f"{ref.aval} that it closes over; only Refs passed to it or "
                             "created inside it can be returned")


def _flat_arg_names(fun, args, kwargs):
    """One name per flat argument (parameter names, indexed for containers), for errors."""
    import inspect

    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    return flat_arg_names(params, enumerate(args), kwargs)


def _mapped_arg_descriptions(fun, args, kwargs):
    """JAX's phrase for each flat argument in vmap's size error: ``argument x['w']`` for a
    leaf of the positional parameter ``x``, ``kwargs['b']`` for a keyword argument."""
    import inspect
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    descriptions = []
    for path, _ in tree_flatten_with_path((args, kwargs))[0]:
        if path[0].idx == 0:
            i = path[1].idx
            base = params[i] if i < len(params) else f"args[{i}]"
            descriptions.append(f"argument {base}{keystr(path[2:])}")
        else:
            descriptions.append(f"kwargs{keystr(path[1:])}")
    return descriptions


def _normalize_axes(flat_args, axes, fun):
    out = []
    for x, axis in zip(flat_args, axes, strict=True):
        if axis is None:
            out.append(not_mapped)
            continue
        out.append(axis if is_vmappable(x) else normalize_mapped_axis(x, axis, "vmap"))
    return out


def normalize_mapped_axis(x, axis: int, transform: str) -> int:
    """``axis`` of ``x`` made non-negative, or JAX's ValueError naming ``transform``."""
    ndim = len(arg_aval(x).shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{transform} was requested to map its argument along axis {axis}, "
                         f"which implies that its rank should be at least "
                         f"{axis + 1 if axis >= 0 else -axis}, but is only {ndim} (its "
                         f"shape is {arg_aval(x).shape})")
    return axis % ndim


def _mapped_length(x, axis):
    """The length of ``x``'s mapped ``axis``; None for a custom vmappable without a shape
    (as JAX, which then skips the check)."""
    if not is_vmappable(x):
        return arg_aval(x).shape[axis]
    try:
        return np.shape(x)[axis]
    except (IndexError, TypeError):
        return None


def _mapped_size(flat_args, axes, axis_size, arg_names):
    """The mapped axes' common size; ``arg_names()`` names flat arguments in the error."""
    sizes = {}
    for i, (x, axis) in enumerate(zip(flat_args, axes, strict=True)):
        length = None if axis is not_mapped else _mapped_length(x, axis)
        if length is not None:
            sizes.setdefault(length, []).append((i, axis, x))
    if not sizes:
        if axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        return axis_size
    if len(sizes) > 1:
        names = arg_names()
        lines = []
        for size, entries in sizes.items():
            for i, axis, x in entries:
                name = names[i] if len(names) == len(flat_args) else f"argument {i}"
                kind = type(x).__name__ if is_vmappable(x) else arg_aval(x).str_short()
                lines.append(f"  * one axis had size {size}: axis {axis} of {name} of type "
                             f"{kind}")
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n" +
                         ";\n".join(lines))
    size = next(iter(sizes))
    if axis_size is not None and axis_size != size:
        raise ValueError(f"vmap got axis_size={axis_size} but the mapped axes have size {size}")
    return size


class _CustomLeaves:
    """The leaves of custom vmappable types (``register_vmappable``) in one ``vmap``: they
    cross the batch trace as unmapped objects, and their handlers convert them inside it,
    ``to_elt`` for arguments and ``from_elt`` for outputs (as JAX's ``batching.batch``)."""

    def __init__(self, flat_args, axes, size):
        self.specs = {i: axes[i] for i, x in enumerate(flat_args) if is_vmappable(x)}
        self.in_dims = [not_mapped if i in self.specs else a for i, a in enumerate(axes)]
        self.size = size

    def inputs(self, xs):
        """The arguments with each custom leaf as one example (its ``to_elt``)."""
        trace = current_trace()
        get_idx = _index_getter(trace, self.size)
        return [_to_elt(trace, get_idx, x, self.specs[i]) if i in self.specs else x
                for i, x in enumerate(xs)]

    def outputs(self, flat_out, out_axes):
        """The outputs with each custom leaf batched at its ``out_axes`` (its ``from_elt``)."""
        trace = current_trace()
        return [_from_elt(trace, self.size, o, a) if is_vmappable(o) else o
                for o, a in zip(flat_out, out_axes, strict=True)]


def _index_getter(trace, size):
    """``get_idx`` of ``to_elt``: the example's index, one batched iota made on first use."""
    made = []

    def get_idx():
        if not made:
            make = make_iota_handlers.get(type(size))
            with set_current_trace(trace.parent):
                idx = make(size) if make else iota(np.int32, int(size))
            made.append(trace.wrap(idx, 0))
        return made[0]
    return get_idx


def _to_elt(trace, get_idx, x, spec):
    def cont(y, axis):
        handler = to_elt_handlers.get(type(y))
        if handler is not None:
            return handler(cont, get_idx, y, axis)
        if axis is None:
            return y
        y = to_operand(y)
        return trace.wrap(y, normalize_mapped_axis(y, axis, "vmap"))
    with set_current_trace(trace.parent):
        return cont(x, spec)


def _from_elt(trace, size, x, spec):
    def cont(axis_size, y, axis):
        handler = from_elt_handlers.get(type(y))
        if handler is not None:
            return handler(cont, axis_size, y, axis)
        val, dim = trace.unpack(_output_operand(y))
        with set_current_trace(trace.parent):
            return _place_output(val, dim, axis, axis_size)
    return cont(size, x, spec)


def _check_unmapped_outputs(out_tree, vals, dims, out_axes, is_leaf):
    """JAX's ValueError, naming the output's path, for a batched output whose out_axes entry
    is None."""
    for k, (dim, axis) in enumerate(zip(dims, out_axes, strict=True)):
        if axis is None and dim is not not_mapped and not is_vmappable(vals[k]):
            path = tree_flatten_with_path(tree_unflatten(out_tree, vals), is_leaf)[0][k][0]
            raise ValueError(f"at vmap out_axes{keystr(path)}, got axis spec None but output "
                             f"was batched on axis {dim}")


def _place_output(val, dim, out_axis, size, returned=None):
    """``val`` with its mapped axis at ``out_axis``. An unmapped output left unmapped
    (``out_axis`` None) that ``fun`` returned as a Python scalar or NumPy value comes back
    as ``fun`` returned it (``returned``), not as an Array: JAX hands it back untouched."""
    if out_axis is None:
        if dim is not not_mapped:
            raise ValueError(f"at vmap out_axes, got axis spec None but output was batched "
                             f"on axis {dim}")
        return returned if isinstance(returned, _HOST_VALUES) else val
    ndim = len(get_aval(val).shape) + (dim is not_mapped)
    if not -ndim <= out_axis < ndim:
        raise ValueError(f"axis {out_axis} is out of bounds for array of dimension {ndim}")
    out_axis = out_axis % ndim
    if dim is not_mapped:
        return move_axis(bdim_at_front(val, not_mapped, size), 0, out_axis)
    return move_axis(val, dim, out_axis)
