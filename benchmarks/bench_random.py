"""jax.random speed: jaxlite next to NumPy's Generator and, when installed, JAX.

Run: ``python benchmarks/bench_random.py``. Target (issue 5): ``random.normal(key,
(4096, 4096))`` at most as slow as ``np.random.default_rng().normal``. The samplers built on
XLA:CPU's float32 math (cauchy, gumbel, exponential, pareto, gamma) run numba's compiled
kernels when numba is installed; ``JAXLITE_NUMBA=0 python benchmarks/bench_random.py``
times the pure-NumPy kernels instead.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_core import fmt, row, timeit  # noqa: E402,F401

import jaxlite  # noqa: E402
from jaxlite import random as jlr  # noqa: E402

try:
    import jax
    from jax import random as jr
except ImportError:  # JAX is optional
    jax = None


def main():
    print(f"jaxlite {jaxlite.__version__}, numpy {np.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}, {os.cpu_count()} cpus")
    from jaxlite._src.random import accel
    print(f"float32 math kernels: {'numba' if accel._ON and _has_numba() else 'NumPy'}")
    print(f"{'case':34s} {'jaxlite':>12s} {'numpy':>12s} {'jax':>12s}")
    rng = np.random.default_rng(0)
    k = jlr.key(0)
    kj = jr.key(0) if jax else None
    big = (4096, 4096)

    row("normal (4096,4096) f32",
        timeit(lambda: jlr.normal(k, big).block_until_ready(), repeat=3),
        timeit(lambda: rng.normal(size=big), repeat=3),
        timeit(lambda: jr.normal(kj, big).block_until_ready(), repeat=3) if jax else None)
    row("  numpy f32 standard_normal", timeit(
        lambda: rng.standard_normal(size=big, dtype=np.float32), repeat=3))
    row("uniform (4096,4096) f32",
        timeit(lambda: jlr.uniform(k, big).block_until_ready(), repeat=3),
        timeit(lambda: rng.random(size=big, dtype=np.float32), repeat=3),
        timeit(lambda: jr.uniform(kj, big).block_until_ready(), repeat=3) if jax else None)
    row("bits (4096,4096) u32",
        timeit(lambda: jlr.bits(k, big).block_until_ready(), repeat=3),
        timeit(lambda: rng.integers(0, 2 ** 32, size=big, dtype=np.uint32), repeat=3),
        timeit(lambda: jr.bits(kj, big).block_until_ready(), repeat=3) if jax else None)
    row("split(key) eager",
        timeit(lambda: jlr.split(k)), None,
        timeit(lambda: jr.split(kj).block_until_ready()) if jax else None)
    row("normal(key, (10,)) eager",
        timeit(lambda: jlr.normal(k, (10,))), timeit(lambda: rng.normal(size=10)),
        timeit(lambda: jr.normal(kj, (10,)).block_until_ready()) if jax else None)
    f = jaxlite.jit(lambda k: jlr.normal(k, (10,)))
    fj = jax.jit(lambda k: jr.normal(k, (10,))) if jax else None
    f(k)
    if jax:
        fj(kj)
    row("jit normal(key, (10,)) cached",
        timeit(lambda: f(k)), None,
        timeit(lambda: fj(kj).block_until_ready()) if jax else None)
    mega = (1 << 20,)
    f32 = np.float32
    row("cauchy 1M f32",
        timeit(lambda: jlr.cauchy(k, mega).block_until_ready(), repeat=5),
        timeit(lambda: rng.standard_cauchy(size=mega).astype(f32), repeat=5),
        timeit(lambda: jr.cauchy(kj, mega).block_until_ready(), repeat=5) if jax else None)
    row("gumbel 1M f32",
        timeit(lambda: jlr.gumbel(k, mega).block_until_ready(), repeat=5),
        timeit(lambda: rng.gumbel(size=mega).astype(f32), repeat=5),
        timeit(lambda: jr.gumbel(kj, mega).block_until_ready(), repeat=5) if jax else None)
    row("exponential 1M f32",
        timeit(lambda: jlr.exponential(k, mega).block_until_ready(), repeat=5),
        timeit(lambda: rng.standard_exponential(size=mega, dtype=f32), repeat=5),
        timeit(lambda: jr.exponential(kj, mega).block_until_ready(), repeat=5) if jax else None)
    row("pareto(b=3) 1M f32",
        timeit(lambda: jlr.pareto(k, 3.0, mega).block_until_ready(), repeat=5),
        timeit(lambda: (rng.pareto(3.0, size=mega) + 1).astype(f32), repeat=5),
        timeit(lambda: jr.pareto(kj, 3.0, mega).block_until_ready(), repeat=5) if jax else None)
    row("gamma(key, 2.0, (100000,)) f32",
        timeit(lambda: jlr.gamma(k, 2.0, (100000,)).block_until_ready(), repeat=5),
        timeit(lambda: rng.standard_gamma(2.0, size=100000, dtype=f32), repeat=5),
        timeit(lambda: jr.gamma(kj, 2.0, (100000,)).block_until_ready(), repeat=5)
        if jax else None)
    row("gamma(key, 2.0, (10000,))",
        timeit(lambda: jlr.gamma(k, 2.0, (10000,)), repeat=3),
        timeit(lambda: rng.gamma(2.0, size=10000), repeat=3),
        timeit(lambda: jr.gamma(kj, 2.0, (10000,)).block_until_ready(), repeat=3)
        if jax else None)


def _has_numba():
    import importlib.util
    return importlib.util.find_spec("numba") is not None


if __name__ == "__main__":
    main()
