"""The compiler's second tier: fused kernels (NumPy chunks, numba loops) give tier 1's values
bit for bit, with the same dtypes and weak types; the background promotion under concurrent
calls; tier 2 without numba; the on-disk kernel cache across processes; the tier flag."""
import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.compiler import fusion, tiers
from jaxlite._src.cpu_math.fma import fma_f32_np

from test_lax_ops import REC, _args

HAVE_NUMBA = fusion.numba_module() is not None


def x64(test):
    """Run ``test`` with jax_enable_x64 (float64 arrays; their transcendentals are XLA's
    kernels with numba twins, as float32's are)."""
    import functools

    @functools.wraps(test)
    def run(*a, **k):
        with jax.experimental.enable_x64():
            return test(*a, **k)
    return run


@pytest.fixture
def no_contraction(monkeypatch):
    """Compiled programs without XLA's multiply-add contraction (passes.contract_products),
    for tests of the kernels' structure written with products feeding additions."""
    from jaxlite._src.compiler import passes
    monkeypatch.setattr(passes, "contract_products", lambda closed: closed)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 16 elements, so test-sized arrays take the chunked path with a tail chunk,
    threads from 64 elements, and numba for clusters of 2 ops."""
    monkeypatch.setattr(fusion, "CHUNK", 16)
    monkeypatch.setattr(fusion, "NUMPY_MIN", 32)
    monkeypatch.setattr(fusion, "THREAD_MIN", 64)
    monkeypatch.setattr(fusion, "THREADS", 3)
    monkeypatch.setattr(fusion, "NUMBA_MIN_OPS", 2)


def run_tier(tier, fn, *args):
    with jax.config.override("jaxlite_tier", tier):
        f = jax.jit(fn)
        out = f(*args)
        return out, f


def bits(x):
    a = np.asarray(x)
    return a.dtype, a.shape, a.tobytes()


def assert_same(o1, o2):
    l1, l2 = jax.tree_util.tree_leaves(o1), jax.tree_util.tree_leaves(o2)
    assert len(l1) == len(l2)
    for a, b in zip(l1, l2):
        assert bits(a) == bits(b), (np.asarray(a), np.asarray(b))
        assert a.weak_type == b.weak_type


def tier2_text(f, *args):
    with jax.config.override("jaxlite_tier", 2):
        return f.lower(*args).compile().as_text()


# ----------------------------------------------------------------------------- op records

REC_CASES = [(r, dt) for r in REC for dt in r[3]]


@pytest.mark.parametrize("numba_on", [False, True] if HAVE_NUMBA else [False])
@pytest.mark.parametrize("rec,dt", REC_CASES, ids=[f"{r[0]}-{d}" for r, d in REC_CASES])
def test_op_records_tier2_equals_tier1(rec, dt, numba_on, small_chunks, monkeypatch):
    """Every elementwise record inside a cluster (selects around it), over 35 elements (three
    chunks, the last one short): tier 2's values, dtypes and weak types are tier 1's."""
    if not numba_on:
        monkeypatch.setattr(fusion, "numba_module", lambda: None)
    fn = rec[1]
    args = [jnp.asarray(a) for a in _args(rec, dt, (5, 7), seed=3)]
    mask = jnp.asarray(np.random.RandomState(0).rand(5, 7) > 0.3)

    def prog(m, *xs):
        out = fn(*[lax.select(m, x, x) for x in xs])
        return lax.select(m, out, out), out

    o1, _ = run_tier(1, prog, mask, *args)
    o2, f2 = run_tier(2, prog, mask, *args)
    assert_same(o1, o2)
    assert f2._tiers()[-1] == 2   # (the tier-1 specialisation is the first)


# ----------------------------------------------------------------------------- random programs

_UNARY = [jnp.sin, jnp.tanh, jnp.exp, jnp.abs, jnp.negative, jnp.square, jnp.floor, jnp.sqrt,
          lambda x: x * x, lambda x: -x]
_BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.maximum, jnp.minimum,
           lambda x, y: jnp.where(x > y, x, y), lambda x, y: jnp.where(x < 0.5, y, x * 2.0)]


def random_program(rng, n_inputs, n_ops):
    """A random elementwise program over ``n_inputs`` arrays, with Python-scalar (weakly
    typed) operands, comparisons, selections and casts."""
    plan = []
    for _ in range(n_ops):
        kind = rng.randint(5)
        plan.append((kind, rng.randint(1 << 16), float(rng.uniform(-2, 2))))

    def prog(*xs):
        vals = list(xs)
        for kind, r, c in plan:
            a = vals[r % len(vals)]
            b = vals[(r // 7) % len(vals)]
            if kind == 0:
                v = _UNARY[r % len(_UNARY)](a)
            elif kind == 1:
                v = _BINARY[r % len(_BINARY)](a, b)
            elif kind == 2:
                v = a * c + b if r % 2 else c - a
            elif kind == 3:
                v = jnp.where(a > c, a, b).astype(jnp.float32) * 0.5
            else:
                v = (a.astype(jnp.int32) + 3).astype(a.dtype) - b
            vals.append(v)
        return vals[-1], vals[-2], sum(vals[len(xs):])
    return prog


@pytest.mark.parametrize("numba_on", [False, True] if HAVE_NUMBA else [False])
@pytest.mark.parametrize("seed", range(12))
def test_random_programs_tier2_equals_tier1(seed, numba_on, small_chunks, monkeypatch):
    if not numba_on:
        monkeypatch.setattr(fusion, "numba_module", lambda: None)
    rng = np.random.RandomState(seed)
    n_in = int(rng.randint(1, 4))
    shape = [(70,), (9, 11), (3, 4, 5), (200,)][seed % 4]
    prog = random_program(rng, n_in, int(rng.randint(4, 25)))
    xs = [jnp.asarray(rng.randn(*shape).astype(np.float32)) for _ in range(n_in)]
    with np.errstate(all="ignore"):
        o1, _ = run_tier(1, prog, *xs)
        o2, f2 = run_tier(2, prog, *xs)
    assert_same(o1, o2)


def test_broadcasting_and_scalars(small_chunks):
    """Rank-0 arguments, literals and broadcasts of scalars join clusters; a broadcast of a
    row (not fusible) splits them, and the values stay tier 1's."""
    rng = np.random.RandomState(0)
    x = jnp.asarray(rng.randn(8, 9).astype(np.float32))
    row = jnp.asarray(rng.randn(9).astype(np.float32))
    s = jnp.asarray(np.float32(1.25))

    def f(x, row, s):
        y = jnp.sin(x) * s + 2.0
        z = y + row           # broadcast_in_dim of a row
        w = jnp.broadcast_to(s, x.shape) * z - jnp.tanh(z)
        return w, jnp.full(x.shape, 3.0) * s + y

    o1, _ = run_tier(1, f, x, row, s)
    o2, f2 = run_tier(2, f, x, row, s)
    assert_same(o1, o2)
    assert "fused" in tier2_text(f2, x, row, s)


@pytest.mark.parametrize("numba_on", [False, True] if HAVE_NUMBA else [False])
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "bool", "float16", "bfloat16",
                                "complex64", "uint8"])
def test_dtypes(dt, numba_on, small_chunks, monkeypatch):
    """Clusters over every dtype: the same bits as tier 1; dtypes numba lacks stay in
    NumPy's chunks."""
    if not numba_on:
        monkeypatch.setattr(fusion, "numba_module", lambda: None)
    rng = np.random.RandomState(1)
    with jax.experimental.enable_x64(dt == "float64"):
        dtype = jnp.dtype(dt)
        if dt == "bool":
            x = jnp.asarray(rng.rand(6, 7) > 0.5)
            y = jnp.asarray(rng.rand(6, 7) > 0.5)

            def f(x, y):
                return ((x & y) | ~x) ^ y, jnp.logical_not(x) & y
        else:
            x = jnp.asarray((rng.randn(6, 7) * 4).astype(np.float64)).astype(dtype)
            y = jnp.asarray((rng.randn(6, 7) * 4).astype(np.float64)).astype(dtype)

            def f(x, y):
                a = x * y + x - 3
                b = jnp.where(a > y, a, x * 2)
                return b * b - a, (a < b).astype(dtype) + x
        o1, _ = run_tier(1, f, x, y)
        o2, f2 = run_tier(2, f, x, y)
        assert_same(o1, o2)
        text = tier2_text(f2, x, y)
    if dt not in ("float32", "float64", "int32", "bool") or not numba_on:
        assert "numba loop" not in text
    else:
        assert "numba loop" in text


def test_weak_types_kept(small_chunks):
    x = jnp.asarray(np.arange(40, dtype=np.float32))

    def f(x):
        w = jnp.asarray(2.0) * 3.0 + 1.0       # weak scalar
        v = jnp.full((40,), 2.0) * 3.0 - 1.0   # weak array (jnp.full of a Python float)
        return x * w + v, v * 2.0 + 1.0
    o1, _ = run_tier(1, f, x)
    o2, _ = run_tier(2, f, x)
    assert_same(o1, o2)
    assert [o.weak_type for o in o2] == [False, True]


def test_view_returning_ops_keep_buffers(small_chunks, monkeypatch):
    """An op returning its operand (a same-dtype cast, a one-case select) must not let the
    operand's chunk buffer be reused while the view is alive."""
    monkeypatch.setattr(fusion, "numba_module", lambda: None)
    x = jnp.asarray(np.linspace(-3, 3, 50, dtype=np.float32))

    def f(x):
        a = jnp.sin(x)
        b = lax.convert_element_type(a, jnp.float32)
        c = jnp.cos(x) * 2.0
        d = jnp.tanh(c) + b
        return d * b, lax.select_n(x > 0, b)
    o1, _ = run_tier(1, f, x)
    o2, _ = run_tier(2, f, x)
    assert_same(o1, o2)


# ----------------------------------------------------------------------------- tiering


def test_background_swap_under_concurrent_calls(monkeypatch):
    """Several threads call a function while it turns hot: every call returns tier 1's
    values, tier 2 is built once on a background thread and swapped in."""
    monkeypatch.setattr(tiers, "HOT_CALLS", 5)
    x = jnp.asarray(np.random.RandomState(0).randn(300).astype(np.float32))

    def g(x):
        for _ in range(4):
            x = jnp.sin(x) * 1.5 + x * x - 0.25
        return x
    want, _ = run_tier(1, g, x)
    with jax.config.override("jaxlite_tier", "auto"):
        f = jax.jit(g)
        errors, results = [], []

        def worker():
            try:
                for _ in range(40):
                    results.append(f(x))
            except Exception as e:   # reported below
                errors.append(e)
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads), "calls hung"
        assert not errors, errors
        prog = f._programs()[-1]
        if prog.thread is not None:
            prog.thread.join(timeout=120)
        assert prog.state == "final" and prog.error is None
        assert f._tiers()[-1] == 2
        assert len(results) == 160
        for r in results + [f(x)]:
            assert_same(r, want)


def test_slow_tier1_calls_wait_for_tier2_and_its_loops(monkeypatch):
    """A function whose tier-1 calls take long (a long loop) is worth waiting for: the call
    that makes it hot returns once tier 2 is built (as JAX's first call compiles, so a
    warm-up call leaves the timed calls compiled code), whose loop kernels the program's
    time spent has earned (compiled at once, not after more tier-1 runs)."""
    from jaxlite._src.compiler import array_loops
    monkeypatch.setattr(tiers, "HOT_CALLS", 1)
    monkeypatch.setattr(tiers, "WAIT_SECONDS", 0.0)
    monkeypatch.setattr(array_loops.LazyKernel, "__init__", _zero_budget(
        array_loops.LazyKernel.__init__))
    x = jnp.asarray(np.linspace(0, 1, 8, dtype=np.float32))

    def g(x):
        return lax.fori_loop(0, 30, lambda i, c: jnp.tanh(c * 0.75 + 0.5), x)
    want, _ = run_tier(1, g, x)
    with jax.config.override("jaxlite_tier", "auto"):
        f = jax.jit(g)
        assert_same(f(x), want)        # tier 1, then hot: waits for the build
        prog = f._programs()[-1]
        assert prog.state == "final" and f._tiers()[-1] == 2
        assert_same(f(x), want)        # tier 2
        src = prog.source()
        assert "compiled whole (arrays)" in src
        lazies = [v for k, v in prog.tier2.raw.__globals__.items() if k.startswith("_lazy")]
        assert lazies and all(lz.fn is not None for lz in lazies)


def _zero_budget(init):
    def zero(self, *args):
        init(self, *args)
        self.budget = 0.0
    return zero


def test_cold_functions_stay_in_tier1(monkeypatch):
    monkeypatch.setattr(tiers, "HOT_CALLS", 1000)
    monkeypatch.setattr(tiers, "HOT_SECONDS", 1000.0)
    x = jnp.ones(10)
    with jax.config.override("jaxlite_tier", "auto"):
        f = jax.jit(lambda x: jnp.sin(x) * 2 + x)
        for _ in range(5):
            f(x)
        assert f._tiers() == [1]
        assert f._programs()[0].state == "cold"


def test_nothing_to_fuse_stays_tier1():
    with jax.config.override("jaxlite_tier", 2):
        f = jax.jit(lambda a, b: a @ b)
        f(jnp.ones((3, 3)), jnp.ones((3, 3)))
        assert f._tiers() == [1]


def test_without_numba_tier2_uses_numpy_chunks(monkeypatch):
    """numba absent: large clusters still fuse into NumPy chunks; small ones stay tier 1."""
    monkeypatch.setattr(fusion, "numba_module", lambda: None)
    big = jnp.asarray(np.random.RandomState(0).randn(fusion.NUMPY_MIN + 5).astype(np.float32))
    small = big[:100]

    def f(x):
        return (x * 2.0 + 1.0) * x - 3.0

    o1, _ = run_tier(1, f, big)
    o2, f2 = run_tier(2, f, big)
    assert_same(o1, o2)
    text = tier2_text(f2, big)
    assert "NumPy chunks" in text and "numba" not in text
    _, fs = run_tier(2, f, small)
    assert fs._tiers()[-1] == 1


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_numba_kernel_for_small_arithmetic_clusters():
    p = jnp.asarray(np.random.RandomState(0).randn(64, 64).astype(np.float32))
    g = jnp.asarray(np.random.RandomState(1).randn(64, 64).astype(np.float32))

    def adam_like(p, m, v, g):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        return p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v
    args = (p, jnp.zeros_like(p), jnp.zeros_like(p), g)
    o1, _ = run_tier(1, adam_like, *args)
    o2, f2 = run_tier(2, adam_like, *args)
    assert_same(o1, o2)
    text = tier2_text(f2, *args)
    assert "numba loop" in text and "@numba.njit" in text and "fastmath" not in text


def _hard_floats(rng, shape, dt):
    """Values whose sums round differently in another order: wide magnitudes, both signs,
    and a column of negative zeros."""
    a = (rng.randn(*shape) * np.exp(rng.randn(*shape) * 6)).astype(dt)
    a.reshape(a.shape[0], -1)[:, 0] = -0.0
    return jnp.asarray(a)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape,axes,fused", [
    ((32, 100), (0,), True), ((2, 2), (0,), True), ((30, 17), (0,), True),
    ((7, 3, 4), (0,), True), ((7, 3, 4), (0, 1), True), ((64, 1), (0,), False),
    ((5, 6), (1,), False), ((64, 64), (0,), False), ((300, 17), (0,), False)])
def test_leading_sums_join_numba_clusters(shape, axes, fused, dt):
    """A sum over leading axes of a numba cluster's value is added row by row inside its
    loop: NumPy's bits (the sum of rows into zeros), the value itself still an output when
    read elsewhere; a sum NumPy computes pairwise (rows of one element, inner axes) or
    XLA's tree of windows (more than 32 rows, test_sum_order.py) is a numba kernel of its
    own, never tier 1's Python (``xla_sum``), YNNPACK's order (4096 elements or more,
    untiled here) included."""
    rng = np.random.RandomState(0)
    x, y = _hard_floats(rng, shape, dt), _hard_floats(rng, shape, dt)

    def f(x, y):
        t = x * y + x * 0.5 - y
        return jnp.sum(t, axis=axes), jnp.sum(t * t, axis=axes), t
    with np.errstate(all="ignore"):
        o1, _ = run_tier(1, f, x, y)
        o2, f2 = run_tier(2, f, x, y)
    assert_same(o1, o2)
    tier2 = tier2_text(f2, x, y).split("---- tier 2")[1]
    alone = "reduce_sum: numba kernel" in tier2
    assert "xsum" not in tier2
    assert ("np.add.reduce" not in tier2 and "xsum" not in tier2 and not alone) == fused


def test_sum_over_added_unit_axes_is_add_zero():
    """``sum(x[None], axis=0)`` (autodiff's transpose of a bias broadcast) compiles to
    ``x + 0``: no reduction left, and the same bits as the reduction (-0.0 becomes 0.0)."""
    from jaxlite._src.compiler.passes import optimize
    x = jnp.asarray(np.array([-0.0, 1.5, -2.0, np.inf], np.float32))

    def f(x):
        return jnp.sum(x.reshape(1, 4), axis=0) * 2.0
    eager = f(x)
    out = jax.jit(f)(x)
    assert bits(out) == bits(eager) and not np.signbit(np.asarray(out)[0])
    closed = jax.make_jaxpr(f)(x)
    names = [e.primitive.name for e in optimize(closed).jaxpr.eqns]
    assert "reduce_sum" not in names and "add" in names


@pytest.mark.parametrize("numba_on", [False, True] if HAVE_NUMBA else [False])
@pytest.mark.parametrize("shape,rs,cs", [((64, 64), (1, 64), (64, 1)),
                                         ((3, 4, 5), (1, 4, 1), (3, 1, 5)),
                                         ((7, 1), (1, 1), (7, 1)),
                                         ((5, 300), (1, 300), (5, 1))])
def test_size_one_broadcasts_in_clusters(shape, rs, cs, numba_on, small_chunks, monkeypatch):
    """Operands broadcasting through size-1 dimensions (a bias row, a column) join numba
    clusters, indexed in the loop; NumPy-chunked clusters leave those ops out (chunks
    cannot slice them). Tier 1's bits either way."""
    if not numba_on:
        monkeypatch.setattr(fusion, "numba_module", lambda: None)
    rng = np.random.RandomState(0)

    def f(x, r, c, s):
        y = (x + r) * c - s * x
        return y, jnp.maximum(x * c, r) + 1.0, jnp.sin(y) * c + r * y

    args = [jnp.asarray(rng.randn(*sh).astype(np.float32)) for sh in (shape, rs, cs)]
    args.append(jnp.float32(0.5))
    o1, _ = run_tier(1, f, *args)
    o2, f2 = run_tier(2, f, *args)
    assert_same(o1, o2)
    text = tier2_text(f2, *args)
    if np.prod(shape) >= fusion.NUMPY_MIN:    # big mixed clusters: NumPy chunks
        assert "NumPy chunks" in text
    elif numba_on:
        assert "numba loop" in text
        # broadcast operands are read in a loop nest, through its indices times strides
        # (no per-element division or remainder, which keeps LLVM from vectorising)
        kernels = text.split("# jaxlite tier-2 kernel")[1:]
        assert kernels and all(" // " not in k and " % " not in k for k in kernels)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_outer_products_join_numba_clusters():
    """A 2-D dot_general contracting one size-1 dimension (tier 1: the broadcast multiply
    lhs[i] * rhs[j]) is a product in a numba loop: tier 1's bits, both contraction
    layouts, and as the bench MLP's backward pass makes it."""
    rng = np.random.RandomState(2)
    u = jnp.asarray(rng.randn(64, 1).astype(np.float32))
    v = jnp.asarray(rng.randn(48, 1).astype(np.float32))
    w = jnp.asarray(rng.randn(64, 48).astype(np.float32))

    def f(u, v, w):
        a = lax.dot_general(u, v, (((1,), (1,)), ((), ())))       # (64, 48)
        b = lax.dot_general(u.T, v.T, (((0,), (0,)), ((), ())))   # (64, 48)
        return a * w + b * 0.5, jnp.sum(a * b, axis=0)
    o1, _ = run_tier(1, f, u, v, w)
    o2, f2 = run_tier(2, f, u, v, w)
    assert_same(o1, o2)
    text = tier2_text(f2, u, v, w).split("---- tier 2")[1]
    # (a loop nest over rows i0 and columns i1: no division per element)
    assert "[i0] * " in text and "[i1])" in text and "np.multiply(" not in text
    assert " // " not in text and " % " not in text


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_grouped_kernel_loops_read_earlier_loops_results():
    """Adjacent numba clusters share one kernel call even when a later loop reads an
    earlier one's results (a row, a scalar): it reads them from that loop's output."""
    rng = np.random.RandomState(1)
    x = jnp.asarray(rng.randn(32, 64).astype(np.float32))
    row = jnp.asarray(rng.randn(1, 64).astype(np.float32))
    t = jnp.asarray(np.float32(3.0))

    def f(x, row, t):
        c = 1 / (1 - 0.5 * t)            # rank 0 (a division: a numba loop)
        r = jnp.sqrt(row * row + 1.0) - c   # (1, 64)
        return x * r - c, r
    o1, _ = run_tier(1, f, x, row, t)
    o2, f2 = run_tier(2, f, x, row, t)
    assert_same(o1, o2)
    text = tier2_text(f2, x, row, t)
    assert "in 3 loops, numba loop" in text


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_scalar_clusters_around_division(dt):
    """Rank-0 runs holding a division (which tier 1 runs through its impl) become one numba
    kernel, with tier 1's bits for zero, negative zero, inf and NaN divisors; scalar runs
    without one stay op by op."""
    vals = np.array([1.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 3e-39, -7.25], dt)

    def f(t, a, big):
        c1 = 1 / (1 - a * t)
        c2 = (t + 2) / (a - 1) - c1
        return big * c1 + c2, c1, c2
    with jax.experimental.enable_x64(dt == "float64"):
        big = jnp.ones((8, 8), dt)
        for t in vals:
            for a in vals[::3]:
                args = (jnp.asarray(t), jnp.asarray(a), big)
                with np.errstate(all="ignore"):
                    o1, _ = run_tier(1, f, *args)
                    o2, f2 = run_tier(2, f, *args)
                assert_same(o1, o2)
                assert np.asarray(o2[1]).dtype == dt
        text = tier2_text(f2, *args).split("---- tier 2")[1]
    assert "_flat.reshape(())" in text and "_div_" not in text.split("\ndef ")[0]

    def g(t, a):
        return (t + 2) * (a - 1) - t
    text = tier2_text(jax.jit(g), jnp.asarray(vals[0]), jnp.asarray(vals[1]))
    assert "numba" not in text


def test_adam_step_on_mlp_tier2_equals_tier1():
    """A jitted Adam step of a small tanh MLP (the bench_tier2 workload: bias gradients,
    ``1 - tanh`` sunk into the backward clusters, fused sums, the whole update in one kernel)
    gives tier 1's bits."""
    rng = np.random.RandomState(0)
    sizes = [4, 16, 16, 1]
    params = [(jnp.asarray(rng.randn(m, n).astype(np.float32)),
               jnp.asarray(rng.randn(n).astype(np.float32))) for m, n in zip(sizes, sizes[1:])]
    x = jnp.asarray(rng.randn(32, 4).astype(np.float32))
    y = jnp.asarray(rng.randn(32, 1).astype(np.float32))

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    def step(params, m, v, t):
        g = jax.grad(loss)(params, x, y)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        c1, c2 = 1 / (1 - 0.9 ** t), 1 / (1 - 0.999 ** t)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - 1e-3 * (m * c1) / (jnp.sqrt(v * c2) + 1e-8), params, m, v)
        return params, m, v, t
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = [(params, zeros, zeros, jnp.float32(0))] * 2
    for _ in range(3):
        state = [run_tier(tier, step, *s)[0] for tier, s in zip((1, 2), state)]
        assert_same(state[0], state[1])


@x64
def test_as_text_shows_both_tiers():
    x = jnp.ones(fusion.NUMPY_MIN, jnp.float64)

    def f(x):
        return jnp.sin(x) * 2.0 + jnp.cos(x)
    with jax.config.override("jaxlite_tier", 1):
        t1 = jax.jit(f).lower(x).compile().as_text()
    assert "tier 2" not in t1 and "sin" in t1
    with jax.config.override("jaxlite_tier", 2):
        t2 = jax.jit(f).lower(x).compile().as_text()
    assert "---- tier 2" in t2 and "out=" in t2 and t2.startswith(t1.split("\n")[0])


def test_bad_tier_flag_is_a_clear_error():
    with jax.config.override("jaxlite_tier", 3):
        with pytest.raises(ValueError, match="jaxlite_tier must be 'auto', 1 or 2"):
            jax.jit(lambda x: x + 1)(jnp.ones(3))


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_kernel_disk_cache_across_processes(tmp_path):
    """A kernel built by one process is a file keyed by the hash of its source, compiled
    into numba's disk cache; a second process loads it instead of compiling again."""
    script = textwrap.dedent("""
        import sys, time
        import numpy as np
        import jaxlite as jax, jaxlite.numpy as jnp
        jax.config.update("jaxlite_tier", 2)
        x = jnp.asarray(np.arange(4096, dtype=np.float32))
        f = jax.jit(lambda x, y: ((x * 0.5 + y) * x - y * 3.0) / (y + 2.0))
        t0 = time.perf_counter()
        out = f(x, x)
        print(f._tiers()[0], time.perf_counter() - t0)
        ref = ((np.arange(4096, dtype=np.float32) * np.float32(0.5) + np.arange(4096, dtype=np.float32)))
        assert np.asarray(out).dtype == np.float32
    """)
    env = dict(os.environ, JAXLITE_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        runs.append(r.stdout.split())
    assert runs[0][0] == runs[1][0] == "2"
    kdir = tmp_path / "kernels"
    files = sorted(p.name for p in kdir.glob("k_*.py"))
    assert len(files) == 1
    cached = list((kdir / "__pycache__").glob("k_*.nbi"))
    assert cached, "numba's cache index was not written"


# ----------------------------------------------------------------------------- whole loops

@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("reverse", [False, True])
def test_scalar_scan_compiles_to_one_loop(reverse):
    """A scan of a scalar body (consts, several carries of different dtypes, xs and ys)
    becomes one numba loop with tier 1's bits, dtypes and weak types."""
    rng = np.random.RandomState(0)
    xs = jnp.asarray(rng.randn(257).astype(np.float32))
    ks = jnp.asarray(rng.randint(-5, 5, 257).astype(np.int32))
    w = jnp.asarray(np.float32(0.75))

    def f(xs, ks, w):
        def step(carry, x):
            c, n, flag = carry
            xv, kv = x
            c2 = jnp.where(flag, c * w + xv, c - xv / 3.0)
            n2 = n + kv * 2
            return (c2, n2, c2 > 0.5), (c, n2.astype(jnp.float32) * 0.5)
        return lax.scan(step, (0.0, jnp.int32(1), False), (xs, ks), reverse=reverse)
    o1, _ = run_tier(1, f, xs, ks, w)
    o2, f2 = run_tier(2, f, xs, ks, w)
    assert_same(o1, o2)
    assert "scan compiled whole: one numba loop" in tier2_text(f2, xs, ks, w)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("name", ["mul", "add", "sub", "eq", "neg", "integer_pow",
                                  "dot_general"])
def test_library_primitive_named_as_a_lax_op_keeps_its_impl_in_loops(name):
    """Tier 2's scalar loop code is the lax primitives' own rule, not a rule of a name: a
    library's primitive (jax.extend) called "mul" in a fori_loop body computes its own
    ``2 * x + 1`` (it was compiled as numba's ``x * x``: 19.0 under tier 1, 25.6 under
    tier 2)."""
    from jaxlite.extend.core import Primitive
    p = Primitive(name)
    p.def_impl(lambda x, *rest, **params: np.asarray(np.asarray(x) * 2 + 1,
                                                     np.asarray(x).dtype))
    p.def_abstract_eval(lambda x, *rest, **params: x)
    one = name in ("neg", "integer_pow")
    params = {"y": 2} if name == "integer_pow" else {}

    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: p.bind(*([c] if one else [c, c]), **params),
                             x)
    x = jnp.float32(1.5)
    o1, _ = run_tier(1, f, x)
    o2, _ = run_tier(2, f, x)
    assert_same(o1, o2)
    assert float(o2) == 19.0     # (1.5 -> 4 -> 9 -> 19)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_scan_with_array_carry_stays_python_loop():
    xs = jnp.asarray(np.linspace(0, 1, 20, dtype=np.float32))

    def vec(xs):
        return lax.scan(lambda c, x: (c + x, c * 2), jnp.zeros(3), xs)

    def trans(xs):
        return lax.scan(lambda c, x: (jnp.sin(c) + x, c), 0.0, xs)
    for f in (vec, trans):
        o1, _ = run_tier(1, f, xs)
        o2, f2 = run_tier(2, f, xs)
        assert_same(o1, o2)
        # (float32 sin: XLA's kernel has a numba twin, so that body compiles whole)
        assert ("numba loop" in tier2_text(f2, xs)) == (f is trans)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_empty_scan_loop():
    xs = jnp.zeros((0,), jnp.float32)
    f = lambda xs: lax.scan(lambda c, x: (c * 2.0 + x, c - x), 1.0, xs)  # noqa: E731
    o1, _ = run_tier(1, f, xs)
    o2, _ = run_tier(2, f, xs)
    assert_same(o1, o2)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_scalar_while_and_fori_loops_compile_whole():
    """A while loop with a data-dependent (early) exit and a fori_loop over scalars become one
    numba loop each, with tier 1's results."""
    def shrink(x, eps, limit):
        def cond(c):
            v, steps = c
            return (v > eps) & (steps < limit)

        def body(c):
            v, steps = c
            return jnp.where(v > 10.0, v * 0.5, v * 0.75 - 0.01), steps + 1
        return lax.while_loop(cond, body, (x, jnp.int32(0)))

    def fori(x):
        return lax.fori_loop(0, 100, lambda i, c: c * 0.5 + i.astype(jnp.float32), x)
    args = (jnp.float32(1000.0), jnp.float32(1e-3), jnp.int32(1000))
    for fn, a in [(shrink, args), (shrink, args[:2] + (jnp.int32(5),)),
                  (fori, (jnp.float32(3.0),))]:
        o1, _ = run_tier(1, fn, *a)
        o2, f2 = run_tier(2, fn, *a)
        assert_same(o1, o2)
        assert "one numba loop" in tier2_text(f2, *a)
    with jax.config.override("jaxlite_tier", 2):
        v, n = jax.jit(shrink)(*args)
    x, k = np.float32(1000.0), 0
    while x > np.float32(1e-3) and k < 1000:    # (v * 0.75 - 0.01: one multiply-add, as XLA)
        x = x * np.float32(0.5) if x > 10 else fma_f32_np(x, np.float32(0.75),
                                                          -np.float32(0.01))[()]
        k += 1
    assert float(v) == x and int(n) == k


def test_eigvals_batched_geev_equals_scipy_per_matrix():
    """Eigenvalues of a stack come from one direct geev call per matrix (scipy's own call and
    workspace): the same bits as ``scipy.linalg.eig`` matrix by matrix."""
    sla = pytest.importorskip("scipy.linalg")
    rng = np.random.RandomState(0)
    for dt in (np.float32, np.complex64, np.float64):
        x = rng.randn(16, 4, 4).astype(dt)
        if np.dtype(dt).kind == "c":
            x = x + 1j * rng.randn(16, 4, 4).astype(dt)
        with jax.experimental.enable_x64(dt == np.float64):
            got = np.asarray(jnp.linalg.eigvals(jnp.asarray(x)))
        want = np.stack([sla.eig(m, left=False, right=False, check_finite=False) for m in x])
        assert got.tobytes() == want.astype(got.dtype).tobytes()


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_loop_bodies_are_fused_too():
    """A scan over vectors not compilable whole (a cumulative sum in its body) gets its
    body's elementwise cluster fused; the values stay tier 1's."""
    rng = np.random.RandomState(0)
    xs = jnp.asarray(rng.randn(30, 50).astype(np.float32))
    w = jnp.asarray(rng.randn(50).astype(np.float32))

    def f(xs, w):
        def step(c, x):
            c2 = (c * 0.9 + x * w) / (jnp.abs(c) + 1.0) - 0.125 * x
            return c2, jnp.sin(jnp.cumsum(c2))
        return lax.scan(step, jnp.zeros(50, jnp.float32), xs)
    o1, _ = run_tier(1, f, xs, w)
    o2, f2 = run_tier(2, f, xs, w)
    assert_same(o1, o2)
    text = tier2_text(f2, xs, w)
    assert "def scan_body" in text and "numba loop" in text


def test_tier2_failure_falls_back_to_tier1(monkeypatch):
    """A tier-2 program failing where tier 1 runs hands the call to tier 1, which stays."""
    x = jnp.asarray(np.linspace(0, 1, 10, dtype=np.float32))

    def g(x):
        return jnp.sin(x) * 2.0 + x * x - 1.0
    want, _ = run_tier(1, g, x)
    with jax.config.override("jaxlite_tier", 2):
        f = jax.jit(g)
        f(x)
        prog = f._programs()[-1]
        assert prog.tier == 2

        def broken(*args):
            raise TypeError("kernel met an argument it was not built for")
        prog.fn = prog._guarded(broken)
        assert_same(f(x), want)
        assert prog.tier == 1 and f._tiers()[-1] == 1
        assert_same(f(x), want)


# ------------------------------------------------------- buffer reuse, broadcast kernels, pow

@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@x64
def test_ufuncs_write_into_dying_buffers_the_program_owns():
    """Tier 2 writes a ufunc's result into an operand that dies there when the program made
    it (a numba kernel's output, a matmul's, an earlier ufunc's): tier 1's bits, and never
    into an argument (the caller's arrays are unchanged) or a returned value."""
    rng = np.random.RandomState(3)
    x = rng.randn(64, 64)
    w = rng.randn(64, 64)
    b = rng.randn(64)

    # (nextafter, maximum, minimum: NumPy's ufuncs at every dtype, never numba code)
    def f(x, w, b):
        h = jnp.nextafter(x @ w + b, 0.0)  # nextafter writes into the bias kernel's output
        return jnp.maximum(jnp.nextafter(x, 1.0), 0.25) * 2.0, h, jnp.minimum(h, 0.5)
    args = [jnp.asarray(a) for a in (x, w, b)]
    o1, _ = run_tier(1, f, *args)
    o2, f2 = run_tier(2, f, *args)
    assert_same(o1, o2)
    for a, orig in zip(args, (x, w, b)):
        np.testing.assert_array_equal(np.asarray(a), orig)
    text = tier2_text(f2, *args).split("---- tier 2")[1].split("# jaxlite tier-2")[0]
    lines = [ln for ln in text.splitlines() if "np.nextafter(" in ln or "np.m" in ln]
    # nextafter writes into the bias kernel's output, maximum into nextafter's
    assert any(", out=" in ln for ln in lines if "np.nextafter(" in ln), text
    assert any(", out=" in ln for ln in lines if "np.maximum(" in ln), text
    # the nextafter of the argument x allocates; h (returned) is not overwritten by minimum
    assert any("out=" not in ln for ln in lines if "np.nextafter(a," in ln), text
    assert all("out=" not in ln for ln in lines if "np.minimum(" in ln), text
    o3 = f2(*args)
    assert_same(o1, o3)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("shape,bshape", [((64, 64), (1, 64)), ((64, 32), (64, 1)),
                                          ((8, 16, 16), (1, 16, 1))])
@x64
def test_single_broadcast_op_is_a_loop_nest_kernel(shape, bshape):
    """One numba-able op reading a size-1 broadcast operand over 1024+ elements (a bias
    add before a NumPy ufunc, nextafter) is a kernel of its own, a loop nest; before one of
    XLA's math kernels (float64 arctan: a numba twin) the two are one loop nest. Tier 1's
    bits."""
    rng = np.random.RandomState(4)
    x = jnp.asarray(rng.randn(*shape))
    b = jnp.asarray(rng.randn(*bshape))

    def f(x, b):
        return jnp.nextafter(x + b, 0.0)

    def g(x, b):
        return jnp.arctan(x + b)
    for fn, n_ops in ((f, 1), (g, 2)):
        o1, _ = run_tier(1, fn, x, b)
        o2, f2 = run_tier(2, fn, x, b)
        assert_same(o1, o2)
        text = tier2_text(f2, x, b).split("---- tier 2")[1]
        assert f"fused: {n_ops} ops, numba loop" in text and "for i1 in range(" in text, text
        assert ("np.nextafter(" in text) == (fn is f)


@pytest.mark.parametrize("tier", [1, 2])
def test_pow_lowering_per_dtype(tier):
    """``x ** y`` of one dtype lowers to the ``np.power`` call its impl makes (no impl call)
    for dtypes whose impl is NumPy's (complex); float32 and float64 call XLA's kernels
    (glibc's powf and pow, ``cpu_math.power``/``libm64``): the eager bits, on arrays and
    scalars; an integer exponent goes through impl."""
    for dt in (np.complex128, np.float64, np.float32):
        with jax.config.override("jax_enable_x64", dt != np.float32):
            x = jnp.asarray(np.array([0.5, 2.0, -1.5, 0.0], dt))
            t = jnp.asarray(dt(3.0))

            def f(x, t):
                return x ** t, jnp.asarray(dt(0.9)) ** (t + 1), lax.integer_pow(x, 3), x ** 2
            eager = f(x, t)
            out, g = run_tier(tier, f, x, t)
            assert_same(eager, out)
            with jax.config.override("jaxlite_tier", tier):
                text = g.lower(x, t).compile().as_text()
            if dt == np.complex128:
                assert "np.power(" in text and not re.search(r"\b_pow_\d+\(", text)
            else:
                assert "np.power(" not in text and "pow" in text

            def h(x):
                return lax.pow(x, jnp.int32(3))
            assert_same(h(x), run_tier(tier, h, x)[0])
    # the random samplers' twin of pow (XLA:CPU's powf) keeps calling its own impl
    from jaxlite._src.random import xla_ops
    rng = np.random.RandomState(7)
    a = rng.uniform(0, 10, 4096).astype(np.float32)
    b = rng.uniform(-3, 3, 4096).astype(np.float32)
    want = xla_ops.pow_p.impl(a, b)
    got, _ = run_tier(tier, xla_ops.pow, jnp.asarray(a), jnp.asarray(b))
    assert bits(got) == bits(want)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_unit_axis_relayouts_read_only_by_kernels_are_folded():
    """A relayout that only inserts size-1 axes (the bias row ``b[None, :]`` of ``x @ w +
    b``) read only by numba kernels is not computed: the kernel reads its operand flat.
    Tier 1's bits; a relayout read elsewhere too (returned) stays."""
    rng = np.random.RandomState(6)
    x, w = (jnp.asarray(rng.randn(64, 64).astype(np.float32)) for _ in range(2))
    b = jnp.asarray(rng.randn(64).astype(np.float32))

    def f(x, w, b):
        return jnp.tanh(x @ w + b) * 2.0 - b

    def g(x, b):
        r = b.reshape(1, 64)
        return x * r + r * 0.5, r
    for fn, args in [(f, (x, w, b)), (g, (x, b))]:
        o1, _ = run_tier(1, fn, *args)
        o2, f2 = run_tier(2, fn, *args)
        assert_same(o1, o2)
        text = tier2_text(f2, *args).split("---- tier 2")[1].split("# jaxlite tier-2")[0]
        assert "numba loop" in text
        assert (".reshape((1, 64))" in text) == (fn is g), text


# ----------------------------------------------------------------------------- numba in chunks

@pytest.mark.parametrize("numba_on", [False, True] if HAVE_NUMBA else [False])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32])
@x64
def test_numba_runs_inside_numpy_chunks(dt, numba_on, small_chunks, monkeypatch):
    """A NumPy-chunked cluster (NumPy's ufuncs among its ops: nextafter, maximum, which
    numba does not compute) runs each run of two or more numba-exact ufunc ops as one numba
    loop over the chunk: rank-0 operands, broadcast scalars and literals as scalars, results
    read later or returned in chunk buffers that are never the loop's own operands; tier 2's
    bits, dtypes and weak types are tier 1's, over chunks with a short tail, and without
    numba the chunks stay ufunc by ufunc."""
    if not numba_on:
        monkeypatch.setattr(fusion, "numba_module", lambda: None)
    ft = jnp.float32 if dt == np.float32 else jnp.float64
    rng = np.random.RandomState(1)
    x = jnp.asarray((rng.randn(70) * 3).astype(dt))
    y = jnp.asarray((rng.randn(70) * 3).astype(dt))
    s = jnp.asarray(dt(3))

    def prog(x, y, s):
        a = jnp.nextafter(x.astype(ft), ft(0))
        b = (a * 1.5 + y) - s                  # a run: mul, add, sub (s: rank 0)
        c = jnp.maximum(b, -1.0)
        d = c * b - 0.5 * a                    # a run reading a (still live) and b
        e = jnp.nextafter(d, ft(1))
        return d, e * e + c, jnp.sqrt(jnp.abs(e)) * 2.0

    o1, _ = run_tier(1, prog, x, y, s)
    o2, f2 = run_tier(2, prog, x, y, s)
    assert_same(o1, o2)
    text = tier2_text(f2, x, y, s)
    assert "NumPy chunks" in text
    calls = re.findall(r"(_nk\d+)\((.*)\)  # numba loop \(", text)
    if not numba_on:
        assert not calls
        return
    assert len(calls) >= 2, text
    for _, args in calls:
        names = [a.strip() for a in args.split(",")]
        assert len(set(names)) == len(names), args   # no output where it reads
    if dt != np.int32:   # (int32: casts of y and s split the first run)
        assert any("[()]" in args for _, args in calls)  # (s: a scalar)


@x64
def test_numba_runs_need_two_exact_ufunc_ops(small_chunks):
    """Single ops between NumPy's ufuncs (nextafter), and ops numba does not compute as
    NumPy does (max/min: signed zeros), stay NumPy ufuncs."""
    if not HAVE_NUMBA:
        pytest.skip("numba not installed")
    x = jnp.asarray(np.linspace(-3, 3, 70))

    def prog(x):
        a = jnp.nextafter(x, 4.0) * 2.0
        b = jnp.minimum(a, 1.5)
        return jnp.nextafter(jnp.maximum(b, 0.1) + a, 0.0)

    o1, _ = run_tier(1, prog, x)
    o2, f2 = run_tier(2, prog, x)
    assert_same(o1, o2)
    assert "numba loop (" not in tier2_text(f2, x)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("n", [1000, 300_001])
def test_kernel_chains_run_in_blocks_one_kernel_per_loop(n):
    """A fused loop holding several of XLA's math kernels runs over blocks, each kernel in a
    loop of its own (a loop step chaining them is latency-bound); a large flat loop runs on
    ranges across threads. Tier 1's bits, short last block and ranges included, and
    outputs read mid-chain."""
    rng = np.random.RandomState(3)
    x = jnp.asarray((rng.randn(n) * 3).astype(np.float32))
    s = jnp.asarray(np.float32(0.75))

    def f(x, s):
        a = jnp.sin(x) * 1.5 + x
        b = jnp.tanh(a) - s * a
        c = jnp.exp(-b * b) + jnp.cos(a)
        return c * 2.0 - b, a
    o1, _ = run_tier(1, f, x, s)
    o2, f2 = run_tier(2, f, x, s)
    assert_same(o1, o2)
    text = tier2_text(f2, x, s)
    assert text.count("for jj in range(m0):") >= 4, text
    from jaxlite._src.cpu_math import threads
    assert ("threads" in text.split("# jaxlite tier-2")[0]) == (
        n >= threads.PARALLEL_MIN and threads.workers() > 1), text
