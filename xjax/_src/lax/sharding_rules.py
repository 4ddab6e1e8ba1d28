"""Sharding rules: how a primitive's result type is split when an operand's type is split
over Explicit mesh axes (``Primitive.sharding_rule``; applied by
``core.primitive.abstract_eval_typed``).

Each rule takes the operand avals and the params and returns the result's sharding (a
``NamedSharding`` over the operands' ``AbstractMesh``, or None for an unsplit result), one
per result for several. They follow JAX 0.10.2's rules and raise its ``ShardingTypeError``
messages where JAX refuses a combination (measured with JAX on a 2x2 mesh).
"""

from __future__ import annotations

import math

from xjax._src.core import dtypes
from xjax._src.core.avals import dimension_text
from xjax._src.core.errors import ShardingTypeError
from xjax._src.core.sharding_types import NamedSharding, PartitionSpec, spec_names

__all__ = ["broadcast_in_dim", "concatenate", "dot_general", "dynamic_slice", "elementwise",
           "gather", "reduction", "reshape", "same_as_operand", "scatter", "slice_rule", "sort",
           "squeeze", "transpose", "varying_out_shape"]


def _entries(aval) -> tuple:
    """The spec entries of ``aval``'s type, one per dimension (None: not split)."""
    sharding = getattr(aval, "_sharding", None)
    return (None,) * aval.ndim if sharding is None else tuple(sharding.spec)


def _mesh(avals):
    """The one abstract mesh of the operands' split types."""
    meshes = {a._sharding.mesh for a in avals if getattr(a, "_sharding", None) is not None}
    if len(meshes) > 1:
        raise ShardingTypeError(f"operands' types are split over different meshes: "
                                f"{sorted(map(str, meshes))}")
    return next(iter(meshes))


def _sharding(mesh, entries, describe=None):
    """A ``NamedSharding`` of ``entries`` over ``mesh`` (None when nothing is split); an axis
    used for two dimensions raises ``ShardingTypeError`` (``describe()``: JAX's text)."""
    if all(e is None for e in entries):
        return None
    names = [n for e in entries for n in spec_names(e)]
    if len(names) != len(set(names)):
        raise ShardingTypeError(describe() if describe is not None else
                                f"a mesh axis splits two dimensions: {entries}")
    return NamedSharding(mesh, PartitionSpec(*entries))


def _spec_text(entries) -> str:
    return repr(tuple(entries))


def elementwise(name):
    """The rule of an elementwise primitive ``name``: each result dimension is split as
    the operands of that size split it (size-1 and rank-0 operands broadcast unsplit);
    two different splits of one dimension raise JAX's error."""

    def rule(*avals, **params):
        ranked = [a for a in avals if a.ndim > 0]
        ndim = max(a.ndim for a in ranked)
        shape = [max(a.shape[d] for a in ranked if a.ndim == ndim) for d in range(ndim)]
        specs = [_entries(a) for a in ranked if a.ndim == ndim]
        out = []
        for d in range(ndim):
            found = {spec[d] for a, spec in zip((a for a in ranked if a.ndim == ndim), specs)
                     if spec[d] is not None and a.shape[d] == shape[d]}
            if len(found) > 1:
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: "
                    f"{', '.join(_spec_text(s) for s in specs)}.")
            out.append(found.pop() if found else None)
        return _sharding(_mesh(avals), out)

    return rule


def same_as_operand(operand, *rest, **params):
    """The result is split as the (first) operand (conversions, cumulative reductions)."""
    return operand._sharding


def reduction(operand, *, axes, **params):
    """Reduced dimensions leave the type (a split one is all-reduced)."""
    entries = [e for d, e in enumerate(_entries(operand)) if d not in set(axes)]
    return _sharding(_mesh([operand]), entries)


def transpose(operand, *, permutation):
    entries = _entries(operand)
    return _sharding(_mesh([operand]), [entries[p] for p in permutation])


def squeeze(operand, *, dimensions):
    dropped = {d % operand.ndim for d in dimensions}
    entries = [e for d, e in enumerate(_entries(operand)) if d not in dropped]
    return _sharding(_mesh([operand]), entries)


def broadcast_in_dim(operand, *, shape, broadcast_dimensions, sharding):
    """An operand dimension keeps its split where it keeps its size; new and broadcast
    dimensions are unsplit (unless the ``sharding`` param says otherwise)."""
    if sharding is not None:
        return sharding
    out = [None] * len(shape)
    for i, (d, entry) in enumerate(zip(broadcast_dimensions, _entries(operand))):
        if operand.shape[i] == shape[d]:
            out[d] = entry
    return _sharding(_mesh([operand]), out)


def reshape(operand, *, new_sizes, dimensions, sharding):
    """Groups of dimensions whose sizes multiply alike map onto each other; a group keeps
    a split of its leading (major) dimension when the new leading dimension divides by the
    axes' size. Any other split (a minor dimension of a merged group, say) gives an unsplit
    type, where JAX refuses the reshape."""
    if sharding is not None:
        return sharding
    if dimensions is not None:
        return None
    entries = _entries(operand)
    mesh = _mesh([operand])
    out = [None] * len(new_sizes)
    for old_dims, new_dims in _groups(operand.shape, tuple(new_sizes)):
        split = [entries[d] for d in old_dims if entries[d] is not None]
        if not split:
            continue
        if entries[old_dims[0]] is None or len(split) > 1 or not new_dims:
            return None
        size = math.prod(mesh.shape[n] for n in spec_names(entries[old_dims[0]]))
        if new_sizes[new_dims[0]] % size:
            return None
        out[new_dims[0]] = entries[old_dims[0]]
    return _sharding(mesh, out)


def _groups(old, new):
    """Pairs (old dimensions, new dimensions) of equal size products, in order; size-1
    dimensions form groups of their own (with nothing on the other side)."""
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        if i < len(old) and old[i] == 1:
            groups.append(((i,), ()))
            i += 1
            continue
        if j < len(new) and new[j] == 1:
            groups.append(((), (j,)))
            j += 1
            continue
        if i >= len(old) or j >= len(new):
            break
        old_dims, new_dims = [i], [j]
        a, b = old[i], new[j]
        i, j = i + 1, j + 1
        while a != b:
            if a < b:
                a *= old[i]
                old_dims.append(i)
                i += 1
            else:
                b *= new[j]
                new_dims.append(j)
                j += 1
        groups.append((tuple(old_dims), tuple(new_dims)))
    return groups


def dot_general(lhs, rhs, *, dimension_numbers, out_sharding=None, **params):
    """Batch dimensions split as either operand splits them; free dimensions keep their
    splits; a contracting dimension split on both sides is ambiguous (JAX asks for
    ``out_sharding``), and a result using one axis twice is refused."""
    if out_sharding is not None:
        return out_sharding
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_entries, rhs_entries = _entries(lhs), _entries(rhs)
    lhs_c = tuple(lhs_entries[d] for d in lhs_contract)
    rhs_c = tuple(rhs_entries[d] for d in rhs_contract)
    if any(a is not None and b is not None for a, b in zip(lhs_c, rhs_c)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. "
            f"Got lhs_contracting_spec={lhs_c} and rhs_contracting_spec={rhs_c}")
    batch = []
    for a, b in zip(lhs_batch, rhs_batch):
        left, right = lhs_entries[a], rhs_entries[b]
        if left is not None and right is not None and left != right:
            raise ShardingTypeError(
                f"dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                f"the consistent sharding, got {left} and {right}.")
        batch.append(left if left is not None else right)
    lhs_free = [lhs_entries[d] for d in range(lhs.ndim)
                if d not in lhs_contract and d not in lhs_batch]
    rhs_free = [rhs_entries[d] for d in range(rhs.ndim)
                if d not in rhs_contract and d not in rhs_batch]
    entries = batch + lhs_free + rhs_free

    def describe():
        shape = ([lhs.shape[d] for d in lhs_batch]
                 + [lhs.shape[d] for d in range(lhs.ndim)
                    if d not in lhs_contract and d not in lhs_batch]
                 + [rhs.shape[d] for d in range(rhs.ndim)
                    if d not in rhs_contract and d not in rhs_batch])
        result = (f"{dtypes.short_dtype_name(lhs.dtype)}"
                  f"[{','.join(map(dimension_text, shape, entries))}]")
        return (f"dot_general operation with inputs: {lhs.str_short(short_dtypes=True)}, "
                f"{rhs.str_short(short_dtypes=True)} produces an illegally sharded result: "
                f"{result}")
    return _sharding(_mesh([lhs, rhs]), entries, describe)


def varying_out_shape(operand, out_shape, name):
    """The operand's split, kept by a result of another shape (a slice), where every split
    dimension that changes size still divides by its axes' size; JAX refuses the rest."""
    entries = _entries(operand)
    mesh = _mesh([operand])
    for size, out_size, entry in zip(operand.shape, out_shape, entries):
        parts = math.prod(mesh.shape[n] for n in spec_names(entry))
        if entry is not None and size != out_size and out_size % parts:
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({out_size}) is not divisible by mesh "
                f"axes ({parts}) with spec ({_entry_text(entry)}) is not implemented. Got "
                f"input type={operand.str_short(short_dtypes=True)} and output "
                f"shape={tuple(out_shape)}")
    return _sharding(mesh, entries)


def _entry_text(entry) -> str:
    return ", ".join(spec_names(entry))


def slice_rule(operand, *, start_indices, limit_indices, strides):
    """The operand's split, where each sliced split dimension divides by its axes' size."""
    steps = strides or (1,) * operand.ndim
    out_shape = [max(0, -(-(limit - start) // step))
                 for start, limit, step in zip(start_indices, limit_indices, steps)]
    return varying_out_shape(operand, out_shape, "slicing")


def dynamic_slice(operand, *start_indices, slice_sizes):
    return varying_out_shape(operand, slice_sizes, "dynamic_slice")


def gather(operand, indices, *, dimension_numbers, slice_sizes, **params):
    """JAX's rule: an operand dimension taken whole (or unsplit) keeps its split in the
    output's window dimensions; the indices' batch dimensions give theirs; the indices'
    other dimensions must be unsplit, as must operand dimensions sliced into."""
    mesh = _mesh([operand, indices])
    dnums = dimension_numbers
    operand_spec, indices_spec = _entries(operand), list(_entries(indices))
    resolvable = (
        all(slice_sizes[d] == operand.shape[d] or operand_spec[d] is None
            for d in dnums.start_index_map)
        and all(None in (indices_spec[i], operand_spec[o]) or indices_spec[i] == operand_spec[o]
                for o, i in zip(dnums.operand_batching_dims, dnums.start_indices_batching_dims))
        and all(e is None for i, e in enumerate(indices_spec)
                if i not in dnums.start_indices_batching_dims))
    if not resolvable:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand={operand!r}, indices={indices!r}")
    for o, i in zip(dnums.operand_batching_dims, dnums.start_indices_batching_dims):
        indices_spec[i] = indices_spec[i] or operand_spec[o]
    window = iter(d for d in range(operand.ndim)
                  if d not in dnums.collapsed_slice_dims and d not in dnums.operand_batching_dims)
    batch = iter(indices_spec)
    out = [operand_spec[next(window)] if d in dnums.offset_dims else next(batch)
           for d in range(len(dnums.offset_dims) + indices.ndim - 1)]
    return _sharding(mesh, out)


def scatter(operand, indices, updates, *, dimension_numbers, **params):
    """JAX's rule (a gather's, inverted): window dimensions of the updates and the operand
    must agree (taken whole) or be unsplit; inserted window dimensions, the indices' and
    updates' query dimensions and the index vector must be unsplit; the result takes the
    operand's split, completed by the updates' and the batch dimensions'."""
    mesh = _mesh([operand, indices, updates])
    dnums = dimension_numbers
    operand_spec, indices_spec, updates_spec = map(_entries, (operand, indices, updates))
    vector_dim = indices.ndim - 1
    query_dims = [d for d in range(updates.ndim) if d not in dnums.update_window_dims]
    updates_batching = [query_dims[i] for i in dnums.scatter_indices_batching_dims]
    operand_window = [d for d in range(operand.ndim) if d not in dnums.inserted_window_dims
                      and d not in dnums.operand_batching_dims]
    resolvable = (
        all(len({operand_spec[o], indices_spec[i], updates_spec[u]} - {None}) <= 1
            for o, i, u in zip(dnums.operand_batching_dims, dnums.scatter_indices_batching_dims,
                               updates_batching))
        and all((updates.shape[u] == operand.shape[o] and updates_spec[u] == operand_spec[o])
                or (updates_spec[u] is None and operand_spec[o] is None)
                for u, o in zip(dnums.update_window_dims, operand_window))
        and all(operand_spec[d] is None for d in dnums.inserted_window_dims)
        and all(updates_spec[d] is None for d in query_dims if d not in updates_batching)
        and all(indices_spec[d] is None for d in range(vector_dim)
                if d not in dnums.scatter_indices_batching_dims)
        and indices_spec[vector_dim] is None)
    if not resolvable:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec "
            "for the scatter update as out sharding could not be resolved unambiguously (or "
            "would require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}, updates={updates!r}")
    out = list(operand_spec)
    for o, i, u in zip(dnums.operand_batching_dims, dnums.scatter_indices_batching_dims,
                       updates_batching):
        out[o] = out[o] or indices_spec[i] or updates_spec[u]
    for u, o in zip(dnums.update_window_dims, operand_window):
        out[o] = out[o] or updates_spec[u]
    return _sharding(mesh, out)


def concatenate(*operands, dimension):
    """Dimensions other than the joined one keep the split the operands agree on."""
    specs = [_entries(o) for o in operands]
    out = []
    for d in range(operands[0].ndim):
        found = {spec[d] for spec in specs}
        out.append(None if d == dimension or len(found) != 1 else found.pop())
    return _sharding(_mesh(operands), out)


def sort(*operands, dimension, **params):
    """Sorted arrays keep their split, which must leave the sorting dimension whole."""
    for operand in operands:
        sharding = getattr(operand, "_sharding", None)
        if sharding is not None and sharding.spec[dimension] is not None:
            raise ShardingTypeError(
                "Arguments to sort must be unsharded over the sorting dimension. Got arg "
                f"sharding={sharding} and sorting dimension={dimension}")
    shardings = [getattr(o, "_sharding", None) for o in operands]
    found = {s for s in shardings if s is not None}
    return [found.pop() if len(found) == 1 else None] * len(operands)
