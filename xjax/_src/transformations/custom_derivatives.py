"""``custom_jvp``, ``custom_vjp``, ``checkpoint`` (``remat``) and ``linear_transpose``.

Outside any transformation a custom-derivative function simply runs. Under a JVP trace
that differentiates it, its rule runs at once, the primal function untraced (as in JAX: with
concrete outer values the rule sees concrete primals). Under other transformations it binds
a primitive holding the function's jaxpr and the user's rule (higher_order/
custom_derivatives.py), so staging keeps the primal and differentiation uses the rule.
Transformations that would only pass the call on (a JVP trace that does not differentiate
it, a linearize trace to which its arguments are known) are skipped first.

Rules defined with ``symbolic_zeros=True`` see a :class:`SymbolicZero` for each tangent or
cotangent known to be zero, and a ``custom_vjp``'s forward rule sees its arguments as
:class:`CustomVJPPrimal` leaves; the primitives carry xjax's internal ``Zero``, converted
to and from these at the rules' boundary here.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from collections.abc import Sequence

from xjax._src.core import dtypes
from xjax._src.core.ad_util import UndefinedPrimal, Zero, get_aval
from xjax._src.core.jaxpr import eval_jaxpr
from xjax._src.core.pytree import (
    keystr,
    prefix_leaves,
    register_pytree_node,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
    treedef_children,
)
from xjax._src.core.trace import Tracer, current_trace, set_current_trace
from xjax._src.core.trace import ctx as trace_ctx  # noqa: F401  (re-exported publicly)
from xjax._src.higher_order.custom_derivatives import (
    apply_custom_jvp,
    apply_custom_vjp,
    checkpoint_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
)
from xjax._src.higher_order.jit_call import consts_as_args
from xjax._src.interpreters.eval import EvalTrace
from xjax._src.interpreters.jvp import JVPTrace, JVPTracer
from xjax._src.interpreters.partial_eval import (
    Offloadable,
    PartialStagingTrace,
    Recompute,
    Saveable,
    everything_saveable,
    nothing_saveable,
)
from xjax._src.interpreters.staging import trace_to_jaxpr
from xjax._src.interpreters.transpose import backward_pass
from xjax._src.lax.ad_rules import (
    add_tangents,
    instantiate,
    tangent_aval,
    zeros_like_aval,
)
from xjax._src.lax.checkpoint_name import name_p
from xjax._src.lax.convolution import conv_general_dilated_p
from xjax._src.lax.dot import dot_general_p
from xjax._src.lax.operands import to_operand
from xjax._src.transformations.jit import shaped_abstractify
from xjax._src.transformations.wrapping import wraps


def _at_top_level() -> bool:  # custom_vmap and export ask
    return type(current_trace()) is EvalTrace


def _owning_trace(flat_args):
    """The trace that handles a custom-derivative call on ``flat_args``, found as JAX finds
    it: traces that would only hand the call on to their parent are skipped, so that with
    concrete outer values the rules (and calls inside them) see concrete values."""
    trace = current_trace()
    while _passes_on(trace, flat_args):
        trace = trace.parent
    return trace


def _passes_on(trace, flat_args) -> bool:
    """A JVP trace none of whose tracers is among ``flat_args`` (every tangent is zero), or
    a linearize trace to which they are all known, hands the call to its parent."""
    if type(trace) is JVPTrace:
        return not any(type(a) is JVPTracer and a._trace is trace for a in flat_args)
    if type(trace) is PartialStagingTrace:
        return not any(trace.is_unknown(a) for a in flat_args)
    return False


def _apply_rule(trace, rule, flat_args):
    """``rule(primals, tangents) -> (outs, tangent_outs)`` applied for the JVP ``trace`` as
    it applies a primitive's jvp rule (the parent trace current), without a primitive: JAX
    never traces the primal function of a call it differentiates."""
    pairs = [trace.unpack(a) for a in flat_args]
    with set_current_trace(trace.parent):
        outs, tangent_outs = rule([p for p, _ in pairs], [t for _, t in pairs])
    return [trace.wrap(o, t) for o, t in zip(outs, tangent_outs, strict=True)]


def _resolve_args(fun, args, kwargs):
    """Keyword arguments become positional (custom rules see positional arguments)."""
    if not kwargs:
        return tuple(args)
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _split(args, nondiff_argnums):
    nondiff = [args[i] for i in nondiff_argnums]
    diff = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, diff


def _merge(nondiff_argnums, nondiff, diff):
    nondiff_iter, diff_iter = iter(nondiff), iter(diff)
    total = len(nondiff) + len(diff)
    return [next(nondiff_iter) if i in nondiff_argnums else next(diff_iter)
            for i in range(total)]


def _trace_primal(fun, nondiff_argnums, nondiff, flat_args, in_tree):
    box = {}

    def flat_fun(*xs):
        diff = tree_unflatten(in_tree, xs)
        out = fun(*_merge(nondiff_argnums, nondiff, list(diff)))
        flat_out, out_tree = tree_flatten(out)
        box["out_tree"] = out_tree
        return [to_operand(o) for o in flat_out]

    closed = trace_to_jaxpr(flat_fun, [get_aval(a) for a in flat_args])
    call_jaxpr, consts = consts_as_args(closed)
    return call_jaxpr, consts, box["out_tree"]


# -- symbolic zeros: what custom rules defined with ``symbolic_zeros=True`` see --

class SymbolicZero:
    """A zero tangent or cotangent, as the rules of a ``custom_jvp`` or ``custom_vjp``
    function defined with ``symbolic_zeros=True`` see it.

    It stands for an array of zeros of type ``aval`` without holding one. Attributes other
    than ``aval`` are read from ``aval`` (``shape``, ``dtype``, ``ndim``, ...). It is not an
    array: ``jax.numpy`` functions and arithmetic do not accept it. It is a pytree leaf.

    Parameters
    ----------
    aval : ShapedArray
        The type of the zero (a tangent type: ``float0`` for integer and boolean primals).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax.custom_derivatives import SymbolicZero
    >>> z = SymbolicZero.from_primal_value(jnp.ones((2, 3)))
    >>> z, z.shape, z.dtype
    (SymbolicZero, (2, 3), dtype('float32'))
    """

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self) -> str:
        return type(self).__name__

    def __getattr__(self, name):
        if name == "aval":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(value) -> SymbolicZero:
        """The symbolic zero tangent of ``value``."""
        return SymbolicZero(tangent_aval(get_aval(value)))


def zero_from_primal(val, symbolic_zeros=False):
    """Zero tangents for the primal pytree ``val``.

    Parameters
    ----------
    val : pytree
        Primal values (arrays or scalars).
    symbolic_zeros : bool
        True: a :class:`SymbolicZero` per leaf; False: arrays of zeros (``float0`` for
        integer and boolean leaves).

    Returns
    -------
    pytree
        ``val``'s structure with a zero tangent per leaf.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.custom_derivatives import zero_from_primal
    >>> zero_from_primal({"a": jnp.ones(2)})
    {'a': Array([0., 0.], dtype=float32)}
    >>> zero_from_primal((1.0,), symbolic_zeros=True)
    (SymbolicZero,)
    """
    def zero(x):
        aval = tangent_aval(get_aval(x))
        return SymbolicZero(aval) if symbolic_zeros else zeros_like_aval(aval)
    return tree_map(zero, val)


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """Primal to a ``custom_vjp``'s forward rule when ``symbolic_zeros`` is set"""

    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """Strip the perturbation information from a forward rule's arguments.

    With ``defvjp(..., symbolic_zeros=True)`` the forward rule receives each leaf of its
    differentiable arguments as a :class:`CustomVJPPrimal`; this gives the tree of their
    ``value`` s.

    Parameters
    ----------
    tree : pytree
        A pytree whose leaves are all :class:`CustomVJPPrimal`.

    Returns
    -------
    pytree
        The same structure, each leaf replaced by its ``value``.

    Raises
    ------
    TypeError
        When a leaf is not a :class:`CustomVJPPrimal`.

    Examples
    --------
    >>> from xjax.custom_derivatives import CustomVJPPrimal, custom_vjp_primal_tree_values
    >>> custom_vjp_primal_tree_values({"x": CustomVJPPrimal(1.0, True)})
    {'x': 1.0}
    """
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree)


def _user_tangent(t):
    """An internal ``Zero`` as custom rules see it."""
    return SymbolicZero(t.aval) if type(t) is Zero else t


# -- custom_jvp --

class custom_jvp:
    """A function with a user-defined forward-mode derivative.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> @xjax.custom_jvp
    ... def f(x):
    ...     return jnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 2.0 * t
    >>> xjax.grad(f)(0.5)
    Array(2., dtype=float32, weak_type=True)
    """

    def __init__(self, fun, nondiff_argnums=()):
        wraps(fun)(self)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the forward-mode rule.

        Parameters
        ----------
        jvp : callable
            ``jvp(primals, tangents) -> (primal_out, tangent_out)`` (with
            ``nondiff_argnums``: ``jvp(*nondiff_args, primals, tangents)``).
        symbolic_zeros : bool
            True: the rule gets a :class:`SymbolicZero` for each tangent known to be zero
            (an argument not being differentiated) instead of an array of zeros.
            Either way, the rule may return a :class:`SymbolicZero` as a tangent.

        Returns
        -------
        callable
            ``jvp``, so that ``defjvp`` can be used as a decorator.
        """
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """Set one rule per argument, ``rule(t, primal_out, *primals)``; None for arguments
        with no derivative. The tangent out is the sum of the rules' results."""
        def jvp(primals, tangents):
            out = self(*primals)
            total = None
            for rule, t in zip(jvps, tangents, strict=True):
                if rule is None:
                    continue
                term = rule(t, out, *primals)
                total = term if total is None else _tree_add(total, term)
            if total is None:
                total = tree_map(lambda o: zeros_like_aval(get_aval(o)), out)
            return out, total
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defjvp.")
        args = _resolve_args(self.fun, args, kwargs)
        nondiff, diff = _split(args, self.nondiff_argnums)
        flat_args, in_tree = tree_flatten(tuple(diff))
        trace = _owning_trace(flat_args)
        if type(trace) is EvalTrace:
            # run where JAX runs it: a tracer closed over from a skipped trace is unexpected
            with set_current_trace(trace):
                return self.fun(*args)
        flat_args = [to_operand(a) for a in flat_args]
        if type(trace) is JVPTrace:
            return self._apply_jvp(trace, nondiff, flat_args, in_tree)
        call_jaxpr, consts, out_tree = _trace_primal(self.fun, self.nondiff_argnums, nondiff,
                                                     flat_args, in_tree)
        flat_jvp = _flat_jvp(self.jvp, nondiff, in_tree, _OutTree(out_tree))
        flat_jvp.primal_name = getattr(self.fun, "__name__", None)  # jaxprs print it, as JAX
        outs = custom_jvp_call_p.bind(*consts, *flat_args, call_jaxpr=call_jaxpr,
                                      num_consts=len(consts), jvp=flat_jvp,
                                      symbolic_zeros=self.symbolic_zeros)
        return tree_unflatten(out_tree, outs)

    def _apply_jvp(self, trace, nondiff, flat_args, in_tree):
        """The rule alone, with the JVP trace's primals and tangents."""
        out_tree = _OutTree()
        flat_jvp = _flat_jvp(self.jvp, nondiff, in_tree, out_tree)
        outs = _apply_rule(trace, lambda primals, tangents: apply_custom_jvp(
            primals, tangents, flat_jvp, self.symbolic_zeros), flat_args)
        return tree_unflatten(out_tree.tree, outs)


class _OutTree:
    """A custom function's output structure: the traced primal's, or, where the primal is
    not traced (under a JVP trace), the structure the first rule to run returns."""

    __slots__ = ("tree",)

    def __init__(self, tree=None):
        self.tree = tree

    def expect(self, tree):
        """The structure ``tree`` must have (itself, when none is known yet)."""
        if self.tree is None:
            self.tree = tree
        return self.tree


def _flat_jvp(user_jvp, nondiff, in_tree, out_tree):
    """The user's rule on flat lists: ``Zero`` tangents (given only with symbolic zeros)
    reach it as :class:`SymbolicZero`, and its :class:`SymbolicZero` results leave as
    ``Zero``. Its outputs must have the structure ``out_tree`` (an :class:`_OutTree`)."""
    def flat_jvp(primals, tangents):
        p = tuple(tree_unflatten(in_tree, primals))
        t = tuple(tree_unflatten(in_tree, [_user_tangent(x) for x in tangents]))
        result = user_jvp(*nondiff, p, t)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError("Custom JVP rule must produce a pair (list or tuple of length "
                            f"two) representing primal and tangent outputs, but got {result}.")
        flat_out, tree = tree_flatten(result[0])
        flat_t, t_tree = tree_flatten(result[1])
        expected = out_tree.expect(tree)
        if tree != expected or t_tree != expected:
            raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                            f"equal container (pytree) structures matching the function's "
                            f"output {expected}, but got {tree} and {t_tree}.")
        for o in flat_out:
            to_operand(o)  # raises JAX's TypeError for outputs that are not arrays
        # The outputs stay as the rule gave them (a Python scalar stays one), as in JAX.
        return flat_out, [_tangent_out(o, t) for o, t in zip(flat_out, flat_t, strict=True)]
    flat_jvp.__name__ = getattr(user_jvp, "__name__", "jvp")  # jaxprs print the rule's name
    return flat_jvp


def _tangent_out(primal, tangent):
    """A rule's tangent output (checked to be an array, kept as it is), or ``Zero`` for a
    :class:`SymbolicZero` (of the primal's tangent type, as JAX checks)."""
    if type(tangent) is not SymbolicZero:
        to_operand(tangent)  # raises JAX's TypeError for values that are not arrays
        return tangent
    expected = tangent_aval(get_aval(primal))
    if not _same_type(expected, tangent.aval):
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        f"corresponding shapes and dtypes. Expected {expected.str_short()} "
                        f"(tangent type of {get_aval(primal).str_short()}) but got "
                        f"{tangent.aval.str_short()}.")
    return Zero(tangent.aval)


def _same_type(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _tree_add(x, y):
    return tree_map(add_tangents, x, y)


# -- custom_vjp --

class custom_vjp:
    """A function with a user-defined reverse-mode derivative.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> @xjax.custom_vjp
    ... def f(x):
    ...     return jnp.sin(x)
    >>> f.defvjp(lambda x: (f(x), x), lambda x, g: (3.0 * g,))
    >>> xjax.grad(f)(0.5)
    Array(3., dtype=float32, weak_type=True)
    """

    def __init__(self, fun, nondiff_argnums=()):
        wraps(fun)(self)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        self.symbolic_zeros = self.optimize_remat = False

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Set the reverse-mode rule.

        Parameters
        ----------
        fwd : callable
            ``fwd(*args) -> (out, residuals)``, with the primal function's signature.
        bwd : callable
            ``bwd(*nondiff_args, residuals, ct)`` returns a tuple with one cotangent per
            differentiable argument (None for zero, or a :class:`SymbolicZero`).
        symbolic_zeros : bool
            True: ``fwd`` gets each leaf of the differentiable arguments as a
            :class:`CustomVJPPrimal` (its ``value`` and whether it is ``perturbed``, i.e.
            has a nonzero tangent), and ``bwd`` gets a :class:`SymbolicZero` for each output
            cotangent known to be zero instead of an array of zeros.
        optimize_remat : bool
            JAX's remat optimization of the forward rule; xjax computes the same values
            without it.
        """
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros")
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros, self.optimize_remat = symbolic_zeros, optimize_remat

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defvjp.")
        args = _resolve_args(self.fun, args, kwargs)
        nondiff, diff = _split(args, self.nondiff_argnums)
        flat_args, in_tree = tree_flatten(tuple(diff))
        trace = _owning_trace(flat_args)
        if type(trace) is EvalTrace:
            # run where JAX runs it: a tracer closed over from a skipped trace is unexpected
            with set_current_trace(trace):
                return self.fun(*args)
        flat_args = [to_operand(a) for a in flat_args]
        if type(trace) is JVPTrace:
            return self._apply_vjp(trace, nondiff, flat_args, in_tree)
        call_jaxpr, consts, out_tree = _trace_primal(self.fun, self.nondiff_argnums, nondiff,
                                                     flat_args, in_tree)
        flat_fwd, flat_bwd = self._flat_rules(nondiff, flat_args, (in_tree, _OutTree(out_tree)))
        flat_fwd.primal_name = getattr(self.fun, "__name__", None)  # jaxprs print it, as JAX
        outs = custom_vjp_call_p.bind(*consts, *flat_args, call_jaxpr=call_jaxpr,
                                      num_consts=len(consts), fwd=flat_fwd, bwd=flat_bwd)
        return tree_unflatten(out_tree, outs)

    def _apply_vjp(self, trace, nondiff, flat_args, in_tree):
        """The rules alone (``fwd`` now, ``bwd`` when transposed), with the JVP trace's
        primals and tangents."""
        out_tree = _OutTree()
        flat_fwd, flat_bwd = self._flat_rules(nondiff, flat_args, (in_tree, out_tree))
        outs = _apply_rule(trace, lambda primals, tangents: apply_custom_vjp(
            primals, tangents, flat_fwd, flat_bwd), flat_args)
        return tree_unflatten(out_tree.tree, outs)

    def _flat_rules(self, nondiff, flat_args, trees):
        flat_fwd = _flat_fwd(self.fwd, self.nondiff_argnums, nondiff, trees,
                             self.symbolic_zeros)
        flat_bwd = _flat_bwd(self.bwd, nondiff, trees, [get_aval(a) for a in flat_args],
                             self.symbolic_zeros)
        return flat_fwd, flat_bwd


def _flat_fwd(fwd, nondiff_argnums, nondiff, trees, symbolic_zeros):
    """The user's forward rule on flat primals (with symbolic zeros, each given as a
    :class:`CustomVJPPrimal` with its ``perturbed`` flag). ``trees``: the input structure
    and the output's :class:`_OutTree`."""
    in_tree, out_tree = trees

    def flat_fwd(primals, perturbed):
        leaves = ([CustomVJPPrimal(p, b) for p, b in zip(primals, perturbed, strict=True)]
                  if symbolic_zeros else list(primals))
        diff_args = list(tree_unflatten(in_tree, leaves))
        result = fwd(*_merge(nondiff_argnums, nondiff, diff_args))
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError("Custom VJP fwd rule must produce a pair (output, residuals), "
                            f"got {type(result).__name__}.")
        out, residuals = result
        flat_out, tree = tree_flatten(out)
        expected = out_tree.expect(tree)
        if tree != expected:
            raise TypeError("Custom VJP fwd rule must produce an output with the same "
                            f"container (pytree) structure as the primal function {expected}"
                            f", but got {tree}.")
        return [to_operand(o) for o in flat_out], residuals
    flat_fwd.__name__ = getattr(fwd, "__name__", "fwd")  # jaxprs print the rules' names
    flat_fwd.symbolic_zeros = symbolic_zeros
    return flat_fwd


def _flat_bwd(bwd, nondiff, trees, in_avals, symbolic_zeros):
    """The user's backward rule on flat cotangents: ``Zero`` ones reach it as
    :class:`SymbolicZero` (or zeros, without symbolic zeros); its result becomes one
    cotangent or ``Zero`` per primal leaf."""
    in_tree, out_tree = trees

    def flat_bwd(residuals, cts):
        cts = [_user_tangent(c) if symbolic_zeros else instantiate(c) for c in cts]
        result = bwd(*nondiff, residuals, tree_unflatten(out_tree.tree, cts))
        return _flat_cotangents(result, in_tree, in_avals)
    flat_bwd.__name__ = getattr(bwd, "__name__", "bwd")
    return flat_bwd


def _flat_cotangents(result, in_tree, in_avals):
    """One cotangent per primal leaf from a bwd rule's result (a tuple with one entry per
    argument, None standing for a whole argument's zeros), checked as JAX checks it."""
    if isinstance(result, list) and len(result) == len(treedef_children(in_tree)):
        result = tuple(result)
    if not isinstance(result, tuple):
        raise TypeError(_bwd_structure_error(result, in_tree))
    dummy = tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    try:
        flat = prefix_leaves(result, dummy, is_leaf=lambda x: x is None)
    except (ValueError, TypeError):
        raise TypeError(_bwd_structure_error(result, in_tree)) from None
    paths = [keystr(path) for path, _ in tree_flatten_with_path(dummy)[0]]
    return [_checked_cotangent(c, a, p) for c, a, p in zip(flat, in_avals, paths, strict=True)]


def _bwd_structure_error(result, in_tree) -> str:
    return ("Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must "
            "produce a tuple of length equal to the number of arguments to the primal "
            f"function, but got bwd output structure {tree_flatten(result)[1]} for primal "
            f"input structure {in_tree}.")


def _checked_cotangent(ct, primal_aval, path):
    ct_aval = tangent_aval(primal_aval)
    if ct is None or ct_aval.dtype == dtypes.float0:
        return Zero(ct_aval)
    if type(ct) is SymbolicZero:
        if not _same_type(ct_aval, ct.aval):
            raise ValueError(
                "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not "
                "match the corresponding input tangent shape/dtype: at output"
                f"{path} the SymbolicZero had shape/dtype {ct.aval.str_short()} while the "
                f"corresponding input had shape/dtype {primal_aval.str_short()}. Consider "
                "just returning a None here instead of a SymbolicZero object.")
        return Zero(ct.aval)
    ct = to_operand(ct)
    if get_aval(ct).shape != ct_aval.shape:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args tuple "
            f"of the primal function, but at output{path} the bwd rule produced an output of "
            f"type {get_aval(ct).str_short()} corresponding to an input of type "
            f"{primal_aval.str_short()}")
    return ct


# -- custom_gradient --

class _GradientRule:
    """A custom_gradient rule traced to a jaxpr: its closed-over values are the residuals
    (pytree leaves), the jaxpr and output structure ride along as static data."""

    __slots__ = ("consts", "in_tree", "jaxpr")

    def __init__(self, jaxpr, in_tree, consts):
        self.jaxpr, self.in_tree, self.consts = jaxpr, in_tree, consts


register_pytree_node(_GradientRule, lambda r: (list(r.consts), (r.jaxpr, r.in_tree)),
                     lambda aux, consts: _GradientRule(aux[0], aux[1], list(consts)))


def custom_gradient(fun):
    """Define a function and its gradient together (TensorFlow's style).

    ``fun(*args)`` returns ``(value, vjp)`` where ``vjp(cotangent)`` returns the cotangents
    of the positional arguments (a tuple, or one value for one argument). Built on
    :class:`custom_vjp`, as JAX's is.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> @xjax.custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: (g * x,)
    >>> xjax.grad(f)(3.0)
    Array(3., dtype=float32, weak_type=True)
    """

    @custom_vjp
    def wrapped(*args, **kwargs):
        value, _ = fun(*args, **kwargs)
        return value

    def fwd(*args, **kwargs):
        value, rule = fun(*args, **kwargs)
        flat_value, value_tree = tree_flatten(value)
        avals = [tangent_aval(get_aval(to_operand(v))) for v in flat_value]
        in_trees = []

        def flat_rule(*cts):
            flat, tree = tree_flatten(rule(tree_unflatten(value_tree, list(cts))))
            in_trees.append(tree)
            return [to_operand(c) for c in flat]

        jaxpr, consts = consts_as_args(trace_to_jaxpr(flat_rule, avals))
        return value, _GradientRule(jaxpr, in_trees[0], consts)

    def bwd(residual, ct):
        outs = eval_jaxpr(residual.jaxpr.jaxpr, [], *residual.consts, *tree_flatten(ct)[0])
        cts = tree_unflatten(residual.in_tree, outs)
        return cts if isinstance(cts, tuple) else (cts,)

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun, updated=())
    return wrapped


# -- closure_convert --

def closure_convert(fun, *example_args):
    """Hoist the traced values ``fun`` closes over into explicit arguments.

    Returns ``(converted_fun, consts)`` with ``converted_fun(*args, *consts) == fun(*args)``
    for arguments of the example arguments' types: the form ``custom_vjp`` needs when a
    differentiated value hides in a closure. As in JAX, only values that may carry a
    derivative (traced, of an inexact dtype) are hoisted; others stay closed over.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> def outer(a):
    ...     f, consts = xjax.closure_convert(lambda x: x * a, 1.0)
    ...     return f(2.0, *consts)
    >>> xjax.grad(outer)(3.0)
    Array(2., dtype=float32, weak_type=True)
    """
    flat_args, in_tree = tree_flatten(example_args)
    in_avals = [get_aval(to_operand(x)) for x in flat_args]
    out_trees = []

    def flat_fun(*xs):
        flat_out, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, list(xs))))
        out_trees.append(out_tree)
        return [to_operand(o) for o in flat_out]

    closed = trace_to_jaxpr(flat_fun, in_avals)
    hoisted = [_maybe_perturbed(c) for c in closed.consts]
    const_args = [c for c, h in zip(closed.consts, hoisted, strict=True) if h]
    kept = [c for c, h in zip(closed.consts, hoisted, strict=True) if not h]

    def converted_fun(*args_and_consts):
        n = len(args_and_consts) - len(const_args)
        args, extra = args_and_consts[:n], iter(args_and_consts[n:])
        kept_iter = iter(kept)
        consts = [next(extra) if h else next(kept_iter) for h in hoisted]
        flat, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            "the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got {tree}")
        return tree_unflatten(out_trees[0], eval_jaxpr(closed.jaxpr, consts, *flat))

    return converted_fun, const_args


def _maybe_perturbed(value) -> bool:
    """Whether a closed-over value may carry a derivative: traced, and of an inexact dtype
    (integers and booleans have float0 tangents)."""
    return isinstance(value, Tracer) and dtypes.is_inexact(value.aval.dtype)


# -- checkpoint --

@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Save the outputs of matrix products (``dot_general``; also ``conv_general_dilated``
    unless ``only_if_no_batch_dims``, which keeps only dots without batch dimensions)."""

    only_if_no_batch_dims: bool

    def __call__(self, prim, *avals, **params):
        if self.only_if_no_batch_dims:
            return prim is dot_general_p and _no_batch_dims(params)
        return prim is dot_general_p or prim is conv_general_dilated_p


def _no_batch_dims(params) -> bool:
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only values named (``checkpoint_name``) with one of ``saveable_names``."""

    saveable_names: frozenset

    def __call__(self, prim, *avals, **params):
        return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save only named values, except those named with one of ``names``."""

    names: frozenset

    def __call__(self, prim, *avals, **params):
        return prim is name_p and params["name"] not in self.names


def save_anything_except_these_names(*names_not_to_save):
    """Save any value (not only named ones) except the names given.

    As in JAX 0.10.2, the names are not consulted: the policy saves everything.
    """
    return lambda *_, **__: True


def save_any_names_but_these(*names_not_to_save):
    """Save only named values (outputs of ``checkpoint_name``), except the names given."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_only_these_names(*names_which_can_be_saved):
    """Save only named values, and only those with one of the names given.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax.ad_checkpoint import checkpoint_name
    >>> policy = xjax.checkpoint_policies.save_only_these_names("y")
    >>> f = xjax.checkpoint(lambda x: jnp.sin(checkpoint_name(jnp.sin(x), "y")),
    ...                     policy=policy)
    >>> round(float(xjax.grad(f)(0.0)), 6)
    1.0
    """
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Like ``dots_with_no_batch_dims_saveable``, but offloading the saved dots from memory
    ``offload_src`` to ``offload_dst`` (xjax has one memory space: they are saved)."""
    def policy(prim, *_, **params):
        if prim is dot_general_p and _no_batch_dims(params):
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src, offload_dst):
    """Like ``save_only_these_names``, also offloading the values named with one of
    ``names_which_can_be_offloaded`` (xjax has one memory space: they are saved)."""
    saved = set(names_which_can_be_saved)
    offloaded = set(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} "
            f"and the intersection={both}")

    def policy(prim, *_, **params):
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


def save_from_both_policies(policy_1, policy_2):
    """The logical OR of two policies answering booleans: a value is saved when either
    policy saves it."""
    def policy(prim, *args, **params):
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(  # noqa: TRY004  (JAX's exception type)
                f"The return value of the policies should be a boolean. Got: {out1} and "
                f"{out2}. Please write a custom policy function directly, rather than "
                "using this helper function.")
        return out1 or out2
    return policy


dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)

# ``jax.checkpoint_policies``: a policy is called as ``policy(primitive, *in_avals, **params)``
# on each equation of a checkpointed function whose operands are all known, and answers
# whether its outputs may be saved (a bool, ``Saveable``, ``Recompute`` or ``Offloadable``).
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


def _static_argnums_tuple(static_argnums):
    if type(static_argnums) is int:
        return (static_argnums,)
    if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must "
                        f"be an int, tuple of ints or, bool, but got value {static_argnums}")
    return static_argnums


def _normalized_static_argnums(static_argnums, n_args):
    if not all(-n_args <= d < n_args for d in static_argnums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can "
                         "only take integer values greater than or equal to `-len(args)` and "
                         f"less than `len(args)`, but got {static_argnums}, while `len(args)` "
                         f"= {n_args}")
    return tuple(sorted({d % n_args for d in static_argnums}))


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """Recompute ``fun``'s intermediates in the backward pass instead of storing them.

    Parameters
    ----------
    fun : callable
        The function whose linearization points are recomputed when it is differentiated.
    prevent_cse : bool or sequence of bool
        JAX's guard against common-subexpression elimination undoing the recomputation.
    policy : callable, optional
        Which intermediates may be saved after all: one of :data:`checkpoint_policies` or
        ``policy(primitive, *in_avals, **params) -> bool | Saveable | Recompute |
        Offloadable``. Default: save nothing but the inputs.
    static_argnums : int or tuple of int
        Positional arguments that are Python values to trace with, not arrays.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = xjax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    >>> float(xjax.grad(f)(0.0))
    1.0
    >>> g = xjax.checkpoint(lambda x: jnp.sin(x @ x), policy=xjax.checkpoint_policies.dots_saveable)
    >>> float(xjax.grad(lambda x: g(x).sum())(jnp.zeros((2, 2))).sum())
    0.0
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    static_argnums = _static_argnums_tuple(static_argnums)
    if isinstance(prevent_cse, Sequence) and not isinstance(prevent_cse, str):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError(f"prevent_cse must be a bool or tuple of bools, got "
                        f"type(prevent_cse)={type(prevent_cse)}")

    @wraps(fun)
    def remat_fun(*args, **kwargs):
        nums = _normalized_static_argnums(static_argnums, len(args))
        # traced even eagerly, as JAX: fun sees tracers for its non-static arguments
        static, dynamic = _split(args, nums)
        n_dynamic = len(dynamic)

        def call(*dynamic_and_kwargs):  # the dynamic positional arguments, then kwargs
            positional = _merge(nums, static, list(dynamic_and_kwargs[:n_dynamic]))
            return fun(*positional, **dynamic_and_kwargs[n_dynamic])

        flat_args, in_tree = tree_flatten((*dynamic, kwargs))
        flat_args = [to_operand(a) for a in flat_args]
        call_jaxpr, consts, out_tree = _trace_primal(call, (), [], flat_args, in_tree)
        cse_args = (tuple(dynamic), kwargs) if kwargs else tuple(dynamic)
        cse = prevent_cse if isinstance(prevent_cse, bool) else (False,) * len(consts) + \
            tuple(prefix_leaves(prevent_cse, cse_args))
        outs = checkpoint_p.bind(*consts, *flat_args, jaxpr=call_jaxpr, policy=policy,
                                 prevent_cse=cse, differentiated=False)
        return tree_unflatten(out_tree, outs)

    return remat_fun


remat = checkpoint


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun`` at the shapes of ``primals``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f_t = xjax.linear_transpose(lambda x: 2.0 * x, 1.0)
    >>> f_t(1.0)
    (Array(2., dtype=float32, weak_type=True),)
    """
    flat_primals, in_tree = tree_flatten(primals)
    in_avals = [shaped_abstractify(p) for p in flat_primals]  # values, avals or structs
    box = {}

    def flat_fun(*xs):
        out = fun(*tree_unflatten(in_tree, xs))
        flat_out, out_tree = tree_flatten(out)
        box["out_tree"] = out_tree
        return [to_operand(o) for o in flat_out]

    closed = trace_to_jaxpr(flat_fun, in_avals)
    out_tree = box["out_tree"]

    def transposed(*cts):
        ct = cts[0] if len(cts) == 1 else cts
        flat_cts, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"linear_transpose cotangent structure {ct_tree} does not match "
                            f"the function's output structure {out_tree}")
        results = backward_pass(closed.jaxpr, closed.consts,
                                [UndefinedPrimal(a) for a in in_avals],
                                [to_operand(c) for c in flat_cts])
        return tuple(tree_unflatten(in_tree, [instantiate(r) for r in results]))

    return transposed
