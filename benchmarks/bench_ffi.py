"""FFI call speed: the test RMS-norm handler (tests/ffi/handlers.cc, compiled here against
jaxlib's headers) called eagerly and under jit on a small and a large array, next to the
same computation in NumPy and the same compiled handler called by JAX (when installed).
Run: ``python benchmarks/bench_ffi.py`` (needs a C++ compiler and jaxlib's headers).
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import jaxlite
from bench_core import row, timeit

try:
    import jax
except ImportError:  # JAX is optional
    jax = None

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "tests", "ffi", "handlers.cc")


def build(tmp):
    cxx = shutil.which("g++") or shutil.which("c++")
    spec = importlib.util.find_spec("jaxlib")
    if cxx is None or spec is None:
        sys.exit("bench_ffi: needs a C++ compiler and jaxlib's XLA FFI headers")
    inc = os.path.join(list(spec.submodule_search_locations)[0], "include")
    out = os.path.join(tmp, "handlers.so")
    subprocess.run([cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-w", "-I", inc, SOURCE,
                    "-o", out, "-lpthread"], check=True, timeout=300)
    return ctypes.CDLL(out)


def numpy_rms(x, eps=np.float32(1e-5)):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        lib = build(tmp)
        apis = [jaxlite] + ([jax] if jax is not None else [])
        for api in apis:
            api.ffi.register_ffi_target("rmsnorm", api.ffi.pycapsule(lib.RmsNorm))
        print(f"{'benchmark':34s} {'jaxlite':>12s} {'numpy':>12s} {'jax':>12s}")
        eps = np.float32(1e-5)
        for shape in [(4, 8), (1000, 1000)]:
            x = np.random.RandomState(0).randn(*shape).astype(np.float32)
            t_np = timeit(lambda: numpy_rms(x), repeat=5)
            times = {}
            for api in apis:
                xa = api.numpy.asarray(x)
                f = api.ffi.ffi_call("rmsnorm", api.ShapeDtypeStruct(shape, np.float32))
                g = api.jit(lambda v, f=f: f(v, eps=eps))
                api.block_until_ready(g(xa))
                times[api.__name__] = (
                    timeit(lambda: api.block_until_ready(f(xa, eps=eps)), repeat=5),
                    timeit(lambda: api.block_until_ready(g(xa)), repeat=5))
            j = times.get("jax", (None, None))
            row(f"ffi rms_norm eager {shape}", times["jaxlite"][0], t_np, j[0])
            row(f"ffi rms_norm jit {shape}", times["jaxlite"][1], t_np, j[1])


if __name__ == "__main__":
    main()
