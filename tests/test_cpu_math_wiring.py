"""The primitives listed in ``cpu_math.table`` compute their float results with XLA:CPU's
kernels wherever they run: eagerly, in tier 1's code, in tier 2's fused numba loops and
loop kernels, under vmap, for float16/bfloat16 (through float32), with the NumPy kernel and
the numba-compiled ufunc giving the same bits; other dtypes keep NumPy's results.
(The kernels' own bits against JAX are checked by the test_cpu_math_<family> files.)"""
import importlib

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.compiler import fusion
from jaxlite._src.cpu_math import dispatch, table
from jaxlite._src.prims import elementwise as ew
from jaxlite._src.prims import special

HAVE_NUMBA = fusion.numba_module() is not None
PRIMS = {p.name: p for mod in (ew, special) for p in vars(mod).values()
         if getattr(p, "numba_scalar", None) is not None and hasattr(p, "bind")}
UNARY = sorted(table.UNARY)
BINARY = sorted(table.BINARY)
# a domain where each function is finite and interesting
DOMAIN = {"log": (0.01, 50.0), "log1p": (-0.9, 50.0), "acosh": (1.0, 30.0),
          "asin": (-1.0, 1.0), "acos": (-1.0, 1.0), "atanh": (-0.99, 0.99),
          "erf_inv": (-0.99, 0.99), "lgamma": (0.1, 20.0), "digamma": (0.1, 20.0),
          "rsqrt": (0.01, 50.0), "pow": (0.01, 10.0)}


def _inputs(name, n=257, seed=0):
    lo, hi = DOMAIN.get(name, (-6.0, 6.0))
    x = np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32)
    x[:4] = np.array([lo, hi, (lo + hi) / 2, lo / 2 + hi / 2], np.float32)
    return x


def _numpy_kernel(name):
    fam, fn = {**table.UNARY, **table.BINARY}[name]
    return getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), fn)


def _args(name):
    x = _inputs(name)
    if name in table.BINARY:
        return x, _inputs(name, seed=1) if name != "pow" else \
            np.random.default_rng(1).uniform(-3, 3, x.size).astype(np.float32)
    return (x,)


def _bits(v):
    return np.asarray(v).view(np.uint32)


def _ref(name, args):
    """The NumPy kernel's result (broadcast operands)."""
    with np.errstate(all="ignore"):
        return _numpy_kernel(name)(*np.broadcast_arrays(*args))


def _bind(name):
    return lambda *a: PRIMS[name].bind(*a)


def test_every_table_entry_has_a_primitive_and_twin():
    for name in UNARY + BINARY:
        assert name in PRIMS, f"{name}: no primitive takes its kernel (xla_class)"
        fam, fn = {**table.UNARY, **table.BINARY}[name]
        assert callable(_numpy_kernel(name))
    if HAVE_NUMBA:
        from jaxlite._src.cpu_math import nb_all
        for name in UNARY + BINARY:
            assert hasattr(nb_all, name)


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_eager_and_tier1_use_the_kernel(name):
    args = _args(name)
    want = _bits(_ref(name, args))
    np.testing.assert_array_equal(_bits(_bind(name)(*map(jnp.asarray, args))), want)
    with jax.config.override("jaxlite_tier", 1):
        got = jax.jit(_bind(name))(*args)
    np.testing.assert_array_equal(_bits(got), want)
    # vmap over rows gives the same elements
    got = jax.vmap(_bind(name))(*[a[:256].reshape(16, 16) for a in args])
    np.testing.assert_array_equal(_bits(got).reshape(-1), want[:256])


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_tier2_twin_gives_the_kernels_bits(name, monkeypatch):
    """A fused numba cluster and a loop kernel (fori_loop) compute the twin."""
    monkeypatch.setattr(fusion, "NUMBA_MIN_OPS", 1)
    args = _args(name)
    f = _bind(name)

    def fused(*a):   # the op between two cheap ones: one fused numba loop
        return f(*[lax.neg(lax.neg(v)) for v in a]) * np.float32(1)

    with jax.config.override("jaxlite_tier", 2):
        got = jax.jit(fused)(*args)
    np.testing.assert_array_equal(_bits(got), _bits(_ref(name, args)))

    def looped(*a):
        def body(i, c):
            return c + f(*a)
        return lax.fori_loop(0, 2, body, jnp.zeros_like(a[0]))

    with jax.config.override("jaxlite_tier", 2):
        got = jax.jit(looped)(*args)
    r = _ref(name, args)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_bits(got), _bits((np.float32(0) + r) + r))


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_compiled_ufunc_equals_numpy_kernel(name):
    k = dispatch.kernel(name, 2 if name in table.BINARY else 1)
    u = k._build()
    assert u is not None
    args = _args(name)
    # all float32 specials and random bit patterns
    rng = np.random.default_rng(5)
    pats = rng.integers(0, 2 ** 32, 1 << 16, dtype=np.uint64).astype(np.uint32).view(np.float32)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38, -3.4e38, 1.0,
                   -1.0, 0.5, 2.0], np.float32)
    xs = np.concatenate([args[0], pats, sp])
    if name in table.BINARY:
        ys = np.concatenate([args[1], pats[::-1], sp[::-1]])
        cases = (xs, ys)
    else:
        cases = (xs,)
    with np.errstate(all="ignore"):
        want = _numpy_kernel(name)(*cases)
        got = u(*cases)
    same = (_bits(got) == _bits(want)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (name, xs[~same][:5], got[~same][:5], want[~same][:5])


@pytest.mark.parametrize("name", UNARY + BINARY)
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_floats_through_float32(name, dt):
    if dt in table.HALF_OWN_STEPS.get(name, ()):
        pytest.skip(f"XLA rounds {name}'s steps to {dt}: NumPy's half code")
    args = _args(name)
    half = [np.asarray(a).astype(jnp.dtype(dt)) for a in args]
    want = np.asarray(_ref(name, [h.astype(np.float32) for h in half])).astype(jnp.dtype(dt))
    got = np.asarray(_bind(name)(*map(jnp.asarray, half)))
    assert got.dtype == jnp.dtype(dt)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_float64_keeps_numpy(name):
    with jax.config.override("jax_enable_x64", True):
        args = [np.asarray(a, np.float64) for a in _args(name)]
        got = np.asarray(_bind(name)(*map(jnp.asarray, args)))
        assert got.dtype == np.float64
        with np.errstate(all="ignore"):
            if name in table.F64:   # (XLA's own float64 function: cpu_math's kernel)
                want = dispatch.kernel(name, len(args), np.float64).numpy(*args)
            else:
                want = PRIMS[name]._numpy_impl(*args)
        np.testing.assert_array_equal(got, want)


def test_worker_threads_keep_the_callers_numpy_errstate():
    # NumPy's errstate is a context variable: the worker threads that split a large
    # elementwise kernel run it under the caller's errstate (numpyro's von Mises sampler
    # hit "divide by zero encountered" warnings from a worker while the caller, like
    # JAX, silences floating-point errors)
    import numpy as np

    from jaxlite._src.cpu_math import threads

    import threading
    seen = []
    n = threads.PARALLEL_MIN * 2

    def run():
        with np.errstate(divide="ignore"):
            threads.parallel_chunks(lambda lo, hi: seen.append(np.geterr()["divide"]), n)
    t = threading.Thread(target=run, daemon=True)   # (a hung pool fails, not hangs)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "parallel_chunks did not finish in 60 s"
    assert seen and set(seen) == {"ignore"}


@pytest.mark.parametrize("name", ["exp", "xla_fma"])
def test_out_buffer_not_c_contiguous_gets_the_result(name):
    """Tier 1 hands a dying operand's buffer to a kernel as ``out=``; a Fortran-ordered
    one (an elementwise result of transposed views) must receive the result, as a NumPy
    ufunc's ``out=`` would."""
    rng = np.random.default_rng(3)
    nargs = 3 if name == "xla_fma" else 1
    fam, fn = table.ALL[name]
    ref_fn = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), fn)
    args = [np.asfortranarray(rng.uniform(-2, 2, (4, 64)).astype(np.float32))
            for _ in range(nargs)]
    want = ref_fn(*args)
    out = args[-1]
    got = dispatch.impl(name, nargs, None)(*args, out=out)
    assert got is out
    np.testing.assert_array_equal(out, want)
