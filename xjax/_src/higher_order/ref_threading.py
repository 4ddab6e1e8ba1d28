"""Threading mutable array references through control-flow bodies.

A body that writes a Ref living outside it is traced once, the write is discovered (the
body's ref scope raises :class:`~xjax.interpreters.refs.RefsWritten`), and the control-flow
function is called again on a wrapped body that takes the Refs' values as extra loop
carries (``scan``, ``while_loop``) or extra operands and outputs (``cond``, ``switch``),
binds the Refs to them while the user's body runs, and returns their final values. The
results are written back to the Refs afterwards, so the caller sees the body's mutations.
Other Refs the wrapped body writes are threaded the same way by the recursive call.
"""

from __future__ import annotations

import functools
import inspect

from xjax._src.core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from xjax._src.core.ref_avals import is_ref
from xjax._src.interpreters.refs import RefsWritten, bound, read_value, write_value
from xjax._src.higher_order.common import source_info

_MISSING = object()


def threads_refs(threader, prepare=None):
    """Decorate a control-flow function ``op``: when tracing its bodies discovers writes to
    outer Refs, call ``threader(op, refs, *args, **kwargs)`` instead. ``prepare(args,
    kwargs)`` may first rewrite the arguments (None: they need no rewriting)."""
    def decorate(op):
        @functools.wraps(op)
        def op_threading_refs(*args, **kwargs):
            if prepare is not None:
                rewritten = prepare(args, kwargs)
                if rewritten is not None:
                    return op_threading_refs(*rewritten[0], **rewritten[1])
            try:
                return op(*args, **kwargs)
            except RefsWritten as found:
                refs = found.refs
            except (TypeError, ValueError):  # a Ref among the carries fails to convert
                _check_no_ref_carry(op.__name__, args, kwargs)
                raise
            # Outside the except block: errors of the retry do not chain to the discovery.
            return threader(op_threading_refs, refs, *args, **kwargs)
        return op_threading_refs
    return decorate


# op name -> (its body function's parameter: position, name), (the initial carry's), what
# JAX says the body was traced for, and where the carry sits in the body's output
_CARRIES = {"scan": ((0, "f"), (1, "init"), "scan", "result[0]"),
            "while_loop": ((1, "body_fun"), (2, "init_val"), "while_body", "result")}


def _argument(args, kwargs, position, name):
    return args[position] if len(args) > position else kwargs.get(name)


def _check_no_ref_carry(op_name, args, kwargs):
    """JAX's ValueError for a Ref passed as (part of) a loop carry: the body would return
    it, and a traced function cannot return a Ref. Scanning over a Ref (``xs``) is not
    supported: NotImplementedError."""
    spec = _CARRIES.get(op_name)
    if spec is None:
        return
    (fun_at, fun_name), (init_at, init_name), traced_for, out_prefix = spec
    fun = _argument(args, kwargs, fun_at, fun_name)
    leaves = tree_flatten_with_path(_argument(args, kwargs, init_at, init_name))[0]
    for path, leaf in leaves:
        if is_ref(leaf):
            try:
                param = next(iter(inspect.signature(fun).parameters))
            except (TypeError, ValueError, StopIteration):
                param = "args[0]"
            where = keystr(path)
            at = f" at output tree path {out_prefix}{where}" if out_prefix + where != \
                "result" else ""  # a whole output is not named, as in JAX
            raise ValueError(
                f"function {source_info(fun)} traced for {traced_for} returned a mutable "
                f"array reference of type {leaf.aval}{at}, but mutable array references "
                "cannot be returned.\n\nThe returned mutable array was passed in as the "
                f"argument {param}{where}.")
    if op_name == "scan" and any(is_ref(x) for x in tree_flatten(
            _argument(args, kwargs, 2, "xs"))[0]):
        raise NotImplementedError("scanning over a mutable array reference (as scan's xs) is "
                                  "not supported; close over the Ref and index it in the body")


def _finals(refs):
    return [r._value for r in refs]


def _write_back(refs, values):
    for ref, value in zip(refs, values, strict=True):
        write_value(ref, value)


def scan(op, refs, f, init, xs=None, length=None, reverse=False, unroll=1,
         _split_transpose=False):
    """``scan`` with the Refs' values as extra carries."""
    def body(state, x):
        carry, values = state
        with bound(refs, values):
            out = f(carry, x)
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                return out  # scan reports the malformed output
            return (out[0], _finals(refs)), out[1]

    (carry, values), ys = op(body, (init, [read_value(r) for r in refs]), xs, length=length,
                             reverse=reverse, unroll=unroll)
    _write_back(refs, values)
    return carry, ys


def while_loop(op, refs, cond_fun, body_fun, init_val):
    """``while_loop`` with the Refs' values as extra carries; ``cond_fun`` may read them."""
    def cond(state):
        carry, values = state
        with bound(refs, values):
            pred = cond_fun(carry)
            if any(r._value is not v for r, v in zip(refs, values, strict=True)):
                raise NotImplementedError("a while_loop cond_fun that writes a mutable array "
                                          "reference is not supported")
            return pred

    def body(state):
        carry, values = state
        with bound(refs, values):
            return body_fun(carry), _finals(refs)

    carry, values = op(cond, body, (init_val, [read_value(r) for r in refs]))
    _write_back(refs, values)
    return carry


def _branch(refs, fun):
    def branch(values, *operands):
        with bound(refs, values):
            return fun(*operands), _finals(refs)
    return branch


def cond(op, refs, pred, true_fun, false_fun, *operands, operand=_MISSING, **kwargs):
    """``cond`` with the Refs' values as an extra operand and output of both branches."""
    if not (callable(true_fun) and callable(false_fun)):  # the four-argument form
        return op(pred, true_fun, false_fun, *operands, **kwargs)
    if operand is not _MISSING:
        operands = (operand,)
    out, values = op(pred, _branch(refs, true_fun), _branch(refs, false_fun),
                     [read_value(r) for r in refs], *operands)
    _write_back(refs, values)
    return out


def _without_ref_operands(first, funs, operands, operand):
    """Ref leaves of branch operands, closed over instead: ``(funs, operands)`` rewritten,
    or None when no operand is a Ref."""
    if operand is not _MISSING:
        operands = (operand,)
    leaves, tree = tree_flatten(operands)
    if not any(is_ref(x) for x in leaves):
        return None
    refs = {i: x for i, x in enumerate(leaves) if is_ref(x)}
    kept = [x for i, x in enumerate(leaves) if i not in refs]

    def closing(fun):
        def branch(*kept_operands):
            given = iter(kept_operands)
            full = [refs[i] if i in refs else next(given) for i in range(len(leaves))]
            return fun(*tree_unflatten(tree, full))
        return branch

    return [closing(f) for f in funs], kept


def prepare_cond(args, kwargs):
    """cond's Ref operands become closed-over Refs (then threaded like any other)."""
    if len(args) < 3 or not (callable(args[1]) and callable(args[2])):
        return None
    rewritten = _without_ref_operands(args[0], args[1:3], args[3:],
                                      kwargs.get("operand", _MISSING))
    if rewritten is None:
        return None
    (true_fun, false_fun), kept = rewritten
    return (args[0], true_fun, false_fun, *kept), {}


def prepare_switch(args, kwargs):
    """switch's Ref operands become closed-over Refs (then threaded like any other)."""
    if len(args) < 2:
        return None
    rewritten = _without_ref_operands(args[0], list(args[1]), args[2:],
                                      kwargs.get("operand", _MISSING))
    if rewritten is None:
        return None
    branches, kept = rewritten
    return (args[0], branches, *kept), {}


def switch(op, refs, index, branches, *operands, operand=_MISSING):
    """``switch`` with the Refs' values as an extra operand and output of every branch."""
    if operand is not _MISSING:
        operands = (operand,)
    out, values = op(index, [_branch(refs, b) for b in branches],
                     [read_value(r) for r in refs], *operands)
    _write_back(refs, values)
    return out
