"""Smaller jax.lax names of JAX 0.10.2 (issue 20): mulhi, empty, broadcast_like,
optimization_barrier (now a primitive), pbroadcast, platform_dependent,
random_gamma_grad, igamma_grad_a."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _mulhi_ref(x, y, dt):
    bits = np.dtype(dt).itemsize * 8
    out = [(int(a) * int(b)) >> bits for a, b in zip(x, y)]
    mod = 1 << bits
    return np.array([o % mod for o in out], dtype=np.uint64 if bits == 64 else np.int64) \
        .astype(dt) if np.dtype(dt).kind == "u" else \
        np.array([((o + mod // 2) % mod) - mod // 2 for o in out], dtype=np.int64).astype(dt)


@pytest.mark.parametrize("dt", INT_DTYPES)
def test_mulhi_matches_python_ints(dt):
    info = np.iinfo(dt)
    rng = np.random.default_rng(1)
    vals = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.max // 3]
    x = np.array(vals + list(rng.integers(info.min, info.max, 20, dtype=dt, endpoint=True)),
                 dt)
    y = np.array(list(reversed(vals)) + list(rng.integers(info.min, info.max, 20, dtype=dt,
                                                          endpoint=True)), dt)
    with jax.enable_x64(np.dtype(dt).itemsize == 8):
        got = np.asarray(lax.mulhi(jnp.asarray(x), jnp.asarray(y)))
        np.testing.assert_array_equal(got, _mulhi_ref(x, y, dt))
        np.testing.assert_array_equal(np.asarray(jax.jit(lax.mulhi)(x, y)), got)
        np.testing.assert_array_equal(np.asarray(jax.vmap(lax.mulhi)(x, y)), got)


def test_mulhi_jaxpr_and_errors():
    x = jnp.array([3, -5], jnp.int32)
    assert str(jax.make_jaxpr(lax.mulhi)(x, x)) == \
        "{ lambda ; a:i32[2] b:i32[2]. let c:i32[2] = mulhi a b in (c,) }"
    with pytest.raises(TypeError):
        lax.mulhi(jnp.ones(2), jnp.ones(2))


def test_empty_and_broadcast_like():
    e = lax.empty((2, 3), jnp.int32)
    assert e.shape == (2, 3) and e.dtype == jnp.int32
    assert jax.jit(lambda: lax.empty(4, jnp.float32))().shape == (4,)
    a = jnp.ones((2, 3))
    assert str(jax.make_jaxpr(lambda a: lax.broadcast_like(1., a))(a)) == \
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = broadcast_in_dim 1.0:f32[] in (b,) }"
    np.testing.assert_array_equal(lax.broadcast_like(jnp.arange(3.), a),
                                  np.broadcast_to(np.arange(3.), (2, 3)))
    with pytest.raises(ValueError, match="incompatible shapes"):
        lax.broadcast_like(jnp.ones(4), a)


def test_optimization_barrier_primitive():
    pp = str(jax.make_jaxpr(lambda a: lax.optimization_barrier((a, a + 1)))(1.))
    assert "c:f32[] d:f32[] = optimization_barrier a b" in pp
    assert float(jax.grad(lambda a: lax.optimization_barrier((a * a, a + 1))[0])(3.)) == 6.0
    np.testing.assert_array_equal(jax.vmap(lambda a: lax.optimization_barrier(a * 2))(
        jnp.arange(3.)), [0., 2., 4.])
    out = jax.jit(lambda a: lax.optimization_barrier({"x": a, "y": a * 2}))(2.)
    assert float(out["y"]) == 4.0
    # kept by the compiler's dead-code and CSE passes: two barriers stay two
    f = jax.jit(lambda a: (lax.optimization_barrier(a + 1), lax.optimization_barrier(a + 1)))
    assert [float(v) for v in f(1.)] == [2.0, 2.0]
    lin = jax.linear_transpose(lambda a: lax.optimization_barrier(a * 3.), 1.)
    assert float(lin(1.)[0]) == 3.0


def test_platform_dependent():
    assert float(lax.platform_dependent(1., cpu=lambda a: a + 1, default=lambda a: a - 1)) == 2
    assert float(lax.platform_dependent(1., tpu=lambda a: a + 1, default=lambda a: a * 5)) == 5
    assert float(jax.jit(lambda x: lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.cos))(0.)) \
        == 0.0
    with pytest.raises(NotImplementedError, match="no branch for platform cpu"):
        lax.platform_dependent(1., tpu=lambda a: a)
    with pytest.raises(ValueError, match="Unsupported platform"):
        lax.platform_dependent(1., metal=lambda a: a, default=lambda a: a)


def test_pbroadcast_equals_masked_psum():
    from multidevice import run_snippet
    out = run_snippet("""
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
x = jnp.arange(4.) * 10
print(jax.pmap(lambda v: lax.pbroadcast(v, 'i', 2), axis_name='i')(x).tolist())
print(jax.vmap(lambda v: lax.pbroadcast({'a': v}, 'i', 1), axis_name='i')(x)['a'].tolist())
""", 4)
    assert out.split() == ["[20.0,", "20.0,", "20.0,", "20.0]", "[10.0,", "10.0,", "10.0,",
                           "10.0]"]


def test_random_gamma_grad_vs_finite_difference():
    # d sample / d a at fixed quantile: the implicit reparameterisation derivative
    from scipy import special
    a = np.array([1.0, 2.0, 5.0])
    x = np.array([0.5, 3.0, 4.0])
    got = np.asarray(lax.random_gamma_grad(jnp.asarray(a, jnp.float32),
                                           jnp.asarray(x, jnp.float32)))
    q = special.gammainc(a, x)
    eps = 1e-5
    fd = (special.gammaincinv(a + eps, q) - special.gammaincinv(a - eps, q)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-4)


# d/da P(a, x): JAX's series / continued-fraction algorithm run in float32 (the values
# below are JAX 0.10.2's, which the float32 algorithm gives to ~1e-5 relative)
IGAMMA_GRAD_A = [  # (a, x, JAX's igamma_grad_a, JAX's random_gamma_grad)
    (0.5, 0.2, -0.8201614, 0.7940505),
    (2.0, 3.0, -0.19742535, 1.321798),
    (2.0, 0.5, -0.15103424, 0.4980267),
    (5.0, 4.0, -0.18026985, 0.922726),
    (30.0, 31.0, -0.07068549, 1.0221483),
]


def test_igamma_grad_a_values():
    from scipy import special
    a, x, ga, rg = (np.float32(c) for c in zip(*IGAMMA_GRAD_A))
    got = np.asarray(lax.igamma_grad_a(a, x))
    np.testing.assert_allclose(got, ga, rtol=2e-5)
    np.testing.assert_allclose(np.asarray(lax.random_gamma_grad(a, x)), rg, rtol=2e-5)
    h = 1e-6 * a.astype(np.float64)
    fd = (special.gammainc(a + h, x.astype(np.float64)) -
          special.gammainc(a - h, x.astype(np.float64))) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-4)
    # JAX's special values: x = 0 gives 0, a <= 0, x < 0 or NaN give NaN
    edge = np.asarray(lax.igamma_grad_a(np.float32([1, 0, -1, 1, np.nan]),
                                        np.float32([0, 1, 1, -1, 1])))
    np.testing.assert_array_equal(edge, [0, np.nan, np.nan, np.nan, np.nan])
    assert lax.igamma_grad_a(jnp.float16(2), jnp.float16(3)).dtype == jnp.float16


def test_igamma_derivative_in_a():
    # gammainc / gammaincc are differentiable in a (numpyro's truncated Gamma)
    from jaxlite.scipy import special as jsp
    a, x = np.float32([0.5, 2.0, 30.0]), np.float32([0.2, 3.0, 31.0])
    ga = np.float32([IGAMMA_GRAD_A[i][2] for i in (0, 1, 4)])
    got = jax.vmap(jax.grad(jsp.gammainc))(a, x)
    np.testing.assert_allclose(got, ga, rtol=2e-5)
    np.testing.assert_allclose(jax.vmap(jax.grad(jsp.gammaincc))(a, x), -ga, rtol=2e-5)
    ga2, gx2 = jax.jit(jax.grad(lambda a, x: jsp.gammainc(a, x).sum(), (0, 1)))(a, x)
    np.testing.assert_allclose(ga2, ga, rtol=2e-5)
    np.testing.assert_allclose(gx2, jax.vmap(jax.grad(jsp.gammainc, 1))(a, x), rtol=1e-6)
    # a scalar a against an array x broadcasts the tangent
    g = jax.grad(lambda a: jsp.gammainc(a, x).sum())(np.float32(2.0))
    assert g.shape == ()
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        jax.grad(lambda a: lax.igamma_grad_a(a, 1.0))(2.0)


def test_igamma_grad_a_vs_jax():
    jax_ = pytest.importorskip("jax")
    rng = np.random.RandomState(0)
    a = np.concatenate([rng.uniform(0.01, 5, 300), rng.uniform(5, 100, 100)]).astype(np.float32)
    x = np.concatenate([rng.uniform(0, 10, 300), rng.uniform(0, 150, 100)]).astype(np.float32)
    for name in ("igamma_grad_a", "random_gamma_grad"):
        ours = np.asarray(getattr(lax, name)(a, x))
        theirs = np.asarray(getattr(jax_.lax, name)(a, x))
        np.testing.assert_allclose(ours, theirs, rtol=3e-4, atol=1e-6, err_msg=name)


def test_no_execution_reaches_eager_fast_paths():
    x = jnp.ones(3)
    with jax.no_execution():
        with pytest.raises(RuntimeError, match=r"jit\(add\)"):
            lax.add(x, x)
        with pytest.raises(RuntimeError, match=r"jit\(sin\)"):
            lax.sin(x)
    assert float(lax.sin(x)[0]) == pytest.approx(np.sin(1.0))


def _rp_values():
    rng = np.random.default_rng(0)
    return np.concatenate([
        rng.standard_normal(200) * 10.0 ** rng.integers(-45, 39, 200),
        [1.0009765, 3.14159, 1e-39, 65520., 65504., -2.5e-5, np.nan, np.inf, -np.inf, 0., -0.,
         6.1e-5, 6.0e-5]]).astype(np.float32)


# (exponent_bits, mantissa_bits) -> sum of the result's uint32 bits mod 1000003, recorded
# from JAX 0.10.2 (XLA's ReducePrecision) on the values above
RP_GOLDEN = {(5, 10): 282087, (8, 7): 353238, (4, 3): 720058, (5, 2): 719539,
             (8, 23): 522290}


@pytest.mark.parametrize("em", sorted(RP_GOLDEN))
def test_reduce_precision_bits(em):
    r = np.asarray(lax.reduce_precision(_rp_values(), *em))
    assert int(r.view(np.uint32).sum() % 1000003) == RP_GOLDEN[em]
    assert np.isnan(r).sum() == 1


def test_reduce_precision_semantics():
    x = np.float32([1.0009765, 3.14159, 65520., -2.5e-5, 1e-39])
    np.testing.assert_array_equal(lax.reduce_precision(x, 5, 10),
                                  x.astype(np.float16).astype(np.float32) * [1, 1, 1, 0, 0])
    assert np.signbit(np.asarray(lax.reduce_precision(x, 5, 10))[3])
    import ml_dtypes
    np.testing.assert_array_equal(lax.reduce_precision(x, 8, 7),
                                  x.astype(ml_dtypes.bfloat16).astype(np.float32))
    assert float(jax.grad(lambda v: lax.reduce_precision(v, 5, 2))(1.3)) == 1.0
    assert "reduce_precision[exponent_bits=5 mantissa_bits=10]" in str(
        jax.make_jaxpr(lambda v: lax.reduce_precision(v, 5, 10))(1.))
    np.testing.assert_array_equal(jax.vmap(lambda v: lax.reduce_precision(v, 8, 7))(x),
                                  lax.reduce_precision(x, 8, 7))
    with pytest.raises(TypeError, match="floating point"):
        lax.reduce_precision(jnp.arange(3), 5, 10)


def test_reduce_precision_vs_jax():
    jr = pytest.importorskip("jax")
    v = _rp_values()
    for em in [(6, 0), (3, 20), (11, 52)]:
        np.testing.assert_array_equal(lax.reduce_precision(v, *em),
                                      jr.lax.reduce_precision(v, *em))


def test_tokens():
    tok = lax.create_token()
    assert type(tok).__name__ == "Token"
    assert type(lax.after_all(tok, lax.create_token())).__name__ == "Token"
    assert type(jax.jit(lambda: lax.create_token())()).__name__ == "Token"
    out = jax.jit(lambda t, x: (lax.after_all(t), x * 2))(tok, 1.)
    assert type(out[0]).__name__ == "Token" and float(out[1]) == 2.0
    assert str(jax.make_jaxpr(lambda t: lax.after_all(t, t))(tok)) == \
        "{ lambda ; a:Tok. let b:Tok = after_all a a in (b,) }"
    assert str(jax.make_jaxpr(lambda: lax.create_token())()) == \
        "{ lambda ; . let a:Tok = create_token  in (a,) }"
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(1.)
    np.testing.assert_array_equal(
        jax.vmap(lambda x: lax.after_all(lax.create_token()) and x)(jnp.ones(2)), [1., 1.])
    assert float(jax.grad(lambda x: (lax.create_token(), x * 2)[1])(1.)) == 2.0
