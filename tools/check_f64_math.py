"""Mismatch census of jaxlite's float64 elementwise math against XLA:CPU (jax.jit, x64).

For each function: 1M inputs (wide random ranges, a range fitting the function, random
bit patterns, special values); real JAX's jit results are computed once (cached under
/tmp), then jaxlite's eager call, jaxlite's jit and the NumPy path (``JAXLITE_NUMBA=0``,
eager) are compared bit for bit (NaNs equal). Prints the mismatch % per function.

    PYTHONPATH=<tree> python tools/check_f64_math.py [names...] [--modes eager,jit,numpy]
"""
import os
import subprocess
import sys

import numpy as np

N = 1 << 20
CACHE = "/tmp/jaxlite_f64_census"
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-310, -1e-310,
            5e-324, 1e300, -1e300, 709.78, -708.4, 1e-20, -1e-20, 3.0, -3.0, 0.25, 1e308]

# name: (how to call it from (lax, jnp, nn), the fitting range (lo, hi) of its own inputs)
FNS = {
    "exp": ("lax.exp", (-30, 30)), "tanh": ("lax.tanh", (-5, 5)),
    "expm1": ("lax.expm1", (-2, 2)), "sinh": ("lax.sinh", (-3, 3)),
    "cosh": ("lax.cosh", (-3, 3)), "logistic": ("lax.logistic", (-10, 10)),
    "log1p": ("lax.log1p", (-1, 3)), "tan": ("lax.tan", (-4, 4)),
    "atan": ("lax.atan", (-4, 4)), "asinh": ("lax.asinh", (-4, 4)),
    "erf": ("lax.erf", (-4, 4)), "cbrt": ("lax.cbrt", (-10, 10)),
    "pow": ("lax.pow", (0, 10)), "log": ("lax.log", (0, 4)),
    "log2": ("jnp.log2", (0, 4)), "log10": ("jnp.log10", (0, 4)),
    "sin": ("lax.sin", (-10, 10)), "cos": ("lax.cos", (-10, 10)),
    "atan2": ("lax.atan2", (-4, 4)), "acosh": ("lax.acosh", (1, 5)),
    "atanh": ("lax.atanh", (-1, 1)), "asin": ("lax.asin", (-1, 1)),
    "acos": ("lax.acos", (-1, 1)), "erfc": ("lax.erfc", (-3, 10)),
    "erf_inv": ("lax.erf_inv", (-1, 1)), "lgamma": ("lax.lgamma", (-10, 20)),
    "digamma": ("lax.digamma", (-10, 20)), "exp2": ("lax.exp2", (-30, 30)),
    "sqrt": ("lax.sqrt", (0, 100)), "rsqrt": ("lax.rsqrt", (0, 100)),
    "softplus": ("nn.softplus", (-40, 40)),
}
BINARY = {"pow", "atan2"}


def inputs(name, seed=0):
    """The census inputs of ``name`` (a tuple: one array per operand)."""
    rng = np.random.default_rng(seed)
    lo, hi = FNS[name][1]

    def one(k):
        q = N // 4
        bits = rng.integers(0, 1 << 63, q, dtype=np.int64).view(np.float64)
        bits = np.where(rng.random(q) < 0.5, -bits, bits)
        mag = 10.0 ** rng.uniform(-300, 300, q) * np.where(rng.random(q) < 0.5, -1, 1)
        parts = [rng.uniform(lo, hi, q), rng.uniform(-750, 750, q), mag, bits]
        x = np.concatenate(parts)
        x = x[: N - len(SPECIALS)]
        return np.concatenate([x, SPECIALS])
    if name not in BINARY:
        return (one(0),)
    x, y = one(0), one(1)
    if name == "pow":     # exponents: small reals, integers, halves, then the wide ones
        m = N // 8
        y[:m] = rng.uniform(-10, 10, m)
        y[m:2 * m] = rng.integers(-20, 20, m)
        y[2 * m:3 * m] = rng.integers(-40, 40, m) * 0.5
        x[:3 * m] = np.abs(x[:3 * m])
    else:
        y = y[rng.permutation(N)]
    return x, y


def call(mod, name, args, jit):
    where, _ = FNS[name]
    ns, attr = where.split(".")
    f = getattr({"lax": mod.lax, "jnp": mod.numpy, "nn": mod.nn}[ns], attr)
    if jit:
        f = mod.jit(f)
    return np.asarray(f(*args))


def reference(name):
    os.makedirs(CACHE, exist_ok=True)
    path = f"{CACHE}/{name}.npy"
    if not os.path.exists(path):
        import jax
        jax.config.update("jax_enable_x64", True)
        y = call(jax, name, inputs(name), jit=True)
        assert y.dtype == np.float64, y.dtype
        np.save(path, y)
    return np.load(path)


def mismatch(a, b):
    ok = (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))
    return np.flatnonzero(~ok)


def run_jaxlite(names, mode):
    """Child process: jaxlite's results for ``names`` in ``mode``; prints one line each."""
    import jaxlite
    import jaxlite.numpy
    jaxlite.config.update("jax_enable_x64", True)
    for name in names:
        args = inputs(name)
        with np.errstate(all="ignore"):
            got = call(jaxlite, name, args, jit=(mode == "jit"))
        want = reference(name)
        bad = mismatch(np.asarray(got, np.float64), want)
        ex = ""
        if bad.size:
            i = bad[0]
            ex = " e.g. " + ",".join(repr(float(a[i])) for a in args) + \
                f" -> {float(got[i])!r} want {float(want[i])!r}"
        print(f"{name} {mode} {100.0 * bad.size / want.size:.4f}{ex}", flush=True)


def main():
    argv = sys.argv[1:]
    modes = ["eager", "jit", "numpy"]
    if "--modes" in argv:
        i = argv.index("--modes")
        modes = argv[i + 1].split(",")
        del argv[i:i + 2]
    if argv and argv[0] == "--child":
        return run_jaxlite(argv[2:], argv[1])
    names = argv or list(FNS)
    for n in names:
        reference(n)
    table = {n: {} for n in names}
    for mode in modes:
        env = dict(os.environ)
        if mode == "numpy":
            env["JAXLITE_NUMBA"] = "0"
        p = subprocess.run([sys.executable, __file__, "--child", mode, *names], env=env,
                           capture_output=True, text=True, check=False)
        if p.returncode:
            print(p.stderr[-3000:])
        for line in p.stdout.splitlines():
            parts = line.split(" ", 3)
            table[parts[0]][mode] = parts[2]
            if len(parts) > 3:
                print("  ", line)
    print("\n| function | " + " | ".join(f"{m} %" for m in modes) + " |")
    print("|---|" + "---|" * len(modes))
    for n in names:
        print(f"| {n} | " + " | ".join(table[n].get(m, "?") for m in modes) + " |")


if __name__ == "__main__":
    main()
