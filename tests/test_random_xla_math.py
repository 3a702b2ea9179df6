"""XLA:CPU float32 math of the random samplers: numba's compiled loops (``xla_numba``) give
the NumPy kernels' bits exactly, on random bit patterns (every sign, exponent and NaN
payload) and edge cases; numba is never imported by ``import jaxlite`` or small samples."""
import subprocess
import sys

import numpy as np
import pytest

from jaxlite._src.cpu_math import accel as cpu_accel
from jaxlite._src.random import accel
from jaxlite._src.random import kernels as K
from jaxlite._src.random import xla_math as X

N_PATTERNS = 1 << 18
EDGE = np.array([
    0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, 2.0, 1e-45, -1e-45,
    1.1754942e-38, 1.17549435e-38, -1.17549435e-38, 3.4028235e38, -3.4028235e38, 1e38,
    120.0, -120.0, 119.99999, -119.99999, 0.6744, 0.67440003, 0.7853981, -0.7853982,
    1.5707963, -1.5707964, 2.0 ** -13, -(2.0 ** -13), 2.0 ** -14, 100.0, -104.0, -103.97,
    -87.3, -88.0, 88.72, 88.73, 89.0, 0.41421357, -0.41421357, 0.41421354, -0.9999999,
    0.99999994, -0.99999994, 3.0, 0.25, 1.0000001, 0.49999997, 7.5, 1e-30, -1e-30,
], np.float32)


def patterns(seed, n=N_PATTERNS):
    """``n`` float32 values with uniformly random bits, then the edge cases."""
    bits = np.random.default_rng(seed).integers(0, 2 ** 32, n, dtype=np.uint64)
    return np.concatenate([bits.astype(np.uint32).view(np.float32), EDGE])


def unit_mix(seed, n=N_PATTERNS):
    """Values in the samplers' domains: uniforms in [0, 1), their negatives, and spans."""
    rng = np.random.default_rng(seed)
    u = rng.random(n // 4, dtype=np.float32)
    return np.concatenate([u, -u, (u - np.float32(0.5)) * np.float32(np.pi),
                           rng.standard_normal(n // 4).astype(np.float32) * 30, EDGE])


def assert_bits(got, want, x):
    got = np.asarray(got, np.float32).reshape(-1).view(np.uint32)
    want = np.asarray(want, np.float32).reshape(-1).view(np.uint32)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} differ, e.g. x={x.reshape(-1)[bad[:4]]} "
                           f"got {got[bad[:4]]:} want {want[bad[:4]]}")


@pytest.fixture(scope="module")
def nb():
    """The compiled loops, loaded (as a large sample would load them)."""
    pytest.importorskip("numba")
    if not cpu_accel._ON:
        pytest.skip("JAXLITE_NUMBA=0")
    mod = accel.numba_module(accel.NUMBA_MIN)
    assert mod is not None
    return mod


def test_constants_fingerprint():
    """xla_numba freezes xla_math's and kernels' coefficients into numba's disk cache;
    its fingerprint must match them (edit it, and so the cached file, on any change)."""
    pytest.importorskip("numba")
    from jaxlite._src.random import xla_numba
    assert xla_numba.constants_crc() == xla_numba._CONSTANTS_CRC


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "tan", "lgamma"])
def test_unary_numba_equals_numpy(nb, name):
    fast = getattr(X, name + "_f32")
    ref = getattr(X, "_" + name + "_np")
    with np.errstate(all="ignore"):
        for x in (patterns(1), unit_mix(2)):
            assert_bits(fast(x), ref(x), x)
        x2 = unit_mix(3, 4096)[:4096].reshape(64, -1)     # a 2-D input keeps its shape
        assert fast(x2).shape == x2.shape
        assert_bits(fast(x2), ref(x2), x2)


def test_erf_inv_numba_equals_numpy(nb):
    with np.errstate(all="ignore"):
        for x in (patterns(4), unit_mix(5) / np.float32(30)):
            got, want = np.empty_like(x), np.empty_like(x)
            K.erf_inv_f32(x, got, K.scratch())
            K._erf_inv_np(x, want, K.scratch())
            assert_bits(got, want, x)


def fma_ties(seed, n=1 << 16):
    """float32 triples (a, b, c) whose float64 ``a*b + c`` lands exactly on a float32
    rounding midpoint without being equal to it: a*b = (3 +- m 2**-46) 2**-24 (a, b with
    24-bit integer significands found by division), c = +-1."""
    ai = np.random.default_rng(seed).integers(1 << 23, 1 << 24, n)
    t = 3 << 46
    bi = t // ai
    lo, hi = t - ai * bi, ai * (bi + 1) - t          # a*b below / above 3 * 2**46
    keep_lo = (lo > 0) & (lo < 1 << 17) & (bi >= 1 << 23)
    keep_hi = (hi < 1 << 17) & (bi + 1 < 1 << 24)
    a = np.concatenate([ai[keep_lo], ai[keep_hi]]).astype(np.float32) * np.float32(2.0 ** -47)
    b = np.concatenate([bi[keep_lo], bi[keep_hi] + 1]).astype(np.float32) * np.float32(2.0 ** -23)
    sign = np.where(np.arange(a.size) % 2 == 0, np.float32(1), np.float32(-1))
    return a * sign, b, sign


def test_fma_numba_equals_numpy(nb):
    """Random operands (float32, float64 exact products, broadcast scalars), and operands
    whose float64 sum lands on a float32 rounding midpoint (the tie fix)."""
    a, b, c = patterns(9), patterns(10), patterns(11)
    rng = np.random.default_rng(12)
    u, v, w = (rng.random(N_PATTERNS, dtype=np.float32) for _ in range(3))
    ta, tb, tc = fma_ties(13)
    naive = (ta.astype(np.float64) * tb + tc).astype(np.float32)
    assert ta.size > 500 and (naive != X._fma_np(ta, tb, tc)).mean() > 0.3  # ties broken
    with np.errstate(all="ignore"):
        cases = [(a, b, c), (u, v, -w), (u.astype(np.float64) * v, 1.0, w.astype(np.float64)),
                 (ta, tb, tc), (ta.astype(np.float64) * tb, -1.0, -tc.astype(np.float64)),
                 (u, np.float32(-0.0331), np.float32(1)),
                 (u.reshape(-1, 4), v[:4], np.float32(0.5)), (np.float32(3), np.float32(5), 1.0)]
        for p, q, r in cases:
            assert_bits(X.fma_f32(p, q, r), X._fma_np(p, q, r), np.broadcast_arrays(p, q, r)[0])


def test_numba_hash_equals_numpy_hash(nb):
    n = 70001
    for k0, k1, start in [(0, 0, 0), (2 ** 31 + 3, 99, 2 ** 32 - n)]:
        want = [np.empty(n, np.uint32) for _ in range(3)]
        K.hash_iota(k0, k1, start, *want)
        got = [np.empty(n, np.uint32) for _ in range(2)]
        nb.hash_iota(k0, k1, start, *got)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_numba_hash_pairs_equals_numpy(nb, monkeypatch):
    """Per-element keys and counts (arrays, and one key or count for the whole chunk), as
    the samplers with many keys and ``threefry2x32`` hash them."""
    rng = np.random.default_rng(14)
    n = 40000
    k0, k1, x0, x1 = (rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
                      for _ in range(4))
    cases = [(k0, k1, x0, x1), (k0, k1, np.uint32(0), x1), (2 ** 32 - 5, 12345, x0, x1),
             (7, 9, np.uint32(3), x1)]
    for args in cases:
        got = [np.empty(n, np.uint32) for _ in range(2)]
        K.hash_chunk(*args, *got, np.empty(n, np.uint32))
        with monkeypatch.context() as m:
            m.setattr(cpu_accel, "_ON", False)
            want = [np.empty(n, np.uint32) for _ in range(2)]
            K.hash_chunk(*args, *want, np.empty(n, np.uint32))
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_turned_off_means_numpy(monkeypatch):
    """JAXLITE_NUMBA=0 (``cpu_accel._ON``): no compiled loop is handed out, whatever the size."""
    monkeypatch.setattr(cpu_accel, "_ON", False)
    assert accel.numba_module(1 << 30) is None
    assert accel.hash_iota_kernel(1 << 30) is None
    x = unit_mix(13, 4096)
    with np.errstate(all="ignore"):
        assert_bits(X.log1p_f32(x), X._log1p_np(x), x)


def test_rent_is_lower_once_numba_is_warm(monkeypatch):
    """The ski rental before loading the loops: RENT seconds of NumPy kernels in a process
    where numba's compiler is cold, RENT_WARM once it is set up (loading then costs little);
    ``decided`` turns true once the choice is made."""
    pytest.importorskip("numba")
    if not cpu_accel._ON:
        pytest.skip("JAXLITE_NUMBA=0")
    assert cpu_accel.RENT_WARM < cpu_accel.RENT
    rent = (cpu_accel.RENT_WARM + cpu_accel.RENT) / 2
    monkeypatch.setattr(cpu_accel, "_state", {"rent": rent})
    monkeypatch.setattr(accel, "_loaded", {})
    monkeypatch.setattr(cpu_accel, "_numba_warm", lambda: False)
    assert accel.numba_module(16) is None and not accel.decided()
    monkeypatch.setattr(cpu_accel, "_numba_warm", lambda: True)
    assert accel.numba_module(16) is not None and accel.decided()


def test_numba_warm_sees_a_set_up_compiler():
    """``_numba_warm`` is false in a fresh process and true after a compiled loop ran."""
    pytest.importorskip("numba")
    code = ("import numba\n"
            "from jaxlite._src.cpu_math import accel\n"
            "before = accel._numba_warm()\n"
            "numba.njit(lambda x: x + 1)(1)\n"
            "print(before, accel._numba_warm())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_import_and_small_samples_do_not_load_numba():
    """numba is imported only for a large sample (or after enough NumPy kernel time), or
    for the processor's rsqrt estimate that gamma-based samplers need (x86-64)."""
    code = ("import sys, jaxlite, jaxlite.random as R\n"
            "k = R.key(0)\n"
            "R.cauchy(k, (1000,)); R.gumbel(k, (1000,)); R.normal(k, (1000,))\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
