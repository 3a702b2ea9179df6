"""Core speed benchmarks: eager op overhead, cached jit dispatch, compile latency, CSE.

Prints jaxlite next to NumPy and, when installed, JAX. Run: ``python benchmarks/bench_core.py``.
Targets (issue 2): eager op <= 2.5 us, cached jit call <= 5 us, 50-op compile <= 5 ms.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import jaxlite
import jaxlite.numpy as jlnp

try:
    import jax
    import jax.numpy as jjnp
except ImportError:  # JAX is optional
    jax = None


def timeit(fn, number=None, repeat=7):
    """Median seconds per call of ``fn()``."""
    if number is None:
        number = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            if time.perf_counter() - t0 > 0.05:
                break
            number *= 4
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def fmt(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:8.2f} us"
    if t < 1:
        return f"{t * 1e3:8.2f} ms"
    return f"{t:8.3f} s "


def row(name, jl, ref_np=None, ref_jax=None):
    r_np = f"{jl / ref_np:6.2f}x" if ref_np else "   -  "
    r_jax = f"{jl / ref_jax:6.2f}x" if ref_jax else "   -  "
    print(f"{name:34s} {fmt(jl):>12s} {fmt(ref_np):>12s} {fmt(ref_jax):>12s}   "
          f"vs numpy {r_np}  vs jax {r_jax}")


def block(x):
    return jax.block_until_ready(x) if jax is not None else x


def fifty_ops(m, x):
    for i in range(10):
        x = m.sin(x) * 1.5 + x
        x = m.tanh(x) - 0.5 * x
    return x


def mlp_loss(m, params, batch):
    inputs, targets = batch
    for w, b in params:
        outputs = m.dot(inputs, w) + b
        inputs = m.maximum(outputs, 0)
    return m.sum((outputs - targets) ** 2)


def chain(m, w, x):
    def f(x):
        for _ in range(10):
            x = x @ w
        return x
    return (f(x) * f(x) + f(x) * f(x)) / f(x)


def main():
    print(f"jaxlite {jaxlite.__version__}, numpy {np.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}")
    print(f"{'case':34s} {'jaxlite':>12s} {'numpy':>12s} {'jax':>12s}")

    a = np.arange(3, dtype=np.float32)
    x, y = jlnp.asarray(a), jlnp.asarray(a + 1)
    jx, jy = (jjnp.asarray(a), jjnp.asarray(a + 1)) if jax else (None, None)
    row("eager x + y  (3,)", timeit(lambda: x + y), timeit(lambda: a + a),
        timeit(lambda: (jx + jy).block_until_ready()) if jax else None)
    row("eager jnp.sin(x)  (3,)", timeit(lambda: jlnp.sin(x)), timeit(lambda: np.sin(a)),
        timeit(lambda: jjnp.sin(jx).block_until_ready()) if jax else None)

    f = jaxlite.jit(lambda x: x * 2 + 1)
    f(x)
    jf = jax.jit(lambda x: x * 2 + 1) if jax else None
    if jax:
        jf(jx)
    row("cached jit call x*2+1  (3,)", timeit(lambda: f(x)), timeit(lambda: a * 2 + 1),
        timeit(lambda: jf(jx).block_until_ready()) if jax else None)

    def compile_time(jit, m, arg, fun):
        ts = []
        for _ in range(5):
            g = jit(lambda v: fun(m, v))
            t0 = time.perf_counter()
            block(g(arg))
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    row("compile+run 50-op fn  (3,)", compile_time(jaxlite.jit, jlnp, x, fifty_ops), None,
        compile_time(jax.jit, jjnp, jx, fifty_ops) if jax else None)

    rng = np.random.default_rng(0)
    sizes = [784, 2048, 2048, 2048, 10]
    params_np = [(rng.standard_normal((m, n), dtype=np.float32) / np.sqrt(m),
                  rng.standard_normal(n, dtype=np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
    batch_np = (rng.standard_normal((128, 784), dtype=np.float32),
                rng.standard_normal((128, 10), dtype=np.float32))
    params = jaxlite.tree_util.tree_map(jlnp.asarray, params_np)
    batch = jaxlite.tree_util.tree_map(jlnp.asarray, batch_np)

    def mlp_first(jit, m, p, b):
        g = jit(lambda p, b: mlp_loss(m, p, b))
        t0 = time.perf_counter()
        block(g(p, b))
        return time.perf_counter() - t0, g

    t_first, g = mlp_first(jaxlite.jit, jlnp, params, batch)
    t_steady = timeit(lambda: g(params, batch), repeat=5)
    np_steady = timeit(lambda: mlp_loss(np, params_np, batch_np), repeat=5)
    if jax:
        jparams = jax.tree_util.tree_map(jjnp.asarray, params_np)
        jbatch = jax.tree_util.tree_map(jjnp.asarray, batch_np)
        jt_first, jg = mlp_first(jax.jit, jjnp, jparams, jbatch)
        jt_steady = timeit(lambda: jg(jparams, jbatch).block_until_ready(), repeat=5)
    else:
        jt_first = jt_steady = None
    row("MLP loss jit first call", t_first, None, jt_first)
    row("MLP loss jit steady", t_steady, np_steady, jt_steady)

    w_np = (rng.standard_normal((256, 256), dtype=np.float32) / 16)
    xc_np = rng.standard_normal((256, 256), dtype=np.float32)
    w, xc = jlnp.asarray(w_np), jlnp.asarray(xc_np)
    cj = jaxlite.jit(lambda x: chain(jlnp, w, x))
    cj(xc)
    if jax:
        jw, jxc = jjnp.asarray(w_np), jjnp.asarray(xc_np)
        jcj = jax.jit(lambda x: chain(jjnp, jw, x))
        jcj(jxc)
    row("matmul chain (f*f+f*f)/f eager", timeit(lambda: chain(jlnp, w, xc), repeat=5),
        timeit(lambda: chain(np, w_np, xc_np), repeat=5),
        timeit(lambda: chain(jjnp, jw, jxc).block_until_ready(), repeat=5) if jax else None)
    row("matmul chain (f*f+f*f)/f jit", timeit(lambda: cj(xc), repeat=5),
        timeit(lambda: chain(np, w_np, xc_np), repeat=5),
        timeit(lambda: jcj(jxc).block_until_ready(), repeat=5) if jax else None)
    text = jaxlite.jit(lambda x: chain(jlnp, w, x)).lower(xc).compile().as_text()
    n = sum(1 for ln in text.splitlines() if "@" in ln or "matmul" in ln or "dot" in ln)
    print(f"matmul chain: generated code holds {n} matmuls (the traced program has 50)")

    tree = ((np.zeros(3), np.ones(2)), {"x": np.zeros(())})
    leaves, td = jaxlite.tree_util.tree_flatten(tree)
    row("tree_flatten ((a, b), {x: c})", timeit(lambda: jaxlite.tree_util.tree_flatten(tree)),
        None, timeit(lambda: jax.tree_util.tree_flatten(tree)) if jax else None)
    row("treedef.unflatten", timeit(lambda: td.unflatten(leaves)), None,
        None)


if __name__ == "__main__":
    main()
