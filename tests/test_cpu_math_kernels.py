"""cpu_math's kernels, every entry of its table: XLA:CPU's float32 results bit for bit
against JAX (stored goldens, written by tools/make_cpu_math_goldens.py from real JAX; and
live when jax is installed), the numba twins against the NumPy kernels on 1M inputs, shapes
and no floating-point warnings. (Their wiring into the primitives: test_cpu_math_wiring.)"""
import importlib
import pathlib

import numpy as np
import pytest

from jaxlite._src.cpu_math import table

GOLDENS = pathlib.Path(__file__).parent / "goldens"
ENTRIES = {**table.UNARY, **table.BINARY}
NAMES = sorted(ENTRIES)
# JAX's function of each primitive (its lax name unless listed)
JAX_NAMES = {"erf_inv": "erf_inv", "logistic": "logistic"}
# kernels whose NumPy version is a stated share of inputs an ulp off (cpu_math.power)
NUMPY_OFF_BY_ULP = {"pow": 1e-5}
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 1e-40, -1e-40,
                     np.finfo(np.float32).tiny, -np.finfo(np.float32).tiny,
                     np.finfo(np.float32).max, -np.finfo(np.float32).max, 0.41421356,
                     -0.41421356, -0.99999994, 0.99999994], np.float32)


def _kernel(name):
    fam, fn = ENTRIES[name]
    return getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), fn)


def _twin(name):
    fam, fn = ENTRIES[name]
    return getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}_nb"), fn)


def _nargs(name):
    return 2 if name in table.BINARY else 1


def _inputs(n, seed):
    """Random float32 bit patterns, moderate values of both signs, and specials."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n // 2, dtype=np.uint64).astype(np.uint32)
    near = rng.uniform(-12, 12, n - n // 2 - SPECIALS.size).astype(np.float32)
    return np.concatenate([bits.view(np.float32), near, SPECIALS])


def _args(name, n, seed):
    x = _inputs(n, seed)
    return (x,) if _nargs(name) == 1 else (x, _inputs(n, seed + 10)[::-1].copy())


def _assert_bits(args, want, got):
    want, got = np.asarray(want, np.float32), np.asarray(got, np.float32)
    same = (want.view(np.uint32) == got.view(np.uint32)) | (np.isnan(want) & np.isnan(got))
    bad = np.flatnonzero(~same.reshape(-1))
    assert bad.size == 0, (f"{bad.size} of {same.size} differ; first: "
                           f"{[a.reshape(-1)[bad[:5]] for a in args]} want="
                           f"{want.reshape(-1)[bad[:5]]!r} got={got.reshape(-1)[bad[:5]]!r}")


@pytest.mark.parametrize("name", NAMES)
def test_goldens(name):
    fam, _ = ENTRIES[name]
    g = np.load(GOLDENS / f"cpu_math_{fam}.npz")
    if name + "_form" in g:     # XLA's result depends on the processor (cpu_math.rsqrt)
        from jaxlite._src.cpu_math import rsqrt
        if str(g[name + "_form"]) != rsqrt.rsqrt_form().reason:
            pytest.skip(f"goldens of another processor: {g[name + '_form']}")
    args = [g[name + "_x"].view(np.float32)]
    if _nargs(name) == 2:
        args.append(g[name + "_x2"].view(np.float32))
    got = _kernel(name)(*args)
    assert got.dtype == np.float32 and got.shape == args[0].shape
    _assert_bits(args, g[name + "_y"].view(np.float32), got)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_no_warnings(name):
    f = _kernel(name)
    x = np.array([[0.5, -2.0, np.nan], [np.inf, -np.inf, 1e-40]], np.float32)
    args = [x] * _nargs(name)
    with np.errstate(all="raise"):
        y = f(*args)
        s = f(*[np.float32(0.25)] * _nargs(name))
    assert y.shape == x.shape and y.dtype == np.float32 and y is not x
    assert np.shape(s) == () and s.dtype == np.float32
    _assert_bits([x[0, :1]], f(*[x[0, :1]] * _nargs(name)), y[0, :1])


def test_binary_kernels_broadcast():
    y = np.array([[1.0], [-1.0]], np.float32)
    x = np.array([1.0, -2.0, 0.0], np.float32)
    for name in table.BINARY:
        got = _kernel(name)(*np.broadcast_arrays(y, x))
        assert got.shape == (2, 3) and got.dtype == np.float32


@pytest.mark.parametrize("name", NAMES)
def test_numba_twin(name):
    numba = pytest.importorskip("numba")
    f = _twin(name)
    if _nargs(name) == 1:
        @numba.njit(error_model="numpy")
        def loop(x, x2, out):
            for i in range(x.size):
                out[i] = f(x[i])
    else:
        @numba.njit(error_model="numpy")
        def loop(x, x2, out):
            for i in range(x.size):
                out[i] = f(x[i], x2[i])
    args = _args(name, 1 << 20, 1)
    out = np.empty_like(args[0])
    loop(args[0], args[-1], out)
    want = _kernel(name)(*args)
    if name in NUMPY_OFF_BY_ULP:   # (the twin is exact there: see test_live_jax)
        off = (want.view(np.int32) - out.view(np.int32)) != 0
        off &= ~(np.isnan(want) & np.isnan(out))
        assert off.mean() <= NUMPY_OFF_BY_ULP[name], off.sum()
        assert np.all(np.abs(want[off].view(np.int32) - out[off].view(np.int32)) == 1)
        return
    _assert_bits(args, want, out)


@pytest.mark.parametrize("name", NAMES)
def test_live_jax(name):
    jax = pytest.importorskip("jax")
    fn = jax.jit(getattr(jax.lax, JAX_NAMES.get(name, name)))
    args = _args(name, 1 << 20, 2)
    want = np.asarray(fn(*args))
    if name in NUMPY_OFF_BY_ULP:   # (the twin, compiled, is the exact one)
        from jaxlite._src.cpu_math import dispatch
        u = dispatch.kernel(name, _nargs(name))._build()
        if u is None:
            pytest.skip("numba not available")
        ok = ~_subnormal_base(name, args)
        _assert_bits([a[ok] for a in args], want[ok], u(*args)[ok])
        return
    _assert_bits(args, want, _kernel(name)(*args))


def _subnormal_base(name, args):
    """Elements ``pow``'s model of ``powf``'s DAZ path may round an ulp off JAX's
    (``cpu_math.power.SUBNORMAL_BASE``); none for other kernels."""
    x = args[0]
    if name != "pow":
        return np.zeros(x.shape, bool)
    return (np.abs(x) < np.finfo(np.float32).tiny) & (x != 0)



def test_atan_is_glibc_atanf_of_xla_vector_loops():
    # XLA:CPU's atan of a 1024-element array (all in its vector loop) is glibc's atanf:
    # JAX 0.10.2 gives atan(0.5) = 0.4636476 there (its scalar code: 0.46364754)
    assert _kernel("atan")(np.full(1024, 0.5, np.float32)).tolist() == [
        np.float32(0.46364760398864746)] * 1024
