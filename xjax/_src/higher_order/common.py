"""What every control-flow primitive shares: tracing a Python function to a closed jaxpr
whose consts are leading arguments, JAX's type-mismatch messages for branches and carries,
and jaxpr surgery for the transformation rules (forced partial evaluation, padding inputs,
memoizing derived jaxprs, running a jaxpr-level partial-eval rule online)."""

from __future__ import annotations

import inspect
import weakref

import numpy as np

from xjax._src.core.ad_util import get_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from xjax._src.core.pytree import (flatten_one_level_with_keys, is_tree_node, keystr, tree_flatten,
                                   tree_flatten_with_path, tree_unflatten)
from xjax._src.core.config import config
from xjax._src.core.sharding_types import get_mesh
from xjax._src.core.trace import current_trace
from xjax._src.higher_order.jit_call import consts_as_args
from xjax._src.interpreters.refs import check_no_ref_outputs, discovering
from xjax._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from xjax._src.lax.operands import to_operand
from xjax._src.core import dtypes
from xjax._src.interpreters.eval import EvalTrace
from xjax._src.interpreters.partial_eval import partial_eval_jaxpr
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.shape import broadcast_in_dim_p


# -- tracing ---------------------------------------------------------------------------------

class TracedFunction:
    """A Python function traced on avals: its jaxpr (consts as leading inputs), the consts
    (operands to pass first), the output tree and the output avals."""

    __slots__ = ("jaxpr", "consts", "out_tree", "out_avals")

    def __init__(self, jaxpr, consts, out_tree):
        self.jaxpr = jaxpr
        self.consts = consts
        self.out_tree = out_tree
        self.out_avals = jaxpr.out_avals


_TRACINGS = weakref.WeakKeyDictionary()  # a traced Python function -> {key: its tracing}


def reuse_tracing(fun, key, trace):
    """``trace()``, a tracing of the Python function ``fun`` described by ``key`` (the input
    tree and avals), reused by later calls with the same ``fun`` and ``key``.

    JAX caches the jaxprs of loop bodies and branches by function, so a body's Python side
    effects run once across eager calls, and libraries test that (Flax's ``nnx.scan``).
    Only tracings made at the root (eager) trace are kept: under another transformation a
    tracing may close over that transformation's tracers, and the enclosing ``jit`` caches
    whole programs anyway.
    """
    if type(current_trace()) is not EvalTrace:
        return trace()
    key = (key, config.xjax_jit_context, get_mesh())
    try:
        tracings = _TRACINGS.setdefault(fun, {})
        found = tracings.get(key)
    except TypeError:  # neither weakly referenceable nor hashable: trace every time
        return trace()
    if found is None:
        found = tracings[key] = trace()
    return found


def trace_function(fun, in_tree, in_avals, traced_for: str,
                   threads_refs: bool = False, reuse: bool = False) -> TracedFunction:
    """Trace ``fun(*unflatten(in_tree, args))`` on flat ``in_avals``.

    ``reuse``: reuse an earlier eager tracing of ``fun`` on the same inputs (see
    :func:`reuse_tracing`), as JAX does for loop bodies and branches.

    Values the function closes over (arrays, tracers of enclosing transformations) become
    the consts, passed to the primitive as operands, so the held jaxpr is closed and pure.
    A body that writes a Ref from outside raises ``RefsWritten`` for the caller to thread
    it (``threads_refs``; see ``ref_threading.py``), else NotImplementedError.
    """
    if reuse:
        return reuse_tracing(fun, (in_tree, tuple(in_avals), traced_for, threads_refs),
                             lambda: trace_function(fun, in_tree, in_avals, traced_for,
                                                    threads_refs))
    box = []

    def flat_fun(*flat_args):
        with discovering(traced_for, threads_refs):
            out = fun(*tree_unflatten(in_tree, flat_args))
            leaves, out_tree = tree_flatten(out)
            box.append(out_tree)
            try:
                return [to_operand(x) for x in leaves]
            except TypeError:
                check_no_ref_outputs(leaves, source_info(fun), traced_for)
                raise

    info = DebugInfo(traced_for, fun, _arg_names(fun, len(in_avals)))
    closed = trace_to_jaxpr(flat_fun, list(in_avals), info)
    jaxpr, consts = consts_as_args(closed)
    return TracedFunction(jaxpr, consts, box[0])


def _arg_names(fun, n):
    try:
        names = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        names = []
    return (names + [f"args[{i}]" for i in range(len(names), n)])[:n] if names else \
        [f"args[{i}]" for i in range(n)]


def trace_flat(flat_fun, in_avals):
    """Trace a flat function (arrays in, list out) to ``(ClosedJaxpr, consts)``: how rules
    build the jaxprs of derived primitives (jvp, transpose, batched bodies)."""
    return consts_as_args(trace_to_jaxpr(flat_fun, list(in_avals)))


def source_info(fun) -> str:
    """``name at file:line`` as JAX's messages name a function."""
    name = getattr(fun, "__name__", type(fun).__name__)
    try:
        code = inspect.unwrap(fun).__code__
        return f"{name} at {code.co_filename}:{code.co_firstlineno}"
    except (AttributeError, ValueError, TypeError):
        return name


# -- types and messages ----------------------------------------------------------------------

def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal shapes and dtypes; weak types may differ (as JAX compares carries)."""
    return a.shape == b.shape and a.dtype == b.dtype


def mismatch_extra(a: ShapedArray, b: ShapedArray) -> str:
    mismatches = []
    if a.dtype != b.dtype:
        mismatches.append("the dtypes do not match")
    if a.shape != b.shape:
        mismatches.append("the shapes do not match")
    if not mismatches:
        return ""
    if len(mismatches) == 1:
        return ", so " + mismatches[0]
    return ", so " + ", ".join(mismatches[:-1]) + ", and " + mismatches[-1]


def _capitalize(s: str) -> str:
    return s[0].upper() + s[1:]


def _join_differences(diffs, bullet_newline: bool) -> str:
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0])}.\n"
    sep = ";\n\n" if bullet_newline else ";\n"
    return "".join(f"  * {d}{sep}" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


class _AvalLeaf:
    """Stands for an array in trees being compared: its type prints as ``pytree leaf``."""

    __slots__ = ()


class _LeafMeta(type):
    def __repr__(cls):
        return "pytree leaf"


_PytreeLeaf = _LeafMeta("Leaf", (), {})


def equality_errors(t1, t2, path=()):
    """Describe where two pytrees of different structure differ, as JAX does: yields
    ``(path, thing1, thing2, explanation)``."""
    node1, node2 = is_tree_node(type(t1)), is_tree_node(type(t2))
    if not node1 and not node2:
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}",
               f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
        return
    kids1, meta1 = flatten_one_level_with_keys(t1)
    kids2, meta2 = flatten_one_level_with_keys(t2)
    keys1, keys2 = [k for k, _ in kids1], [k for k, _ in kids2]
    if len(kids1) != len(kids2):
        diff = " ".join(repr(getattr(k, "key", k)) for k in set(keys1) ^ set(keys2))
        yield (path, f"{type(t1)} with {len(kids1)} child{'ren' if len(kids1) > 1 else ''}",
               f"{type(t2)} with {len(kids2)} child{'ren' if len(kids2) > 1 else ''}",
               "the numbers of children do not match" +
               (f", with the symmetric difference of key sets: {{{diff}}}" if diff else ""))
        return
    if meta1 != meta2:
        yield (path, f"{type(t1)} with pytree metadata {meta1}",
               f"{type(t2)} with pytree metadata {meta2}",
               "the pytree node metadata does not match")
        return
    for (key, c1), (_, c2) in zip(kids1, kids2, strict=True):
        yield from equality_errors(c1, c2, (*path, key))


def check_branch_outputs(api_name, name1, name2, f1, f2, tree1, avals1, tree2, avals2):
    """Raise JAX's TypeError when two branches' outputs differ in structure or types."""
    info1, info2 = source_info(f1), source_info(f2)
    if tree1 != tree2:
        leaf = _PytreeLeaf()
        out1 = tree_unflatten(tree1, [leaf] * len(avals1))
        out2 = tree_unflatten(tree2, [leaf] * len(avals2))
        diffs = [f"{name1} output{f' at path {keystr(p)}' if p else ''} is a {th1} but "
                 f"{name2} output{f' at path {keystr(p)}' if p else ''} is a {th2}, so {why}"
                 for p, th1, th2, why in equality_errors(out1, out2)]
        if not diffs:
            return
        differences = (f"{diffs[0]}.\n" if len(diffs) == 1 else
                       "".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n")
        raise TypeError(
            f"{api_name} branch outputs must have the same pytree structure, but they differ:"
            f"\n\n{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n"
            f"Revise {name1} and/or {name2} so that they have the same pytree structure.")
    paths = [p for p, _ in tree_flatten_with_path(tree_unflatten(tree1, avals1))[0]]
    diffs = [f"the output of {name1}{f' at path {keystr(p)}' if p else ''} has type "
             f"{a1.str_short()} but the corresponding output of {name2} has type "
             f"{a2.str_short()}{mismatch_extra(a1, a2)}"
             for p, a1, a2 in zip(paths, avals1, avals2, strict=True) if not typematch(a1, a2)]
    if diffs:
        raise TypeError(
            f"{api_name} branches must have equal output types but they differ.\n\n"
            f"{name1} is {info1}\n{name2} is {info2}\n\n{_join_differences(diffs, False)}\n"
            f"Revise {name1} and/or {name2} so that all output types match.")


def check_carry_type(name, body_fun, in_tree, in_avals, out_tree, out_avals):
    """Raise JAX's TypeError when a loop body's carry output differs from its input."""
    try:
        params = list(inspect.signature(body_fun).parameters)
    except (TypeError, ValueError):
        params = []
    carry_name = params[0] if params else None

    def component(path):
        if carry_name:
            return (f"the input carry component {carry_name}{keystr(path)}" if path else
                    f"the input carry {carry_name}")
        return f"the input carry at path {keystr(path)}" if path else "the input carry"

    if in_tree != out_tree:
        in_value = tree_unflatten(in_tree, in_avals)
        try:
            out_value = tree_unflatten(out_tree, out_avals)
        except Exception:  # noqa: BLE001  (an unflattenable output: show the structures)
            out_value = None
        if out_value is None:
            differences = (f"the input tree structure is:\n{in_tree}\n"
                           f"the output tree structure is:\n{out_tree}\n")
        else:
            diffs = [f"{component(p)} is a {th1} but the corresponding component of the carry "
                     f"output is a {th2}, so {why}"
                     for p, th1, th2, why in equality_errors(in_value, out_value)]
            if not diffs:
                return
            differences = _join_differences(diffs, True)
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n{differences}\n"
            "Revise the function so that the carry output has the same pytree structure as "
            "the carry input.")
    paths = [p for p, _ in tree_flatten_with_path(tree_unflatten(in_tree, in_avals))[0]]
    diffs = [f"{component(p)} has type {a.str_short()} but the corresponding output carry "
             f"component has type {b.str_short()}{mismatch_extra(a, b)}"
             for p, a, b in zip(paths, in_avals, out_avals, strict=True) if not typematch(a, b)]
    if diffs:
        raise TypeError(
            f"{name} function carry input and carry output must have equal types, but they "
            f"differ:\n\n{_join_differences(diffs, True)}\n"
            "Revise the function so that all output types match the corresponding input types.")


def promote_weak_carries(values, in_avals, out_avals):
    """Weakly typed initial carries (Python scalars) whose type the body changes are
    converted to the promoted dtype, as JAX does; returns (values, whether any changed)."""
    new, changed = [], False
    for value, a, b in zip(values, in_avals, out_avals, strict=True):
        if a.weak_type and not typematch(a, b):
            dtype, _ = dtypes.lattice_result((a.dtype, True), (b.dtype, b.weak_type))
            new.append(convert_element_type(value, dtype))
            changed = True
        else:
            new.append(value)
    return new, changed


class ShortAval:
    """An aval printed as JAX prints abstract leaves in messages: ``~float32[]``."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return "~" + self.aval.str_short()


# -- jaxpr surgery ---------------------------------------------------------------------------

def with_invars(jaxpr: Jaxpr, invars) -> Jaxpr:
    return Jaxpr([], list(invars), jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info)


def with_outvars(jaxpr: Jaxpr, outvars) -> Jaxpr:
    return Jaxpr([], jaxpr.invars, list(outvars), jaxpr.eqns, jaxpr.debug_info)


def closed(jaxpr: Jaxpr) -> ClosedJaxpr:
    return ClosedJaxpr(jaxpr, [])


def pad_inputs(jaxpr: Jaxpr, before, after=()) -> Jaxpr:
    """``jaxpr`` taking extra unused leading (``before``) and trailing (``after``) inputs of
    the given avals."""
    return with_invars(jaxpr, [Var(a) for a in before] + jaxpr.invars +
                       [Var(a) for a in after])


def join_consts(traced_list):
    """Branches traced separately, each with its own consts: give every jaxpr all the consts
    (unused ones as padding) so they share one signature. Returns (jaxprs, consts)."""
    all_consts, positions = [], {}
    for _, consts in traced_list:
        for c in consts:
            if id(c) not in positions:
                positions[id(c)] = len(all_consts)
                all_consts.append(c)
    joined = []
    for jaxpr, consts in traced_list:
        slots = [None] * len(all_consts)
        n = len(consts)
        for c, var in zip(consts, jaxpr.invars[:n], strict=True):
            slots[positions[id(c)]] = var
        slots = [v if v is not None else Var(get_aval(c))
                 for v, c in zip(slots, all_consts, strict=True)]
        joined.append(with_invars(jaxpr, slots + jaxpr.invars[n:]))
    return joined, all_consts


def zeros_literal_or_eqn(aval):
    """An atom holding zeros of ``aval``: a Literal for a scalar, else a broadcast equation.
    Returns (atom, eqns)."""
    scalar_aval = ShapedArray((), aval.dtype, False)
    zero = Literal(Array._from_numpy(np.zeros((), aval.dtype), scalar_aval), scalar_aval)
    if aval.shape == ():
        return zero, []
    var = Var(ShapedArray(aval.shape, aval.dtype, False))
    eqn = JaxprEqn(broadcast_in_dim_p, [zero], [var],
                   {"shape": tuple(aval.shape), "broadcast_dimensions": (), "sharding": None})
    return var, [eqn]


def partial_eval_jaxpr_forced(jaxpr: Jaxpr, in_unknowns, force_unknown):
    """``partial_eval_jaxpr`` whose outputs are unknown at least where ``force_unknown`` says
    (known values there become residuals the unknown jaxpr returns). Returns ``(known,
    unknown, out_unknowns, num_residuals)`` with the same conventions."""
    known, unknown, out_uk, n_res = partial_eval_jaxpr(jaxpr, list(in_unknowns))
    forced = [f and not u for f, u in zip(force_unknown, out_uk, strict=True)]
    if not any(forced):
        return known, unknown, list(out_uk), n_res
    n_known_out = len(known.outvars) - n_res
    known_outs, residuals = known.outvars[:n_known_out], known.outvars[n_known_out:]
    kept, moved, known_iter = [], [], iter(known_outs)
    for u, f in zip(out_uk, forced, strict=True):
        if u:
            continue
        atom = next(known_iter)
        (moved if f else kept).append(atom)
    new_known = with_outvars(known, kept + residuals + moved)
    res_vars = unknown.invars[:n_res]
    moved_vars = [Var(a.aval) for a in moved]
    unknown_in = unknown.invars[n_res:]
    outs, unknown_iter, moved_iter = [], iter(unknown.outvars), iter(moved_vars)
    for u, f in zip(out_uk, forced, strict=True):
        if u:
            outs.append(next(unknown_iter))
        elif f:
            outs.append(next(moved_iter))
    new_unknown = Jaxpr([], res_vars + moved_vars + unknown_in, outs, unknown.eqns)
    out_unknowns = [u or f for u, f in zip(out_uk, forced, strict=True)]
    return new_known, new_unknown, out_unknowns, n_res + len(moved)


# -- memoizing derived jaxprs ----------------------------------------------------------------

_derived_cache: dict = {}


def derived(kind, source, key, make):
    """Memoize what is derived from ``source`` (a jaxpr, or a tuple of them) under ``key``.
    The source is kept with the entry, so a recycled ``id`` cannot return a stale value."""
    sources = source if isinstance(source, tuple) else (source,)
    full_key = (kind, tuple(id(s) for s in sources), key)
    hit = _derived_cache.get(full_key)
    if hit is not None and all(a is b for a, b in zip(hit[0], sources, strict=True)):
        return hit[1]
    value = make()
    _derived_cache[full_key] = (sources, value)
    return value


def in_current_trace_is_root() -> bool:
    return type(current_trace()) is EvalTrace


def split_list(values, sizes):
    """``values`` cut into consecutive pieces of ``sizes`` (and the rest)."""
    out, start = [], 0
    for n in sizes:
        out.append(list(values[start:start + n]))
        start += n
    out.append(list(values[start:]))
    return out
