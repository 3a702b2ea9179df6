"""Loops whose bodies compute on small arrays (issue 19, item 3 beyond scalar bodies): an RNN
``scan``, a ``lax.map`` of a small Newton solve, and diffrax's Tsit5 (when diffrax is
installed), with jaxlite tier 1 (a Python loop over the compiled body), jaxlite tier 2 (the
loop compiled whole to one numba function), JAX ``jit`` (when installed) and a hand-written
NumPy loop, measured in one run.

Run: ``PYTHONPATH=. python benchmarks/bench_loops.py`` (``--quick`` for fewer repetitions).
The ratio column is tier 2 over JAX (over NumPy without JAX). First calls of tier 2 include
numba's compilation unless its disk cache (``~/.cache/jaxlite``) already holds the kernel.
"""
from __future__ import annotations

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

from bench_tier2 import timeit   # (median per call; --quick: fewer repetitions)


def fmt(t):
    if t is None:
        return "-"
    return f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.3f} s"


def block(x):
    for leaf in jaxlite.tree_util.tree_leaves(x):
        np.asarray(leaf)


def with_tier(tier, make, *args):
    """(first-call seconds, steady seconds) of ``make(jaxlite)``'s jitted function on
    ``args`` with tier ``tier`` forced."""
    with jaxlite.config.override("jaxlite_tier", tier):
        f = jaxlite.jit(make(jaxlite, jlnp))
        t0 = time.perf_counter()
        block(f(*args))
        first = time.perf_counter() - t0
        return first, timeit(lambda: block(f(*args)))


def jax_time(make, *args):
    if jax is None:
        return None
    f = jax.jit(make(jax, jjnp))
    jargs = [jjnp.asarray(np.asarray(a)) for a in args]
    jax.block_until_ready(f(*jargs))
    return timeit(lambda: jax.block_until_ready(f(*jargs)))


def row(name, t1, t2, tj, tn, first2):
    ref, label = (tj, "jax") if tj else (tn, "numpy")
    ratio = f"{t2 / ref:.2f}x {label}" if ref else "-"
    print(f"{name:40s} {fmt(t1):>10s} {fmt(t2):>10s} {fmt(tj):>10s} {fmt(tn):>10s} "
          f"{ratio:>12s}   (tier 2 first call {fmt(first2)})")


def make_rnn(lib, m):
    def rnn(W, xs):
        def body(h, x):
            h = m.tanh(W @ h + x)
            return h, h.sum()
        return lib.lax.scan(body, m.zeros(64), xs)
    return rnn


def bench_rnn():
    rng = np.random.default_rng(0)
    W = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    xs = rng.standard_normal((1000, 64)).astype(np.float32)

    def np_rnn():
        h, ys = np.zeros(64, np.float32), np.empty(1000, np.float32)
        for i in range(1000):
            h = np.tanh(W @ h + xs[i])
            ys[i] = h.sum()
        return h, ys
    args = (jlnp.asarray(W), jlnp.asarray(xs))
    _, t1 = with_tier(1, make_rnn, *args)
    first2, t2 = with_tier(2, make_rnn, *args)
    row("RNN scan, 1000 steps of (64,64) @ (64,)", t1, t2, jax_time(make_rnn, *args),
        timeit(np_rnn), first2)


def make_newton(lib, m):
    def solve(cs):
        def one(c):       # x**3 + c . x = 1 per row, by 20 Newton steps on a 4-vector
            def step(i, x):
                return x - (x ** 3 + c * x - 1.0) / (3.0 * x * x + c)
            return lib.lax.fori_loop(0, 20, step, m.ones_like(c))
        return lib.lax.map(one, cs)
    return solve


def bench_map():
    rng = np.random.default_rng(1)
    cs = (rng.random((500, 4)) + 0.5).astype(np.float32)

    def np_map():
        out = np.empty_like(cs)
        for r in range(cs.shape[0]):
            c, x = cs[r], np.ones(4, np.float32)
            for _ in range(20):
                x = x - (x ** 3 + c * x - np.float32(1)) / (np.float32(3) * x * x + c)
            out[r] = x
        return out
    args = (jlnp.asarray(cs),)
    _, t1 = with_tier(1, make_newton, *args)
    first2, t2 = with_tier(2, make_newton, *args)
    row("lax.map of 500 rows, 20 Newton steps", t1, t2, jax_time(make_newton, *args),
        timeit(np_map), first2)


def make_tsit5(lib, m):
    import diffrax

    def vf(t, y, args):
        return -y + m.sin(t)

    def solve(y0):
        return diffrax.diffeqsolve(
            diffrax.ODETerm(vf), diffrax.Tsit5(), t0=0.0, t1=10.0, dt0=0.01, y0=y0,
            stepsize_controller=diffrax.ConstantStepSize(), saveat=diffrax.SaveAt(t1=True),
            max_steps=2000).ys
    return solve


def bench_diffrax():
    try:
        import diffrax  # noqa: F401  (it imports jax: real JAX must be installed)
    except ImportError:
        print("diffrax Tsit5: skipped (diffrax not installed)")
        return
    # diffrax imports `jax`: run it on jaxlite through the import hook in a subprocess
    import os
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    code = (
        f"import sys; sys.path[:0] = [{os.path.dirname(here)!r}, {here!r}];"
        "import jaxlite; jaxlite.install_as_jax();"
        "import bench_loops as b;"
        "y0 = jaxlite.numpy.ones(8);"
        "first, t1 = b.with_tier(1, b.make_tsit5, y0);"
        "first2, t2 = b.with_tier(2, b.make_tsit5, y0);"
        "print(t1, t2, first2)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=900)
    if out.returncode:
        print("diffrax Tsit5: failed:", out.stderr.strip().splitlines()[-1:])
        return
    t1, t2, first2 = map(float, out.stdout.split()[-3:])
    row("diffrax Tsit5, 1000 steps of an 8-vector", t1, t2,
        jax_time(make_tsit5, jlnp.ones(8)) if jax else None, None, first2)


def main():
    print(f"jaxlite {jaxlite.__version__}, numpy {np.__version__}"
          + (f", jax {jax.__version__}" if jax else ""))
    print(f"{'workload':40s} {'tier 1':>10s} {'tier 2':>10s} {'JAX jit':>10s} "
          f"{'NumPy':>10s} {'ratio':>12s}")
    bench_rnn()
    bench_map()
    bench_diffrax()


if __name__ == "__main__":
    main()
