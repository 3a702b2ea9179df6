"""Parallel speed and memory on 8 simulated CPU devices: jaxlite beside JAX.

    python benchmarks/bench_parallel.py [--repeat N] [--no-jax]

Each measurement runs in a fresh subprocess with ``XLA_FLAGS=--xla_force_host_platform_
device_count=8`` (one for jaxlite, one for JAX when installed), one after the other so the
two never compete for the cores:

- ``jnp.cos`` of a (4096, 4096) float32 array committed to one device, and sharded over a
  (4, 2) mesh (``P('x', 'y')``: 8 blocks of 1024 x 2048), eagerly and under ``jit``; the
  speedup is (1 device) / (sharded). Target (issue 13, on a 2-core machine): sharded >= 1.8x
  faster than one device (JAX gets 1.1-1.3x here).
- seed 000's MLP (scaled to fit: layers 784-1024-1024-1024-10, batch 1024) ``jit(grad(loss))``
  on one device, 8-way data parallel and 4x2 data + model parallel (target: data parallel
  >= 1.8x over one device), its compilation (target: <= 0.1x JAX's), and seed 003's
  ``matmul_basic`` shard_map against ``jnp.dot`` on one device.
- ``device_put`` of a 256 MB float32 NumPy array replicated over the 8 devices: time and the
  growth of resident memory (VmRSS; peak from VmHWM). Target: no growth beyond one copy
  (replicas share one read-only buffer).

The benchmark prints ratios; no unit test depends on timings. It also prints how many cores
each variant kept busy (CPU time / wall time): on a machine shared with other work the sharded
run cannot use both cores, and its speedup says more about the load than about jaxlite.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
N_DEV = 8
SHAPE = (4096, 4096)
PUT_MB = 256


# -- the worker (runs in a subprocess with 8 devices) ----------------------------------------

def _import(backend):
    if backend == "jax":
        import jax
        import jax.numpy as jnp
    else:
        sys.path.insert(0, str(ROOT))
        import jaxlite as jax
        import jaxlite.numpy as jnp
    return jax, jnp


STAT = statistics.median


def _median_time(fn, repeat):
    fn()   # warm up (compilation, first-touch of output pages)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return STAT(times)


def _rss_mb():
    """(current, peak) resident set size of this process in MB."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def worker_cos(backend, repeat):
    """Times of jnp.cos on 1 device and sharded, eager and jit. The variants are timed in
    turn, round after round, so that a change in the machine's load affects them alike."""
    import numpy as np
    jax, jnp = _import(backend)
    from_sharding = jax.sharding
    devs = jax.devices()
    assert len(devs) == N_DEV, devs
    v = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    x1 = jax.device_put(v, devs[0])
    x8 = jax.device_put(v, from_sharding.NamedSharding(mesh, from_sharding.PartitionSpec("x", "y")))
    cos_jit = jax.jit(jnp.cos)
    variants = {}
    for label, x in (("1", x1), ("8", x8)):
        r = jnp.cos(x)
        assert len(r.sharding.device_set) == (1 if label == "1" else N_DEV), r.sharding
        np.testing.assert_allclose(np.asarray(r), np.cos(v), rtol=1e-6, atol=1e-6)
        r = cos_jit(x)
        assert r.sharding.device_set == x.sharding.device_set, r.sharding
        variants[f"eager{label}"] = (lambda x=x: jnp.cos(x).block_until_ready())
        variants[f"jit{label}"] = (lambda x=x: cos_jit(x).block_until_ready())
    variants["numpy"] = lambda: np.cos(v)
    # the ceiling this machine allows right now: NumPy on the same 8 blocks from 8 threads
    # (what jaxlite's device threads do, without jaxlite)
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(N_DEV)
    blocks = [np.ascontiguousarray(v[i * 1024:(i + 1) * 1024, j * 2048:(j + 1) * 2048])
              for i in range(4) for j in range(2)]
    variants["numpy8"] = lambda: list(pool.map(np.cos, blocks))
    times = {k: [] for k in variants}
    cpu = {k: 0.0 for k in variants}
    for fn in variants.values():
        fn()   # warm up (compilation, first touch of output pages)
    for _ in range(repeat):
        for k, fn in variants.items():
            c0 = os.times()
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
            c1 = os.times()
            cpu[k] += c1.user + c1.system - c0.user - c0.system
    out = {k: STAT(t) for k, t in times.items()}
    # cores this process kept busy while a variant ran (CPU time / wall time, all runs)
    out.update({f"cores_{k}": cpu[k] / sum(times[k]) for k in variants})
    return out


def worker_put(backend, repeat):
    import gc
    import numpy as np
    jax, jnp = _import(backend)
    devs = jax.devices()
    assert len(devs) == N_DEV, devs
    mesh = jax.make_mesh((N_DEV,), ("i",))
    rep = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    jnp.zeros(8).block_until_ready()          # start the backend before measuring
    n = PUT_MB * 2 ** 20 // 4
    v = np.arange(n, dtype=np.float32)        # pages touched: part of the baseline
    gc.collect()
    rss0, _ = _rss_mb()
    t0 = time.perf_counter()
    y = jax.device_put(v, rep)
    y.block_until_ready()
    t = time.perf_counter() - t0
    rss1, peak = _rss_mb()
    shards = y.addressable_shards
    assert len(shards) == N_DEV and y.is_fully_replicated
    assert float(shards[-1].data[n - 1]) == float(v[n - 1])
    del y, shards
    gc.collect()
    times = []
    for _ in range(repeat):                   # time alone (memory of the first put above)
        t0 = time.perf_counter()
        y = jax.device_put(v, rep)
        y.block_until_ready()
        times.append(time.perf_counter() - t0)
        del y
        gc.collect()
    return {"first": t, "time": STAT(times), "rss_growth": rss1 - rss0,
            "peak_growth": peak - rss0, "mb": PUT_MB}


MLP_SIZES = [784, 1024, 1024, 1024, 10]     # seed 000's MLP ([784, 8192 x3, 10], batch 8192)
MLP_BATCH = 1024                             # scaled to fit a 2-core machine


def worker_mlp(backend, repeat):
    """Seed 000's ``jit(grad(loss))`` on one device, 8-way data parallel and 4x2 data +
    model parallel (the seed's shardings as NamedShardings); its first call (trace,
    partition, compile, run) on the 8-way inputs; and seed 003's ``matmul_basic`` shard_map
    against ``jnp.dot`` on one device."""
    import numpy as np
    jax, jnp = _import(backend)
    from functools import partial
    P, NS = jax.sharding.PartitionSpec, jax.sharding.NamedSharding

    def predict(params, inputs):
        for W, b in params:
            outputs = jnp.dot(inputs, W) + b
            inputs = jnp.maximum(outputs, 0)
        return outputs

    def loss(params, batch):
        inputs, targets = batch
        return jnp.mean(jnp.sum((predict(params, inputs) - targets) ** 2, axis=-1))

    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((m, n), np.float32) / np.float32(np.sqrt(m)),
               rng.standard_normal(n, np.float32))
              for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]
    batch = (rng.standard_normal((MLP_BATCH, MLP_SIZES[0]), np.float32),
             rng.standard_normal((MLP_BATCH, MLP_SIZES[-1]), np.float32))
    devs = jax.devices()
    # automatic (not Explicit) mesh axes, as the seeds' PositionalShardings are
    mesh8 = jax.sharding.Mesh(np.array(devs), ("x",))
    mesh42 = jax.sharding.Mesh(np.array(devs).reshape(4, 2), ("x", "y"))
    put = jax.device_put
    one = (put(params, devs[0]), put(batch, devs[0]))
    dp = (put(params, NS(mesh8, P())), put(batch, NS(mesh8, P("x"))))
    (W1, b1), (W2, b2), (W3, b3), (W4, b4) = params
    rep = NS(mesh42, P())
    mp = ([(put(W1, rep), put(b1, rep)),
           (put(W2, NS(mesh42, P(None, "y"))), put(b2, NS(mesh42, P("y")))),
           (put(W3, NS(mesh42, P("y", None))), put(b3, rep)),
           (put(W4, rep), put(b4, rep))],
          put(batch, NS(mesh42, P("x", None))))
    t0 = time.perf_counter()
    jax.jit(jax.grad(loss)).lower(*dp).compile()
    first = time.perf_counter() - t0
    gradfun = jax.jit(jax.grad(loss))
    want = jax.grad(loss)(params, batch)
    for args in (one, dp, mp):
        got = gradfun(*args)
        np.testing.assert_allclose(np.asarray(got[0][0]), np.asarray(want[0][0]),
                                   rtol=2e-3, atol=2e-3)

    @partial(jax.shard_map, mesh=mesh42, in_specs=(P("x", "y"), P("y", None)),
             out_specs=P("x", None))
    def matmul_basic(a_block, b_block):
        return jax.lax.psum(jnp.dot(a_block, b_block), "y")
    a = rng.standard_normal((4096, 2048), np.float32)
    b = rng.standard_normal((2048, 1024), np.float32)
    a8, b8 = put(a, NS(mesh42, P("x", "y"))), put(b, NS(mesh42, P("y", None)))
    a1, b1d = put(a, devs[0]), put(b, devs[0])
    mm, dot = jax.jit(matmul_basic), jax.jit(jnp.dot)
    np.testing.assert_allclose(np.asarray(mm(a8, b8)), a @ b, rtol=1e-3, atol=1e-2)
    variants = {
        "grad1": lambda: jax.block_until_ready(gradfun(*one)),
        "grad_dp": lambda: jax.block_until_ready(gradfun(*dp)),
        "grad_mp": lambda: jax.block_until_ready(gradfun(*mp)),
        "dot1": lambda: dot(a1, b1d).block_until_ready(),
        "matmul_basic": lambda: mm(a8, b8).block_until_ready(),
    }
    times = {k: [] for k in variants}
    for fn in variants.values():
        fn()
    for _ in range(repeat):
        for k, fn in variants.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    out = {k: STAT(t) for k, t in times.items()}
    out["first"] = first
    return out


def worker(argv):
    global STAT
    backend, task, repeat = argv[0], argv[1], int(argv[2])
    if os.environ.get("BENCH_PARALLEL_STAT") == "min":
        STAT = min
    fn = {"cos": worker_cos, "put": worker_put, "mlp": worker_mlp}[task]
    print(json.dumps(fn(backend, repeat)))


# -- the driver ------------------------------------------------------------------------------

def run(backend, task, repeat):
    env = dict(os.environ)
    env.pop("JAXLITE_NUM_CPU_DEVICES", None)
    env.update(XLA_FLAGS=f"--xla_force_host_platform_device_count={N_DEV}",
               JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
    p = subprocess.run([sys.executable, __file__, "--worker", backend, task, str(repeat)],
                       capture_output=True, text=True, env=env, cwd=str(ROOT))
    if p.returncode != 0:
        raise SystemExit(f"{backend} {task} failed:\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def have_jax():
    try:
        import importlib.util
        return importlib.util.find_spec("jax") is not None
    except (ImportError, ValueError):
        return False


def ms(t):
    return f"{t * 1e3:9.1f} ms"


def main():
    ap = argparse.ArgumentParser(description="jaxlite vs JAX on 8 simulated CPU devices")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--best", action="store_true",
                    help="report the fastest run instead of the median (on a busy machine)")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    if args.best:
        os.environ["BENCH_PARALLEL_STAT"] = "min"
    sides = ["jaxlite"] + (["jax"] if have_jax() and not args.no_jax else [])
    cos = {s: run(s, "cos", args.repeat) for s in sides}
    put = {s: run(s, "put", max(3, args.repeat // 2)) for s in sides}
    mlp = {s: run(s, "mlp", max(3, args.repeat // 2)) for s in sides}

    cores = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"bench_parallel: {N_DEV} simulated CPU devices on {cores} cores (load {load:.1f}, "
          f"{'best' if args.best else 'median'} of {args.repeat}); "
          f"jnp.cos of a {SHAPE[0]}x{SHAPE[1]} float32 array (NumPy np.cos: "
          f"{ms(cos['jaxlite']['numpy']).strip()})")
    head = "".join(f"{s:>14s}" for s in sides)
    print(f"{'':40s}{head}")
    for mode in ("eager", "jit"):
        print(f"{'cos ' + mode + ', 1 device':40s}" +
              "".join(f"{ms(cos[s][mode + '1']):>14s}" for s in sides))
        print(f"{'cos ' + mode + ', sharded (4, 2)':40s}" +
              "".join(f"{ms(cos[s][mode + '8']):>14s}" for s in sides))
        print(f"{'  speedup sharded vs 1 device':40s}" +
              "".join(f"{cos[s][mode + '1'] / cos[s][mode + '8']:13.2f}x" for s in sides) +
              "   (target >= 1.8x)")
        print(f"{'  cores busy: 1 device / sharded':40s}" +
              "".join(f"{cos[s]['cores_' + mode + '1']:7.2f} /{cos[s]['cores_' + mode + '8']:5.2f}"
                      for s in sides) + "   (CPU time / wall time)")
    c = cos["jaxlite"]
    print(f"{'  NumPy from 8 threads vs NumPy':40s}{c['numpy'] / c['numpy8']:13.2f}x   (the "
          f"machine's ceiling now; cores busy {c['cores_numpy8']:.2f}; jaxlite jit reaches "
          f"{c['numpy8'] / c['jit8']:.0%} of it)")
    print(f"{'  jaxlite sharded vs jax sharded':40s}" +
          (f"{cos['jax']['eager8'] / cos['jaxlite']['eager8']:13.2f}x faster (eager), "
           f"{cos['jax']['jit8'] / cos['jaxlite']['jit8']:.2f}x (jit)" if "jax" in cos
           else "             -"))
    print(f"seed 000's MLP {MLP_SIZES}, batch {MLP_BATCH}: jit(grad(loss))")
    for k, label in (("grad1", "1 device"), ("grad_dp", "8-way data parallel"),
                     ("grad_mp", "4x2 data + model parallel")):
        print(f"{'  ' + label:40s}" + "".join(f"{ms(mlp[s][k]):>14s}" for s in sides))
    for k, label in (("grad_dp", "data parallel"), ("grad_mp", "4x2")):
        print(f"{'  speedup ' + label + ' vs 1 device':40s}" +
              "".join(f"{mlp[s]['grad1'] / mlp[s][k]:13.2f}x" for s in sides) +
              ("   (target >= 1.8x)" if k == "grad_dp" else ""))
    print(f"{'  compile, 8-way (trace+partition+compile)':40s}" +
          "".join(f"{ms(mlp[s]['first']):>14s}" for s in sides) +
          (f"   jaxlite/jax {mlp['jaxlite']['first'] / mlp['jax']['first']:.2f}x "
           "(target <= 0.1x)" if "jax" in mlp else ""))
    print("seed 003's matmul_basic shard_map, (4096, 2048) @ (2048, 1024) over a (4, 2) mesh")
    print(f"{'  jnp.dot, 1 device':40s}" + "".join(f"{ms(mlp[s]['dot1']):>14s}" for s in sides))
    print(f"{'  matmul_basic (shard_map + psum)':40s}" +
          "".join(f"{ms(mlp[s]['matmul_basic']):>14s}" for s in sides))
    print(f"{'  speedup':40s}" +
          "".join(f"{mlp[s]['dot1'] / mlp[s]['matmul_basic']:13.2f}x" for s in sides))
    print(f"device_put of a {PUT_MB} MB NumPy array replicated over {N_DEV} devices")
    print(f"{'  time (first call)':40s}" + "".join(f"{ms(put[s]['first']):>14s}" for s in sides))
    print(f"{'  time (later calls)':40s}" + "".join(f"{ms(put[s]['time']):>14s}" for s in sides))
    print(f"{'  resident memory growth':40s}" +
          "".join(f"{put[s]['rss_growth']:11.0f} MB" for s in sides))
    print(f"{'  peak memory growth':40s}" +
          "".join(f"{put[s]['peak_growth']:11.0f} MB" for s in sides))
    print(f"{'  copies of the array':40s}" +
          "".join(f"{put[s]['rss_growth'] / PUT_MB:13.2f} " for s in sides) +
          "  (target: <= 1 copy)")


if __name__ == "__main__":
    main()
