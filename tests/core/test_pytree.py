"""Tests of pytrees: xjax.core.pytree, xjax.tree_util and xjax.tree."""

import collections
import dataclasses
import functools
import pickle

import numpy as np
import pytest

import xjax.tree as xtree
import xjax.tree_util as tu
from xjax._src.core import pytree

Point = collections.namedtuple("Point", ["x", "y"])


@tu.register_pytree_node_class
class Box:
    """A custom node with one child and string aux data."""

    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)

    def __eq__(self, other):
        return type(other) is Box and (self.value, self.label) == (other.value, other.label)

    def __repr__(self):
        return f"Box({self.value!r}, {self.label!r})"


@functools.partial(tu.register_dataclass, data_fields=["a"], meta_fields=["m"])
@dataclasses.dataclass
class Explicit:
    a: object
    m: int


@tu.register_dataclass
@dataclasses.dataclass
class Inferred:
    x: object
    y: object
    n: int = dataclasses.field(default=0, metadata=dict(static=True))
    s: str = xtree.static(default="q")


class Keyed:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Keyed and (self.a, self.b) == (other.a, other.b)


tu.register_pytree_with_keys(
    Keyed, lambda k: (((tu.GetAttrKey("a"), k.a), (tu.DictKey("bee"), k.b)), "aux"),
    lambda aux, children: Keyed(*children))


@tu.register_static
class Static:
    def __eq__(self, other):
        return type(other) is Static

    def __hash__(self):
        return 0

    def __repr__(self):
        return "Static()"


# (tree, leaves, repr of the structure) -- the reprs are JAX 0.10.2's.
CASES = [
    (1, [1], "PyTreeDef(*)"),
    (None, [], "PyTreeDef(None)"),
    ((), [], "PyTreeDef(())"),
    ([], [], "PyTreeDef([])"),
    ({}, [], "PyTreeDef({})"),
    ((1,), [1], "PyTreeDef((*,))"),
    ((1, [2, 3], {"a": 4, "b": None}), [1, 2, 3, 4],
     "PyTreeDef((*, [*, *], {'a': *, 'b': None}))"),
    ({"b": 1, "a": (2, 3)}, [2, 3, 1], "PyTreeDef({'a': (*, *), 'b': *})"),
    ({2: "x", 1: "y"}, ["y", "x"], "PyTreeDef({1: *, 2: *})"),
    (Point(1, 2), [1, 2], "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
    (Point(Point(1, None), {"a": [1]}), [1, 1],
     "PyTreeDef(CustomNode(namedtuple[Point], [CustomNode(namedtuple[Point], [*, None]), "
     "{'a': [*]}]))"),
    (collections.OrderedDict([("b", 1), ("a", 2)]), [1, 2],
     "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (collections.defaultdict(list, {"b": 1, "a": 2}), [2, 1],
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
    (Box((1, 2), "lbl"), [1, 2], "PyTreeDef(CustomNode(Box[lbl], [(*, *)]))"),
    (Explicit(1, 5), [1], "PyTreeDef(CustomNode(Explicit[(5,)], [*]))"),
    (Inferred(1, (2, 3), 4), [1, 2, 3], "PyTreeDef(CustomNode(Inferred[(4, 'q')], [*, (*, *)]))"),
    (Keyed(1, [2]), [1, 2], "PyTreeDef(CustomNode(Keyed[aux], [*, [*]]))"),
    ([None, ()], [], "PyTreeDef([None, ()])"),
    (Static(), [], "PyTreeDef(CustomNode(Static[Static()], []))"),
    (tu.Partial(max, 1, k=2), [1, 2],
     "PyTreeDef(CustomNode(Partial[<built-in function max>], [(*,), {'k': *}]))"),
    ([np.ones(2), (np.zeros(1), {"k": 3.0})], None, "PyTreeDef([*, (*, {'k': *})])"),
]


def _same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, tu.Partial):
        return a.func is b.func and _same(a.args, b.args) and _same(a.keywords, b.keywords)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        ordered = isinstance(a, collections.OrderedDict)
        return type(a) is type(b) and (list(a) == list(b) if ordered else a.keys() == b.keys()
                                       ) and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("tree,leaves,text", CASES, ids=[c[2] for c in CASES])
def test_round_trip_and_repr(tree, leaves, text):
    got, treedef = tu.tree_flatten(tree)
    if leaves is not None:
        assert got == leaves
    assert repr(treedef) == text and str(treedef) == text
    assert treedef.num_leaves == len(got)
    assert _same(tu.tree_unflatten(treedef, got), tree)
    assert _same(treedef.unflatten(iter(got)), tree)
    assert tu.tree_structure(tree) == treedef and hash(tu.tree_structure(tree)) == hash(treedef)
    assert tu.tree_leaves(tree) == got or leaves is None
    assert tu.tree_flatten_with_path(tree)[1] == treedef
    assert _same(treedef.flatten_up_to(tree), got)
    assert _same(tu.tree_map(lambda x: x, tree), tree)


def test_dict_unflattens_in_sorted_key_order():
    out = tu.tree_map(lambda x: x, {"b": 1, "a": 2})
    assert list(out) == ["a", "b"]


def test_subclasses_of_builtin_containers_are_leaves():
    class MyDict(dict):
        pass

    class MyList(list):
        pass

    assert tu.tree_leaves(MyDict(a=1)) == [MyDict(a=1)]
    assert tu.tree_leaves(MyList([1])) == [MyList([1])]
    assert tu.tree_leaves({1, 2}) == [{1, 2}]
    assert not tu.is_tree_node(MyList) and tu.is_tree_node(Point)
    assert tu.is_tree_node(type(None)) and tu.is_tree_node(collections.OrderedDict)
    assert not tu.is_tree_node(int)


def test_none_is_an_empty_node():
    assert tu.tree_leaves([None, 1, None]) == [1]
    assert tu.tree_structure([1]) != tu.tree_structure([None])
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.tree_map(lambda x: x, [None, (1,)], is_leaf=lambda x: x is None) == [None, (1,)]


def test_is_leaf_is_called_on_every_subtree():
    seen = []
    tu.tree_flatten((1, [2]), is_leaf=lambda x: seen.append(x) or False)
    assert seen == [(1, [2]), 1, [2], 2]
    leaves, td = tu.tree_flatten((1, (2, 3)), is_leaf=lambda x: x == (2, 3))
    assert leaves == [1, (2, 3)] and repr(td) == "PyTreeDef((*, *))"
    assert tu.tree_flatten([None, 1], is_leaf=lambda x: isinstance(x, list))[0] == [[None, 1]]


def test_flat_sequences_share_one_structure():
    tu.tree_flatten([1, 2.0, "x", np.ones(1)])  # leaf types are learnt on first sight
    a = tu.tree_flatten((1, 2.0, "x"))[1]
    b = tu.tree_flatten((np.ones(1), 3, 4.0))[1]
    assert a is b  # the interned structure of a 3-tuple of leaves
    assert tu.tree_flatten([1, 2])[1] != tu.tree_flatten((1, 2))[1]
    many = tuple(range(300))
    leaves, td = tu.tree_flatten(many)
    assert leaves == list(many) and tu.tree_unflatten(td, leaves) == many


def test_a_leaf_type_registered_later_becomes_a_node():
    class Late:
        def __init__(self, v):
            self.v = v

    assert tu.tree_leaves((Late(1), 2))[1] == 2  # seen as a leaf first
    tu.register_pytree_node(Late, lambda x: ((x.v,), None), lambda _, c: Late(*c))
    assert tu.tree_leaves((Late(1), 2)) == [1, 2]
    assert tu.tree_leaves([Late(5)]) == [5]


def test_unflatten_leaf_count_errors():
    td = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match=r"Too few leaves for PyTreeDef; expected 2, got 1"):
        tu.tree_unflatten(td, [1])
    with pytest.raises(ValueError, match=r"Too many leaves for PyTreeDef; expected 2\."):
        tu.tree_unflatten(td, [1, 2, 3])


def test_flatten_up_to_errors():
    S = tu.tree_structure
    cases = [
        (S((1, 2)), [1, 2], "Expected tuple, got [1, 2]."),
        (S((1, 2)), (1, 2, 3), "Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."),
        (S([1, 2]), [1, 2, 3], "List arity mismatch: 3 != 2; list: [1, 2, 3]."),
        (S({"a": 1}), {"a": 1, "b": 2},
         "Dict key mismatch; expected keys: ['a']; present keys: ['a', 'b']."),
        (S({"a": 1}), 3, "Expected dict, got 3."),
        (S({"a": 1}), collections.OrderedDict(a=1),
         "Expected dict, got OrderedDict([('a', 1)])."),
        (S(Point(1, 2)), (1, 2), "Expected named tuple, got (1, 2)."),
        (S(Box(1, "a")), 3, "Custom node type mismatch: expected type: "),
        (S(Box(1, "a")), Box(1, "b"), "Mismatch custom node data: 'a' != 'b'; value: "),
    ]
    for td, tree, msg in cases:
        with pytest.raises(ValueError) as info:
            td.flatten_up_to(tree)
        assert str(info.value).startswith(msg), str(info.value)
    with pytest.raises(ValueError, match="Expected None, got 2.\n\nIn previous releases"):
        S((1, None)).flatten_up_to((1, 2))
    assert S((1, 2)).flatten_up_to(([1], {"a": 2})) == [[1], {"a": 2}]
    assert S((1, 2)).flatten_up_to((1, None)) == [1, None]  # a leaf is a prefix of None


def test_tree_map_multiple_trees():
    assert tu.tree_map(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    assert tu.tree_map(lambda x, y: (x, y), (1, 2), ([3, 4], {"a": 5})) == (
        (1, [3, 4]), (2, {"a": 5}))
    assert tu.tree_map(lambda x, y: (x, y), (1, None), (3, None)) == ((1, 3), None)
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [None, 3]) == [(1, None), (2, 3)]


def test_tree_map_structure_errors():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, [1, 2], (3, 4))
    assert str(info.value) == (
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'list'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'tuple'>.")
    with pytest.raises(ValueError, match=r"different types at key path\n    tree_map tree\[1\]"):
        tu.tree_map(lambda a, b: a, (1, [2, 3]), (1, (2, 3)))
    with pytest.raises(ValueError, match="different lengths of list at key path"):
        tu.tree_map(lambda a, b: a, [1, 2], [3])
    with pytest.raises(ValueError, match="different pytree metadata at key path"):
        tu.tree_map(lambda a, b: a, {"a": 1}, {"b": 2})
    with pytest.raises(ValueError, match="different numbers of pytree children"):
        tu.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1})
    with pytest.raises(ValueError, match=r"tree_map tree\['x'\]"):
        tu.tree_map(lambda a, b: a, {"x": {"a": 1}}, {"x": {"a": 1, "b": 2}})
    with pytest.raises(ValueError, match="tree_map_with_path tree"):
        tu.tree_map_with_path(lambda p, a, b: a, {"a": 1}, [2])


def test_key_paths():
    tree = {"a": [1, Point(2, 3)], "b": Box(4, "l"), "c": Explicit(5, 0), "d": Keyed(6, 7)}
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(tree)]
    assert paths == ["['a'][0]", "['a'][1].x", "['a'][1].y", "['b'][<flat index 0>]",
                     "['c'].a", "['d'].a", "['d']['bee']"]
    simple = [tu.keystr(p, simple=True, separator="/") for p, _ in
              tu.tree_leaves_with_path(tree)]
    assert simple == ["a/0", "a/1/x", "a/1/y", "b/0", "c/a", "d/a", "d/bee"]
    (p0, leaf), *_ = tu.tree_flatten_with_path(tree)[0]
    assert p0 == (tu.DictKey("a"), tu.SequenceKey(0)) and leaf == 1
    out = tu.tree_map_with_path(lambda p, x: tu.keystr(p), {"a": [1]})
    assert out == {"a": ["['a'][0]"]}
    assert tu.tree_map_with_path(lambda p, x, y: x + y, {"a": 1}, {"a": 2}) == {"a": 3}
    got = tu.tree_flatten_with_path({"a": (1, 2), "b": 3}, is_leaf_takes_path=True,
                                    is_leaf=lambda p, x: len(p) == 1 and p[0].key == "a")
    assert [x for _, x in got[0]] == [(1, 2), 3]


def test_key_entries():
    keys = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("x"), tu.FlattenedIndexKey(3))
    assert [repr(k) for k in keys] == ["DictKey(key='a')", "SequenceKey(idx=0)",
                                       "GetAttrKey(name='x')", "FlattenedIndexKey(key=3)"]
    assert tu.keystr(keys) == "['a'][0].x[<flat index 3>]"
    assert tu.keystr(keys, simple=True, separator="/") == "a/0/x/3"
    assert tu.keystr((tu.DictKey("a"), tu.SequenceKey(0)), separator="/") == "['a']/[0]"
    assert tu.keystr(()) == ""
    assert tu.DictKey("a") == tu.DictKey("a") and tu.DictKey("a") != tu.DictKey("b")
    assert tu.SequenceKey(0) != tu.FlattenedIndexKey(0)
    assert len({tu.SequenceKey(0), tu.SequenceKey(0)}) == 1
    assert (keys[0].key, keys[1].idx, keys[2].name, keys[3].key) == ("a", 0, "x", 3)
    assert pickle.loads(pickle.dumps(keys)) == keys
    with pytest.raises(AttributeError):
        keys[0].key = "b"


def test_key_entries_take_keyword_arguments_named_as_jax():
    keys = (tu.DictKey(key="a"), tu.SequenceKey(idx=0), tu.GetAttrKey(name="x"),
            tu.FlattenedIndexKey(key=3))
    assert keys == (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("x"),
                    tu.FlattenedIndexKey(3))
    assert (keys[0].key, keys[1].idx, keys[2].name, keys[3].key) == ("a", 0, "x", 3)
    for cls, wrong in ((tu.DictKey, "idx"), (tu.SequenceKey, "key"), (tu.GetAttrKey, "key"),
                       (tu.FlattenedIndexKey, "idx")):
        with pytest.raises(TypeError):
            cls(**{wrong: 0})


def test_treedef_methods():
    S = tu.tree_structure
    td = S((1, [2, 3], {"a": 4, "b": None}))
    assert td.num_leaves == 4 and td.num_nodes == 8
    assert td.children() == [S(1), S([1, 2]), S({"a": 1, "b": None})]
    assert tu.treedef_children(td) == td.children() and S(1).children() == []
    assert td.node_data() == (tuple, None) and S({"a": 1}).node_data() == (dict, ["a"])
    assert S(1).node_data() is None and S(None).node_data() == (type(None), None)
    assert S(Box(1, "q")).node_data() == (Box, "q")
    assert repr(S((1, 2)).compose(S([1, 1]))) == "PyTreeDef(([*, *], [*, *]))"
    assert tu.treedef_is_leaf(S(1)) and tu.treedef_is_leaf(S(None))
    assert tu.treedef_is_leaf(S(())) and not tu.treedef_is_leaf(S((1,)))
    assert pytree.treedef_is_strict_leaf(S(1)) and not pytree.treedef_is_strict_leaf(S(None))
    assert repr(tu.treedef_tuple([S(1), S([1, 2])])) == "PyTreeDef((*, [*, *]))"
    assert repr(tu.treedef_tuple([])) == "PyTreeDef(())"
    walked = S((1, [2, 3])).walk(lambda c, d: ("N", c, d), lambda x: ("L", x), [1, 2, 3])
    assert walked == ("N", (("L", 1), ("N", (("L", 2), ("L", 3)), None)), None)
    rebuilt = tu.PyTreeDef.from_node_data_and_children(
        tu.default_registry, (dict, ["a", "b"]), [S(1), S(None)])
    assert rebuilt == S({"a": 1, "b": None})
    assert tu.default_registry.flatten((1, 2)) == ([1, 2], S((1, 2)))


def test_treedef_equality_and_hash():
    S = tu.tree_structure
    assert S((1, 2)) == S((3, 4)) and S((1, 2)) != S([3, 4])
    assert S({"a": 1}) != S({"b": 1}) and S(Box(1, "a")) != S(Box(1, "b"))
    assert S(Explicit(1, 4)) != S(Explicit(1, 5))
    assert (S((1, 2)) == 3) is False
    with pytest.raises(TypeError):
        S(1) < S(2)  # noqa: B015
    assert len({S((1, 2)), S((3, 4)), S([1, 2]), S({"a": 1}), S({"b": 1})}) == 4
    # unhashable aux data still gives a hashable structure
    unhashable = S(Box(1, [1, 2]))
    assert hash(unhashable) == hash(S(Box(2, [1, 2]))) and unhashable == S(Box(2, [1, 2]))
    td = S((1, [2], {"a": Point(3, None)}))
    assert pickle.loads(pickle.dumps(td)) == td
    assert tu.tree_unflatten(pickle.loads(pickle.dumps(td)), "abc") == (
        "a", ["b"], {"a": Point("c", None)})


def test_deep_and_wide_trees():
    deep = 1
    for _ in range(150):
        deep = [deep, (2,)]
    leaves, td = tu.tree_flatten(deep)
    assert len(leaves) == 151 and tu.tree_unflatten(td, leaves) == deep
    wide = {f"k{i}": (i, [i, None]) for i in range(3000)}
    leaves, td = tu.tree_flatten(wide)
    assert len(leaves) == 6000 and tu.tree_unflatten(td, leaves) == wide


def test_mixed_dict_keys_cannot_be_sorted():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting"):
        tu.tree_flatten({1: "a", "b": 2})


def test_register_errors_and_variants():
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(tuple, lambda b: ((), None), lambda a, c: None)

    @tu.register_pytree_with_keys_class
    class KeyedClass:
        def __init__(self, a):
            self.a = a

        def tree_flatten_with_keys(self):
            return ((tu.SequenceKey(7), self.a),), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    pairs = tu.tree_leaves_with_path(KeyedClass((4, 5)))
    assert [tu.keystr(p) for p, _ in pairs] == ["[7][0]", "[7][1]"]
    assert tu.tree_map(lambda x: x + 1, KeyedClass((4, 5))).a == (5, 6)

    @dataclasses.dataclass
    class NotAll:
        a: int
        b: int

    with pytest.raises(ValueError, match="Missing fields"):
        tu.register_dataclass(NotAll, data_fields=["a"], meta_fields=[])
    with pytest.raises(TypeError, match="must both be specified"):
        tu.register_dataclass(NotAll, data_fields=["a"])
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(int)

    @functools.partial(tu.register_dataclass, drop_fields=["b"])
    @dataclasses.dataclass
    class Dropped:
        a: int
        b: int = dataclasses.field(default=9)

    assert tu.tree_leaves(Dropped(1, 2)) == [1]
    assert tu.tree_map(lambda x: x * 3, Dropped(1, 2)) == Dropped(3, 9)


def test_dataclass_fields():
    tree = Inferred(1, (2, 3), n=4)
    assert tu.tree_leaves(tree) == [1, 2, 3]
    assert tu.tree_map(lambda x: x * 10, tree) == Inferred(10, (20, 30), 4, "q")
    assert xtree.static(default=3).metadata["static"] is True
    assert xtree.static(metadata={"doc": 1}).metadata == {"static": True, "doc": 1}


def test_partial():
    p = tu.Partial(max, 1, k=2)
    assert repr(p) == "Partial(<built-in function max>, 1, k=2)"
    assert tu.Partial(max)(3, 4) == 4 and p.func is max
    assert tu.tree_map(lambda x: x * 10, tu.Partial(max, 1, 2))() == 20
    nested = tu.Partial(tu.Partial(max, 1), 5)
    assert nested() == 5
    leaves, td = tu.tree_flatten(nested)
    assert leaves == [5]  # only the outer arguments are children
    assert repr(td) == ("PyTreeDef(CustomNode(Partial[_HashableCallableShim("
                        "Partial(<built-in function max>, 1))], [(*,), {}]))")
    assert tu.Partial(max, 1) != tu.Partial(max, 1)  # functools.partial equality


def test_flatten_one_level():
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(Point(1, 2)) == ([1, 2], Point)
    assert tu.flatten_one_level(collections.OrderedDict(b=1, a=2)) == ([1, 2], ("b", "a"))
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)
    assert tu.flatten_one_level_with_keys([1, 2]) == (
        ((tu.SequenceKey(0), 1), (tu.SequenceKey(1), 2)), None)
    assert tu.flatten_one_level_with_keys({"b": 1, "a": 2}) == (
        ((tu.DictKey("a"), 2), (tu.DictKey("b"), 1)), ("a", "b"))


def test_reductions_and_friends():
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    assert tu.tree_reduce(lambda a, b: a + b, [(1,), (2, 3)], (),
                          is_leaf=lambda x: isinstance(x, tuple)) == (1, 2, 3)
    cat = lambda a, b: f"({a}{b})"  # noqa: E731
    assert tu.tree_reduce_associative(cat, list("abcde")) == "((ab)(c(de)))"
    assert tu.tree_reduce_associative(cat, list("abcdefg")) == "((a(bc))((de)(fg)))"
    with pytest.raises(TypeError, match="Must specify identity"):
        tu.tree_reduce_associative(cat, [])
    assert tu.tree_reduce_associative(cat, [], identity=0) == 0
    assert not tu.tree_all([1, (2, 0)]) and tu.tree_all([]) and tu.tree_all([None])
    assert tu.all_leaves([1, 2.0]) and not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([None]) and tu.all_leaves([None], is_leaf=lambda x: x is None)


def test_transpose_and_broadcast():
    S = tu.tree_structure
    assert tu.tree_transpose(S([0, 0]), S((0, 0, 0)), [(1, 2, 3), (4, 5, 6)]) == (
        [1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(S([0, 0]), None, [(1, 2, 3), (4, 5, 6)]) == (
        [1, 4], [2, 5], [3, 6])
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(S([0, 0]), S((0, 0)), [(1, 2, 3), (4, 5, 6)])
    assert tu.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == (
        1, {"a": 2, "b": 2}, (3, 3))
    with pytest.raises(ValueError, match="broadcast_prefix prefix_tree"):
        tu.tree_broadcast([1, 2], (0, 0))


def test_public_names():
    tree_util_names = """DictKey FlattenedIndexKey GetAttrKey KeyEntry KeyPath Partial PyTreeDef
        SequenceKey all_leaves default_registry flatten_one_level flatten_one_level_with_keys
        is_tree_node keystr register_dataclass register_pytree_node register_pytree_node_class
        register_pytree_with_keys register_pytree_with_keys_class register_static tree_all
        tree_broadcast tree_flatten tree_flatten_with_path tree_leaves tree_leaves_with_path
        tree_map tree_map_with_path tree_reduce tree_reduce_associative tree_structure
        tree_transpose tree_unflatten treedef_children treedef_is_leaf treedef_tuple"""
    for name in tree_util_names.split():
        assert hasattr(tu, name), name
    for name in """all broadcast flatten flatten_with_path leaves leaves_with_path map
                   map_with_path reduce reduce_associative static structure transpose
                   unflatten""".split():
        assert callable(getattr(xtree, name)), name
    assert xtree.map(lambda x: x + 1, {"a": 1}) == {"a": 2}


# --------------------------------------------------------------------------------------------
# differential tests against JAX


@pytest.fixture(scope="module")
def jtu():
    jax = pytest.importorskip("jax")
    return jax.tree_util


class Both:
    """A custom node registered with both xjax and (in the fixture) JAX."""

    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Both, lambda x: ((x.a,), x.b), lambda b, c: Both(c[0], b))


def _diff_trees():
    return [1, None, (), [], {}, (1,), (1, [2, 3], {"a": 4, "b": None}), {"b": 1, "a": (2, 3)},
            {2: 1, 1: 2}, {(1, 2): 3}, Point(1, 2), Point(Point(1, None), {"a": [1]}),
            collections.OrderedDict([("b", 1), ("a", 2)]),
            collections.defaultdict(list, {"b": 1, "a": 2}), [None, ()], Both((1, 2), "aux"),
            Both(None, None), [[1], [2, [3]]], {"a": {"b": {"c": 1}}}, (Point(1, 2),),
            [Both([1, {"z": 2}], 3), None]]


def test_matches_jax(jtu):
    if not getattr(jtu, "_xjax_both_registered", False):
        jtu.register_pytree_node(Both, lambda x: ((x.a,), x.b), lambda b, c: Both(c[0], b))
        jtu._xjax_both_registered = True
    for tree in _diff_trees():
        ours, theirs = tu.tree_flatten(tree), jtu.tree_flatten(tree)
        assert ours[0] == theirs[0], tree
        assert repr(ours[1]) == repr(theirs[1])
        assert (ours[1].num_leaves, ours[1].num_nodes) == (theirs[1].num_leaves,
                                                           theirs[1].num_nodes)
        assert [repr(c) for c in ours[1].children()] == [repr(c) for c in
                                                         theirs[1].children()]
        our_paths = [(tu.keystr(p), x) for p, x in tu.tree_leaves_with_path(tree)]
        their_paths = [(jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(tree)]
        assert our_paths == their_paths
    for a, b in [([1, 2], (3, 4)), ({"a": 1}, {"b": 2}), ([1, 2], [3]),
                 ((1, [2, 3]), (1, (2, 3))), ((1, None), (3, 4)),
                 ({"a": 1, "b": 2}, {"a": 1}), ({"x": {"a": 1}}, {"x": {"a": 1, "b": 2}})]:
        with pytest.raises(ValueError) as ours:
            tu.tree_map(lambda x, y: x, a, b)
        with pytest.raises(ValueError) as theirs:
            jtu.tree_map(lambda x, y: x, a, b)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("args, kwargs", [
    ((), {}),
    ((1, 2.0), {}),
    (([(1, 2), (3, None)], {"b": 4, "a": [5]}), {}),
    ((collections.namedtuple("P", "x y")(1, (2, 3)),), {}),
    ((1,), {"k": (2, 3), "j": None}),
])
def test_flatten_call_args_is_tree_flatten_of_the_pair(args, kwargs):
    leaves, treedef = pytree.flatten_call_args(args, kwargs)
    expected_leaves, expected = pytree.tree_flatten((args, kwargs))
    assert leaves == expected_leaves
    assert treedef == expected and hash(treedef) == hash(expected)
    assert treedef.num_leaves == expected.num_leaves
    assert pytree.tree_unflatten(treedef, leaves) == (args, kwargs)


class _Unseen:
    """A leaf type no flatten has classified before the test that makes it."""


def _random_tree(rng, depth):
    kind = int(rng.integers(0, 9 if depth < 4 else 3))
    if kind == 0:
        return float(rng.standard_normal())
    if kind == 1:
        return np.arange(int(rng.integers(0, 3)))
    if kind == 2:
        return None if rng.random() < 0.5 else _Unseen()
    children = [_random_tree(rng, depth + 1) for _ in range(int(rng.integers(0, 10)))]
    if kind == 3:
        return tuple(children)
    if kind == 4:
        return children
    if kind == 5:
        return {f"k{int(rng.integers(0, 99))}": c for c in children}
    if kind == 6:
        return Point(children[0] if children else 1, tuple(children[1:]))
    if kind == 7:
        return Box(children, "box")
    return {int(rng.integers(0, 9)): c for c in children}


def test_c_flatten_makes_the_python_reference_nodes():
    rng = np.random.default_rng(0)
    for _ in range(300):
        tree = _random_tree(rng, 0)
        leaves, reference_leaves = [], []
        node = pytree._flatten(tree, leaves)
        assert node == pytree._flatten_python(tree, reference_leaves)
        assert len(leaves) == len(reference_leaves)
        assert all(a is b for a, b in zip(leaves, reference_leaves))
        seq_leaves, reference_seq_leaves = [], []
        items = [tree, tree] if isinstance(tree, (list, tuple, dict)) else [tree]
        assert (pytree._flatten_seq(iter(items), seq_leaves)
                == pytree._flatten_seq_python(iter(items), reference_seq_leaves))
        assert all(a is b for a, b in zip(seq_leaves, reference_seq_leaves))


def test_c_flatten_errors():
    with pytest.raises(ValueError, match="Comparator raised exception"):
        pytree.tree_flatten({1: 2, "a": 3})
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        pytree.tree_flatten(deep)
    with pytest.raises(TypeError, match="leaves must be a list"):
        pytree._flatten((1,), ())
    with pytest.raises(TypeError, match="takes 2 arguments"):
        pytree._flatten_seq((1,))
