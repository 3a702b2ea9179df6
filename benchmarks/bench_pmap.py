"""pmap speed on 8 simulated CPU devices, jaxlite beside JAX (issue 14's targets).

Rows: ``pmap(jnp.cos)`` over (8, 512, 4096) float32 against ``jit(jnp.cos)`` of the whole
array on one device (target: pmap >= 1.8x faster; JAX ~1.3x); a data-parallel MLP train step
with ``lax.pmean`` over 2 devices (batch 128 split in two) against the same step on one
device (target: no slower than JAX's 2-device step); ``psum`` of a scalar across 8 devices
(target: tens of microseconds). jaxlite runs small calls as one batched program on the
calling thread (``jaxlite_spmd_mode='auto'``); the ``threads`` rows force the device threads. Each side runs in its own subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=8``; both are run twice, alternating.
Run: ``python benchmarks/bench_pmap.py``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

SIZES = [784, 512, 512, 10]


def _timeit(f, repeat=7, number=1):
    f()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t) / number)
    return best


def _side(name):
    """Measure every row with ``name`` ('jaxlite' or 'jax'); returns {row: seconds}."""
    if name == "jax":
        import jax
        import jax.numpy as jnp
        from jax import lax
    else:
        import jaxlite as jax
        import jaxlite.numpy as jnp
        from jaxlite import lax
    out = {}
    rng = np.random.RandomState(0)
    x = jnp.asarray(rng.rand(8, 512, 4096).astype(np.float32))
    f1, f8 = jax.jit(jnp.cos), jax.pmap(jnp.cos)
    out["cos 1 device (jit)"] = _timeit(lambda: f1(x).block_until_ready())
    out["cos 8 devices (pmap)"] = _timeit(lambda: f8(x).block_until_ready())

    params = [(jnp.asarray(rng.randn(m, n).astype(np.float32) / np.sqrt(m)),
               jnp.zeros(n, jnp.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]
    xs = rng.randn(128, SIZES[0]).astype(np.float32)
    ys = rng.randn(128, SIZES[-1]).astype(np.float32)

    def loss(p, x, y):
        h = x
        for w, b in p[:-1]:
            h = jnp.maximum(h @ w + b, 0)
        w, b = p[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    def step(p, x, y):
        g = jax.grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g)

    def pstep(p, x, y):
        g = lax.pmean(jax.grad(loss)(p, x, y), "d")
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g)

    s1 = jax.jit(step)
    s2 = jax.pmap(pstep, axis_name="d", in_axes=(None, 0, 0), out_axes=None,
                  devices=jax.devices()[:2])
    xs2, ys2 = xs.reshape(2, 64, -1), ys.reshape(2, 64, -1)
    out["MLP step 1 device (jit)"] = _timeit(
        lambda: jax.block_until_ready(s1(params, xs, ys)), repeat=20)
    out["MLP step 2 devices (pmap+pmean)"] = _timeit(
        lambda: jax.block_until_ready(s2(params, xs2, ys2)), repeat=20)

    ps = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    ident = jax.pmap(lambda v: v)
    one = jnp.ones(8)
    out["psum scalar, 8 devices"] = _timeit(lambda: ps(one).block_until_ready(), repeat=5,
                                            number=200)
    out["pmap identity, 8 devices"] = _timeit(lambda: ident(one).block_until_ready(),
                                              repeat=5, number=200)
    if name == "jaxlite":   # the same rows forced onto the device threads (no batched form)
        jax.config.update("jaxlite_spmd_mode", "threads")
        out["MLP step 2 devices, threads"] = _timeit(
            lambda: jax.block_until_ready(s2(params, xs2, ys2)), repeat=20)
        out["psum scalar, 8 devices, threads"] = _timeit(
            lambda: ps(one).block_until_ready(), repeat=5, number=50)
        jax.config.update("jaxlite_spmd_mode", "auto")
    return out


def _run(name):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    env.pop("JAXLITE_NUM_CPU_DEVICES", None)
    p = subprocess.run([sys.executable, __file__, "--side", name], capture_output=True,
                       text=True, env=env, timeout=900)
    if p.returncode:
        if name == "jax" and "No module named 'jax'" in p.stderr:
            return None
        raise RuntimeError(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fmt(t):
    return "-" if t is None else (f"{t * 1e3:9.2f} ms" if t >= 1e-3 else f"{t * 1e6:9.1f} us")


def main():
    runs = {"jaxlite": [], "jax": []}
    for _ in range(2):
        for name in runs:
            r = _run(name)
            if r is not None:
                runs[name].append(r)
    best = {k: ({row: min(r[row] for r in v) for row in v[0]} if v else None)
            for k, v in runs.items()}
    lite, jx = best["jaxlite"], best["jax"]
    print(f"{'benchmark (8 simulated devices)':34s} {'jaxlite':>12s} {'jax':>12s} "
          f"{'jaxlite/jax':>12s}")
    for row in lite:
        j = jx.get(row) if jx else None
        ratio = f"{lite[row] / j:11.2f}x" if j else ""
        print(f"{row:34s} {_fmt(lite[row]):>12s} {_fmt(j):>12s} {ratio:>12s}")
    for side, r in (("jaxlite", lite), ("jax", jx)):
        if r:
            print(f"{side}: pmap cos speedup over 1 device "
                  f"{r['cos 1 device (jit)'] / r['cos 8 devices (pmap)']:.2f}x (target >= 1.8);"
                  f" 2-device step / 1-device step "
                  f"{r['MLP step 2 devices (pmap+pmean)'] / r['MLP step 1 device (jit)']:.2f}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--side":
        print(json.dumps(_side(sys.argv[2])))
    else:
        main()
