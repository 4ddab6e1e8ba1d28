"""``custom_vmap`` and ``sequential_vmap``: functions with a user-defined vmap rule.

Outside any transformation a ``custom_vmap`` function simply runs. Under one it binds
``custom_vmap_call``, a primitive holding the function's jaxpr (its consts as leading operands)
and the user's rule, wrapped to work on flat lists:

- evaluated, staged (``jit``, ``make_jaxpr``) or lowered, it is the function's jaxpr;
- under ``vmap`` its batching rule calls ``rule(axis_size, in_batched, *args)`` with the
  batched arguments' batch axes moved first; outputs the rule marks batched have their batch
  axis first. Under nested vmaps the rule runs under the outer ones like any other code;
- under ``jvp`` it becomes a ``custom_vmap_call`` of the function's jvp, whose rule is the jvp
  of the user's rule (so ``vmap(jvp(f))`` and ``jvp(vmap(f))`` both use the rule). Arguments
  whose primal is batched but whose tangent is not (or the reverse) are broadcast first, so
  the rule always sees a primal and its tangent batched alike;
- reverse mode (``grad``, ``vjp``, ``linearize``) is not supported, as in JAX: it raises JAX's
  ``ValueError`` ("Linearization failed to produce known values for all output primals...").
  Wrap the function in ``custom_vjp`` to give it a reverse-mode rule.
"""

from __future__ import annotations

import functools

from xjax._src.core.ad_util import Zero, get_aval
from xjax._src.core.jaxpr import eval_jaxpr
from xjax._src.core.primitive import NONLINEAR
from xjax._src.higher_order.primitive import HigherOrderPrimitive
from xjax._src.core.pytree import tree_flatten, tree_map, tree_unflatten
from xjax._src.higher_order.jit_call import _trace_flat
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.transformations.lax_map import map as lax_map
from xjax._src.interpreters.jvp import jvp_flat
from xjax._src.lax.ad_rules import instantiate
from xjax._src.transformations.grad import jvp
from xjax._src.transformations.custom_derivatives import _at_top_level, _resolve_args

__all__ = ["custom_vmap", "sequential_vmap"]

_LINEARIZE_ERROR = (
    "Linearization failed to produce known values for all output primals. This is typically "
    "caused by attempting to differentiate a function uses an operation that does not "
    "support reverse-mode autodiff. (custom_vmap functions support forward mode only; wrap "
    "them in jax.custom_vjp for reverse mode.)")


def _rule_name(rule) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


def _check_rule_trees(rule, original_out_tree, out_tree, out_batched_tree):
    if out_tree != out_batched_tree:
        raise ValueError(
            "structure of output value and output batching specification returned by custom "
            f"vmap rule ({_rule_name(rule)}) do not match.\nOutput values: {out_tree}\n"
            f"Batching spec: {out_batched_tree}")
    if out_tree != original_out_tree:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({_rule_name(rule)}) does not "
            f"match that of original custom-vmapped function.\nOriginal output: "
            f"{original_out_tree}\nRule output: {out_tree}")


class _FlatRule:
    """The user's rule on flat lists: ``(axis_size, flat_in_batched, flat_args) ->
    (flat_outs, flat_out_batched)``. It prints as the user's rule."""

    def __init__(self, rule, in_tree, out_tree):
        self.rule = rule
        self.in_tree = in_tree
        self.out_tree = out_tree

    def __call__(self, axis_size, in_batched, args):
        tree_args = tree_unflatten(self.in_tree, list(args))
        tree_batched = tree_unflatten(self.in_tree, list(in_batched))
        out, out_batched = self.rule(axis_size, list(tree_batched), *tree_args)
        flat_out, tree1 = tree_flatten(out)
        flat_batched, tree2 = tree_flatten(out_batched)
        _check_rule_trees(self.rule, self.out_tree, tree1, tree2)
        return [to_operand(o) for o in flat_out], [bool(b) for b in flat_batched]

    def __repr__(self):
        return repr(self.rule)


class _JvpRule:
    """The rule of a ``custom_vmap_call`` of a jvp: the jvp of the inner flat rule."""

    def __init__(self, rule, n_primals):
        self.rule = rule
        self.n = n_primals

    def __call__(self, axis_size, in_batched, args):
        n = self.n
        ps, ts = list(args[:n]), list(args[n:])
        pb, tb = in_batched[:n], in_batched[n:]
        both = [p or t for p, t in zip(pb, tb, strict=True)]
        # broadcast so that each primal and its tangent are batched alike
        ps = [bdim_at_front(x, None, axis_size) if b and not p else x
              for x, p, b in zip(ps, pb, both, strict=True)]
        ts = [bdim_at_front(x, None, axis_size) if b and not t else x
              for x, t, b in zip(ts, tb, both, strict=True)]
        box = []

        def primal(*xs):
            outs, out_batched = self.rule(axis_size, both, xs)
            box.append(out_batched)
            return outs

        outs, out_ts = jvp(primal, tuple(ps), tuple(ts))
        return list(outs) + list(out_ts), box[0] + box[0]

    def __repr__(self):
        return f"jvp({self.rule!r})"


# -- the primitive --

def _custom_vmap_abstract_eval(*avals, call, rule, in_tree, out_tree, num_consts):
    return call.out_avals


def _custom_vmap_impl(*values, call, rule, in_tree, out_tree, num_consts):
    return eval_jaxpr(call.jaxpr, [], *values)


def _custom_vmap_lower(ctx, *operands, call, rule, in_tree, out_tree, num_consts):
    return lower_jaxpr_body(ctx.builder, call.jaxpr, [], list(operands))


def _custom_vmap_batch(trace, vals, dims, *, call, rule, in_tree, out_tree, num_consts):
    if all(d is not_mapped for d in dims):
        outs = custom_vmap_call_p.bind(*vals, call=call, rule=rule, in_tree=in_tree,
                                       out_tree=out_tree, num_consts=num_consts)
        return outs, [not_mapped] * len(outs)
    if any(d is not not_mapped for d in dims[:num_consts]):
        raise NotImplementedError(
            "a custom_vmap function closes over a value that vmap batches; its rule cannot "
            "see that batch axis. Pass the value to the function as an argument instead.")
    size = trace.axis_size
    args = [v if d is not_mapped else bdim_at_front(v, d, size)
            for v, d in zip(vals[num_consts:], dims[num_consts:], strict=True)]
    in_batched = [d is not not_mapped for d in dims[num_consts:]]
    outs, out_batched = rule(size, in_batched, args)
    if len(outs) != len(call.out_avals):
        raise ValueError(f"custom vmap rule ({_rule_name(rule)}) returned {len(outs)} outputs "
                         f"for a function with {len(call.out_avals)}")
    for o, b, aval in zip(outs, out_batched, call.out_avals, strict=True):
        shape = get_aval(o).shape
        expected = (size, *aval.shape) if b else aval.shape
        if tuple(shape) != tuple(expected):
            kind = "batched" if b else "unbatched"
            raise ValueError(f"custom vmap rule ({_rule_name(rule)}) returned a {kind} output "
                             f"of shape {tuple(shape)}; expected {expected} (the function's "
                             f"output has shape {aval.shape}, axis size {size})")
    return outs, [0 if b else not_mapped for b in out_batched]


def _custom_vmap_jvp(primals, tangents, *, call, rule, in_tree, out_tree, num_consts):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise NotImplementedError(
            "differentiating a custom_vmap function with respect to a value it closes over is "
            "not supported; pass the value as an argument instead.")
    consts, ps = list(primals[:num_consts]), list(primals[num_consts:])
    ts = [instantiate(t) for t in tangents[num_consts:]]
    n = len(ps)

    def jvp_fun(*xs):
        cs, p, t = xs[:num_consts], xs[num_consts:num_consts + n], xs[num_consts + n:]
        outs, out_ts = jvp_flat(lambda *ys: eval_jaxpr(call.jaxpr, [], *cs, *ys), p, t)
        return list(outs) + [instantiate(o) for o in out_ts]

    closed, extra = _trace_flat(jvp_fun, [get_aval(x) for x in consts + ps + ts],
                                "custom_vmap_jvp")
    outs = custom_vmap_call_p.bind(
        *extra, *consts, *ps, *ts, call=closed, rule=_JvpRule(rule, n),
        in_tree=_pair_tree(in_tree), out_tree=_pair_tree(out_tree),
        num_consts=len(extra) + num_consts)
    half = len(outs) // 2
    return outs[:half], outs[half:]


def _pair_tree(tree):
    """The treedef of ``(x, x)`` for ``x`` of structure ``tree`` (primals and tangents)."""
    x = tree_unflatten(tree, [0] * tree.num_leaves)
    return tree_flatten((x, x))[1]




def _partial_eval(trace, args, params):
    raise ValueError(_LINEARIZE_ERROR)


def _partial_eval_jaxpr(eqn, unknowns):
    raise ValueError(_LINEARIZE_ERROR)


custom_vmap_call_p = HigherOrderPrimitive(
    "custom_vmap_call", abstract_eval=_custom_vmap_abstract_eval, impl=_custom_vmap_impl,
    lower=_custom_vmap_lower, jvp=_custom_vmap_jvp, transpose=NONLINEAR,
    batch=NeedsTrace(_custom_vmap_batch), multiple_results=True,
    hidden_params=(("num_consts", ...),),
    partial_eval=_partial_eval, partial_eval_jaxpr=_partial_eval_jaxpr)


# -- the public API --

class custom_vmap:
    """Customize how a function is batched by ``vmap``.

    The function behaves as itself everywhere except under ``vmap``, where the rule set with
    :meth:`def_vmap` computes the batched result. ``jvp`` of the function (and ``vmap`` of
    that) differentiates the function and the rule; reverse mode is not supported (combine
    with ``custom_vjp``, outside, for that), as in JAX.

    Parameters
    ----------
    fun : callable
        The function; its arguments are pytrees of arrays.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> @xjax.custom_batching.custom_vmap
    ... def f(x, y):
    ...     return x + y
    >>> @f.def_vmap
    ... def f_vmap_rule(axis_size, in_batched, xs, ys):
    ...     return xs * ys, True
    >>> xjax.vmap(f)(jnp.arange(3), jnp.arange(1, 4))
    Array([0, 2, 6], dtype=int32)
    """

    def __init__(self, fun):
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.vmap_rule = None

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def def_vmap(self, vmap_rule):
        """Set the rule ``vmap_rule(axis_size, in_batched, *args) -> (out, out_batched)``.

        ``in_batched`` has the structure of the arguments (a list, one entry per positional
        argument) with a bool per array: whether it is batched, its batch axis first and of
        length ``axis_size``. ``out_batched`` has the output's structure, with a bool per
        array. Returns ``vmap_rule`` unchanged.
        """
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", repr(self.fun))
        try:
            args = _resolve_args(self.fun, args, kwargs)
        except TypeError as e:
            raise TypeError(
                "The input arguments to the custom_vmap-decorated function "
                f"{name} could not be resolved to positional-only arguments. Binding failed "
                f"with the error:\n{e}") from e
        if not self.vmap_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        if _at_top_level():
            return self.fun(*args)
        flat_args, in_tree = tree_flatten(tuple(args))
        flat_args = [to_operand(a) for a in flat_args]
        box = {}

        def flat_fun(*xs):
            out = self.fun(*tree_unflatten(in_tree, xs))
            flat_out, box["out_tree"] = tree_flatten(out)
            return [to_operand(o) for o in flat_out]

        call, consts = _trace_flat(flat_fun, [get_aval(a) for a in flat_args], name)
        out_tree = box["out_tree"]
        outs = custom_vmap_call_p.bind(
            *consts, *flat_args, call=call, rule=_FlatRule(self.vmap_rule, in_tree, out_tree),
            in_tree=in_tree, out_tree=out_tree, num_consts=len(consts))
        return tree_unflatten(out_tree, outs)


def _tree_split(mask, tree):
    lhs = tree_map(lambda m, x: x if m else None, mask, tree)
    rhs = tree_map(lambda m, x: None if m else x, mask, tree)
    return lhs, rhs


def _tree_merge(mask, lhs, rhs):
    return tree_map(lambda m, x, y: x if m else y, mask, lhs, rhs, is_leaf=lambda x: x is None)


def sequential_vmap(f):
    """A ``custom_vmap`` whose vmap rule is a loop (``lax.map``) over the batch.

    Useful for functions with no batched form (a host callback, a foreign call): each
    example is computed by one call of ``f``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> @xjax.custom_batching.sequential_vmap
    ... def f(x):
    ...     return x + 1
    >>> xjax.vmap(f)(jnp.arange(3))
    Array([1, 2, 3], dtype=int32)
    """

    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        mapped_args, bcast_args = _tree_split(in_batched, list(args))

        def to_map(mapped):
            return f.fun(*_tree_merge(in_batched, mapped, bcast_args))

        out = lax_map(to_map, mapped_args)
        return out, tree_map(lambda _: True, out)

    return f
