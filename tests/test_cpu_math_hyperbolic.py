"""cpu_math.hyperbolic: XLA:CPU's float32 kernels bit for bit against JAX (stored goldens, and
live when jax is installed), and their numba twins against the NumPy kernels."""
import importlib
import pathlib

import numpy as np
import pytest

from jaxlite._src.cpu_math import hyperbolic as K
from jaxlite._src.cpu_math import table

FAMILY = "hyperbolic"
NAMES = ["tanh", "logistic", "sinh", "cosh"]
JAX_FNS = {"tanh": "jax.numpy.tanh", "logistic": "jax.nn.sigmoid", "sinh": "jax.numpy.sinh",
           "cosh": "jax.numpy.cosh"}
GOLDENS = pathlib.Path(__file__).parent / "goldens" / f"cpu_math_{FAMILY}.npz"


def _same_bits(a, b):
    """Elements where float32 ``a`` and ``b`` differ (any NaN equals any NaN)."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    same = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
    return np.flatnonzero(~same)


def _assert_bits(x, want, got):
    bad = _same_bits(want, got)
    assert bad.size == 0, (f"{bad.size} of {x.size} differ; first: x={x[bad[:5]]!r} "
                           f"want={np.asarray(want)[bad[:5]]!r} got={np.asarray(got)[bad[:5]]!r}")


def _inputs(n, seed):
    """Random float32 bit patterns and values of moderate size (both signs)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = rng.uniform(-12, 12, n - n // 2).astype(np.float32)
    return np.concatenate([bits, near])


@pytest.mark.parametrize("name", NAMES)
def test_registered(name):
    assert table.UNARY[name] == (FAMILY, f"{name}_f32")


@pytest.mark.parametrize("name", NAMES)
def test_goldens(name):
    data = np.load(GOLDENS)
    x = data[name + "_x"].view(np.float32)
    want = data[name + "_y"].view(np.float32)
    got = getattr(K, name + "_f32")(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    _assert_bits(x, want, got)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_no_warnings(name):
    f = getattr(K, name + "_f32")
    x = np.array([[0.5, -2.0, np.nan], [np.inf, -np.inf, 1e-40]], np.float32)
    with np.errstate(all="raise"):
        y = f(x)
        s = f(np.float32(0.25))
    assert y.shape == x.shape and y.dtype == np.float32
    assert s.shape == () and s.dtype == np.float32
    assert y is not x
    _assert_bits(x[0, :1], f(x[0, :1]), y[0, :1])


@pytest.mark.parametrize("name", NAMES)
def test_numba_twin(name):
    numba = pytest.importorskip("numba")
    twin = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{FAMILY}_nb"),
                   name + "_f32")

    @numba.njit(error_model="numpy")
    def loop(x, out):
        for i in range(x.shape[0]):
            out[i] = twin(x[i])

    x = _inputs(1 << 20, 1)
    out = np.empty_like(x)
    loop(x, out)
    _assert_bits(x, getattr(K, name + "_f32")(x), out)


@pytest.mark.parametrize("name", NAMES)
def test_live_jax(name):
    pytest.importorskip("jax")
    import jax
    mod, attr = JAX_FNS[name].rsplit(".", 1)
    f = jax.jit(getattr(importlib.import_module(mod), attr))
    x = _inputs(1 << 20, 2)
    _assert_bits(x, np.asarray(f(x)), getattr(K, name + "_f32")(x))
