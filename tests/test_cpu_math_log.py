"""cpu_math.log: XLA:CPU's float32 log and log1p, bit for bit (JAX's goldens, the numba
twins, live JAX)."""
import pathlib

import numpy as np
import pytest

from jaxlite._src.cpu_math import log as K

GOLDENS = pathlib.Path(__file__).parent / "goldens" / "cpu_math_log.npz"
NAMES = ["log", "log1p"]


def _inputs(n, seed):
    """Random bit patterns, uniform samples near the functions' domains, specials."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, n // 2, dtype=np.uint64).astype(np.uint32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-40, -1e-40,
                        np.finfo(np.float32).tiny, np.finfo(np.float32).max,
                        0.41421356, -0.41421356, -0.99999994], np.float32)
    return np.concatenate([bits.view(np.float32),
                           rng.uniform(-1, 4, n - n // 2).astype(np.float32), special])


def _same_bits(a, b):
    return np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))


@pytest.mark.parametrize("name", NAMES)
def test_goldens(name):
    g = np.load(GOLDENS)
    x = g[name + "_x"].view(np.float32)
    got = getattr(K, name + "_f32")(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    bad = _same_bits(got, g[name + "_y"].view(np.float32))
    assert bad.size == 0, (name, x[bad[:5]], got[bad[:5]])


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_no_warnings(name):
    fn = getattr(K, name + "_f32")
    with np.errstate(all="raise"):
        r0 = fn(np.float32(-1.0))
        r2 = fn(np.full((2, 3), -5.0, np.float32))
    assert r0.shape == () and r2.shape == (2, 3)
    x = np.ones(4, np.float32)
    assert fn(x) is not x


@pytest.mark.parametrize("name", NAMES)
def test_numba_twin(name):
    numba = pytest.importorskip("numba")
    from jaxlite._src.cpu_math import log_nb
    f = getattr(log_nb, name + "_f32")

    @numba.njit(error_model="numpy")
    def loop(x, out):
        for i in range(x.size):
            out[i] = f(x[i])
    x = _inputs(1 << 20, 1)
    out = np.empty_like(x)
    loop(x, out)
    bad = _same_bits(out, getattr(K, name + "_f32")(x))
    assert bad.size == 0, (name, x[bad[:5]])


@pytest.mark.parametrize("name", NAMES)
def test_live_jax(name):
    jax = pytest.importorskip("jax")
    x = _inputs(1 << 20, 2)
    want = np.asarray(jax.jit(getattr(jax.lax, name))(x))
    bad = _same_bits(getattr(K, name + "_f32")(x), want)
    assert bad.size == 0, (name, x[bad[:5]])
