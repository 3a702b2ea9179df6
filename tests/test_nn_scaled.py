"""jax.nn.scaled_matmul / scaled_dot_general / get_scaled_dot_general_config.

JAX 0.10.2 only *traces* these on CPU (running them raises NotImplementedError: cuDNN only),
so the JAX references here evaluate JAX's own jaxpr with a NumPy stand-in for its
``scaled_matmul_wrapper`` equation: every quantization step is JAX's. The tests without JAX
check the mathematics (NumPy dequantize-and-contract, power-of-two scales, error bounds,
straight-through gradients)."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import nn
from jaxlite._src.nn.scaled_matmul import BlockScaleConfig, quantize

BATCHED = (((2,), (2,)), ((0,), (0,)))


def _ref_scaled_matmul(a, b, sa, sb, dtype=np.float32):
    def deq(x, s):
        x, s = np.asarray(x).astype(np.float32), np.asarray(s).astype(np.float32)
        return x * np.repeat(s, x.shape[-1] // s.shape[-1], axis=-1)
    return np.einsum("bmk,bnk->bmn", deq(a, sa), deq(b, sb)).astype(dtype)


def _rand(shape, seed, scale=1.0):
    return (np.random.RandomState(seed).randn(*shape) * scale).astype(np.float32)


# ----------------------------------------------------------------------------- scaled_matmul

def test_scaled_matmul_doc_example():
    a = jnp.array([1, 2, 3]).reshape((1, 1, 3))
    b = jnp.array([4, 5, 6]).reshape((1, 1, 3))
    s = jnp.array([0.5]).reshape((1, 1, 1))
    out = nn.scaled_matmul(a, b, s, s)
    assert out.dtype == jnp.float32 and out.shape == (1, 1, 1) and float(out[0, 0, 0]) == 8.0


@pytest.mark.parametrize("dt,st,bs", [("float8_e4m3fn", "float8_e8m0fnu", 32),
                                      ("float8_e5m2", "float8_e8m0fnu", 32),
                                      ("float4_e2m1fn", "float8_e4m3fn", 16),
                                      ("float32", "float32", 8)])
def test_scaled_matmul_matches_numpy(dt, st, bs):
    dt, st = getattr(jnp, dt), getattr(jnp, st)
    a = jnp.asarray(_rand((2, 8, 64), 0)).astype(dt)
    b = jnp.asarray(_rand((2, 4, 64), 1)).astype(dt)
    sa = jnp.asarray(np.abs(_rand((2, 8, 64 // bs), 2)) + 0.5).astype(st)
    sb = jnp.asarray(np.abs(_rand((2, 4, 64 // bs), 3)) + 0.5).astype(st)
    want = _ref_scaled_matmul(a, b, sa, sb)
    np.testing.assert_allclose(nn.scaled_matmul(a, b, sa, sb), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jaxlite.jit(nn.scaled_matmul)(a, b, sa, sb), want, rtol=1e-5,
                               atol=1e-5)
    out = nn.scaled_matmul(a, b, sa, sb, preferred_element_type=jnp.bfloat16)
    assert out.dtype == jnp.bfloat16
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=1e-2, atol=1e-2)


def test_scaled_matmul_vmap_matches_loop():
    a, b = _rand((3, 2, 4, 32), 0), _rand((3, 2, 5, 32), 1)
    sa, sb = np.abs(_rand((3, 2, 4, 2), 2)), np.abs(_rand((3, 2, 5, 2), 3))
    got = jaxlite.vmap(nn.scaled_matmul)(a, b, sa, sb)
    want = np.stack([_ref_scaled_matmul(a[i], b[i], sa[i], sb[i]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got = jaxlite.vmap(nn.scaled_matmul, in_axes=(0, None, 0, None))(a, b[0], sa, sb[0])
    want = np.stack([_ref_scaled_matmul(a[i], b[0], sa[i], sb[0]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_scaled_matmul_jaxpr():
    x, s = np.ones((2, 4, 64), np.float32), np.ones((2, 4, 2), np.float32)
    text = str(jaxlite.make_jaxpr(nn.scaled_matmul)(x, x, s, s))
    assert "name=_scaled_matmul" in text
    assert "scaled_matmul_wrapper[preferred_element_type=float32]" in text


@pytest.mark.parametrize("shapes,match", [
    (((4, 64), (5, 64), (4, 2), (5, 2)), "3-dimensional"),
    (((2, 4, 64), (1, 5, 64), (2, 4, 2), (1, 5, 2)), "matching batch"),
    (((2, 4, 64), (2, 5, 32), (2, 4, 2), (2, 5, 1)), "matching batch"),
    (((2, 4, 64), (2, 5, 64), (2, 4, 2), (2, 5, 4)), "scales to have matching"),
    (((2, 4, 64), (2, 5, 64), (2, 3, 2), (2, 5, 2)), "non-contract"),
    (((2, 4, 64), (2, 5, 64), (2, 4, 3), (2, 5, 3)), "multiple"),
])
def test_scaled_matmul_shape_errors(shapes, match):
    args = [np.ones(s, np.float32) for s in shapes]
    with pytest.raises(ValueError, match=match):
        nn.scaled_matmul(*args)
    with pytest.raises(ValueError, match=match):
        jaxlite.jit(nn.scaled_matmul)(*args)


def test_scaled_matmul_not_differentiable():
    x, s = np.ones((1, 2, 32), np.float32), np.ones((1, 2, 1), np.float32)
    with pytest.raises(NotImplementedError, match="scaled_matmul_wrapper"):
        jaxlite.grad(lambda a: nn.scaled_matmul(a, x, s, s).sum())(x)


# ----------------------------------------------------------------------------- configs

def test_configs():
    c = nn.get_scaled_dot_general_config("mxfp8")
    assert isinstance(c, BlockScaleConfig)
    assert (c.mode, c.block_size, c.global_scale, c.infer_only) == ("mxfp8", 32, None, False)
    assert np.dtype(c.data_type) == jnp.float8_e4m3fn
    assert np.dtype(c.scale_type) == jnp.float8_e8m0fnu
    c = nn.get_scaled_dot_general_config("nvfp4")
    assert (c.mode, c.block_size) == ("nvfp4", 16)
    assert np.dtype(c.data_type) == jnp.float4_e2m1fn
    assert np.dtype(c.scale_type) == jnp.float8_e4m3fn
    np.testing.assert_array_equal(c.global_scale, [1.0])
    c = nn.get_scaled_dot_general_config("nvfp4", jnp.array([0.5]))
    np.testing.assert_array_equal(c.global_scale, [0.5])
    with pytest.raises(ValueError, match="Unsupported mode: fp8"):
        nn.get_scaled_dot_general_config("fp8")


def test_mxfp8_quantization_scales_are_rounded_up_powers_of_two():
    x = _rand((3, 64), 0, 5.0)
    x[0, :32] = 0.0                             # an all-zero block: scale 2**-127
    q, s = quantize(jnp.asarray(x), nn.get_scaled_dot_general_config("mxfp8"))
    assert q.dtype == jnp.float8_e4m3fn and s.dtype == jnp.float8_e8m0fnu
    assert s.shape == (3, 2)
    s = np.asarray(s.astype(np.float32)).astype(np.float64)
    blocks = np.abs(x.reshape(3, 2, 32)).max(-1).astype(np.float64)
    want = np.where(blocks > 0, 2.0 ** np.ceil(np.log2(np.maximum(blocks, 1e-30) / 448)),
                    2.0 ** -127)
    np.testing.assert_array_equal(s, want)
    deq = np.asarray(q.astype(np.float32)) * np.repeat(s, 32, axis=-1)
    # e4m3 keeps 3 mantissa bits: relative error <= 2**-4 of each value (plus subnormals)
    bound = 2 ** -4 * np.abs(x) + np.repeat(s, 32, -1) * 2 ** -9
    assert np.all(np.abs(deq - x) <= bound)


def test_nvfp4_quantization():
    x = _rand((2, 32), 1, 3.0)
    cfg = nn.get_scaled_dot_general_config("nvfp4", jnp.array([0.5]))
    q, s = quantize(jnp.asarray(x), cfg)
    assert q.dtype == jnp.float4_e2m1fn and s.dtype == jnp.float8_e4m3fn
    assert s.shape == (2, 2)
    deq = (np.asarray(q.astype(np.float32)) * np.repeat(np.asarray(s.astype(np.float32)),
                                                        16, -1)) * 0.5
    blockmax = np.repeat(np.abs(x.reshape(2, 2, 16)).max(-1), 16, -1)
    assert np.all(np.abs(deq - x) <= 0.3 * blockmax)     # e2m1: 1 mantissa bit


# ----------------------------------------------------------------------------- dot_general

def _cfgs(mode, gs=None):
    gs = None if gs is None else jnp.array([gs], jnp.float32)
    return [nn.get_scaled_dot_general_config(mode, gs)] * 3


def test_no_configs_is_dot_general():
    lhs, rhs = _rand((2, 3, 5), 0), _rand((2, 5, 4), 1)
    dn = (((2,), (1,)), ((0,), (0,)))
    np.testing.assert_allclose(nn.scaled_dot_general(lhs, rhs, dn),
                               jaxlite.lax.dot_general(lhs, rhs, dn), rtol=1e-6)
    out = nn.scaled_dot_general(lhs, rhs, dn, preferred_element_type=jnp.bfloat16)
    assert out.dtype == jnp.bfloat16


@pytest.mark.parametrize("mode,gs,tol", [("mxfp8", None, 0.08), ("nvfp4", 0.37, 0.2)])
@pytest.mark.parametrize("shapes,dn", [
    (((2, 32, 64), (2, 32, 64)), BATCHED),
    (((2, 64, 96), (64, 32, 2)), (((1,), (0,)), ((0,), (2,)))),
    (((4, 2, 32, 3), (2, 32, 5)), (((1, 2), (0, 1)), ((), ()))),
])
def test_scaled_dot_general_approximates_dot_general(mode, gs, tol, shapes, dn):
    lhs, rhs = _rand(shapes[0], 0, 3.0), _rand(shapes[1], 1)
    exact = np.asarray(jaxlite.lax.dot_general(lhs, rhs, dn))
    got = nn.scaled_dot_general(lhs, rhs, dn, configs=_cfgs(mode, gs))
    assert got.shape == exact.shape and got.dtype == jnp.float32
    assert np.abs(np.asarray(got) - exact).max() <= tol * np.abs(exact).max()
    np.testing.assert_allclose(
        jaxlite.jit(lambda l, r: nn.scaled_dot_general(l, r, dn, configs=_cfgs(mode, gs)))(
            lhs, rhs), got, rtol=1e-6, atol=1e-6)


def test_scaled_dot_general_is_the_product_of_quantized_operands():
    lhs, rhs = _rand((2, 8, 64), 0), _rand((2, 4, 64), 1)
    cfg = nn.get_scaled_dot_general_config("mxfp8")
    ql, sl = quantize(jnp.asarray(lhs), cfg)
    qr, sr = quantize(jnp.asarray(rhs), cfg)
    np.testing.assert_allclose(nn.scaled_dot_general(lhs, rhs, BATCHED, configs=[cfg] * 3),
                               _ref_scaled_matmul(ql, qr, sl, sr), rtol=1e-6, atol=1e-6)


def test_mxfp8_gradient_is_quantized_and_close():
    lhs, rhs = _rand((2, 32, 64), 0), _rand((2, 32, 64), 1)
    w = _rand((2, 32, 32), 2)
    loss = lambda f: (lambda l, r: (f(l, r) * w).sum())
    exact = jaxlite.grad(loss(lambda l, r: jaxlite.lax.dot_general(l, r, BATCHED)),
                         (0, 1))(lhs, rhs)
    got = jaxlite.grad(loss(lambda l, r: nn.scaled_dot_general(
        l, r, BATCHED, configs=_cfgs("mxfp8"))), (0, 1))(lhs, rhs)
    for g, e in zip(got, exact):
        assert g.dtype == jnp.float32
        err = np.abs(np.asarray(g) - np.asarray(e)).max() / np.abs(np.asarray(e)).max()
        assert 0 < err < 0.1                    # quantized, hence not exact


def test_nvfp4_gradient_is_straight_through_with_range_mask():
    lhs, rhs = _rand((1, 16, 32), 0), _rand((1, 16, 32), 1)
    lhs[0, 0, :4] = 5000.0                      # beyond 0.5 * 6 * 448 = 1344
    w = _rand((1, 16, 16), 2)
    exact = jaxlite.grad(lambda l, r: (jaxlite.lax.dot_general(l, r, BATCHED) * w).sum(),
                         (0, 1))(lhs, rhs)
    got = jaxlite.grad(lambda l, r: (nn.scaled_dot_general(
        l, r, BATCHED, configs=_cfgs("nvfp4", 0.5)) * w).sum(), (0, 1))(lhs, rhs)
    want_l = np.where(np.abs(lhs) <= 1344.0, np.asarray(exact[0]), 0.0)
    np.testing.assert_allclose(got[0], want_l, rtol=1e-6)
    np.testing.assert_allclose(got[1], exact[1], rtol=1e-6)
    assert np.all(np.asarray(got[0])[0, 0, :4] == 0)


def test_scaled_dot_general_vmap_matches_loop():
    lhs, rhs = _rand((3, 4, 64), 0), _rand((3, 5, 64), 1)
    f = lambda l, r: nn.scaled_dot_general(l, r, (((1,), (1,)), ((), ())),
                                           configs=_cfgs("mxfp8"))
    np.testing.assert_allclose(jaxlite.vmap(f)(lhs, rhs),
                               np.stack([f(lhs[i], rhs[i]) for i in range(3)]), rtol=1e-6)


def test_preferred_element_type():
    lhs, rhs = _rand((1, 4, 32), 0), _rand((1, 4, 32), 1)
    for mode, gs in (("mxfp8", None), ("nvfp4", 2.0)):
        out = nn.scaled_dot_general(lhs, rhs, BATCHED, preferred_element_type=jnp.bfloat16,
                                    configs=_cfgs(mode, gs))
        assert out.dtype == jnp.bfloat16
    with pytest.raises(TypeError, match="preferred_element_type"):
        nn.scaled_dot_general(lhs, rhs, BATCHED, preferred_element_type=jnp.int32,
                              configs=_cfgs("mxfp8"))


def test_scaled_dot_general_errors():
    with pytest.raises(ValueError, match="multiple of 32"):
        nn.scaled_dot_general(np.ones((4, 60)), np.ones((5, 60)), (((1,), (1,)), ((), ())),
                              configs=_cfgs("mxfp8"))
    with pytest.raises(ValueError, match="multiple of 32"):
        nn.scaled_dot_general(np.ones((4, 16)), np.ones((5, 16)), (((1,), (1,)), ((), ())),
                              configs=_cfgs("mxfp8"))
    with pytest.raises(TypeError, match="contracting dimensions"):
        nn.scaled_dot_general(np.ones((4, 64)), np.ones((5, 64)), (((1,), (0,)), ((), ())),
                              configs=_cfgs("mxfp8"))
    with pytest.raises(ValueError, match="three BlockScaleConfig"):
        nn.scaled_dot_general(np.ones((4, 64)), np.ones((5, 64)), (((1,), (1,)), ((), ())),
                              configs=_cfgs("mxfp8")[:2])
    # gradients contract the free dimensions, which must be block multiples too
    with pytest.raises(ValueError, match="multiple of 32"):
        jaxlite.grad(lambda l: nn.scaled_dot_general(
            l, np.ones((5, 64), np.float32), (((1,), (1,)), ((), ())),
            configs=_cfgs("mxfp8")).sum())(np.ones((4, 64), np.float32))


# --------------------------------------------------------------------- against real JAX

def _jax_eval(jax, closed, *args):
    """Evaluate a JAX ClosedJaxpr, running scaled_matmul_wrapper with NumPy."""
    from jax.extend import core as jcore

    def run(jaxpr, consts, vals):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, vals))
        read = lambda v: v.val if isinstance(v, jcore.Literal) else env[v]
        for e in jaxpr.eqns:
            ins = [read(v) for v in e.invars]
            name = e.primitive.name
            if name == "scaled_matmul_wrapper":
                outs = [_ref_scaled_matmul(*ins, e.params["preferred_element_type"])]
            elif name in ("jit", "pjit"):
                sub = e.params["jaxpr"]
                outs = run(sub.jaxpr, sub.consts, ins)
            elif name == "custom_vjp_call":
                sub = e.params["call_jaxpr"]
                outs = run(sub.jaxpr, sub.consts, ins)
            else:
                o = e.primitive.bind(*ins, **e.params)
                outs = o if e.primitive.multiple_results else [o]
            env.update(zip(e.outvars, outs))
        return [read(v) for v in jaxpr.outvars]
    return run(closed.jaxpr, closed.consts, args)


def test_config_repr_matches_jax():
    jax = pytest.importorskip("jax")
    assert repr(nn.get_scaled_dot_general_config("mxfp8")) == repr(
        jax.nn.get_scaled_dot_general_config("mxfp8"))
    ours = repr(nn.get_scaled_dot_general_config("nvfp4", jnp.array([0.5])))
    assert ours == repr(jax.nn.get_scaled_dot_general_config("nvfp4",
                                                             jax.numpy.array([0.5])))


def test_scaled_matmul_jaxpr_matches_jax():
    jax = pytest.importorskip("jax")
    x, s = np.ones((2, 4, 64), np.float32), np.ones((2, 4, 2), np.float32)
    f = lambda api: lambda *a: api.nn.scaled_matmul(*a, preferred_element_type=jnp.bfloat16)
    assert str(jaxlite.make_jaxpr(f(jaxlite))(x, x, s, s)) == str(
        jax.make_jaxpr(f(jax))(x, x, s, s))


@pytest.mark.parametrize("shapes", [((4, 64), (5, 64), (4, 2), (5, 2)),
                                    ((2, 4, 64), (1, 5, 64), (2, 4, 2), (1, 5, 2)),
                                    ((2, 4, 64), (2, 5, 64), (2, 4, 2), (2, 5, 4)),
                                    ((2, 4, 64), (2, 5, 64), (2, 3, 2), (2, 5, 2))])
def test_scaled_matmul_errors_match_jax(shapes):
    jax = pytest.importorskip("jax")
    args = [np.ones(s, np.float32) for s in shapes]
    with pytest.raises(ValueError) as theirs:
        jax.make_jaxpr(jax.nn.scaled_matmul)(*args)
    with pytest.raises(ValueError) as ours:
        nn.scaled_matmul(*args)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("mode,gs", [("mxfp8", None), ("nvfp4", 0.37)])
@pytest.mark.parametrize("pref", ["float32", "bfloat16"])
@pytest.mark.parametrize("shapes,dn", [
    (((2, 32, 64), (2, 32, 64)), BATCHED),
    (((2, 64, 96), (64, 32, 2)), (((1,), (0,)), ((0,), (2,)))),
    (((4, 2, 32, 32), (2, 32, 32)), (((1, 2), (0, 1)), ((), ()))),
])
def test_values_and_gradients_match_jax(mode, gs, pref, shapes, dn):
    jax = pytest.importorskip("jax")
    lhs, rhs = _rand(shapes[0], 0, 3.0), _rand(shapes[1], 1)
    lhs.reshape(-1)[:3] = 2000.0                 # out of nvfp4's range: masked gradient
    w = _rand(np.asarray(jaxlite.lax.dot_general(lhs, rhs, dn)).shape, 2)

    def build(api):
        arr = None if gs is None else api.numpy.array([gs], np.float32)
        cfgs = [api.nn.get_scaled_dot_general_config(mode, arr)] * 3
        f = lambda l, r: api.nn.scaled_dot_general(l, r, dn, preferred_element_type=pref,
                                                   configs=cfgs)
        g = api.grad(lambda l, r: (f(l, r).astype(np.float32) * w).sum(), (0, 1))
        return f, g
    jf, jg = build(jax)
    lf, lg = build(jaxlite)
    want = _jax_eval(jax, jax.make_jaxpr(jf)(lhs, rhs), lhs, rhs)[0]
    got = lf(lhs, rhs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=1e-2 if pref == "bfloat16" else 1e-5,
                               atol=1e-5 * np.abs(np.asarray(want, np.float32)).max())
    want_g = _jax_eval(jax, jax.make_jaxpr(jg)(lhs, rhs), lhs, rhs)
    got_g = lg(lhs, rhs)
    for a, b in zip(got_g, want_g):
        assert a.dtype == b.dtype and a.shape == b.shape
        b = np.asarray(b, np.float32)
        np.testing.assert_allclose(np.asarray(a, np.float32), b,
                                   rtol=1e-2 if pref == "bfloat16" else 1e-5,
                                   atol=2e-2 * np.abs(b).max() if pref == "bfloat16"
                                   else 1e-5 * np.abs(b).max())


def test_no_configs_matches_jax():
    jax = pytest.importorskip("jax")
    lhs, rhs = _rand((2, 3, 5), 0), _rand((2, 5, 4), 1)
    dn = (((2,), (1,)), ((0,), (0,)))
    np.testing.assert_allclose(nn.scaled_dot_general(lhs, rhs, dn),
                               jax.nn.scaled_dot_general(lhs, rhs, dn), rtol=1e-6)
