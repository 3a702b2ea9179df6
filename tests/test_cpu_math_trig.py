"""cpu_math.trig: XLA:CPU's float32 sin, cos, tan, asin, acos and atan2, bit for bit (JAX's
goldens, the numba twins, live JAX)."""
import pathlib

import numpy as np
import pytest

from jaxlite._src.cpu_math import trig as K

GOLDENS = pathlib.Path(__file__).parent / "goldens" / "cpu_math_trig.npz"
UNARY = ["sin", "cos", "tan", "asin", "acos"]


def _inputs(n, seed):
    """Random bit patterns, uniform samples over the reduction ranges, specials."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, n // 4, dtype=np.uint64).astype(np.uint32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-40, -1e-40,
                        np.pi / 2, np.pi, 120.0, -120.0, 2.0 ** -12, 2.0 ** 25,
                        np.finfo(np.float32).max], np.float32)
    m = n - n // 4
    return np.concatenate([bits.view(np.float32),
                           rng.uniform(-1.5, 1.5, m // 2).astype(np.float32),
                           rng.uniform(-150, 150, m - m // 2).astype(np.float32),
                           special])


def _same_bits(a, b):
    return np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))


def _call(name, x, x2=None):
    fn = getattr(K, name + "_f32")
    return fn(x) if x2 is None else fn(x, x2)


@pytest.mark.parametrize("name", UNARY + ["atan2"])
def test_goldens(name):
    g = np.load(GOLDENS)
    x = g[name + "_x"].view(np.float32)
    x2 = g[name + "_x2"].view(np.float32) if name + "_x2" in g else None
    got = _call(name, x, x2)
    assert got.dtype == np.float32 and got.shape == x.shape
    bad = _same_bits(got, g[name + "_y"].view(np.float32))
    assert bad.size == 0, (name, x[bad[:5]], got[bad[:5]])


@pytest.mark.parametrize("name", UNARY)
def test_shapes_and_no_warnings(name):
    fn = getattr(K, name + "_f32")
    with np.errstate(all="raise"):
        r0 = fn(np.float32(np.inf))
        r2 = fn(np.full((2, 3), 5.0, np.float32))
    assert r0.shape == () and r2.shape == (2, 3)


def test_atan2_broadcasts():
    y = np.array([[1.0], [-1.0]], np.float32)
    x = np.array([1.0, -2.0, 0.0], np.float32)
    got = K.atan2_f32(y, x)
    assert got.shape == (2, 3) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.arctan2(y, x), rtol=1e-6)


def _twin_loop(numba, f, nargs):
    if nargs == 1:
        @numba.njit(error_model="numpy")
        def loop(x, x2, out):
            for i in range(x.size):
                out[i] = f(x[i])
    else:
        @numba.njit(error_model="numpy")
        def loop(x, x2, out):
            for i in range(x.size):
                out[i] = f(x[i], x2[i])
    return loop


@pytest.mark.parametrize("name", UNARY + ["atan2"])
def test_numba_twin(name):
    numba = pytest.importorskip("numba")
    from jaxlite._src.cpu_math import trig_nb
    x = _inputs(1 << 20, 1)
    x2 = _inputs(x.size, 3)[:x.size] if name == "atan2" else None
    loop = _twin_loop(numba, getattr(trig_nb, name + "_f32"), 1 if x2 is None else 2)
    out = np.empty_like(x)
    loop(x, x if x2 is None else x2, out)
    bad = _same_bits(out, _call(name, x, x2))
    assert bad.size == 0, (name, x[bad[:5]])


@pytest.mark.parametrize("name", UNARY + ["atan2"])
def test_live_jax(name):
    jax = pytest.importorskip("jax")
    x = _inputs(1 << 20, 2)
    fn = jax.jit(getattr(jax.lax, name))
    if name == "atan2":
        x2 = _inputs(x.size, 4)[:x.size]
        want, got = np.asarray(fn(x, x2)), K.atan2_f32(x, x2)
    else:
        want, got = np.asarray(fn(x)), _call(name, x)
    bad = _same_bits(got, want)
    assert bad.size == 0, (name, x[bad[:5]])
