"""Tests for jaxlite.tree_util / jaxlite.tree (pytrees).

The first part needs no jax: golden reprs, round trips, errors.  The second part
(``TestAgainstJax``) compares with the real ``jax`` when it is installed.
"""
import collections
import dataclasses
import functools
import operator
import pickle
import re

import numpy as np
import pytest

import jaxlite.tree as jtree
import jaxlite.tree_util as tu
from jaxlite._src import tree_util as _tu

Point = collections.namedtuple("Point", "x y")
Other = collections.namedtuple("Other", "x y")


class Box:
    """A custom node: children (a, b), aux 'aux'."""

    def __init__(self, a, b, aux="aux"):
        self.a, self.b, self.aux = a, b, aux

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r}, {self.aux!r})"

    def __eq__(self, o):
        return type(o) is Box and (self.a, self.b, self.aux) == (o.a, o.b, o.aux)


tu.register_pytree_node(Box, lambda s: ((s.a, s.b), s.aux), lambda aux, ch: Box(*ch, aux))


@tu.register_pytree_node_class
class Pair:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def tree_flatten(self):
        return [self.x, self.y], None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, o):
        return type(o) is Pair and (self.x, self.y) == (o.x, o.y)


@tu.register_pytree_with_keys_class
class Keyed:
    def __init__(self, p, q):
        self.p, self.q = p, q

    def tree_flatten_with_keys(self):
        return ((tu.GetAttrKey("p"), self.p), (tu.DictKey("q"), self.q)), "kk"

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, o):
        return type(o) is Keyed and (self.p, self.q) == (o.p, o.q)


@tu.register_dataclass
@dataclasses.dataclass
class DC:
    x: object
    y: object
    op: str = dataclasses.field(default="add", metadata=dict(static=True))


@tu.register_static
class Static:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Static({self.v})"

    def __eq__(self, o):
        return type(o) is Static and o.v == self.v

    def __hash__(self):
        return hash(self.v)


def _trees():
    a, b = np.zeros(3), np.ones(2)
    return [
        1, None, (), [], {}, (1,), (1, 2), [1, None], {"a": 1, "b": [2, None]},
        (a, {"a": b, "b": [3, None]}), Point(1, 2), [Point(1, None)],
        collections.OrderedDict([("b", 1), ("a", 2)]),
        collections.defaultdict(list, {"b": 1, "a": 2}), Box(1, 2), Box(1, Box(2, 3)),
        Pair(1, [2, 3]), Keyed(1, (2, 3)), DC(1, (2, 3)), [Static(1), 2],
        tu.Partial(max, 1, k=2), {(1, 2): 3, (0,): 4}, {3: "x", 1: "y", 2.5: "z", -1: "w"},
        {None: 1}, "abc", np.float32(3), [[[]], [()], {"a": {}}, (None,), ((1,),)],
        {"b": {"d": 1, "c": 2}, "a": (3, [4, {"z": 5, "y": None}])},
    ]


# ----------------------------------------------------------------------------- golden

GOLDEN = [
    (1, "PyTreeDef(*)", [1]),
    (None, "PyTreeDef(None)", []),
    ((), "PyTreeDef(())", []),
    ((1,), "PyTreeDef((*,))", [1]),
    ([1, None], "PyTreeDef([*, None])", [1]),
    ({"b": [2, None], "a": 1}, "PyTreeDef({'a': *, 'b': [*, None]})", [1, 2]),
    ((1, {"a": 2, "b": [3, None]}), "PyTreeDef((*, {'a': *, 'b': [*, None]}))", [1, 2, 3]),
    (Point(1, 2), "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))", [1, 2]),
    (Box(1, 2), "PyTreeDef(CustomNode(Box[aux], [*, *]))", [1, 2]),
    (collections.OrderedDict([("b", 1), ("a", 2)]),
     "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))", [1, 2]),
    (collections.defaultdict(list, {"b": 1, "a": 2}),
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))", [2, 1]),
    (DC(1, 2), "PyTreeDef(CustomNode(DC[('add',)], [*, *]))", [1, 2]),
    ([Static(1), 2], "PyTreeDef([CustomNode(Static[Static(1)], []), *])", [2]),
    (tu.Partial(max, 1, k=2),
     "PyTreeDef(CustomNode(Partial[<built-in function max>], [(*,), {'k': *}]))", [1, 2]),
    ({(1, 2): 3, (0,): 4}, "PyTreeDef({(0,): *, (1, 2): *})", [4, 3]),
    ({"it's": 1, 'a"b': 2}, """PyTreeDef({'a"b': *, "it's": *})""", [2, 1]),
]


@pytest.mark.parametrize("tree,text,leaves", GOLDEN)
def test_golden_repr_and_leaves(tree, text, leaves):
    got_leaves, td = tu.tree_flatten(tree)
    assert repr(td) == text
    assert str(td) == text
    assert got_leaves == leaves
    assert td.num_leaves == len(leaves)


@pytest.mark.parametrize("tree", _trees(), ids=lambda t: type(t).__name__)
def test_round_trip(tree):
    leaves, td = tu.tree_flatten(tree)
    back = tu.tree_unflatten(td, leaves)
    leaves2, td2 = tu.tree_flatten(back)
    assert td2 == td and hash(td2) == hash(td)
    assert all(a is b for a, b in zip(leaves, leaves2)) and len(leaves) == len(leaves2)
    # compiled unflatten path (second and later uses of a structure) gives the same result
    for _ in range(3):
        again = td.unflatten(leaves)
        assert tu.tree_structure(again) == td
        assert type(again) is type(back)


def test_dict_key_order_and_unflatten_order():
    leaves, td = tu.tree_flatten({"b": 1, "a": 2, "B": 3, "_": 4})
    assert leaves == [3, 4, 2, 1]
    assert list(td.unflatten(leaves)) == ["B", "_", "a", "b"]
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert list(tu.tree_map(lambda x: x, od)) == ["b", "a"]
    dd = tu.tree_map(lambda x: x, collections.defaultdict(list, {"b": 1, "a": 2}))
    assert type(dd) is collections.defaultdict and dd.default_factory is list


def test_dict_equal_keys_of_different_types_are_kept():
    # 1 == 1.0 == True: the unflattened dict must use the keys of the tree at hand.
    for _ in range(3):
        out = tu.tree_map(lambda x: x, {1.0: "a", 2: "b"})
        assert [type(k) for k in out] == [float, int]
        out = tu.tree_map(lambda x: x, {1: "a", 2: "b"})
        assert [type(k) for k in out] == [int, int]
        out = tu.tree_map(lambda x: x, {2: "b", True: "a"})
        assert list(out) == [True, 2] and type(next(iter(out))) is bool


def test_unsortable_dict_keys():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree "
                                         "dictionary keys.") as e:
        tu.tree_flatten({1: "a", "x": 2})
    assert isinstance(e.value.__cause__, TypeError)


def test_subclasses_are_leaves_namedtuple_subclass_is_node():
    class T(tuple):
        pass

    class D(dict):
        pass

    class NT2(Point):
        pass
    assert tu.tree_leaves(T((1, 2))) == [T((1, 2))]
    assert tu.tree_leaves(D(a=1)) == [D(a=1)]
    assert repr(tu.tree_structure(NT2(1, 2))) == \
        "PyTreeDef(CustomNode(namedtuple[NT2], [*, *]))"


def test_none_and_is_leaf():
    assert tu.tree_leaves([None, 1]) == [1]
    leaves, td = tu.tree_flatten((1, None), is_leaf=lambda x: x is None)
    assert leaves == [1, None] and repr(td) == "PyTreeDef((*, *))"
    leaves, td = tu.tree_flatten((1, None), is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, None)] and repr(td) == "PyTreeDef(*)"
    calls = []
    tu.tree_flatten((1, [None, {"a": 2}], ()), is_leaf=lambda x: calls.append(x) or False)
    assert calls == [(1, [None, {"a": 2}], ()), 1, [None, {"a": 2}], None, {"a": 2}, 2, ()]
    # None from the predicate means False
    assert tu.tree_leaves([1], is_leaf=lambda x: None) == [1]
    for bad in (0, 1, 1.0, np.True_, [1]):
        with pytest.raises(ValueError, match="is_leaf predicate returned a non-boolean value"):
            tu.tree_flatten([1], is_leaf=lambda x, bad=bad: bad)


def test_pytreedef_api():
    tree = (1, {"a": 2, "b": [3, None]}, Point(4, 5))
    td = tu.tree_structure(tree)
    assert td.num_leaves == 5 and td.num_nodes == 10
    assert [repr(c) for c in td.children()] == [
        "PyTreeDef(*)", "PyTreeDef({'a': *, 'b': [*, None]})",
        "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"]
    assert tu.treedef_children(td) == td.children()
    assert td.node_data() == (tuple, None)
    assert td.children()[1].node_data() == (dict, ["a", "b"])
    assert td.children()[2].node_data() == (Point, None)
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure(None).node_data() == (type(None), None)
    assert tu.tree_structure(Box(1, 2)).node_data() == (Box, "aux")
    assert tu.tree_structure(1).children() == []
    assert td.flatten_up_to((1, {"a": (2, 3), "b": [4, None]}, Point(5, [6]))) == \
        [1, (2, 3), 4, 5, [6]]
    assert tu.tree_structure(1).flatten_up_to((1, 2)) == [(1, 2)]
    assert td == tu.tree_structure(tree) and hash(td) == hash(tu.tree_structure(tree))
    assert td != tu.tree_structure([1]) and td != 3 and not (td == 3)
    with pytest.raises(TypeError):
        td < td  # noqa: B015
    assert tu.tree_structure((1,)) != tu.tree_structure([1])
    assert tu.tree_structure(1) != tu.tree_structure(None)
    assert {td: 1}[tu.tree_structure(tree)] == 1


def test_compose_treedef_tuple_is_leaf():
    outer = tu.tree_structure((1, None))
    inner = tu.tree_structure([1, {"a": 1}])
    c = outer.compose(inner)
    assert repr(c) == "PyTreeDef(([*, {'a': *}], None))" and c.num_leaves == 2
    assert tu.tree_structure(1).compose(inner) == inner
    assert repr(tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, None])])) == \
        "PyTreeDef((*, [*, None]))"
    assert repr(tu.treedef_tuple([])) == "PyTreeDef(())"
    assert tu.treedef_tuple(tu.tree_structure(x) for x in ([1], {"a": 1})) == \
        tu.tree_structure(([1], {"a": 1}))
    assert [tu.treedef_is_leaf(tu.tree_structure(x)) for x in (1, None, (), (1,))] == \
        [True, True, True, False]


def test_unflatten_errors():
    td = tu.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 3, got 2$"):
        td.unflatten([1, 2])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 3\.$"):
        td.unflatten([1, 2, 3, 4])
    with pytest.raises(ValueError, match="Too many leaves"):
        tu.tree_structure(1).unflatten([1, 2])
    with pytest.raises(ValueError, match="Too few leaves"):
        tu.tree_structure(1).unflatten([])
    import itertools
    with pytest.raises(ValueError, match="Too many leaves"):  # must not hang
        td.unflatten(itertools.count())
    assert td.unflatten(x for x in "abc") == ("a", ["b", "c"])
    assert tu.tree_unflatten(tu.tree_structure(None), []) is None


FLATTEN_UP_TO_ERRORS = [
    ((1, 2), (1, 2, 3), "Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."),
    ((1, 2), [1, 2], "Expected tuple, got [1, 2]."),
    ([1, 2], [1], "List arity mismatch: 1 != 2; list: [1]."),
    ({"a": 1}, {"b": 1}, "Dict key mismatch; expected keys: ['a']; present keys: ['b']."),
    ({"a": 1}, {"c": 1, "b": 2},
     "Dict key mismatch; expected keys: ['a']; present keys: ['b', 'c']."),
    ((1, None), (1, 2), "Expected None, got 2."),
    (Point(1, 2), Other(1, 2), "Named tuple type mismatch: expected type: "),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (Box(1, 2), (1, 2), "Custom node type mismatch: expected type: "),
    (Box(1, 2, "a"), Box(1, 2, "b"), "Mismatch custom node data: 'a' != 'b'; value: "),
    (DC(1, 2), DC(1, 2, "mul"), "Mismatch custom dataclass node data: ('add',) != ('mul',)"),
    (DC(1, 2), (1,), "Custom dataclass node type mismatch: expected type: "),
    ({"a": 1}, collections.OrderedDict(a=1), "Expected dict, got OrderedDict"),
]


@pytest.mark.parametrize("a,b,msg", FLATTEN_UP_TO_ERRORS)
def test_flatten_up_to_errors(a, b, msg):
    with pytest.raises(ValueError) as e:
        tu.tree_structure(a).flatten_up_to(b)
    assert str(e.value).startswith(msg)


def test_tree_map_errors():
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda x, y: x, {"x": [1, {"y": (1, 2)}]}, {"x": [1, {"y": (1,)}]})
    assert str(e.value) == (
        "pytree structure error: different lengths of tuple at key path\n"
        "    tree_map tree['x'][1]['y']\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of "
        "length 2, but the full pytree has a subtree of the same type but of length 1.")
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda x, y: x, (1, 2), [1, 2])
    assert str(e.value) == (
        "pytree structure error: different types at key path\n    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'tuple'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'list'>.")
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda x, y: x, {"a": 1, "b": 2}, {"a": 1})
    assert str(e.value) == (
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\nAt that key path, the prefix pytree tree_map tree has a subtree "
        "of type\n    <class 'dict'>\nwith 2 child keys\n    a b\nbut at the same key path "
        "the full pytree has a subtree of the same type but with 1 child keys\n    a\n"
        "so the symmetric difference on key sets is\n    b")
    with pytest.raises(ValueError, match="different pytree metadata at key path\n"
                                         r"    tree_map tree\[<flat index 0>\]"):
        tu.tree_map(lambda x, y: x, Box({"a": 1}, 2), Box({"b": 1}, 2))
    with pytest.raises(ValueError, match=r"tree_map_with_path tree\['a'\]"):
        tu.tree_map_with_path(lambda p, x, y: x, {"a": [1, 2]}, {"a": [3]})
    with pytest.raises(ZeroDivisionError):
        tu.tree_map(lambda x, y: 1 / 0, [1], [2])


def test_tree_map_multi_and_prefix():
    assert tu.tree_map(lambda x, y, z: x + y + z, [1, 2], [10, 20], [100, 200]) == [111, 222]
    assert tu.tree_map(lambda x, y: (x, y), (1, 2), ((1, 2), [3, 4])) == \
        ((1, (1, 2)), (2, [3, 4]))
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [None, 3]) == [(1, None), (2, 3)]
    assert tu.tree_map(lambda x: x * 2, [1, None, (2,)]) == [2, None, (4,)]
    assert tu.tree_map(lambda x: x is None, [1, None], is_leaf=lambda x: x is None) == \
        [False, True]
    assert jtree.map(lambda x: x + 1, {"x": 7, "y": 42}) == {"x": 8, "y": 43}
    assert tu.tree_map(lambda x: x + 1, Box(1, 2)) == Box(2, 3)
    assert tu.tree_map(lambda x: x + 1, DC(1, 2)) == DC(2, 3)


def test_key_paths():
    tree = {"a": [1, None, 2], "b": Point(3, Box(4, 5)), "c": Keyed(6, DC(7, 8)),
            "d": collections.OrderedDict(z=9), "e": Pair(10, 11)}
    got = [(tu.keystr(p), x) for p, x in tu.tree_leaves_with_path(tree)]
    assert got == [
        ("['a'][0]", 1), ("['a'][2]", 2), ("['b'].x", 3), ("['b'].y[<flat index 0>]", 4),
        ("['b'].y[<flat index 1>]", 5), ("['c'].p", 6), ("['c']['q'].x", 7),
        ("['c']['q'].y", 8), ("['d']['z']", 9), ("['e'][<flat index 0>]", 10),
        ("['e'][<flat index 1>]", 11)]
    pairs, td = tu.tree_flatten_with_path(tree)
    assert td == tu.tree_structure(tree)
    assert pairs[0][0] == (tu.DictKey("a"), tu.SequenceKey(0))
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in pairs][:4] == \
        ["a/0", "a/2", "b/x", "b/y/0"]
    out = tu.tree_map_with_path(lambda p, x: (tu.keystr(p), x), {"a": [1, 2], "b": (3,)})
    assert out == {"a": [("['a'][0]", 1), ("['a'][1]", 2)], "b": (("['b'][0]", 3),)}
    assert tu.tree_flatten_with_path(None) == ([], tu.tree_structure(None))
    assert tu.tree_leaves_with_path(5) == [((), 5)]
    seen = []
    tu.tree_flatten_with_path([1, (2,)], is_leaf=lambda p, x: seen.append(p) or False,
                              is_leaf_takes_path=True)
    assert seen == [(), (tu.SequenceKey(0),), (tu.SequenceKey(1),),
                    (tu.SequenceKey(1), tu.SequenceKey(0))]
    assert tu.tree_leaves_with_path([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple)) == \
        [((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1),), (2, 3))]


def test_key_entries():
    S, D, G, F = tu.SequenceKey, tu.DictKey, tu.GetAttrKey, tu.FlattenedIndexKey
    assert [repr(k) for k in (S(0), D("a"), D(1), G("x"), F(3))] == [
        "SequenceKey(idx=0)", "DictKey(key='a')", "DictKey(key=1)", "GetAttrKey(name='x')",
        "FlattenedIndexKey(key=3)"]
    assert [str(k) for k in (S(0), D("a"), D((1, "x")), G("x"), F(3))] == [
        "[0]", "['a']", "[(1, 'x')]", ".x", "[<flat index 3>]"]
    assert S(0) == S(0) and S(0) != D(0) and S(0) != 0 and F(0) != S(0)
    assert hash(D("a")) == hash("a") and len({S(1), S(1), G("x")}) == 2
    assert S(idx=2).idx == 2 and D(key=None).key is None and G("n").name == "n"
    assert pickle.loads(pickle.dumps((S(0), D("a"), G("x"), F(1)))) == \
        (S(0), D("a"), G("x"), F(1))
    with pytest.raises(AttributeError):
        S(0).idx = 3
    for bad in (lambda: S("a"), lambda: S(1.5), lambda: G(1), lambda: F("a")):
        with pytest.raises(TypeError):
            bad()
    match S(4):
        case S(idx=i):
            assert i == 4
    assert tu.keystr((S(0), D("a"), G("x"), F(3))) == "[0]['a'].x[<flat index 3>]"
    assert tu.keystr((S(0), D("a"), G("x"), F(3)), simple=True, separator="/") == "0/a/x/3"
    assert tu.keystr(("abc", 1)) == "abc1" and tu.keystr(()) == ""
    with pytest.raises(TypeError):
        tu.keystr((S(0),), True)


def test_reduce_all_transpose_broadcast():
    assert tu.tree_reduce(operator.add, [1, (2, 3)]) == 6
    assert tu.tree_reduce(operator.add, [1, (2, 3)], 100) == 106
    assert tu.tree_reduce(lambda a, b: (a, b), [1], None) == (None, 1)
    with pytest.raises(TypeError):
        tu.tree_reduce(operator.add, [])
    assert tu.tree_reduce(lambda a, b: a + [b], [1, (2, 3)], [],
                          is_leaf=lambda x: isinstance(x, tuple)) == [1, (2, 3)]
    assert jtree.reduce(operator.add, [1, (2, 3), [4, 5, 6]]) == 21
    assert tu.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5]) == \
        ((1, 2), (3, (4, 5)))
    with pytest.raises(TypeError, match="Must specify identity"):
        tu.tree_reduce_associative(operator.add, [])
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    assert (tu.tree_all([1, (True, 2)]), tu.tree_all([1, 0]), tu.tree_all([])) == \
        (True, False, True)
    assert tu.tree_all([[]], is_leaf=lambda x: x == []) is False
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0))
    assert tu.tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tu.tree_transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    with pytest.raises(TypeError) as e:
        tu.tree_transpose(outer, tu.tree_structure((0, 0, 0)), [(1, 2), (3, 4)])
    assert str(e.value) == ("Mismatch\nPyTreeDef([(*, *), (*, *)])\n != \n"
                            "PyTreeDef([(*, *, *), (*, *, *)])")
    assert tu.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == \
        (1, {"a": 2, "b": 2}, (3, 3))
    assert jtree.broadcast([1, (2, 3)], [0, [1, 2]], is_leaf=lambda x: isinstance(x, tuple)) \
        == [1, [(2, 3), (2, 3)]]
    with pytest.raises(ValueError, match=r"broadcast_prefix prefix_tree\[1\]"):
        tu.tree_broadcast((1, None), (0, (0, 0)))
    assert _tu.broadcast_flattened_prefix_with_treedef(
        [1, 2], tu.tree_structure((0, 0)), tu.tree_structure((0, [0, 0]))) == [1, 2, 2]


def test_all_leaves_is_tree_node_flatten_one_level():
    assert tu.all_leaves([1, 2]) and not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([None]) and tu.all_leaves([])
    assert tu.all_leaves([None], is_leaf=lambda x: x is None)
    assert [tu.is_tree_node(t) for t in (tuple, list, dict, type(None), Point, Box, int,
                                        np.ndarray, collections.OrderedDict, DC, tu.Partial,
                                        str)] == \
        [True] * 6 + [False, False, True, True, True, False]
    assert tu.is_tree_node((1, 2)) is False
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level(Point(1, 2)) == ([1, 2], Point)
    assert tu.flatten_one_level(Box(1, 2)) == ((1, 2), "aux")
    assert tu.flatten_one_level(None) == ((), None)
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)
    assert tu.flatten_one_level_with_keys([5]) == (((tu.SequenceKey(0), 5),), None)
    assert tu.flatten_one_level_with_keys(Box(1, 2)) == \
        ([(tu.FlattenedIndexKey(0), 1), (tu.FlattenedIndexKey(1), 2)], "aux")
    assert tu.flatten_one_level_with_keys(Point(1, 2)) == \
        ([(tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), 2)], Point)


def test_registration():
    class A:
        pass
    tu.register_pytree_node(A, lambda a: ((), None), lambda *_: A())
    for t in (A, tuple, type(None), collections.OrderedDict):
        with pytest.raises(ValueError, match=re.escape(
                f"Duplicate custom PyTreeDef type registration for {t!r}.")):
            tu.register_pytree_node(t, lambda a: ((), None), lambda *_: A())
    with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef type"):
        tu.register_dataclass(A, [], [])
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type"):
        tu.register_static(A)

    NT = collections.namedtuple("NT", "x")   # namedtuples may be registered (override)
    tu.register_pytree_node(NT, lambda n: ((), n.x), lambda aux, ch: NT(aux))
    assert repr(tu.tree_structure(NT(1))) == "PyTreeDef(CustomNode(NT[1], []))"

    class Bad:
        pass
    tu.register_pytree_node(Bad, lambda b: [(1,), None], lambda a, c: Bad())
    with pytest.raises(ValueError, match="should return a \\(children, aux_data\\) tuple, "
                                         "got \\[\\(1,\\), None\\]"):
        tu.tree_flatten(Bad())

    class Bad2:
        pass
    tu.register_pytree_node(Bad2, lambda b: (5, None), lambda a, c: Bad2())
    with pytest.raises(ValueError, match="where 'children' is iterable, got \\(5, None\\)"):
        tu.tree_flatten(Bad2())

    class Gen:
        pass
    tu.register_pytree_node(Gen, lambda g: ((x for x in [1, 2]), None),
                            lambda a, c: (type(c), c))
    leaves, td = tu.tree_flatten(Gen())
    assert leaves == [1, 2] and td.unflatten([3, 4]) == (tuple, (3, 4))


def test_register_dataclass_variants():
    @dataclasses.dataclass
    class D1:
        x: int
        y: int = dataclasses.field(metadata=dict(static=True))
        z: int = dataclasses.field(default=0, init=False)
    with pytest.raises(ValueError, match="Unexpected fields: {'z'}"):
        tu.register_dataclass(D1, data_fields=["x", "z"], meta_fields=["y"])

    @dataclasses.dataclass
    class D2:
        x: int
        y: int
    with pytest.raises(TypeError, match="must both be specified"):
        tu.register_dataclass(D2, data_fields=["x"])
    with pytest.raises(ValueError, match="Missing fields: {'y'}"):
        tu.register_dataclass(D2, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match="must not overlap. Overlapping fields: {'x'}"):
        tu.register_dataclass(D2, data_fields=["x", "y"], meta_fields=["x"])
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(Box)

    class ND:
        def __init__(self, a, b):
            self.a, self.b = a, b
    tu.register_dataclass(ND, data_fields=["a"], meta_fields=["b"])
    pairs, td = tu.tree_flatten_with_path(ND(1, "m"))
    assert pairs == [((tu.GetAttrKey("a"),), 1)]
    assert repr(td) == "PyTreeDef(CustomNode(ND[('m',)], [*]))"
    out = td.unflatten([5])
    assert (out.a, out.b) == (5, "m")

    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        op: str = jtree.static(default="add")
    assert repr(tu.tree_structure(Op(1))) == "PyTreeDef(CustomNode(Op[('add',)], [*]))"
    tu.register_dataclass(D2, data_fields=["x"], meta_fields=[], drop_fields=["y"])
    assert tu.tree_leaves(D2(1, 2)) == [1]


def test_static_and_partial():
    td = tu.tree_structure([Static(1), 2])
    assert td == tu.tree_structure([Static(1), 3]) and td != tu.tree_structure([Static(2), 3])
    assert td.unflatten([5]) == [Static(1), 5]
    p = tu.Partial(max, 1)
    assert isinstance(p, functools.partial) and p(5) == 5 and repr(p) == \
        "Partial(<built-in function max>, 1)"
    assert repr(tu.tree_map(lambda x: x * 10, tu.Partial(max, 1, key=2))) == \
        "Partial(<built-in function max>, 10, key=20)"
    assert tu.tree_structure(tu.Partial(max, 1)) == tu.tree_structure(tu.Partial(max, 2))
    nested = tu.Partial(functools.partial(max, 1), 2)
    assert tu.tree_leaves(nested) == [2] and nested(7) == 7
    assert repr(nested) == \
        "Partial(_HashableCallableShim(functools.partial(<built-in function max>, 1)), 2)"
    assert pickle.loads(pickle.dumps(tu.Partial(max, 1)))(3) == 3
    assert tu.tree_flatten(tu.Partial(max))[0] == []
    assert repr(tu.tree_structure(tu.Partial(max))) == \
        "PyTreeDef(CustomNode(Partial[<built-in function max>], [(), {}]))"


def test_treedef_equality_with_array_aux():
    class C:
        def __init__(self, a, aux):
            self.a, self.aux = a, aux
    tu.register_pytree_node(C, lambda s: ((s.a,), s.aux), lambda aux, ch: C(*ch, aux))
    t1, t2 = tu.tree_structure(C(1, np.zeros(2))), tu.tree_structure(C(1, np.zeros(2)))
    with pytest.raises(ValueError, match="Exception raised while checking equality of "
                                         "metadata fields of pytree"):
        t1 == t2  # noqa: B015
    assert isinstance(hash(t1), int)  # unhashable aux still hashes
    assert tu.tree_structure(C(1, np.zeros(1))) == tu.tree_structure(C(1, np.zeros(1)))
    for _ in range(3):  # unflatten with unhashable aux takes the generic path
        assert type(t1.unflatten([1])) is C


def test_walk_from_iterable_tree_from_node_data():
    td = tu.tree_structure((1, [2, None], {"a": 3}, Point(4, 5)))
    assert td.walk(lambda xs, nd: ("N", xs, nd), lambda x: x * 10, [1, 2, 3, 4, 5]) == (
        "N", (10, ("N", (20, ("N", (), None)), None), ("N", (30,), ["a"]),
              ("N", (40, 50), Point)), None)
    assert tu.tree_structure(1).walk(None, lambda x: x * 10, [1]) == 10
    assert td.from_iterable_tree([1, [2, []], [3], [4, 5]]) == \
        (1, [2, None], {"a": 3}, Point(4, 5))
    with pytest.raises(ValueError, match="Arity mismatch between trees"):
        tu.tree_structure((1, 2)).from_iterable_tree([7])
    reg = tu.default_registry
    F = tu.PyTreeDef.from_node_data_and_children
    assert repr(F(reg, None, [])) == "PyTreeDef(*)"
    assert repr(F(reg, (dict, ["b", "a"]), [tu.tree_structure(1), tu.tree_structure(None)])) \
        == "PyTreeDef({'b': *, 'a': None})"
    for sub in td.children():
        assert F(reg, sub.node_data(), sub.children()) == sub
    with pytest.raises(RuntimeError, match="Could not find type"):
        F(reg, (int, None), [])
    with pytest.raises(RuntimeError, match="Number of keys and entries does not match."):
        F(reg, (dict, ["a"]), [tu.tree_structure(1)] * 2)


def test_pickle_treedef():
    td = tu.tree_structure((1, [2, None], {"a": Point(1, 2)},
                            collections.OrderedDict(b=1, a=2), tu.Partial(max, 3)))
    td2 = pickle.loads(pickle.dumps(td))
    assert td2 == td and hash(td2) == hash(td) and repr(td2) == repr(td)


def test_registry_object():
    reg = tu.default_registry
    assert reg.flatten((1, [2])) == ([1, 2], tu.tree_structure((1, [2])))
    assert reg.flatten_one_level(1) is None
    assert reg.is_node(tuple) and not reg.is_node(int)
    assert reg.flatten_with_path((1, [2]))[0] == [
        ((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1), tu.SequenceKey(0)), 2)]


def test_jax_tree_namespace():
    for name in ("all", "broadcast", "flatten", "flatten_with_path", "leaves",
                 "leaves_with_path", "map", "map_with_path", "reduce", "reduce_associative",
                 "static", "structure", "transpose", "unflatten"):
        assert callable(getattr(jtree, name)), name
    leaves, td = jtree.flatten({"a": 1, "b": (2, 3)})
    assert jtree.unflatten(td, leaves) == {"a": 1, "b": (2, 3)}
    assert jtree.structure([1]) == tu.tree_structure([2])
    assert jtree.leaves_with_path([7]) == [((tu.SequenceKey(0),), 7)]
    assert jtree.all([1, 2])


def test_public_docstrings():
    import jaxlite.tree as tree_mod
    import jaxlite.tree_util as tu_mod
    for mod in (tu_mod, tree_mod):
        for name in dir(mod):
            obj = getattr(mod, name)
            if name.startswith("_") or not callable(obj) or name in ("KeyEntry",):
                continue
            assert obj.__doc__ and obj.__doc__.strip(), f"{mod.__name__}.{name}"
    for meth in ("unflatten", "flatten_up_to", "children", "node_data", "compose", "walk",
                 "from_iterable_tree", "from_node_data_and_children"):
        assert getattr(tu.PyTreeDef, meth).__doc__


def test_no_jax_import_in_library():
    import pathlib
    root = pathlib.Path(_tu.__file__).parent   # the _src/tree_util package
    public = root.parent.parent
    for f in [*root.glob("*.py"), public / "tree_util.py", public / "tree.py"]:
        text = f.read_text()
        assert not re.search(r"^\s*(import jax\b|from jax\b|import jaxlib|from jaxlib)", text,
                             re.M), f


# ----------------------------------------------------------------------------- vs real jax

class TestAgainstJax:
    """Differential tests: the same trees through jax.tree_util and jaxlite.tree_util."""

    @pytest.fixture(scope="class")
    def jtu(self):
        jax = pytest.importorskip("jax")
        jtu = jax.tree_util

        # Register the custom test types with jax too (once).
        if not jtu.is_tree_node(Box):
            jtu.register_pytree_node(Box, lambda s: ((s.a, s.b), s.aux),
                                     lambda aux, ch: Box(*ch, aux))
            jtu.register_pytree_node(Pair, lambda s: s.tree_flatten(),
                                     Pair.tree_unflatten)
            jtu.register_pytree_with_keys(Keyed, lambda s: s.tree_flatten_with_keys(),
                                          Keyed.tree_unflatten)
            jtu.register_dataclass(DC)
            jtu.register_static(Static)
        return jtu

    def _translate(self, tree, jtu):
        """Replace jaxlite Partial by jax Partial (the only type that differs)."""
        if isinstance(tree, tu.Partial):
            return jtu.Partial(tree.func, *tree.args, **tree.keywords)
        return tree

    @pytest.mark.parametrize("i", range(len(_trees())))
    def test_flatten_repr_leaves_paths(self, jtu, i):
        tree = _trees()[i]
        jtree_ = self._translate(tree, jtu)
        jl, jtd = jtu.tree_flatten(jtree_)
        ll, ltd = tu.tree_flatten(tree)
        assert repr(ltd) == repr(jtd)
        assert len(ll) == len(jl) and all(a is b for a, b in zip(ll, jl))
        assert (ltd.num_leaves, ltd.num_nodes) == (jtd.num_leaves, jtd.num_nodes)
        assert [repr(c) for c in ltd.children()] == [repr(c) for c in jtd.children()]
        jp = [(repr(p), tu.keystr(p)) for p, _ in jtu.tree_flatten_with_path(jtree_)[0]]
        lp = [(repr(p), tu.keystr(p)) for p, _ in tu.tree_flatten_with_path(tree)[0]]
        assert lp == jp
        jps = [jtu.keystr(p, simple=True, separator="/")
               for p, _ in jtu.tree_flatten_with_path(jtree_)[0]]
        lps = [tu.keystr(p, simple=True, separator="/")
               for p, _ in tu.tree_flatten_with_path(tree)[0]]
        if not isinstance(tree, Keyed):  # Keyed emits jaxlite keys even under jax
            assert lps == jps
        assert tu.treedef_is_leaf(ltd) == jtu.treedef_is_leaf(jtd)
        assert tu.all_leaves(ll) == jtu.all_leaves(jl)

    @pytest.mark.parametrize("i", range(len(_trees())))
    def test_is_leaf_variants(self, jtu, i):
        tree = _trees()[i]
        jtree_ = self._translate(tree, jtu)
        for pred in (lambda x: x is None, lambda x: isinstance(x, (tuple, list)),
                     lambda x: isinstance(x, dict)):
            jl, jtd = jtu.tree_flatten(jtree_, is_leaf=pred)
            ll, ltd = tu.tree_flatten(tree, is_leaf=pred)
            assert repr(ltd) == repr(jtd)
            assert len(ll) == len(jl)

    MISMATCHES = [
        ((1, 2), (1, 2, 3)), ((1, 2), [1, 2]), ([1, 2], [1]), ({"a": 1}, {"b": 1}),
        ({"a": 1, "b": 2}, {"a": 1}), ({"a": 1}, {"a": 1, "b": 2}), ((1, 2), 5),
        ((1, None), (1, 2)), (None, 1), (Point(1, 2), Other(1, 2)), (Point(1, 2), (1, 2)),
        ((1, 2), Point(1, 2)), (Box(1, 2), (1, 2)), (Box(1, 2, "a"), Box(1, 2, "b")),
        (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2)),
        (collections.OrderedDict(a=1, b=2), {"a": 1, "b": 2}),
        ({"a": 1, "b": 2}, collections.OrderedDict(a=1, b=2)),
        (collections.defaultdict(int, a=1, b=2), collections.defaultdict(list, a=1, b=2)),
        ([(1, 2)], [(1, 2, 3)]), ({"x": [1, {"y": (1, 2)}]}, {"x": [1, {"y": (1,)}]}),
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}), (DC(1, 2), DC(1, 2, "mul")), (DC(1, 2), (1,)),
        (Box({"a": 1}, 2), Box({"b": 1}, 2)), ([1, 2], np.zeros(2)),
        ({1: 0, 2: 0}, {1: 0}), (Box(1, (2, 3)), Box(1, (2,))), (DC((2, 3), 1), DC((2,), 1)),
    ]

    @pytest.mark.parametrize("a,b", MISMATCHES)
    def test_mismatch_errors(self, jtu, a, b):
        def err(fn):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                return type(e), str(e)
            return None
        je = err(lambda: jtu.tree_structure(a).flatten_up_to(b))
        le = err(lambda: tu.tree_structure(a).flatten_up_to(b))
        assert le == je
        je = err(lambda: jtu.tree_map(lambda *xs: 0, a, b))
        le = err(lambda: tu.tree_map(lambda *xs: 0, a, b))
        assert le == je
        je = err(lambda: jtu.tree_map_with_path(lambda *xs: 0, a, b))
        le = err(lambda: tu.tree_map_with_path(lambda *xs: 0, a, b))
        assert le == je

    def test_unflatten_errors(self, jtu):
        for tree, leaves in [((1, [2, 3]), [1, 2]), ((1, [2, 3]), [1, 2, 3, 4]), (1, []),
                             (1, [1, 2]), (None, [1])]:
            msgs = []
            for mod in (jtu, tu):
                try:
                    mod.tree_structure(tree).unflatten(leaves)
                except ValueError as e:
                    msgs.append(str(e))
            assert len(msgs) == 2 and msgs[0] == msgs[1]

    def test_misc_functions(self, jtu):
        cases = [
            lambda m: m.tree_reduce(operator.add, [1, (2, 3)], 100),
            lambda m: m.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5]),
            lambda m: m.tree_all([1, (True, 2)]),
            lambda m: m.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))),
            lambda m: m.tree_transpose(m.tree_structure([0, 0]), m.tree_structure((0, 0)),
                                       [(1, 2), (3, 4)]),
            lambda m: repr(m.treedef_tuple([m.tree_structure(1), m.tree_structure([1])])),
            lambda m: repr(m.tree_structure((1, None)).compose(m.tree_structure([1, 2]))),
            lambda m: m.flatten_one_level({"b": 1, "a": 2}),
            lambda m: m.flatten_one_level_with_keys([5, 6]),
            lambda m: [m.is_tree_node(t) for t in (tuple, Point, int, Box, type(None))],
            lambda m: m.tree_structure({"a": [1, None]}).node_data(),
            lambda m: m.tree_map(lambda x: x, collections.defaultdict(list, b=1, a=2)),
            lambda m: m.tree_leaves({3: "x", 1: "y", 2.5: "z", -1: "w"}),
        ]
        for case in cases:
            assert repr(case(tu)) == repr(case(jtu))

    def test_error_messages_misc(self, jtu):
        cases = [
            lambda m: m.tree_flatten({1: "a", "x": 2}),
            lambda m: m.tree_flatten([1], is_leaf=lambda x: 1),
            lambda m: m.flatten_one_level(1),
            lambda m: m.tree_transpose(m.tree_structure([0, 0]), m.tree_structure((0, 0, 0)),
                                       [(1, 2), (3, 4)]),
            lambda m: m.tree_broadcast((1, None), (0, (0, 0))),
            lambda m: m.tree_reduce_associative(operator.add, []),
            lambda m: m.register_pytree_node(tuple, lambda x: x, lambda x: x),
            lambda m: m.register_dataclass(Box),
        ]
        for case in cases:
            errs = []
            for mod in (jtu, tu):
                try:
                    case(mod)
                    errs.append(None)
                except Exception as e:  # noqa: BLE001
                    errs.append((type(e), str(e)))
            assert errs[0] == errs[1]


def test_jaxlite_arrays_and_jit_are_leaves():
    import jaxlite
    import jaxlite.numpy as jnp
    x = jnp.arange(3.0)
    leaves, td = tu.tree_flatten({"w": x, "b": (x, None)})
    assert len(leaves) == 2 and all(leaf is x for leaf in leaves)
    out = jaxlite.jit(lambda t: tu.tree_map(lambda v: v * 2, t))({"w": x, "p": Point(x, x)})
    assert type(out["p"]) is Point and np.allclose(np.asarray(out["w"]), [0, 2, 4])


def test_seed_era_spellings():
    """The seeds' older spellings: ``jax.tree_map`` & co. work with a DeprecationWarning,
    ``config.update('jax_array', True)`` is accepted and False is refused clearly."""
    import warnings
    import jaxlite
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert jaxlite.tree_map(lambda x: x * 2, {"a": 1, "b": (2,)}) == {"a": 2, "b": (4,)}
        assert jaxlite.tree_leaves({"b": 2, "a": 1}) == [1, 2]
    assert any(issubclass(x.category, DeprecationWarning) and "jax.tree_util.tree_map"
               in str(x.message) for x in w)
    jaxlite.config.update("jax_array", True)
    with pytest.raises(ValueError, match="jax_array=False is not supported"):
        jaxlite.config.update("jax_array", False)
    with pytest.raises(AttributeError, match="no attribute 'tree_nonexistent'"):
        jaxlite.tree_nonexistent


def test_jax_src_tree_util_has_prefix_errors():
    """``jax._src.tree_util`` (jaxlite's compat module under install_as_jax) has JAX's
    prefix_errors / equality_errors, which flax's struct tests import."""
    from jaxlite._src.compat import tree_util as ctu
    (e,) = ctu.prefix_errors((1.0, [2.0]), (1.0, 2.0))
    with pytest.raises(ValueError, match=r"in_axes\[1\]") as ours:
        raise e("in_axes")
    assert ctu.prefix_errors((1.0, 2.0), (1.0, 2.0)) == []
    assert callable(ctu.equality_errors) and callable(ctu.equality_errors_pytreedef)
    real = pytest.importorskip("jax._src.tree_util")
    (e2,) = real.prefix_errors((1.0, [2.0]), (1.0, 2.0))
    with pytest.raises(ValueError) as theirs:
        raise e2("in_axes")
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]
