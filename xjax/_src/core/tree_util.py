"""Utilities for pytrees: nested containers of arrays (mirrors ``jax.tree_util``).

The flattening machinery lives in :mod:`xjax.core.pytree`; this module adds the public
functions built on it (``tree_map`` with JAX's structure-error messages, reductions,
transposition, broadcasting), :class:`Partial` and :func:`register_dataclass`.

The public functions see pytrees as JAX does: a *leaf node* (a typed PRNG key array) is a
leaf, though xjax's transformations, which flatten with ``core.pytree`` directly, take it
apart into its data.

>>> import xjax.tree_util as tu
>>> tu.tree_map(lambda x: x * 2, {'a': 1, 'b': (2, None)})
{'a': 2, 'b': (4, None)}
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import textwrap

from xjax._src.core import pytree as _pytree
from xjax._src.core.pytree import (  # noqa: F401  (re-exported)
    DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, PyTreeDef, SequenceKey,
    keystr, register_pytree_node, register_pytree_with_keys, tree_unflatten,
    treedef_children, treedef_is_leaf, treedef_is_strict_leaf, treedef_tuple)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "all_leaves", "default_registry", "flatten_one_level",
    "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]


# --------------------------------------------------------------------------------------------
# flattening, with leaf nodes as leaves


def tree_flatten(tree, is_leaf=None):
    """Flatten a pytree into its leaves and a :class:`PyTreeDef`.

    Parameters
    ----------
    tree : pytree
        Nested tuples, lists, dicts, None, namedtuples and registered nodes; a typed PRNG
        key array is a leaf.
    is_leaf : callable, optional
        Called on every subtree before it is taken apart; True makes it a leaf.

    Returns
    -------
    leaves : list
    treedef : PyTreeDef

    Examples
    --------
    >>> tree_flatten((1, [2, 3], {'a': 4, 'b': None}))
    ([1, 2, 3, 4], PyTreeDef((*, [*, *], {'a': *, 'b': None})))
    """
    return _pytree.user_flatten(tree, is_leaf)


def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves of a pytree, in flattening order.

    Examples
    --------
    >>> tree_leaves({'b': 1, 'a': (2, None)})
    [2, 1]
    """
    return _pytree.user_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    """The :class:`PyTreeDef` of a pytree.

    Examples
    --------
    >>> tree_structure([1, (2, 3)])
    PyTreeDef([*, (*, *)])
    """
    return _pytree.user_flatten(tree, is_leaf)[1]


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path: bool = False):
    """Flatten a pytree into ``(key_path, leaf)`` pairs and a :class:`PyTreeDef`.

    Examples
    --------
    >>> tree_flatten_with_path({'a': [5]})[0]
    [((DictKey(key='a'), SequenceKey(idx=0)), 5)]
    """
    return _pytree.user_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path: bool = False) -> list:
    """The ``(key_path, leaf)`` pairs of a pytree, in flattening order."""
    return _pytree.user_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def is_tree_node(typ) -> bool:
    """True if instances of type ``typ`` are pytree nodes rather than leaves."""
    return not _pytree.is_leaf_node_type(typ) and _pytree.is_tree_node(typ)


def _check_node(tree) -> None:
    if _pytree.is_leaf_node_type(type(tree)):
        raise ValueError(f"can't tree-flatten type: {type(tree)}")


def flatten_one_level(tree):
    """Take one node apart: ``(children, aux_data)``; ``ValueError`` for a leaf."""
    _check_node(tree)
    return _pytree.flatten_one_level(tree)


def flatten_one_level_with_keys(tree):
    """Take one node apart with keys: ``(((key, child), ...), aux_data)``."""
    _check_node(tree)
    return _pytree.flatten_one_level_with_keys(tree)


class _Unspecified:
    def __repr__(self):
        return "<unspecified>"


_UNSPECIFIED = _Unspecified()

# --------------------------------------------------------------------------------------------
# structure errors


def prefix_errors(prefix_tree, full_tree, is_leaf=None) -> list:
    """Where ``prefix_tree`` fails to be a prefix of ``full_tree``: a list of functions
    ``name -> ValueError`` describing each disagreement (empty if it is a prefix)."""
    return list(_prefix_errors((), prefix_tree, full_tree, is_leaf))


def _is_strict_leaf(x, is_leaf) -> bool:
    if is_leaf is not None and is_leaf(x):
        return True
    return not is_tree_node(type(x))


def _prefix_errors(path, prefix, full, is_leaf):
    if _is_strict_leaf(prefix, is_leaf):
        return  # a leaf is a prefix of anything
    where = keystr(path)
    if type(prefix) is not type(full):
        yield lambda name: ValueError(
            "pytree structure error: different types at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            "but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full)}.")
        return
    p_pairs, p_meta = flatten_one_level_with_keys(prefix)
    f_pairs, f_meta = flatten_one_level_with_keys(full)
    p_keys = [k for k, _ in p_pairs]
    f_keys = [k for k, _ in f_pairs]
    if isinstance(prefix, (list, tuple)) and len(prefix) != len(full):
        ty = type(prefix).__name__
        yield lambda name: ValueError(
            f"pytree structure error: different lengths of {ty} at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type {ty} of "
            f"length {len(prefix)}, but the full pytree has a subtree of the same type but "
            f"of length {len(full)}.")
        return
    if len(p_pairs) != len(f_pairs):
        try:
            diff = set(p_keys).symmetric_difference(f_keys)
        except TypeError:
            diff = None
        simple = lambda ks: " ".join(keystr((k,), simple=True) for k in ks)  # noqa: E731
        yield lambda name: ValueError(
            "pytree structure error: different numbers of pytree children at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            f"with {len(p_pairs)} child keys\n    {simple(p_keys)}\n"
            "but at the same key path the full pytree has a subtree of the same type but "
            f"with {len(f_pairs)} child keys\n    {simple(f_keys)}\n"
            + ("" if diff is None else
               f"so the symmetric difference on key sets is\n    {simple(diff)}"))
        return
    if p_meta != f_meta:
        p_str, f_str = str(p_meta), str(f_meta)
        delta = textwrap.indent("\n".join(difflib.ndiff(p_str.splitlines(),
                                                        f_str.splitlines())), "    ")
        yield lambda name: ValueError(
            "pytree structure error: different pytree metadata at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            f"with metadata\n    {p_str}\n"
            "but at the same key path the full pytree has a subtree of the same type but "
            f"with metadata\n    {f_str}\n"
            f"so the diff in the metadata at these pytree nodes is\n{delta}")
        return
    for (k, a), (_, b) in zip(p_pairs, f_pairs):
        yield from _prefix_errors(path + (k,), a, b, is_leaf)


def _structure_error(name, prefix, full, is_leaf, original):
    err = next(_prefix_errors((), prefix, full, is_leaf), None)
    return original if err is None else err(name)


# --------------------------------------------------------------------------------------------
# mapping and reducing


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` leafwise; with several trees, ``f`` gets the matching leaves of each.

    Each tree in ``rest`` must have ``tree``'s structure as a prefix: at each leaf of ``tree``
    the whole corresponding subtree of the others is passed to ``f``.

    Parameters
    ----------
    f : callable
        Takes ``1 + len(rest)`` arguments.
    tree : pytree
    *rest : pytrees
    is_leaf : callable, optional

    Returns
    -------
    pytree
        ``tree``'s structure with the results of ``f`` as leaves.

    Examples
    --------
    >>> tree_map(lambda x, y: x + y, [1, {'a': 2}], [10, {'a': 20}])
    [11, {'a': 22}]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves]
    for r in rest:
        try:
            all_leaves.append(treedef.flatten_up_to(r))
        except ValueError as e:
            raise _structure_error("tree_map tree", tree, r, is_leaf, e) from None
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path: bool = False):
    """Like :func:`tree_map`, but ``f`` also receives each leaf's key path first.

    Examples
    --------
    >>> tree_map_with_path(lambda p, x: keystr(p), {'a': [1]})
    {'a': ["['a'][0]"]}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    all_leaves = [[x for _, x in pairs]]
    for r in rest:
        try:
            all_leaves.append(treedef.flatten_up_to(r))
        except ValueError as e:
            plain = None if is_leaf_takes_path else is_leaf
            raise _structure_error("tree_map_with_path tree", tree, r, plain, e) from None
    paths = [p for p, _ in pairs]
    return treedef.unflatten([f(p, *xs) for p, *xs in zip(paths, *all_leaves)])


def tree_reduce(function, tree, initializer=_UNSPECIFIED, is_leaf=None):
    """Fold ``function`` over the leaves, left to right (``functools.reduce``).

    Examples
    --------
    >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)])
    6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def _pairwise_reduce(seq, op):
    if len(seq) == 1:
        return seq[0]
    half = len(seq) // 2
    return op(_pairwise_reduce(seq[:half], op), _pairwise_reduce(seq[half:], op))


def tree_reduce_associative(operation, tree, *, identity=_UNSPECIFIED, is_leaf=None):
    """Reduce the leaves with an associative ``operation`` as a balanced tree of calls.

    Examples
    --------
    >>> tree_reduce_associative(lambda a, b: a + b, [1, (2, 3)])
    6
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _pairwise_reduce(leaves, operation)


def tree_all(tree, *, is_leaf=None) -> bool:
    """True if every leaf is truthy (True for a tree without leaves).

    Examples
    --------
    >>> tree_all([True, (1, None)])
    True
    """
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable, is_leaf=None) -> bool:
    """True if every element of ``iterable`` is a leaf (``None`` is not).

    Examples
    --------
    >>> all_leaves([1, 2.0]), all_leaves([1, (2,)])
    (True, False)
    """
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef, pytree_to_transpose):
    """Turn an outer tree of inner trees into an inner tree of outer trees.

    ``inner_treedef=None`` infers the inner structure from the first outer leaf.

    Examples
    --------
    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_n, outer_n = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_n * outer_n:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * inner_n:(i + 1) * inner_n] for i in range(outer_n)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])


def broadcast_prefix(prefix_tree, full_tree, is_leaf=None) -> list:
    """The leaves of ``full_tree`` with each replaced by the leaf of ``prefix_tree`` above it."""
    out: list = []
    try:
        tree_map(lambda x, sub: out.extend([x] * tree_structure(sub).num_leaves),
                 prefix_tree, full_tree, is_leaf=is_leaf)
    except ValueError as e:
        raise _structure_error("broadcast_prefix prefix_tree", prefix_tree, full_tree,
                               is_leaf, e) from None
    return out


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """Broadcast the leaves of a prefix tree over the structure of ``full_tree``.

    Examples
    --------
    >>> tree_broadcast((1, 2), (0, {'a': 0, 'b': 0}))
    (1, {'a': 2, 'b': 2})
    """
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf)
    return tree_structure(full_tree).unflatten(leaves)


# --------------------------------------------------------------------------------------------
# registration helpers


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass-like type: ``data_fields`` are children, ``meta_fields`` static.

    For a dataclass both may be omitted: fields marked ``field(metadata={'static': True})``
    (see :func:`xjax.tree.static`) are meta fields, the rest data fields. Usable as a
    decorator; returns ``nodetype``.

    Examples
    --------
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Point:
    ...     x: float
    ...     y: float
    >>> tree_leaves(Point(1.0, 2.0))
    [1.0, 2.0]
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            f"specified when either is specified. Got {data_fields=} "
                            f"{meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when nodetype is not a dataclass. Got {nodetype=}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init:
            msg = ("data_fields and meta_fields must include all dataclass fields with "
                   "``init=True`` and only them.")
            if init - given:
                msg += (f" Missing fields: {init - given}. Add them to drop_fields to "
                        "suppress this error.")
            if given - init:
                msg += f" Unexpected fields: {given - init}."
            raise ValueError(msg)
    if set(data_fields) & set(meta_fields):
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping fields: "
                         f"{set(data_fields) & set(meta_fields)}.")

    def flatten(x):
        return ([getattr(x, n) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def register_pytree_node_class(cls):
    """Class decorator: register ``cls`` using its ``tree_flatten`` method and
    ``tree_unflatten`` classmethod. Returns ``cls``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: register ``cls`` using its ``tree_flatten_with_keys`` method,
    ``tree_unflatten`` classmethod and (if defined) ``tree_flatten`` method."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_static(cls):
    """Register ``cls`` as a pytree with no leaves: instances are static structure (their
    aux data), so they must be hashable. Returns ``cls``."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


class PyTreeRegistry:
    """The pytree node registry; :data:`default_registry` is the one in use."""

    def flatten(self, tree, is_leaf=None):
        """Same as :func:`tree_flatten`."""
        return tree_flatten(tree, is_leaf)

    def flatten_one_level(self, tree):
        """Same as :func:`flatten_one_level`."""
        return flatten_one_level(tree)

    def flatten_with_path(self, tree, is_leaf=None):
        """Same as :func:`tree_flatten_with_path`."""
        return tree_flatten_with_path(tree, is_leaf)

    def is_node(self, typ) -> bool:
        """Same as :func:`is_tree_node`."""
        return is_tree_node(typ)

    def register_node(self, nodetype, flatten_func, unflatten_func,
                      flatten_with_keys_func=None):
        """Same as :func:`register_pytree_node`."""
        register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


default_registry = PyTreeRegistry()


class _HashableCallableShim:
    """Wraps a ``functools.partial`` given to :class:`Partial` so that ``functools.partial``
    does not merge the two: exactly the outer arguments are the outer Partial's children."""

    __slots__ = ("fun",)

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"

    func = property(lambda self: self.fun.func)
    args = property(lambda self: self.fun.args)
    keywords = property(lambda self: self.fun.keywords)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: the function is static (aux data) and the
    bound positional and keyword arguments are children, so it can be passed through
    transformations.

    Examples
    --------
    >>> add_one = Partial(lambda x, y: x + y, 1)
    >>> tree_leaves(add_one), add_one(2)
    ([1], 3)
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]))
