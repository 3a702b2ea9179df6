"""jax.random speed: jaxlite next to NumPy's Generator and, when installed, JAX.

Run: ``python benchmarks/bench_random.py``. Target (issue 5): ``random.normal(key,
(4096, 4096))`` at most as slow as ``np.random.default_rng().normal``.
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
    row("gamma(key, 2.0, (10000,))",
        timeit(lambda: jlr.gamma(k, 2.0, (10000,)), repeat=3),
        timeit(lambda: rng.gamma(2.0, size=10000), repeat=3),
        timeit(lambda: jr.gamma(kj, 2.0, (10000,)).block_until_ready(), repeat=3)
        if jax else None)


if __name__ == "__main__":
    main()
