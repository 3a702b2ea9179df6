"""Pallas interpret mode: the Pallas docs' blocked matmuls run by jaxlite's generated grid loop
and by JAX's interpret mode (``interpret=True``, an XLA while loop over the grid), in the same
run, plus NumPy's ``x @ y`` for scale. First the quickstart's matmul with a fused relu (a
(2, 2) grid on 1024 x 1024), then the TPU matmul guide's kernel (an (i, j, k) grid, an f32
VMEM accumulator zeroed at k == 0 and written out with the activation at the last k step) on
several sizes. The headline is the guide's first timing, 1024 x 1024 x 1024 with 128-blocks
(512 grid steps; float32 here, as the guide's first kernel). The fewer and bigger the steps,
the more both sides just wait for the same matmuls (the quickstart's 4 steps); the smaller the
arrays, the cheaper JAX's whole-array loop carry and the closer the two.
Run: ``python benchmarks/bench_pallas.py``. Target (issue 17): jaxlite >= 10x faster than JAX's
interpret mode.
"""
from __future__ import annotations

import functools

import numpy as np

import jaxlite
import jaxlite.numpy as jlnp
from bench_core import fmt
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
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=0,
                in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                          pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
                out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
                scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
                grid=(m // bm, n // bn, k // bk)),
            out_shape=jx.ShapeDtypeStruct((m, n), x.dtype),
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
    fns = [lambda: jaxlite.block_until_ready(f(x, y)), lambda: np.maximum(x @ y, 0)]
    if jax is not None:
        jf = make_quickstart_matmul(jax, j_pl, jax.nn.relu)
        np.testing.assert_allclose(np.asarray(jf(x, y)), ref, rtol=1e-4, atol=1e-3)
        fns.append(lambda: jax.block_until_ready(jf(x, y)))
    t, t_np, *t_j = timed_in_turn(fns, 15)
    t_j = t_j[0] if t_j else None
    _row(f"quickstart matmul+relu {size}x{size} (4 steps)", t, t_np, t_j)
    return t, t_j


def _row(name, t, t_np, t_j):
    ratio = f"jaxlite is {t_j / t:6.1f}x faster than JAX interpret" if t_j else "(no JAX)"
    print(f"{name:40s} {fmt(t):>12s} {fmt(t_np):>12s} {fmt(t_j):>12s}   {ratio}")


def timed_in_turn(fns, rounds):
    """Median seconds per call of each of ``fns``, timed in turn round after round, so
    load changes on a shared machine hit them alike."""
    import time
    times = [[] for _ in fns]
    for _ in range(rounds):
        for ts, fn in zip(times, fns):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [float(np.median(ts)) for ts in times]


def relu(jnp, x):
    return jnp.maximum(x, 0)


def run(size, block, rounds=5):
    rng = np.random.RandomState(0)
    x = rng.randn(size, size).astype(np.float32)
    y = rng.randn(size, size).astype(np.float32)
    steps = (size // block) ** 3
    f = make_matmul(jaxlite, jlnp, jl_pl, jl_pltpu, block, block, block, relu)
    out = np.asarray(f(x, y))
    ref = np.maximum(x @ y, 0)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)
    fns = [lambda: jaxlite.block_until_ready(f(x, y)), lambda: np.maximum(x @ y, 0)]
    if jax is not None:
        jf = make_matmul(jax, jjnp, j_pl, j_pltpu, block, block, block, relu)
        np.testing.assert_allclose(np.asarray(jf(x, y)), ref, rtol=1e-4, atol=1e-3)
        fns.append(lambda: jax.block_until_ready(jf(x, y)))
    t, t_np, *t_j = timed_in_turn(fns, rounds)
    t_j = t_j[0] if t_j else None
    _row(f"guide matmul {size}^3, {block}-blocks ({steps} st)", t, t_np, t_j)
    return t, t_j


def main():
    print(f"{'Pallas blocked matmul + relu':40s} {'jaxlite':>12s} {'numpy @':>12s} "
          f"{'jax interp':>12s}")
    t, t_j = run(1024, 128)    # the TPU matmul guide's first timing: 1024^3, bm=bk=bn=128
    if t_j:
        print(f"the docs' matmul (TPU guide, 1024^3, 128-blocks): jaxlite / JAX interpret-mode "
              f"speed ratio = {t_j / t:.1f}x (target >= 10x)")
    run_quickstart()
    for size, block in ((512, 128), (256, 32)):
        run(size, block, rounds=15)


if __name__ == "__main__":
    main()
