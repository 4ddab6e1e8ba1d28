"""``xjax.api_util``: helpers for writing transformations, as ``jax.api_util``.

Several of JAX's helpers here transform a ``linear_util.WrappedFun``: a function with a
stack of transformations and their auxiliary outputs (``flatten_fun`` records the output
tree). xjax's transformations do not use one, so this module carries a small equivalent,
:class:`WrappedFun`, with the calling conventions the helpers need: ``call_wrapped`` runs it,
the auxiliary output comes back as a thunk that is readable once the function has run.
The helpers also accept a plain callable where JAX wants a ``WrappedFun`` (it is wrapped
with :func:`wrap_init`).

>>> import xjax
>>> from xjax import api_util, tree_util
>>> args = ((1.0, 2.0), {"scale": 3.0})
>>> flat, in_tree = tree_util.tree_flatten(args)
>>> flat_fun, out_tree = api_util.flatten_fun(lambda a, b, scale: (a * scale, b), in_tree)
>>> flat_fun.call_wrapped(*flat)
[3.0, 2.0]
>>> out_tree()
PyTreeDef((*, *))
"""

from __future__ import annotations

import inspect
import operator

from xjax._src.transformations.jit import (shaped_abstractify)  # noqa: F401  (re-exported, as jax.api_util)
from xjax._src.core.pytree import (prefix_leaves, tree_flatten, tree_flatten_with_path,
                                   tree_unflatten)
from xjax._src.interpreters.staging import DebugInfo
from xjax._src.core.tree_util import keystr, prefix_errors, treedef_children

__all__ = ["shaped_abstractify", "argnums_partial", "debug_info", "donation_vector",
           "flatten_axes", "flatten_fun", "flatten_fun_nokwargs", "rebase_donate_argnums",
           "safe_map"]


# -- WrappedFun: a function and the transformations on it --

class StoreException(Exception):
    """An auxiliary output was read before the function ran, or stored twice."""


class _Store:
    """One auxiliary output of a transformation: written once, by the call."""

    __slots__ = ("_value", "_full")

    def __init__(self):
        self._value, self._full = None, False

    def store(self, value):
        if self._full:
            raise StoreException("Store occupied")
        self._value, self._full = value, True

    @property
    def val(self):
        if not self._full:
            raise StoreException("Store empty")
        return self._value


class WrappedFun:
    """``f`` with transformations applied: ``call_wrapped(*args, **kwargs)`` runs them.

    The counterpart of JAX's ``linear_util.WrappedFun`` for the helpers of this module:
    ``f`` is the original function, ``f_transformed`` what ``call_wrapped`` calls.
    """

    __slots__ = ("f", "f_transformed", "params", "debug_info")

    def __init__(self, f, f_transformed, params=(), debug_info=None):
        self.f = f
        self.f_transformed = f_transformed
        self.params = params
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def call_wrapped(self, *args, **kwargs):
        """Call the transformed function."""
        return self.f_transformed(*args, **kwargs)

    def _wrap(self, transformed):
        return WrappedFun(self.f, transformed, self.params, self.debug_info)

    def __repr__(self):
        return f"Wrapped function:\nCore: {self.__name__}\n"


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    """``f`` as a :class:`WrappedFun` with no transformation yet; ``params`` are keyword
    arguments passed on every call (as ``jax.extend.linear_util.wrap_init``)."""
    params = dict(params or {})
    call = (lambda *a, **k: f(*a, **params, **k)) if params else f
    return WrappedFun(f, call, tuple(sorted(params.items())), debug_info)


def _as_wrapped(f) -> WrappedFun:
    if isinstance(f, WrappedFun):
        return f
    if not callable(f):
        raise TypeError(f"Expected a callable value, got {f!r}")
    return wrap_init(f)


# -- flattening --

def flatten_fun(f, in_tree):
    """Make ``f(*args, **kwargs)`` a function of the leaves of ``(args, kwargs)``.

    Parameters
    ----------
    f : WrappedFun or callable
    in_tree : PyTreeDef
        The structure of ``(args, kwargs)``.

    Returns
    -------
    (WrappedFun, thunk)
        The flat function, whose ``call_wrapped(*leaves)`` returns the list of output
        leaves, and a thunk giving the output's PyTreeDef once it has been called.
    """
    f = _as_wrapped(f)
    store = _Store()

    def flat(*args_flat):
        args, kwargs = tree_unflatten(in_tree, list(args_flat))
        leaves, out_tree = tree_flatten(f.call_wrapped(*args, **kwargs))
        store.store(out_tree)
        return leaves
    return f._wrap(flat), lambda: store.val


def flatten_fun_nokwargs(f, in_tree):
    """:func:`flatten_fun` for ``f(*args)``: ``in_tree`` is the structure of ``args``."""
    f = _as_wrapped(f)
    store = _Store()

    def flat(*args_flat):
        leaves, out_tree = tree_flatten(f.call_wrapped(*tree_unflatten(in_tree,
                                                                        list(args_flat))))
        store.store(out_tree)
        return leaves
    return f._wrap(flat), lambda: store.val


def _index_tuple(x) -> tuple:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def _resolve_argnums(argnums, n_args: int) -> tuple:
    """Non-negative argument positions (negative ones count from the end), checked."""
    out = []
    for i in argnums:
        if not -n_args <= i < n_args:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {n_args}.")
        out.append(i % n_args)
    return tuple(out)


def argnums_partial(f, dyn_argnums, args, require_static_args_hashable=True):
    """Fix the arguments of ``f`` not in ``dyn_argnums`` to their values in ``args``.

    Returns
    -------
    (WrappedFun, tuple)
        A function of the dynamic arguments only (keyword arguments pass through), and the
        dynamic arguments ``tuple(args[i] for i in dyn_argnums)``.

    Raises
    ------
    ValueError
        If a fixed argument is not hashable (with ``require_static_args_hashable``), or an
        index is out of range.

    Examples
    --------
    >>> from xjax import api_util
    >>> g, dyn = api_util.argnums_partial(lambda a, b, c: a - b * c, (0, 2), (10, 2, 3))
    >>> dyn, g.call_wrapped(*dyn)
    ((10, 3), 4)
    """
    f = _as_wrapped(f)
    dyn_argnums = _resolve_argnums(_index_tuple(dyn_argnums), len(args))
    fixed = {i: a for i, a in enumerate(args) if i not in dyn_argnums}
    if require_static_args_hashable:
        for i, arg in fixed.items():
            try:
                hash(arg)
            except TypeError:
                raise ValueError(
                    "Non-hashable static arguments are not supported, as this can lead to "
                    f"unexpected cache-misses. Static argument (index {i}) of type "
                    f"{type(arg)} for function {f.__name__} is non-hashable.") from None

    def partial_call(*dyn_args, **kwargs):
        full = dict(fixed)
        full.update(zip(dyn_argnums, dyn_args, strict=True))
        return f.call_wrapped(*[full[i] for i in range(len(full))], **kwargs)
    return f._wrap(partial_call), tuple(args[i] for i in dyn_argnums)


# -- axes and donation --

def _is_none(x):
    return x is None


class _PytreeLeaf:
    def __repr__(self):
        return "pytree leaf"


def flatten_axes(name, treedef, axis_tree, *, kws=False, tupled_args=False):
    """The entry of ``axis_tree`` (a pytree prefix of ``treedef``, None as a leaf) for each
    leaf of ``treedef``, e.g. per-leaf vmap ``in_axes``.

    Raises ValueError naming the mismatches when ``axis_tree`` is not a prefix.

    Examples
    --------
    >>> from xjax import api_util, tree_util
    >>> treedef = tree_util.tree_structure(((1, 2), {"a": 3}))
    >>> api_util.flatten_axes("vmap in_axes", treedef, (0, None))
    [0, 0, None]
    """
    dummy = tree_unflatten(treedef, [_PytreeLeaf() for _ in range(treedef.num_leaves)])
    try:
        return prefix_leaves(axis_tree, dummy, is_leaf=_is_none)
    except (ValueError, TypeError):
        pass
    if kws:  # report on the positional arguments only
        treedef, _ = treedef_children(treedef)
        axis_tree, _ = axis_tree
        dummy = tree_unflatten(treedef, [_PytreeLeaf() for _ in range(treedef.num_leaves)])
    hint = ""
    if tupled_args:
        hint += (f" Note that {name} that are non-trivial pytrees should always be wrapped in "
                 "a tuple representing the argument list.")
        if len(treedef.children()) == 1 and not prefix_errors((axis_tree,), dummy, _is_none):
            hint += (" In particular, you're passing in a single argument which means that "
                     f"{name} might need to be wrapped in a singleton tuple.")
    errors = prefix_errors(axis_tree, dummy, _is_none)
    details = "\n  ".join(e(name).args[0] for e in errors)
    raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                     f"value; {hint}\n  Mismatch details ({len(errors)} found):\n  {details}")


def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True) -> tuple:
    """Whether each leaf of ``in_tree`` is donated.

    ``in_tree`` is the structure of ``(args, kwargs)`` (of ``args`` alone with
    ``kws=False``); a leaf is donated when its positional argument's index is in
    ``donate_argnums`` or its keyword's name in ``donate_argnames``.

    Examples
    --------
    >>> from xjax import api_util, tree_util
    >>> tree = tree_util.tree_structure(((1, (2, 3)), {"b": 4}))
    >>> api_util.donation_vector((1,), ("b",), tree)
    (False, True, True, True)
    """
    if kws:
        args_tree, kwargs_tree = treedef_children(in_tree)
    else:
        args_tree, kwargs_tree = in_tree, None
    flags: list = []
    for i, arg in enumerate(args_tree.children()):
        flags.extend([i in donate_argnums] * arg.num_leaves)
    if kwargs_tree is not None:
        for key, value in zip(kwargs_tree.node_data()[1], kwargs_tree.children()):
            flags.extend([key in donate_argnames] * value.num_leaves)
    return tuple(flags)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple:
    """``donate_argnums`` as positions among the non-static arguments (sorted, unique).

    Raises ValueError if an argument is both static and donated.

    Examples
    --------
    >>> from xjax import api_util
    >>> api_util.rebase_donate_argnums((3, 4), (0, 1))
    (1, 2)
    """
    static, donate = sorted(set(static_argnums)), sorted(set(donate_argnums))
    if set(static) & set(donate):
        raise ValueError(f"`static_argnums` {static} and `donate_argnums` {donate} cannot "
                         "intersect.")
    return tuple(d - sum(s < d for s in static) for d in donate)


# -- debug info and safe_map --

def _arg_names(fun, args, kwargs, static_argnums, static_argnames, signature):
    """The name of each non-static leaf of ``(args, kwargs)``: parameter name and key path
    (``x[0]``, ``params['w']``), positional arguments first, then keywords sorted."""
    n = len(args)
    static_nums = {i % n for i in static_argnums if -n <= i < n}
    named = None
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            bound = None
        if bound is not None:
            var_kw = next((p.name for p in signature.parameters.values()
                           if p.kind == inspect.Parameter.VAR_KEYWORD), None)
            positional = [(name, v, i in static_nums) for i, (name, v) in
                          enumerate((k, v) for k, v in bound.arguments.items()
                                    if k not in kwargs and k != var_kw)]
            keywords = [(k if k in bound.arguments else f"{var_kw}['{k}']", kwargs[k],
                         k in static_argnames) for k in sorted(kwargs)]
            named = positional + keywords
    if named is None:
        named = [(f"args[{i}]", a, i in static_nums) for i, a in enumerate(args)]
        named += [(f"kwargs['{k}']", kwargs[k], k in static_argnames) for k in sorted(kwargs)]
    return [name + keystr(path) for name, value, static in named if not static
            for path, _ in tree_flatten_with_path(value)[0]]


def debug_info(traced_for, fun, args, kwargs, *, static_argnums=(), static_argnames=(),
               result_paths_thunk=None, sourceinfo=None, signature=None) -> DebugInfo:
    """Where ``fun`` comes from and the names of its non-static argument leaves, for error
    messages of a transformation named ``traced_for``.

    Returns xjax's ``DebugInfo`` (``traced_for``, ``func_name``, ``location``,
    ``arg_names``); ``result_paths_thunk`` and ``sourceinfo`` are accepted for JAX's
    signature and not used.

    Examples
    --------
    >>> from xjax import api_util
    >>> def f(x, y, *, z=1):
    ...     return x
    >>> api_util.debug_info("jit", f, ((1, 2), 3), {"z": 4}, static_argnums=(1,)).arg_names
    ['x[0]', 'x[1]', 'z']
    """
    if signature is None:
        try:
            signature = inspect.signature(fun)
        except (ValueError, TypeError):
            signature = None
    names = _arg_names(fun, tuple(args), dict(kwargs), static_argnums, set(static_argnames),
                       signature)
    return DebugInfo(traced_for, fun, names)


def safe_map(f, *iterables) -> list:
    """``list(map(f, *iterables))``, raising ValueError when the iterables' lengths differ.

    Examples
    --------
    >>> from xjax import api_util
    >>> api_util.safe_map(lambda a, b: a + b, [1, 2], [3, 4])
    [4, 6]
    """
    if not iterables:
        raise TypeError("safe_map requires at least 2 arguments")
    lists = [list(it) for it in iterables]
    for k, other in enumerate(lists[1:], start=2):
        if len(other) != len(lists[0]):
            longer_or_shorter = "shorter" if len(other) < len(lists[0]) else "longer"
            raise ValueError(f"safe_map() argument {k} is {longer_or_shorter} than argument 1")
    return list(map(f, *lists))
