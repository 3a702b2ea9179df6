"""jax.scipy.special.fresnel: values vs SciPy (float32 and float64), vs an independent
large-argument reference (exact rational phase + long-double auxiliary series, where SciPy's
own phase x^2/2 loses digits), special values, dtypes and weak types, derivatives (first and
second order, vs the integrands and finite differences), jit/vmap, and JAX when installed."""
from fractions import Fraction

import numpy as np
import pytest
import scipy.special as ss

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.scipy.special import fresnel

A = np.asarray


def _max_rel(ours, want):
    ours, want = A(ours, np.float64), A(want, np.float64)
    return np.max(np.abs(ours - want) / np.abs(want))


# SciPy (cephes) is accurate to a few float64 ulps for |x| below ~8
MODERATE = np.concatenate([np.linspace(-8, 8, 4001), np.geomspace(1e-6, 8, 800),
                           [0.999999, 1.0, 1.000001, 2.9999, 3.0, 5.9999, 6.0, 6.0001]])
MODERATE = MODERATE[MODERATE != 0]


def test_float64_vs_scipy(x64):
    s, c = fresnel(MODERATE)
    assert s.dtype == c.dtype == np.float64
    want_s, want_c = ss.fresnel(MODERATE)
    assert _max_rel(s, want_s) < 1.5e-15
    assert _max_rel(c, want_c) < 1.5e-15


def test_float32_vs_scipy():
    x = np.concatenate([MODERATE, np.linspace(8, 300, 3001), -np.geomspace(8, 1e3, 500)])
    x32 = x.astype(np.float32)
    s, c = fresnel(x32)
    assert s.dtype == c.dtype == np.float32
    want_s, want_c = ss.fresnel(x32.astype(np.float64))
    assert _max_rel(s, want_s) < 6e-7      # within a few float32 ulps
    assert _max_rel(c, want_c) < 6e-7


def _large_reference(x):
    """S, C for large |x| from the auxiliary-function series in long double with the
    phase x^2/2 mod 2 taken exactly in rational arithmetic (an independent path)."""
    out_s, out_c = [], []
    for v in x:
        a = np.longdouble(abs(v))
        phase = Fraction(float(abs(v))) ** 2 / 2 % 2
        sin_u = np.sin(np.longdouble(np.pi) * np.longdouble(float(phase)))
        cos_u = np.cos(np.longdouble(np.pi) * np.longdouble(float(phase)))
        w2 = 1 / (np.longdouble(np.pi) * a * a) ** 2
        f_t = g_t = np.longdouble(1)
        f_sum = g_sum = np.longdouble(0)
        for m in range(12):
            f_sum, g_sum = f_sum + f_t, g_sum + g_t
            f_t = -f_t * (4 * m + 1) * (4 * m + 3) * w2
            g_t = -g_t * (4 * m + 3) * (4 * m + 5) * w2
        f = f_sum / (np.longdouble(np.pi) * a)
        g = g_sum / (np.longdouble(np.pi) ** 2 * a ** 3)
        sgn = np.sign(v)
        out_s.append(sgn * float(0.5 - f * cos_u - g * sin_u))
        out_c.append(sgn * float(0.5 + f * sin_u - g * cos_u))
    return np.array(out_s), np.array(out_c)


def test_large_arguments_vs_exact_phase(x64):
    rng = np.random.default_rng(3)
    x = np.concatenate([np.exp(rng.uniform(np.log(20), np.log(1e7), 300)), [-123.456, 1e4]])
    want_s, want_c = _large_reference(x)
    s, c = fresnel(x)
    assert _max_rel(s, want_s) < 1e-15
    assert _max_rel(c, want_c) < 1e-15
    s32, c32 = fresnel(x.astype(np.float32))
    want_s, want_c = _large_reference(x.astype(np.float32).astype(np.float64))
    assert _max_rel(s32, want_s) < 2.5e-7
    assert _max_rel(c32, want_c) < 2.5e-7


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_and_symmetry(x64, dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 2.0 ** 60], dtype)
    s, c = fresnel(x)
    np.testing.assert_array_equal(A(s), np.array([0, 0, .5, -.5, np.nan, .5, -.5, .5], dtype))
    np.testing.assert_array_equal(A(c), np.array([0, 0, .5, -.5, np.nan, .5, -.5, .5], dtype))
    pts = np.linspace(0.01, 20, 777).astype(dtype)
    sp, cp = fresnel(pts)
    sn, cn = fresnel(-pts)
    np.testing.assert_array_equal(A(sn), -A(sp))
    np.testing.assert_array_equal(A(cn), -A(cp))


def test_dtypes_and_weak_types():
    for arg, dt in [(1.0, np.float32), (1, np.float32), (np.float64(1.0), np.float32),
                    (jnp.arange(3), np.float32), (jnp.array([1.0, 2.0], jnp.float16),
                                                  np.float16),
                    (jnp.array([1.0, 2.0], jnp.bfloat16), jnp.bfloat16)]:
        s, c = fresnel(arg)
        assert s.dtype == c.dtype == np.dtype(dt)
        assert not s.weak_type and not c.weak_type
    s, c = fresnel(jnp.array([1.0, 2.0], jnp.float16))
    want_s, want_c = ss.fresnel([1.0, 2.0])
    np.testing.assert_allclose(A(s, np.float64), want_s, rtol=1e-3)
    np.testing.assert_allclose(A(c, np.float64), want_c, rtol=1e-3)
    with pytest.raises(NotImplementedError, match="complex"):
        fresnel(1 + 1j)


def test_first_derivatives_are_the_integrands(x64):
    x = np.concatenate([np.linspace(-9, 9, 181), [0.0, 1e3 + 0.25, 12345.678]])
    ds = jaxlite.vmap(jaxlite.grad(lambda v: fresnel(v)[0]))(x)
    dc = jaxlite.vmap(jaxlite.grad(lambda v: fresnel(v)[1]))(x)
    phase = np.array([float(Fraction(float(v)) ** 2 / 2 % 2) for v in x])
    np.testing.assert_allclose(A(ds), np.sin(np.pi * phase), atol=1e-14)
    np.testing.assert_allclose(A(dc), np.cos(np.pi * phase), atol=1e-14)
    # float32: the exactly reduced phase keeps the derivative accurate for large x too
    x32 = np.array([7.0, 10.0, 123.25, 1000.5, 4097.0], np.float32)
    ds32 = jaxlite.vmap(jaxlite.grad(lambda v: fresnel(v)[0]))(x32)
    assert ds32.dtype == np.float32
    phase = np.array([float(Fraction(float(v)) ** 2 / 2 % 2) for v in x32])
    np.testing.assert_allclose(A(ds32), np.sin(np.pi * phase), atol=2e-7)


def test_second_derivatives_and_finite_differences(x64):
    x = np.array([-3.3, -0.7, 0.4, 1.3, 2.2, 5.5, 7.1])
    d2s = jaxlite.vmap(jaxlite.grad(jaxlite.grad(lambda v: fresnel(v)[0])))(x)
    d2c = jaxlite.vmap(jaxlite.grad(jaxlite.grad(lambda v: fresnel(v)[1])))(x)
    np.testing.assert_allclose(A(d2s), np.pi * x * np.cos(np.pi * x * x / 2), rtol=1e-12)
    np.testing.assert_allclose(A(d2c), -np.pi * x * np.sin(np.pi * x * x / 2), rtol=1e-12)
    h = 1e-6
    for i, k in enumerate([0, 1]):
        fd = (ss.fresnel(x + h)[k] - ss.fresnel(x - h)[k]) / (2 * h)
        got = jaxlite.vmap(jaxlite.grad(lambda v: fresnel(v)[i]))(x)
        np.testing.assert_allclose(A(got), fd, atol=1e-8)


def test_jit_vmap_and_jvp():
    x = jnp.linspace(-7, 7, 57)
    s, c = fresnel(x)
    js, jc = jaxlite.jit(fresnel)(x)
    # (compiled, products feeding additions are fused multiply-adds, as in JAX's jit)
    np.testing.assert_allclose(A(js), A(s), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(A(jc), A(c), rtol=1e-6, atol=1e-7)
    vs, vc = jaxlite.vmap(fresnel)(x.reshape(3, 19))
    np.testing.assert_allclose(A(vs).ravel(), A(s), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(A(vc).ravel(), A(c), rtol=1e-6, atol=1e-7)
    (ps, pc), (ts, tc) = jaxlite.jvp(fresnel, (x,), (jnp.ones_like(x),))
    np.testing.assert_allclose(A(ts), np.sin(np.pi * A(x, np.float64) ** 2 / 2), atol=5e-6)
    np.testing.assert_allclose(A(tc), np.cos(np.pi * A(x, np.float64) ** 2 / 2), atol=5e-6)
    g = jaxlite.jit(jaxlite.grad(lambda v: jnp.sum(fresnel(v)[0] * fresnel(v)[1])))(x)
    want = np.sin(np.pi * A(x, np.float64) ** 2 / 2) * A(c) + A(s) * np.cos(
        np.pi * A(x, np.float64) ** 2 / 2)
    np.testing.assert_allclose(A(g), want, atol=1e-5)


# ------------------------------------------------------------------------ vs JAX

def test_matches_jax_float32():
    jax = pytest.importorskip("jax")
    x = np.concatenate([np.linspace(-10, 10, 2001), [0.0, 1.6, 1.6000001]]).astype(np.float32)
    ours, theirs = fresnel(x), jax.scipy.special.fresnel(x)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype and o.weak_type == t.weak_type
        np.testing.assert_allclose(A(o), A(t), rtol=2e-6, atol=1e-7)
    for k in (0, 1):
        go = jaxlite.vmap(jaxlite.grad(lambda v: fresnel(v)[k]))(x)
        gt = jax.vmap(jax.grad(lambda v: jax.scipy.special.fresnel(v)[k]))(x)
        np.testing.assert_allclose(A(go), A(gt), atol=3e-5)
    for arg in (1.0, 2, np.float16(0.5)):
        for o, t in zip(fresnel(arg), jax.scipy.special.fresnel(arg)):
            assert o.dtype == t.dtype and o.weak_type == t.weak_type
            np.testing.assert_allclose(A(o).astype(np.float64), A(t).astype(np.float64),
                                       rtol=1e-3)


def test_matches_jax_float64(x64):
    jax = pytest.importorskip("jax")
    x = np.linspace(-10, 10, 2001)
    with jax.enable_x64():
        theirs = jax.scipy.special.fresnel(x)
        gt = jax.vmap(jax.grad(lambda v: jax.scipy.special.fresnel(v)[1]))(x)
    ours = fresnel(x)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype == np.float64
        np.testing.assert_allclose(A(o), A(t), rtol=2e-15, atol=1e-300)
    go = jaxlite.vmap(jaxlite.grad(lambda v: fresnel(v)[1]))(x)
    np.testing.assert_allclose(A(go), A(gt), atol=1e-12)
