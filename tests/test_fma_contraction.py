"""Compiled programs fuse a float32 product feeding an addition into one multiply-add, as
XLA:CPU's generated code does (LLVM contracts ``fadd(fmul(a, b), c)`` when the product has
no other use): jit gives JAX's jit bits, eager ops stay separately rounded (JAX's eager ops
are compiled one by one), printed jaxprs are unchanged; float64 contracts too where the processor has FMA (as XLA:CPU)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.compiler import fusion
from jaxlite._src.cpu_math import xla64
from jaxlite._src.cpu_math.fma import fma_f32_np as fma

HAVE_NUMBA = fusion.numba_module() is not None
rng = np.random.default_rng(0)
A, B, C, D = (rng.standard_normal(4096).astype(np.float32) for _ in range(4))
M = np.float32(0.9)

# (program, what XLA computes) — the references were checked against JAX 0.10.2's jit
CASES = {
    "a*b+c": (lambda a, b, c, d: a * b + c, lambda a, b, c, d: fma(a, b, c)),
    "c+a*b": (lambda a, b, c, d: c + a * b, lambda a, b, c, d: fma(a, b, c)),
    "a*b-c": (lambda a, b, c, d: a * b - c, lambda a, b, c, d: fma(a, b, -c)),
    "c-a*b": (lambda a, b, c, d: c - a * b, lambda a, b, c, d: fma(-a, b, c)),
    "a*b+c*d": (lambda a, b, c, d: a * b + c * d, lambda a, b, c, d: fma(a, b, c * d)),
    "shared product": (lambda a, b, c, d: (a * b + c) * (a * b),
                       lambda a, b, c, d: (a * b + c) * (a * b)),
    "literal factor": (lambda a, b, c, d: a * 0.3 + c,
                       lambda a, b, c, d: fma(a, np.float32(0.3), c)),
    "adam moment": (lambda a, b, c, d: M * a + (1 - M) * b,
                    lambda a, b, c, d: fma(M, a, (np.float32(1) - M) * b)),
    "square": (lambda a, b, c, d: a ** 2 + c, lambda a, b, c, d: fma(a, a, c)),
    "cube": (lambda a, b, c, d: a ** 3 + c, lambda a, b, c, d: fma(a * a, a, c)),
    "fifth": (lambda a, b, c, d: a ** 5 + c,
              lambda a, b, c, d: fma(a, (a * a) * (a * a), c)),
    "scalar addend": (lambda a, b, c, d: a * b + c[0],
                      lambda a, b, c, d: fma(a, b, c[0])),
}


def _bits(x):
    return np.asarray(x).view(np.uint32)


@pytest.mark.parametrize("tier", [1, 2] if HAVE_NUMBA else [1])
@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_contracts_as_xla(name, tier):
    prog, ref = CASES[name]
    with jax.config.override("jaxlite_tier", tier):
        got = jax.jit(prog)(A, B, C, D)
    np.testing.assert_array_equal(_bits(got), _bits(ref(A, B, C, D)))


# integer powers are XLA's repeated squaring (NumPy's ** rounds once)
EAGER = {"cube": lambda a, b, c, d: (a * a) * a + c,
         "fifth": lambda a, b, c, d: a * ((a * a) * (a * a)) + c}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_rounds_each_op(name):
    prog, _ = CASES[name]
    got = prog(*map(jnp.asarray, (A, B, C, D)))
    np.testing.assert_array_equal(_bits(got), _bits(EAGER.get(name, prog)(A, B, C, D)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_as_jax_jit(name):
    jax_ = pytest.importorskip("jax")
    prog, _ = CASES[name]
    want = jax_.jit(prog)(A, B, C, D)
    got = jax.jit(prog)(A, B, C, D)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_loop_bodies_contract_too():
    def f(x, y):
        return lax.fori_loop(0, 5, lambda i, c: c * 0.9 + y, x)
    want = A
    for _ in range(5):
        want = fma(want, np.float32(0.9), B)
    for tier in [1, 2] if HAVE_NUMBA else [1]:
        with jax.config.override("jaxlite_tier", tier):
            np.testing.assert_array_equal(_bits(jax.jit(f)(A, B)), _bits(want))


def test_printed_jaxpr_and_gradients_unchanged():
    f = CASES["a*b+c"][0]
    text = str(jax.make_jaxpr(f)(A, B, C, D))
    assert "xla_fma" not in text and "mul" in text and "add" in text
    g = jax.jit(jax.grad(lambda a, b, c: jnp.sum(a * b + c), argnums=(0, 1, 2)))(A, B, C)
    np.testing.assert_array_equal(np.asarray(g[0]), B)
    np.testing.assert_array_equal(np.asarray(g[2]), np.ones_like(C))


def _fma64(a, b, c):
    """The correctly rounded float64 ``a * b + c``, with exact rationals."""
    from fractions import Fraction
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    return np.array([float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                     for x, y, z in zip(a.ravel(), b.ravel(), c.ravel())]).reshape(a.shape)


F64_CASES = {   # (program, what XLA:CPU computes; checked against JAX 0.10.2's jit with x64)
    "a*b+c": (lambda a, b, c: a * b + c, lambda a, b, c: _fma64(a, b, c)),
    "a*1.538+0.5": (lambda a, b, c: a * 1.538 + 0.5, lambda a, b, c: _fma64(a, 1.538, 0.5)),
    "a*b-c": (lambda a, b, c: a * b - c, lambda a, b, c: _fma64(a, b, -c)),
    "c-a*b": (lambda a, b, c: c - a * b, lambda a, b, c: _fma64(-a, b, c)),
}
_R64 = np.random.default_rng(1)
A64, B64, C64 = (_R64.standard_normal(512) * s for s in (10, 1, 1))


@pytest.mark.skipif(not xla64.FUSED, reason="XLA:CPU contracts float64 only with FMA")
@pytest.mark.parametrize("tier", [1, 2] if HAVE_NUMBA else [1])
@pytest.mark.parametrize("shape", [(), (3,), (4, 128)])
@pytest.mark.parametrize("name", sorted(F64_CASES))
def test_float64_contracts_as_xla(name, shape, tier):
    prog, ref = F64_CASES[name]
    n = int(np.prod(shape))
    a, b, c = (v[:n].reshape(shape) for v in (A64, B64, C64))
    with jax.experimental.enable_x64(), jax.config.override("jaxlite_tier", tier):
        got = np.asarray(jax.jit(prog)(a, b, c))
        eager = np.asarray(prog(*map(jnp.asarray, (a, b, c))))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.view(np.uint64), ref(a, b, c).view(np.uint64))
    np.testing.assert_array_equal(eager, prog(a, b, c))     # eager: two roundings


def test_float64_contraction_changes_the_bits():
    a, b, c = A64, B64, C64
    assert (_fma64(a, b, c) != a * b + c).sum() > 50
    assert (_fma64(a, 1.538, 0.5) != a * 1.538 + 0.5).sum() > 10


@pytest.mark.parametrize("name", sorted(F64_CASES))
def test_float64_same_bits_as_jax_jit(name):
    jax_ = pytest.importorskip("jax")
    prog, _ = F64_CASES[name]
    prev = jax_.config.jax_enable_x64
    jax_.config.update("jax_enable_x64", True)
    try:
        want = np.asarray(jax_.jit(prog)(A64, B64, C64))
    finally:
        jax_.config.update("jax_enable_x64", prev)
    with jax.experimental.enable_x64():
        got = np.asarray(jax.jit(prog)(A64, B64, C64))
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_float64_kernel_edges():
    """The NumPy float64 multiply-add (used below numba's threshold) is exact at the edges
    of its error-free transformations: huge and tiny (subnormal) products, a product beyond
    the float64 range with a finite result, infinities and NaN."""
    from jaxlite._src.cpu_math.fma import fma_f64
    r = np.random.default_rng(2)
    n = 200
    finite = [(r.standard_normal(n) * 2.0 ** 996, r.standard_normal(n) * 2.0 ** -30,
               r.standard_normal(n) * 2.0 ** 966),
              (r.standard_normal(n) * 2.0 ** -500, r.standard_normal(n) * 2.0 ** -480,
               r.standard_normal(n) * 2.0 ** -985),
              (r.standard_normal(n) * 2.0 ** -537, r.standard_normal(n) * 2.0 ** -537,
               r.standard_normal(n) * 2.0 ** -1070),
              (np.array([1e308]), np.array([3.0]), np.array([-1.5e308]))]
    for a, b, c in finite:
        np.testing.assert_array_equal(fma_f64(a, b, c), _fma64(a, b, c))
    a = np.array([np.inf, 0.0, 1e308, 2.0])
    b = np.array([0.0, np.inf, 10.0, 3.0])
    c = np.array([1.0, 1.0, -np.inf, np.nan])
    np.testing.assert_array_equal(fma_f64(a, b, c), [np.nan, np.nan, -np.inf, np.nan])
    # signed zeros: a zero product plus a zero follows IEEE's sum of zeros, an exact
    # cancellation is +0 (the FMA instruction's results)
    a = np.array([-0.0, 0.0, -0.0, 1.0, 0.0, 2.0, -0.0])
    b = np.array([1.0, -1.0, -0.0, -0.0, 0.0, 3.0, 1.0])
    c = np.array([-0.0, -0.0, -0.0, -0.0, -0.0, -6.0, 0.0])
    got = fma_f64(a, b, c)
    assert got.tolist() == [0.0] * 7
    assert np.signbit(got).tolist() == [True, True, False, True, False, False, False]


def test_subtractions_contract_without_a_separate_negation():
    """``a*b - c`` and ``c - a*b`` are one operation each (XLA's fmsub / fnmadd), so a
    broadcast operand is not negated on its own before the kernel reads it."""
    r = C[:1]
    f = jax.jit(lambda a, r: (a * 2.0 - r, r - a * a))
    text = f.lower(A, r).compile().as_text()
    assert "xla_fms" in text and "xla_fnma" in text and "negative" not in text, text
    got = f(A, r)
    np.testing.assert_array_equal(_bits(got[0]), _bits(fma(A, np.float32(2), -r)))
    np.testing.assert_array_equal(_bits(got[1]), _bits(fma(-A, A, r)))
    g = jax.jit(jax.grad(lambda a, r: jnp.sum(a * 2.0 - r) + jnp.sum(r - a * a),
                         argnums=(0, 1)))(A, r)
    np.testing.assert_allclose(np.asarray(g[0]), 2.0 - 2 * A, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(g[1]), np.zeros_like(r))
