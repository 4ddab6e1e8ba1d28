"""Jaxprs derived from a body jaxpr by a transformation: its jvp, its batched form, its
transpose. Each is traced by evaluating the body under the transformation inside a staging
trace; the consts that tracing captures become leading inputs."""

from __future__ import annotations

from xjax._src.core.ad_util import Zero, get_aval, is_differentiable, is_undefined, tangent_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import Jaxpr, eval_jaxpr
from xjax._src.higher_order.common import trace_flat
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.batch_rules import bdim_at_front, move_axis, not_mapped
from xjax._src.interpreters.batching import batch_flat
from xjax._src.interpreters.jvp import jvp_flat


def run_jaxpr(jaxpr: Jaxpr):
    """``jaxpr`` (consts as leading inputs, none closed over) as a flat function."""
    return lambda *args: eval_jaxpr(jaxpr, [], *args)


def batched_aval(aval, batched: bool, size: int, axis: int = 0):
    if not batched:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


# -- jvp -------------------------------------------------------------------------------------

def jvp_jaxpr(jaxpr: Jaxpr, nonzero, instantiate_out):
    """The jvp of ``jaxpr`` (no constvars): inputs ``(consts..., primals..., tangents of the
    nonzero inputs...)``, outputs ``(primals..., nonzero tangents...)``.

    ``instantiate_out[i]`` forces output i's tangent to be present (zeros if symbolically
    zero), except for outputs without tangents (integers). Returns ``(jaxpr, consts,
    out_nonzero)``.
    """
    in_avals = jaxpr.in_avals
    n = len(in_avals)
    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzero, strict=True) if nz]
    box = []

    def fun(*args):
        tangent_iter = iter(args[n:])
        tangents = [next(tangent_iter) if nz else Zero(tangent_aval(a))
                    for a, nz in zip(in_avals, nonzero, strict=True)]
        outs, out_tangents = jvp_flat(run_jaxpr(jaxpr), list(args[:n]), tangents)
        out_nz = [is_differentiable(get_aval(o)) and (type(t) is not Zero or force)
                  for o, t, force in zip(outs, out_tangents, instantiate_out, strict=True)]
        box.append(out_nz)
        return list(outs) + [instantiate(t) for t, nz in zip(out_tangents, out_nz, strict=True)
                             if nz]

    closed, consts = trace_flat(fun, list(in_avals) + tangent_avals)
    return closed.jaxpr, consts, box[0]


def jvp_fixed_point(jaxpr: Jaxpr, nonzero, carry_in, carry_out, extra_force=None):
    """The jvp of a loop body whose inputs at positions ``carry_in`` feed its outputs at
    ``carry_out``: carried tangents are nonzero wherever any iteration makes them so.
    Returns ``(jaxpr, consts, in_nonzero, out_nonzero)``."""
    nonzero = list(nonzero)
    while True:
        force = [False] * len(jaxpr.outvars)
        for i, o in zip(carry_in, carry_out, strict=True):
            force[o] = nonzero[i]
        if extra_force is not None:
            force = [f or e for f, e in zip(force, extra_force, strict=True)]
        body, consts, out_nz = jvp_jaxpr(jaxpr, nonzero, force)
        grown = False
        for i, o in zip(carry_in, carry_out, strict=True):
            if out_nz[o] and not nonzero[i]:
                nonzero[i] = True
                grown = True
        if not grown:
            return body, consts, nonzero, out_nz


# -- batching --------------------------------------------------------------------------------

def batch_jaxpr(jaxpr: Jaxpr, in_batched, axis_name, size, force_out, in_axes=None):
    """``jaxpr`` batched over a leading axis of the inputs marked in ``in_batched`` (or at
    ``in_axes``). Outputs come batched at axis 0, or unbatched; ``force_out[i]`` forces
    output i to be batched. Returns ``(jaxpr, consts, out_batched)``; consts lead the
    inputs."""
    axes = in_axes if in_axes is not None else [0 if b else not_mapped for b in in_batched]
    in_avals = [a if ax is not_mapped else batched_aval(a, True, size, ax)
                for a, ax in zip(jaxpr.in_avals, axes, strict=True)]
    box = []

    def fun(*args):
        outs, dims = batch_flat(run_jaxpr(jaxpr), list(args), list(axes), axis_name, size)
        results, batched = [], []
        for o, d, force in zip(outs, dims, force_out, strict=True):
            if force or d is not not_mapped:
                results.append(bdim_at_front(o, d, size))
                batched.append(True)
            else:
                results.append(o)
                batched.append(False)
        box.append(batched)
        return results

    closed, consts = trace_flat(fun, in_avals)
    return closed.jaxpr, consts, box[0]


def batch_fixed_point(jaxpr: Jaxpr, in_batched, carry_in, carry_out, axis_name, size,
                      in_axes_of=None, extra_force=None):
    """Batch a loop body: a carry is batched if its initial value is or if any iteration
    makes it so. ``in_axes_of(in_batched)`` gives the input axes (default: 0 or unmapped).
    Returns ``(jaxpr, consts, in_batched, out_batched)``."""
    in_batched = list(in_batched)
    while True:
        force = [False] * len(jaxpr.outvars)
        for i, o in zip(carry_in, carry_out, strict=True):
            force[o] = in_batched[i]
        if extra_force is not None:
            force = [f or e for f, e in zip(force, extra_force, strict=True)]
        axes = in_axes_of(in_batched) if in_axes_of is not None else None
        body, consts, out_b = batch_jaxpr(jaxpr, in_batched, axis_name, size, force, axes)
        grown = False
        for i, o in zip(carry_in, carry_out, strict=True):
            if out_b[o] and not in_batched[i]:
                in_batched[i] = True
                grown = True
        if not grown:
            return body, consts, in_batched, out_b


def move_to_front(vals, dims):
    """Batched values with their batch axis first; (values, batched mask)."""
    return ([v if d is not_mapped else move_axis(v, d, 0) for v, d in zip(vals, dims,
                                                                         strict=True)],
            [d is not not_mapped for d in dims])


# -- transpose -------------------------------------------------------------------------------

def undefined_mask(operands):
    return tuple(is_undefined(o) for o in operands)


def nonzero_mask(cts):
    return tuple(type(c) is not Zero for c in cts)
