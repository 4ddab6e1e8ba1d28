"""Warnings for the two impure patterns that staging silently freezes (beyond JAX).

1. A jitted function that reads a global or closed-over value while it is traced bakes that
   value into the compiled program. ``jit`` caches by argument types, so after the value
   changes, calls with the old types still run the old value, and only a retrace sees the new
   one. When a retrace happens and such a value has changed since an earlier trace, we warn
   that the earlier executables still use the old value. Nothing is checked on the cached-call
   path: the values are read only when a trace happens anyway.
2. A loop body (``fori_loop``, ``scan``, ``while_loop``) that calls ``next()`` on a Python
   iterator it captured is traced once, so the iterator is advanced once, at trace time, and
   every iteration uses that one value. We warn when tracing the body advanced a captured
   iterator.

``xjax.config.update("xjax_purity_warnings", False)`` (or ``XJAX_PURITY_WARNINGS=0``) turns
both off.
"""

from __future__ import annotations

import collections.abc
import dis
import functools
import numbers
import operator
import sys
import types
import warnings
import weakref

import numpy as np

from xjax._src.core import source_info
from xjax._src.core.array import Array
from xjax._src.core.config import config


class ImpureFunctionWarning(UserWarning):
    """A traced function read Python state that its compiled or traced form has frozen."""


_SILENCE = ("Silence this warning with xjax.config.update('xjax_purity_warnings', False) "
            "or XJAX_PURITY_WARNINGS=0.")
_ARRAY_COMPARE_LIMIT = 1 << 16  # larger arrays are compared by identity only
_READS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_GLOBAL_WRITES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})
_CELL_WRITES = frozenset({"STORE_DEREF", "DELETE_DEREF"})


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the innermost caller outside xjax (and registered library
    paths), so a warning names the user's line."""
    level, frame = 2, sys._getframe(2)
    while frame is not None and not source_info.is_user_file(frame.f_code.co_filename):
        level, frame = level + 1, frame.f_back
    return level


def _function_of(fun):
    """The plain Python function behind ``fun`` (partials and bound methods unwrapped)."""
    for _ in range(8):
        if isinstance(fun, functools.partial):
            fun = fun.func
        elif isinstance(fun, types.MethodType):
            fun = fun.__func__
        else:
            break
    return fun if isinstance(fun, types.FunctionType) else None


@functools.lru_cache(maxsize=4096)
def _code_names(code) -> tuple[frozenset, frozenset]:
    """(globals the code reads and never writes, closure cells it writes), nested code
    objects (lambdas, comprehensions, inner functions) included."""
    reads, global_writes, cell_writes = set(), set(), set()
    pending = [code]
    while pending:
        current = pending.pop()
        for instruction in dis.get_instructions(current):
            if instruction.opname in _READS:
                reads.add(instruction.argval)
            elif instruction.opname in _GLOBAL_WRITES:
                global_writes.add(instruction.argval)
            elif instruction.opname in _CELL_WRITES:
                cell_writes.add(instruction.argval)
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return frozenset(reads - global_writes), frozenset(cell_writes)


def _free_objects(fun) -> dict:
    """name -> object, for the globals ``fun`` reads and the cells it closes over (but does
    not assign: a counter the function increments itself is not a frozen input)."""
    function = _function_of(fun)
    if function is None:
        return {}
    global_reads, cell_writes = _code_names(function.__code__)
    found = {}
    namespace = function.__globals__
    for name in global_reads:
        if name in namespace:
            found[name] = namespace[name]
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (),
                          strict=True):
        if name in cell_writes:
            continue
        try:
            found[name] = cell.cell_contents
        except ValueError:  # an empty cell: assigned later in the enclosing function
            continue
    return found


def _data_value(obj):
    """What to remember of a value that tracing would bake in (None for anything else:
    functions, modules, classes, containers)."""
    if isinstance(obj, bool | numbers.Number) and not isinstance(obj, type):
        return ("scalar", obj)
    if isinstance(obj, np.ndarray | np.generic):
        if obj.size <= _ARRAY_COMPARE_LIMIT:
            return ("array", np.array(obj, copy=True))
        return ("identity", id(obj))
    if isinstance(obj, Array):  # key arrays too
        # Compared by value only when already on the host: reading a device buffer here
        # would be a transfer (and trip the transfer guard); Arrays are immutable anyway.
        host = obj._npy if type(obj) is Array else None
        if host is not None and host.size <= _ARRAY_COMPARE_LIMIT:
            return ("array", host)
        return ("identity", id(obj))
    return None


def _same(before, after) -> bool:
    if before[0] != after[0]:
        return False
    if before[0] == "array":
        a, b = before[1], after[1]
        return (a.shape == b.shape and a.dtype == b.dtype
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
    if before[0] == "scalar":
        a, b = before[1], after[1]
        return type(a) is type(b) and (a == b or (_is_nan(a) and _is_nan(b)))
    return before[1] == after[1]


def _is_nan(value) -> bool:
    return isinstance(value, float | complex | np.inexact) and bool(np.isnan(value))


def _shown(remembered) -> str:
    kind, value = remembered
    if kind == "identity":
        return "another large array"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# fun -> {name: remembered value} at its latest trace. Weak keys: a dead function's
# record goes with it. Functions that cannot be weakly referenced are not followed.
_last_seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def frozen_values(fun) -> dict | None:
    """The data values ``fun`` would read from globals and closures now, or None when the
    warnings are off. Taken just before a trace, handed to :func:`check_retrace` after."""
    if not config.xjax_purity_warnings:
        return None
    values = {}
    for name, obj in _free_objects(fun).items():
        remembered = _data_value(obj)
        if remembered is not None:
            values[name] = remembered
    return values


def check_retrace(fun, values, *, compiled_before: bool, name: str) -> None:
    """Remember ``values`` as what the latest trace of ``fun`` saw; when earlier traces are
    still cached and saw different values, warn that they keep using them."""
    if values is None:
        return
    key = _function_of(fun) or fun
    try:
        earlier = _last_seen.get(key)
        _last_seen[key] = values
    except TypeError:  # not weakly referenceable
        return
    if not earlier or not compiled_before:
        return
    changed = [(n, earlier[n], values[n]) for n in values
               if n in earlier and not _same(earlier[n], values[n])]
    if not changed:
        return
    listed = "; ".join(f"'{n}' was {_shown(old)}, now {_shown(new)}" for n, old, new in changed)
    warnings.warn(
        f"jit of '{name}' is tracing it again, and Python values it reads from globals or "
        f"closures have changed since an earlier trace ({listed}). Tracing made them "
        f"constants: the versions compiled earlier, which calls with the earlier argument "
        f"types still run, keep the old values. Pass such values as arguments instead. "
        f"{_SILENCE}", ImpureFunctionWarning, stacklevel=_user_stacklevel())


def _iterator_positions(funs) -> dict:
    """name -> (iterator, its length hint or None) for the Python iterators the functions
    capture (globals they read, cells they close over)."""
    found = {}
    for fun in funs:
        for name, obj in _free_objects(fun).items():
            if isinstance(obj, collections.abc.Iterator) and not isinstance(obj, Array):
                found[name] = (obj, operator.length_hint(obj, -1))
    return found


def _calls_next(funs) -> bool:
    for fun in funs:
        function = _function_of(fun)
        if function is not None and "next" in _code_names(function.__code__)[0]:
            return True
    return False


def checks_loop_body(primitive_name: str, *positions: int):
    """Decorates a loop function (``lax.scan`` and friends) whose arguments at
    ``positions`` are the body functions it traces: warn when tracing them advanced a Python
    iterator they capture (or, for an iterator without a length, when they call ``next``)."""
    def decorate(loop):
        @functools.wraps(loop)
        def checked(*args, **kwargs):
            if not config.xjax_purity_warnings or config.jax_disable_jit:
                return loop(*args, **kwargs)  # disable_jit runs the body per iteration
            funs = [args[i] for i in positions if i < len(args)]
            before = _iterator_positions(funs)
            result = loop(*args, **kwargs)
            if before:
                _warn_if_advanced(primitive_name, before, funs)
            return result
        return checked
    return decorate


def _warn_if_advanced(primitive_name, before, funs) -> None:
    advanced = [name for name, (it, hint) in before.items()
                if hint != operator.length_hint(it, -1) or hint == -1 and _calls_next(funs)]
    if advanced:
        names = ", ".join(f"'{n}'" for n in advanced)
        warnings.warn(
            f"lax.{primitive_name}: the loop body uses the Python iterator {names}, which it "
            f"captured. The body is traced once, so next() ran once, at trace time: every "
            f"iteration uses that one value and the iterator does not advance per iteration. "
            f"Index an array with the loop counter, or pass the values as the xs of "
            f"lax.scan. {_SILENCE}", ImpureFunctionWarning, stacklevel=_user_stacklevel())
