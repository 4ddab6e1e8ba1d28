"""Placement in ``jax.lax``: ``with_sharding_constraint`` and the placement primitives,
printed in jaxprs as JAX prints them; identities on one device, and in a program
partitioned over several the constraint and ``reshard`` become sharding constraints:

- ``device_put_p`` (``xjax.device_put`` of traced values): several operands at once, with
  per-operand ``devices``, ``srcs`` and ``copy_semantics`` params; linear, its transpose
  puts the cotangents back (``srcs`` and ``devices`` swapped, copying).
- ``sharding_constraint_p`` (``lax.with_sharding_constraint``): one operand; params
  ``sharding``, ``layout``, ``context_mesh``, ``unconstrained_dims``.
- ``reshard_p`` (``jax.sharding.reshard`` of a traced value): one operand, its type split
  as ``dst_sharding`` says (JAX prints neither param).
"""

from __future__ import annotations

import enum

import numpy as np

from xjax._src.core.ad_util import Zero, get_aval, is_undefined
from xjax._src.core.array import Array
from xjax._src.core.avals import type_sharding
from xjax._src.core.primitive import Primitive, split_by_params
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.trace import Tracer
from xjax._src.lax.operands import to_operand
from xjax._src.core.sharding_types import (Mesh, NamedSharding, PartitionSpec, Sharding,
                                           get_mesh, spec_axes)
from xjax._src.lowering.stablehlo import sharding_value
from xjax._src.runtime.sharded import note_multi_device

__all__ = ["with_sharding_constraint", "device_put_p", "sharding_constraint_p", "reshard_p",
           "ArrayCopySemantics"]

_PY_SCALAR_TYPES = (bool, int, float, complex)


def _is_none(x) -> bool:
    return x is None


def _is_partition_spec(s) -> bool:
    """JAX's PartitionSpec (its class is ``jax.P`` in 0.10) or a look-alike, recognised
    without importing JAX."""
    name = type(s).__qualname__
    return name == "PartitionSpec" or (name == "P" and hasattr(s, "unreduced"))


def _check_sharding(s, mesh) -> None:
    if s is None:
        raise ValueError(f"One of with_sharding_constraint arguments got sharding {s} which "
                         "is not allowed. Please only pass `jax.sharding.Sharding` "
                         "instances.")
    if _is_partition_spec(s) and mesh.empty:
        raise RuntimeError(
            "with_sharding_constraint requires a non-empty mesh in context if you are "
            "passing `PartitionSpec`s to shardings. Set one with `xjax.sharding.set_mesh`, "
            "or pass `Sharding`s.")
    # A Sharding, or a look-alike from elsewhere (its device_set may not be computable: an
    # AbstractMesh under a trace has no devices).
    if not _is_partition_spec(s) and not isinstance(s, Sharding) and not hasattr(
            type(s), "device_set"):
        raise TypeError("shardings leaf specifications are expected to be PartitionSpec "
                        f"instances or None, but got {s}")


def _check_value(x):
    if type(x) is Array or isinstance(x, Tracer):
        return x
    if type(x) in _PY_SCALAR_TYPES or isinstance(x, (np.ndarray, np.generic)):
        return to_operand(x)
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")


def with_sharding_constraint(x, shardings):
    """Constrain the sharding of ``x``: binds ``sharding_constraint`` per leaf. A jitted
    program with a constraint over several devices is partitioned over them; on one device
    (and eagerly) it is an identity.

    Parameters
    ----------
    x : pytree of array_like
        The values to constrain.
    shardings : pytree of shardings
        A tree prefix of ``x``; each leaf a sharding object (anything with a
        ``device_set``, as JAX's ``Sharding`` classes have), or a ``PartitionSpec`` when a
        mesh is set (``xjax.sharding.set_mesh``): it means ``NamedSharding(mesh, spec)``.
        ``None`` leaves raise ``ValueError`` and ``PartitionSpec`` leaves without a mesh
        ``RuntimeError``, as in JAX.

    Returns
    -------
    pytree
        ``x`` with the same structure, every leaf an array (Python scalars become weakly
        typed arrays).

    Examples
    --------
    >>> import xjax
    >>> from xjax import lax
    >>> s = xjax.sharding.SingleDeviceSharding(xjax.devices()[0])
    >>> lax.with_sharding_constraint(xjax.numpy.ones(2), s)
    Array([1., 1.], dtype=float32)
    """
    leaves, treedef = tree_flatten(x)
    leaves = [_check_value(leaf) for leaf in leaves]
    spec_leaves, spec_tree = tree_flatten(shardings, is_leaf=_is_none)
    try:
        per_leaf = spec_tree.flatten_up_to(x)
    except (ValueError, TypeError) as e:
        raise ValueError("with_sharding_constraint shardings specification must be a tree "
                         "prefix of the corresponding value; got shardings "
                         f"{shardings!r} for value structure {treedef}.") from e
    mesh = get_mesh()
    spec_leaves = [_format_sharding(s, sub) for s, sub in zip(spec_leaves, per_leaf,
                                                                strict=True)]
    for s in spec_leaves:
        _check_sharding(s, mesh)
    flat_shardings = []
    for s, sub in zip(spec_leaves, per_leaf, strict=True):
        flat_shardings += [s] * len(tree_flatten(sub)[0])
    outs = [_constrain(leaf, s, mesh) for leaf, s in zip(leaves, flat_shardings, strict=True)]
    return tree_unflatten(treedef, outs)


def _format_sharding(s, value):
    """The sharding of a ``Format`` (``xjax.experimental.layout``: a layout and a sharding);
    xjax holds arrays in XLA's default layout only, so another layout raises."""
    if type(s).__name__ != "Format" or not hasattr(s, "layout"):
        return s
    layout, values = s.layout, tree_flatten(value)[0]
    if hasattr(layout, "is_default_for") and not all(  # AUTO: the default, chosen by XLA
            layout.is_default_for(np.ndim(v)) for v in values):
        raise NotImplementedError("xjax keeps arrays in XLA's default row-major layout only; "
                                  f"with_sharding_constraint with {s} is not supported")
    return s.sharding


class _DimSet(frozenset):
    """A frozenset printed as JAX prints ``unconstrained_dims`` (``frozenset({})`` when
    empty)."""

    def __repr__(self):
        return f"frozenset({{{', '.join(map(repr, sorted(self)))}}})"


def _constrain(x, s, mesh):
    unconstrained = _DimSet()
    if _is_partition_spec(s):
        spec = s if isinstance(s, PartitionSpec) else PartitionSpec(*tuple(s))
        unconstrained = _DimSet(i for i, entry in enumerate(spec.partitions)
                                  if entry is PartitionSpec.UNCONSTRAINED)
        s = NamedSharding(mesh, spec)
    if isinstance(s, NamedSharding) and s.mesh.size > 1:
        note_multi_device()  # jit looks for constraints from now on
    return sharding_constraint_p.bind(x, sharding=s, layout=None, context_mesh=mesh,
                                      unconstrained_dims=unconstrained)


# -- device_put_p --

class ArrayCopySemantics(enum.Enum):
    """How ``device_put`` may reuse its input (JAX's ``xla_client.ArrayCopySemantics``)."""

    ALWAYS_COPY = 0
    REUSE_INPUT = 1
    DONATE_INPUT = 2

    def __repr__(self):
        return f"ArrayCopySemantics.{self.name}"

    __str__ = __repr__


def copy_semantics_of(donate: bool, may_alias) -> ArrayCopySemantics:
    """JAX's choice from ``device_put``'s ``donate`` and ``may_alias``."""
    if may_alias and donate:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    if may_alias is None:
        may_alias = not donate
    if may_alias:
        return ArrayCopySemantics.REUSE_INPUT
    return ArrayCopySemantics.DONATE_INPUT if donate else ArrayCopySemantics.ALWAYS_COPY


def _device_put_abstract_eval(*avals, devices, srcs, copy_semantics):
    return list(avals)


def _device_put_impl(*xs, devices, srcs, copy_semantics):
    return list(xs)


def _device_put_lower(ctx, *xs, devices, srcs, copy_semantics):
    return list(xs)  # one device: placement is already right (JAX's CPU lowering too)


def _subset(params, indices):
    return {k: tuple(v[i] for i in indices) for k, v in params.items()}


def _device_put_jvp(primals, tangents, **params):
    """Linear: ``device_put`` of the nonzero tangents, with their params."""
    outs = device_put_p.bind(*primals, **params)
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    out_tangents = [Zero(t.aval) if type(t) is Zero else None for t in tangents]
    if live:
        picked = device_put_p.bind(*[tangents[i] for i in live], **_subset(params, live))
        for i, t in zip(live, picked, strict=True):
            out_tangents[i] = t
    return outs, out_tangents


def _device_put_transpose(cts, *args, devices, srcs, copy_semantics):
    """Put the cotangents back where the values came from (copying, as JAX does)."""
    results = [None] * len(args)
    live = []
    for i, (ct, arg) in enumerate(zip(cts, args, strict=True)):
        if is_undefined(arg):
            if type(ct) is Zero:
                results[i] = Zero(arg.aval)
            else:
                live.append(i)
    if live:
        if any(copy_semantics[i] is ArrayCopySemantics.DONATE_INPUT for i in live):
            raise ValueError("donate=True is not allowed during tranposition of device_put."
                             " Please file an issue if you want this to be supported.")
        outs = device_put_p.bind(
            *[cts[i] for i in live], devices=tuple(srcs[i] for i in live),
            srcs=tuple(devices[i] for i in live),
            copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(live))
        for i, y in zip(live, outs, strict=True):
            results[i] = y
    return results


def _device_put_batch(args, dims, **params):
    return device_put_p.bind(*args, **params), list(dims)


def _device_put_sharding_rule(*avals, devices, srcs, copy_semantics):
    """A value put on a ``NamedSharding`` takes its split as its type (unsplit for an
    unsplit spec, as ``jax.reshard`` under ``jit``); on a device, or None, it keeps its own."""
    return [type_sharding(target, aval.ndim) if isinstance(target, NamedSharding)
            else getattr(aval, "_sharding", None)
            for aval, target in zip(avals, devices, strict=True)]


device_put_p = Primitive("device_put", abstract_eval=_device_put_abstract_eval,
                         impl=_device_put_impl, lower=_device_put_lower, jvp=_device_put_jvp,
                         transpose=_device_put_transpose, batch=_device_put_batch,
                         multiple_results=True, sharding_rule=_device_put_sharding_rule)
split_by_params.add(device_put_p)


# -- sharding_constraint_p --

def _constraint_abstract_eval(x, *, sharding, layout, context_mesh, unconstrained_dims):
    return x


def _constraint_impl(x, *, sharding, layout, context_mesh, unconstrained_dims):
    return x


def _constraint_lower(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
    mesh = ctx.module.partition_mesh
    if mesh is None or not isinstance(sharding, NamedSharding):
        return x  # one device: every sharding holds already
    own = sharding.mesh
    if own.axis_names != mesh.axis_names or own.axis_sizes != mesh.axis_sizes or (
            isinstance(own, Mesh) and tuple(own.devices.flat) != tuple(mesh.devices.flat)):
        raise NotImplementedError(f"a sharding constraint over {own} in a program "
                                  f"partitioned over {mesh}")
    ndim = len(ctx.avals_in[0].shape)
    parts = sharding.spec.partitions
    open_dims = set(unconstrained_dims) | {d for d, p in enumerate(parts)
                                           if p is PartitionSpec.UNCONSTRAINED}
    value = sharding_value(spec_axes(sharding, ndim), open_dims)
    return ctx.builder.op1("sdy.sharding_constraint", [x], ctx.builder.types[x],
                           {"sharding": value})


def _constraint_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = sharding_constraint_p.bind(x, **params)
    return out, t if type(t) is Zero else sharding_constraint_p.bind(t, **params)


def _constraint_transpose(ct, x, **params):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [sharding_constraint_p.bind(ct, **params)]


def _constraint_batch(args, dims, *, sharding, layout, context_mesh, unconstrained_dims):
    (x,), (d,) = args, dims
    params = dict(sharding=sharding, layout=layout, context_mesh=context_mesh)
    if d is None:
        return sharding_constraint_p.bind(x, unconstrained_dims=unconstrained_dims,
                                          **params), None
    shifted = {u + 1 if u >= d else u for u in unconstrained_dims}
    if isinstance(sharding, NamedSharding):
        # The batch dimension is left unconstrained, as JAX does without spmd_axis_name.
        spec = tuple(sharding.spec) + (None,) * (np.ndim(x) - 1 - len(sharding.spec))
        params["sharding"] = sharding.with_spec(
            PartitionSpec(*spec[:d], PartitionSpec.UNCONSTRAINED, *spec[d:]))
        shifted.add(d)
    elif not getattr(sharding, "is_fully_replicated", False):
        raise NotImplementedError("vmap of with_sharding_constraint with a sharding that "
                                  "splits an axis is not supported")
    shifted = _DimSet(shifted)
    return sharding_constraint_p.bind(x, unconstrained_dims=shifted, **params), d


sharding_constraint_p = Primitive(
    "sharding_constraint", abstract_eval=_constraint_abstract_eval, impl=_constraint_impl,
    lower=_constraint_lower, jvp=_constraint_jvp, transpose=_constraint_transpose,
    batch=_constraint_batch)


# -- reshard_p --

def _reshard_abstract_eval(x, *, dst_sharding, concrete_mesh):
    return x  # the split of its type: the sharding rule's


def _reshard_sharding_rule(x, *, dst_sharding, concrete_mesh):
    return type_sharding(dst_sharding, x.ndim)


def _reshard_impl(x, *, dst_sharding, concrete_mesh):
    return x  # eagerly the value is placed over the sharding's own mesh (its own_mesh)


def _reshard_lower(ctx, x, *, dst_sharding, concrete_mesh):
    return _constraint_lower(ctx, x, sharding=dst_sharding, layout=None,
                             context_mesh=concrete_mesh, unconstrained_dims=())


def _reshard_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = reshard_p.bind(x, **params)
    return out, t if type(t) is Zero else reshard_p.bind(t, **params)


def _split_of(aval, mesh) -> NamedSharding:
    """The sharding ``aval``'s type is split by, or unsplit over ``mesh``."""
    own = getattr(aval, "_sharding", None)
    return own if own is not None else NamedSharding(mesh, PartitionSpec())


def _reshard_transpose(ct, x, *, dst_sharding, concrete_mesh):
    """The cotangent goes back to the split of the operand's type (JAX's)."""
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [reshard_p.bind(ct, dst_sharding=_split_of(x.aval, dst_sharding.mesh),
                           concrete_mesh=concrete_mesh)]


def _reshard_batch(args, dims, *, dst_sharding, concrete_mesh):
    (x,), (d,) = args, dims
    if d is None:
        return reshard_p.bind(x, dst_sharding=dst_sharding, concrete_mesh=concrete_mesh), None
    # The batch dimension keeps its own split (JAX's vmap over an Explicit axis).
    own = getattr(get_aval(x), "_sharding", None)
    entry = None if own is None else own.spec[d]
    spec = tuple(dst_sharding.spec) + (None,) * (np.ndim(x) - 1 - len(dst_sharding.spec))
    batched = dst_sharding.with_spec(PartitionSpec(*spec[:d], entry, *spec[d:]))
    return reshard_p.bind(x, dst_sharding=batched, concrete_mesh=concrete_mesh), d


reshard_p = Primitive(
    "reshard", abstract_eval=_reshard_abstract_eval, impl=_reshard_impl, lower=_reshard_lower,
    jvp=_reshard_jvp, transpose=_reshard_transpose, batch=_reshard_batch,
    hidden_params=(("dst_sharding", ...), ("concrete_mesh", ...)),
    sharding_rule=_reshard_sharding_rule)
split_by_params.add(reshard_p)
