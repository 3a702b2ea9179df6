"""Loops update their carried arrays in place (``x.at[i].set(v)`` in a fori_loop /
while_loop / scan body writes one element, as XLA does, instead of copying the whole carry
every step), and never a buffer anybody else can see: the caller's initial value, a
constant, a slice of the scanned xs, a buffer the body returns twice, an array a callback
kept. Values against NumPy loops, in tier 1 and tier 2, jitted and eager."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import config, lax

TIERS = [1, 2]


def _build(n):
    x = jnp.arange(n, dtype=jnp.float32)

    def fori(x):
        return lax.fori_loop(0, n, lambda i, b: b.at[i].set(x[i] * 2.0 + b[i - 1]),
                             jnp.zeros(n))

    def whl(x):
        def body(c):
            i, b = c
            return i + 1, b.at[i].add(x[i]).at[(i + 1) % n].multiply(0.5)
        return lax.while_loop(lambda c: c[0] < n, body, (0, jnp.ones(n)))[1]

    def scn(x):
        def body(b, i):
            b = lax.dynamic_update_slice(b, x[i][None] + 1.0, (i,))
            return b, b[i] * 3.0
        return lax.scan(body, jnp.zeros(n), jnp.arange(n))
    want_f = np.zeros(n, np.float32)
    for i in range(n):
        want_f[i] = np.float32(i) * np.float32(2.0) + want_f[i - 1]
    want_w = np.ones(n, np.float32)
    for i in range(n):
        want_w[i] += np.float32(i)
        want_w[(i + 1) % n] *= np.float32(0.5)
    want_s = np.arange(n, dtype=np.float32) + 1
    return x, (fori, whl, scn), (want_f, want_w, (want_s, want_s * 3))


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("jitted", [True, False])
def test_array_built_in_loops(tier, jitted):
    x, fns, wants = _build(50)
    with config.override("jaxlite_tier", tier):
        for f, want in zip(fns, wants):
            got = (jax.jit(f) if jitted else f)(x)
            for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("tier", TIERS)
def test_initial_carry_and_constants_stay_unchanged(tier):
    init = jnp.arange(6.0)
    const = jnp.full(6, 7.0)
    before = np.asarray(init).copy()

    def f(init):
        def body(i, c):
            a, b = c
            # the carry becomes the closed-over constant at step 2: later in-place updates
            # must not write into it
            a = jnp.where(i == 2, 0.0, 1.0) * 0 + lax.cond(i == 2, lambda: const,
                                                          lambda: a)
            return a.at[i].set(-1.0), b.at[i].set(a[i] + 10.0)
        return lax.fori_loop(0, 6, body, (init, init))
    with config.override("jaxlite_tier", tier):
        a, b = jax.jit(f)(init)
        a2, b2 = f(init)
    np.testing.assert_array_equal(np.asarray(init), before)
    np.testing.assert_array_equal(np.asarray(const), np.full(6, 7.0))
    wa, wb = np.arange(6.0), np.arange(6.0)
    for i in range(6):
        if i == 2:
            wa = np.full(6, 7.0)
        wb[i] = wa[i] + 10.0
        wa = wa.copy()
        wa[i] = -1.0
    for got in (a, a2):
        np.testing.assert_array_equal(np.asarray(got), wa)
    for got in (b, b2):
        np.testing.assert_array_equal(np.asarray(got), wb)


@pytest.mark.parametrize("tier", TIERS)
def test_carry_returned_twice_is_not_shared(tier):
    """Both carries the same buffer: an in-place update of one would change the other."""
    def f(a):
        def body(i, c):
            a, b = c
            n = a.at[i].set(b[i] + 100.0)
            return n, n
        return lax.fori_loop(0, 4, body, (a, a))
    want_a = np.arange(4.0, dtype=np.float32)
    for i in range(4):
        want_a[i] = want_a[i] + 100
    with config.override("jaxlite_tier", tier):
        for fn in (jax.jit(f), f):
            a, b = fn(jnp.arange(4.0))
            np.testing.assert_array_equal(np.asarray(a), want_a)
            np.testing.assert_array_equal(np.asarray(b), want_a)


@pytest.mark.parametrize("tier", TIERS)
def test_carry_aliasing_a_passed_through_carry(tier):
    """Step 0 returns one buffer as both carries; later steps update the first in place
    and pass the second through: the update must not reach the second."""
    def f(a):
        def body(i, c):
            a, b = c
            a2 = a.at[i].set(-1.0)
            return lax.cond(i == 0, lambda: (a2, a2), lambda: (a2, b))
        return lax.fori_loop(0, 4, body, (a, a))
    with config.override("jaxlite_tier", tier):
        for fn in (jax.jit(f), f):
            a, b = fn(jnp.zeros(4))
            np.testing.assert_array_equal(np.asarray(a), [-1, -1, -1, -1])
            np.testing.assert_array_equal(np.asarray(b), [-1, 0, 0, 0])


@pytest.mark.parametrize("tier", TIERS)
def test_carry_that_is_a_slice_of_xs(tier):
    """A carry that was a row of the scanned xs (a view): updating it in place would
    write into xs."""
    xs = jnp.arange(12.0).reshape(4, 3)
    keep = np.asarray(xs).copy()

    def f(xs):
        def body(c, x):
            return x, c.at[0].set(-5.0)
        return lax.scan(body, jnp.zeros(3), xs)
    with config.override("jaxlite_tier", tier):
        for fn in (jax.jit(f), f):
            c, ys = fn(xs)
            np.testing.assert_array_equal(np.asarray(xs), keep)
            np.testing.assert_array_equal(np.asarray(c), keep[3])
            want = np.concatenate([[[0.0, 0, 0]], keep[:3]]).astype(np.float32)
            want[:, 0] = -5.0
            np.testing.assert_array_equal(np.asarray(ys), want)


def test_arrays_a_callback_kept_are_not_written():
    seen = []

    def f(b):
        def body(i, b):
            jax.debug.callback(lambda v: seen.append(v), b)
            return b.at[i].set(1.0)
        return lax.fori_loop(0, 3, body, b)
    out = jax.jit(f)(jnp.zeros(3))
    np.testing.assert_array_equal(np.asarray(out), [1, 1, 1])
    assert [np.asarray(v).tolist() for v in seen] == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]


def test_loop_body_writes_its_carry_in_place(monkeypatch):
    """The generated body updates the carry through the in-place form of scatter, and the
    loop hands its carry over: one copy of the initial value, none per step."""
    import linecache

    from jaxlite._src.prims import scan as scan_mod
    n = 64

    def f(x):
        return lax.fori_loop(0, n, lambda i, b: b.at[i].set(x[i]), jnp.zeros(n))
    with config.override("jaxlite_tier", 1):
        jf = jax.jit(f)
        x = jnp.arange(n, dtype=jnp.float32)
        np.testing.assert_array_equal(np.asarray(jf(x)), np.arange(n))
    g = jf._programs()[0].tier1.raw.__globals__
    (body,) = [v for k, v in g.items() if k.startswith("_f_scan_body")]
    assert "_scatter_into" in "".join(linecache.getlines(body.__code__.co_filename))
    copies = []
    orig = scan_mod.hand_over

    def counting(carry, handed, first=False):
        before = [id(c) for c in carry]
        orig(carry, handed, first)
        copies.append(sum(id(c) != b for c, b in zip(carry, before)))
    monkeypatch.setattr(scan_mod, "hand_over", counting)
    np.testing.assert_array_equal(np.asarray(jf(x * 2)), np.arange(n) * 2)
    assert len(copies) == n + 1 and copies[0] == 1 and sum(copies) == 1


def _has_numba():
    from jaxlite._src.compiler import fusion
    return fusion.numba_module() is not None


@pytest.mark.skipif(not _has_numba(), reason="tier 2's numba loops need numba")
def test_tier2_compiles_array_building_loops_whole():
    """In tier 2 a loop whose body reads elements of vectors and writes elements of its
    carried vectors is one numba loop (the carried vector updated in its output buffer);
    values equal tier 1's."""
    x, (fori, whl, scn), _ = _build(40)

    def hist(idx, w):       # .at[].add: a histogram
        def body(i, h):
            return h.at[idx[i]].add(w[i])
        return lax.fori_loop(0, idx.shape[0], body, jnp.zeros(5))

    def dyn(x):             # while with a dynamic bound, reading the carried vector
        def cond(c):
            i, b = c
            return (i < 30) & (b[i - 1] < 1e6)
        def body(c):
            i, b = c
            return i + 1, b.at[i].set(b[i - 1] * 1.5 + x[i])
        return lax.while_loop(cond, body, (1, jnp.ones(40)))
    idx = jnp.array([0, 3, 3, 9, -1, 4, 2, 3], dtype=jnp.int32)   # 9: out of bounds
    w = jnp.arange(8, dtype=jnp.float32) * 0.25
    cases = [(fori, (x,)), (scn, (x,)), (hist, (idx, w)), (dyn, (x,))]
    for f, args in cases:
        with config.override("jaxlite_tier", 1):
            want = jax.jit(f)(*args)
        with config.override("jaxlite_tier", 2):
            jf = jax.jit(f)
            got = jf(*args)
            text = jf.lower(*args).compile().as_text()
        assert "compiled whole: one numba loop" in text.split("# ---- tier 2")[1], f
        for g, wv in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(wv))
            assert np.asarray(g).dtype == np.asarray(wv).dtype
    h = np.zeros(5, np.float32)
    for i, k in enumerate(np.asarray(idx)):
        k = k + 5 if k < 0 else k       # (a negative index counts from the end, as in JAX)
        if 0 <= k < 5:
            h[k] += np.float32(i * 0.25)
    np.testing.assert_array_equal(np.asarray(jax.jit(hist)(idx, w)), h)


@pytest.mark.parametrize("tier", TIERS)
def test_carry_also_stacked_as_output(tier):
    """The body returns its updated carry as the step's output too: each stacked row keeps
    the carry as it was at that step, though the next step updates it in place."""
    def f(b):
        def body(b, i):
            b2 = b.at[i].set(i + 1.0)
            return b2, b2
        return lax.scan(body, b, jnp.arange(4))
    with config.override("jaxlite_tier", tier):
        for fn in (jax.jit(f), f):
            c, ys = fn(jnp.zeros(4))
            np.testing.assert_array_equal(np.asarray(c), [1, 2, 3, 4])
            np.testing.assert_array_equal(np.asarray(ys), np.tril(np.arange(1.0, 5.0)))


def _set_at_p():
    """A library primitive (jax.extend) ``xs.at[i].set(v)`` lowered through a traceable
    function, as equinox's loop primitives are."""
    from jaxlite.extend.core import Primitive
    from jaxlite.interpreters import mlir

    def set_at(xs, i, v):
        return xs.at[i].set(v)
    p = Primitive("test_loop_inplace_set_at")
    p.def_impl(set_at)
    p.def_abstract_eval(lambda xs, i, v: xs)
    mlir.register_lowering(p, mlir.lower_fun(set_at, multiple_results=False))
    return p


@pytest.mark.parametrize("tier", TIERS)
def test_checkpoint_buffers_update_in_place(tier, monkeypatch):
    """equinox's checkpointed while_loop under linearize: each step reads an element of a
    checkpoint buffer (dynamic_slice) and then writes that element (dynamic_update_slice),
    and the loop's own buffer is written by a library primitive lowered through a function.
    XLA updates both in place; so must the loop here: no whole-buffer copy per step (that
    made equinox's test_speed_buffer_while quadratic in the buffer size)."""
    from jaxlite._src.prims.dynamic_slice import DynamicUpdateSlice
    from jaxlite._src.prims.scatter import Scatter
    set_at_p = _set_at_p()
    n = 40

    def f(xs):
        def body(c):
            i, xs, ck = c
            old = lax.dynamic_slice(ck, (i,), (1,))
            ck = lax.dynamic_update_slice(ck, jnp.where(i % 3 == 0, i, old * 2), (i,))
            xs = set_at_p.bind(xs, i, xs[i - 1] + 1.0)
            return i + 1, xs, ck
        return lax.while_loop(lambda c: c[0] < n, body, (1, xs, jnp.ones(n, jnp.int32)))
    copies = []
    for cls in (DynamicUpdateSlice, Scatter):
        orig = cls.impl

        def counting(self, *args, _orig=orig, **kw):
            if not kw.get("into"):     # (scatter's in-place form is impl(..., into=True))
                copies.append(self.name)
            return _orig(self, *args, **kw)
        monkeypatch.setattr(cls, "impl", counting)
    xs = jnp.zeros(n)
    with config.override("jaxlite_tier", tier):
        jf = jax.jit(f)
        for _ in range(3):        # (tier 2 takes over after the first calls)
            got = jf(xs)
    want_xs, want_ck = np.zeros(n, np.float32), np.ones(n, np.int32)
    for i in range(1, n):
        want_ck[i] = i if i % 3 == 0 else want_ck[i] * 2
        want_xs[i] = want_xs[i - 1] + 1.0
    np.testing.assert_array_equal(np.asarray(got[1]), want_xs)
    np.testing.assert_array_equal(np.asarray(got[2]), want_ck)
    np.testing.assert_array_equal(np.asarray(xs), np.zeros(n))
    assert copies == []


def test_slices_and_gathers_are_new_arrays():
    """dynamic_slice and gather give arrays of their own, as in JAX (never views of the
    operand, which would pin its buffer for in-place updates)."""
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for f in (lambda x: lax.dynamic_slice(x, (1, 0), (2, 4)),
              lambda x: lax.dynamic_slice(x, (0, 0), (3, 4)),
              lambda x: x[jnp.array([0, 1, 2])],
              lambda x: lax.dynamic_index_in_dim(x, 1, keepdims=False)):
        for g in (f, jax.jit(f)):
            out = np.asarray(g(x))
            assert not np.shares_memory(out, x)
    from jaxlite._src.prims.gather import GatherDimensionNumbers, gather_p
    dn = GatherDimensionNumbers(offset_dims=(0, 1), collapsed_slice_dims=(),
                                start_index_map=(), operand_batching_dims=(),
                                start_indices_batching_dims=())
    out = gather_p.impl(x, np.zeros((0,), np.int32), dimension_numbers=dn,
                        slice_sizes=(3, 4), indices_are_sorted=True, unique_indices=True,
                        mode="clip", fill_value=None)
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)
