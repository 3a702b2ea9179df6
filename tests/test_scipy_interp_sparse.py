"""jax.scipy.interpolate.RegularGridInterpolator and jax.scipy.sparse.linalg (cg, gmres,
bicgstab): values vs SciPy/NumPy, implicit derivatives vs finite differences and dense
solves, jit/vmap, errors, and real JAX where installed."""
import numpy as np
import pytest
import scipy.interpolate as si

import jaxlite
import jaxlite.scipy.sparse.linalg
import jaxlite.numpy as jnp
from jaxlite.scipy.interpolate import RegularGridInterpolator
from jaxlite.scipy.sparse.linalg import bicgstab, cg, gmres


# ----------------------------------------------------------------------------- interpolate
def _grid():
    rng = np.random.RandomState(0)
    x = np.sort(rng.rand(6)) * 3
    y = np.array([-1.0, -0.2, 0.5, 0.7, 2.0])
    v = rng.randn(6, 5)
    return x, y, v


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_rgi_vs_scipy(x64, method):
    x, y, v = _grid()
    rng = np.random.RandomState(1)
    pts = np.stack([rng.uniform(x[0] - 0.3, x[-1] + 0.3, 50),
                    rng.uniform(-1.3, 2.3, 50)], -1)
    for fill in (np.nan, None, -7.0):
        ref = si.RegularGridInterpolator((x, y), v, method=method, bounds_error=False,
                                         fill_value=fill)(pts)
        got = RegularGridInterpolator((jnp.asarray(x), jnp.asarray(y)), jnp.asarray(v),
                                      method=method, fill_value=fill)(jnp.asarray(pts))
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_rgi_shapes_trailing_and_override():
    x, y, v = _grid()
    v3 = v[..., None] * np.arange(1, 4)
    f = RegularGridInterpolator((x, y), v3)
    pts = np.array([[x[1] + 0.1, 0.1], [x[3], 1.9]])
    out = f(jnp.asarray(pts).reshape(2, 1, 2))
    assert out.shape == (2, 1, 3) and out.dtype == np.float32
    ref = si.RegularGridInterpolator((x, y), v3)(pts)
    np.testing.assert_allclose(out.reshape(2, 3), ref, rtol=1e-5)
    g = RegularGridInterpolator((x, y), v)
    np.testing.assert_allclose(g(jnp.asarray(pts), method="nearest"),
                               si.RegularGridInterpolator((x, y), v, method="nearest")(pts),
                               rtol=1e-6)
    assert g(jnp.asarray(pts[0])).shape == (1,)
    np.testing.assert_allclose(g((jnp.asarray(pts[:, 0]), jnp.asarray(pts[:, 1]))),
                               g(jnp.asarray(pts)))
    ints = RegularGridInterpolator((x, y), (v * 10).astype(np.int32))
    assert ints(jnp.asarray(pts)).dtype == np.float32


def test_rgi_pytree_jit_vmap_grad():
    x, y, v = _grid()
    f = RegularGridInterpolator((x, y), v)
    pts = jnp.array([[x[1] + 0.1, 0.1], [x[3], 1.9], [9.0, 0.0]])
    assert len(jaxlite.tree_util.tree_leaves(f)) == 4
    np.testing.assert_allclose(jaxlite.jit(lambda f, p: f(p))(f, pts), f(pts),
                               rtol=1e-6)   # (jit: fused multiply-adds, as XLA's)
    np.testing.assert_allclose(jaxlite.vmap(f)(pts)[:, 0], f(pts))
    g = jaxlite.grad(lambda vals: jnp.nansum(RegularGridInterpolator((x, y), vals)(pts)))(
        jnp.asarray(v, jnp.float32))
    # the weights of each in-bounds point sum to one
    np.testing.assert_allclose(float(g.sum()), 2.0, rtol=1e-6)


def test_rgi_errors():
    x, y, v = _grid()
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator((x, y), v, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator((x, y), v, bounds_error=True)
    with pytest.raises(ValueError, match="have dimension 3"):
        RegularGridInterpolator((x, y), v)(jnp.ones((4, 3)))


def test_rgi_vs_jax():
    jax = pytest.importorskip("jax")
    from jax.scipy.interpolate import RegularGridInterpolator as JR
    x, y, v = _grid()
    pts = np.random.RandomState(3).uniform(-0.5, 3.2, (40, 2)).astype(np.float32)
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, 2.5):
            a = JR((x, y), v, method=method, fill_value=fill)(pts)
            b = RegularGridInterpolator((x, y), v, method=method, fill_value=fill)(pts)
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(b, a, rtol=3e-6, atol=1e-6)
    del jax


# ----------------------------------------------------------------------------- sparse
def _system(n=6, seed=0, spd=False, dtype=np.float64):
    rng = np.random.RandomState(seed)
    a = rng.randn(n, n) + n * np.eye(n)
    if spd:
        a = a @ a.T
    if np.dtype(dtype).kind == "c":
        a = a + 0.3j * rng.randn(n, n)
        if spd:
            a = (a + a.conj().T) / 2 + n * np.eye(n)
    b = rng.randn(n).astype(dtype)
    return a.astype(dtype), b


SOLVERS = {"cg": (cg, True), "gmres": (gmres, False), "bicgstab": (bicgstab, False)}


@pytest.mark.parametrize("name", sorted(SOLVERS))
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_solvers_vs_numpy(x64, name, dtype):
    solver, spd = SOLVERS[name]
    a, b = _system(spd=spd, dtype=dtype)
    ref = np.linalg.solve(a, b)
    x, info = solver(jnp.asarray(a), jnp.asarray(b), tol=1e-12)
    np.testing.assert_allclose(x, ref, rtol=1e-9, atol=1e-10)
    assert (info is None) == (name != "gmres")
    x, _ = solver(lambda v: jnp.asarray(a) @ v, jnp.asarray(b), x0=jnp.ones_like(b),
                  tol=1e-12, M=jnp.diag(1 / jnp.diag(jnp.asarray(a))))
    np.testing.assert_allclose(x, ref, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("method", ["batched", "incremental"])
def test_gmres_restart_and_preconditioner(x64, method):
    a, b = _system(n=12, seed=3)
    ref = np.linalg.solve(a, b)
    x, info = gmres(jnp.asarray(a), jnp.asarray(b), restart=3, maxiter=200, tol=1e-11,
                    solve_method=method)
    np.testing.assert_allclose(x, ref, rtol=1e-8)
    assert int(info) == 0
    # one cycle of restart 1 from x0 = 0 is the minimal-residual step along M r
    x1, _ = gmres(jnp.asarray(a), jnp.asarray(b), restart=1, maxiter=1, solve_method=method)
    w = a @ b
    np.testing.assert_allclose(x1, (w @ b) / (w @ w) * b, rtol=1e-10)


def test_pytree_and_matrix_rhs():
    def mv(t):
        return {"a": 2 * t["a"], "b": 3 * t["b"]}
    b = {"a": jnp.ones(2), "b": jnp.ones(3)}
    for solver in (cg, gmres, bicgstab):
        x, _ = solver(mv, b)
        np.testing.assert_allclose(x["a"], 0.5, rtol=1e-5)
        np.testing.assert_allclose(x["b"], 1 / 3, rtol=1e-5)
    a, rhs = _system(spd=True, dtype=np.float32)
    x, _ = cg(jnp.asarray(a), jnp.ones((6, 2), jnp.float32))
    np.testing.assert_allclose(x, np.linalg.solve(a, np.ones((6, 2))), rtol=1e-3)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_implicit_derivatives(x64, name):
    solver, spd = SOLVERS[name]
    a, b = _system(spd=spd)
    a, b = jnp.asarray(a), jnp.asarray(b)
    w = jnp.arange(1.0, 7.0)

    def loss(a, b):
        return jnp.sum(w * solver(a, b, tol=1e-13)[0] ** 2)

    def dense(a, b):
        return jnp.sum(w * jnp.linalg.solve(a, b) ** 2)
    for argnum in (0, 1):
        g = jaxlite.grad(loss, argnums=argnum)(a, b)
        ref = jaxlite.grad(dense, argnums=argnum)(a, b)
        if spd and argnum == 0:   # cg treats A as symmetric: compare symmetrised
            g, ref = g + g.T, ref + ref.T
        np.testing.assert_allclose(g, ref, rtol=1e-7, atol=1e-10)
    # forward mode and a matvec closing over the differentiated matrix
    t = jnp.ones_like(b)
    _, jv = jaxlite.jvp(lambda b: solver(lambda v: a @ v, b, tol=1e-13)[0], (b,), (t,))
    np.testing.assert_allclose(jv, np.linalg.solve(np.asarray(a), np.ones(6)), rtol=1e-8)
    ga = jaxlite.grad(lambda s: jnp.sum(solver(lambda v: (s * a) @ v, b, tol=1e-13)[0]))(2.0)
    np.testing.assert_allclose(ga, -np.sum(np.linalg.solve(np.asarray(a), np.asarray(b))) / 4,
                               rtol=1e-8)
    # second order: d2/ds2 of sum(x(s)) with x = (s A)^-1 b is 2 sum(A^-1 b) / s^3
    h = jaxlite.grad(jaxlite.grad(
        lambda s: jnp.sum(solver(lambda v: (s * a) @ v, b, tol=1e-13)[0])))(2.0)
    np.testing.assert_allclose(h, 2 * np.sum(np.linalg.solve(np.asarray(a), np.asarray(b)))
                               / 8, rtol=1e-7)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_jit_vmap(name):
    solver, spd = SOLVERS[name]
    a, b = _system(spd=spd, dtype=np.float32)
    a2 = np.stack([a, 2 * a])
    xs = jaxlite.vmap(lambda a, b: solver(a, b)[0])(jnp.asarray(a2), jnp.stack([b, b]))
    ref = np.linalg.solve(a2, np.stack([b, b])[..., None])[..., 0]
    np.testing.assert_allclose(xs, ref, rtol=2e-4, atol=1e-5)
    x = jaxlite.jit(lambda a, b: solver(a, b)[0])(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(x, ref[0], rtol=2e-4, atol=1e-5)
    g = jaxlite.grad(lambda bs: jnp.sum(jaxlite.vmap(lambda b: solver(a, b)[0])(bs)))(
        jnp.stack([b, b]))
    np.testing.assert_allclose(g[0], np.linalg.solve(a.T, np.ones(6)), rtol=2e-4)


def test_sparse_errors():
    a, b = _system(spd=True, dtype=np.float32)
    with pytest.raises(ValueError, match="square matrix, but has shape: \\(3, 4\\)"):
        cg(jnp.ones((3, 4)), jnp.ones(4))
    with pytest.raises(ValueError, match="matching shapes"):
        cg(a, b, x0=jnp.ones(3))
    with pytest.raises(ValueError, match="matching tree structure"):
        cg(a, b, x0={"a": b})
    with pytest.raises(ValueError, match="invalid solve_method foo"):
        gmres(a, b, solve_method="foo")
    with pytest.raises(TypeError):
        cg(a, jnp.ones(6, jnp.int32))
    with pytest.raises(TypeError):
        cg(jnp.asarray(a, jnp.complex64), b)
    with pytest.raises(TypeError):
        cg("not an operator", b)


def test_sparse_vs_jax():
    jax = pytest.importorskip("jax")
    import jax.scipy.sparse.linalg as jsl
    a, b = _system(n=5, seed=1, dtype=np.float32)
    s = a @ a.T
    m = np.linalg.inv(a) + 0.1 * np.random.RandomState(2).randn(5, 5).astype(np.float32)
    cases = [
        ("gmres", a, dict(M=m, restart=2, maxiter=1)),
        ("gmres", a, dict(M=m, restart=3, maxiter=2, tol=1e-2, solve_method="incremental")),
        ("gmres", a, dict(restart=2, maxiter=3)),
        ("bicgstab", a, dict(M=m, maxiter=2)),
        ("bicgstab", a, dict(maxiter=1)),
        ("cg", s, dict(M=np.diag(1 / np.diag(s)), maxiter=2)),
        ("cg", s, dict(maxiter=3, x0=np.ones(5, np.float32))),
        ("cg", s, {}),
    ]
    for name, op, kw in cases:
        ref = getattr(jsl, name)(op, b, **kw)[0]
        got = getattr(jaxlite.scipy.sparse.linalg, name)(op, b, **kw)[0]
        np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-6, err_msg=f"{name} {kw}")
    ga = jax.grad(lambda a: jsl.gmres(a, b)[0].sum())(a)
    gl = jaxlite.grad(lambda a: gmres(a, b)[0].sum())(a)
    np.testing.assert_allclose(gl, ga, rtol=1e-4, atol=1e-6)


def test_public_names_and_signatures_vs_jax():
    pytest.importorskip("jax")
    import importlib
    import inspect
    for mod in ("scipy.interpolate", "scipy.sparse.linalg", "scipy.sparse"):
        a = importlib.import_module("jax." + mod)
        b = importlib.import_module("jaxlite." + mod)
        assert ({n for n in dir(a) if not n.startswith("_")}
                == {n for n in dir(b) if not n.startswith("_")}), mod
    import jax.scipy.sparse.linalg as jsl
    for name in ("cg", "gmres", "bicgstab"):
        pa = inspect.signature(getattr(jsl, name)).parameters.values()
        pb = inspect.signature(getattr(jaxlite.scipy.sparse.linalg, name)).parameters.values()
        assert [(p.name, p.kind, p.default) for p in pa] == \
            [(p.name, p.kind, p.default) for p in pb], name
