"""Write tests/goldens/cpu_math_<family>.npz: real JAX's float32 results (XLA:CPU) of the
lax primitives of a ``jaxlite._src.cpu_math`` family on ~2000 inputs each (random bit
patterns over the whole line, uniform samples in each function's interesting ranges, and
special values), stored as uint32 bits.

    python tools/make_cpu_math_goldens.py --family log

Needs real jax; the tests that read the file do not.
"""
from __future__ import annotations

import argparse
import pathlib

import numpy as np

F32 = np.float32
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
                     np.pi, -np.pi, np.pi / 2, -np.pi / 2, np.pi / 4, 120.0, -120.0,
                     np.finfo(F32).max, -np.finfo(F32).max, np.finfo(F32).tiny,
                     -np.finfo(F32).tiny, 1e-40, -1e-40, 1e-45, 2.0 ** -12, 2.0 ** -29,
                     0.41421356, -0.41421356, 0.4375, 2.4375, 1.1875, 2.0 ** 25, 1e30,
                     -0.9999999, 1.0000001, 0.99999994], F32)
NAN_PAYLOADS = np.array([0x7FC00123, 0xFFC00001, 0x7F800001], np.uint32).view(F32)
# subnormal and FLT_MIN edges (XLA:CPU flushes subnormals: DAZ/FTZ)
SPECIALS = np.concatenate([SPECIALS, np.array(
    [0x007FFFFF, 0x807FFFFF, 0x00FFFFFF, 0x80FFFFFF, 0x00800000, 0x80800000], np.uint32)
    .view(F32)])

# family -> {primitive: ranges of uniform samples}
FAMILIES = {
    "log": {"log": [(0, 4), (1e-30, 1e-20), (0.5, 2), (1e4, 1e30)],
            "log1p": [(-1, 1), (-0.5, 0.5), (-0.42, 0.42), (1, 1e6)]},
    "trig": {"sin": [(-4, 4), (-120, 120), (-1e6, 1e6), (-1e30, 1e30)],
             "cos": [(-4, 4), (-120, 120), (-1e6, 1e6), (-1e30, 1e30)],
             "tan": [(-4, 4), (-120, 120), (-1e6, 1e6)],
             "asin": [(-1, 1), (-1e-3, 1e-3), (0.9, 1)],
             "acos": [(-1, 1), (-1e-3, 1e-3), (0.9, 1)],
             "atan2": [(-10, 10), (-1e-3, 1e-3), (-1e20, 1e20)],
             "atan": [(-4, 4), (-1e-3, 1e-3), (-1e20, 1e20)]},
    "special": {"erf_inv": [(-1, 1), (-1e-30, 1e-30), (0.99, 1), (-1, -0.999999)],
                "cbrt": [(-8, 8), (-1e-30, 1e-30), (-1e30, 1e30)]},
    "inverse": {"atanh": [(-1, 1), (-0.42, 0.42), (-1e-3, 1e-3), (0.99, 1)],
                "asinh": [(-4, 4), (-1e-3, 1e-3), (-1e20, 1e20)],
                "acosh": [(0.9, 4), (1, 1.01), (1, 1e20)]},
    "exp": {"exp": [(-1, 1), (-90, 90), (-88, -86), (86, 89), (-1e-30, 1e-30)],
            "expm1": [(-1e-3, 1e-3), (-0.6, 0.6), (-90, 90), (-1e-37, 1e-37)],
            "exp2": [(-1, 1), (-130, 130), (-128, -125), (125, 129)]},
    "hyperbolic": {"tanh": [(-5e-4, 5e-4), (-1, 1), (-21, 21), (7.9, 8.1)],
                   "logistic": [(-1, 1), (-100, 100), (86, 89)],
                   "sinh": [(-1e-3, 1e-3), (-1.1, 1.1), (-100, 100)],
                   "cosh": [(-1, 1), (-100, 100), (88, 90)]},
    "gamma": {"lgamma": [(0.5, 30), (-10, 0.5), (-1e4, 1e4), (1e30, 3e38)],
              "digamma": [(0.01, 30), (-10, 0.5), (-1e4, 1e4), (1e30, 3e38)]},
    "rsqrt": {"rsqrt": [(0, 4), (1e-30, 1e-20), (1, 1e30), (-1, 1)]},
    "power": {"pow": [(0, 4), (-10, 10), (0.9, 1.1), (-1e-3, 1e-3), (1e-20, 1e20)]},
    "erf": {"erf": [(-1e-3, 1e-3), (-4, 4), (3.8, 3.9)],
            "erfc": [(-1, 1), (-2.1, 2.1), (-10, 10), (9, 11)]},
}
BINARY = {"atan2", "pow"}
# XLA computes these differently by processor (cpu_math.rsqrt)
PROCESSOR_DEPENDENT = {"rsqrt"}


def sample(rng, ranges, n=2000):
    """~n float32 inputs: random bits, uniform samples in ``ranges``, specials."""
    parts = [rng.integers(0, 2 ** 32, 800, dtype=np.uint64).astype(np.uint32).view(F32)]
    per = (n - 800 - SPECIALS.size - NAN_PAYLOADS.size) // len(ranges)
    for lo, hi in ranges:
        parts.append(rng.uniform(lo, hi, per).astype(F32))
    parts += [SPECIALS, NAN_PAYLOADS]
    return np.concatenate(parts)


def main():
    """Compute and write the goldens of one family with real JAX."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--family", required=True, choices=sorted(FAMILIES))
    args = ap.parse_args()
    import jax
    from jax import lax
    jax.config.update("jax_platforms", "cpu")
    rng = np.random.default_rng(20261128)
    out = {}
    for name, ranges in FAMILIES[args.family].items():
        fn = jax.jit(getattr(lax, name))
        x = sample(rng, ranges)
        if name in BINARY:
            x2 = np.concatenate([sample(rng, ranges)[:x.size], x])
            x = np.concatenate([x, sample(rng, ranges)[:x.size]])
            x2 = x2[:x.size]
            out[name + "_x2"] = x2.view(np.uint32)
            y = np.asarray(fn(x, x2))
        else:
            y = np.asarray(fn(x))
        if name in PROCESSOR_DEPENDENT:
            # the form of the processor the goldens come from (the test skips elsewhere)
            from jaxlite._src.cpu_math import rsqrt
            out[name + "_form"] = np.array(rsqrt.rsqrt_form().reason)
        out[name + "_x"] = x.view(np.uint32)
        out[name + "_y"] = y.view(np.uint32)
    path = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "goldens"
            / f"cpu_math_{args.family}.npz")
    np.savez_compressed(path, **out)
    print(f"wrote {path} ({', '.join(FAMILIES[args.family])})")


if __name__ == "__main__":
    main()
