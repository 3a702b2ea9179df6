"""The dispatch fast paths of issue 19 (item 4) give what the general paths give.

* eager ``array op python_scalar`` (numpy/util.py ``_array_scalar``): same dtype, weak type and
  bits as the general promotion path (and as JAX when installed), under x64 on and off, on
  the first call and on cached calls, across flag changes;
* jit's guarded call path (api/jit_fastpath.py): same outputs and structures as the general
  call path, hits and misses after argument or config changes, fallbacks where it declines.
"""
from __future__ import annotations

import os

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


# ----------------------------------------------------------------------------- jit's guards

def _same_tree(a, b, key_order=True):
    """Equal structures (container types, dict key order unless not ``key_order``), leaves
    of equal dtype, weak type and bits."""
    la, ta = jaxlite.tree_util.tree_flatten(a)
    lb, tb = jaxlite.tree_util.tree_flatten(b)
    if ta != tb or type(a) is not type(b):
        return False
    if key_order and isinstance(a, dict) and list(a) != list(b):
        return False
    return all(type(x) is type(y) and x.dtype == y.dtype and x.weak_type == y.weak_type and
               np.asarray(x).tobytes() == np.asarray(y).tobytes() and
               x.committed == y.committed for x, y in zip(la, lb))


def _counting(fn):
    calls = []

    def f(*a, **k):
        calls.append(1)
        return fn(*a, **k)
    return f, calls


def _arr(*shape, dtype=np.float32, start=0):
    return jnp.asarray((np.arange(int(np.prod(shape))) + start).reshape(shape).astype(dtype))


CASES = [
    ("flat", lambda x, y: (x * y, x + 1.0), lambda: (_arr(3), _arr(3, start=1)), {}),
    ("single out", lambda x: x * 2, lambda: (_arr(2, 2),), {}),
    ("nested", lambda p, s: ([(w * s, b - s) for w, b in p], {"n": s}),
     lambda: ([(_arr(2, 2), _arr(2)), (_arr(2, 3), _arr(3))], _arr()), {}),
    ("dict keys sorted", lambda d: {"z": d["b"], "a": d["a"], "m": None},
     lambda: ({"b": _arr(2), "a": _arr(3)},), {}),
    ("int keys", lambda d: [d[1] * 1, d[3] * 3], lambda: ({3: _arr(2), 1: _arr(2)},), {}),
    ("kwargs", lambda x, *, scale, extra=None: x * scale, lambda: (_arr(3),),
     {"scale": _arr()}),
    ("python scalars", lambda x, a, n, flag: (x * a + n, flag), lambda: (_arr(3), 2.5, 3, True),
     {}),
    ("None leaves", lambda x, none, t: (x, none, t[0] + t[2]),
     lambda: (_arr(2), None, (_arr(2), None, _arr(2))), {}),
    ("namedtuple out", lambda x: _NT(x, x + 1), lambda: (_arr(2),), {}),
    ("empty out", lambda x: (), lambda: (_arr(2),), {}),
    ("int/bool/weak", lambda i, b, w: (i + 1, ~b, w * 2),
     lambda: (_arr(3, dtype=np.int32), jnp.asarray(np.array([True, False])),
              util.asarray_value(1.5)), {}),
]

from collections import namedtuple  # noqa: E402
_NT = namedtuple("_NT", "a b")


@pytest.mark.parametrize("name,fn,make,kw", CASES, ids=[c[0] for c in CASES])
def test_guarded_call_matches_general_path(name, fn, make, kw):
    f, calls = _counting(fn)
    jf = jaxlite.jit(f)
    args = make()
    first = jf(*args, **kw)                 # general path (traces and compiles)
    assert not jf._guards[0]
    again = jf(*args, **kw)                 # general path, installs the guard
    assert len(jf._guards[0]) == 1 and _same_tree(first, again)
    second = jf(*make(), **kw)              # the guard
    assert _same_tree(first, second)
    assert len(calls) == 1
    with config.override("jax_disable_jit", True):
        eager = jaxlite.jit(fn)(*make(), **kw)
    # (eager keeps a dict's insertion order; jit's outputs have sorted keys, as JAX's;
    # eager returns a Python bool passed through as it is)
    if name != "python scalars":
        assert _same_tree(first, eager, key_order=False)


def test_guard_misses_on_changed_arguments():
    f, calls = _counting(lambda x, p: (x * 2, [jnp.add(q, 1) for q in p]))
    jf = jaxlite.jit(f)
    x, p = _arr(3), [_arr(2), _arr(2)]
    jf(x, p)
    jf(x, p)
    assert len(calls) == 1
    variants = [
        (_arr(4), p),                                    # shape
        (_arr(3, dtype=np.int32), p),                    # dtype
        (util.asarray_value(1.0), p),                    # weak type (and rank)
        (x, (p[0], p[1])),                               # tuple instead of list
        (x, [p[0]]),                                     # length
        (x, [p[0], p[1], p[1]]),
        (x, []),                                         # empty (then a guard of its own)
        (x, ()),
        (x, [p[0], np.ones(2, np.float32)]),             # a NumPy leaf (general path)
        (x, [p[0], 1.0]),                                # a Python scalar leaf
    ]
    for i, (a, q) in enumerate(variants):
        got = jf(a, q)
        with config.override("jax_disable_jit", True):
            want = jf(a, q)
        assert _same_tree(got, want), i
    n = len(calls)
    for a, q in variants:      # every specialisation is cached now: no new trace
        jf(a, q)
    assert len(calls) == n
    assert len(jf._guards[0]) <= 8


def test_guard_follows_config_changes():
    f, calls = _counting(lambda x, s: x * s)
    jf = jaxlite.jit(f)
    x = _arr(3)
    with config.override("jax_enable_x64", False):
        a = jf(x, 0.5)
        jf(x, 0.5)
    assert len(calls) == 1 and a.dtype == np.float32
    with config.override("jax_enable_x64", True):
        b = jf(x, 0.5)        # x64 is in the key: a new trace, the old guard unused
        b2 = jf(x, 0.5)
        assert len(calls) == 2
        assert b.dtype == b2.dtype == np.float32
        c = jf(_arr(3, dtype=np.float64), 0.5)
        assert c.dtype == np.float64
    with config.override("jax_enable_x64", False):
        jf(x, 0.5)            # back: the cached specialisation, no trace
        assert len(calls) == 3
        jf(x, 0.5)
        assert len(calls) == 3
        assert all(g.tc is config.trace_context() for g in jf._guards[0])
    with config.override("jax_numpy_rank_promotion", "raise"):
        with pytest.raises(ValueError, match="rank_promotion"):
            jaxlite.jit(lambda a, b: a + b)(_arr(2, 3), _arr(3))


def test_guard_covers_static_arguments():
    """A jit with static arguments takes the guarded path; a call with other static values
    (or types) misses it and gets its own specialisation, as the general path keys them."""
    f, calls = _counting(lambda x, n, *, mode="a": x * n if mode == "a" else x + n)
    jf = jaxlite.jit(f, static_argnums=(1,), static_argnames=("mode",))
    x = _arr(3)
    first = jf(x, 2, mode="a")
    jf(x, 2, mode="a")
    assert len(jf._guards[0]) == 1 and len(calls) == 1
    assert _same_tree(jf(_arr(3), 2, mode="a"), first) and len(calls) == 1
    for n, mode, want in [(3, "a", np.arange(3) * 3), (2, "b", np.arange(3) + 2),
                          (2.0, "a", np.arange(3) * 2), (True, "b", np.arange(3) + 1)]:
        for _ in range(2):
            got = jf(x, n, mode=mode)
            np.testing.assert_array_equal(np.asarray(got), want.astype(np.float32))
    # one trace per static value (2.0 equals 2: the cache entry of 2, as JAX's cache keys
    # static values by hash and equality), the repeats guarded
    assert len(calls) == 4
    # (an unhashable static argument is JAX's error, also once guards exist)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jf(x, [2], mode="a")


def test_guard_covers_numpy_arguments():
    """NumPy arrays of canonical dtypes take the guarded path too (each kind of leaves of
    one specialisation gets its own guard); other dtypes keep the general path."""
    f, calls = _counting(lambda x, y: x * y + 1.0)
    jf = jaxlite.jit(f)
    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    first = jf(jnp.asarray(a), jnp.asarray(b))
    jf(jnp.asarray(a), jnp.asarray(b))
    np_first = jf(a, b)          # the same specialisation, through the general path
    np_again = jf(a, b)          # a guard for NumPy leaves
    assert len(jf._guards[0]) == 2 and len(calls) == 1
    assert _same_tree(np_first, first) and _same_tree(np_again, first)
    assert _same_tree(jf(a + 1, b), jf(jnp.asarray(a + 1), jnp.asarray(b)))
    got = jf(a.astype(np.float64), b)     # float64 (canonicalized to float32): general path
    assert got.dtype == np.float32 and np.array_equal(np.asarray(got), a * b + 1)
    assert len(calls) == 1
    mixed = jf(a, jnp.asarray(b))
    jf(a, jnp.asarray(b))
    assert _same_tree(mixed, first) and len(jf._guards[0]) == 3


def test_jit_wrapped_public_functions_take_the_guarded_path():
    """jnp/nn functions JAX jit-wraps (some with static arguments) are guarded calls from
    the second eager call on, with Arrays and with NumPy arrays."""
    x = np.linspace(-2, 2, 5).astype(np.float32)
    for fn, call in [(jnp.round, lambda f, v: f(v, 1)), (jnp.clip, lambda f, v: f(v, -1, 1)),
                     (jaxlite.nn.log_softmax, lambda f, v: f(v, axis=0)),
                     (jnp.isclose, lambda f, v: f(v, v, equal_nan=True))]:
        for v in (jnp.asarray(x), x):
            want = call(fn, v)
            call(fn, v)
            n = len(fn._guards[0])
            assert n >= 1 and _same_tree(call(fn, v), want)
            assert len(fn._guards[0]) == n


def test_disable_jit_and_outer_traces_bypass_the_guard():
    f, calls = _counting(lambda x: jnp.sin(x) * 2)
    jf = jaxlite.jit(f)
    x = _arr(3)
    jf(x)
    jf(x)
    assert len(calls) == 1
    with config.override("jax_disable_jit", True):
        jf(x)
        jf(x)
    assert len(calls) == 3
    g = jaxlite.grad(lambda v: jf(v).sum())(x)
    assert np.allclose(np.asarray(g), 2 * np.cos(np.arange(3, dtype=np.float32)))


def test_committed_arguments_keep_the_general_path():
    jf = jaxlite.jit(lambda x: x + 1)
    x = jaxlite.device_put(_arr(3), jaxlite.devices()[0])
    a, b = jf(x), jf(x)
    assert a.committed and b.committed
    assert not jf._guards[0]
    y = _arr(3)
    jf(y)
    jf(y)
    c = jf(y)
    assert not c.committed and len(jf._guards[0]) == 1
    d = jf(x)                  # the guard declines a committed argument
    assert d.committed


def test_deleted_argument_raises_on_both_paths():
    jf = jaxlite.jit(lambda x: x * 2)
    jf(_arr(3))
    jf(_arr(3))
    y = _arr(3)
    y.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        jf(y)


def test_guard_sees_the_tier2_swap():
    jf = jaxlite.jit(lambda x: jnp.sin(x) * 1.5 + x - jnp.tanh(x) * 0.5)
    x = _arr(1000)
    with config.override("jaxlite_tier", 1):
        want = jf(x)
    with config.override("jaxlite_tier", "auto"):
        jf2 = jaxlite.jit(lambda x: jnp.sin(x) * 1.5 + x - jnp.tanh(x) * 0.5)
        first = jf2(x)
        for p in jf2._programs():
            p.promote(wait=True)
        assert jf2._tiers() in ([2], [1])
        got = jf2(x)
    assert _same_tree(first, got) and _same_tree(want, got)


def test_guarded_calls_from_threads():
    import concurrent.futures as cf
    jf = jaxlite.jit(lambda p: [w * 2 for w in p])
    shapes = [(3,), (4,), (2, 2)]
    data = {s: [_arr(*s), _arr(*s, start=1)] for s in shapes}
    want = {s: [np.asarray(w) * 2 for w in ws] for s, ws in data.items()}

    def work(i):
        s = shapes[i % 3]
        out = jf(data[s])
        return all(np.array_equal(np.asarray(o), w) for o, w in zip(out, want[s]))
    with cf.ThreadPoolExecutor(4) as ex:
        assert all(ex.map(work, range(300), timeout=120))
    assert jf._cache_size() == 3


def test_output_wrapper_builds_arrays_like_the_constructor():
    from jaxlite._src.runtime.array import ArrayImpl
    # the generated wrapper sets ArrayImpl's slots itself
    assert ArrayImpl.__slots__ == ("_value", "weak_type", "_sharding", "_literal",
                                   "__weakref__")
    jf = jaxlite.jit(lambda x: (x, {"b": x * 2, "a": [x + 1, None]}))
    x = _arr(2)
    jf(x)
    jf(x)
    out = jf(x)
    assert len(jf._guards[0]) == 1
    ref = ArrayImpl(np.asarray(x), False)
    for leaf in jaxlite.tree_util.tree_leaves(out):
        assert type(leaf) is ArrayImpl and leaf._sharding is None and leaf.weak_type is False
        assert repr(leaf).startswith("Array(") and leaf.sharding == ref.sharding
    assert list(out[1]) == ["a", "b"]


# ----------------------------------------------------------------------------- lowerings
# (issue 19, Adam row: statements jit now emits inline; each must give eager's bits)

def _eager_and_jit(f, *args):
    with config.override("jax_disable_jit", True):
        want = f(*args)
    got = jaxlite.jit(f)(*args)
    src = jaxlite.jit(f).lower(*args).compile().as_text()
    return want, got, src


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_transposed_rhs_of_mid_sized_products_is_copied_with_the_same_bits(dt):
    """x @ w.T for products of 32..80 a side copies w.T row-major before BLAS (faster
    there): eager and jit give the same bits (BLAS's kernel for the copy may sum in another
    order than its kernel for the transposed view: the same value to rounding); outside
    the window (small, big, batched) no copy is made."""
    from jaxlite._src.prims.dot import _rhs_made_contiguous
    rng = np.random.default_rng(4)
    dn = (((1,), (1,)), ((), ()))
    for m, k, n, copied in [(64, 64, 64, True), (48, 40, 33, True), (100, 64, 64, True),
                            (16, 64, 64, False), (64, 64, 8, False), (96, 96, 96, False)]:
        assert _rhs_made_contiguous([], m, n, k) is copied
        ja = jnp.asarray(rng.standard_normal((m, k)).astype(dt))
        jw = jnp.asarray(rng.standard_normal((n, k)).astype(dt))
        a, w = np.asarray(ja), np.asarray(jw)    # (float32 without x64)
        want, got, src = _eager_and_jit(lambda x, y: jaxlite.lax.dot_general(x, y, dn),
                                        ja, jw)
        assert ("ascontiguousarray" in src) is copied, src
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (m, k, n)
        ref = np.matmul(a.astype(np.float64), w.T.astype(np.float64))
        tol = 1e-5 if a.dtype == np.float32 else 1e-12
        assert np.allclose(np.asarray(got), ref, rtol=tol, atol=tol * k), (m, k, n)
        if not copied:
            assert np.asarray(got).tobytes() == np.matmul(a, w.T).tobytes(), (m, k, n)
    assert not _rhs_made_contiguous([3], 64, 64, 64)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64])
def test_outer_and_inner_dot_general_lowered_inline(dt):
    rng = np.random.default_rng(1)
    a = jnp.asarray(rng.standard_normal((5, 1)).astype(dt))
    b = jnp.asarray(rng.standard_normal((7, 1)).astype(dt))
    dn = (((1,), (1,)), ((), ()))
    want, got, src = _eager_and_jit(lambda x, y: jaxlite.lax.dot_general(x, y, dn), a, b)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes() and got.shape == (5, 7)
    assert "np.multiply" in src and "_dot_general" not in src
    c = jnp.asarray(rng.standard_normal((3, 6)).astype(dt))
    d = jnp.asarray(rng.standard_normal((3, 6)).astype(dt))
    dn2 = (((1,), (1,)), ((0,), (0,)))     # batched inner products
    want, got, src = _eager_and_jit(lambda x, y: jaxlite.lax.dot_general(x, y, dn2), c, d)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes() and got.shape == (3,)
    assert "einsum" in src


def test_sum_over_unit_axes_and_plain_broadcast_lowering():
    v = np.array([[-0.0, np.nan, 1e-45, -3.5]], np.float32)
    x = jnp.asarray(v)
    # a sum over one element is 0 + x (-0.0 becomes 0.0, as XLA's reduction from 0)
    want, got, src = _eager_and_jit(lambda a: jnp.sum(a, axis=0), x)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes() != v[0].tobytes()
    assert not np.signbit(np.asarray(got)[0])
    want, got, _ = _eager_and_jit(lambda a: jnp.sum(a, axis=1), x)   # a real sum stays
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    i = jnp.asarray(np.array([[2 ** 31 - 1, -5]], np.int32))
    want, got, _ = _eager_and_jit(lambda a: jnp.sum(a, axis=(0,)), i)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    want, got, src = _eager_and_jit(
        lambda a: jaxlite.lax.broadcast_in_dim(a, (1, 4), (1,)), jnp.asarray(v[0]))
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes() and got.shape == (1, 4)
    assert "broadcast_to" not in src
    # a real stretch: small results are written into a new array, big ones are a view
    want, got, src = _eager_and_jit(
        lambda a: jaxlite.lax.broadcast_in_dim(a, (3, 4), (1,)), jnp.asarray(v[0]))
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes() and "broadcast_small" in src
    want, got, src = _eager_and_jit(
        lambda a: jaxlite.lax.broadcast_in_dim(a, (3000, 4), (1,)), jnp.asarray(v[0]))
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes() and "broadcast_to" in src
    assert np.asarray(got)[2999].tobytes() == np.asarray(v[0]).tobytes()


# ----------------------------------------------------------------------------- stacked geev

def test_stacked_geev_gives_the_per_matrix_bits(monkeypatch):
    pytest.importorskip("numba")
    pytest.importorskip("scipy")
    from jaxlite._src.prims import linalg_geev
    from jaxlite._src.prims.linalg import _eigvals_geev
    assert linalg_geev.ready("s", wait=True) and linalg_geev.ready("d", wait=True)
    rng = np.random.default_rng(3)
    bad = []
    for dt, odt in [(np.float32, np.complex64), (np.float64, np.complex128)]:
        for n in (1, 2, 3, 6, 17):
            for trial in range(6):
                x = (rng.standard_normal((12, n, n)) * 10.0 ** rng.integers(-15, 15)).astype(dt)
                x[0] = np.triu(x[0])
                x[1] = x[1] + x[1].swapaxes(-1, -2)
                x[2] = 0
                if trial == 1:
                    x[3, 0, 0] = np.nan     # the per-matrix path decides (a failure)
                if trial == 2:
                    x[4, -1, 0] = np.inf
                if trial == 3:   # signed zeros in wr and wi (w = wr + 1j * wi's bits)
                    x[5] = -0.0
                    x[6] = np.diag(np.where(np.arange(n) % 2, -0.0, 0.0))
                    if n >= 2:
                        x[7] = 0.0
                        x[7, 0, 1], x[7, 1, 0] = -1.0, 1.0   # +-1j, real parts zero
                got = _eigvals_geev(x, odt)
                with monkeypatch.context() as m:
                    m.setattr(linalg_geev, "_ON", False)
                    want = _eigvals_geev(x, odt)
                if (got is None) != (want is None) or \
                        (got is not None and got.tobytes() != want.tobytes()):
                    bad.append((dt, n, trial))
    assert not bad, bad
    small = np.eye(3, dtype=np.float32)[None].repeat(linalg_geev.MIN_BATCH - 1, 0)
    assert linalg_geev.stack_geev(small, "s", 9) is None     # small stacks: per matrix


def test_small_matrices_call_geevs_steps_with_the_same_bits(monkeypatch):
    """Matrices up to _SMALL_N call geev's steps (gebal, gehd2, lahqr) one by one: the same
    bits as the whole geev call, over shapes that balancing splits (triangular, permuted
    triangular, zero rows and columns), ones geev scales (huge and tiny entries: whole
    geev), complex pairs and signed zeros."""
    pytest.importorskip("numba")
    pytest.importorskip("scipy")
    from jaxlite._src.prims import linalg_geev
    from jaxlite._src.prims.linalg import _geev_funcs
    assert linalg_geev.ready("s", wait=True) and linalg_geev.ready("d", wait=True)
    rng = np.random.default_rng(11)
    for prefix, dt, ct in [("s", np.float32, np.complex64), ("d", np.float64, np.complex128)]:
        steps = linalg_geev._kernels[prefix]
        with monkeypatch.context() as m:
            m.setattr(linalg_geev, "_SMALL_N", 0)
            whole = linalg_geev._build(prefix)
        for n in (1, 2, 3, 4, 7, linalg_geev._SMALL_N, linalg_geev._SMALL_N + 1):
            x = rng.standard_normal((40, n, n)).astype(dt)
            x[1:8] = np.triu(x[1:8])
            x[8:12] = np.tril(x[8:12])
            perm = rng.permutation(n)
            x[12:16] = np.triu(x[12:16])[:, perm][:, :, perm]
            x[16:20, :, 0] = 0.0
            x[20:24, n - 1, :] = 0.0
            x[24] *= dt(1e30) if dt == np.float32 else 1e200
            x[25] *= dt(1e-30) if dt == np.float32 else 1e-200
            x[26] = 0.0
            x[27] = -0.0
            x[28:32] = np.round(x[28:32])           # ties and exact zeros
            x[32:36] = x[32:36] - x[32:36].swapaxes(-1, -2)   # imaginary pairs
            _, lwork = _geev_funcs(dt, n)
            got, want = np.empty((40, n), ct), np.empty((40, n), ct)
            assert steps(x, lwork, got) == 0 and whole(x, lwork, want) == 0
            assert got.tobytes() == want.tobytes(), (prefix, n)


def test_split_stacked_geev_gives_the_same_bits(monkeypatch):
    """A stack of SPLIT_MIN matrices or more runs in two threads: the same bits as one loop,
    whether the worker runs the second half or (a worker that never comes: a busy machine)
    the caller takes it back; a failure in either half is reported (None). (Run with a
    timeout: a lost handoff would hang.)"""
    pytest.importorskip("numba")
    pytest.importorskip("scipy")
    import concurrent.futures
    import queue

    from jaxlite._src.prims import linalg_geev
    from jaxlite._src.prims.linalg import _geev_funcs
    assert linalg_geev.ready("s", wait=True)
    monkeypatch.setattr(linalg_geev, "_CORES", 2)
    monkeypatch.setattr(linalg_geev, "_idle_core", lambda: True)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((linalg_geev.SPLIT_MIN * 3 + 1, 3, 3)).astype(np.float32)
    _, lwork = _geev_funcs(np.float32, 3)

    def body():
        with monkeypatch.context() as m:
            m.setattr(linalg_geev, "SPLIT_MIN", 10 ** 9)
            want = linalg_geev.stack_geev(x, "s", lwork)
        for _ in range(20):
            assert linalg_geev.stack_geev(x, "s", lwork).tobytes() == want.tobytes()
        with monkeypatch.context() as m:   # nobody serves this queue: the caller runs both
            m.setattr(linalg_geev, "_worker", lambda: queue.SimpleQueue())
            assert linalg_geev.stack_geev(x, "s", lwork).tobytes() == want.tobytes()
        y = x.copy()
        y[-1, 0, 0] = np.nan                # (in the second half)
        assert linalg_geev.stack_geev(y, "s", lwork) is None
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        ex.submit(body).result(timeout=120)
    # a busy machine (load average >= cores - 0.5): one loop, no handoff to the worker
    monkeypatch.setattr(linalg_geev, "_idle_core", lambda: False)
    monkeypatch.setattr(linalg_geev, "_worker", lambda: pytest.fail("split on a busy machine"))
    assert linalg_geev.stack_geev(x, "s", lwork) is not None


def test_split_geev_needs_an_idle_core(monkeypatch):
    """The two-thread split runs while the 1-minute load average leaves a core free (below
    cores - 0.5), read at most once a second."""
    from jaxlite._src.prims import linalg_geev
    monkeypatch.setattr(linalg_geev, "_CORES", 2)
    for load, want in [(0.3, True), (1.49, True), (1.5, False), (9.0, False)]:
        monkeypatch.setattr(linalg_geev, "_load", [0.0, -1e9])
        monkeypatch.setattr(linalg_geev.os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert linalg_geev._idle_core() is want, load
        monkeypatch.setattr(linalg_geev.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
        assert linalg_geev._idle_core() is want     # (cached within the second)


def test_vmap_eigvals_uses_the_stack_and_matches_jax():
    pytest.importorskip("numba")
    from jaxlite._src.prims import linalg_geev
    linalg_geev.ready("s", wait=True)
    batch = np.random.default_rng(0).standard_normal((128, 3, 3)).astype(np.float32)
    f = jaxlite.jit(jaxlite.vmap(lambda a: jnp.max(jnp.abs(jnp.linalg.eigvals(a)))))
    got = np.asarray(f(jnp.asarray(batch)))
    want = np.max(np.abs(np.linalg.eigvals(batch)), -1)
    assert got.dtype == np.float32 and np.allclose(got, want, rtol=1e-5)
    jax = pytest.importorskip("jax")
    jf = jax.jit(jax.vmap(lambda a: jax.numpy.max(jax.numpy.abs(jax.numpy.linalg.eigvals(a)))))
    assert np.allclose(got, np.asarray(jf(batch)), rtol=1e-6, atol=0)


# ----------------------------------------------------------------------------- kernel cache

def _fake_kernel(d, h, mtime, size=100):
    (d / "__pycache__").mkdir(exist_ok=True)
    src = d / f"k_{h}.py"
    src.write_text("#" * size)
    (d / "__pycache__" / f"k_{h}.kernel-1.py311.nbi").write_bytes(b"x" * size)
    (d / "__pycache__" / f"k_{h}.kernel-1.py311.1.nbc").write_bytes(b"x" * size)
    os.utime(src, (mtime, mtime))


def test_kernel_cache_evicts_least_recently_used(tmp_path, monkeypatch):
    from jaxlite._src.runtime import kernel_cache as kc
    for i in range(10):
        _fake_kernel(tmp_path, f"{i:024x}", 1000 + i)
    (tmp_path / "__pycache__" / "other.pyc").write_bytes(b"y")   # not a kernel's: stays
    monkeypatch.setenv("JAXLITE_CACHE_MAX_KERNELS", "6")
    monkeypatch.setenv("JAXLITE_CACHE_MAX_MB", "0")
    kc.touch(str(tmp_path / f"k_{0:024x}.py"))        # kernel 0 was just used
    assert kc.evict(str(tmp_path), keep=f"{9:024x}") == 4
    left = sorted(p.name[2:-3] for p in tmp_path.glob("k_*.py"))
    assert left == [f"{i:024x}" for i in (0, 5, 6, 7, 8, 9)]
    pyc = sorted(p.name for p in (tmp_path / "__pycache__").iterdir())
    assert len(pyc) == 2 * 6 + 1 and "other.pyc" in pyc
    # a byte bound: each fake kernel is 300 bytes
    monkeypatch.setenv("JAXLITE_CACHE_MAX_KERNELS", "0")
    monkeypatch.setenv("JAXLITE_CACHE_MAX_MB", str(1000 / (1 << 20)))
    assert kc.evict(str(tmp_path), keep=f"{5:024x}") == 3
    left = sorted(p.name[2:-3] for p in tmp_path.glob("k_*.py"))
    assert len(left) == 3 and f"{5:024x}" in left and f"{0:024x}" in left
    monkeypatch.setenv("JAXLITE_CACHE_MAX_KERNELS", "lots")
    with pytest.raises(ValueError, match="JAXLITE_CACHE_MAX_KERNELS"):
        kc.limits()


def test_tier2_kernels_respect_the_cache_bound(tmp_path):
    pytest.importorskip("numba")
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent("""
        import numpy as np
        import jaxlite as jax, jaxlite.numpy as jnp
        jax.config.update("jaxlite_tier", 2)
        x = jnp.asarray(np.arange(64, dtype=np.float32))
        for k in range(5):   # five different kernels
            f = jax.jit(lambda v, k=k: ((v * (k + 0.5) + 1.0) * v - 2.0) / (v + 3.0 + k))
            f(x)
            assert f._tiers() == [2]
    """)
    env = dict(os.environ, JAXLITE_CACHE_DIR=str(tmp_path), JAXLITE_CACHE_MAX_KERNELS="3",
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "kernels").glob("k_*.py"))) == 3


# ----------------------------------------------------------------------------- numba groups

def test_independent_numba_clusters_share_one_kernel_call(monkeypatch):
    pytest.importorskip("numba")
    from jaxlite._src.compiler import passes   # (kernels of the products and sums as written)
    monkeypatch.setattr(passes, "contract_products", lambda closed: closed)

    def chain(x, k):
        return ((x * k + 1.0) * x - 3.0) / (x * x + k)

    def step(p, b, s, t):
        # independent clusters of shapes (5, 7), (7,) and (3, 2), each written once, then one
        # that reads the first's output (a kernel call of its own)
        p2, b2, s2 = chain(p, 2.0), chain(b, 3.0), chain(s, 0.5)
        return p2, b2, s2, jnp.sum(p2) * t, chain(jnp.sum(p2, 0) + b2, 1.5)
    rng = np.random.default_rng(0)
    args = [jnp.asarray(rng.standard_normal(sh).astype(np.float32))
            for sh in [(5, 7), (7,), (3, 2), ()]]
    with config.override("jaxlite_tier", 1):
        want = jaxlite.jit(lambda *a: step(*a))(*args)
    with config.override("jaxlite_tier", 2):
        f2 = jaxlite.jit(lambda *a: step(*a))
        got = f2(*args)
        assert f2._tiers() == [2]
        text = f2.lower(*args).compile().as_text()
    assert _same_tree(list(want), list(got))
    tier2 = text.split("# ---- tier 2")[1].split("# jaxlite tier-2 kernel")[0]
    assert "in 2 loops, numba loop" in tier2, tier2   # ((7,) joins the last chain)
    assert tier2.count("numba loop") == 2, tier2


# ----------------------------------------------------------------------------- quiet state

def test_fast_path_sets_the_quiet_floating_point_state_itself():
    """jit's guarded call runs the bare program inside NumPy's quiet error state it sets
    (no wrapper): sqrt(-1) and 0/0 give nan silently under np.seterr(all="raise") on
    every call, the guarded ones included, and the caller's error state is restored."""
    f = jaxlite.jit(lambda a, b: (jnp.sqrt(a - 1.0), a / b))
    z = jnp.zeros(3, jnp.float32)
    prog = None
    with np.errstate(all="raise"):
        for _ in range(4):
            la, q = f(z, z)
            assert np.all(np.isnan(np.asarray(la))) and np.all(np.isnan(np.asarray(q)))
            assert np.geterr()["divide"] == "raise"
        prog = f._programs()[0]
    assert f._guards[0] and prog.needs_quiet
    assert prog.raw is not prog.fn      # (fn: raw inside the quiet state)
    with pytest.raises(FloatingPointError), np.errstate(all="raise"):
        prog.raw(np.zeros(3, np.float32), np.zeros(3, np.float32))


def test_programs_that_only_move_values_run_bare():
    """A program of forwards, reshapes and transposes meets no floating-point error: it runs
    without the quiet state (fn is raw); one with arithmetic keeps it."""
    from jaxlite._src.compiler.codegen import needs_quiet
    x = jnp.arange(6.0).reshape(2, 3)
    moves = jaxlite.jit(lambda t: (t, t.T, t.reshape(3, 2), t[None]))
    for _ in range(3):
        out = moves(x)
    prog = moves._programs()[0]
    assert not prog.needs_quiet and prog.fn is prog.raw
    assert [np.asarray(o).shape for o in out] == [(2, 3), (3, 2), (3, 2), (1, 2, 3)]
    assert not needs_quiet(jaxlite.make_jaxpr(lambda t: t.T.reshape(6))(x).jaxpr)
    assert needs_quiet(jaxlite.make_jaxpr(lambda t: t.T * 2)(x).jaxpr)
    assert needs_quiet(jaxlite.make_jaxpr(lambda t: t.astype(jnp.int32))(x).jaxpr)


# ----------------------------------------------------------------------------- short max/min

@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16, np.int32, np.uint8,
                                np.bool_])
def test_max_min_over_a_short_last_axis_match_numpys_reduce(dt):
    """reduce_max/min over a last axis of 2..8 (many rows) apply maximum/minimum column by
    column: the same bits as NumPy's reduce, signed zeros included, and NaN where it gives
    NaN (the sign of a NaN may differ), eager and jitted alike; other axes and long or few
    rows keep the reduce."""
    from jaxlite._src.prims.reductions import _short_last_axis
    rng = np.random.default_rng(2)
    for shape in [(128, 3), (40, 2), (7, 9, 8), (64, 5)]:
        x = (rng.standard_normal(shape) * 4).astype(dt)
        if np.dtype(dt).kind == "f":
            flat = x.reshape(-1)
            flat[::7] = 0.0
            flat[1::11] = -0.0
            flat[2::13] = np.nan
            flat[3::17] = -np.nan
        for op in (np.maximum, np.minimum):
            got = _short_last_axis(op, x, (x.ndim - 1,))
            want = op.reduce(x, axis=x.ndim - 1)
            assert got is not None and got.dtype == want.dtype
            nan = np.isnan(want) if np.dtype(dt).kind == "f" else np.zeros(want.shape, bool)
            assert np.array_equal(np.isnan(got) if nan.any() else nan, nan), (shape, op)
            assert got[~nan].tobytes() == want[~nan].tobytes(), (shape, op)
        jx = jnp.asarray(x)
        for fn in (lambda a: jnp.max(a, axis=-1), lambda a: jnp.min(a, axis=-1)):
            want = np.asarray(fn(jx))
            assert np.asarray(jaxlite.jit(fn)(jx)).tobytes() == want.tobytes()
    x = np.ones((128, 3), np.float32)
    assert _short_last_axis(np.maximum, x, (0,)) is None
    assert _short_last_axis(np.maximum, np.ones((4, 3), np.float32), (1,)) is None
    assert _short_last_axis(np.maximum, np.ones((40, 9), np.float32), (1,)) is None
