"""``shard_map`` and ``smap``: SPMD programs over the axes of a ``Mesh``.

Every input is split into per-device blocks by its ``in_specs`` entry; ``f`` is traced once
on the block shapes with the manual mesh axis names bound, so ``lax.psum(x, 'x')`` and the
other collectives stage as equations; the per-device outputs are assembled by ``out_specs``.
The result is one ``shard_map`` equation (``higher_order.shard_map``): over several devices
XLA runs it on each device (``sdy.manual_computation``), on one device nested named vmaps
compute it.

Replication checking (``check_vma``) asks the one-device computation which outputs vary: an
output is varying over a mesh axis when the vmap of that axis batches it. That agrees with
JAX's varying-manual-axes types everywhere except after ``all_gather`` (JAX types its result
varying; here it is replicated), where xjax accepts an unmapped ``out_specs`` entry that JAX
rejects.
"""

from __future__ import annotations

import functools
import math

from xjax._src.core.ad_util import get_aval
from xjax._src.core.pytree import prefix_leaves, tree_flatten, tree_map, tree_unflatten
from xjax._src.core.sharding_types import (AbstractMesh, AxisType, Mesh, PartitionSpec,
                                           check_unique_names, get_mesh, spec_names)
from xjax._src.higher_order.jit_call import consts_as_args
from xjax._src.higher_order.shard_map import (block_aval, is_multi_device, shard_map_p,
                                              spec_axes_set, varying_outputs)
from xjax._src.interpreters.staging import trace_to_jaxpr
from xjax._src.lax.operands import to_operand
from xjax._src.core.axis_env import axes_bound
from xjax._src.runtime.sharded import note_multi_device


class _InferType:
    def __repr__(self):
        return "jax.sharding.Infer"


Infer = _InferType()


def _is_spec_leaf(x):
    return x is None or isinstance(x, PartitionSpec)


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True):
    """Map ``f`` over the per-device blocks of its arguments on ``mesh``.

    Parameters
    ----------
    f : callable
        Runs once per device of the mesh, on the blocks of the arguments, with the manual mesh
        axis names bound for collectives. If omitted, ``shard_map`` returns a decorator.
    out_specs : PartitionSpec or pytree prefix of the output of them
        How per-device outputs are concatenated; a mesh axis not named by an entry requires
        the output to be the same on every device along it.
    in_specs : PartitionSpec or pytree prefix of the positional arguments of them
        How arguments are split; an argument is replicated over mesh axes it does not name.
    mesh : Mesh, optional
        Defaults to the mesh set with ``xjax.set_mesh``.
    axis_names : set, optional
        The mesh axes ``f`` is manual over (default: all of them).
    check_vma : bool
        Check that outputs whose ``out_specs`` omit a mesh axis do not vary over it. With
        False, such an output takes the value of the first device along the axis.

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        For specs naming axes that are not manual, specs longer than the value's rank,
        dimensions not divisible by their mesh axes, and outputs that vary over an axis their
        ``out_specs`` omit (with ``check_vma``).
    TypeError
        For specs that are not ``PartitionSpec`` pytrees.

    Examples
    --------
    >>> import numpy as np, xjax, xjax.numpy as jnp
    >>> from xjax.sharding import Mesh, PartitionSpec as P
    >>> mesh = Mesh(np.array(xjax.devices()[:1]), ('x',))
    >>> f = xjax.shard_map(lambda b: xjax.lax.psum(b.sum(), 'x'), mesh=mesh,
    ...                    in_specs=P('x'), out_specs=P())
    >>> f(jnp.arange(4.))
    Array(6., dtype=float32)
    """
    kwargs = dict(mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=axis_names,
                  check_vma=check_vma)
    if f is None:
        return lambda g: _shard_map(g, **kwargs)
    return _shard_map(f, **kwargs)


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """Shard-map ``f`` over the single mesh axis ``axis_name`` of the current mesh, with
    vmap-style ``in_axes``/``out_axes`` (see ``xjax.set_mesh``).

    Parameters
    ----------
    f : callable
    in_axes : int, None or tuple of them
        The dimension of each positional argument split over ``axis_name`` (None: replicated).
    out_axes : int, None or pytree of them
    axis_name : hashable
        A mesh axis of the current mesh.
    """
    kwargs = dict(in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if f is None:
        return lambda g: _smap(g, **kwargs)
    return _smap(f, **kwargs)


def _axes_to_pspec(axis_name, axis):
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*[None] * axis, axis_name)


def _int_leaves_only(tree) -> bool:
    return all(isinstance(leaf, int) for leaf in tree_flatten(tree)[0])


def _smap(f, *, in_axes, out_axes, axis_name):
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of "
                        "entries corresponding to the positional arguments passed to the "
                        f"function, but got {in_axes}.")
    if in_axes is not Infer and not _int_leaves_only(in_axes):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not _int_leaves_only(out_axes):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")
    to_spec = functools.partial(_axes_to_pspec, axis_name)
    in_specs = (Infer if in_axes is Infer else
                tree_map(to_spec, in_axes, is_leaf=lambda x: x is None))
    out_specs = tree_map(to_spec, out_axes, is_leaf=lambda x: x is None)
    return _shard_map(f, mesh=None, in_specs=in_specs, out_specs=out_specs,
                      axis_names={axis_name}, check_vma=True, _smap=True)


def _fun_name(f) -> str:
    return getattr(f, "__name__", str(f))


def _shard_map(f, *, mesh, in_specs, out_specs, axis_names, check_vma, _smap=False):
    if not callable(f):
        raise TypeError("shard_map requires a callable for its first argument, but got "
                        f"{f} of type {type(f)}.")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        if kwargs:
            raise TypeError(f"{_fun_name(f)}() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}': shard_map passes positional arguments "
                            "only")
        the_mesh, manual = _checks(mesh, axis_names, in_specs, out_specs, _smap)
        return _run(f, the_mesh, manual, in_specs, out_specs, check_vma, args)

    return wrapped


def _checks(mesh, axis_names, in_specs, out_specs, is_smap):
    if mesh is None:
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
    else:
        ctx = get_mesh()
        if not ctx.empty and isinstance(mesh, (Mesh, AbstractMesh)) and \
                mesh.abstract_mesh != ctx.abstract_mesh:
            raise ValueError(f"The context mesh {ctx.abstract_mesh} should match the mesh "
                             f"passed to shard_map {mesh.abstract_mesh}")
    if not isinstance(mesh, (Mesh, AbstractMesh)):
        raise TypeError("shard_map requires a `jax.sharding.Mesh` or a "
                        "`jax.sharding.AbstractMesh` instance for its second argument, but "
                        f"got {mesh} of type {type(mesh)}.")
    if mesh.empty:
        raise ValueError(f"shard_map requires a non-empty mesh. Got {mesh}")
    if not isinstance(axis_names, (frozenset, set)):
        raise TypeError("`axis_names` argument of shard_map should be of type `frozenset` or "
                        f"`set`. Got type: {type(axis_names)}")
    axis_names = frozenset(axis_names) or frozenset(mesh.axis_names)
    if not axis_names.issubset(mesh.axis_names):
        raise ValueError(f"jax.shard_map requires axis_names={axis_names} to be a subset of "
                         f"mesh.axis_names={frozenset(mesh.axis_names)}")
    types = mesh._name_to_type
    if in_specs is Infer:
        if all(types[a] == AxisType.Explicit for a in axis_names):
            raise NotImplementedError(
                "shard_map/smap without in_specs/in_axes infers them from the shardings in "
                "the arguments' types (Explicit mesh axes); xjax does not track shardings in "
                "types. Pass in_specs (shard_map) or in_axes (smap) explicitly.")
        kinds = ", ".join(str(types[a]) for a in axis_names)
        if is_smap:
            raise TypeError(f"in_axes was not specified when axis_name={axis_names} was of "
                            f"type {kinds}")
        raise TypeError("shard_map in_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                        f"axis_names={axis_names} are of type {kinds}")
    if in_specs is None:
        raise TypeError("shard_map in_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but it was None.\nInstead of "
                        "`in_specs=None`, did you mean `in_specs=P()`, where `P = "
                        "jax.sharding.PartitionSpec`?")
    _check_specs("in", in_specs, axis_names, mesh)
    if not callable(out_specs):  # a thunk (pmap's) is checked once resolved
        _check_specs("out", out_specs, axis_names, mesh)
    manual = tuple(n for n in mesh.axis_names if n in axis_names)  # mesh order
    return mesh, manual


def _check_specs(prefix, specs, manual, mesh):
    # None leaves: a replicated input (as P()), or an output subtree with no arrays.
    leaves = [x for x in tree_flatten(specs, is_leaf=_is_spec_leaf)[0] if x is not None]
    bad_types = [x for x in leaves if not isinstance(x, PartitionSpec)]
    if bad_types:
        msgs = [f"  {prefix}_specs is {x} of type {type(x).__name__}, " for x in bad_types]
        raise TypeError(f"shard_map {prefix}_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but:\n\n"
                        + "\n\n".join(msgs) + f"\n\nCheck the {prefix}_specs values passed to "
                        "shard_map.")
    msgs = []
    for spec in leaves:
        if spec.unreduced or spec.reduced:
            raise NotImplementedError(f"unreduced/reduced in {prefix}_specs ({spec}): xjax has "
                                      "no unreduced or reduced values")
        for entry in spec.partitions:
            for name in spec_names(entry):
                if name not in manual:
                    msgs.append(f"  {prefix}_specs refers to {name!r}")
    if msgs:
        raise ValueError(f"shard_map {prefix}_specs argument must refer to an axis marked as "
                         f"manual ({set(manual)}), but:\n\n" + "\n\n".join(msgs)
                         + f"\n\nCheck the {prefix}_specs values passed to shard_map.")
    for spec in leaves:
        check_unique_names(spec, mesh)


def _broadcast_specs(specs, tree_value, what):
    """One spec per leaf of ``tree_value`` (``specs`` is a pytree prefix of it)."""
    try:
        return prefix_leaves(specs, tree_value, is_leaf=_is_spec_leaf)
    except (ValueError, TypeError) as e:
        raise ValueError(f"pytree structure error: shard_map {what} {specs!r} is not a tree "
                         f"prefix of the value's structure {tree_flatten(tree_value)[1]}: "
                         f"{e}") from None


def _mesh_shape_msg(mesh):
    return (f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis "
            f"names {mesh.axis_names}.")


def _check_inputs(f, mesh, specs, flat_args):
    name = _fun_name(f)
    for i, (spec, x) in enumerate(zip(specs, flat_args, strict=True)):
        aval = get_aval(x)
        if len(spec) > len(aval.shape):
            raise ValueError(
                f"shard_map applied to the function '{name}' was given an in_specs entry "
                "which is too long to be compatible with the corresponding input value from "
                f"the function:\n\nin_specs is {spec} which has length {len(spec)}, but the "
                f"passed args[{i}] has shape {aval.str_short()}, which has rank "
                f"{len(aval.shape)} (and {len(aval.shape)} < {len(spec)})\n\nEntries in "
                "in_specs must be of length no greater than the number of axes in the "
                "corresponding input value.\n\nEither revise the spec to be shorter, or "
                f"modify '{name}' so that its inputs have sufficient rank.")
    for i, (spec, x) in enumerate(zip(specs, flat_args, strict=True)):
        aval = get_aval(x)
        for d, entry in enumerate(spec.partitions):
            names = spec_names(entry)
            total = math.prod(mesh.shape[n] for n in names)
            if names and aval.shape[d] % total:
                axis = (f"axes {names}" if len(names) > 1 else f"axis {names[0]!r}")
                size = "total size" if len(names) > 1 else "size"
                raise ValueError(
                    f"shard_map applied to the function '{name}' was given argument arrays "
                    "with axis sizes that are not evenly divisible by the corresponding mesh "
                    f"axis sizes:\n\n{_mesh_shape_msg(mesh)}\n\nthe passed args[{i}] of shape "
                    f"{aval.str_short()} corresponds to in_specs of value {spec}, which maps "
                    f"array axis {d} (of size {aval.shape[d]}) to mesh {axis} (of {size} "
                    f"{total}), but {total} does not evenly divide {aval.shape[d]}\n\nArray "
                    "arguments' axis sizes must be evenly divisible by the mesh axis or axes "
                    "indicated by the corresponding elements of the argument's in_specs entry. "
                    "Consider checking that in_specs are correct, and if so consider changing "
                    f"the mesh axis sizes or else padding the input and adapting '{name}' "
                    "appropriately.")


def _run(f, mesh, manual, in_specs, out_specs, check_vma, args):
    flat_args, in_tree = tree_flatten(args)
    flat_args = [to_operand(a) for a in flat_args]
    flat_in_specs = tuple(PartitionSpec() if s is None else s
                          for s in _broadcast_specs(in_specs, args, "in_specs"))
    _check_inputs(f, mesh, flat_in_specs, flat_args)
    state = {}

    def body(*xs):
        out = f(*tree_unflatten(in_tree, list(xs)))
        flat_out, out_tree = tree_flatten(out)
        flat_out = [to_operand(o) for o in flat_out]
        specs_tree = out_specs
        if callable(out_specs):
            specs_tree = out_specs()
            _check_specs("out", specs_tree, set(manual), mesh)
        specs = _broadcast_specs(specs_tree, out, "out_specs")
        if any(s is None for s in specs):
            raise ValueError(f"pytree structure error: shard_map out_specs {specs_tree!r} has "
                             "None where the output has arrays; give them a PartitionSpec.")
        _check_out_ranks(f, specs, flat_out)
        state["out_tree"], state["specs"] = out_tree, tuple(specs)
        return flat_out

    block_avals = [block_aval(get_aval(x), s, mesh)
                   for x, s in zip(flat_args, flat_in_specs, strict=True)]
    with axes_bound({n: mesh.shape[n] for n in manual}):
        closed = trace_to_jaxpr(body, block_avals)
    jaxpr, consts = consts_as_args(closed)
    in_specs_all = (PartitionSpec(),) * len(consts) + flat_in_specs
    if check_vma:
        _check_replication(f, mesh, manual, jaxpr, in_specs_all, state["specs"])
    if is_multi_device(mesh):
        note_multi_device()  # jit looks for multi-device programs from now on
    outs = shard_map_p.bind(*consts, *flat_args, jaxpr=jaxpr, mesh=mesh,
                            in_specs=in_specs_all, out_specs=state["specs"],
                            newly_manual_axes=frozenset(manual), check_vma=check_vma)
    return tree_unflatten(state["out_tree"], outs)


def _check_replication(f, mesh, manual, jaxpr, in_specs, out_specs):
    """ValueError for an output that varies over a mesh axis its spec omits."""
    if all(set(manual) <= spec_axes_set(s) for s in out_specs):
        return
    varying = varying_outputs(jaxpr, mesh, frozenset(manual), in_specs, out_specs)
    fails = [(s, v) for s, v in zip(out_specs, varying, strict=True) if v]
    if fails:
        raise ValueError(_replication_error(f, mesh, manual, fails))


def _check_out_ranks(f, specs, flat_out):
    name = _fun_name(f)
    for spec, x in zip(specs, flat_out, strict=True):
        aval = get_aval(x)
        if len(spec) > len(aval.shape):
            raise ValueError(
                f"shard_map applied to the function '{name}' was given an out_specs entry "
                "which is too long to be compatible with the corresponding output value from "
                f"the function:\n\nout_specs is {spec} which has length {len(spec)}, but "
                f"{name}(*args) has shape {aval.str_short()}, which has rank {len(aval.shape)} "
                f"(and {len(aval.shape)} < {len(spec)})\n\nEntries in out_specs must be of "
                "length no greater than the number of axes in the corresponding output "
                f"value.\n\nEither revise the spec to be shorter, or modify '{name}' so that "
                "its outputs have sufficient rank.")


def _replication_error(f, mesh, manual, fails):
    msgs = []
    for spec, varying in fails:
        mentioned = {n for e in spec.partitions for n in spec_names(e)}
        unmentioned = [n for n in manual if n not in mentioned]
        if len(unmentioned) > 1:
            got = [n for n in manual if n in mentioned or n in varying]
            msgs.append(
                f"* out_specs is {spec} which implies that the corresponding output value is "
                f"only varying across mesh axes {{{','.join(map(str, [n for n in manual if n in mentioned]))}}} "
                f"and not {{{','.join(map(str, [n for n in manual if n in varying]))}}}, but it "
                f"was inferred to be possibly varying over {{{','.join(map(str, got))}}}")
        else:
            msgs.append(
                f"* out_specs is {spec} which implies that the corresponding output value is "
                f"replicated across mesh axis '{unmentioned[0]}', but could not infer "
                "replication over any axes")
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    return (f"shard_map applied to the function '{_fun_name(f)}' was given out_specs which "
            "require replication which can't be statically inferred given the mesh:\n\n"
            f"{_mesh_shape_msg(mesh)}\n\n" + "\n\n".join(msgs) + "\n\nCheck if these output "
            "values are meant to be replicated over those mesh axes. If not, consider "
            "revising the corresponding out_specs entries. If so, consider disabling the check "
            "by passing the check_vma=False argument to `jax.shard_map`.")


__all__ = ["shard_map", "smap"]
