"""Names and behaviours JAX libraries rely on (issue 20 §1): jax.typing, dtype-promotion
contexts, jax.ops, lax.linalg, dlpack, experimental.sparse/layout, and the fixes libraries
needed (ShapeDtypeStruct in zeros_like, vmap of an empty batch, ensure_compile_time_eval on
tracers, typeof(x).sharding, closed-over tracers in make_jaxpr, custom_vjp residuals, the
old form of lax.cond). Checked against NumPy here and against real JAX when installed."""
import numpy as np
import pytest
import scipy.sparse as ssp

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def test_typing_names():
    from jaxlite.typing import ArrayLike, DTypeLike
    assert isinstance(jnp.ones(2), ArrayLike) and isinstance(np.ones(2), ArrayLike)
    assert isinstance(3.0, ArrayLike) and not isinstance([1.0], ArrayLike)
    assert not isinstance("a", ArrayLike)
    assert DTypeLike.__args__[0] is str   # a Union, as in JAX (not isinstance-checkable)
    assert jax.__version_info__ == (0, 1, 0)


def test_numpy_dtype_promotion_context():
    with jax.numpy_dtype_promotion("strict"):
        assert jax.config.jax_numpy_dtype_promotion == "strict"
        with pytest.raises(jax.dtypes.TypePromotionError, match="strict"):
            jnp.ones(2, jnp.float32) + jnp.ones(2, jnp.int32)
        assert (jnp.ones(2) + 1.0).dtype == jnp.float32      # weak types still promote
    assert jax.config.jax_numpy_dtype_promotion == "standard"
    assert (jnp.ones(2, jnp.float32) + jnp.ones(2, jnp.int32)).dtype == jnp.float32
    with pytest.raises(ValueError, match="standard"):
        jax.config.update("jax_numpy_dtype_promotion", "loose")


def test_segment_reductions():
    d = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    ids = np.array([0, 0, 2, 1, 5, 2])
    for fn, ufunc, empty in ((jax.ops.segment_sum, np.add, 0.0),
                             (jax.ops.segment_prod, np.multiply, 1.0),
                             (jax.ops.segment_max, np.maximum, -np.inf),
                             (jax.ops.segment_min, np.minimum, np.inf)):
        want = np.full((4, 2), empty, np.float32)
        for row, i in zip(d, ids):
            if i < 4:
                want[i] = ufunc(want[i], row)
        np.testing.assert_array_equal(fn(d, ids, 4), want)
        assert fn(d, ids).shape == (6, 2)
    # negative and too-large ids are dropped
    np.testing.assert_array_equal(
        jax.ops.segment_sum(jnp.arange(5), jnp.array([0, 1, 1, 7, -1]), 3), [0, 3, 0])
    g = jax.grad(lambda d: jax.ops.segment_sum(d, ids, 3).sum())(d)
    np.testing.assert_array_equal(g, (ids < 3)[:, None] * np.ones((6, 2)))
    with pytest.raises(jax.errors.ConcretizationTypeError, match="num_segments"):
        jax.jit(lambda d, i: jax.ops.segment_sum(d, i))(d, ids)


def test_tridiagonal_solve_and_lax_linalg():
    rng = np.random.default_rng(0)
    m = 6
    dl, du = rng.normal(size=(2, m)).astype("f4"), rng.normal(size=(2, m)).astype("f4")
    d = (rng.normal(size=(2, m)) + 6).astype("f4")
    b = rng.normal(size=(2, m, 3)).astype("f4")
    x = lax.linalg.tridiagonal_solve(dl, d, du, b)
    a = np.stack([np.diag(d[k]) + np.diag(dl[k, 1:], -1) + np.diag(du[k, :-1], 1)
                  for k in range(2)])
    np.testing.assert_allclose(a @ np.asarray(x), b, atol=1e-5)
    assert lax.linalg.cholesky is not None and lax.linalg.qr is not None
    with pytest.raises(ValueError, match="shape"):
        lax.linalg.tridiagonal_solve(dl, d, du, b[..., 0])


def test_dlpack_layout_compiler_ir():
    np.testing.assert_array_equal(jax.dlpack.from_dlpack(np.arange(3.0)), [0.0, 1.0, 2.0])
    assert jax.dlpack.is_supported_dtype(jnp.bfloat16)
    np.testing.assert_array_equal(np.from_dlpack(jnp.arange(3)), [0, 1, 2])
    from jaxlite.experimental.layout import Format, Layout
    f = Format(Layout((1, 0)), None)
    assert f == Format(Layout((1, 0))) and f.layout.major_to_minor == (1, 0)
    ir = jax.jit(lambda x: x + 1).lower(1.0).compiler_ir()
    assert "add a 1.0" in str(ir)


def test_bcoo_basics():
    from jaxlite.experimental import sparse
    m = np.array([[1.0, 0, 2], [0, 0, 3], [4, 0, 0]], np.float32)
    s = sparse.BCOO.fromdense(m)
    assert s.nse == 4 and s.shape == (3, 3)
    np.testing.assert_array_equal(s.todense(), m)
    v = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(s @ v, m @ v)
    np.testing.assert_array_equal(v @ s, v @ m)
    np.testing.assert_array_equal(s @ np.eye(3, dtype=np.float32), m)
    np.testing.assert_array_equal(s.T.todense(), m.T)
    np.testing.assert_array_equal(s.sum(1).todense(), m.sum(1))
    s2 = sparse.BCOO.from_scipy_sparse(ssp.csr_matrix(m))
    np.testing.assert_array_equal((2 * s2).todense(), 2 * m)
    g = jax.grad(lambda dt: (sparse.BCOO((dt, s.indices), shape=s.shape) @ v).sum())(s.data)
    np.testing.assert_array_equal(g, v[np.asarray(s.indices)[:, 1]])
    np.testing.assert_array_equal(jax.jit(lambda s, v: s @ v)(s, v), m @ v)


def test_bcoo_times_stacked_dense_matrices():
    # JAX's BCOO @ dense follows jnp.matmul: leading dimensions of the dense side are batch
    # dimensions (numpyro's sparse CAR computes adj @ phi[..., None] with phi batched)
    from jaxlite.experimental import sparse
    m = np.array([[0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1], [0, 2, 1, 0]], np.float32)
    s = sparse.BCOO.fromdense(m)
    x = np.arange(48, dtype=np.float32).reshape(2, 3, 4, 2)
    np.testing.assert_array_equal(s @ x, m @ x)
    y = np.arange(48, dtype=np.float32).reshape(2, 3, 2, 4)
    np.testing.assert_array_equal(y @ s, y @ m)
    phi = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal((s @ phi[..., None]).squeeze(-1), phi @ m.T)
    np.testing.assert_array_equal(jax.jit(lambda s, x: s @ x)(s, x), m @ x)
    with pytest.raises(TypeError, match="contracting dimensions"):
        s @ np.ones((2, 3, 2), np.float32)


def test_zeros_like_of_shape_dtype_struct():
    sds = jax.ShapeDtypeStruct((2, 3), jnp.bfloat16)
    for fn, val in ((jnp.zeros_like, 0), (jnp.ones_like, 1), (jnp.empty_like, None)):
        out = fn(sds)
        assert out.shape == (2, 3) and out.dtype == jnp.bfloat16
        if val is not None:
            np.testing.assert_array_equal(np.asarray(out, np.float32), val)
    out = jnp.full_like(sds, 3, dtype=jnp.int32)
    assert out.dtype == jnp.int32 and np.all(np.asarray(out) == 3)


def test_vmap_over_empty_batch():
    x = jnp.zeros((0, 3))
    i = jnp.zeros((0,), jnp.int32)
    assert jax.vmap(lambda x, i: x[i])(x, i).shape == (0,)
    assert jax.vmap(lambda x: jax.lax.dynamic_slice(x, (1,), (2,)))(x).shape == (0, 2)
    assert jax.jit(jax.vmap(lambda x: jnp.linalg.inv(jnp.outer(x, x) + jnp.eye(3))))(
        x).shape == (0, 3, 3)


def test_ensure_compile_time_eval_only_folds_constants():
    seen = []

    def f(x):
        with jax.ensure_compile_time_eval():
            c = jnp.sin(1.0) * 2          # a constant: computed now, concrete
            seen.append(isinstance(c, jax.core.Tracer))
            y = x * c                     # a traced value: traced as usual
        return y
    g = jax.grad(f)(2.0)
    np.testing.assert_allclose(g, 2 * np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(2.0), 4 * np.sin(1.0), rtol=1e-6)
    assert seen == [False, False]


def test_typeof_sharding_of_unsharded_values():
    x = jnp.ones((2, 3))
    s = jax.typeof(x).sharding
    assert tuple(s.spec) == (None, None) and s.mesh.empty
    got = []
    jax.jit(lambda x: got.append(jax.typeof(x).sharding.spec) or x)(x)
    assert tuple(got[0]) == (None, None)
    assert str(jax.typeof(x)) == "float32[2,3]"


def test_make_jaxpr_keeps_closed_over_tracers_as_consts():
    out = []

    def f(x):
        closed = jax.make_jaxpr(lambda y: y * x + 1.0)(2.0)
        out.append(closed)
        return jax.core.eval_jaxpr(closed.jaxpr, closed.consts, 3.0)[0]
    np.testing.assert_allclose(jax.grad(f)(5.0), 3.0)
    assert len(out[0].jaxpr.constvars) == 1 and len(out[0].jaxpr.invars) == 1


def test_custom_vjp_python_scalar_residuals_and_none_structure():
    @jax.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        return x * y, (y, True, 3)

    def bwd(res, g):
        y, flag, k = res
        assert flag is True and k == 3      # Python objects, as in JAX
        return (g * y, None)
    f.defvjp(fwd, bwd)
    np.testing.assert_allclose(jax.grad(f)(2.0, 5.0), 5.0)


def test_lax_cond_old_five_argument_form():
    out = lax.cond(True, 1.0, lambda x: x + 1, 2.0, lambda x: x * 10)
    assert float(out) == 2.0
    out = jax.jit(lambda p: lax.cond(p, 1.0, lambda x: x + 1, 2.0, lambda x: x * 10))(False)
    assert float(out) == 20.0
    with pytest.raises(TypeError, match="callable"):
        lax.cond(True, 1.0, 2.0)


def test_same_results_as_jax():
    rjax = pytest.importorskip("jax")
    x = np.zeros((0, 3), np.float32)
    assert rjax.vmap(lambda x: rjax.numpy.sort(x))(x).shape == \
        jax.vmap(lambda x: jnp.sort(x))(x).shape
    d = np.arange(10.0, dtype=np.float32)
    ids = np.array([3, 1, 1, 0, 9, -2, 2, 3, 0, 1])
    for name in ("segment_sum", "segment_prod", "segment_max", "segment_min"):
        np.testing.assert_array_equal(getattr(jax.ops, name)(d, ids, 4),
                                      getattr(rjax.ops, name)(d, ids, 4))
    rng = np.random.default_rng(1)
    dl, d_, du = rng.normal(size=(3, 5)).astype("f4")
    d_ = d_ + 5
    b = rng.normal(size=(5, 2)).astype("f4")
    np.testing.assert_allclose(lax.linalg.tridiagonal_solve(dl, d_, du, b),
                               rjax.lax.linalg.tridiagonal_solve(dl, d_, du, b), rtol=1e-5)
    assert str(jax.typeof(jnp.ones((2, 3))).sharding) == \
        str(rjax.typeof(rjax.numpy.ones((2, 3))).sharding)


def test_custom_vmap_and_sequential_vmap():
    from jaxlite.custom_batching import custom_vmap, sequential_vmap
    calls = []

    @custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append((axis_size, in_batched))
        return jnp.sin(x) * y + 100.0, in_batched[0] or in_batched[1]
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(f(x, 2.0), np.sin(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f, in_axes=(0, None))(x, 2.0), np.sin(x) * 2 + 100,
                               rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(f, in_axes=(0, None)))(x, 2.0),
                               np.sin(x) * 2 + 100, rtol=1e-6)
    assert calls[0] == (3, [True, False])
    _, t = jax.jvp(lambda x: f(x, 2.0), (x,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(t, 2 * np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda x: f(x, 2.0).sum())(x), 2 * np.cos(x),
                               rtol=1e-6)
    g = sequential_vmap(lambda v: jnp.linalg.norm(v))
    np.testing.assert_allclose(jax.vmap(g)(np.ones((4, 3), np.float32)), np.sqrt(3.0),
                               rtol=1e-6)
    assert "scan" in str(jax.make_jaxpr(jax.vmap(g))(np.ones((4, 3), np.float32)))

    @custom_vmap
    def bad(x):
        return x

    @bad.def_vmap
    def bad_rule(axis_size, in_batched, x):
        return x[0], True
    with pytest.raises(ValueError, match="batch dimension first"):
        jax.vmap(bad)(np.ones((2, 3), np.float32))


def test_odeint_values_and_gradients():
    from jaxlite.experimental.ode import odeint

    def f(y, t, k):
        return -k * y + jnp.sin(t)
    ts = jnp.linspace(0.0, 2.0, 5)
    y0 = jnp.array([1.0, 2.0])
    ys = odeint(f, y0, ts, 0.7)

    def exact(t, y, k=0.7):   # y' = -k y + sin t
        c = y - (-1.0) / (1 + k * k)
        return c * np.exp(-k * t) + (k * np.sin(t) - np.cos(t)) / (1 + k * k)
    want = np.stack([exact(np.asarray(ts), y) for y in (1.0, 2.0)], axis=1)
    np.testing.assert_allclose(ys, want, rtol=2e-5, atol=2e-6)
    g = jax.grad(lambda y0, k: odeint(f, y0, ts, k)[-1].sum(), argnums=(0, 1))(y0, 0.7)
    np.testing.assert_allclose(g[0], np.exp(-0.7 * 2.0), rtol=1e-4)
    eps = 1e-2
    fd = (odeint(f, y0, ts, 0.7 + eps)[-1].sum() - odeint(f, y0, ts, 0.7 - eps)[-1].sum()) \
        / (2 * eps)
    np.testing.assert_allclose(g[1], fd, rtol=2e-3)
    out = odeint(lambda s, t: {"a": -s["a"], "b": s["a"]}, {"a": 1.0, "b": 0.0},
                 jnp.array([0.0, 1.0]))
    np.testing.assert_allclose([out["a"][1], out["b"][1]], [np.exp(-1), 1 - np.exp(-1)],
                               rtol=1e-5)
    with pytest.raises(ValueError, match="1-D"):
        odeint(f, y0, 1.0, 0.7)


def test_odeint_same_as_jax():
    rjax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as rodeint

    from jaxlite.experimental.ode import odeint

    def f(np_, y, t, k):
        return -k * y + np_.sin(t)
    ts = np.linspace(0.0, 2.0, 5, dtype=np.float32)
    y0 = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(odeint(lambda y, t, k: f(jnp, y, t, k), y0, ts, 0.7),
                               rodeint(lambda y, t, k: f(rjax.numpy, y, t, k), y0, ts, 0.7),
                               rtol=1e-5)
    g = jax.grad(lambda t: odeint(lambda y, t, k: f(jnp, y, t, k), y0, t, 0.7).sum())(ts)
    rg = rjax.grad(lambda t: rodeint(lambda y, t, k: f(rjax.numpy, y, t, k), y0, t,
                                     0.7).sum())(ts)
    np.testing.assert_allclose(g, rg, rtol=1e-4, atol=1e-5)


def test_logspace_linspace_bfloat16():
    out = jnp.logspace(-10, 10, num=21, dtype=jnp.bfloat16)
    assert out.dtype == jnp.bfloat16
    # computed in bfloat16 as JAX does: the exponents' rounding costs a few percent
    np.testing.assert_allclose(np.asarray(out, np.float64), 10.0 ** np.arange(-10, 11),
                               rtol=0.05)
    lin = jnp.linspace(0, 1, 7, dtype=jnp.bfloat16)
    np.testing.assert_allclose(np.asarray(lin, np.float64), np.linspace(0, 1, 7), atol=4e-3)
    try:
        import jax as rjax
    except ImportError:
        return
    want = rjax.numpy.logspace(-10, 10, num=21, dtype=rjax.numpy.bfloat16)
    np.testing.assert_array_equal(np.asarray(out, np.float32), np.asarray(want, np.float32))
