"""Write tests/goldens/cpu_math_f64.npz: real JAX's float64 results (XLA:CPU, x64) of the
lax primitives of ``cpu_math.table.F64`` on ~500 inputs each (random bit patterns over the
whole line, uniform samples in each function's interesting ranges, special values and
subnormal edges), stored as uint64 bits, with the processor's FMA flag (``xla64.FUSED``)
and the float64 ``rsqrt`` form (``rsqrt64``) they come from.

    python tools/make_cpu_math_f64_goldens.py

Needs real jax; the tests that read the file do not.
"""
from __future__ import annotations

import pathlib

import numpy as np

F64 = np.float64
TINY = np.finfo(F64).tiny
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
                     3.0, -3.0, np.pi, -np.pi, np.pi / 2, 0.41421356237309504,
                     -0.41421356237309504, 1e-300, -1e-300, 1e300, -1e300, 709.78, -708.4,
                     -745.2, 26.6, -26.6, 8.0, 2.0 ** 512, 2.0 ** 1023, np.finfo(F64).max,
                     -np.finfo(F64).max, TINY, -TINY, 1e-310, -1e-310, 5e-324, -5e-324,
                     2.0 ** -966, -(2.0 ** -966)], F64)

# primitive -> ranges of uniform samples (the wide and bit-pattern inputs come for all)
RANGES = {
    "exp": [(-1, 1), (-750, 750)], "tanh": [(-1, 1), (-21, 21)],
    "expm1": [(-1e-3, 1e-3), (-0.6, 0.6)], "cosh": [(-3, 3), (-720, 720)],
    "sinh": [(-1.1, 1.1), (-720, 720)], "logistic": [(-10, 10), (-750, 750)],
    "log1p": [(-1, 1), (-0.42, 0.42), (1, 1e6)], "exp2": [(-30, 30), (-1080, 1030)],
    "log": [(0, 4), (0.5, 2), (1e-300, 1e-250)], "sin": [(-10, 10), (-1e6, 1e6)],
    "cos": [(-10, 10), (-1e6, 1e6)], "tan": [(-4, 4), (-1e6, 1e6)],
    "atan": [(-4, 4), (-1e-3, 1e-3)], "erf": [(-4, 4), (-1e-3, 1e-3)],
    "cbrt": [(-10, 10), (-1e-300, 1e-300)], "pow": [(0, 10), (-10, 10)],
    "atan2": [(-4, 4), (-1e-3, 1e-3)], "asin": [(-1, 1), (0.99, 1)],
    "acos": [(-1, 1), (0.99, 1)], "asinh": [(-4, 4), (-1e-3, 1e-3), (1e100, 1e200)],
    "acosh": [(1, 5), (1, 1.01), (1e100, 1e200)], "atanh": [(-1, 1), (-0.42, 0.42)],
    "erfc": [(-3, 10), (-1, 1), (25, 28)], "erf_inv": [(-1, 1), (0.999, 1), (-1e-3, 1e-3)],
    "lgamma": [(-10, 20), (0.5, 30), (1e300, 1e306)],
    "digamma": [(-10, 20), (0.01, 30), (-1e4, 1e4)], "rsqrt": [(0, 100), (1e-300, 1e300)],
}
BINARY = {"atan2", "pow"}


def sample(rng, ranges, n=500):
    """~n float64 inputs: random bits, wide magnitudes, uniform samples in ``ranges``,
    specials."""
    bits = rng.integers(0, 2 ** 63, 150, dtype=np.int64).view(F64)
    bits = np.where(rng.random(150) < 0.5, -bits, bits)
    wide = 10.0 ** rng.uniform(-300, 300, 80) * np.where(rng.random(80) < 0.5, -1, 1)
    per = (n - 230 - SPECIALS.size) // len(ranges)
    parts = [bits, wide] + [rng.uniform(lo, hi, per) for lo, hi in ranges] + [SPECIALS]
    return np.concatenate(parts)


def main():
    """Compute and write the goldens with real JAX (x64)."""
    import jax
    from jax import lax
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)
    from jaxlite._src.cpu_math import rsqrt64, table, xla64
    rng = np.random.default_rng(20261128)
    out = {"fused": np.array(xla64.FUSED),
           "rsqrt_form": np.array(rsqrt64.rsqrt_form64().reason)}
    for name in table.F64:
        fn = jax.jit(getattr(lax, name))
        x = sample(rng, RANGES[name])
        if name in BINARY:
            x2 = sample(rng, RANGES[name])[rng.permutation(x.size)]
            if name == "pow":      # exponents: integers and halves too
                x2[:100] = rng.integers(-20, 20, 100)
                x2[100:160] = rng.integers(-40, 40, 60) * 0.5
            out[name + "_x2"] = x2.view(np.uint64)
            y = np.asarray(fn(x, x2))
        else:
            y = np.asarray(fn(x))
        assert y.dtype == F64, (name, y.dtype)
        out[name + "_x"] = x.view(np.uint64)
        out[name + "_y"] = y.view(np.uint64)
    path = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "goldens"
            / "cpu_math_f64.npz")
    np.savez_compressed(path, **out)
    print(f"wrote {path} ({', '.join(table.F64)})")


if __name__ == "__main__":
    main()
