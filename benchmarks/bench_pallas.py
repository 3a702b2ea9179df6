"""Pallas interpret mode: the Pallas docs' blocked matmuls run by jaxlite's generated grid loop
and by JAX's interpret mode (``interpret=True``, an XLA while loop over the grid), in the same
run, plus NumPy's ``x @ y`` for scale. First the quickstart's matmul with a fused relu (a
(2, 2) grid on 1024 x 1024), then the TPU matmul guide's kernel (an (i, j, k) grid, an f32
VMEM accumulator zeroed at k == 0 and written out with the activation at the last k step) on
several sizes: the more grid steps per call, the more jaxlite's per-step cost shows.
Run: ``python benchmarks/bench_pallas.py``. Target (issue 17): jaxlite >= 10x faster than JAX's
interpret mode.
"""
from __future__ import annotations

import functools

import numpy as np

import jaxlite
import jaxlite.numpy as jlnp
from bench_core import fmt, timeit
from jaxlite.experimental import pallas as jl_pl
from jaxlite.experimental.pallas import tpu as jl_pltpu

try:
    import jax
    import jax.numpy as jjnp
    from jax.experimental import pallas as j_pl
    from jax.experimental.pallas import tpu as j_pltpu
except ImportError:  # JAX is optional
    jax = None


def make_matmul(jx, jnp, pl, pltpu, bm, bk, bn, activation):
    """The docs' kernel, written once against (jax, jnp, pl, pltpu)."""
    def matmul_kernel(x_ref, y_ref, z_ref, acc_ref, *, nsteps):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)

        acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == nsteps - 1)
        def _():
            z_ref[...] = activation(jnp, acc_ref[...]).astype(z_ref.dtype)

    @jx.jit
    def matmul(x, y):
        m, k = x.shape
        _, n = y.shape
        return pl.pallas_call(
            functools.partial(matmul_kernel, nsteps=k // bk),
            out_shape=jx.ShapeDtypeStruct((m, n), x.dtype),
            grid=(m // bm, n // bn, k // bk),
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                      pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
            compiler_params=pltpu.CompilerParams(
                dimension_semantics=("parallel", "parallel", "arbitrary")),
            interpret=True,
        )(x, y)
    return matmul


def make_quickstart_matmul(jx, pl, activation):
    """The Pallas quickstart's matmul with a fused activation: a (2, 2) grid of
    (512, 1024) x (1024, 512) blocks (BlockSpecs in the quickstart's argument order)."""
    def matmul_kernel(x_ref, y_ref, z_ref, *, activation):
        z_ref[...] = activation(x_ref[...] @ y_ref[...])

    @jx.jit
    def matmul(x, y):
        return pl.pallas_call(
            functools.partial(matmul_kernel, activation=activation),
            out_shape=jx.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
            grid=(2, 2),
            in_specs=[pl.BlockSpec((x.shape[0] // 2, x.shape[1]), lambda i, j: (i, 0)),
                      pl.BlockSpec((y.shape[0], y.shape[1] // 2), lambda i, j: (0, j))],
            out_specs=pl.BlockSpec((x.shape[0] // 2, y.shape[1] // 2), lambda i, j: (i, j)),
            interpret=True,
        )(x, y)
    return matmul


def run_quickstart(size=1024):
    rng = np.random.RandomState(0)
    x = rng.randn(size, size).astype(np.float32)
    y = rng.randn(size, size).astype(np.float32)
    ref = np.maximum(x @ y, 0)
    f = make_quickstart_matmul(jaxlite, jl_pl, jaxlite.nn.relu)
    np.testing.assert_allclose(np.asarray(f(x, y)), ref, rtol=1e-4, atol=1e-3)
    t = timeit(lambda: jaxlite.block_until_ready(f(x, y)), repeat=5)
    t_np = timeit(lambda: np.maximum(x @ y, 0), repeat=5)
    t_j = None
    if jax is not None:
        jf = make_quickstart_matmul(jax, j_pl, jax.nn.relu)
        np.testing.assert_allclose(np.asarray(jf(x, y)), ref, rtol=1e-4, atol=1e-3)
        t_j = timeit(lambda: jax.block_until_ready(jf(x, y)), repeat=3)
    _row(f"quickstart matmul+relu {size}x{size} (4 steps)", t, t_np, t_j)
    return t, t_j


def _row(name, t, t_np, t_j):
    ratio = f"jaxlite is {t_j / t:6.1f}x faster than JAX interpret" if t_j else "(no JAX)"
    print(f"{name:40s} {fmt(t):>12s} {fmt(t_np):>12s} {fmt(t_j):>12s}   {ratio}")


def relu(jnp, x):
    return jnp.maximum(x, 0)


def run(size, block):
    rng = np.random.RandomState(0)
    x = rng.randn(size, size).astype(np.float32)
    y = rng.randn(size, size).astype(np.float32)
    steps = (size // block) ** 3
    f = make_matmul(jaxlite, jlnp, jl_pl, jl_pltpu, block, block, block, relu)
    out = np.asarray(f(x, y))
    ref = np.maximum(x @ y, 0)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)
    t = timeit(lambda: jaxlite.block_until_ready(f(x, y)), repeat=5)
    t_np = timeit(lambda: np.maximum(x @ y, 0), repeat=5)
    t_j = None
    if jax is not None:
        jf = make_matmul(jax, jjnp, j_pl, j_pltpu, block, block, block, relu)
        np.testing.assert_allclose(np.asarray(jf(x, y)), ref, rtol=1e-4, atol=1e-3)
        t_j = timeit(lambda: jax.block_until_ready(jf(x, y)), repeat=3)
    _row(f"acc matmul {size}x{size}, {block}-blocks ({steps} st)", t, t_np, t_j)
    return t, t_j


def main():
    print(f"{'Pallas blocked matmul + relu':40s} {'jaxlite':>12s} {'numpy @':>12s} "
          f"{'jax interp':>12s}")
    run_quickstart()
    for size, block in ((512, 128), (1024, 128), (256, 32)):
        run(size, block)


if __name__ == "__main__":
    main()
