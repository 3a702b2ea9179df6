"""Compiled programs fuse a float32 product feeding an addition into one multiply-add, as
XLA:CPU's generated code does (LLVM contracts ``fadd(fmul(a, b), c)`` when the product has
no other use): jit gives JAX's jit bits, eager ops stay separately rounded (JAX's eager ops
are compiled one by one), printed jaxprs are unchanged, float64 is left alone."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.compiler import fusion
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


def test_float64_is_not_contracted():
    with jax.experimental.enable_x64():
        a, b, c = (np.asarray(v, np.float64) for v in (A, B, C))
        got = jax.jit(lambda a, b, c: a * b + c)(a, b, c)
        np.testing.assert_array_equal(np.asarray(got), a * b + c)


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
