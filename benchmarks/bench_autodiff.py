"""Autodiff speed: the seed MLP ([784, 2048, 2048, 2048, 10], batch 128, ReLU, sum of squares).

Eager grad, jit(grad) first call and steady state, and 30 SGD steps, next to hand-written
NumPy backprop and (when installed) JAX. Run: ``python benchmarks/bench_autodiff.py``.
Target (issue 3): jit(grad) steady state no slower than JAX's; first call <= 15 ms above it.
"""
from __future__ import annotations

import time

import numpy as np

import jaxlite
import jaxlite.numpy as jlnp
from bench_core import fmt, row, timeit

try:
    import jax
    import jax.numpy as jjnp
except ImportError:  # JAX is optional
    jax = None

SIZES = [784, 2048, 2048, 2048, 10]
BATCH = 128


def make(rng):
    params = [(rng.randn(m, n).astype(np.float32) * np.float32(np.sqrt(2 / m)),
               np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]
    x = rng.randn(BATCH, SIZES[0]).astype(np.float32)
    y = rng.randn(BATCH, SIZES[-1]).astype(np.float32)
    return params, x, y


def loss_for(np_mod):
    def loss(params, x, y):
        for W, b in params[:-1]:
            x = np_mod.maximum(x @ W + b, 0)
        W, b = params[-1]
        return np_mod.sum((x @ W + b - y) ** 2)
    return loss


def numpy_grad(params, x, y):
    acts, pre = [x], []
    for W, b in params[:-1]:
        z = acts[-1] @ W + b
        pre.append(z)
        acts.append(np.maximum(z, 0))
    W, b = params[-1]
    out = acts[-1] @ W + b
    d = 2 * (out - y)
    grads = [(acts[-1].T @ d, d.sum(0))]
    d = d @ W.T
    for i in range(len(params) - 2, -1, -1):
        d = d * (pre[i] > 0)
        grads.append((acts[i].T @ d, d.sum(0)))
        if i:
            d = d @ params[i][0].T
    return grads[::-1]


def sgd(grad_fn, params, x, y, steps=30, lr=1e-6):
    for _ in range(steps):
        g = grad_fn(params, x, y)
        params = [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, g)]
    return params


def first_call(make_fn, *args):
    fn = make_fn()
    t0 = time.perf_counter()
    out = fn(*args)
    jaxlite.block_until_ready(out)
    return time.perf_counter() - t0, fn


def main():
    rng = np.random.RandomState(0)
    params, x, y = make(rng)
    print(f"{'benchmark':34s} {'jaxlite':>12s} {'numpy':>12s} {'jax':>12s}")
    lloss = loss_for(jlnp)
    t_np = timeit(lambda: numpy_grad(params, x, y), repeat=5)
    t_eager = timeit(lambda: jaxlite.block_until_ready(jaxlite.grad(lloss)(params, x, y)),
                     repeat=3)
    t_first, g_jl = first_call(lambda: jaxlite.jit(jaxlite.grad(lloss)), params, x, y)
    t_steady = timeit(lambda: jaxlite.block_until_ready(g_jl(params, x, y)), repeat=5)
    j_eager = j_first = j_steady = j_sgd = None
    if jax is not None:
        jloss = loss_for(jjnp)
        jp = jax.tree_util.tree_map(jjnp.asarray, params)
        jx, jy = jjnp.asarray(x), jjnp.asarray(y)
        j_eager = timeit(lambda: jax.block_until_ready(jax.grad(jloss)(jp, jx, jy)), repeat=3)
        j_first, g_j = first_call(lambda: jax.jit(jax.grad(jloss)), jp, jx, jy)
        j_steady = timeit(lambda: jax.block_until_ready(g_j(jp, jx, jy)), repeat=5)
        j_sgd = timeit(lambda: jax.block_until_ready(sgd(g_j, jp, jx, jy)), repeat=1)
    row("eager grad", t_eager, t_np, j_eager)
    row("jit(grad) first call", t_first, t_np, j_first)
    row("jit(grad) steady", t_steady, t_np, j_steady)
    t_sgd = timeit(lambda: jaxlite.block_until_ready(sgd(g_jl, params, x, y)), repeat=1)
    n_sgd = timeit(lambda: sgd(numpy_grad, params, x, y), repeat=1)
    row("30 SGD steps (jit grad)", t_sgd, n_sgd, j_sgd)
    print(f"first call - steady: jaxlite {fmt(t_first - t_steady)}"
          + (f", jax {fmt(j_first - j_steady)}" if jax is not None else ""))


if __name__ == "__main__":
    main()
