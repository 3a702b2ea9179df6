"""Tier 2's whole loops over small arrays (``compiler/numba_bodies.py``): a scan/while/fori
body computing on vectors and matrices runs as one numba function, with tier 1's values bit
for bit (NumPy's own loops for ufuncs, matmul and reductions), and falls back to tier 1's
loop for what it cannot write."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

pytest.importorskip("numba")

from jaxlite._src.compiler import ufunc_loops  # noqa: E402


def run_tier(tier, fn, *args):
    with jax.config.override("jaxlite_tier", tier):
        f = jax.jit(fn)
        return f(*args), f


def tier2_text(f, *args):
    with jax.config.override("jaxlite_tier", 2):
        return f.lower(*args).compile().as_text()


def assert_same(o1, o2):
    l1, l2 = jax.tree_util.tree_leaves(o1), jax.tree_util.tree_leaves(o2)
    assert len(l1) == len(l2)
    for a, b in zip(l1, l2):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        assert a.tobytes() == b.tobytes(), (a, b)


def check(fn, *args, whole=True):
    """Tier 2 equals tier 1 bit for bit (and NumPy-free eager evaluation within rounding);
    ``whole``: the loop is compiled whole over arrays."""
    o1, _ = run_tier(1, fn, *args)
    o2, f2 = run_tier(2, fn, *args)
    assert_same(o1, o2)
    text = tier2_text(f2, *args)
    assert ("compiled whole (arrays)" in text) == whole, text
    return o2


RNG = np.random.default_rng(0)


def arr(*shape, dtype=np.float32, scale=1.0):
    return jnp.asarray((RNG.standard_normal(shape) * scale).astype(dtype))


def test_rnn_scan_matches_tier1_and_numpy_loop():
    W, xs = arr(16, 16, scale=0.3), arr(40, 16)

    def rnn(W, xs):
        def body(h, x):
            h = jnp.tanh(W @ h + x)
            return h, h.sum()
        return lax.scan(body, jnp.zeros(16), xs)
    h, ys = check(rnn, W, xs)
    Wn, xn = np.asarray(W), np.asarray(xs)
    hn = np.zeros(16, np.float32)
    for i in range(40):
        hn = np.tanh(Wn @ hn + xn[i])
        np.testing.assert_allclose(np.asarray(ys)[i], hn.sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(h), hn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shapes", [((5,), (5, 3)), ((4, 5), (5,)), ((4, 5), (5, 3)),
                                    ((7,), (7,))])
def test_matmul_shapes(shapes):
    a, b = arr(*shapes[0]), arr(*shapes[1])

    def f(a, b):
        def body(i, c):
            return c + jnp.matmul(a * (i + 1.0), b)
        out_shape = np.matmul(np.zeros(shapes[0]), np.zeros(shapes[1])).shape
        return lax.fori_loop(0, 3, body, jnp.zeros(out_shape, jnp.float32))
    check(f, a, b)


@pytest.mark.parametrize("fn", [jnp.sin, jnp.exp, jnp.tanh, jnp.log1p, jnp.cos, jnp.arctan,
                                jnp.expm1, jnp.sqrt, jnp.abs])
def test_transcendentals_are_numpys_bits(fn):
    x = arr(33, scale=0.5)

    def f(x):
        def body(c):
            i, v = c
            return i + 1, fn(v * 0.75 + 0.1)
        return lax.while_loop(lambda c: c[0] < 5, body, (0, x))
    check(f, x)


def test_binary_ufuncs_and_scalar_operands():
    x, y = arr(12), arr(12)

    def f(x, y):
        def body(i, c):
            a, s = c
            a = jnp.maximum(a, y * 0.5) + jnp.power(jnp.abs(a), 0.5) - jnp.arctan2(a, y)
            s = jnp.minimum(s, a.sum()) + jnp.exp(s * 0.01)
            return a, s
        return lax.fori_loop(0, 6, body, (x, jnp.float32(1.0)))
    check(f, x, y)


def test_reductions_over_axes():
    x = arr(6, 7)

    def f(x):
        def body(i, c):
            m, v, s, t = c
            m = m + x.max(axis=1) - x.min(axis=0).sum() * 0.01
            v = v + x.sum(axis=1) + x.sum() * 0.5
            s = s + jnp.max(x) + jnp.min(m)
            t = t | jnp.any(x > 1.5 + i) | jnp.all(x < 3.0)
            return m, v, s, t
        return lax.fori_loop(0, 4, body, (jnp.zeros(6), jnp.zeros(6), jnp.float32(0),
                                          jnp.bool_(False)))
    check(f, x)


def test_sum_over_leading_axis_compiles_in_xla_order():
    """A sum over the first of two axes adds in XLA's order (``xla_sum``), which the loop
    code writes out through the operand's strides: the loop is compiled whole, with tier
    1's values."""
    x = arr(6, 7)

    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: c + x.sum(axis=0), jnp.zeros(7))
    check(f, x)


def test_slices_updates_and_data_movement():
    x = arr(5, 4)

    def f(x):
        def body(i, c):
            buf, acc = c
            row = lax.dynamic_slice(x, (i % 7, 0), (1, 4))[0]      # clamped start
            buf = lax.dynamic_update_slice(buf, row[None] * 2.0, (i, 0))
            buf = buf.at[i + 3].set(row)                            # dropped out of bounds
            buf = buf.at[jnp.minimum(i, 2), 1].add(1.0)
            t = jnp.concatenate([buf.T[1:3].reshape(-1), jnp.arange(3.0)])
            acc = acc + t[::2].sum() + jnp.broadcast_to(row[:, None], (4, 2)).sum()
            return buf, acc
        return lax.fori_loop(0, 6, body, (jnp.zeros((5, 4)), jnp.float32(0)))
    check(f, x)


def test_nested_loops_and_cond():
    x = arr(8)

    def f(x):
        def outer(c):
            k, v = c
            def inner(j, w):
                return lax.cond(j % 2 == 0, lambda w: w * 0.5 + 1.0, lambda w: jnp.sin(w), w)
            v = lax.fori_loop(0, 3, inner, v)
            v = lax.switch(k % 3, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], v)
            return k + 1, v
        return lax.while_loop(lambda c: c[0] < 7, outer, (0, x))
    check(f, x)


def test_scan_reverse_with_stacked_outputs_and_consts():
    xs, w = arr(9, 3), arr(3)

    def f(xs, w):
        def body(c, x):
            c = c * 0.5 + x * w
            return c, (c, c.sum() > 0)
        return lax.scan(body, jnp.ones(3), xs, reverse=True)
    check(f, xs, w)


def test_int_and_bool_carries():
    def f(n):
        def body(c):
            i, v, flags = c
            v = v.at[i % 4].add(i * 3)
            flags = flags.at[i % 4].set(v[i % 4] % 2 == 0)
            return i + 1, v, flags
        return lax.while_loop(lambda c: c[0] < n, body,
                              (0, jnp.zeros(4, jnp.int32), jnp.zeros(4, bool)))
    check(f, jnp.int32(11))


def test_equinox_style_library_primitive_inlines():
    """A primitive defined through ``jax.extend`` with a ``lower_fun`` lowering runs inside
    the compiled loop (its traced function written in place)."""
    from jaxlite.extend.core import Primitive
    from jaxlite.interpreters import mlir
    p = Primitive("twice_plus_one")
    p.def_impl(lambda x: x * 2 + 1)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x * 2 + 1, multiple_results=False))
    x = arr(4)

    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: p.bind(c) * 0.5, x)
    out = check(f, x)
    want = np.asarray(x)
    for _ in range(3):
        want = (want * 2 + 1) * np.float32(0.5)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_a_body_mostly_without_loop_code_keeps_tier1_loop():
    x = arr(6)

    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: jnp.cumsum(c) * 0.5, x)
    check(f, x, whole=False)


def test_callbacks_keep_tier1_loop():
    seen = []
    x = arr(3)

    def f(x):
        def body(i, c):
            jax.debug.callback(lambda v: seen.append(np.asarray(v)), c)
            return c + 1.0
        return lax.fori_loop(0, 2, body, x)
    check(f, x, whole=False)
    assert seen


@pytest.mark.parametrize("uf,dts", [(np.sin, "f"), (np.exp, "d"), (np.tanh, "f"),
                                    (np.maximum, "ff"), (np.power, "dd"), (np.less, "ff"),
                                    (np.floor_divide, "ii"), (np.logical_or, "??"),
                                    (np.matmul, "ff"), (np.matmul, "dd")])
def test_numpy_loops_are_handed_out_and_verified(uf, dts):
    loop = ufunc_loops.strided_loop(uf, [np.dtype(c) for c in dts])
    assert loop is not None and all(isinstance(a, int) for a in loop)


def test_no_loop_for_what_numpy_would_cast():
    # float32 and float64 operands: NumPy casts one first; no loop is handed out
    assert ufunc_loops.strided_loop(np.add, [np.dtype("f"), np.dtype("d")]) is None


def test_empty_arrays_in_bodies():
    x = jnp.zeros((0,), jnp.float32)

    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: (jnp.sin(c) + 1.0, c.sum() + i)[0], x)
    check(f, x)


def test_updates_in_place_keep_every_other_value_intact():
    """A carried buffer updated row by row is written in place (one copy of its initial
    value per loop); the initial value, a constant buffer, a buffer returned as two carries
    and one also stacked as an output keep their values, call after call."""
    init = arr(6, 3)
    const = np.asarray(arr(6, 3))

    def f(init, v):
        def body(i, c):
            a, b, k, twice1, twice2 = c
            a = a.at[i].set(v * i)                       # in place
            b = lax.dynamic_update_slice(b, (v + a[i])[None], (5 - i, 0))
            k = k.at[i, 0].add(1.0)                      # starts as a closed-over constant
            t = twice1.at[i].set(v)                      # returned twice: copied
            return a, b, k, t, t
        c0 = (init, init, jnp.asarray(const), init, init)
        return lax.fori_loop(0, 6, body, c0)
    v = arr(3)
    first = check(f, init, v)
    again = check(f, init, v)
    assert_same(first, again)
    np.testing.assert_array_equal(np.asarray(init), np.asarray(init))
    np.testing.assert_array_equal(np.asarray(first[2])[:, 1:], const[:, 1:])

    def g(xs):
        def body(buf, x):
            buf = buf.at[0].set(x)
            return buf, buf
        return lax.scan(body, jnp.zeros((2, 3)), xs)
    check(g, arr(4, 3))


def test_a_rare_op_without_loop_code_is_called_from_the_loop():
    """An op with no loop code of its own (a cumulative sum) among many compiled ones runs
    through its impl from the compiled loop, with tier 1's values."""
    x = arr(6)

    def f(x):
        def body(i, c):
            for _ in range(6):
                c = jnp.sin(c * 0.5 + 0.25) - c * c * 0.125
            return jnp.cumsum(c) * 0.1 + c
        return lax.fori_loop(0, 4, body, x)
    check(f, x)


def test_carries_passed_on_in_another_order():
    """New carries that are old ones in another order are assigned at once."""
    def f(x):
        def body(c):
            i, a, b, v = c
            return i + 1, b, a + 1.0, v[::-1] * a
        return lax.while_loop(lambda c: c[0] < 5, body, (0, jnp.float32(1), jnp.float32(2), x))
    out = check(f, arr(3))
    assert float(out[1]) == 4.0 and float(out[2]) == 4.0


def test_python_called_op_with_an_unread_result():
    """An op called from the loop whose results are not all read (numba's object-mode
    block takes types for the read ones only)."""
    x = arr(6)

    def f(x):
        def body(i, c):
            for _ in range(6):
                c = jnp.sin(c * 0.5 + 0.25) - c * c * 0.125
            vals, idx = lax.top_k(c, 2)
            return c + vals.sum() * 0.01
        return lax.fori_loop(0, 4, body, x)
    check(f, x)


def test_a_loop_kernel_is_compiled_once_its_loop_has_earned_it(tmp_path, monkeypatch):
    """Under automatic tiering a loop kernel not on disk yet is compiled only after the loop
    has run (as tier 1's) about as long as compiling it takes; then calls run it, with the
    same values throughout."""
    import time
    from jaxlite._src.compiler import array_loops as nbb
    monkeypatch.setenv("JAXLITE_CACHE_DIR", str(tmp_path))
    made = []
    init = nbb.LazyKernel.__init__

    def small_budget(self, *args):
        init(self, *args)
        self.budget = 0.02
        made.append(self)
    monkeypatch.setattr(nbb.LazyKernel, "__init__", small_budget)
    x = arr(5)
    # (numba taken for XLA's math, its kernels loaded: tier 1's first calls are fast; the
    # NumPy kernels before that can make a first call slow enough that the program earns
    # the kernel as a whole, ``earned``, before the loop has charged it - not this path)
    from jaxlite._src.cpu_math import accel
    if accel.ready(accel.NUMBA_MIN):
        jax.jit(lambda c: jnp.tanh(c * 0.9 + 0.125))(x).block_until_ready()

    def f(x):
        return lax.fori_loop(0, 50, lambda i, c: jnp.tanh(c * 0.9 + 0.125), x)
    want, _ = run_tier(1, f, x)
    with jax.config.override("jaxlite_tier", "auto"):
        g = jax.jit(f)
        deadline = time.monotonic() + 120
        while not (made and made[0].fn is not None) and time.monotonic() < deadline:
            assert_same(g(x), want)
            time.sleep(0.005)
        assert made and made[0].fn is not None and made[0].spent >= 0.02
        assert_same(g(x), want)


def test_random_draws_inside_a_scan():
    """split, normal, uniform and bits inside the loop: the compiled Threefry hash and
    erf_inv, the same bits as tier 1's kernels."""
    from jaxlite import random

    def f(key, x0):
        def body(c, _):
            key, x = c
            key, a, b, d = random.split(key, 4)
            x = x * 0.9 + 0.1 * random.normal(a, x.shape) + random.uniform(b, x.shape)
            bits = random.bits(d, (3,))
            return (key, x), (x.sum(), bits, random.normal(a))
        return lax.scan(body, (key, x0), None, length=30)
    check(f, random.PRNGKey(3), arr(5))


def test_clip_of_floats_arrays_and_scalars():
    x = jnp.asarray(np.array([0.5, -0.0, np.nan, 3.0, -4.0], np.float32))

    def f(x):
        def body(i, c):
            v, s = c
            v = jnp.clip(v * 1.5, -2.0, 2.0) + lax.clamp(-1.0, v, 1.0) * 0.25
            s = jnp.clip(s * 3.0, -0.0, 5.0) + lax.clamp(jnp.float32(0), v[1], jnp.float32(1))
            return v, s
        return lax.fori_loop(0, 4, body, (x, jnp.float32(np.nan)))
    check(f, x)


def test_argmax_argmin_first_extreme_and_nan():
    x = jnp.asarray(np.array([[1.0, 3.0, 3.0, -0.0], [np.nan, 2.0, np.nan, 5.0],
                              [0.0, -0.0, 0.0, -1.0]], np.float32))

    def f(x):
        def body(i, c):
            a, b, s = c
            a = a + jnp.argmax(x, axis=1) + jnp.argmin(x, axis=0).sum()
            b = b + jnp.argmax(x * (i + 1.0), axis=0)
            s = s + jnp.argmax(x[0]) + jnp.argmin(jnp.arange(5) % 3 == 1)
            return a, b, s
        return lax.fori_loop(0, 3, body, (jnp.zeros(3, jnp.int32), jnp.zeros(4, jnp.int32),
                                          jnp.int32(0)))
    check(f, x)


def test_reused_buffers_never_leak_into_carries_or_outputs():
    # buffers of values that die within a step are allocated once and rewritten each step;
    # a carry computed into a double buffer; values passed on as views, carries swapped,
    # a carry also stacked, a carry returned as computed by a cond branch, nested loops
    # whose results leave the outer step: each must equal tier 1's
    a0, b0, xs = arr(3, 4), arr(12), arr(9, 12)

    def views(a, b, xs):
        def body(c, x):
            a, b, m = c
            s = jnp.sin(a) * 2.0                      # dies in the step
            a_new = (s + b.reshape(3, 4)).T.reshape(3, 4)   # a view of a fresh value
            b_new = jnp.cos(a).reshape(12) + x        # double-buffered candidate
            m_new = lax.cond(x[0] > 0, lambda: s.reshape(12), lambda: b)  # a branch's view
            return (a_new, b_new, m_new), (s.reshape(12), b_new)
        return lax.scan(body, (a, b, b), xs)
    check(views, a0, b0, xs)

    def swapped(a, b):
        def body(i, c):
            a, b = c
            return (b * 1.5 + 0.25, jnp.tanh(a))      # each computed, passed crosswise
        return lax.fori_loop(0, 7, body, (a, b))
    check(swapped, b0, b0 + 1.0)

    def passthrough(a, b):
        def body(i, c):
            a, b = c
            return (jnp.exp(-a * a), a)               # the old carry lives on as another
        return lax.fori_loop(0, 6, body, (a, b))
    check(passthrough, b0, b0)

    def nested(a, xs):
        def outer(c, x):
            def inner(j, d):
                return jnp.sin(d) + x * 0.5
            inner_res = lax.fori_loop(0, 3, inner, c * 0.5)   # leaves the outer step
            return inner_res, inner_res.sum()
        return lax.scan(outer, a, xs)
    check(nested, b0, xs)


def test_carry_double_buffers_in_the_kernel_text():
    def newton(cs):
        def one(c):
            return lax.fori_loop(0, 5, lambda i, x: x - (x ** 3 + c * x - 1.0) /
                                 (3.0 * x * x + c), jnp.ones_like(c))
        return lax.map(one, cs)
    cs = jnp.asarray((RNG.random((6, 4)) + 0.5).astype(np.float32))
    check(newton, cs)
    from jaxlite._src.compiler.array_loops import array_loop_kernel
    eqn = [e for e in jax.make_jaxpr(newton)(cs).jaxpr.eqns if e.primitive.name == "scan"][0]
    src = array_loop_kernel(eqn).source
    step = src[src.index("in range(5):"):]     # the fori_loop's step, up to the row's store
    step = step[:step.index("y0[")]
    assert "np.empty" not in step and ".copy()" not in step, src   # (no allocation)
    import re     # (its carry's two buffers, swapped after each step)
    assert re.search(r"(db\d+), (db\d+) = \2, \1", step), src


def test_buffers_through_calls_written_in_place():
    # carries computed or updated inside nested jits (library wrappers): a call passing a
    # value on unchanged, an update inside a call, a call reading the carry before its
    # update elsewhere; tier 2 equals tier 1 and the updated buffer is not copied per step
    @jax.jit
    def passthrough(p, x):
        return x

    @jax.jit
    def put(buf, i, row):
        return buf.at[i].set(row)

    def f(buf, v):
        def body(i, c):
            buf, v = c
            v = passthrough(v[0] > 0, jnp.sin(v) * 0.5 + 0.25)
            return put(buf, i % 5, v), v
        return lax.fori_loop(0, 12, body, (buf, v))
    check(f, arr(5, 3), arr(3))
    from jaxlite._src.compiler.array_loops import array_loop_kernel
    eqn = [e for e in jax.make_jaxpr(f)(arr(5, 3), arr(3)).jaxpr.eqns
           if e.primitive.name in ("scan", "while")][0]
    src = array_loop_kernel(eqn).source
    step = src[src.index("while True:" if eqn.primitive.name == "while" else "    for i"):]
    step = step[:step.index("    o0[")]
    assert ".copy()" not in step and "np.empty" not in step, src

    def reads_first(buf):
        def body(i, buf):
            row = buf[(i + 1) % 4]               # read, then updated: a copy keeps it
            return put(buf, i % 4, jnp.cos(row))
        return lax.fori_loop(0, 9, body, buf)
    check(reads_first, arr(4, 3))


def test_batched_scatters_are_loop_code():
    # scatters with batching dimensions (vmap of x.at[i].set / .add) in a loop body: loop
    # code, no call back into Python, tier 1's values
    def f(xs, idx, vals):
        def body(i, xs):
            upd = jax.vmap(lambda x, j, v: x.at[j].set(v * i))(xs, idx + i, vals)
            return jax.vmap(lambda x, j, v: x.at[j].add(v))(upd, idx, vals)
        return lax.fori_loop(0, 6, body, xs)
    args = (arr(3, 9), jnp.asarray(np.array([0, 4, 7], np.int32)), arr(3))
    check(f, *args)
    _, f2 = run_tier(2, f, *args)
    text = tier2_text(f2, *args)
    assert "numba.objmode" not in text, text


@pytest.mark.parametrize("shape", [(64,), (3, 100), (1057,), (2, 1, 40)])
def test_sums_in_xla_order_are_loop_code(shape):
    """Sums XLA splits into windows of 32 (and windows of windows) inside a loop body are
    loop code adding in XLA's order, not a call back into Python; tier 1's bits."""
    axis = len(shape) - 1

    def f(x):
        def body(c, _):
            c = jnp.sin(c) * 1.25
            return c, (c.sum(axis=axis), c.sum())
        return lax.scan(body, x, None, length=4)
    x = arr(*shape)
    check(f, x)
    _, f2 = run_tier(2, f, x)
    assert "objmode" not in tier2_text(f2, x)


def _promoting_now(monkeypatch):
    """Have a tier-1 while loop hand over at its first report, its kernel built at once
    (as when it is on disk already); returns the list of promotions that ran."""
    from jaxlite._src.compiler import promotion
    ran = []
    monkeypatch.setattr(promotion.LoopPromotion, "WRITE_AFTER", 0.0)
    monkeypatch.setattr(promotion.LoopPromotion, "CHECK_EVERY", 0.0)
    monkeypatch.setattr(promotion, "kernel_cached", lambda source: True)
    run = promotion.LoopPromotion.run

    def counted(self, *args):
        ran.append(self.eqn.primitive.name)
        return run(self, *args)
    monkeypatch.setattr(promotion.LoopPromotion, "run", counted)
    return ran


def _long_while(x, y):
    def body(c):
        i, v, s = c
        v = jnp.sin(v) * 0.75 + y[i % 8] * 0.125
        return i + 1, v, s + jnp.sum(v * v)
    return lax.while_loop(lambda c: c[0] < 300, body, (0, x, jnp.float32(0)))


def test_long_first_call_hands_its_loop_over_to_the_compiled_loop(monkeypatch):
    """A while loop running long on tier 1 (a first call) continues in the loop compiled
    whole from the state it reached (on-stack replacement): tier 1's bits, one hand-over
    per run of the loop, nested loops included."""
    x, y = arr(8), arr(8, 8)
    want, _ = run_tier(1, _long_while, x, y)
    ran = _promoting_now(monkeypatch)
    got = jax.jit(_long_while)(x, y)
    assert_same(got, want)
    assert ran == ["while"]

    def nested(x):
        def outer(c):
            j, v = c
            w = lax.while_loop(lambda d: d[0] < 50, lambda d: (d[0] + 1, jnp.cos(d[1]) * 0.9),
                               (0, v))[1]
            return j + 1, w + 0.25
        return lax.while_loop(lambda c: c[0] < 4, outer, (0, x))
    with jax.config.override("jaxlite_tier", 1):
        want = nested(x)
    ran.clear()
    got = jax.jit(nested)(x)
    assert_same(got, want)
    assert ran and set(ran) == {"while"}


@pytest.mark.parametrize("reverse", [False, True])
def test_long_scan_hands_chunks_of_its_steps_to_the_compiled_loop(monkeypatch, reverse):
    """A long scan (or fori_loop) on tier 1 runs the steps left in chunks of the loop
    compiled over ``CHUNK`` steps, the last few as tier 1's: tier 1's carry and stacked
    outputs bit for bit."""
    from jaxlite._src.compiler import promotion
    x, xs = arr(8), arr(2500, 8)

    def f(x, xs):
        def body(c, xt):
            i, v = c
            v = jnp.tanh(v * 0.9 + xt) + i.astype(jnp.float32) * 1e-4
            return (i + 1, v), jnp.sum(v) * v[0]
        c, ys = lax.scan(body, (0, x), xs, reverse=reverse)
        return c, ys, lax.fori_loop(0, 2100, lambda i, w: jnp.sin(w) + 0.01 * i, x)
    want, _ = run_tier(1, f, x, xs)
    ran = _promoting_now(monkeypatch)
    monkeypatch.setattr(promotion.ChunkedPromotion, "CHUNK", 1000)
    got = jax.jit(f)(x, xs)
    assert_same(got, want)
    assert ran.count("scan") == 4    # (2 chunks of each scan, then tier 1's last steps)


def test_no_hand_over_where_tier_1_is_forced(monkeypatch):
    x, y = arr(8), arr(8, 8)
    ran = _promoting_now(monkeypatch)
    with jax.config.override("jaxlite_tier", 1):
        jax.jit(_long_while)(x, y)
    assert ran == []


def test_loops_of_constants_are_not_run_at_compile_time():
    """As XLA's constant folding never runs a loop, a loop whose operands are all constants
    stays in the program (run at each call), where other constant equations fold."""
    from jaxlite._src.compiler.passes import optimize

    def f():
        w = lax.while_loop(lambda c: c[0] < 10 ** 6, lambda c: (c[0] + 1, c[1] * 1.0001),
                           (0, jnp.float32(1)))
        s = lax.fori_loop(0, 5, lambda i, v: v + i, jnp.float32(0))
        return w[1] + s, jnp.sin(jnp.float32(2)) * 3
    prims = [e.primitive.name for e in optimize(jax.make_jaxpr(f)()).jaxpr.eqns]
    assert "while" in prims and "scan" in prims and "sin" not in prims
