"""Op records for the elementwise lax primitives: values against NumPy/SciPy over dtypes and
shapes, against real JAX when installed (values and dtypes), jit against eager, vmap against a
Python loop with random in_axes/out_axes, and finite-difference gradients where defined."""
import numpy as np
import pytest
import scipy.special as sc

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads

F, C, I, U, B = ["float32"], ["complex64"], ["int32"], ["uint32"], ["bool"]
FC = F + C


def _any(rng, shape, dt):
    x = rng.randn(*shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.randn(*shape)
    if np.dtype(dt).kind in "iu":
        x = rng.randint(0 if np.dtype(dt).kind == "u" else -20, 20, shape)
    if np.dtype(dt).kind == "b":
        x = rng.rand(*shape) > 0.5
    return np.asarray(x, dt)


def _pos(rng, shape, dt):
    return np.asarray(rng.rand(*shape) * 2 + 0.2, dt)


def _unit(rng, shape, dt):
    return np.asarray(rng.rand(*shape) * 1.6 - 0.8, dt)


def _small_int(rng, shape, dt):
    return np.asarray(rng.randint(0, 5, shape), dt)


# (name, lax function, NumPy reference, dtypes, input generator per operand, differentiable)
REC = [
    ("sin", lax.sin, np.sin, FC, [_any], True), ("cos", lax.cos, np.cos, FC, [_any], True),
    ("tan", lax.tan, np.tan, F, [_unit], True), ("asin", lax.asin, np.arcsin, F, [_unit], True),
    ("acos", lax.acos, np.arccos, F, [_unit], True), ("atan", lax.atan, np.arctan, F, [_any], True),
    ("sinh", lax.sinh, np.sinh, F, [_any], True), ("cosh", lax.cosh, np.cosh, F, [_any], True),
    ("tanh", lax.tanh, np.tanh, FC, [_any], True),
    ("asinh", lax.asinh, np.arcsinh, F, [_any], True),
    ("acosh", lambda x: lax.acosh(x + 1.5), lambda x: np.arccosh(x + 1.5), F, [_pos], True),
    ("atanh", lax.atanh, np.arctanh, F, [_unit], True),
    ("exp", lax.exp, np.exp, FC, [_any], True), ("exp2", lax.exp2, np.exp2, F, [_any], True),
    ("expm1", lax.expm1, np.expm1, F, [_any], True), ("log", lax.log, np.log, FC, [_pos], True),
    ("log1p", lax.log1p, np.log1p, F, [_pos], True), ("sqrt", lax.sqrt, np.sqrt, FC, [_pos], True),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), F, [_pos], True),
    ("cbrt", lax.cbrt, np.cbrt, F, [_pos], True),
    ("logistic", lax.logistic, sc.expit, F, [_any], True),
    ("abs", lax.abs, np.abs, F + C + I, [_any], True), ("neg", lax.neg, np.negative, FC + I,
                                                         [_any], True),
    ("sign", lax.sign, np.sign, F + I, [_any], False),
    ("floor", lax.floor, np.floor, F, [_any], False), ("ceil", lax.ceil, np.ceil, F, [_any], False),
    ("round", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.round, F, [_any],
     False),
    ("is_finite", lax.is_finite, np.isfinite, F, [_any], False),
    ("square", lax.square, np.square, FC + I, [_any], True),
    ("reciprocal", lax.reciprocal, np.reciprocal, F, [_pos], True),
    ("integer_pow3", lambda x: lax.integer_pow(x, 3), lambda x: x ** 3, FC + I, [_any], True),
    ("erf", lax.erf, sc.erf, F, [_any], True), ("erfc", lax.erfc, sc.erfc, F, [_any], True),
    ("erf_inv", lax.erf_inv, sc.erfinv, F, [_unit], True),
    ("lgamma", lax.lgamma, sc.gammaln, F, [_pos], True),
    ("digamma", lax.digamma, sc.digamma, F, [_pos], True),
    ("bessel_i0e", lax.bessel_i0e, sc.i0e, F, [_any], True),
    ("bessel_i1e", lax.bessel_i1e, sc.i1e, F, [_any], True),
    ("real", lax.real, np.real, C, [_any], False), ("imag", lax.imag, np.imag, C, [_any], False),
    ("conj", lax.conj, np.conj, C, [_any], False),
    ("not", lax.bitwise_not, np.invert, I + B, [_any], False),
    ("population_count", lax.population_count, lambda x: np.vectorize(
        lambda v: bin(int(v) & 0xFFFFFFFF).count("1"))(x).astype(x.dtype), I, [_any], False),
    ("add", lax.add, np.add, FC + I, [_any, _any], True),
    ("sub", lax.sub, np.subtract, FC + I, [_any, _any], True),
    ("mul", lax.mul, np.multiply, FC + I, [_any, _any], True),
    ("div", lax.div, np.divide, FC, [_any, _pos], True),
    ("rem", lax.rem, np.fmod, F, [_any, _pos], True),
    ("pow", lax.pow, np.power, F, [_pos, _any], True),
    ("max", lax.max, np.maximum, F + I, [_any, _any], True),
    ("min", lax.min, np.minimum, F + I, [_any, _any], True),
    ("atan2", lax.atan2, np.arctan2, F, [_any, _any], True),
    ("nextafter", lax.nextafter, np.nextafter, F, [_any, _any], False),
    ("eq", lax.eq, np.equal, F + I, [_small_int, _small_int], False),
    ("ne", lax.ne, np.not_equal, F + I, [_small_int, _small_int], False),
    ("lt", lax.lt, np.less, F + I, [_any, _any], False),
    ("le", lax.le, np.less_equal, F + I, [_small_int, _small_int], False),
    ("gt", lax.gt, np.greater, F + I, [_any, _any], False),
    ("ge", lax.ge, np.greater_equal, F + I, [_small_int, _small_int], False),
    ("and", lax.bitwise_and, np.bitwise_and, I + U + B, [_any, _any], False),
    ("or", lax.bitwise_or, np.bitwise_or, I + U + B, [_any, _any], False),
    ("xor", lax.bitwise_xor, np.bitwise_xor, I + U + B, [_any, _any], False),
    ("shift_left", lax.shift_left, np.left_shift, I, [_any, _small_int], False),
    ("shift_right_arithmetic", lax.shift_right_arithmetic, np.right_shift, I,
     [_any, _small_int], False),
    ("complex", lax.complex, lambda x, y: x + 1j * y, F, [_any, _any], True),
    ("clamp", lambda lo, x: lax.clamp(lo, x, lo + 1), lambda lo, x: np.clip(x, lo, lo + 1), F,
     [_any, _any], True),
]
CASES = [(r, dt) for r in REC for dt in r[3]]
IDS = [f"{r[0]}-{dt}" for r, dt in CASES]
SHAPES = [(), (3,), (2, 3)]


def _args(rec, dt, shape, seed=0):
    rng = np.random.RandomState(seed)
    return [gen(rng, shape, dt) for gen in rec[4]]


def _close(got, want, dt):
    got, want = np.asarray(got), np.asarray(want)
    tol = 2e-6 if np.dtype(dt).kind in "fc" else 0
    np.testing.assert_allclose(got, want, rtol=max(tol, 0) * 5, atol=tol * 5)


@pytest.mark.parametrize("rec,dt", CASES, ids=IDS)
def test_values_vs_numpy(rec, dt):
    name, fn, ref = rec[:3]
    for shape in SHAPES:
        args = _args(rec, dt, shape)
        out = fn(*[jnp.asarray(a) for a in args])
        want = np.asarray(ref(*args))
        assert out.shape == want.shape, (name, shape)
        if want.dtype.kind != "b" and np.dtype(dt).kind != "c" and name not in ("real", "imag"):
            assert out.dtype == (np.dtype(bool) if want.dtype == bool else out.dtype)
        _close(out, want.astype(out.dtype) if out.dtype != bool else want, dt)


JAX_NAME = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or",
            "xor": "bitwise_xor"}
COMPOSED = {"integer_pow3", "acosh", "round", "clamp"}   # records that wrap a lax call


@pytest.mark.parametrize("rec,dt", CASES, ids=IDS)
def test_vs_jax(rec, dt):
    pytest.importorskip("jax")
    import jax.numpy as rjnp
    from jax import lax as rlax
    name, fn = rec[:2]
    if name in COMPOSED:
        pytest.skip("composed record: covered by the NumPy reference")
    args = _args(rec, dt, (2, 3))
    ours = fn(*[jnp.asarray(a) for a in args])
    theirs = getattr(rlax, JAX_NAME.get(name, name))(*[rjnp.asarray(a) for a in args])
    assert ours.dtype == theirs.dtype and ours.weak_type == theirs.weak_type
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rec,dt", CASES, ids=IDS)
def test_jit_matches_eager(rec, dt):
    fn = rec[1]
    args = [jnp.asarray(a) for a in _args(rec, dt, (2, 3), seed=1)]
    _close(jax.jit(fn)(*args), fn(*args), dt)


@pytest.mark.parametrize("rec,dt", CASES, ids=IDS)
def test_vmap_matches_loop(rec, dt):
    fn, nargs = rec[1], len(rec[4])
    rng = np.random.RandomState(hash(rec[0]) % 1000)
    in_axes = [int(rng.randint(0, 3)) if rng.rand() < 0.8 else None for _ in range(nargs)]
    if all(a is None for a in in_axes):
        in_axes[0] = 0
    out_axis = int(rng.randint(0, 3))
    per = _args(rec, dt, (2, 3), seed=2)
    b = 4
    args = []
    for k, (a, ax) in enumerate(zip(per, in_axes)):
        if ax is None:
            args.append(a)
        else:
            stack = np.stack([_args(rec, dt, (2, 3), seed=10 + i)[k] for i in range(b)], ax)
            args.append(stack)
    got = jax.vmap(fn, in_axes=tuple(in_axes), out_axes=out_axis)(*[jnp.asarray(a) for a in args])
    want = np.stack([np.asarray(fn(*[jnp.asarray(a if ax is None else np.take(a, i, ax))
                                      for a, ax in zip(args, in_axes)])) for i in range(b)],
                    out_axis)
    _close(got, want, dt)


GRAD_CASES = [(r, dt) for r, dt in CASES if r[5] and np.dtype(dt).kind == "f"]


@pytest.mark.parametrize("rec,dt", GRAD_CASES, ids=[f"{r[0]}-{dt}" for r, dt in GRAD_CASES])
def test_check_grads(rec, dt):
    fn = rec[1]
    with jax.enable_x64():
        args = [a.astype(np.float64) for a in _args(rec, dt, (3,), seed=3)]
        check_grads(fn, tuple(args), 2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("dt", ["float32", "float64", "int8", "int16", "uint64", "complex64",
                                "complex128", "bfloat16", "bool"])
def test_select_n_large_is_bit_exact(dt):
    # large selects take a branchless path over the bit patterns: it must equal np.where bit
    # for bit (NaN payloads, -0.0) for every dtype, with strided and broadcast cases too
    import ml_dtypes
    rng = np.random.default_rng(1)
    npdt = ml_dtypes.bfloat16 if dt == "bfloat16" else np.dtype(dt)
    which = rng.random((90, 70)) > 0.5
    a = (rng.standard_normal((90, 70)) * 50).astype(npdt)
    b = (rng.standard_normal((70, 90)) * 50).astype(npdt).T
    if np.dtype(npdt).kind == "f":
        a[0, :3] = [np.nan, -0.0, np.inf]
    with jax.enable_x64(True):
        for t, f in [(a, b), (np.broadcast_to(a[0], a.shape), b)]:
            got = np.asarray(lax.select(which, t, f))
            want = np.where(which, t, f)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
            got = np.asarray(jax.jit(lax.select)(which, t, f))
            assert got.tobytes() == want.tobytes()


def _squaring_reference(x, n):
    """``x ** n`` by XLA's repeated squaring (products of the powers of n's set bits)."""
    acc, base = None, x
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    return acc


@pytest.mark.parametrize("y", [1, 2, 3, 4, 5, 7, 8, 13, -1, -2, -3, -6])
@pytest.mark.parametrize("dt", ["float32", "float64", "complex64"])
def test_integer_pow_bits_are_repeated_squaring(y, dt):
    # XLA computes integer_pow by repeated squaring; a correctly rounded pow (np.power)
    # differs from it in the last bit for about a third of float32 cubes
    rng = np.random.default_rng(abs(y))
    x = (rng.standard_normal(4000) * 1.5).astype(dt)
    if dt.startswith("complex"):
        x = x + 1j * (rng.standard_normal(4000) * 1.5).astype(dt)
    with jax.enable_x64(dt.endswith("64") and dt != "complex64"):
        want = _squaring_reference(x, abs(y))
        if y < 0:
            want = np.reciprocal(want)
        for f in (lambda v: lax.integer_pow(v, y), jax.jit(lambda v: v ** y)):
            got = np.asarray(f(jnp.asarray(x)))
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        with jax.config.override("jaxlite_tier", 2):   # (a fused kernel: one loop)
            got = np.asarray(jax.jit(lambda v: jnp.sin(v ** y) if dt == "float32" else v ** y)(
                jnp.asarray(x)))
        ref = np.asarray(jnp.sin(want)) if dt == "float32" else want   # (XLA's sin)
        assert got.tobytes() == ref.tobytes()


def test_integer_pow_matches_jax_bits():
    pytest.importorskip("jax")
    import jax as real_jax
    x = (np.random.default_rng(0).standard_normal(20000) * 3).astype(np.float32)
    for y in (3, 4, 5, -3):
        want = np.asarray(real_jax.jit(lambda v, y=y: v ** y)(x))
        assert np.asarray(jax.jit(lambda v, y=y: v ** y)(x)).tobytes() == want.tobytes()
        assert np.asarray(jnp.asarray(x) ** y).tobytes() == want.tobytes()
