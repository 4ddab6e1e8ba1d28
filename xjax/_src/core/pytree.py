"""Pytrees: flattening nested containers to leaves and a structure (``PyTreeDef``), and back.

Semantics follow ``jax.tree_util``: ``None`` is a node with no children; tuples, lists,
dicts (keys sorted), namedtuples, ``OrderedDict``, ``defaultdict`` and registered classes are
nodes; everything else is a leaf. Subclasses of tuple/list/dict are leaves unless registered
(namedtuples excepted).

Speed matters because ``jit`` flattens its arguments on every call. A structure is a nested
tuple ``(kind, data, children, aux)`` compared and hashed by CPython's tuple code; a tuple or
list whose elements are all leaves is recognised with one C-level pass over the element
types; unflattening runs a function generated once per ``PyTreeDef`` that builds the whole
container in one expression.
"""

from __future__ import annotations

import collections
import threading

from typing import Any, TypeVar

from xjax._src.core import _pytree as _c_pytree

__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath",
           "SequenceKey", "keystr", "PyTreeDef", "tree_flatten", "tree_map",
           "tree_unflatten", "tree_leaves", "tree_structure", "register_pytree_node",
           "register_pytree_with_keys",
           "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
           "treedef_children", "treedef_is_leaf", "treedef_is_strict_leaf", "treedef_tuple",
           "tree_flatten_with_path", "tree_leaves_with_path", "register_leaf_node",
           "is_leaf_node_type", "user_flatten", "user_flatten_with_path"]

# Node kinds. A node is (kind, data, children, aux): data is hashable (dict keys, a type),
# aux is a custom node's auxiliary data (compared, hashed only when hashable).
LEAF, NONE, TUPLE, LIST, DICT, NAMEDTUPLE, CUSTOM = range(7)
_LEAF = (LEAF, None, (), None)
_NONE_NODE = (NONE, None, (), None)


class _Entry:
    """A registered node type: how to take an instance apart and put it back."""
    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys")

    def __init__(self, typ, flatten, unflatten, flatten_with_keys):
        self.type, self.flatten, self.unflatten = typ, flatten, unflatten
        self.flatten_with_keys = flatten_with_keys


_registry: dict = {}  # type -> _Entry, for custom nodes
# type -> node kind, filled lazily; every type seen is classified once.
_kinds: dict = {type(None): NONE, tuple: TUPLE, list: LIST, dict: DICT}
_leaf_set: set = set()  # types known to be leaves


def _classify(typ) -> int:
    if typ in _registry:
        kind, handler = CUSTOM, _h_custom
    elif issubclass(typ, tuple) and hasattr(typ, "_fields"):
        kind, handler = NAMEDTUPLE, _h_namedtuple
    else:
        kind, handler = LEAF, None
        _leaf_set.add(typ)
    _kinds[typ] = kind
    _handlers[typ] = handler
    return kind


def _sorted_keys(d) -> tuple:
    try:
        return tuple(sorted(d))
    except Exception:
        raise ValueError("Comparator raised exception while sorting pytree dictionary "
                         "keys.") from None


# Interned nodes and PyTreeDefs for tuples and lists of n leaves: the common case.
_flat_tuple_nodes: dict = {}
_flat_list_nodes: dict = {}
_leaf_children_cache: dict = {}
_EMPTY_DICT_NODE = (DICT, (), (), None)


def _leaf_children(n: int) -> tuple:
    ch = _leaf_children_cache.get(n)
    if ch is None:
        ch = _leaf_children_cache[n] = (_LEAF,) * n
    return ch


def _flat_node(kind: int, n: int):
    cache = _flat_tuple_nodes if kind == TUPLE else _flat_list_nodes
    node = cache.get(n)
    if node is None:
        node = cache[n] = (kind, None, _leaf_children(n), None)
    return node


# --------------------------------------------------------------------------------------------
# key paths

KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


class _Key:
    """Base of the key types: one field, value equality, JAX's repr and str."""
    __slots__ = ()
    _field = ""

    def __init__(self, value):
        object.__setattr__(self, self._field, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _value(self):
        return getattr(self, self._field)

    def __eq__(self, other):
        return type(other) is type(self) and self._value() == other._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value()!r})"

    def __reduce__(self):
        return (type(self), (self._value(),))


class DictKey(_Key):
    """Key of a dict entry; prints as ``['a']``."""
    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key):
        super().__init__(key)

    def __str__(self):
        return f"[{self.key!r}]"


class SequenceKey(_Key):
    """Index into a tuple or list; prints as ``[0]``."""
    __slots__ = ("idx",)
    __match_args__ = ("idx",)
    _field = "idx"

    def __init__(self, idx):
        super().__init__(idx)

    def __str__(self):
        return f"[{self.idx!r}]"


class GetAttrKey(_Key):
    """Attribute of a namedtuple or dataclass; prints as ``.name``."""
    __slots__ = ("name",)
    __match_args__ = ("name",)
    _field = "name"

    def __init__(self, name):
        super().__init__(name)

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """Position among a custom node's children; prints as ``[<flat index 0>]``."""
    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key):
        super().__init__(key)

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """Format a key path: ``"['a'][0].x"``, or with ``simple=True`` just the keys' values
    joined by ``separator``.

    Examples
    --------
    >>> keystr((DictKey('a'), SequenceKey(0)))
    "['a'][0]"
    >>> keystr((DictKey('a'), SequenceKey(0)), simple=True, separator='/')
    'a/0'
    """
    if simple:
        return separator.join(str(k._value()) if isinstance(k, _Key) else str(k)
                              for k in keys)
    return separator.join(str(k) for k in keys)


# --------------------------------------------------------------------------------------------
# flattening


def _flatten_python(x, leaves) -> tuple:
    """The node of ``x``, its leaves appended to ``leaves`` (what the C ``_flatten`` does)."""
    h = _handlers.get(type(x), _flatten_unknown)
    if h is None:  # a leaf
        leaves.append(x)
        return _LEAF
    return h(x, leaves)


def _flatten_unknown(x, leaves) -> tuple:
    _classify(type(x))
    return _flatten(x, leaves)


def _all_leaf_types(xs) -> bool:
    if len(xs) <= 8:  # a bytecode loop beats building iterators for a few elements
        for c in xs:
            if type(c) not in _leaf_set:
                return False
        return True
    return _leaf_set.issuperset(map(type, xs))


def _flatten_seq_python(xs, leaves) -> tuple:
    """Flatten each of ``xs`` (handling leaves inline: one call less per leaf); what the C
    ``_flatten_seq`` does."""
    out = []
    for c in xs:
        h = _handlers.get(type(c), _flatten_unknown)
        if h is None:
            leaves.append(c)
            out.append(_LEAF)
        else:
            out.append(h(c, leaves))
    return tuple(out)


def _h_tuple(x, leaves) -> tuple:
    if len(x) <= 8:
        for c in x:
            if type(c) not in _leaf_set:
                return (TUPLE, None, _flatten_seq_python(x, leaves), None)
    elif not _leaf_set.issuperset(map(type, x)):
        return (TUPLE, None, _flatten_seq_python(x, leaves), None)
    leaves.extend(x)
    node = _flat_tuple_nodes.get(len(x))
    return node if node is not None else _flat_node(TUPLE, len(x))


def _h_list(x, leaves) -> tuple:
    if _all_leaf_types(x):
        leaves.extend(x)
        node = _flat_list_nodes.get(len(x))
        return node if node is not None else _flat_node(LIST, len(x))
    return (LIST, None, _flatten_seq_python(x, leaves), None)


def _h_none(x, leaves) -> tuple:
    return _NONE_NODE


def _h_dict(x, leaves) -> tuple:
    if not x:
        return _EMPTY_DICT_NODE
    keys = _sorted_keys(x)
    return (DICT, keys, _flatten_seq_python(map(x.__getitem__, keys), leaves), None)


def _h_namedtuple(x, leaves) -> tuple:
    return (NAMEDTUPLE, type(x), _flatten_seq(x, leaves), None)


def _h_custom(x, leaves) -> tuple:
    typ = type(x)
    children, aux = _registry[typ].flatten(x)
    if type(children) is not tuple and type(children) is not list:
        children = tuple(children)
    return (CUSTOM, typ, _flatten_seq(children, leaves), aux)


# type -> flatten handler; None marks a leaf type. Unknown types are classified on sight.
_handlers: dict = {tuple: _h_tuple, list: _h_list, dict: _h_dict, type(None): _h_none}

# _flatten and _flatten_seq run in C (core/_pytree.c): jit flattens its arguments on every
# call. The C functions do the built-in containers themselves (recognising the handlers
# above) and call every other handler; they make the same nodes as _flatten_python and
# _flatten_seq_python, kept as the reference (tests/core/test_pytree.py compares them).
_c_pytree.configure(
    handlers=_handlers, h_tuple=_h_tuple, h_list=_h_list, h_dict=_h_dict, h_none=_h_none,
    flatten_unknown=_flatten_unknown, sorted_keys=_sorted_keys, flat_node=_flat_node,
    flat_tuple_nodes=_flat_tuple_nodes, flat_list_nodes=_flat_list_nodes, leaf_node=_LEAF,
    none_node=_NONE_NODE, empty_dict_node=_EMPTY_DICT_NODE, kind_tuple=TUPLE,
    kind_list=LIST, kind_dict=DICT)
_flatten, _flatten_seq = _c_pytree.flatten, _c_pytree.flatten_seq


def _flatten_is_leaf(x, leaves, is_leaf) -> tuple:
    if is_leaf(x):
        leaves.append(x)
        return _LEAF
    typ = type(x)
    kind = _kinds.get(typ)
    if kind is None:
        kind = _classify(typ)
    if kind == LEAF:
        leaves.append(x)
        return _LEAF
    if kind == NONE:
        return _NONE_NODE
    if kind == DICT:
        keys = _sorted_keys(x)
        return (DICT, keys, tuple([_flatten_is_leaf(x[k], leaves, is_leaf) for k in keys]),
                None)
    if kind == CUSTOM:
        children, aux = _registry[typ].flatten(x)
        data = typ
    else:
        children, aux, data = x, None, (typ if kind == NAMEDTUPLE else None)
    return (kind, data, tuple([_flatten_is_leaf(c, leaves, is_leaf) for c in children]), aux)


def _keyed_children(x, kind, typ):
    """(key, child) pairs and aux data of a node, with JAX's key types."""
    if kind == TUPLE or kind == LIST:
        return [(SequenceKey(i), c) for i, c in enumerate(x)], None
    if kind == DICT:
        keys = _sorted_keys(x)
        return [(DictKey(k), x[k]) for k in keys], keys
    if kind == NAMEDTUPLE:
        return [(GetAttrKey(f), c) for f, c in zip(typ._fields, x)], None
    if kind == NONE:
        return [], None
    entry = _registry[typ]
    if entry.flatten_with_keys is not None:
        pairs, aux = entry.flatten_with_keys(x)
        return list(pairs), aux
    children, aux = entry.flatten(x)
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux


def _flatten_with_path(x, path, out, is_leaf, takes_path) -> tuple:
    if is_leaf is not None and (is_leaf(path, x) if takes_path else is_leaf(x)):
        out.append((path, x))
        return _LEAF
    typ = type(x)
    kind = _kinds.get(typ)
    if kind is None:
        kind = _classify(typ)
    if kind == LEAF:
        out.append((path, x))
        return _LEAF
    if kind == NONE:
        return _NONE_NODE
    pairs, aux = _keyed_children(x, kind, typ)
    children = tuple([_flatten_with_path(c, path + (k,), out, is_leaf, takes_path)
                      for k, c in pairs])
    if kind == DICT:
        return (DICT, aux, children, None)
    if kind == CUSTOM:
        return (CUSTOM, typ, children, aux)
    return (kind, typ if kind == NAMEDTUPLE else None, children, None)



def prefix_leaves(prefix, tree, is_leaf=None) -> list:
    """The leaf of ``prefix`` above each leaf of ``tree`` (``prefix`` is a pytree prefix of
    ``tree``, e.g. vmap's ``in_axes``); ValueError or TypeError when it is not a prefix."""
    leaves, prefix_tree = tree_flatten(prefix, is_leaf=is_leaf)
    out: list = []
    for leaf, subtree in zip(leaves, prefix_tree.flatten_up_to(tree), strict=True):
        out.extend([leaf] * len(tree_flatten(subtree)[0]))
    return out


def tree_flatten(tree, is_leaf=None):
    """Leaves and :class:`PyTreeDef` of ``tree``, as transformations see it: every registered
    node is taken apart, typed key arrays included (users' view:
    :func:`xjax._src.core.tree_util.tree_flatten`, where key arrays are leaves)."""
    if is_leaf is None:
        typ = type(tree)
        if typ is tuple or typ is list:  # the common case: a flat sequence of leaves
            if len(tree) <= 8:
                for c in tree:
                    if type(c) not in _leaf_set:
                        break
                else:
                    return list(tree), _flat_treedef(typ, len(tree))
            elif _leaf_set.issuperset(map(type, tree)):
                return list(tree), _flat_treedef(typ, len(tree))
        leaves = []
        node = _flatten(tree, leaves)
    else:
        leaves = []
        node = _flatten_is_leaf(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def flatten_call_args(args: tuple, kwargs: dict):
    """``tree_flatten((args, kwargs))`` for a call's positional tuple and keyword dict, the
    outer pair's node built directly when there are no keywords (jit's dispatch path)."""
    if kwargs:
        return tree_flatten((args, kwargs))
    leaves = []
    node = (TUPLE, None, (_flatten(args, leaves), _EMPTY_DICT_NODE), None)
    return leaves, PyTreeDef(node, len(leaves))


def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves of a pytree, in flattening order.

    Examples
    --------
    >>> tree_leaves({'b': 1, 'a': (2, None)})
    [2, 1]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    """The :class:`PyTreeDef` of a pytree.

    Examples
    --------
    >>> tree_structure([1, (2, 3)])
    PyTreeDef([*, (*, *)])
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_unflatten(treedef: PyTreeDef, leaves):
    """Rebuild a pytree from a :class:`PyTreeDef` and an iterable of leaves.

    Examples
    --------
    >>> tree_unflatten(tree_structure((1, [2])), ['a', 'b'])
    ('a', ['b'])
    """
    return treedef.unflatten(leaves)


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path: bool = False):
    """Flatten a pytree into ``(key_path, leaf)`` pairs and a :class:`PyTreeDef`.

    Examples
    --------
    >>> tree_flatten_with_path({'a': [5]})[0]
    [((DictKey(key='a'), SequenceKey(idx=0)), 5)]
    """
    out: list = []
    node = _flatten_with_path(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, PyTreeDef(node, len(out))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path: bool = False) -> list:
    """The ``(key_path, leaf)`` pairs of a pytree, in flattening order."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


# --------------------------------------------------------------------------------------------
# PyTreeDef


def _count_leaves(node) -> int:
    if node is _LEAF or node[0] == LEAF:
        return 1
    return sum(_count_leaves(c) for c in node[2])


def _count_nodes(node) -> int:
    return 1 + sum(_count_nodes(c) for c in node[2])


def _structure_hash(node) -> int:
    # For nodes whose aux data is unhashable: hash everything but the aux data.
    return hash((node[0], node[1], tuple(_structure_hash(c) for c in node[2])))


def _node_repr(node) -> str:
    kind, data, children, aux = node
    if kind == LEAF:
        return "*"
    if kind == NONE:
        return "None"
    parts = [_node_repr(c) for c in children]
    if kind == TUPLE:
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if kind == LIST:
        return "[" + ", ".join(parts) + "]"
    if kind == DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(data, parts)) + "}"
    label = f"namedtuple[{data.__name__}]" if kind == NAMEDTUPLE else f"{data.__name__}[{aux}]"
    return f"CustomNode({label}, [{', '.join(parts)}])"


def _node_data(node):
    kind, data, _, aux = node
    if kind == LEAF:
        return None
    if kind == DICT:
        return dict, list(data)
    if kind == CUSTOM:
        return data, aux
    return {NONE: type(None), TUPLE: tuple, LIST: list}.get(kind, data), None


_MAX_CODEGEN_DEPTH = 60  # CPython's parser allows at most 200 nested brackets
_MAX_CODEGEN_NODES = 4000


def _build(node, it):
    """Rebuild from an iterator of leaves (the fallback for very deep or large trees)."""
    kind, data, children, aux = node
    if kind == LEAF:
        return next(it)
    if kind == NONE:
        return None
    vals = [_build(c, it) for c in children]
    if kind == TUPLE:
        return tuple(vals)
    if kind == LIST:
        return vals
    if kind == DICT:
        return dict(zip(data, vals))
    if kind == NAMEDTUPLE:
        return data(*vals)
    return _registry[data].unflatten(aux, tuple(vals))


def _compile_unflatten(node, num_leaves):
    """A function ``leaves -> tree`` building the whole tree in one generated expression.

    Constants (dict keys, types, aux data, unflatten functions) live in the function's
    namespace, never in the source text.
    """
    if node is _LEAF:
        return lambda leaves: leaves[0]
    if node[0] in (TUPLE, LIST) and all(c is _LEAF for c in node[2]):
        return tuple if node[0] == TUPLE else list
    if _count_nodes(node) > _MAX_CODEGEN_NODES:
        return lambda leaves: _build(node, iter(leaves))
    ns: dict = {}
    counter = [0]

    def const(value) -> str:
        name = f"_c{len(ns)}"
        ns[name] = value
        return name

    def expr(n, depth) -> str:
        if depth > _MAX_CODEGEN_DEPTH:
            raise RecursionError
        kind, data, children, aux = n
        if kind == LEAF:
            counter[0] += 1
            return f"l[{counter[0] - 1}]"
        if kind == NONE:
            return "None"
        parts = [expr(c, depth + 1) for c in children]
        body = ", ".join(parts)
        if kind == TUPLE:
            return f"({body}{',' if len(parts) == 1 else ''})"
        if kind == LIST:
            return f"[{body}]"
        if kind == DICT:
            return "{" + ", ".join(f"{const(k)}: {p}" for k, p in zip(data, parts)) + "}"
        if kind == NAMEDTUPLE:
            return f"{const(data)}({body})"
        unflatten = const(_registry[data].unflatten)
        return f"{unflatten}({const(aux)}, ({body}{',' if len(parts) == 1 else ''}))"

    try:
        source = f"lambda l: {expr(node, 0)}"
    except RecursionError:
        return lambda leaves: _build(node, iter(leaves))
    return eval(source, ns)  # noqa: S307  (generated from the structure only)


class PyTreeDef:
    """The structure of a pytree: its containers without its leaves.

    Hashable and comparable; ``repr`` prints like JAX's, e.g.
    ``PyTreeDef((*, [*, *], {'a': *, 'b': None}))``.
    """

    __slots__ = ("_node", "num_leaves", "_hash", "_unflatten_fn", "__weakref__")

    def __init__(self, node, num_leaves: int | None = None):
        self._node = node
        self.num_leaves = _count_leaves(node) if num_leaves is None else num_leaves
        self._hash = None
        self._unflatten_fn = None

    @property
    def num_nodes(self) -> int:
        """Number of nodes, leaves and ``None`` included."""
        return _count_nodes(self._node)

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                h = hash(self._node)
            except TypeError:
                h = _structure_hash(self._node)
            self._hash = h
        return h

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not PyTreeDef:
            return NotImplemented
        return self.num_leaves == other.num_leaves and self._node == other._node

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __repr__(self):
        return f"PyTreeDef({_node_repr(self._node)})"

    __str__ = __repr__

    def __reduce__(self):
        return (PyTreeDef, (self._node, self.num_leaves))

    def unflatten(self, leaves):
        """Rebuild the tree with ``leaves`` (an iterable) in place of its leaves."""
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        n = len(leaves)
        if n != self.num_leaves:
            if n < self.num_leaves:
                raise ValueError(f"Too few leaves for PyTreeDef; expected {self.num_leaves}, "
                                 f"got {n}")
            raise ValueError(f"Too many leaves for PyTreeDef; expected {self.num_leaves}.")
        fn = self._unflatten_fn
        if fn is None:
            fn = self._unflatten_fn = _compile_unflatten(self._node, self.num_leaves)
        return fn(leaves)

    def flatten_up_to(self, tree) -> list:
        """Flatten ``tree`` only as deep as this structure: each of this structure's leaves
        takes the whole corresponding subtree of ``tree``.

        Raises ``ValueError`` where ``tree`` does not have this structure as a prefix.
        """
        out: list = []
        _flatten_up_to(self._node, tree, out)
        return out

    def children(self) -> list:
        """The structures of the root's children."""
        return [PyTreeDef(c) for c in self._node[2]]

    def node_data(self):
        """``(type, data)`` of the root node (``None`` for a leaf)."""
        return _node_data(self._node)

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by ``inner``."""
        def sub(n):
            if n[0] == LEAF:
                return inner._node
            return (n[0], n[1], tuple(sub(c) for c in n[2]), n[3])
        return PyTreeDef(sub(self._node), self.num_leaves * inner.num_leaves)

    def walk(self, f_node, f_leaf, leaves):
        """Fold over the tree: ``f_leaf(leaf)`` at leaves (identity if None), and
        ``f_node(children_results, node_data)`` at nodes, children first."""
        it = iter(leaves)

        def go(n):
            if n[0] == LEAF:
                leaf = next(it)
                return leaf if f_leaf is None else f_leaf(leaf)
            data = n[1] if n[0] == NAMEDTUPLE else _node_data(n)[1]
            return f_node(tuple(go(c) for c in n[2]), data)
        return go(self._node)

    @staticmethod
    def from_node_data_and_children(registry, node_data, children) -> PyTreeDef:
        """Build a structure from a root's ``(type, data)`` and its children's structures."""
        typ, data = node_data
        nodes = tuple(c._node for c in children)
        if typ is type(None):
            return PyTreeDef(_NONE_NODE, 0)
        if typ is tuple or typ is list:
            return PyTreeDef((TUPLE if typ is tuple else LIST, None, nodes, None))
        if typ is dict:
            return PyTreeDef((DICT, tuple(data), nodes, None))
        kind = _kinds.get(typ)
        if kind is None:
            kind = _classify(typ)
        if kind == NAMEDTUPLE:
            return PyTreeDef((NAMEDTUPLE, typ, nodes, None))
        if kind != CUSTOM:
            raise ValueError(f"Unknown pytree node type: {typ}")
        return PyTreeDef((CUSTOM, typ, nodes, data))


_flat_treedefs: dict = {}


def _flat_treedef(typ, n: int) -> PyTreeDef:
    td = _flat_treedefs.get((typ, n))
    if td is None:
        node = _flat_node(TUPLE if typ is tuple else LIST, n)
        td = _flat_treedefs[typ, n] = PyTreeDef(node, n)
        hash(td)
    return td


_NONE_PREFIX_HINT = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a tree-prefix "
    "of non-None values. To obtain the previous behavior, you can usually write:\n"
    "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
    "is_leaf=lambda x: x is None)")


def _flatten_up_to(node, x, out) -> None:
    kind, data, children, aux = node
    if kind == LEAF:
        out.append(x)
        return
    if kind == NONE:
        if x is not None:
            raise ValueError(f"Expected None, got {x!r}.{_NONE_PREFIX_HINT}")
        return
    if kind == TUPLE or kind == LIST:
        typ, name = (tuple, "Tuple") if kind == TUPLE else (list, "List")
        if type(x) is not typ:
            raise ValueError(f"Expected {typ.__name__}, got {x!r}.")
        if len(x) != len(children):
            raise ValueError(f"{name} arity mismatch: {len(x)} != {len(children)}; "
                             f"{typ.__name__}: {x!r}.")
        values = x
    elif kind == DICT:
        if type(x) is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if keys != data:
            raise ValueError(f"Dict key mismatch; expected keys: {list(data)}; "
                             f"present keys: {list(keys)}.")
        values = [x[k] for k in keys]
    elif kind == NAMEDTUPLE:
        if not (isinstance(x, tuple) and hasattr(type(x), "_fields")):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if type(x) is not data:
            raise ValueError(f"Named tuple type mismatch: expected type: {data!r}, "
                             f"tuple: {x!r}.")
        if len(x) != len(children):
            raise ValueError(f"Named tuple arity mismatch: {len(x)} != {len(children)}; "
                             f"tuple: {x!r}.")
        values = x
    else:
        if type(x) is not data:
            raise ValueError(f"Custom node type mismatch: expected type: {data!r}, "
                             f"value: {x!r}.")
        values, x_aux = _registry[data].flatten(x)
        values = tuple(values)
        if x_aux != aux:
            raise ValueError(f"Mismatch custom node data: {aux!r} != {x_aux!r}; "
                             f"value: {x!r}.")
        if len(values) != len(children):
            raise ValueError(f"Custom type arity mismatch: {len(values)} != "
                             f"{len(children)}; value: {x!r}.")
    for c, v in zip(children, values):
        _flatten_up_to(c, v, out)


def treedef_children(treedef: PyTreeDef) -> list:
    """The structures of a structure's root's children."""
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True if the structure has a single node (a leaf, ``None`` or an empty container)."""
    return not treedef._node[2]


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """True if the structure is exactly one leaf."""
    return treedef._node[0] == LEAF


def treedef_tuple(treedefs) -> PyTreeDef:
    """The structure of a tuple whose elements have the given structures.

    Examples
    --------
    >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
    PyTreeDef((*, [*, *]))
    """
    treedefs = list(treedefs)
    return PyTreeDef((TUPLE, None, tuple(t._node for t in treedefs), None),
                     sum(t.num_leaves for t in treedefs))


# --------------------------------------------------------------------------------------------
# registration


def _register(typ, flatten, unflatten, flatten_with_keys) -> None:
    if typ in _registry or typ in (tuple, list, dict, type(None)):
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {typ}.")
    _registry[typ] = _Entry(typ, flatten, unflatten, flatten_with_keys)
    _kinds[typ] = CUSTOM
    _handlers[typ] = _h_custom
    _leaf_set.discard(typ)


def register_pytree_node(nodetype, flatten_func, unflatten_func,
                         flatten_with_keys_func=None) -> None:
    """Make ``nodetype`` a pytree node.

    Parameters
    ----------
    nodetype : type
    flatten_func : callable
        ``x -> (children, aux_data)``; aux_data must be hashable and comparable.
    unflatten_func : callable
        ``(aux_data, children) -> x``.
    flatten_with_keys_func : callable, optional
        ``x -> (((key, child), ...), aux_data)``, used for key paths.
    """
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func,
                              flatten_func=None) -> None:
    """Make ``nodetype`` a pytree node whose children have keys (for key paths).

    ``flatten_with_keys`` is ``x -> (((key, child), ...), aux_data)``; ``flatten_func``
    defaults to it with the keys dropped.
    """
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys)


# -- leaf nodes: leaves to users, nodes to xjax's transformations --

_leaf_node_types: set = set()


class _LeafNodesSeen(threading.local):
    """How many leaf nodes this thread's fast flattening has taken apart."""
    count = 0


_leaf_nodes_seen = _LeafNodesSeen()


def _h_leaf_node(x, leaves) -> tuple:
    _leaf_nodes_seen.count += 1
    return _h_custom(x, leaves)


def register_leaf_node(nodetype, flatten_func, unflatten_func) -> None:
    """Make ``nodetype`` a *leaf node*: a node to this module's functions, which xjax's
    transformations flatten their arguments and results with, and a leaf to the public
    pytree functions (:func:`user_flatten`, behind ``xjax.tree_util`` and ``xjax.tree``).

    JAX's typed PRNG key arrays are leaves of an extended dtype; xjax's are such leaf nodes,
    whose key data the transformations trace.

    Parameters
    ----------
    nodetype : type
    flatten_func, unflatten_func : callable
        As for :func:`register_pytree_node`.
    """
    _register(nodetype, flatten_func, unflatten_func, None)
    _handlers[nodetype] = _h_leaf_node
    _leaf_node_types.add(nodetype)


def is_leaf_node_type(typ) -> bool:
    """Whether ``typ`` was registered with :func:`register_leaf_node`."""
    return typ in _leaf_node_types


def _is_leaf_node(x) -> bool:
    return type(x) in _leaf_node_types


def user_flatten(tree, is_leaf=None):
    """:func:`tree_flatten` as users see pytrees (JAX's): leaf nodes are leaves.

    Without ``is_leaf`` it takes the fast path, and again the slow one only when that met a
    leaf node (counted per thread).

    Examples
    --------
    >>> user_flatten((1, [2, None]))
    ([1, 2], PyTreeDef((*, [*, None])))
    """
    if is_leaf is None:
        seen = _leaf_nodes_seen.count
        out = tree_flatten(tree)
        if _leaf_nodes_seen.count == seen:
            return out
        return tree_flatten(tree, _is_leaf_node)
    return tree_flatten(tree, lambda x: is_leaf(x) or type(x) in _leaf_node_types)


def user_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path: bool = False):
    """:func:`tree_flatten_with_path` as users see pytrees: leaf nodes are leaves."""
    if is_leaf is None:
        return tree_flatten_with_path(tree, _is_leaf_node)
    if is_leaf_takes_path:
        return tree_flatten_with_path(
            tree, lambda p, x: is_leaf(p, x) or type(x) in _leaf_node_types, True)
    return tree_flatten_with_path(tree, lambda x: is_leaf(x) or type(x) in _leaf_node_types)


def is_tree_node(typ) -> bool:
    """True if instances of type ``typ`` are pytree nodes rather than leaves."""
    kind = _kinds.get(typ)
    return (kind if kind is not None else _classify(typ)) != LEAF


def flatten_one_level(tree):
    """Take one node apart: ``(children, aux_data)``; ``ValueError`` for a leaf."""
    typ = type(tree)
    kind = _kinds.get(typ)
    if kind is None:
        kind = _classify(typ)
    if kind == LEAF:
        raise ValueError(f"can't tree-flatten type: {typ}")
    if kind == TUPLE or kind == LIST:
        return tree, None
    if kind == NONE:
        return (), None
    if kind == DICT:
        keys = _sorted_keys(tree)
        return tuple(tree[k] for k in keys), keys
    if kind == NAMEDTUPLE:
        return list(tree), typ
    return _registry[typ].flatten(tree)


def flatten_one_level_with_keys(tree):
    """Take one node apart with keys: ``(((key, child), ...), aux_data)``."""
    typ = type(tree)
    kind = _kinds.get(typ)
    if kind is None:
        kind = _classify(typ)
    if kind == LEAF:
        raise ValueError(f"can't tree-flatten type: {typ}")
    pairs, aux = _keyed_children(tree, kind, typ)
    if kind in (TUPLE, LIST, DICT, NONE):
        return tuple(pairs), aux
    return pairs, (typ if kind == NAMEDTUPLE else aux)


register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: (tuple((DictKey(k), v) for k, v in x.items()), tuple(x)),
    lambda keys, values: collections.OrderedDict(zip(keys, values)))


def _defaultdict_flatten_with_keys(d):
    keys = _sorted_keys(d)
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict, _defaultdict_flatten_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)))


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` to the leaves of ``tree`` (and the matching subtrees of ``rest``).

    The public :func:`xjax.tree_util.tree_map` is this with JAX's structure-error messages.

    Examples
    --------
    >>> tree_map(lambda x, y: x + y, (1, [2]), (10, [20]))
    (11, [22])
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])
