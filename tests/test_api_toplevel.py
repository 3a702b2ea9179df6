"""Top-level names of JAX 0.10.2 (issue 20): config context managers (transfer guard,
no_tracing/no_execution, tracer leak checks, default matmul precision, ...), jax.P /
NamedSharding, fwd_and_bwd, copy_to_host_async and the host_* aliases."""
import logging
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

H2D = ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray({}), "
       "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")


def _err(f):
    try:
        f()
    except Exception as e:   # noqa: BLE001
        return type(e).__name__, str(e)
    return None


# (name, thunk, JAX's error text or None) as JAX 0.10.2 on CPU gives them
def _transfer_cases():
    x = jnp.arange(3.)
    return [
        ("jnp.add np", lambda: jnp.add(np.ones(3), 1.), H2D.format("float32[3]")),
        ("jit np", lambda: jax.jit(lambda a: a + 1)(np.ones(3)), H2D.format("float32[3]")),
        ("jit scalar", lambda: jax.jit(lambda a: a + 1)(1.),
         H2D.format("float32[], weak_type=True")),
        ("array + int", lambda: x + 1, H2D.format("int32[], weak_type=True")),
        ("jnp.array", lambda: jnp.array([1., 2.]), H2D.format("float32[2]")),
        ("jnp.asarray", lambda: jnp.asarray(np.ones(3)), H2D.format("float32[3]")),
        ("device_put", lambda: jax.device_put(np.ones(3)), None),
        ("np.asarray", lambda: np.asarray(x), None),
        ("repr", lambda: repr(x), None),
        ("device_get", lambda: jax.device_get(x), None),
        ("sum", lambda: jnp.sum(x), None),
        ("mean", lambda: jnp.mean(x), None),
        ("x * x", lambda: x * x, None),
        ("sin", lambda: jnp.sin(x), None),
        ("matmul", lambda: x @ x, None),
    ]


@pytest.mark.parametrize("i", range(15))
def test_transfer_guard_disallow(i):
    name, f, want = _transfer_cases()[i]
    with jax.transfer_guard("disallow"):
        got = _err(f)
    if want is None:
        assert got is None, (name, got)
    else:
        assert got == ("JaxRuntimeError", want), name
    assert _err(f) is None   # allowed again after the block


def test_transfer_guard_explicit_and_log(caplog):
    with jax.transfer_guard("disallow_explicit"):
        e = _err(lambda: jax.device_put(np.ones(3)))
        assert e == ("JaxRuntimeError", H2D.format("float32[3]"))
        assert _err(lambda: jax.device_get(jnp.ones(2))) is None
    with jax.transfer_guard_host_to_device("disallow"):
        assert _err(lambda: jnp.asarray(np.ones(2))) is not None
    with caplog.at_level(logging.WARNING):
        with jax.transfer_guard("log"):
            jnp.add(np.ones(3), 1.)
    assert "host-to-device transfer: aval=ShapedArray(float32[3])" in caplog.text
    assert jax.config.jax_transfer_guard_host_to_device is None
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with jax.transfer_guard("sometimes"):
            pass


def test_transfer_guard_jit_fast_path_checked():
    f = jax.jit(lambda a: a * 2)
    for _ in range(3):              # the fast path is built from the second call on
        f(np.ones(2))
    y = jnp.ones(2)
    with jax.transfer_guard("disallow"):
        with pytest.raises(jax.errors.JaxRuntimeError, match="Disallowed host-to-device"):
            f(np.ones(2))
        f(y)                        # arrays are no transfer


def test_no_tracing_and_no_execution():
    f = jax.jit(lambda a: a * 2)
    x = jnp.arange(3.)
    f(x)
    with jax.no_tracing():
        f(x)                        # cached: runs
        with pytest.raises(RuntimeError, match="for `jit`, but 'no_tracing' is set"):
            f(jnp.ones(4))
        with pytest.raises(RuntimeError, match="'no_tracing' is set"):
            jax.make_jaxpr(lambda a: a * 3)(x)
    with jax.no_execution():
        with pytest.raises(RuntimeError, match=r"JAX tried to execute function jit\(<lambda>\), "
                                               "but the no_execution config option is set"):
            f(x)
        with pytest.raises(RuntimeError, match=r"execute function jit\(add\)"):
            x + x
        jax.make_jaxpr(lambda a: a * 3)(x)      # tracing and lowering are allowed
        jax.jit(lambda a: a * 5).lower(x).compile()
    assert float(f(x)[1]) == 2.0


def test_checking_leaks():
    x = jnp.arange(3.)
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks
        leak = []
        with pytest.raises(Exception, match="Leaked trace DynamicJaxprTrace") as e:
            jax.jit(lambda a: leak.append(a) or a)(x)
        assert "is referred to by <list" in str(e.value)
        leak2 = []
        with pytest.raises(Exception, match="Leaked trace BatchTrace"):
            jax.vmap(lambda a: leak2.append(a) or a)(x)
        # no false alarms on ordinary programs
        jax.jit(lambda a: jnp.sin(a) * 2)(x)
        jax.vmap(lambda a: jnp.sin(a) * 2)(x)
        jax.grad(lambda a: jnp.sin(a).sum())(x)
        lax.scan(lambda c, a: (c + a, c), 0., x)
        lax.cond(True, lambda a: a + 1, lambda a: a - 1, x)

        @jax.custom_vjp
        def g(v):
            return v * 2
        g.defvjp(lambda v: (g(v), None), lambda r, ct: (ct * 2,))
        # (the custom_vjp rule kept in the jaxpr must not hold this trace's tracers)
        np.testing.assert_array_equal(jax.jit(jax.grad(lambda v: g(v).sum()))(x), [2.] * 3)
        jax.jit(jax.grad(lambda v: jax.nn.gelu(v).sum()))(x)
        jax.hessian(lambda v: (v ** 3).sum())(x)
    assert not jax.config.jax_check_tracer_leaks
    leak3 = []
    jax.jit(lambda a: leak3.append(a) or a)(x)   # off: no check


def test_flag_context_managers():
    with jax.enable_checks(True):
        assert jax.config.jax_enable_checks
        assert float(jax.jit(lambda a: jnp.cos(a) + 1)(0.)) == 2.0
    with jax.explain_cache_misses(True):
        assert jax.config.jax_explain_cache_misses
    with jax.threefry_partitionable(False):
        a = jax.random.normal(jax.random.key(0), (4,))
    b = jax.random.normal(jax.random.key(0), (4,))
    assert not np.array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(NotImplementedError, match="jax_debug_key_reuse"):
        with jax.debug_key_reuse(True):
            pass
    with jax.debug_key_reuse(False):
        pass
    with jax.softmax_custom_jvp(True):
        assert jax.config.jax_softmax_custom_jvp
        g = jax.grad(lambda v: jax.nn.softmax(v)[0])(jnp.arange(3.))
    assert not jax.config.jax_softmax_custom_jvp
    np.testing.assert_allclose(g, [0.08192507, -0.02203305, -0.05989202], rtol=1e-5)


def test_threefry_partitionable_vs_jax():
    jr = pytest.importorskip("jax")
    with jax.threefry_partitionable(False):
        a = jax.random.uniform(jax.random.key(3), (5,))
    with jr.threefry_partitionable(False):
        b = jr.random.uniform(jr.random.key(3), (5,))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _pp(f, *args):
    return str(jax.make_jaxpr(f)(*args))


def test_default_matmul_precision_reaches_dot_and_conv():
    x = jnp.ones((2, 2))
    img = jnp.ones((1, 1, 3, 3))
    with jax.default_matmul_precision("highest"):
        assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in _pp(jnp.dot, x, x)
        assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in _pp(
            lambda a: lax.conv(a, a, (1, 1), "SAME"), img)
        # a grad's dots get it too
        assert _pp(jax.grad(lambda a: (a @ a).sum()), x).count("Precision.HIGHEST") == 6
    with jax.default_matmul_precision("bfloat16"):
        assert "precision=(Precision.DEFAULT, Precision.DEFAULT)" in _pp(jnp.matmul, x, x)
    with jax.default_matmul_precision("BF16_BF16_F32"):
        assert "precision=BF16_BF16_F32" in _pp(lax.dot, x, x)
    assert "precision" not in _pp(jnp.dot, x, x)
    # the setting is part of jit's cache key
    f = jax.jit(lambda a: a @ a)
    f(x)
    with jax.default_matmul_precision("highest"):
        assert "HIGHEST" in f.lower(x).as_text()


def test_precision_values():
    assert str(lax.Precision("highest")) == "HIGHEST"
    assert repr(lax.Precision(1)) == "Precision.HIGH"
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    assert repr(lax.DotAlgorithmPreset.F32_F32_F32) == "DotAlgorithmPreset.F32_F32_F32"
    assert lax.DotAlgorithmPreset.F64_F64_F64.accumulation_type is np.float64
    x = jnp.ones((2, 2))
    assert "precision=(Precision.HIGH, Precision.HIGHEST)" in _pp(
        lambda a: lax.dot(a, a, precision=("high", "highest")), x)
    np.testing.assert_array_equal(
        lax.dot(x, x, precision=lax.DotAlgorithmPreset.F32_F32_F32), np.full((2, 2), 2.))
    with pytest.raises(ValueError, match="'TF32_TF32_F32' is not supported by dot_general"):
        lax.dot(x, x, precision="TF32_TF32_F32")
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        lax.dot(x, x, precision="nope")
    with pytest.raises(ValueError, match="is not supported by dot_general on CPU"):
        lax.dot(x, x, precision=lax.DotAlgorithm(jnp.float16, jnp.float16, jnp.float32))
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with jax.default_matmul_precision("fast"):
            pass


def test_precision_jaxpr_vs_jax():
    jr = pytest.importorskip("jax")
    x = np.ones((2, 3), np.float32)
    for prec in ("highest", "bfloat16", "F32_F32_F32"):
        with jax.default_matmul_precision(prec):
            a = str(jax.make_jaxpr(lambda u: jnp.dot(u, u.T))(x))
        with jr.default_matmul_precision(prec):
            b = str(jr.make_jaxpr(lambda u: jr.numpy.dot(u, u.T))(x))
        assert a == b, prec


def test_reexports_and_aliases():
    assert jax.P is jax.sharding.PartitionSpec
    assert jax.NamedSharding is jax.sharding.NamedSharding
    assert jax.P("x", None) == jax.sharding.PartitionSpec("x", None)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert jax.host_count() == jax.process_count()
        assert jax.host_id() == jax.process_index()
        assert jax.host_ids() == jax.process_indices()
    assert len(w) == 3 and "renamed" in str(w[0].message)
    tree = {"a": jnp.ones(2), "b": [1, "s"]}
    assert jax.copy_to_host_async(tree) is tree


def test_fwd_and_bwd_matches_vjp():
    rng = np.random.default_rng(0)
    x, W, ct = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(3))

    def f(x, W):
        return jnp.sin(x @ W)
    _, f_vjp = jax.vjp(f, x, W)
    want = f_vjp(ct)
    fwd, bwd = jax.fwd_and_bwd(f, argnums=(0, 1))
    y, res = fwd(x, W)
    got = bwd(res, ct)
    np.testing.assert_allclose(y, f(x, W), rtol=1e-6)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)
    fwd1, bwd1 = jax.fwd_and_bwd(f, argnums=1, jitted=False)
    y, res = fwd1(x, W)
    np.testing.assert_allclose(bwd1(res, ct), want[1], rtol=1e-5)
    fwd2, bwd2 = jax.fwd_and_bwd(lambda a: (jnp.sum(a ** 2), a.shape), 0, has_aux=True)
    y, res, aux = fwd2(x)
    np.testing.assert_allclose(bwd2(res, 1.0), 2 * x, rtol=1e-6)
    with pytest.raises(ValueError, match="out of range"):
        jax.fwd_and_bwd(f, argnums=3, jitted=False)[0](x, W)
