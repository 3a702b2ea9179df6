"""cpu_math's float64 kernels (``table.F64``: XLA's own float64 functions, e.g.
``xla.exp.f64``, ``xla.tanh.f64``, the C library's functions it calls, ``libm64``, and its
expansions over them, ``special64``): stored JAX results (from an x86-64 processor with FMA, the form
``xla64.FUSED`` picks there), live JAX when installed, the numba twins against the NumPy
kernels (with the processor's FMA setting and the other one), and the wiring into the
primitive (eager, tier 1, tier 2) under x64."""
import importlib
import os
import pathlib
import platform
import subprocess
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.cpu_math import libm64, rsqrt64, table, xla64

GOLDENS = pathlib.Path(__file__).parent / "goldens" / "cpu_math_f64.npz"
# the table's families whose results are the C library's (its version decides them)
LIBM_FAMILIES = {"libm64"}

# inputs and jax.jit(jnp.exp) results (jax 0.10.2, x64, AMD EPYC with FMA), as bits
EXP_X = [0x3ff403e90a372f4c, 0x400fc6f04af6bc00, 0x40060e0afdde436e, 0xc005fbc1ba4d4ed6,
         0xbffff93060571d6e, 0x400de25fe346ce28, 0xc013ca1551eb7ebe, 0x4009b2c20cd7fba0,
         0x4007c3fb5dda83e8, 0xbfd485898e33c970, 0xbfff83cab33d5d98, 0xc001b9d7ed44abf7,
         0xc07572ebd6288bdc, 0xc0533929b9e756d8, 0x401978625095a180, 0x4052b95cdce9e3d8,
         0x4085ad9a69a449ce, 0x40799ba082712ba8, 0x40862e3d70a3d70a, 0xc086231eb851eb85,
         0x3f50624dd2f1a9fc, 0xbefa36e2eb1c432d]
EXP_Y = [0x400bf30cbfba00ad, 0x404a8c891572e229, 0x402f802223adedaa, 0x3fb06644047ca881,
         0x3fc15a0c00205399, 0x4044f4889a28de70, 0x3f7d173967dccaae, 0x4038d5f3c5715199,
         0x40338165a628af89, 0x3fe738bea902320d, 0x3fc1db344e56109f, 0x3fbbec2a5521cac7,
         0x20fdb22e4cc4857e, 0x3900c18693c590be, 0x408235166a9f4f1d, 0x46b097d48277055f,
         0x7e7bd24649f736af, 0x64e1468a1beefade, 0x7fefe9ce5c4c52b4, 0x101a5ff6ed496b,
         0x3ff0041919b7ee34, 0x3fefffcb92651cce]
# tanh's: inputs and jax.jit(jnp.tanh) results, as bits
TANH_X = [0xbff09c544efaec5c, 0x400763a868eb419c, 0xbff1675cc86f19d3,
          0x3ffbb360eefdb134, 0x4001c149d05eb500, 0xbfe4e9664b76b8b8,
          0xbfd7da75d923b8b0, 0xbfe86ea55ab56158, 0xc002ddc113ae12ad,
          0xbfc0278f5b5f3d60, 0xc029dd6294fc2f2b, 0xc0284914e62b1c53,
          0xc02f86df44e5b3c8, 0xc02e9d114ad43823, 0x402f61fd04e591ac,
          0xc00ece6b4c5e2cc0, 0x3ee4f8b588e368f1, 0xbe29c511dc3a41df,
          0x4031b6d58f246197, 0x4033fd70a3d70a3d]
TANH_Y = [0xbfe8de84cfcd7a38, 0x3fefd0d34f782e16, 0xbfe9793dbd8de9ab,
          0x3fee0dff3c1b6731, 0x3fef40c100b379fc, 0xbfe25e55c203c7f4,
          0xbfd6ce94fc2f6a58, 0xbfe49495a7f627de, 0xbfef6ebac061ad83,
          0xbfc011bdd5b59246, 0xbfeffffffffe646f, 0xbfeffffffff83337,
          0xbfeffffffffffe92, 0xbfeffffffffffc70, 0x3feffffffffffe5a,
          0xbfeff8989016e867, 0x3ee4f8b588e06854, 0xbe29c511dc3a41df,
          0x3feffffffffffff9, 0x3feffffffffffff9]
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.79, 709.78, -708.4, -708.39,
                     -745.2, 1e-310, -1e-310, 1e300, -1e300], np.float64)


def _inputs(seed, n=1 << 18):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 63, n // 4, dtype=np.int64).view(np.float64)
    bits = np.where(rng.random(bits.size) < 0.5, -bits, bits)
    return np.concatenate([rng.uniform(-5, 5, n // 2), rng.uniform(-750, 750, n // 4),
                           bits, SPECIALS])


def _same(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ok = (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))
    return bool(ok.all()), np.flatnonzero(~ok)[:5]


@pytest.mark.parametrize("fn,xs,ys", [("exp_f64", EXP_X, EXP_Y), ("tanh_f64", TANH_X, TANH_Y)])
def test_goldens(fn, xs, ys):
    if not xla64.FUSED:
        pytest.skip("the stored results are of a processor with FMA")
    x = np.array(xs, np.uint64).view(np.float64)
    ok, bad = _same(getattr(xla64, fn)(x), np.array(ys, np.uint64).view(np.float64))
    assert ok, x[bad]


def test_tanh_specials():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 20.0, -20.0, 1e-310, -1e-310, 1e300])
    y = xla64.tanh_f64(x)
    want = np.array([0.0, -0.0, 1.0, -1.0, np.nan, 1.0, -1.0, 0.0, -0.0, 1.0])
    assert _same(y, want)[0], y


def test_exp_specials():
    y = xla64.exp_f64(SPECIALS)
    assert y[0] == 1 and y[1] == 1 and y[2] == np.inf and y[3] == 0 and np.isnan(y[4])
    assert y[5] == np.inf and np.isfinite(y[6]) and y[7] == 0 and y[8] > 0
    assert y[9] == 0 and y[10] == 1 and y[11] == 1 and y[12] == np.inf and y[13] == 0


def test_fma_f64_is_fused():
    a = np.float64(1 + 2.0 ** -30)
    b = np.float64(1 - 2.0 ** -30)
    # a * b = 1 - 2**-60: the plain product rounds to 1, the fused one keeps it
    assert a * b - 1.0 == 0.0
    assert xla64.fma_f64(a, b, -1.0) == -(2.0 ** -60)


def test_fma64_np_is_the_fused_result_for_the_kernels():
    """The kernels' cheap double-double multiply-add (``fma.fma64_np``): the correctly
    rounded fma's bits on operands of moderate size, IEEE's sign of an exact zero sum
    (``-0 * 1 + -0`` is ``-0``: ``atanh(-0)``), and the plain sum where the product
    overflows (not NaN: ``lgamma`` of large inputs)."""
    from jaxlite._src.cpu_math.fma import fma64_np, fma_f64
    rng = np.random.RandomState(5)
    a, b = rng.randn(2, 20000) * 10.0 ** rng.randint(-30, 30, (2, 20000))
    c = -(a * b) * rng.choice([1.0, 1 + 2.0 ** -40, 0.5], 20000)    # (cancellations)
    assert fma64_np(a, b, c).tobytes() == fma_f64(a, b, c).tobytes()
    z = fma64_np(np.array([-0.0, 0.0, -0.0]), np.array([1.0, -1.0, -1.0]), -0.0)
    assert list(np.signbit(z)) == [True, True, False] and not z.any()
    big = fma64_np(np.array([1e200, -1e200]), 1e200, np.array([1.0, -np.inf]))
    assert list(big) == [np.inf, -np.inf]


# (the multiply-adds take three operands: test_numba_twin_multiply_add checks them)
LIBM64 = sorted(n for n in table.F64 if n not in table.TERNARY)
TERNARY64 = sorted(n for n in table.F64 if n in table.TERNARY)


def _operands(name, seed, n=1 << 18):
    # (a multiple of 256 elements: XLA's vectorised loops have no scalar tails, where its
    # atan is another function, see libm64)
    x = _inputs(seed, n)[SPECIALS.size:]
    if name not in ("pow", "atan2"):
        return (x,)
    y = _inputs(seed + 100, n)[np.random.default_rng(seed).permutation(x.size)]
    if name == "pow":
        y[: n // 8] = np.random.default_rng(seed).integers(-20, 20, n // 8)
    return x, y


def _twin_matches(name, n=1 << 18):
    """The numba twin of ``name`` gives its NumPy kernel's bits on ``_operands``."""
    import numba
    fam, fn = table.F64[name]
    twin = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}_nb"), fn)
    kern = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), fn)
    args = _operands(name, 1, n)
    if len(args) == 1:
        @numba.njit(error_model="numpy")
        def loop(x, out):
            for i in range(x.size):
                out[i] = twin(x[i])
    else:
        @numba.njit(error_model="numpy")
        def loop(x, y, out):
            for i in range(x.size):
                out[i] = twin(x[i], y[i])
    out = np.empty_like(args[0])
    with np.errstate(all="ignore"):
        loop(*args, out)
        ok, bad = _same(kern(*args), out)
    return ok, [a[bad] for a in args]


@pytest.mark.parametrize("name", LIBM64)
def test_numba_twin(name):
    pytest.importorskip("numba")
    ok, bad = _twin_matches(name)
    assert ok, bad


def test_numba_twins_other_fma_setting():
    """The kernels that fuse multiply-adds where the processor has FMA give the twins'
    bits with the other setting too (``JAXLITE_FMA``), in a fresh process."""
    pytest.importorskip("numba")
    names = ["exp", "log1p", "atanh", "erfc", "erf_inv", "lgamma", "rsqrt"]
    here = str(pathlib.Path(__file__).parent)
    code = (f"import sys; sys.path.insert(0, {here!r}); import test_cpu_math_f64 as t; "
            f"bad = [n for n in {names!r} if not t._twin_matches(n, 1 << 14)[0]]; "
            "print('BAD', bad); sys.exit(1 if bad else 0)")
    env = dict(os.environ, JAXLITE_FMA="0" if xla64.FUSED else "1")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=900, check=False)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]


@pytest.mark.parametrize("name", LIBM64)
def test_stored_goldens(name):
    """Real JAX's float64 results (tools/make_cpu_math_f64_goldens.py), where this
    processor and C library compute as the ones they come from."""
    g = np.load(GOLDENS)
    fam = table.F64[name][0]
    if bool(g["fused"]) != xla64.FUSED and fam not in LIBM_FAMILIES:
        pytest.skip("goldens of a processor with the other FMA setting")
    if fam in LIBM_FAMILIES and platform.libc_ver()[0] != "glibc":
        pytest.skip("goldens of glibc's functions")
    if name == "rsqrt" and str(g["rsqrt_form"]) != rsqrt64.rsqrt_form64().reason:
        pytest.skip(f"goldens of another rsqrt form: {g['rsqrt_form']}")
    kern = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), table.F64[name][1])
    args = [g[name + "_x"].view(np.float64)]
    if name + "_x2" in g:
        args.append(g[name + "_x2"].view(np.float64))
    with np.errstate(all="ignore"):
        ok, bad = _same(kern(*args), g[name + "_y"].view(np.float64))
    assert ok, [a[bad] for a in args]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's functions")
def test_libm_subnormal_operands():
    """What XLA:CPU's DAZ/FTZ modes make of glibc's functions (jax.jit, x64): a tiny
    sine is its operand, a subnormal logarithm is -inf, a subnormal ``y`` of ``atan2`` is
    read as zero by glibc's sign tests (``-pi`` for a large negative ``x``, ``pi`` for a
    tiny one), a subnormal base of ``pow`` is ``2^-1075`` after glibc's sign rules."""
    s = 1e-309
    assert libm64.sin_f64(np.array([s]))[0] == s
    assert libm64.log_f64(np.array([-s, s])).tolist() == [-np.inf, -np.inf]
    y = libm64.atan2_f64(np.array([s, -s, s, s, -s]), np.array([-2.0, -2.0, -(2.0 ** -980),
                                                                 2.0, 2.0]))
    assert y[:3].tolist() == [-np.pi, -np.pi, np.pi]
    assert y[3] == 0 and not np.signbit(y[3]) and y[4] == 0 and np.signbit(y[4])
    p = libm64.pow_f64(np.array([s, -s, -s, -s, s, -2.0, 2.0]),
                       np.array([0.5, 0.5, 2.0, 3.0, -0.1, s, s]))
    assert p[0] == 1.5717277847026288e-162 and np.isnan(p[1])
    assert p[2] == 0 and not np.signbit(p[2]) and p[3] == 0 and np.signbit(p[3])
    assert p[4] == 2.2946926991272498e+32 and np.isnan(p[5]) and p[6] == 1.0


@pytest.mark.parametrize("name", TERNARY64)
def test_numba_twin_multiply_add(name):
    """The float64 multiply-adds (the FMA instruction in numba, an emulation in NumPy)
    agree bit for bit, also where the products and sums are huge, tiny or cancel."""
    numba = pytest.importorskip("numba")
    import importlib
    fam, fn = table.F64[name]
    twin = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}_nb"), fn)
    kern = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), fn)

    @numba.njit(error_model="numpy")
    def loop(a, b, c, out):
        for i in range(a.size):
            out[i] = twin(a[i], b[i], c[i])
    r = np.random.default_rng(4)
    n = 1 << 14
    for sa, sb, sc in ((1.0, 1.0, 1.0), (2.0 ** 990, 2.0 ** -40, 2.0 ** 950),
                       (2.0 ** -520, 2.0 ** -520, 2.0 ** -1060), (1e300, 1e8, 1e308)):
        a, b = r.standard_normal(n) * sa, r.standard_normal(n) * sb
        out = np.empty(n)
        with np.errstate(all="ignore"):
            c = np.where(r.random(n) < 0.5, -(a * b), r.standard_normal(n) * sc)
            loop(a, b, c, out)
            ok, bad = _same(kern(a, b, c), out)
        assert ok, (a[bad], b[bad], c[bad])


@pytest.mark.parametrize("name", LIBM64)
def test_live_jax(name):
    rjax = pytest.importorskip("jax")
    fam, fn = table.F64[name]
    kern = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), fn)
    args = _operands(name, 2, 1 << 16 if fam in LIBM_FAMILIES else 1 << 18)
    prev = rjax.config.jax_enable_x64
    rjax.config.update("jax_enable_x64", True)
    try:
        want = np.asarray(rjax.jit(getattr(rjax.lax, name))(*args))
    finally:
        rjax.config.update("jax_enable_x64", prev)
    assert want.dtype == np.float64
    with np.errstate(all="ignore"):
        ok, bad = _same(want, kern(*args))
    assert ok, [a[bad] for a in args]


@pytest.mark.parametrize("tier", [1, 2])
def test_exp_wired_under_x64(tier):
    x = _inputs(3, 1 << 12)
    want = xla64.exp_f64(x)
    with jax.experimental.enable_x64():
        assert _same(jnp.exp(x), want)[0]
        with jax.config.override("jaxlite_tier", tier):
            got = jax.jit(lambda a: (jnp.exp(a) * 2.0, a + 1.0))(x)[0]
    assert _same(got, want * 2.0)[0]


@pytest.mark.parametrize("tier", [1, 2])
def test_pow_lgamma_wired_under_x64(tier):
    """A binary float64 kernel (pow) and an expansion (lgamma) in every tier."""
    x = np.abs(_inputs(4, 1 << 12))
    y = _inputs(5, 1 << 12)[: x.size]
    want_p = libm64.pow_f64(x, y)
    special64 = importlib.import_module("jaxlite._src.cpu_math.special64")
    want_g = special64.lgamma_f64(y)
    with jax.experimental.enable_x64():
        assert _same(jnp.power(x, y), want_p)[0]
        assert _same(jax.lax.lgamma(y), want_g)[0]
        with jax.config.override("jaxlite_tier", tier):
            got_p, got_g = jax.jit(lambda a, b: (a ** b, jax.lax.lgamma(b)))(x, y)
    assert _same(got_p, want_p)[0] and _same(got_g, want_g)[0]


def test_exp_twin_edges():
    """The float64 exp twin (branch-free, ``ldexp`` as two power-of-two products) gives the
    NumPy kernel's bits where ``ldexp`` is delicate: ``n = 1024`` at the top, results near
    the subnormal range at the bottom, the clamps' neighbours, NaN and infinities."""
    numba = pytest.importorskip("numba")
    from jaxlite._src.cpu_math import xla64_nb
    hi, lo = xla64.EXP64["HI"], xla64.EXP64["LO"]
    x = np.concatenate([SPECIALS, np.nextafter(hi, [-np.inf, np.inf]), [hi, lo],
                        np.nextafter(lo, [-np.inf, np.inf]), np.linspace(709.0, hi, 4001),
                        np.linspace(lo, -700.0, 4001), np.linspace(-750, 750, 20001),
                        np.linspace(-1e-8, 1e-8, 101)])
    for name in ("exp_f64", "exp2_f64", "cosh_f64", "logistic_f64"):
        twin = getattr(xla64_nb, name)

        @numba.njit(error_model="numpy")
        def loop(v, out, twin=twin):
            for i in range(v.size):
                out[i] = twin(v[i])
        out = np.empty_like(x)
        with np.errstate(all="ignore"):
            loop(x, out)
            ok, bad = _same(getattr(xla64, name)(x), out)
        assert ok, (name, x[bad])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's functions")
@pytest.mark.parametrize("name", sorted(libm64.FNS))
def test_libm_math_module_path(name):
    """The NumPy kernels' per-element path (Python's ``math`` function where it is the C
    library's, ctypes elsewhere) gives the C library's bits (ctypes on every element) on
    specials, random bit patterns and domain edges."""
    if libm64._c_function(name) is None:
        pytest.skip("no C library to call")
    edges = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 1e308, -1e308, 5e-324, 1e-310,
                      np.inf, -np.inf, np.nan, 1075.0, -1075.0], np.float64)
    x = np.concatenate([_inputs(7, 1 << 12), edges])
    args = (x,) if libm64.FNS[name][0] == 1 else \
        (np.repeat(x, edges.size)[: 1 << 14],
         np.tile(np.concatenate([edges, _inputs(8, 1 << 8)]), 1 << 7)[: 1 << 14])
    args = np.broadcast_arrays(*args)
    with np.errstate(all="ignore"):
        got = libm64._per_element(name, args)
        want = np.asarray(libm64._c_function(name)(*args), np.float64)
    assert np.array_equal(got.view(np.int64), want.view(np.int64)), \
        [a[got.view(np.int64) != want.view(np.int64)][:5] for a in args]


def test_f64_kernel_takes_numba_at_once_for_large_calls():
    """One eager float64 call on ``NUMBA_MIN_SLOW`` elements loads numba (the NumPy kernels
    call the C library per element from Python: a 1M-element call took ~1 s in them)."""
    pytest.importorskip("numba")
    code = ("import numpy as np, jaxlite as jax, jaxlite.numpy as jnp\n"
            "from jaxlite._src.cpu_math import accel, dispatch\n"
            "jax.config.update('jax_enable_x64', True)\n"
            "jnp.log(np.linspace(1.0, 2.0, accel.NUMBA_MIN_SLOW)).block_until_ready()\n"
            "print('UFUNC', dispatch.kernel('log', 1, np.float64).ufunc is not None)\n")
    env = {k: v for k, v in os.environ.items() if k != "JAXLITE_NUMBA"}
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=900, check=False)
    assert "UFUNC True" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
