"""Float64 elementwise math: jaxlite (eager and jitted) vs NumPy vs real JAX (if installed),
same run, several sizes. Milliseconds per call (best of several).

    PYTHONPATH=<tree> python benchmarks/bench_f64_libm.py [--sizes 10,1000,1000000] [--fns log,tan]

jaxlite's float64 ``log``/``sin``/``cos``/``tan``/``atan``/``erf``/``cbrt``/``pow``/``atan2``
give XLA:CPU's bits (the C library's function per element, ``cpu_math.libm64``); NumPy's
functions are its own (SIMD) ones, so NumPy is the speed floor, JAX the target.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

FNS = {
    "log": (np.log, 1), "log1p": (np.log1p, 1), "exp": (np.exp, 1), "exp2": (np.exp2, 1),
    "sin": (np.sin, 1), "cos": (np.cos, 1), "tan": (np.tan, 1), "arctan": (np.arctan, 1),
    "cbrt": (np.cbrt, 1), "tanh": (np.tanh, 1), "power": (np.power, 2),
    "arctan2": (np.arctan2, 2),
}


def _best(f, reps):
    f()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _operands(name, n, rng):
    x = rng.uniform(0.01, 10.0, n)
    if name in ("sin", "cos", "tan", "arctan", "tanh", "exp", "exp2"):
        x = rng.uniform(-10.0, 10.0, n)
    if name == "log1p":
        x = rng.uniform(-0.5, 10.0, n)
    return (x, rng.uniform(-3.0, 3.0, n)) if FNS[name][1] == 2 else (x,)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,1000,1000000")
    ap.add_argument("--fns", default=",".join(FNS))
    ap.add_argument("--reps", type=int, default=0, help="timed calls (default by size)")
    args = ap.parse_args()
    import jaxlite
    jaxlite.config.update("jax_enable_x64", True)
    import jaxlite.numpy as ljnp
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jjnp
    except ImportError:
        jax = None
    rng = np.random.default_rng(0)
    sizes = [int(s) for s in args.sizes.split(",")]
    cols = ["numpy", "jaxlite", "jaxlite.jit"] + (["jax.jit"] if jax else [])
    print(f"{'fn':8s} {'n':>8s} " + " ".join(f"{c:>12s}" for c in cols) + "   (ms)")
    for name in args.fns.split(","):
        np_fn = FNS[name][0]
        for n in sizes:
            reps = args.reps or (200 if n <= 1000 else 20)
            ops = _operands(name, n, rng)
            lops = [ljnp.asarray(a) for a in ops]
            lf = getattr(ljnp, name)
            lj = jaxlite.jit(lf)
            row = [_best(lambda f=np_fn, a=ops: f(*a), reps),
                   _best(lambda f=lf, a=lops: np.asarray(f(*a)), reps),
                   _best(lambda f=lj, a=lops: np.asarray(f(*a)), reps)]
            if jax:
                jops = [jax.device_put(a) for a in ops]
                jf = jax.jit(getattr(jjnp, name))
                row.append(_best(lambda f=jf, a=jops: f(*a).block_until_ready(), reps))
            print(f"{name:8s} {n:8d} " + " ".join(f"{v:12.4f}" for v in row), flush=True)


if __name__ == "__main__":
    main()
