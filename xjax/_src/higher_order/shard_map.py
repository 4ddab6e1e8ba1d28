"""The ``shard_map`` primitive: a jaxpr run once per device of a mesh, on blocks.

The equation holds the per-device body (a jaxpr on block shapes, its consts passed as
leading replicated operands), the ``mesh``, one ``PartitionSpec`` per operand and result
(``in_specs``/``out_specs``: which mesh axes split which dimension), and the manual axes.
Collectives in the body name the manual axes.

- Over several devices, in a partitioned module, it lowers to ``sdy.manual_computation``:
  XLA runs the body on each device's block and lowers its collectives to all-reduces,
  all-gathers, collective permutes (``lowering.collectives``).
- On one device (a mesh of size-1 axes, or a program compiled for one device), the body
  is computed by nested named vmaps, one level per manual mesh axis: ``emulate``.

Derivatives follow the per-device view: ``psum`` transposes to ``psum``, so the transpose
divides the cotangent of a result replicated over a manual axis by that axis's size, and
sums (``psum``) the cotangent of an operand replicated over an axis, as JAX does without
varying-axes types; the result is the derivative of the global function.
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src.core import axis_env, dtypes
from xjax._src.core.ad_util import Zero, get_aval, is_differentiable, tangent_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.config import config
from xjax._src.core.jaxpr import ClosedJaxpr, JaxprEqn, Var, eval_jaxpr
from xjax._src.core.sharding_types import Mesh, PartitionSpec, spec_names
from xjax._src.higher_order.common import derived, trace_flat
from xjax._src.higher_order.primitive import FROM_JAXPR_RULE, HigherOrderPrimitive
from xjax._src.higher_order.rules_common import batch_jaxpr, jvp_jaxpr
from xjax._src.interpreters.batching import batch_flat
from xjax._src.interpreters.partial_eval import partial_eval_jaxpr
from xjax._src.interpreters.staging import trace_to_jaxpr
from xjax._src.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from xjax._src.lax import parallel, shape as lax_shape, slicing
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, move_axis, not_mapped
from xjax._src.lax.elementwise import div
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.collectives import manual_axes_attribute
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.lowering.stablehlo import aval_type, tensor_sharding


# -- shapes --------------------------------------------------------------------------------

def manual_order(mesh, manual_axes) -> tuple:
    """The manual axes in mesh order."""
    return tuple(n for n in mesh.axis_names if n in manual_axes)


def axis_sizes(mesh, manual_axes) -> dict:
    return {n: mesh.shape[n] for n in manual_order(mesh, manual_axes)}


def _dim_factor(spec: PartitionSpec, d: int, mesh) -> int:
    names = spec_names(spec.partitions[d]) if d < len(spec.partitions) else ()
    return math.prod(mesh.shape[n] for n in names)


def block_aval(aval, spec, mesh) -> ShapedArray:
    """The per-device block of a global value split as ``spec``."""
    shape = tuple(n // _dim_factor(spec, d, mesh) for d, n in enumerate(aval.shape))
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def global_aval(aval, spec, mesh) -> ShapedArray:
    """The global value assembled from per-device blocks ``aval`` as ``spec`` says."""
    shape = tuple(n * _dim_factor(spec, d, mesh) for d, n in enumerate(aval.shape))
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def spec_axes_set(spec) -> set:
    return {n for e in spec.partitions for n in spec_names(e)}


def unmentioned(spec, mesh, manual_axes) -> tuple:
    """The manual axes of size > 1 that ``spec`` does not split over: a value with this
    spec is replicated over them."""
    named = spec_axes_set(spec)
    return tuple(n for n in manual_order(mesh, manual_axes)
                 if n not in named and mesh.shape[n] > 1)


# -- one device: nested named vmaps ----------------------------------------------------------

def _split_blocks(x, spec, mesh, manual):
    """``x`` reshaped so its leading axes are the mesh axes ``spec`` names, in mesh order,
    followed by the block's axes."""
    shape = get_aval(x).shape
    new_shape, mesh_axes, block_axes = [], {}, []
    for d, size in enumerate(shape):
        names = spec_names(spec.partitions[d]) if d < len(spec.partitions) else ()
        for n in names:
            mesh_axes[n] = len(new_shape)
            new_shape.append(mesh.shape[n])
        block_axes.append(len(new_shape))
        new_shape.append(size // math.prod(mesh.shape[n] for n in names))
    if not mesh_axes:
        return x
    x = lax_shape.reshape(x, tuple(new_shape))
    perm = tuple([mesh_axes[n] for n in manual if n in mesh_axes] + block_axes)
    if perm != tuple(range(len(perm))):
        x = lax_shape.transpose(x, perm)
    return x


def _join_blocks(x, spec, mesh, manual):
    """The inverse of ``_split_blocks``: leading mesh axes (in mesh order) merged into the
    block dimensions ``spec`` assigns them to."""
    lead = [n for n in manual if n in spec_axes_set(spec)]
    if not lead:
        return x
    shape = get_aval(x).shape
    block_shape = shape[len(lead):]
    perm, out_shape = [], []
    for d, size in enumerate(block_shape):
        names = spec_names(spec.partitions[d]) if d < len(spec.partitions) else ()
        perm.extend(lead.index(n) for n in names)
        perm.append(len(lead) + d)
        out_shape.append(size * math.prod(mesh.shape[n] for n in names))
    if tuple(perm) != tuple(range(len(perm))):
        x = lax_shape.transpose(x, tuple(perm))
    return lax_shape.reshape(x, tuple(out_shape))


def emulate(body, mesh, manual, in_specs, out_specs, args):
    """``body`` (per-device, flat) computed over the whole mesh on one device: one named
    vmap per manual axis (outermost first, in mesh order). Returns ``(outputs, varying)``:
    ``varying[i]`` lists the manual axes along which output ``i`` differs although its spec
    does not split over them (such an output takes the first instance's value)."""
    blocks = [_split_blocks(to_operand(x), s, mesh, manual)
              for x, s in zip(args, in_specs, strict=True)]
    in_names = [spec_axes_set(s) for s in in_specs]
    out_names = [spec_axes_set(s) for s in out_specs]
    varying = [[] for _ in out_specs]

    def level(k, xs):
        if k == len(manual):
            return list(body(*xs))
        name = manual[k]
        size = mesh.shape[name]
        dims = [0 if name in names else not_mapped for names in in_names]
        vals, out_dims = batch_flat(lambda *ys: level(k + 1, ys), list(xs), dims, name, size)
        outs = []
        for i, (v, d) in enumerate(zip(vals, out_dims, strict=True)):
            if name in out_names[i]:
                outs.append(bdim_at_front(v, d, size))
            elif d is not_mapped:
                outs.append(v)
            else:
                # jax_remove_size_one_mesh_axis_from_type: a size-1 axis is in no type
                if size != 1 or not config.jax_remove_size_one_mesh_axis_from_type:
                    varying[i].append(name)
                outs.append(slicing.index_in_dim(v, 0, d, keepdims=False))
        return outs

    outs = level(0, blocks)
    outs = [_join_blocks(o, s, mesh, manual) for o, s in zip(outs, out_specs, strict=True)]
    return outs, varying


def varying_outputs(jaxpr: ClosedJaxpr, mesh, manual_axes, in_specs, out_specs):
    """Which manual axes each output of the body varies along without its spec saying so
    (see ``emulate``), found by tracing the emulation abstractly."""
    manual = manual_order(mesh, manual_axes)
    box = []

    def fun(*xs):
        outs, varying = emulate(run_closed(jaxpr), mesh, manual, in_specs, out_specs, xs)
        box.append(varying)
        return outs

    in_avals = [global_aval(a, s, mesh) for a, s in zip(jaxpr.in_avals, in_specs, strict=True)]
    trace_to_jaxpr(fun, in_avals)
    return box[0]


def run_closed(closed: ClosedJaxpr):
    return lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs)


# -- the primitive -------------------------------------------------------------------------

def _abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, newly_manual_axes, check_vma):
    return [global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs, strict=True)]


def is_multi_device(mesh) -> bool:
    return isinstance(mesh, Mesh) and mesh.size > 1


def _impl(*args, jaxpr, mesh, in_specs, out_specs, newly_manual_axes, check_vma):
    """On one device (the eager interpreter runs a map over several devices as one SPMD
    program: ``eval.set_own_mesh_finder``)."""
    manual = manual_order(mesh, newly_manual_axes)
    return emulate(run_closed(jaxpr), mesh, manual, in_specs, out_specs, args)[0]


def _lower(ctx, *operands, jaxpr, mesh, in_specs, out_specs, newly_manual_axes, check_vma):
    module = ctx.module
    if module.partition_mesh is None or math.prod(mesh.shape[a] for a in newly_manual_axes) == 1:
        # One device, or manual axes of size 1 (JAX inlines those bodies too: XLA's
        # partitioner has no one-partition form of the manual computation).
        return _lower_on_one_device(ctx, operands, jaxpr, mesh, newly_manual_axes, in_specs,
                                    out_specs)
    _check_module_mesh(module.partition_mesh, mesh)
    return _lower_manual(ctx, operands, jaxpr, mesh, newly_manual_axes, in_specs, out_specs)


def _check_module_mesh(module_mesh, mesh) -> None:
    same = (module_mesh.axis_names == mesh.axis_names and
            tuple(module_mesh.shape.values()) == tuple(mesh.shape.values()))
    if same and isinstance(mesh, Mesh):
        same = [d.id for d in module_mesh.devices.flat] == [d.id for d in mesh.devices.flat]
    if not same:
        raise NotImplementedError(f"a shard_map over {mesh} inside a program partitioned over "
                                  f"{module_mesh}: use one mesh for the whole program")


def _lower_on_one_device(ctx, operands, jaxpr, mesh, manual_axes, in_specs, out_specs):
    """The emulation, traced and emitted inline."""
    manual = manual_order(mesh, manual_axes)
    closed = trace_to_jaxpr(
        lambda *xs: emulate(run_closed(jaxpr), mesh, manual, in_specs, out_specs, xs)[0],
        list(ctx.avals_in))
    consts = [ctx.builder.constant(np.asarray(c)) for c in closed.consts]
    return lower_jaxpr_body(ctx.builder, closed.jaxpr, consts, list(operands))


def _sharding_list(specs, avals, mesh, manual_axes) -> str:
    """``#sdy.sharding_per_value`` of values split as ``specs``; with some mesh axes left
    automatic, every dimension stays open for the partitioner."""
    partial = set(mesh.axis_names) != set(manual_axes)
    items = []
    for spec, aval in zip(specs, avals, strict=True):
        axes = [list(spec_names(spec.partitions[d])) if d < len(spec.partitions) else []
                for d in range(aval.ndim)]
        items.append(tensor_sharding(axes, range(aval.ndim) if partial else ()))
    return f"#sdy.sharding_per_value<[{', '.join(items)}]>"


def _lower_manual(ctx, operands, jaxpr, mesh, manual_axes, in_specs, out_specs):
    b = ctx.builder
    manual = manual_order(mesh, manual_axes)
    if jaxpr.consts:
        raise ValueError("the shard_map primitive expects a jaxpr whose consts are arguments")
    module = ctx.module
    outer_manual = module.manual_axes
    module.manual_axes = outer_manual | frozenset(manual)
    try:
        region = b.region([aval_type(a) for a in jaxpr.in_avals],
                          lambda fb, args: lower_jaxpr_body(fb, jaxpr.jaxpr, [], args),
                          terminator="sdy.return")
    finally:
        module.manual_axes = outer_manual
    attrs = {"in_shardings": _sharding_list(in_specs, ctx.avals_in, mesh, manual_axes),
             "manual_axes": manual_axes_attribute(manual),
             "out_shardings": _sharding_list(out_specs, ctx.avals_out, mesh, manual_axes)}
    return b.op("sdy.manual_computation", list(operands),
                [aval_type(a) for a in ctx.avals_out], attrs, regions=[region])


# -- rules ----------------------------------------------------------------------------------

def _bind(operands, jaxpr, params, in_specs, out_specs):
    return shard_map_p.bind(*operands, jaxpr=jaxpr, mesh=params["mesh"],
                            in_specs=tuple(in_specs), out_specs=tuple(out_specs),
                            newly_manual_axes=params["newly_manual_axes"],
                            check_vma=params["check_vma"])


def _traced_in_body(params, fun, in_avals):
    """``trace_flat`` of a per-device function with the manual axes bound."""
    with axis_env.axes_bound(axis_sizes(params["mesh"], params["newly_manual_axes"])):
        return trace_flat(fun, in_avals)


def _jvp(primals, tangents, **params):
    jaxpr = params["jaxpr"]
    nonzero = tuple(type(t) is not Zero for t in tangents)

    def make():
        with axis_env.axes_bound(axis_sizes(params["mesh"], params["newly_manual_axes"])):
            body, consts, out_nz = jvp_jaxpr(jaxpr.jaxpr, nonzero,
                                             [False] * len(jaxpr.out_avals))
        return ClosedJaxpr(body, []), consts, tuple(out_nz)

    body, consts, out_nz = derived("shard_map_jvp", jaxpr, nonzero, make)
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    new_in = ((PartitionSpec(),) * len(consts) + tuple(in_specs)
              + tuple(s for s, nz in zip(in_specs, nonzero, strict=True) if nz))
    new_out = tuple(out_specs) + tuple(s for s, nz in zip(out_specs, out_nz, strict=True)
                                       if nz)
    outs = _bind([*consts, *primals, *[t for t in tangents if type(t) is not Zero]], body,
                 params, new_in, new_out)
    n = len(out_specs)
    tangent_iter = iter(outs[n:])
    return outs[:n], [next(tangent_iter) if nz else Zero(tangent_aval(get_aval(o)))
                      for o, nz in zip(outs[:n], out_nz, strict=True)]


def _transpose(cts, *operands, **params):
    jaxpr, mesh, manual_axes = params["jaxpr"], params["mesh"], params["newly_manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    undefined = tuple(is_undefined(o) for o in operands)
    ct_nonzero = tuple(type(c) is not Zero for c in cts)

    def make():
        known_avals = [a for a, u in zip(jaxpr.in_avals, undefined, strict=True) if not u]
        ct_avals = [a for a, nz in zip(jaxpr.out_avals, ct_nonzero, strict=True) if nz]
        n_known = len(known_avals)

        def transpose_fun(*args):
            known_iter, ct_iter = iter(args[:n_known]), iter(args[n_known:])
            linear = [UndefinedPrimal(a) if u else next(known_iter)
                      for a, u in zip(jaxpr.in_avals, undefined, strict=True)]
            cts_full = [_spread(next(ct_iter), s, mesh, manual_axes) if nz else Zero(a)
                        for a, s, nz in zip(jaxpr.out_avals, out_specs, ct_nonzero,
                                            strict=True)]
            results = backward_pass(jaxpr.jaxpr, jaxpr.consts, linear, cts_full)
            return [_gather_replicated(instantiate(r), s, mesh, manual_axes)
                    for r, s, u in zip(results, in_specs, undefined, strict=True) if u]

        closed, consts = _traced_in_body(params, transpose_fun, known_avals + ct_avals)
        return closed, consts

    closed, consts = derived("shard_map_transpose", jaxpr, (undefined, ct_nonzero), make)
    known = [o for o, u in zip(operands, undefined, strict=True) if not u]
    new_in = ((PartitionSpec(),) * len(consts)
              + tuple(s for s, u in zip(in_specs, undefined, strict=True) if not u)
              + tuple(s for s, nz in zip(out_specs, ct_nonzero, strict=True) if nz))
    new_out = tuple(s for s, u in zip(in_specs, undefined, strict=True) if u)
    outs = iter(_bind([*consts, *known, *[c for c in cts if type(c) is not Zero]], closed,
                      params, new_in, new_out))
    return [next(outs) if u else None for u in undefined]


def _spread(ct, spec, mesh, manual_axes):
    """A result replicated over some manual axes has its cotangent counted once per
    device there: each device's share is the cotangent over the axes' total size."""
    count = math.prod(mesh.shape[n] for n in unmentioned(spec, mesh, manual_axes))
    if count == 1 or not dtypes.is_inexact(get_aval(ct).dtype):
        return ct
    return div(ct, np.asarray(count, get_aval(ct).dtype))


def _gather_replicated(ct, spec, mesh, manual_axes):
    """An operand replicated over some manual axes collects its cotangent from every
    device along them."""
    axes = unmentioned(spec, mesh, manual_axes)
    if not axes or not is_differentiable(get_aval(ct)):
        return ct
    return parallel.psum_p.bind(ct, axes=axes)


def _batch(trace, vals, dims, **params):
    """A vmap of the map: the batch axis leads every batched operand and result and no
    mesh axis splits it."""
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    axis_name, size = trace.axis_name, trace.axis_size
    vals = [v if d is not_mapped else move_axis(v, d, 0) for v, d in zip(vals, dims,
                                                                         strict=True)]
    in_batched = tuple(d is not not_mapped for d in dims)

    def make():
        with axis_env.axes_bound(axis_sizes(mesh, params["newly_manual_axes"])):
            body, consts, out_batched = batch_jaxpr(jaxpr.jaxpr, in_batched, axis_name, size,
                                                    [False] * len(jaxpr.out_avals))
        return ClosedJaxpr(body, []), consts, tuple(out_batched)

    body, consts, out_batched = derived("shard_map_batch", jaxpr,
                                        (in_batched, axis_name, size), make)
    new_in = ((PartitionSpec(),) * len(consts)
              + tuple(_lead_unsplit(s) if b else s
                      for s, b in zip(params["in_specs"], in_batched, strict=True)))
    new_out = tuple(_lead_unsplit(s) if b else s
                    for s, b in zip(params["out_specs"], out_batched, strict=True))
    outs = _bind([*consts, *vals], body, params, new_in, new_out)
    return outs, [0 if b else not_mapped for b in out_batched]


def _lead_unsplit(spec: PartitionSpec) -> PartitionSpec:
    return PartitionSpec(None, *spec.partitions)


def _partial_eval_jaxpr(eqn, unknowns):
    """Split into a known map, which also returns the residuals, and an unknown map that
    reads them. Residuals are per-device values: each gets a leading axis of size one,
    split over every manual axis, so the global residual stacks the devices' blocks."""
    params = eqn.params
    jaxpr, mesh, manual_axes = params["jaxpr"], params["mesh"], params["newly_manual_axes"]
    unknowns = tuple(unknowns)
    stacked = PartitionSpec(manual_order(mesh, manual_axes) or None)

    def make():
        known, unknown, out_unknowns, n_res = partial_eval_jaxpr(jaxpr.jaxpr, unknowns)
        n_known_out = len(known.outvars) - n_res

        def known_fun(*xs):
            outs = eval_jaxpr(known, [], *xs)
            return list(outs[:n_known_out]) + [lax_shape.expand_dims(r, (0,))
                                               for r in outs[n_known_out:]]

        def unknown_fun(*xs):
            residuals = [lax_shape.squeeze(r, (0,)) for r in xs[:n_res]]
            return eval_jaxpr(unknown, [], *residuals, *xs[n_res:])

        known_in = [a for a, u in zip(jaxpr.in_avals, unknowns, strict=True) if not u]
        res_avals = [ShapedArray((1, *a.shape), a.dtype, a.weak_type)
                     for a in known.out_avals[n_known_out:]]
        unknown_in = [a for a, u in zip(jaxpr.in_avals, unknowns, strict=True) if u]
        known_closed, known_consts = _traced_in_body(params, known_fun, known_in)
        unknown_closed, unknown_consts = _traced_in_body(params, unknown_fun,
                                                         res_avals + unknown_in)
        return (known_closed, known_consts, unknown_closed, unknown_consts,
                tuple(out_unknowns), n_res)

    (known, known_consts, unknown, unknown_consts, out_unknowns,
     n_res) = derived("shard_map_partial_eval", jaxpr, unknowns, make)
    if known_consts or unknown_consts:
        # consts would need variables of their own in the enclosing jaxpr
        raise NotImplementedError("partial evaluation of a shard_map whose split body "
                                  "captures constants")
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    out_known_specs = [s for s, u in zip(out_specs, out_unknowns, strict=True) if not u]
    n_known_out = len(out_known_specs)
    residual_avals = [global_aval(a, stacked, mesh)
                      for a in known.out_avals[n_known_out:]]
    residuals = [Var(a) for a in residual_avals]
    known_params = dict(params, jaxpr=known,
                        in_specs=tuple(s for s, u in zip(in_specs, unknowns, strict=True)
                                       if not u),
                        out_specs=tuple(out_known_specs) + (stacked,) * n_res)
    unknown_params = dict(params, jaxpr=unknown,
                          in_specs=(stacked,) * n_res + tuple(
                              s for s, u in zip(in_specs, unknowns, strict=True) if u),
                          out_specs=tuple(s for s, u in zip(out_specs, out_unknowns,
                                                            strict=True) if u))
    known_eqn = JaxprEqn(shard_map_p,
                         [a for a, u in zip(eqn.invars, unknowns, strict=True) if not u],
                         [v for v, u in zip(eqn.outvars, out_unknowns, strict=True)
                          if not u] + residuals, known_params, source_info=eqn.source_info)
    unknown_eqn = JaxprEqn(shard_map_p,
                           residuals + [a for a, u in zip(eqn.invars, unknowns, strict=True)
                                        if u],
                           [v for v, u in zip(eqn.outvars, out_unknowns, strict=True) if u],
                           unknown_params, source_info=eqn.source_info)
    return known_eqn, unknown_eqn, out_unknowns, residuals


shard_map_p = HigherOrderPrimitive(
    "shard_map",
    abstract_eval=_abstract_eval,
    impl=_impl,
    lower=_lower,
    jvp=_jvp,
    transpose=_transpose,
    batch=NeedsTrace(lambda *args, **params: _batch(*args, **params)),
    multiple_results=True,
    partial_eval=FROM_JAXPR_RULE, partial_eval_jaxpr=_partial_eval_jaxpr)
axis_env.body_axis_sizes[shard_map_p] = lambda params: axis_sizes(params["mesh"],
                                                                   params["newly_manual_axes"])
