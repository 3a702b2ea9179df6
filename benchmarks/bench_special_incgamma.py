"""Eager timing of jax.scipy.special.gammainc/gammaincc/betainc (the lax igamma/igammac/
betainc kernels, JAX's algorithms) on 1000 and 1M elements, float32 and float64, with the
ratio to SciPy's gammainc/gammaincc/betainc and, if installed, to real JAX in the same run.

Run: ``PYTHONPATH=. python benchmarks/bench_special_incgamma.py [--numpy]`` (``--numpy``:
JAXLITE_NUMBA=0, the NumPy loops only). Each case is warmed up first (numba's choice and
its disk-cached loops load on the first calls), then the best of a few calls is shown.
"""
import os
import sys
import time

if "--numpy" in sys.argv:
    os.environ["JAXLITE_NUMBA"] = "0"
os.environ.setdefault("JAX_ENABLE_X64", "1")

import numpy as np
import scipy.special as sp

import jaxlite.numpy as jnp
from jaxlite.scipy import special as S

try:
    import jax
    import jax.scipy.special as jS
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = None


def best(f, args, reps, sync=np.asarray):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        sync(f(*args))
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    rng = np.random.default_rng(0)
    print(f"{'dtype':8} {'n':>8} {'fn':10} {'jaxlite':>10} {'scipy':>10} {'ratio':>6}"
          + (f" {'jax':>10} {'ratio':>6}" if jax else ""))
    for dt in (np.float32, np.float64):
        for n in (1000, 1000000):
            a = rng.uniform(0.1, 10, n).astype(dt)
            x = rng.uniform(0.01, 10, n).astype(dt)
            b = rng.uniform(0.1, 10, n).astype(dt)
            u = rng.uniform(0, 1, n).astype(dt)
            cases = (("gammainc", S.gammainc, sp.gammainc, "gammainc", (a, x)),
                     ("gammaincc", S.gammaincc, sp.gammaincc, "gammaincc", (a, x)),
                     ("betainc", S.betainc, sp.betainc, "betainc", (a, b, u)))
            reps = 20 if n == 1000 else 2
            for name, f, g, jname, args in cases:
                la = [jnp.asarray(v) for v in args]
                for _ in range(4):
                    np.asarray(f(*la))
                t_l = best(f, la, reps)
                t_s = best(g, args, reps)
                line = (f"{dt.__name__:8} {n:>8} {name:10} {t_l * 1e3:9.3f}ms "
                        f"{t_s * 1e3:9.3f}ms {t_l / t_s:6.2f}")
                if jax:
                    ja = [jax.numpy.asarray(v) for v in args]
                    jf = getattr(jS, jname)
                    jf(*ja).block_until_ready()
                    t_j = best(jf, ja, reps, lambda r: r.block_until_ready())
                    line += f" {t_j * 1e3:9.3f}ms {t_l / t_j:6.2f}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
