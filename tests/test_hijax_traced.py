"""Hijax types and primitives (jax.experimental.hijax) under jit, grad, vmap, eval_shape
and control flow: a small immutable type (a pair of arrays) and a small mutable one (a box
whose content may change shape, its quasi-dynamic data), with primitives over them. Results
under transformations are compared with eager evaluation, the values JAX gives, and the
pair's with the real JAX when it is installed. (Inside a transformation jaxlite hands the
traced function the hijax object itself holding tracers, where JAX hands a tracer of the
hijax type: the programs here read values through primitives, which both support.)"""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental import cur_qdd
from jaxlite.experimental import hijax as hjx

# ----------------------------------------------------------------------------- a pair

def _pair_api(jx, hjx):
    """An immutable hijax type (a pair of arrays) and its primitives, written against the
    hijax API of ``jx`` (jaxlite, or the real JAX for reference)."""
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    class PairTy(hjx.HiType):
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __eq__(self, other):
            return type(other) is PairTy and (self.a, self.b) == (other.a, other.b)

        def __hash__(self):
            return hash((PairTy, self.a, self.b))

        def str_short(self, short_dtypes=False, **_):
            return "Pair"

        def lo_ty(self):
            return [self.a, self.b]

        def lower_val(self, p):
            return [p.a, p.b]

        def raise_val(self, a, b):
            return Pair(a, b)

        def to_tangent_aval(self):
            return PairTy(self.a.to_tangent_aval(), self.b.to_tangent_aval())

    hjx.register_hitype(Pair, lambda p: PairTy(jx.typeof(p.a), jx.typeof(p.b)))

    class MakePair(hjx.HiPrimitive):
        def impl(self, a, b):
            return Pair(a, b)

        def abstract_eval(self, a, b):
            return PairTy(a, b), set()

        def to_lojax(self, a, b):
            return Pair(a, b)

    class PairGet(hjx.HiPrimitive):
        def impl(self, p, *, i):
            return (p.a, p.b)[i]

        def abstract_eval(self, p, *, i):
            return (p.a, p.b)[i], set()

        def to_lojax(self, p, *, i):
            return (p.a, p.b)[i]

    return Pair, MakePair("make_pair"), PairGet("pair_get")


_LITE_PAIR = _pair_api(jax, hjx)


def _pair_programs(jx, jnp_, api):
    """(what jit of a function over pairs gives, a pair through a jitted function, a
    fori_loop whose body makes and reads pairs) with ``jx``."""
    Pair, make_p, get_p = api

    def f(x):
        return get_p.bind(make_p.bind(jnp_.sin(x), x * 2.), i=0) * 3.

    @jx.jit
    def swap(p):
        return make_p.bind(get_p.bind(p, i=1), get_p.bind(p, i=0) + 1.)

    x = jnp_.arange(4.)
    q = swap(Pair(jnp_.float32(1.), jnp_.arange(3.)))
    return (np.asarray(jx.jit(f)(x)), (type(q).__name__, np.asarray(q.a), float(q.b)),
            np.asarray(jx.lax.fori_loop(0, 3, lambda i, c: f(c), x)))


def test_immutable_hitype_under_jit_grad_vmap():
    _, make_p, get_p = _LITE_PAIR

    def f(x):
        return get_p.bind(make_p.bind(jnp.sin(x), x * 2.), i=0) * 3.

    x = jnp.arange(4.)
    eager = f(x)
    np.testing.assert_allclose(eager, np.sin(np.arange(4.)) * 3., rtol=1e-6)
    jitted, (name, qa, qb), loop = _pair_programs(jax, jnp, _LITE_PAIR)
    np.testing.assert_allclose(jitted, eager, rtol=1e-6)
    assert name == "Pair" and qb == 2.
    np.testing.assert_array_equal(qa, [0., 1., 2.])
    np.testing.assert_allclose(loop, f(f(f(x))), rtol=1e-6)
    # (the primitives' own jvp/batching rules are not used: AD and vmap see to_lojax)
    np.testing.assert_allclose(jax.vmap(f)(x), eager, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda x: f(x).sum())(x), 3. * np.cos(np.arange(4.)),
                               rtol=1e-6)


def test_immutable_hitype_matches_jax():
    real = pytest.importorskip("jax")
    from jax.experimental import hijax as real_hjx
    want = _pair_programs(real, real.numpy, _pair_api(real, real_hjx))
    got = _pair_programs(jax, jnp, _LITE_PAIR)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[1][0] == want[1][0] and got[1][2] == want[1][2]
    np.testing.assert_array_equal(got[1][1], want[1][1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_immutable_hitype_argument_retraces_on_new_types():
    Pair, make_p, get_p = _LITE_PAIR
    calls = []

    @jax.jit
    def swap(p):
        calls.append(1)
        return make_p.bind(get_p.bind(p, i=1), get_p.bind(p, i=0) + 1.)

    swap(Pair(jnp.float32(1.), jnp.arange(3.)))
    swap(Pair(jnp.float32(5.), jnp.arange(3.)))      # same types: no retrace
    assert len(calls) == 1
    q = swap(Pair(jnp.float32(5.), jnp.arange(4.)))  # new types: traced again
    assert len(calls) == 2 and float(q.b) == 6. and q.a.shape == (4,)


# ----------------------------------------------------------------------------- a box

class Box:
    """A mutable container of one pytree of arrays."""

    def __init__(self, leaves, treedef):
        self.leaves, self.treedef = tuple(leaves), treedef

    def cur_qdd(self):
        return BoxQDD(tuple(jax.typeof(x) for x in self.leaves), self.treedef)


class BoxQDD:
    def __init__(self, avals, treedef):
        self.avals, self.treedef = avals, treedef

    def __eq__(self, other):
        return (self.avals, self.treedef) == (other.avals, other.treedef)

    def __hash__(self):
        return hash((self.avals, self.treedef))


class BoxTy(hjx.MutableHiType):
    def __eq__(self, other):
        return type(other) is BoxTy

    def __hash__(self):
        return hash(BoxTy)

    def lo_ty_qdd(self, qdd):
        return list(qdd.avals)

    def new_from_loval(self, qdd, *vals):
        return Box(vals, qdd.treedef)

    def read_loval(self, qdd, box):
        return list(box_get(box))

    def update_from_loval(self, qdd, box, *vals):
        box_set(box, jax.tree.unflatten(qdd.treedef, list(vals)))

    def to_tangent_aval(self):
        return self


hjx.register_hitype(Box, lambda b: BoxTy())


class NewBox(hjx.HiPrimitive):
    def impl(self, *leaves, treedef):
        return Box(leaves, treedef)

    def abstract_eval(self, *leaves, treedef):
        return BoxTy(), set()

    def to_lojax(self, *leaves, treedef):
        return Box(leaves, treedef)


class BoxGet(hjx.HiPrimitive):
    multiple_results = True

    def impl(self, box):
        return box.leaves

    def abstract_eval(self, box):
        return list(box.mutable_qdd.cur_val.avals), set()

    def to_lojax(self, box):
        return box.leaves


class BoxSet(hjx.HiPrimitive):
    multiple_results = True

    def impl(self, box, *leaves, treedef):
        box.leaves, box.treedef = tuple(leaves), treedef
        return []

    def abstract_eval(self, box, *leaves, treedef):
        return [], set()

    to_lojax = impl


new_box_p, box_get_p, box_set_p = NewBox("new_box"), BoxGet("box_get"), BoxSet("box_set")


def new_box(tree):
    leaves, treedef = jax.tree.flatten(tree)
    return new_box_p.bind(*leaves, treedef=treedef)


def box_get(box):
    return box_get_p.bind(box)


def box_read(box):
    return jax.tree.unflatten(cur_qdd(box).treedef, list(box_get(box)))


def box_set(box, tree):
    leaves, treedef = jax.tree.flatten(tree)
    box_set_p.bind(box, *leaves, treedef=treedef)


def _step(box, x):
    """Adds x to the box's 'w', appends a growing 'hist' entry; returns a scalar."""
    t = box_read(box)
    t = {"w": t["w"] + x, "hist": jnp.concatenate([t["hist"], t["w"][:1]])}
    box_set(box, t)
    return (t["w"] * 2.).sum()


def _fresh():
    return new_box({"w": jnp.arange(3.), "hist": jnp.zeros((0,))})


def test_mutable_hitype_jit_argument_is_written_back():
    eager_box, jit_box = _fresh(), _fresh()
    step = jax.jit(_step)
    for i in range(3):
        y_eager = _step(eager_box, jnp.float32(i))
        y_jit = step(jit_box, jnp.float32(i))
        np.testing.assert_allclose(y_jit, y_eager)
    # the content changed shape at every call (quasi-dynamic data): each call traced anew
    got, want = box_read(jit_box), box_read(eager_box)
    np.testing.assert_allclose(got["w"], want["w"])
    np.testing.assert_allclose(got["hist"], want["hist"])
    assert got["hist"].shape == (3,)
    assert not isinstance(got["w"], jax.core.Tracer)


def test_mutable_hitype_created_and_read_under_transformations():
    def f(x):
        b = new_box({"v": x})
        box_set(b, {"v": box_read(b)["v"] * x})
        return box_read(b)["v"].sum()

    x = jnp.arange(1., 4.)
    np.testing.assert_allclose(jax.jit(f)(x), f(x))
    np.testing.assert_allclose(jax.grad(f)(x), 2. * np.arange(1., 4.))
    np.testing.assert_allclose(jax.vmap(f)(x), np.arange(1., 4.) ** 2)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), 2. * np.arange(1., 4.))


def test_mutable_hitype_grad_with_nondiff_box():
    box = new_box({"v": jnp.float32(0.)})

    def loss(x, b):
        box_set(b, {"v": jax.lax.stop_gradient(x * 2.)})
        return x ** 2 + box_read(b)["v"]

    g = jax.grad(loss)(jnp.float32(3.), box)
    assert float(g) == 6.
    assert float(box_read(box)["v"]) == 6.


def test_mutable_hitype_eval_shape_leaves_it_alone():
    box = new_box({"w": jnp.arange(3.), "hist": jnp.zeros((0,))})
    out = jax.eval_shape(_step, box, jnp.float32(1.))
    assert out.shape == () and out.dtype == jnp.float32
    np.testing.assert_array_equal(box_read(box)["w"], [0., 1., 2.])
    assert box_read(box)["hist"].shape == (0,)


def test_nested_jit_with_box():
    inner = jax.jit(_step)

    @jax.jit
    def outer(b, x):
        return inner(b, x) + inner(b, x)

    b1, b2 = _fresh(), _fresh()
    want = _step(b1, jnp.float32(1.)) + _step(b1, jnp.float32(1.))
    np.testing.assert_allclose(outer(b2, jnp.float32(1.)), want)
    np.testing.assert_allclose(box_read(b2)["w"], box_read(b1)["w"])
    np.testing.assert_allclose(box_read(b2)["hist"], box_read(b1)["hist"])


def test_box_static_arguments_and_kwargs():
    @jax.jit
    def f(b, *, scale):
        return _step(b, scale)

    g = jax.jit(lambda b, n: _step(b, jnp.float32(n)), static_argnums=1)
    b1, b2 = _fresh(), _fresh()
    np.testing.assert_allclose(f(b1, scale=jnp.float32(2.)), _step(b2, jnp.float32(2.)))
    np.testing.assert_allclose(g(b1, 3), _step(b2, jnp.float32(3.)))
    np.testing.assert_allclose(box_read(b1)["hist"], box_read(b2)["hist"])


def test_box_closed_over_by_scan_body_is_threaded_and_written_back():
    # JAX hoists a mutable hijax value a scan body closes over into the loop's state: the
    # body's writes are seen by later iterations and the value holds the final state after
    box, ref = new_box({"w": jnp.arange(3.)}), new_box({"w": jnp.arange(3.)})

    def body(c, x):
        t = box_read(box)
        box_set(box, {"w": t["w"] * 2. + x})
        return c + t["w"].sum(), t["w"][0]

    xs = jnp.arange(4.)
    c, ys = jax.lax.scan(body, jnp.float32(0.), xs)
    want_c, want_ys = 0., []
    for x in np.arange(4.):             # the same loop run eagerly on ``ref``
        t = box_read(ref)
        box_set(ref, {"w": t["w"] * 2. + x})
        want_c += float(t["w"].sum())
        want_ys.append(float(t["w"][0]))
    np.testing.assert_allclose(c, want_c)
    np.testing.assert_allclose(ys, want_ys)
    got = box_read(box)["w"]
    assert not isinstance(got, jax.core.Tracer)
    np.testing.assert_allclose(got, box_read(ref)["w"])
    # a second scan with the same body goes on from there
    jax.lax.scan(body, jnp.float32(0.), xs[:1])
    np.testing.assert_allclose(box_read(box)["w"], box_read(ref)["w"] * 2.)


def test_box_closed_over_by_nested_loops():
    box = new_box({"v": jnp.float32(1.)})

    def outer(c, _):
        def inner(c2, _):
            box_set(box, {"v": box_read(box)["v"] * 2.})
            return c2 + 1, None
        c, _ = jax.lax.scan(inner, c, None, length=3)
        return c, box_read(box)["v"]

    c, ys = jax.lax.scan(outer, 0, None, length=2)
    assert int(c) == 6
    np.testing.assert_allclose(ys, [8., 64.])
    np.testing.assert_allclose(box_read(box)["v"], 64.)
    # fori_loop with static bounds is a scan
    counter = new_box({"n": jnp.float32(0.)})

    def add_i(i, c):
        box_set(counter, {"n": box_read(counter)["n"] + i})
        return c + 1
    assert int(jax.lax.fori_loop(0, 4, add_i, 0)) == 4
    np.testing.assert_allclose(box_read(counter)["n"], 6.)


def test_box_closed_over_by_while_loop():
    box = new_box({"s": jnp.float32(0.)})

    def body(c):
        box_set(box, {"s": box_read(box)["s"] + c})
        return c + 1
    assert int(jax.lax.while_loop(lambda c: c < 4, body, 0)) == 4
    np.testing.assert_allclose(box_read(box)["s"], 6.)      # (0 + 1 + 2 + 3, as JAX gives)
    # a condition reading the value (JAX 0.10.2 raises NotImplementedError here; jaxlite
    # threads the value through the condition too)
    k = new_box({"k": jnp.int32(0)})

    def bump(c):
        box_set(k, {"k": box_read(k)["k"] + 1})
        return c
    jax.lax.while_loop(lambda c: box_read(k)["k"] < 5, bump, 0)
    assert int(box_read(k)["k"]) == 5 and not isinstance(box_read(k)["k"], jax.core.Tracer)


def test_box_closed_over_by_scan_body_restored_on_error():
    box = new_box({"w": jnp.arange(3.)})

    def grows(c, _):        # the content changes type: not a loop state (a carry error)
        box_set(box, {"w": jnp.concatenate([box_read(box)["w"], jnp.zeros(1)])})
        return c, None
    with pytest.raises(TypeError, match="carry"):
        jax.lax.scan(grows, 0., None, length=2)
    np.testing.assert_array_equal(box_read(box)["w"], [0., 1., 2.])
    assert not isinstance(box_read(box)["w"], jax.core.Tracer)


if __name__ == "__main__":
    pytest.main([__file__, "-q"])
