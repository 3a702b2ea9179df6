"""Typed PRNG keys on the jit call path: jaxlite next to JAX (when installed).

Run: ``python benchmarks/bench_keys.py [--no-jax]``. Typed keys are pytree leaves with a key-dtype aval
(``key<fry>[]``); the target is that carrying them costs the jit call path nothing: a call
with plain arrays (the fast path) is unchanged, and a call taking a key, or an optax-like
state holding one, costs about what a call with one more array argument costs.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_core import row, timeit  # noqa: E402

import jaxlite  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402

try:
    import jax
    import jax.numpy as jjnp
except ImportError:  # JAX is optional
    jax = None


def cases(jx, np_mod):
    """The callables to time for one library (``jx`` is jaxlite or jax)."""
    x = np_mod.ones((8,), np_mod.float32)
    k = jx.random.key(0)
    state = {"w": x, "b": x, "rng": k, "count": np_mod.zeros((), np_mod.int32)}

    plain = jx.jit(lambda a, b: a * b + 1.0)
    passthrough = jx.jit(lambda key, a: (key, a * 2.0))
    with_key = jx.jit(lambda key, a: a + jx.random.uniform(key, a.shape))
    legacy = jx.jit(lambda key, a: a + jx.random.uniform(key, a.shape))
    raw = jx.random.PRNGKey(0)

    def step(s):
        rng, sub = jx.random.split(s["rng"])
        return {"w": s["w"] * 0.9, "b": s["b"] + jx.random.normal(sub, s["b"].shape),
                "rng": rng, "count": s["count"] + 1}
    step = jx.jit(step)
    for f, args in ((plain, (x, x)), (passthrough, (k, x)), (with_key, (k, x)), (legacy, (raw, x)), (step, (state,))):
        jx.block_until_ready(f(*args))
    return {
        "jit(f)(x, y), arrays": lambda: plain(x, x),
        "jit(f)(key, x) -> (key, 2x)": lambda: passthrough(k, x),
        "jit(f)(key, x), typed key": lambda: with_key(k, x),
        "jit(f)(raw key, x), uint32 key": lambda: legacy(raw, x),
        "jit(step)(state with a key)": lambda: step(state),
        "random.split(key) eager": lambda: jx.random.split(k),
        "tree_leaves(state)": lambda: jx.tree_util.tree_leaves(state),
    }


def main():
    print(f"jaxlite {jaxlite.__version__}, jax {jax.__version__ if jax else 'not installed'}")
    print(f"{'case':34s} {'jaxlite':>12s} {'numpy':>12s} {'jax':>12s}")
    ours = cases(jaxlite, jnp)
    theirs = cases(jax, jjnp) if jax and "--no-jax" not in sys.argv else {}
    for name, fn in ours.items():
        ref = theirs.get(name)
        row(name, timeit(fn, repeat=5), None, timeit(ref, repeat=5) if ref else None)


if __name__ == "__main__":
    np.random.seed(0)
    main()
