"""``lax.scan``: the ``scan`` primitive, a body jaxpr over (consts, carry, one slice of each
xs) giving (new carry, one slice of each ys). It lowers to a ``stablehlo.while`` over an
int32 counter that reads xs with ``dynamic_slice`` and writes ys with
``dynamic_update_slice``; its derivative rules (jvp, partial evaluation, transpose) are in
``scan_ad.py``."""

from __future__ import annotations

import numpy as np

from xjax.core import errors
from xjax.core.ad_util import get_aval
from xjax.core.avals import ShapedArray
from xjax.core.config import config
from xjax.core.jaxpr import Jaxpr, Var, eval_jaxpr
from xjax.core.primitive import Primitive
from xjax.core.pytree import tree_flatten, tree_map, tree_structure, tree_unflatten
from xjax.control_flow import scan_ad
from xjax.control_flow import ref_threading
from xjax.control_flow.common import (ShortAval, check_carry_type, closed, derived,
                                      promote_weak_carries, split_list, trace_function,
                                      typematch)
from xjax.control_flow.rules_common import as_numpy, batch_fixed_point
from xjax.lax.batch_rules import NeedsTrace, bdim_at_front, move_axis, not_mapped
from xjax.lax.rules import to_operand
from xjax.lowering import effects
from xjax.lowering.lower_jaxpr import lower_jaxpr_body
from xjax.lowering.stablehlo import aval_type, i64_array, tensor_type


def stacked_aval(aval, length):
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


# -- the primitive ---------------------------------------------------------------------------

def _scan_abstract_eval(*avals, reverse, length, jaxpr, num_consts, num_carry, unroll):
    consts, carry, xs = split_list(avals, [num_consts, num_carry])
    expected = jaxpr.in_avals
    got = consts + carry + [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    if len(expected) != len(got) or not all(typematch(a, b) for a, b in
                                            zip(expected, got, strict=True)):
        raise TypeError(f"scan body takes types {[a.str_short() for a in expected]}, got "
                        f"{[a.str_short() for a in got]}")
    if any(x.shape[:1] != (length,) for x in xs):
        raise TypeError(f"scan of length {length} got xs of types "
                        f"{[x.str_short() for x in xs]}")
    carry_out, ys = split_list(jaxpr.out_avals, [num_carry])[:2]
    if not all(typematch(a, b) for a, b in zip(carry, carry_out, strict=True)):
        raise TypeError(f"scan carry types {[a.str_short() for a in carry]} differ from the "
                        f"body's carry outputs {[a.str_short() for a in carry_out]}")
    return list(carry_out) + [stacked_aval(a, length) for a in ys]


def _scan_impl(*args, reverse, length, jaxpr, num_consts, num_carry, unroll):
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    n_ys = len(jaxpr.out_avals) - num_carry
    ys = [[None] * length for _ in range(n_ys)]
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = eval_jaxpr(jaxpr.jaxpr, [], *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for buffer, y in zip(ys, outs[num_carry:], strict=True):
            buffer[i] = as_numpy(y)
    y_avals = jaxpr.out_avals[num_carry:]
    stacked = [np.stack(b).astype(a.dtype, copy=False) if length else
               np.zeros((0, *a.shape), a.dtype) for b, a in zip(ys, y_avals, strict=True)]
    return [as_numpy(c) for c in carry] + stacked


def _scan_lower(ctx, *operands, reverse, length, jaxpr, num_consts, num_carry, unroll):
    """A while loop over (counter, consts, xs, carry, ys buffers), ``unroll`` body copies per
    iteration, the remaining steps after the loop."""
    b = ctx.builder
    consts, carry, xs = split_list(list(operands), [num_consts, num_carry])
    y_avals = jaxpr.out_avals[num_carry:]
    ys = []
    for aval in y_avals:
        zero = b.constant(np.zeros((), aval.dtype))
        ys.append(b.op1("stablehlo.broadcast_in_dim", [zero],
                        tensor_type((length, *aval.shape), aval.dtype),
                        {"broadcast_dimensions": i64_array([])}))
    counter = b.constant(np.zeros((), np.int32))
    step = _StepEmitter(jaxpr, length, reverse, num_consts, num_carry, len(xs))
    unroll = max(int(unroll), 1)
    n_blocks, remainder = divmod(length, unroll)
    state = [counter, *consts, *xs, *carry, *ys]
    if n_blocks == 1 and remainder == 0 or n_blocks == 0:
        n_straight = length
    else:
        n_straight = remainder
        state = _emit_loop(b, state, step, unroll, n_blocks * unroll,
                           effects.has_effects(jaxpr))
    for _ in range(n_straight):
        state = step(b, state)
    return state[1 + num_consts + len(xs):]  # the carry and the ys buffers


def _emit_loop(b, state, step, unroll, stop, with_effects=False):
    if with_effects:  # carry the side-effect token as the last loop value
        state = [*state, effects.current_token(b)]
    types = [b.types[v] for v in state]

    def cond_region(rb, args):
        limit = rb.constant(np.array(stop, np.int32))
        return [rb.op1("stablehlo.compare", [args[0], limit], "tensor<i1>",
                       {"comparison_direction": "#stablehlo<comparison_direction LT>",
                        "compare_type": "#stablehlo<comparison_type SIGNED>"})]

    def body_region(rb, args):
        values = list(args)
        if with_effects:
            effects.set_token(rb, values.pop())
        for _ in range(unroll):
            values = step(rb, values)
        return values + [effects.current_token(rb)] if with_effects else values

    outs = b.op("stablehlo.while", state, types,
                regions=[b.region(types, cond_region), b.region(types, body_region)])
    if with_effects:
        effects.set_token(b, outs[-1])
        outs = outs[:-1]
    return outs


class _StepEmitter:
    """Emits one scan step on the loop state (counter, consts, xs, carry, ys buffers)."""

    def __init__(self, jaxpr, length, reverse, num_consts, num_carry, num_xs):
        self.jaxpr = jaxpr
        self.length = length
        self.reverse = reverse
        self.sizes = [num_consts, num_xs, num_carry]

    def __call__(self, b, state):
        counter = state[0]
        consts, xs, carry, ys = split_list(state[1:], self.sizes)
        i32 = "tensor<i32>"
        index = counter
        if self.reverse:
            last = b.constant(np.array(self.length - 1, np.int32))
            index = b.op1("stablehlo.subtract", [last, counter], i32)
        zero = b.constant(np.zeros((), np.int32))
        x_slices = []
        for x, aval in zip(xs, self.jaxpr.in_avals[len(consts) + len(carry):], strict=True):
            starts = [index] + [zero] * len(aval.shape)
            piece = b.op1("stablehlo.dynamic_slice", [x, *starts],
                          tensor_type((1, *aval.shape), aval.dtype),
                          {"slice_sizes": i64_array([1, *aval.shape])})
            x_slices.append(b.op1("stablehlo.reshape", [piece], aval_type(aval)))
        outs = lower_jaxpr_body(b, self.jaxpr.jaxpr, [], consts + carry + x_slices)
        new_carry, new_ys = outs[:len(carry)], outs[len(carry):]
        updated = []
        for buffer, y, aval in zip(ys, new_ys, self.jaxpr.out_avals[len(carry):], strict=True):
            block = b.op1("stablehlo.reshape", [y], tensor_type((1, *aval.shape), aval.dtype))
            starts = [index] + [zero] * len(aval.shape)
            updated.append(b.op1("stablehlo.dynamic_update_slice", [buffer, block, *starts],
                                 b.types[buffer]))
        one = b.constant(np.ones((), np.int32))
        counter = b.op1("stablehlo.add", [counter, one], i32)
        return [counter, *consts, *xs, *new_carry, *updated]


def _scan_batch(trace, vals, dims, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
    size, axis_name = trace.axis_size, trace.axis_name
    nc, nk = num_consts, num_carry
    consts, init, xs = split_list(vals, [nc, nk])
    c_dims, k_dims, x_dims = split_list(dims, [nc, nk])
    consts = [c if d is not_mapped else move_axis(c, d, 0)
              for c, d in zip(consts, c_dims, strict=True)]
    init = [c if d is not_mapped else move_axis(c, d, 0)
            for c, d in zip(init, k_dims, strict=True)]
    xs = [x if d is not_mapped else move_axis(x, d, 1) for x, d in zip(xs, x_dims, strict=True)]
    in_batched = tuple(d is not not_mapped for d in dims)

    def make():
        body, body_consts, in_b, out_b = batch_fixed_point(
            jaxpr.jaxpr, in_batched, range(nc, nc + nk), range(nk), axis_name, size)
        from xjax.control_flow.common import closed
        return closed(body), body_consts, in_b[nc:nc + nk], out_b[nk:]

    body, body_consts, carry_b, ys_b = derived("scan_batch", jaxpr,
                                               (in_batched, axis_name, size), make)
    init = [bdim_at_front(c, d, size) if b and d is not_mapped else c
            for c, d, b in zip(init, k_dims, carry_b, strict=True)]
    outs = scan_p.bind(*body_consts, *consts, *init, *xs, reverse=reverse, length=length,
                       jaxpr=body, num_consts=len(body_consts) + nc, num_carry=nk,
                       unroll=unroll)
    out_dims = [0 if b else not_mapped for b in carry_b] + [1 if b else not_mapped
                                                            for b in ys_b]
    return outs, out_dims


scan_p = Primitive(
    "scan",
    abstract_eval=_scan_abstract_eval,
    impl=_scan_impl,
    lower=_scan_lower,
    jvp=scan_ad.scan_jvp,
    transpose=scan_ad.scan_transpose,
    batch=NeedsTrace(_scan_batch),
    multiple_results=True,
)
scan_ad.register(scan_p)


# -- the public function ---------------------------------------------------------------------

@ref_threading.threads_refs(ref_threading.scan)
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``, stacking the ``y``.

    Semantics::

        def scan(f, init, xs, length=None):
            if xs is None:
                xs = [None] * length
            carry = init
            ys = []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, np.stack(ys)

    Parameters
    ----------
    f : callable
        ``(carry, x) -> (carry, y)``; the carry keeps its structure, shapes and dtypes.
    init : pytree
        The initial carry.
    xs : pytree of arrays, optional
        Scanned along their leading axis (None: scan ``length`` steps over nothing).
    length : int, optional
        The number of steps (required when ``xs`` has no leaves).
    reverse : bool
        Scan from the end (``ys`` keep their positions).
    unroll : int or bool
        Body copies per compiled loop iteration (True: the whole loop).

    Returns
    -------
    (carry, ys)

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> carry, ys = lax.scan(lambda c, x: (c + x, c * 2), jnp.float32(0), jnp.arange(4.0))
    >>> carry, ys
    (Array(6., dtype=float32), Array([0., 0., 2., 6.], dtype=float32))
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be callable.")
    init_flat, init_tree = tree_flatten(init)
    xs_flat, xs_tree = tree_flatten(xs)
    init_flat = [to_operand(x) for x in init_flat]
    length = _infer_length(xs_flat, length)
    xs_flat = [to_operand(x) for x in xs_flat]
    if config.jax_disable_jit:
        return _scan_in_python(f, init_tree, init_flat, xs_tree, xs_flat, length, reverse)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype, get_aval(x).weak_type)
               for x in xs_flat]
    init_avals = [get_aval(x) for x in init_flat]
    traced, trees = _trace_body(f, init_tree, xs_tree, init_avals, x_avals)
    carry_tree, y_tree = trees
    n_carry = len(init_flat)
    if len(traced.out_avals[:carry_tree.num_leaves]) != n_carry or carry_tree != init_tree:
        check_carry_type("scan body", f, init_tree, init_avals, carry_tree,
                         traced.out_avals[:carry_tree.num_leaves])
    init_flat, changed = promote_weak_carries(init_flat, init_avals,
                                              traced.out_avals[:n_carry])
    if changed:
        init_avals = [get_aval(x) for x in init_flat]
        traced, (carry_tree, y_tree) = _trace_body(f, init_tree, xs_tree, init_avals, x_avals)
    check_carry_type("scan body", f, init_tree, init_avals, carry_tree,
                     traced.out_avals[:n_carry])
    unroll = _check_unroll(unroll, length)
    outs = _bind_scan(traced.jaxpr.jaxpr, list(traced.consts), init_flat, xs_flat,
                      reverse=bool(reverse), length=length, unroll=unroll)
    return (tree_unflatten(init_tree, outs[:n_carry]),
            tree_unflatten(y_tree, outs[n_carry:]))


def _bind_scan(body, consts, init, xs, **params):
    """Bind ``scan``, as JAX does: a carry the body returns unchanged becomes a const, and a
    ys output that is merely an xs slice is the xs operand itself."""
    nc, nk = len(consts), len(init)
    invars, outvars = body.invars, body.outvars
    moved = [outvars[k] is invars[nc + k] for k in range(nk)]
    xs_positions = {v: j for j, v in enumerate(invars[nc + nk:])}
    y_fwd = [xs_positions.get(v) if isinstance(v, Var) else None for v in outvars[nk:]]
    c_vars, k_vars, x_vars = split_list(invars, [nc, nk])
    new_invars = ([v for v, m in zip(k_vars, moved, strict=True) if m] + c_vars +
                  [v for v, m in zip(k_vars, moved, strict=True) if not m] + x_vars)
    new_outvars = ([v for v, m in zip(outvars[:nk], moved, strict=True) if not m] +
                   [v for v, f in zip(outvars[nk:], y_fwd, strict=True) if f is None])
    jaxpr = closed(Jaxpr([], new_invars, new_outvars, body.eqns, body.debug_info))
    new_consts = [x for x, m in zip(init, moved, strict=True) if m] + consts
    carry = [x for x, m in zip(init, moved, strict=True) if not m]
    outs = scan_p.bind(*new_consts, *carry, *xs, jaxpr=jaxpr, num_consts=len(new_consts),
                       num_carry=len(carry), **params)
    carry_out, ys = iter(outs[:len(carry)]), iter(outs[len(carry):])
    return ([x if m else next(carry_out) for x, m in zip(init, moved, strict=True)] +
            [next(ys) if f is None else xs[f] for f in y_fwd])


def _trace_body(f, init_tree, xs_tree, init_avals, x_avals):
    box = {}

    def pair_fun(carry, x):
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            shown = tree_map(lambda leaf: ShortAval(get_aval(to_operand(leaf))), out)
            raise TypeError(f"scan body output must be a pair, got {shown}.")
        box["trees"] = (tree_structure(out[0]), tree_structure(out[1]))
        return out[0], out[1]

    in_tree = tree_structure((tree_unflatten(init_tree, init_avals),
                              tree_unflatten(xs_tree, x_avals)))
    traced = trace_function(pair_fun, in_tree, init_avals + x_avals, "scan", threads_refs=True)
    return traced, box["trees"]


def _infer_length(xs_flat, length):
    try:
        lengths = [x.shape[0] for x in xs_flat]
    except AttributeError:
        missing = ", ".join(str(x) for x in xs_flat if not hasattr(x, "shape"))
        raise ValueError(f"scan got value with no leading axis to scan over: {missing}.") \
            from None
    if length is not None:
        try:
            length = int(length)
        except errors.ConcretizationTypeError:
            raise errors.ConcretizationTypeError(
                length, "The `length` argument to `scan` expects a concrete `int` value. For "
                "scan-like iteration with a dynamic length, use `while_loop` or "
                "`fori_loop`.") from None
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    unique = set(lengths)
    if len(unique) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in lengths)}.")
    if not unique:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def _check_unroll(unroll, length):
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    try:
        unroll = int(unroll)
    except (TypeError, errors.ConcretizationTypeError):
        raise errors.ConcretizationTypeError(
            unroll, "The `unroll` argument to `scan` expects a concrete `int` or `bool` "
            "value.") from None
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return unroll


def _scan_in_python(f, init_tree, init_flat, xs_tree, xs_flat, length, reverse):
    from xjax.lax.shape import concatenate, reshape
    from xjax.lax.slicing import index_in_dim
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry = tree_unflatten(init_tree, init_flat)
    ys = []
    order = reversed(range(length)) if reverse else range(length)
    for i in order:
        x = tree_unflatten(xs_tree, [index_in_dim(v, i, keepdims=False) for v in xs_flat])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()

    def stack(*leaves):
        leaves = [to_operand(v) for v in leaves]
        return concatenate([reshape(v, (1, *get_aval(v).shape)) for v in leaves], 0)

    return carry, tree_map(stack, *ys)


__all__ = ["scan", "scan_p"]
