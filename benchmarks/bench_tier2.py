"""The compiler's second tier (issue 19): each workload with jaxlite tier 1, jaxlite tier 2,
JAX ``jit`` (when installed) and hand-written NumPy, measured in one run.

Run: ``PYTHONPATH=. python benchmarks/bench_tier2.py`` (``--quick`` for fewer repetitions;
name rows to run only those: ``chain adam scan build eager dispatch eigvals random
first_call memory``).
From a git worktree keep ``PYTHONPATH=.``: the script's directory comes first on ``sys.path``,
so without it ``import jaxlite`` finds the installed (editable) copy, not the worktree's.
The ratio column is jaxlite tier 2 over JAX (over NumPy without JAX; first calls: tier 1,
which a first call runs). Targets (issue 19): every row <= 1.0x JAX; the 10M chain <= 0.5x
JAX; first-call latency <= 0.1x JAX.
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import jaxlite
import jaxlite.numpy as jlnp

try:
    import jax
    import jax.numpy as jjnp
except ImportError:  # JAX is optional
    jax = jjnp = None

QUICK = "--quick" in sys.argv


def timeit(fn, repeat=5, min_time=0.05):
    """Median seconds per call of ``fn()``."""
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 > min_time:
            break
        number *= 4
    times = []
    for _ in range(repeat if repeat == 1 else 3 if QUICK else repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def timeit_best(fn, repeat=7):
    """Best seconds per call of ``fn()`` over ``repeat`` runs (for microsecond rows, where a
    loaded machine adds noise of one sign only)."""
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 > 0.02:
            break
        number *= 4
    best = float("inf")
    for _ in range(3 if QUICK else repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def paired_overhead(call, bare, pairs=None):
    """(median, first quartile, third quartile) of ``call()`` time minus ``bare()`` time
    over alternating pairs, the two timed back to back (in turn first), so a host whose
    speed drifts within a run changes both alike (a best or a mean of differences is a
    noise spike's)."""
    perf = time.perf_counter
    for _ in range(3):
        call()
        bare()
    diffs = []
    for i in range(pairs or (60 if QUICK else 400)):
        if i % 2:
            t0 = perf(); call(); t1 = perf(); bare(); t2 = perf()
            diffs.append((t1 - t0) - (t2 - t1))
        else:
            t0 = perf(); bare(); t1 = perf(); call(); t2 = perf()
            diffs.append((t2 - t1) - (t1 - t0))
    q1, q2, q3 = statistics.quantiles(diffs, n=4)
    return q2, q1, q3


def fmt(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.2f} us"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.3f} s"


def has_tiers():
    return "jaxlite_tier" in jaxlite.config._flags


def with_tier(tier, fn):
    """Run ``fn()`` with jit forced to ``tier`` (None when this jaxlite has no tiers)."""
    if not has_tiers():
        return fn() if tier == 1 else None
    with jaxlite.config.override("jaxlite_tier", tier):
        return fn()


def row(name, t1, t2, tj, tn, best=None):
    """One table row; the ratio is of ``best`` (default: tier 2, else tier 1)."""
    if best is None:
        best = t2 if t2 is not None else t1
    ref = tj if tj is not None else tn
    ratio = f"{best / ref:6.2f}x {'jax' if tj is not None else 'np'}" if ref else "-"
    print(f"{name:44s} {fmt(t1):>10s} {fmt(t2):>10s} {fmt(tj):>10s} {fmt(tn):>10s}  {ratio}",
          flush=True)


def block(x):
    return jax.block_until_ready(x) if jax is not None else x


# ------------------------------------------------------------------ 50-op elementwise chain

def fifty_ops(m, x):
    for _ in range(10):
        x = m.sin(x) * 1.5 + x
        x = m.tanh(x) - 0.5 * x
    return x


def bench_chain():
    x_np = np.random.default_rng(0).standard_normal(10_000_000, dtype=np.float32)
    x = jlnp.asarray(x_np)

    def jl():
        f = jaxlite.jit(lambda v: fifty_ops(jlnp, v))
        f(x)
        f(x)
        return timeit(lambda: f(x), repeat=3)
    t1 = with_tier(1, jl)
    t2 = with_tier(2, jl)
    tj = None
    if jax:
        jx = jjnp.asarray(x_np)
        jf = jax.jit(lambda v: fifty_ops(jjnp, v))
        jf(jx).block_until_ready()
        tj = timeit(lambda: jf(jx).block_until_ready(), repeat=3)
    tn = timeit(lambda: fifty_ops(np, x_np), repeat=3)
    row("50-op elementwise chain, 10M float32", t1, t2, tj, tn)


def chain150(m, x):
    """150 equations: the 50-op chain's body 25 times."""
    for _ in range(25):
        x = m.sin(x) * 1.5 + x
        x = m.tanh(x) - 0.5 * x
    return x


def bench_first_call():
    """First-call (trace + compile + run) latency, median of 5 fresh jits: the 50-op and
    150-equation chains on (3,), and jit(grad) of the Adam MLP's loss."""
    a = np.arange(3, dtype=np.float32)
    x = jlnp.asarray(a)

    def first(jit, fn, *args):
        ts = []
        for _ in range(5):
            g = jit(lambda *v: fn(*v))
            t0 = time.perf_counter()
            block(g(*args))
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    def both(name, make_fn, jl_args, jax_args):
        t1 = with_tier(1, lambda: first(jaxlite.jit, make_fn(jaxlite, jlnp), *jl_args))
        t2 = with_tier(2, lambda: first(jaxlite.jit, make_fn(jaxlite, jlnp), *jl_args))
        tj = first(jax.jit, make_fn(jax, jjnp), *jax_args()) if jax else None
        row(name, t1, t2, tj, None, best=t1)   # (a first call runs tier 1)
    ja = (lambda: (jjnp.asarray(a),))
    both("first call (compile) of the 50-op chain (3,)",
         lambda lib, m: lambda v: fifty_ops(m, v), (x,), ja)
    both("first call of the 150-equation chain (3,)",
         lambda lib, m: lambda v: chain150(m, v), (x,), ja)
    params, xs, ys = mlp_data()

    def mlp_grad(lib, m):
        def loss(params, x, y):
            h = x
            for w, b in params[:-1]:
                h = m.tanh(h @ w + b)
            w, b = params[-1]
            return m.mean((h @ w + b - y) ** 2)
        return lib.grad(loss)
    conv = [(jlnp.asarray(w), jlnp.asarray(b)) for w, b in params]
    both("first call of grad(MLP loss) (Adam MLP)", mlp_grad,
         (conv, jlnp.asarray(xs), jlnp.asarray(ys)),
         lambda: ([(jjnp.asarray(w), jjnp.asarray(b)) for w, b in params],
                  jjnp.asarray(xs), jjnp.asarray(ys)))
    t_auto = first(jaxlite.jit, lambda v: fifty_ops(jlnp, v), x)
    print(f"{'   (default tiering: first call, 50-op chain)':44s} {fmt(t_auto):>10s}")


# ------------------------------------------------------------------ Adam on a small MLP

SIZES = [4, 64, 64, 64, 1]


def mlp_data():
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((m, n), dtype=np.float32) / np.float32(np.sqrt(m)),
               np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]
    x = rng.standard_normal((64, 4), dtype=np.float32)
    y = rng.standard_normal((64, 1), dtype=np.float32)
    return params, x, y


def make_adam_step(lib, jnp_mod):
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp_mod.tanh(h @ w + b)
        w, b = params[-1]
        return jnp_mod.mean((h @ w + b - y) ** 2)

    def step(params, m, v, t, x, y):
        g = lib.grad(loss)(params, x, y)
        t = t + 1
        m = lib.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = lib.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        mhat_c = 1 / (1 - b1 ** t)
        vhat_c = 1 / (1 - b2 ** t)
        params = lib.tree_util.tree_map(
            lambda p, m, v: p - lr * (m * mhat_c) / (jnp_mod.sqrt(v * vhat_c) + eps),
            params, m, v)
        return params, m, v, t
    return lib.jit(step)


def run_adam(step, params, x, y, n, conv):
    params = [tuple(conv(a) for a in p) for p in params]
    m = [tuple(conv(np.zeros_like(a)) for a in p) for p in params]
    v = [tuple(conv(np.zeros_like(a)) for a in p) for p in params]
    t = conv(np.float32(0))
    for _ in range(n):
        params, m, v, t = step(params, m, v, t, x, y)
    return params


def numpy_adam(params, x, y, n):
    b1, b2, eps, lr = np.float32(0.9), np.float32(0.999), np.float32(1e-8), np.float32(1e-3)
    params = [[w.copy(), b.copy()] for w, b in params]
    m = [[np.zeros_like(w), np.zeros_like(b)] for w, b in params]
    v = [[np.zeros_like(w), np.zeros_like(b)] for w, b in params]
    for t in range(1, n + 1):
        hs, h = [x], x
        for w, b in params[:-1]:
            h = np.tanh(h @ w + b)
            hs.append(h)
        w, b = params[-1]
        out = h @ w + b
        d = (2.0 / out.size) * (out - y)
        grads = []
        for i in range(len(params) - 1, -1, -1):
            w, b = params[i]
            grads.append((hs[i].T @ d, d.sum(0)))
            if i:
                d = (d @ w.T) * (1 - hs[i] * hs[i])
        grads.reverse()
        c1, c2 = 1 / (1 - b1 ** t), 1 / (1 - b2 ** t)
        for p, mm, vv, g in zip(params, m, v, grads):
            for k in range(2):
                mm[k] = b1 * mm[k] + (1 - b1) * g[k]
                vv[k] = b2 * vv[k] + (1 - b2) * g[k] * g[k]
                p[k] = p[k] - lr * (mm[k] * c1) / (np.sqrt(vv[k] * c2) + eps)
    return params


def bench_adam():
    params, x, y = mlp_data()
    n = 200 if QUICK else 1000

    def jl():
        step = make_adam_step(jaxlite, jlnp)
        xs, ys = jlnp.asarray(x), jlnp.asarray(y)
        run_adam(step, params, xs, ys, 3, jlnp.asarray)
        return timeit(lambda: run_adam(step, params, xs, ys, n, jlnp.asarray), repeat=3,
                      min_time=0) * 1000 / n
    t1 = with_tier(1, jl)
    t2 = with_tier(2, jl)
    tj = None
    if jax:
        step = make_adam_step(jax, jjnp)
        jxs, jys = jjnp.asarray(x), jjnp.asarray(y)
        block(run_adam(step, params, jxs, jys, 3, jjnp.asarray))
        tj = timeit(lambda: block(run_adam(step, params, jxs, jys, n, jjnp.asarray)),
                    repeat=3, min_time=0) * 1000 / n
    tn = timeit(lambda: numpy_adam(params, x, y, n), repeat=3, min_time=0) * 1000 / n
    row("1000 Adam steps, MLP 4-64-64-64-1, batch 64", t1, t2, tj, tn)


# ------------------------------------------------------------------ scan of a scalar body

def bench_scan():
    n = 10_000
    xs_np = np.random.default_rng(0).standard_normal(n).astype(np.float32)

    def step(c, x):
        return c * 0.999 + x, c

    def jl():
        s = jaxlite.jit(lambda xs: jaxlite.lax.scan(step, 0.0, xs))
        xs = jlnp.asarray(xs_np)
        s(xs)
        s(xs)
        return timeit(lambda: s(xs), repeat=3)
    t1 = with_tier(1, jl)
    t2 = with_tier(2, jl)
    tj = None
    if jax:
        js = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs))
        jxs = jjnp.asarray(xs_np)
        block(js(jxs))
        tj = timeit(lambda: block(js(jxs)), repeat=3)

    def np_loop(xs):
        c = np.float32(0)
        out = np.empty_like(xs)
        for i, x in enumerate(xs):
            out[i] = c
            c = c * np.float32(0.999) + x
        return c, out
    tn = timeit(lambda: np_loop(xs_np), repeat=3)
    row("lax.scan, 10k steps of a scalar body", t1, t2, tj, tn)
    t_best = t2 if t2 is not None else t1
    print(f"{'   per step':44s} {fmt(t1 / n):>10s} {fmt(t_best / n):>10s} "
          f"{fmt(tj / n if tj else None):>10s} {fmt(tn / n):>10s}")


# ------------------------------------------------------------------ eager and vmap(eigvals)

def bench_build():
    """An array built one element per step (``buf.at[i].set(...)`` in a fori_loop), the
    pattern XLA runs in place: jaxlite hands the carried buffer to the loop body (tier 1:
    a Python loop, one element written per step) and compiles the whole loop to numba in
    tier 2."""
    n = 20_000
    x_np = np.random.default_rng(1).standard_normal(n).astype(np.float32)

    def make(lib, m):
        def build(x):
            def body(i, buf):
                return buf.at[i].set(x[i] * 2.0 + buf[i - 1])
            return lib.lax.fori_loop(0, n, body, m.zeros(n))
        return lib.jit(build)

    def jl():
        f = make(jaxlite, jlnp)
        x = jlnp.asarray(x_np)
        f(x)
        for p in f._programs():
            p.promote(wait=True)
        return timeit(lambda: f(x), repeat=3)
    t1 = with_tier(1, jl)
    t2 = with_tier(2, jl)
    tj = None
    if jax:
        jf = make(jax, jjnp)
        jx = jjnp.asarray(x_np)
        block(jf(jx))
        tj = timeit(lambda: block(jf(jx)), repeat=3)

    def np_loop(x):
        buf = np.zeros(n, np.float32)
        for i in range(n):
            buf[i] = x[i] * np.float32(2.0) + buf[i - 1]
        return buf
    tn = timeit(lambda: np_loop(x_np), repeat=3)
    row("fori_loop, x.at[i].set of a 20k array", t1, t2, tj, tn)


def bench_eager():
    a = np.arange(3, dtype=np.float32)
    x = jlnp.asarray(a)
    t = timeit(lambda: x * 2 + 1)
    tj = None
    if jax:
        jx = jjnp.asarray(a)
        tj = timeit(lambda: (jx * 2 + 1).block_until_ready())
    tn = timeit(lambda: a * 2 + 1)
    row("eager x * 2 + 1 on (3,) float32", t, None, tj, tn)


# ------------------------------------------------------------------ dispatch (item 4)

def bench_dispatch():
    """Item 4's three targets: eager ``array op scalar`` within 0.5 us of ``array op array``;
    the cached jit call path <= 2 us for a few leaves; <= 20 us of overhead (call time minus
    the compiled program's own time) for a jitted train step with 30 leaves. Best of
    several runs."""
    a = np.arange(3, dtype=np.float32)
    x, y = jlnp.asarray(a), jlnp.asarray(a + 1)
    ts, ta = timeit_best(lambda: x * 2), timeit_best(lambda: x * y)
    tjs = tja = None
    if jax:
        jx, jy = jjnp.asarray(a), jjnp.asarray(a + 1)
        tjs, tja = timeit_best(lambda: jx * 2), timeit_best(lambda: jx * jy)
    row("eager x * 2 on (3,) float32", ts, None, tjs, timeit_best(lambda: a * 2))
    row("eager x * y on (3,) float32", ta, None, tja, timeit_best(lambda: a * a))
    print(f"{'   scalar - array (target <= 0.5 us)':44s} {fmt(ts - ta):>10s} {'':>10s} "
          f"{fmt(tjs - tja if jax else None):>10s}")

    def call_path(jit, tree):
        f = jit(lambda t: t)
        block(f(tree))
        return timeit_best(lambda: f(tree))
    few = {"a": x, "b": (y, x)}
    t_few = call_path(jaxlite.jit, few)
    tj_few = call_path(jax.jit, {"a": jx, "b": (jy, jx)}) if jax else None
    row("jit call, 3 leaves (identity; target <= 2 us)", t_few, None, tj_few, None)

    rng = np.random.default_rng(0)
    shapes = [((8, 8), (8,))] * 15
    params_np = [(rng.standard_normal(w, dtype=np.float32), np.zeros(b, np.float32))
                 for w, b in shapes]
    batch_np = rng.standard_normal((16, 8), dtype=np.float32)

    def make_step(lib, m):
        def loss(params, xb):
            h = xb
            for w, b in params:
                h = m.tanh(h @ w + b)
            return m.mean(h ** 2)

        def step(params, xb):
            g = lib.grad(loss)(params, xb)
            return lib.tree_util.tree_map(lambda p, q: p - 0.1 * q, params, g)
        return lib.jit(step)

    params = [tuple(jlnp.asarray(v) for v in p) for p in params_np]
    xb = jlnp.asarray(batch_np)
    step = make_step(jaxlite, jlnp)
    for _ in range(12):
        step(params, xb)
    for prog in step._programs():
        prog.promote(wait=True)
    t_step = timeit_best(lambda: step(params, xb))
    prog = step._programs()[0]
    vals = [leaf._value for leaf in jaxlite.tree_util.tree_leaves((params, xb))]
    # the overhead: call and bare program timed in alternating pairs (the host's speed
    # drifts within a run: timed apart, their difference is noise)
    o_med, o_q1, o_q3 = paired_overhead(lambda: step(params, xb), lambda: prog.fn(*vals))
    tj_step = None
    if jax:
        jstep = make_step(jax, jjnp)
        jparams = [tuple(jjnp.asarray(v) for v in p) for p in params_np]
        jxb = jjnp.asarray(batch_np)
        block(jstep(jparams, jxb))
        tj_step = timeit_best(lambda: block(jstep(jparams, jxb)))
    row("jit train step, 30 leaves (call)", t_step, None, tj_step, None)
    print(f"{'   overhead: call - program (target <= 20 us)':44s} {fmt(o_med):>10s} "
          f"(median of paired differences; quartiles {fmt(o_q1)} .. {fmt(o_q3)})")
    t30 = call_path(jaxlite.jit, params)
    tj30 = call_path(jax.jit, jparams) if jax else None
    row("jit call, 30 leaves (identity)", t30, None, tj30, None)


def random_warmed_up():
    """Whether jaxlite's draws run their steady kernels (numba loops loaded, normal table
    built: ski-rental choices a process makes after some time spent drawing)."""
    try:
        from jaxlite._src.random.fused import warmed_up
    except ImportError:   # (a jaxlite without them)
        return True
    return warmed_up()


def bench_random():
    """Eager ``split`` + ``normal((100, 100))`` per call (the issue's row), and the same
    jitted. jaxlite's eager draws start on NumPy kernels and switch to numba loops and a
    normal table once the process has spent some time drawing (ski rental); a median over
    calls straddling the switch measures neither. So: the warm-up (calls until the switch,
    and their total time beside JAX's for as many calls, its compilation included), then
    the steady per-call time of both."""
    def draw(lib):
        def f(k):
            k1, k2 = lib.random.split(k)
            return k1, lib.random.normal(k2, (100, 100))
        return f
    k = jaxlite.random.PRNGKey(0)
    f = draw(jaxlite)
    calls, t0 = 0, time.perf_counter()
    while not random_warmed_up() and time.perf_counter() - t0 < 10:
        f(k)
        calls += 1
    t_warm = time.perf_counter() - t0
    t = timeit(lambda: f(k))
    fj = jaxlite.jit(draw(jaxlite))
    fj(k)
    tjit = timeit(lambda: fj(k))
    tj = tjj = tj_warm = None
    if jax:
        kj = jax.random.PRNGKey(0)
        g = draw(jax)
        t0 = time.perf_counter()
        for _ in range(max(calls, 1)):
            block(g(kj))
        tj_warm = time.perf_counter() - t0
        tj = timeit(lambda: block(g(kj)))
        jf = jax.jit(draw(jax))
        block(jf(kj))
        tjj = timeit(lambda: block(jf(kj)))
    rng = np.random.default_rng(0)
    tn = timeit(lambda: rng.standard_normal((100, 100), dtype=np.float32))
    row(f"   warm-up: first {calls} eager calls, total", t_warm, None, tj_warm, None)
    row("split + normal((100, 100)), eager (steady)", t, None, tj, tn)
    row("split + normal((100, 100)), jit", tjit, None, tjj, tn)


def spectral_radius(m, mat):
    return m.max(m.abs(m.linalg.eigvals(mat)))


def bench_eigvals():
    """Tier 1 and tier 2 timed in alternating rounds (the host's speed drifts within a run:
    timed one after the other, the same program differs by 20%; for this program tier 2
    finds nothing to fuse and runs tier 1's code)."""
    batch = np.random.default_rng(0).standard_normal((128, 3, 3)).astype(np.float32)
    b = jlnp.asarray(batch)

    def make():
        f = jaxlite.jit(jaxlite.vmap(lambda a: spectral_radius(jlnp, a)))
        f(b)
        f(b)
        return lambda: f(b)
    calls = {1: with_tier(1, make)}
    if has_tiers():
        calls[2] = with_tier(2, make)
    try:   # steady state: the stacked-geev loop is built in the background
        from jaxlite._src.prims import linalg_geev
        linalg_geev.ready("s", wait=True)
    except ImportError:   # (a jaxlite without it)
        pass
    times = {k: [] for k in calls}
    for _ in range(3 if QUICK else 7):
        for k, fn in calls.items():
            times[k].append(timeit(fn, repeat=1, min_time=0.02))
    t1 = statistics.median(times[1])
    t2 = statistics.median(times[2]) if 2 in times else None
    tj = None
    if jax:
        jf = jax.jit(jax.vmap(lambda a: spectral_radius(jjnp, a)))
        jb = jjnp.asarray(batch)
        block(jf(jb))
        tj = timeit(lambda: block(jf(jb)), repeat=3)
    tn = timeit(lambda: np.max(np.abs(np.linalg.eigvals(batch)), -1), repeat=3)
    row("vmap of eigvals over (128, 3, 3)", t1, t2, tj, tn)


def fmt_mb(b):
    return "-" if b is None else f"{b / 2**20:.1f} MB"


def mem_row(name, m1, m2, mj, mn):
    best = m2 if m2 is not None else m1
    ref = mj if mj is not None else mn
    ratio = f"{best / ref:6.2f}x {'jax' if mj is not None else 'np'}" if ref else "-"
    print(f"{name:44s} {fmt_mb(m1):>10s} {fmt_mb(m2):>10s} {fmt_mb(mj):>10s} "
          f"{fmt_mb(mn):>10s}  {ratio}", flush=True)


def traced_peak(fn):
    """Bytes allocated at the peak of one ``fn()`` call above what was live before it
    (tracemalloc: NumPy reports its buffers to it), after a warm-up call."""
    import gc
    import tracemalloc
    fn()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
        del out
    finally:
        tracemalloc.stop()
    return peak - base


def bench_memory():
    """Peak memory of one ``jit(grad(loss))`` call on seed 000's MLP (784-2048-2048-2048-10,
    batch 128, float32): bytes allocated during the call above the live arguments (jaxlite:
    tracemalloc; JAX: its compiled program's temporaries plus outputs, ``memory_analysis``);
    then a donated SGD step ``params = step(params, batch)``."""
    sizes, bs = [784, 2048, 2048, 2048, 10], 128
    rng = np.random.default_rng(0)
    params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
               rng.standard_normal(b).astype(np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    batch = (rng.standard_normal((bs, sizes[0])).astype(np.float32),
             rng.standard_normal((bs, sizes[-1])).astype(np.float32))

    def make_loss(jnp_mod):
        def predict(params, inputs):
            for w, b in params:
                outputs = jnp_mod.dot(inputs, w) + b
                inputs = jnp_mod.maximum(outputs, 0)
            return outputs

        def loss(params, batch):
            inputs, targets = batch
            return jnp_mod.sum((predict(params, inputs) - targets) ** 2)
        return loss

    def make_step(lib, jnp_mod, donate):
        loss = make_loss(jnp_mod)

        def step(params, batch):
            grads = lib.grad(loss)(params, batch)
            return [(w - 1e-5 * dw, b - 1e-5 * db) for (w, b), (dw, db) in zip(params, grads)]
        return lib.jit(step, donate_argnums=0 if donate else ())

    jl_params = jaxlite.tree_util.tree_map(jlnp.asarray, params)
    jl_batch = jaxlite.tree_util.tree_map(jlnp.asarray, batch)
    gradfun = jaxlite.jit(jaxlite.grad(make_loss(jlnp)))
    m1 = with_tier(1, lambda: traced_peak(lambda: gradfun(jl_params, jl_batch)))
    m2 = with_tier(2, lambda: traced_peak(lambda: gradfun(jl_params, jl_batch))) \
        if has_tiers() else None
    mj = None
    if jax is not None:
        jp = jax.tree_util.tree_map(jjnp.asarray, params)
        jb = jax.tree_util.tree_map(jjnp.asarray, batch)
        ma = jax.jit(jax.grad(make_loss(jjnp))).lower(jp, jb).compile().memory_analysis()
        if ma is not None:
            mj = ma.temp_size_in_bytes + ma.output_size_in_bytes
    mem_row("peak memory, jit(grad(loss)) seed 000 MLP", m1, m2, mj, None)

    # a donated SGD step: the update lands in the old parameters' buffers
    def donated_peak():
        step = make_step(jaxlite, jlnp, True)
        state = [jaxlite.tree_util.tree_map(lambda a: jlnp.array(a, copy=True), params)]

        def one():
            state[0] = step(state[0], jl_batch)
        return traced_peak(one)
    d1 = with_tier(1, donated_peak)
    dj = None
    if jax is not None:
        ma = make_step(jax, jjnp, True).lower(jp, jb).compile().memory_analysis()
        if ma is not None:
            # outputs aliased to donated inputs are not new memory
            dj = ma.temp_size_in_bytes + ma.output_size_in_bytes - ma.alias_size_in_bytes
    mem_row("peak memory, donated SGD step, seed 000 MLP", d1, None, dj, None)


def main():
    print(f"jaxlite {jaxlite.__version__}, numpy {np.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}")
    try:
        import numba
        print(f"numba {numba.__version__}")
    except ImportError:
        print("numba not installed: tier 2 uses NumPy chunks only")
    print(f"{'workload':44s} {'tier 1':>10s} {'tier 2':>10s} {'JAX jit':>10s} {'NumPy':>10s}"
          "  tier 2 / ref")
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    for name, fn in [("chain", bench_chain), ("adam", bench_adam), ("scan", bench_scan),
                     ("build", bench_build),
                     ("eager", bench_eager), ("dispatch", bench_dispatch),
                     ("eigvals", bench_eigvals), ("random", bench_random),
                     ("first_call", bench_first_call),
                     ("memory", bench_memory)]:
        if not only or name in only:
            fn()


if __name__ == "__main__":
    main()
