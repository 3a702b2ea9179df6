"""vmap and control-flow speed: per-example MLP gradients, vmap(jnp.vdot) on 10M x 3, and a
10,000-step lax.scan under jit, next to NumPy and (when installed) JAX.
Run: ``python benchmarks/bench_vmap.py``. Target (issue 4): per-example grads <= 100 ms.
"""
from __future__ import annotations

import numpy as np

import jaxlite
import jaxlite.numpy as jlnp
from bench_autodiff import loss_for
from bench_core import fmt, row, timeit

try:
    import jax
    import jax.numpy as jjnp
except ImportError:  # JAX is optional
    jax = None

SIZES = [784, 512, 512, 10]


def numpy_per_example(params, xs, ys):
    """Hand-batched per-example gradients (batch dim kept through backprop)."""
    acts, pre = [xs], []
    for W, b in params[:-1]:
        z = acts[-1] @ W + b
        pre.append(z)
        acts.append(np.maximum(z, 0))
    W, b = params[-1]
    d = 2 * (acts[-1] @ W + b - ys)
    grads = [(np.einsum("bi,bj->bij", acts[-1], d), d)]
    d = d @ W.T
    for i in range(len(params) - 2, -1, -1):
        d = d * (pre[i] > 0)
        grads.append((np.einsum("bi,bj->bij", acts[i], d), d))
        if i:
            d = d @ params[i][0].T
    return grads[::-1]


def main():
    rng = np.random.RandomState(0)
    params = [(rng.randn(m, n).astype(np.float32) / np.float32(np.sqrt(m)),
               np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]
    xs = rng.randn(128, SIZES[0]).astype(np.float32)
    ys = rng.randn(128, SIZES[-1]).astype(np.float32)
    print(f"{'benchmark':34s} {'jaxlite':>12s} {'numpy':>12s} {'jax':>12s}")
    f = jaxlite.jit(jaxlite.vmap(jaxlite.grad(loss_for(jlnp)), in_axes=(None, 0, 0)))
    jaxlite.block_until_ready(f(params, xs, ys))
    t = timeit(lambda: jaxlite.block_until_ready(f(params, xs, ys)), repeat=5)
    t_np = timeit(lambda: numpy_per_example(params, xs, ys), repeat=5)
    t_j = None
    if jax is not None:
        jf = jax.jit(jax.vmap(jax.grad(loss_for(jjnp)), in_axes=(None, 0, 0)))
        jax.block_until_ready(jf(params, xs, ys))
        t_j = timeit(lambda: jax.block_until_ready(jf(params, xs, ys)), repeat=5)
    row("per-example grads MLP (128)", t, t_np, t_j)

    a = rng.randn(10_000_000, 3).astype(np.float32)
    b = rng.randn(10_000_000, 3).astype(np.float32)
    v = jaxlite.jit(jaxlite.vmap(jlnp.vdot))
    jaxlite.block_until_ready(v(a, b))
    t = timeit(lambda: jaxlite.block_until_ready(v(a, b)), repeat=3)
    t_np = timeit(lambda: np.einsum("ij,ij->i", a, b), repeat=3)
    t_j = None
    if jax is not None:
        jv = jax.jit(jax.vmap(jjnp.vdot))
        ja, jb = jjnp.asarray(a), jjnp.asarray(b)
        jax.block_until_ready(jv(ja, jb))
        t_j = timeit(lambda: jax.block_until_ready(jv(ja, jb)), repeat=3)
    row("vmap(vdot) 10M x 3", t, t_np, t_j)

    n = 10_000

    def step(c, x):
        return c * 0.999 + x, c

    s = jaxlite.jit(lambda xs: jaxlite.lax.scan(step, 0.0, xs))
    xsn = rng.randn(n).astype(np.float32)
    jaxlite.block_until_ready(s(xsn))
    t = timeit(lambda: jaxlite.block_until_ready(s(xsn)), repeat=3)

    def np_loop(xs):
        c = np.float32(0)
        out = np.empty_like(xs)
        for i, x in enumerate(xs):
            out[i] = c
            c = c * np.float32(0.999) + x
        return c, out
    t_np = timeit(lambda: np_loop(xsn), repeat=3)
    t_j = None
    if jax is not None:
        js = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs))
        jax.block_until_ready(js(xsn))
        t_j = timeit(lambda: jax.block_until_ready(js(xsn)), repeat=3)
    row("scan 10k steps (jit)", t, t_np, t_j)
    print(f"scan per-step overhead: jaxlite {fmt(t / n)}"
          + (f", jax {fmt(t_j / n)}" if t_j else ""))


if __name__ == "__main__":
    main()
