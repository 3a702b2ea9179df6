"""Write ``tests/goldens/cpu_math_<family>.npz``: real JAX's float32 outputs (``jax.jit``
on the CPU) of the family's lax primitives on ~2000 inputs each, as uint32 bits (keys
``<name>_x`` and ``<name>_y``). Needs jax; ``tests/test_cpu_math_<family>.py`` checks
``jaxlite._src.cpu_math`` against them.

    python tools/make_cpu_math_goldens.py --family exp
"""
from __future__ import annotations

import argparse
import pathlib

import numpy as np

# per function: (family, a JAX function name to evaluate, [(lo, hi), ...] ranges of |x|)
FUNCTIONS = {
    "exp": ("exp", "jax.numpy.exp", [(0, 1), (1, 90), (86, 89), (0, 1e-30)]),
    "expm1": ("exp", "jax.numpy.expm1", [(0, 1e-3), (1e-3, 0.6), (0.4, 90), (0, 1e-37)]),
    "exp2": ("exp", "jax.numpy.exp2", [(0, 1), (1, 130), (125, 129)]),
    "tanh": ("hyperbolic", "jax.numpy.tanh", [(0, 5e-4), (3e-4, 1), (1, 21), (7.9, 8.1)]),
    "logistic": ("hyperbolic", "jax.nn.sigmoid", [(0, 1), (1, 100), (86, 89)]),
    "sinh": ("hyperbolic", "jax.numpy.sinh", [(0, 1e-3), (1e-3, 1.1), (0.9, 100)]),
    "cosh": ("hyperbolic", "jax.numpy.cosh", [(0, 1), (1, 100), (88, 90)]),
    "erf": ("erf", "jax.scipy.special.erf", [(0, 1e-3), (1e-3, 4), (3.8, 3.9)]),
    "erfc": ("erf", "jax.scipy.special.erfc", [(0, 1), (0.9, 2.1), (1.9, 10), (9, 11)]),
}

SPECIALS = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                     0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
                     0x00FFFFFF, 0x80FFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000,
                     0x3F000000, 0xBF000000], np.uint32)


def inputs(ranges, rng, n=2000):
    """float32 inputs: the specials, random bit patterns, and random values of both signs
    with magnitudes uniform in each range's bit patterns."""
    parts = [SPECIALS.view(np.float32),
             rng.integers(0, 1 << 32, n // 4, dtype=np.uint64).astype(np.uint32)
             .view(np.float32)]
    per = (n - n // 4 - SPECIALS.size) // len(ranges)
    for lo, hi in ranges:
        a, b = (int(np.float32(v).view(np.uint32)) for v in (lo, hi))
        u = rng.integers(a, b + 1, per, dtype=np.uint64).astype(np.uint32)
        u[rng.random(per) < 0.5] |= np.uint32(0x80000000)
        parts.append(u.view(np.float32))
    return np.concatenate(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", required=True)
    ap.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent
                                          / "tests" / "goldens"))
    args = ap.parse_args()
    import importlib

    import jax
    jax.config.update("jax_platforms", "cpu")
    rng = np.random.default_rng(20261128)
    data = {}
    for name, (fam, fn, ranges) in FUNCTIONS.items():
        if fam != args.family:
            continue
        mod, attr = fn.rsplit(".", 1)
        f = jax.jit(getattr(importlib.import_module(mod), attr))
        x = inputs(ranges, rng)
        y = np.asarray(f(x), np.float32)
        data[name + "_x"], data[name + "_y"] = x.view(np.uint32), y.view(np.uint32)
    if not data:
        raise SystemExit(f"no functions in family {args.family!r}; families: "
                         f"{sorted({v[0] for v in FUNCTIONS.values()})}")
    path = pathlib.Path(args.out) / f"cpu_math_{args.family}.npz"
    np.savez_compressed(path, **data)
    print(f"wrote {path} ({', '.join(sorted(k[:-2] for k in data if k.endswith('_x')))})")


if __name__ == "__main__":
    main()
