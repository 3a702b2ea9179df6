"""Probe XLA's algebraic simplifications of float arithmetic: run expression patterns with
constants (and the structural ones XLA rewrites) under real JAX and under jaxlite, and list
those whose bits differ.

    python tools/xla_simplify_probe.py                # runs both backends, prints the table
    python tools/xla_simplify_probe.py --backend jax --out FILE.npz   # one backend's results
    python tools/xla_simplify_probe.py --only NAMEPART --all          # print matching rows too

Contexts: ``vec`` (jit over 512-element arrays: constants are broadcasts of scalars),
``scal`` (jit over scalars, called per value: plain constants), ``while`` / ``scan`` /
``fori`` (the expression inside a loop body, its constant reaching the body as an invariant
carry or a closed-over constant: XLA sinks those into the body), ``eager`` (op by op).
The comparison needs real JAX installed (``pip install jax``) and jaxlite importable.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

CONSTS = (2.1, 3.3, 13.0, 20.0, 7.0, 0.3)


def _cases(jnp, lax):
    """name -> (function of (x, y, z), dtypes, contexts)."""
    F = ("float32", "float64", "bfloat16", "float16")
    F32 = ("float32",)
    V = ("vec", "scal", "eager")
    VS = ("vec", "scal")
    c = {}
    # additions and subtractions of constants
    c["(x+2.1)+3.3"] = (lambda x, y, z: (x + 2.1) + 3.3, F, V)
    c["(2.1+x)+3.3"] = (lambda x, y, z: (2.1 + x) + 3.3, F32, VS)
    c["3.3+(x+2.1)"] = (lambda x, y, z: 3.3 + (x + 2.1), F32, VS)
    c["(x-2.1)+3.3"] = (lambda x, y, z: (x - 2.1) + 3.3, F, VS)
    c["(x+2.1)-3.3"] = (lambda x, y, z: (x + 2.1) - 3.3, F, VS)
    c["(x-2.1)-3.3"] = (lambda x, y, z: (x - 2.1) - 3.3, F32, VS)
    c["(2.1-x)+3.3"] = (lambda x, y, z: (2.1 - x) + 3.3, F32, VS)
    c["(2.1-x)-3.3"] = (lambda x, y, z: (2.1 - x) - 3.3, F32, VS)
    c["3.3-(x+2.1)"] = (lambda x, y, z: 3.3 - (x + 2.1), F32, VS)
    c["3.3-(x-2.1)"] = (lambda x, y, z: 3.3 - (x - 2.1), F32, VS)
    c["((x+2.1)+3.3)+0.3"] = (lambda x, y, z: ((x + 2.1) + 3.3) + 0.3, F32, VS)
    c["(x+y)+2.1+3.3"] = (lambda x, y, z: (x + y) + 2.1 + 3.3, F32, VS)
    c["-(x+2.1)+3.3"] = (lambda x, y, z: -(x + 2.1) + 3.3, F32, VS)
    # products and quotients with constants
    c["x/13"] = (lambda x, y, z: x / 13.0, F + ("complex64",), V)
    c["20*(x/13)"] = (lambda x, y, z: 20.0 * (x / 13.0), F + ("complex64",), V)
    c["(x/13)*20"] = (lambda x, y, z: (x / 13.0) * 20.0, F, VS)
    c["(x*20)/13"] = (lambda x, y, z: (x * 20.0) / 13.0, F, VS)
    c["x/13/7"] = (lambda x, y, z: x / 13.0 / 7.0, F, VS)
    c["(x*2.1)*3.3"] = (lambda x, y, z: (x * 2.1) * 3.3, F, V)
    c["3.3*(2.1*x)"] = (lambda x, y, z: 3.3 * (2.1 * x), F32, VS)
    c["((x*2.1)*3.3)*0.3"] = (lambda x, y, z: ((x * 2.1) * 3.3) * 0.3, F32, VS)
    c["(x*2.1)*(y*3.3)"] = (lambda x, y, z: (x * 2.1) * (y * 3.3), F32, VS)
    c["(x/13)*(y/7)"] = (lambda x, y, z: (x / 13.0) * (y / 7.0), F32, VS)
    c["20/(x/13)"] = (lambda x, y, z: 20.0 / (x / 13.0), F32, VS)
    c["(x/13)/(y/7)"] = (lambda x, y, z: (x / 13.0) / (y / 7.0), F32, VS)
    c["20*(13/x)"] = (lambda x, y, z: 20.0 * (13.0 / x), F32, VS)
    c["(20*x)*x"] = (lambda x, y, z: (20.0 * x) * x, F32, VS)
    c["-(x*2.1)*3.3"] = (lambda x, y, z: -(x * 2.1) * 3.3, F32, VS)
    c["(x*2.1)/3.3"] = (lambda x, y, z: (x * 2.1) / 3.3, F32, VS)
    c["x/0.3+2.1"] = (lambda x, y, z: x / 0.3 + 2.1, F32, VS)
    c["(x*2.1)*y[0]"] = (lambda x, y, z: (x * 2.1) * y[0], F32, ("vec",))
    c["t0+(t1-t0)*(x/13)"] = (lambda x, y, z: 0.0 + (20.0 - 0.0) * (x / 13.0), F, V)
    # structural rewrites (no constants)
    c["x/y/z"] = (lambda x, y, z: x / y / z, F, VS)
    c["x/(y/z)"] = (lambda x, y, z: x / (y / z), F32, VS)
    c["(x/y)/(z/x)"] = (lambda x, y, z: (x / y) / (z / x), F32, VS)
    c["exp(x)/exp(y)"] = (lambda x, y, z: jnp.exp(x / 50) / jnp.exp(y / 50), F32, VS)
    c["x/exp(y)"] = (lambda x, y, z: x / jnp.exp(y / 50), F32, VS)
    c["exp(x)*exp(y)"] = (lambda x, y, z: jnp.exp(x / 50) * jnp.exp(y / 50), F32, VS)
    c["x/pow(|y|,z)"] = (lambda x, y, z: x / lax.pow(jnp.abs(y), z / 100), F32, VS)
    c["x/rsqrt(|y|)"] = (lambda x, y, z: x / lax.rsqrt(jnp.abs(y)), F32, VS)
    c["x*2+y*2"] = (lambda x, y, z: x * 2.0 + y * 2.0, F32, VS)
    c["(-x)*(-y)"] = (lambda x, y, z: (-x) * (-y), F32, VS)
    # powers and logarithms
    c["x**2.0"] = (lambda x, y, z: x ** 2.0, F32, VS)
    c["x**-1.0"] = (lambda x, y, z: x ** -1.0, F32, VS)
    c["x**-2.0"] = (lambda x, y, z: x ** -2.0, F32, VS)
    c["|x|**0.5"] = (lambda x, y, z: jnp.abs(x) ** 0.5, F32, VS)
    c["exp(x)**y"] = (lambda x, y, z: lax.pow(jnp.exp(x / 50), y / 50), F32, VS)
    c["log(exp(x))"] = (lambda x, y, z: jnp.log(jnp.exp(x / 50)), F32, VS)
    c["log(sqrt(|x|))"] = (lambda x, y, z: jnp.log(jnp.sqrt(jnp.abs(x))), F32, VS)
    c["log(rsqrt(|x|))"] = (lambda x, y, z: jnp.log(lax.rsqrt(jnp.abs(x))), F32, VS)
    c["log(|x|**y)"] = (lambda x, y, z: jnp.log(lax.pow(jnp.abs(x), y / 50)), F32, VS)
    c["sqrt(|x|)*sqrt(|x|)"] = (lambda x, y, z: jnp.sqrt(jnp.abs(x)) * jnp.sqrt(jnp.abs(x)),
                                F32, VS)
    c["x/sqrt(|y|)+sqrt(|y|)"] = (lambda x, y, z: x / jnp.sqrt(jnp.abs(y)) +
                                  jnp.sqrt(jnp.abs(y)), F32, VS)
    c["x/y/sqrt(|z|), shared root"] = (lambda x, y, z: (x / y / jnp.sqrt(jnp.abs(z)),
                                                        jnp.sqrt(jnp.abs(z)))[0] +
                                       jnp.sqrt(jnp.abs(z)), F32, VS)
    # closed-over arrays (constants of the program) and explicit broadcasts
    arr = np.linspace(1.5, 9.5, 512).astype(np.float32)
    c["x/arr"] = (lambda x, y, z: x / arr, F32, ("vec",))
    c["(x*arr)*2.1"] = (lambda x, y, z: (x * arr) * 2.1, F32, ("vec",))
    c["(x+arr)+2.1"] = (lambda x, y, z: (x + arr) + 2.1, F32, ("vec",))
    c["(x/arr)*(y/arr)"] = (lambda x, y, z: (x / arr) * (y / arr), F32, ("vec",))
    c["x/full(13)"] = (lambda x, y, z: x / jnp.full(x.shape, 13.0, x.dtype), F32, ("vec",))
    c["(x2d*2.1)*row"] = (lambda x, y, z: ((x.reshape(8, 64) * 2.1) * y[:64][None, :])
                          .reshape(-1), F32, ("vec",))
    c["(x*2.1)*x[0]"] = (lambda x, y, z: (x * 2.1) * x[0], F32, ("vec",))
    # divisions by a broadcast scalar (XLA: A / Broadcast(B) => A * Broadcast(1 / B))
    c["x/y/s"] = (lambda x, y, z: x / y / z[0], F32, ("vec",))
    c["(x/s)/y"] = (lambda x, y, z: (x / z[0]) / y, F32, ("vec",))
    c["x/(y/s)"] = (lambda x, y, z: x / (y / z[0]), F32, ("vec",))
    c["x/(s/y)"] = (lambda x, y, z: x / (z[0] / y), F32, ("vec",))
    c["x/sqrt(|s|)"] = (lambda x, y, z: x / jnp.sqrt(jnp.abs(z[0])), F32, ("vec",))
    c["x/exp(s)"] = (lambda x, y, z: x / jnp.exp(z[0] / 50), F32, ("vec",))
    c["x/(s*2.1)"] = (lambda x, y, z: x / (z[0] * 2.1), F32, ("vec",))
    c["(x*2.1)/s"] = (lambda x, y, z: (x * 2.1) / z[0], F32, ("vec",))
    c["x/row"] = (lambda x, y, z: (x.reshape(8, 64) / y[:64][None, :]).reshape(-1), F32,
                  ("vec",))
    c["x/sqrt(|row|)"] = (lambda x, y, z: (x.reshape(8, 64) / jnp.sqrt(jnp.abs(y[:64]))[None, :])
                          .reshape(-1), F32, ("vec",))
    c["x/s/13"] = (lambda x, y, z: x / z[0] / 13.0, F32, ("vec",))
    c["x/sqrt(|y|), root shared"] = (lambda x, y, z: (lambda r: x / r + r)(jnp.sqrt(jnp.abs(y))),
                                     F32, VS)
    c["x*2+y*2, shared"] = (lambda x, y, z: (x * 2.0 + y * 2.0) * (x * 2.0), F32, VS)
    c["x*3+y*3"] = (lambda x, y, z: x * 3.0 + y * 3.0, F32, VS)
    # signed zeros and units
    c["x+0"] = (lambda x, y, z: jnp.where(x > 0, -0.0, x) + 0.0, F32, VS)
    c["x-0"] = (lambda x, y, z: jnp.where(x > 0, -0.0, x) - 0.0, F32, VS)
    c["x-(-0)"] = (lambda x, y, z: jnp.where(x > 0, -0.0, x) - (-0.0), F32, VS)
    return c


def _loop_cases(jax, jnp, lax, np_dtype):
    """name -> function of x (vector or scalar), the constant reaching a loop body. (No
    product feeds an addition here: XLA:CPU contracts those into fused multiply-adds in
    float64 as well, which is another matter.)"""
    c = {}

    def w_carry(x):   # while: n (13) and m (20) are invariant carries with constant inits
        def body(s):
            i, v, n, m = s
            return i + 1, m * (v / n), n, m
        return lax.while_loop(lambda s: s[0] < 3, body,
                              (0, x, jnp.asarray(13.0, x.dtype), jnp.asarray(20.0, x.dtype)))[1]
    c["while carry"] = w_carry

    def w_close(x):   # while: the constant is closed over (a body constant)
        n = jnp.asarray(13.0, x.dtype) * 1.0

        def body(s):
            i, v = s
            return i + 1, (v / n) * 20.0
        return lax.while_loop(lambda s: s[0] < 3, body, (0, x))[1]
    c["while closure"] = w_close

    def w_ratio(x):   # diffrax's ConstantStepSize: t0 + (t1 - t0) * (k / n), n a carry
        def body(s):
            k, acc, n, t0, t1 = s
            t = t0 + (t1 - t0) * (k / n)
            return k + 1, jnp.maximum(acc, t * x), n, t0, t1
        f = jnp.asarray(0.0, x.dtype)
        return lax.while_loop(lambda s: s[0] < 13, body,
                              (f, f * x, jnp.asarray(13.0, x.dtype), f,
                               jnp.asarray(20.0, x.dtype)))[1]
    c["while ratio"] = w_ratio

    def s_close(x):
        n = jnp.asarray(13.0, x.dtype)

        def body(v, _):
            return (v / n) * 20.0, None
        return lax.scan(body, x, None, length=3)[0]
    c["scan closure"] = s_close

    def s_carry(x):
        def body(carry, _):
            v, n = carry
            return ((v / n) * 20.0, n), None
        return lax.scan(body, (x, jnp.asarray(13.0, x.dtype)), None, length=3)[0][0]
    c["scan carry"] = s_carry

    def f_loop(x):
        n = jnp.asarray(7.0, x.dtype)
        return lax.fori_loop(0, 3, lambda i, v: (v / n) / 13.0 * 3.0, x)
    c["fori closure"] = f_loop

    def w_traced(x):   # a carry initialised from an argument: no constant, no sinking
        def body(s):
            i, v, n = s
            return i + 1, (v / n) * 20.0, n
        return lax.while_loop(lambda s: s[0] < 3, body, (0, x, x * 0 + 13.0))[1]
    c["while traced carry"] = w_traced

    def cond_const(x):
        n = jnp.asarray(13.0, x.dtype)
        return lax.cond(x.sum() > 0 if x.ndim else x > 0,
                        lambda v, n: (v / n) * 20.0, lambda v, n: (v / n) * 7.0, x, n)
    c["cond operand"] = cond_const
    return c


def run(backend, out):
    if backend == "jaxlite":
        import jaxlite as jax
        import jaxlite.numpy as jnp
        from jaxlite import lax
    else:
        import jax
        import jax.numpy as jnp
        from jax import lax
        jax.config.update("jax_enable_x64", True)
    if backend == "jaxlite":
        jax.config.update("jax_enable_x64", True)
    import ml_dtypes
    rng = np.random.default_rng(0)
    base = [rng.standard_normal(512) * 100 for _ in range(3)]
    results = {}

    def dt(name):
        return np.dtype(getattr(ml_dtypes, name) if name == "bfloat16" else name)

    def inputs(d):
        if d.kind == "c":
            return [(b + 1j * b[::-1]).astype(d) for b in base]
        return [b.astype(d) for b in base]

    for name, (fn, dtypes, ctxs) in _cases(jnp, lax).items():
        for dn in dtypes:
            d = dt(dn)
            x, y, z = inputs(d)
            for ctx in ctxs:
                key = f"{name}|{ctx}|{dn}"
                try:
                    if ctx == "vec":
                        r = np.asarray(jax.jit(fn)(x, y, z))
                    elif ctx == "eager":
                        r = np.asarray(fn(jnp.asarray(x), jnp.asarray(y), jnp.asarray(z)))
                    else:
                        f = jax.jit(fn)
                        r = np.array([np.asarray(f(a, b, cc))
                                      for a, b, cc in zip(x[:64], y[:64], z[:64])])
                except Exception as e:  # noqa: BLE001 (a failing case is a row of its own)
                    r = np.array(f"error: {type(e).__name__}: {e}"[:200])
                results[key] = r
    for dn in ("float32", "float64"):
        d = dt(dn)
        x = inputs(d)[0]
        for name, fn in _loop_cases(jax, jnp, lax, d).items():
            for ctx in ("vec", "scal"):
                key = f"{name}|{ctx}|{dn}"
                try:
                    f = jax.jit(fn)
                    r = np.asarray(f(x)) if ctx == "vec" else \
                        np.array([np.asarray(f(a)) for a in x[:64]])
                except Exception as e:  # noqa: BLE001
                    r = np.array(f"error: {type(e).__name__}: {e}"[:200])
                results[key] = r
    np.savez(out, **{k.replace("/", "÷"): v for k, v in results.items()})


def _bits(a):
    a = np.asarray(a)
    if a.dtype.kind in "fc" or a.dtype.name in ("bfloat16",):
        return a.view(np.uint8)
    return a


def compare(a_file, b_file, show_all=False, only=None):
    a, b = np.load(a_file, allow_pickle=False), np.load(b_file, allow_pickle=False)
    rows, ndiff = [], 0
    for k in a.files:
        if only and only not in k:
            continue
        ra, rb = a[k], b[k] if k in b.files else np.array("missing")
        if ra.dtype.kind == "U" or rb.dtype.kind == "U":
            same = ra.dtype.kind == rb.dtype.kind == "U"
            n = "error" if not same else "both err"
        else:
            ok = ra.shape == rb.shape and ra.dtype == rb.dtype
            bad = ~np.all((_bits(ra).reshape(ra.size, -1) == _bits(rb).reshape(rb.size, -1)),
                          axis=1) if ok else None
            same = ok and not bad.any()
            n = int(bad.sum()) if ok else "shape/dtype"
        ndiff += not same
        if show_all or not same:
            rows.append((k.replace("÷", "/"), "same" if same else f"DIFF ({n})"))
    for r in rows:
        print(f"{r[0]:<45} {r[1]}")
    print(f"{ndiff} of {sum(1 for k in a.files if not only or only in k)} cases differ")
    return ndiff


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["jax", "jaxlite"])
    ap.add_argument("--out")
    ap.add_argument("--all", action="store_true", help="print the matching rows as well")
    ap.add_argument("--only", help="only the cases whose key contains this")
    args = ap.parse_args()
    if args.backend:
        run(args.backend, args.out)
        return 0
    tmp = tempfile.mkdtemp(prefix="xla_simplify_probe")
    files = []
    for be in ("jax", "jaxlite"):
        out = os.path.join(tmp, f"{be}.npz")
        subprocess.run([sys.executable, __file__, "--backend", be, "--out", out],
                       check=True)
        files.append(out)
    return 1 if compare(*files, show_all=args.all, only=args.only) else 0


if __name__ == "__main__":
    sys.exit(main())
