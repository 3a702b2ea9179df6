"""Differentiation rules of gather/scatter, sort/top_k, cumulative reductions and the
linear-algebra primitives: check_grads against finite differences (float32 first order,
float64 up to second order, forward and reverse), and gradients against real JAX."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.prims import linalg as lax_linalg
from jaxlite.test_util import check_grads

RNG = np.random.RandomState(0)
X = RNG.randn(4, 5)
Y = RNG.randn(2, 5)
SQ = RNG.randn(4, 4) + 3 * np.eye(4)          # well conditioned
SPD = SQ @ SQ.T * 0.3 + np.diag([1., 2., 3., 4.])  # distinct eigenvalues
B = RNG.randn(4, 3)
TALL = RNG.randn(5, 3)
IDX = np.array([0, 2])
DUP = np.array([1, 1, 3])


def _j(x):
    return jnp.asarray(x)


def _sign_free(t):
    """A sign-invariant summary of a matrix of singular/eigen vectors."""
    return t * t


# name -> (function of (module, *args), args); `m` is jaxlite.numpy or jax.numpy.
CASES = {
    # indexing
    "int_index": (lambda m, x: m.asarray(x)[1], (X,)),
    "fancy_index": (lambda m, x: m.asarray(x)[m.array([0, 2, 0])], (X,)),
    "list_index": (lambda m, x: m.asarray(x)[[0, 2],], (X,)),   # a list inside a tuple
    "slice_then_fancy": (lambda m, x: m.asarray(x)[:, 1:4][m.array([1, 3])], (X,)),
    "neg_strided": (lambda m, x: m.asarray(x)[-1, ::2], (X,)),
    "pairs_index": (lambda m, x: m.asarray(x)[m.array([0, 1, 3]), m.array([4, 0, 2])], (X,)),
    "take": (lambda m, x: m.take(x, m.array([4, 1, 1]), axis=1), (X,)),
    "take_along_axis": (lambda m, x: m.take_along_axis(
        x, m.argsort(m.asarray(x), axis=1), axis=1), (X,)),
    "at_add": (lambda m, x, y: m.asarray(x).at[IDX].add(y), (X, Y)),
    "at_add_dup": (lambda m, x, y: m.asarray(x).at[DUP].add(m.stack([y[0], y[1], y[0]])),
                   (X, Y)),
    "at_set": (lambda m, x, y: m.asarray(x).at[IDX].set(y), (X, Y)),
    "at_set_dup": (lambda m, x, y: m.asarray(x).at[m.array([1, 1])].set(y), (X, Y)),
    "at_set_scalar": (lambda m, x: m.asarray(x).at[1, 2].set(3.0) * x, (X,)),
    "at_mul": (lambda m, x: m.asarray(x).at[DUP].multiply(2.5), (X,)),
    "at_mul_unique": (lambda m, x, y: m.asarray(x).at[IDX].multiply(
        y, unique_indices=True), (X, Y)),
    "at_min": (lambda m, x, y: m.asarray(x).at[IDX].min(y), (X, Y)),
    "at_max": (lambda m, x, y: m.asarray(x).at[IDX].max(y), (X, Y)),
    # sorting
    "sort_axis0": (lambda m, x: m.sort(x, axis=0), (X,)),
    "sort": (lambda m, x: m.sort(x), (X,)),
    "argsort_rows": (lambda m, x: m.asarray(x)[m.argsort(m.asarray(x)[:, 0])], (X,)),
    "median_axis": (lambda m, x: m.median(x, axis=1), (X,)),
    "median": (lambda m, x: m.median(x), (X,)),
    # cumulative
    "cumsum": (lambda m, x: m.cumsum(x, axis=1), (X,)),
    "cumprod": (lambda m, x: m.cumprod(x, axis=1), (X,)),
    "cumprod0": (lambda m, x: m.cumprod(x, axis=0), (X,)),
    "prod": (lambda m, x: m.prod(x, axis=0), (X,)),
    # linalg
    "inv": (lambda m, a: m.linalg.inv(a), (SQ,)),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), (SQ, B)),
    "solve_vec": (lambda m, a, b: m.linalg.solve(a, b[:, 0]), (SQ, B)),
    "det": (lambda m, a: m.linalg.det(a), (SQ,)),
    "det2": (lambda m, a: m.linalg.det(a[:2, :2] * 0.5), (SQ,)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a)[1], (SQ,)),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), (SPD,)),
    "eigh_w": (lambda m, a: m.linalg.eigh(a)[0], (SPD,)),
    "eigh_v": (lambda m, a: _sign_free(m.linalg.eigh(a)[1]), (SPD,)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), (SPD,)),
    "svd_s": (lambda m, a: m.linalg.svd(a, compute_uv=False), (TALL,)),
    "svd_s_wide": (lambda m, a: m.linalg.svd(a.T, compute_uv=False), (TALL,)),
    "svd_uv": (lambda m, a: [_sign_free(t) for t in m.linalg.svd(a, full_matrices=False)],
               (TALL,)),
    "svd_uv_wide": (lambda m, a: [_sign_free(t) for t in
                                  m.linalg.svd(a.T, full_matrices=False)], (TALL,)),
    "svd_square_full": (lambda m, a: [_sign_free(t) for t in m.linalg.svd(a)], (SQ,)),
    "qr": (lambda m, a: m.linalg.qr(a), (TALL,)),
    "qr_wide": (lambda m, a: m.linalg.qr(a.T), (TALL,)),
    "qr_complete": (lambda m, a: m.linalg.qr(a, mode="complete"), (TALL,)),
    "norm_fro": (lambda m, a: m.linalg.norm(a), (TALL,)),
    "norm_2": (lambda m, a: m.linalg.norm(a, 2), (TALL,)),
    "norm_nuc": (lambda m, a: m.linalg.norm(a, "nuc"), (TALL,)),
    "norm_vec": (lambda m, a: m.linalg.norm(a[0], 3), (TALL,)),
    "pinv": (lambda m, a: m.linalg.pinv(a), (TALL,)),
}

# float32 finite differences of second order are dominated by rounding: first order only,
# and LAPACK's float32 results (accurate to ~1e-6 relative) need a wider difference step
F32_ORDER = 1
LINALG = {k for k in CASES if k.split("_")[0] in (
    "inv", "solve", "det", "det2", "slogdet", "cholesky", "eigh", "eigvalsh", "svd", "qr",
    "norm", "pinv")}


def _call(name):
    fn, args = CASES[name]
    return (lambda *a: fn(jnp, *a)), args


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_grads_float32(name):
    f, args = _call(name)
    check_grads(f, tuple(a.astype(np.float32) for a in args), F32_ORDER,
                eps=2e-3 if name in LINALG else None)


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_grads_float64(name):
    f, args = _call(name)
    with jax.enable_x64():
        check_grads(f, tuple(np.asarray(a, np.float64) for a in args), 2)


def test_x64_config_restored():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        f, args = _call("solve")
        check_grads(f, args, 2)
        f, args = _call("cumprod")
        check_grads(f, args, 2)
    finally:
        jax.config.update("jax_enable_x64", prev)
    assert jax.config.jax_enable_x64 == prev


# ----------------------------------------------------------------------------- lax level
def _rng():
    return np.random.RandomState(1)


def _tri(lower):
    a = _rng().randn(4, 4) + 4 * np.eye(4)
    return np.tril(a) if lower else np.triu(a)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve(left_side, lower, transpose_a, unit_diagonal):
    a = _tri(lower)
    b = np.random.RandomState(3).randn(*((4, 3) if left_side else (3, 4)))

    def f(a, b):
        return lax_linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                           transpose_a=transpose_a,
                                           unit_diagonal=unit_diagonal)
    with jax.enable_x64():
        check_grads(f, (a, b), 2)
    check_grads(f, (a.astype(np.float32), b.astype(np.float32)), 1, eps=2e-3)


def test_triangular_solve_complex_conjugate():
    rng = np.random.RandomState(2)
    a = _tri(True) + 1j * np.tril(rng.randn(4, 4))
    b = rng.randn(4, 2) + 1j * rng.randn(4, 2)

    def f(a, b):
        return lax_linalg.triangular_solve(a, b, left_side=True, lower=True,
                                           transpose_a=True, conjugate_a=True)
    with jax.enable_x64():
        check_grads(f, (a, b), 2)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)])
def test_lu(shape):
    # well conditioned, with row exchanges (a permuted diagonally dominant matrix)
    m, n = shape[-2:]
    a = 0.5 * _rng().randn(*shape) + 2 * np.eye(m, n)[::-1][np.r_[1:m, 0]]
    with jax.enable_x64():
        check_grads(lambda x: lax_linalg.lu(x)[0], (a,), 2)


def test_batched_linalg():
    a = np.stack([SQ, SQ.T + np.eye(4)])
    s = np.stack([SPD, SPD + np.eye(4) * np.array([0., 1, 3, 5])])
    with jax.enable_x64():
        check_grads(lambda x: jnp.linalg.inv(x), (a,), 2)
        check_grads(lambda x: jnp.linalg.det(x), (a,), 2)
        check_grads(lambda x: jnp.linalg.cholesky(x), (s,), 2)
        check_grads(lambda x: jnp.linalg.eigh(x)[0], (s,), 2)
        check_grads(lambda x: jnp.linalg.svd(x, compute_uv=False), (a,), 2)
        check_grads(lambda x: jnp.linalg.qr(x), (a,), 2)


def test_complex_linalg():
    a = SQ + 1j * _rng().randn(4, 4)
    h = a @ a.conj().T + np.diag([1., 2., 3., 4.])
    with jax.enable_x64():
        check_grads(lambda x: jnp.linalg.inv(x), (a,), 2)
        check_grads(lambda x: jnp.linalg.cholesky(x), (h,), 2)
        check_grads(lambda x: jnp.linalg.eigh(x)[0], (h,), 2)
        check_grads(lambda x: jnp.linalg.svd(x, compute_uv=False), (a,), 2)
        check_grads(lambda x: jnp.linalg.qr(x), (a,), 2)
        check_grads(lambda x: jnp.abs(jnp.linalg.eigvals(x)), (a,), 1)


def test_qr_pivoting():
    a = _rng().randn(5, 3)
    with jax.enable_x64():
        check_grads(lambda x: lax_linalg.qr(x, pivoting=True, full_matrices=False)[:2],
                    (a,), 2)


def _eigvecs(x):
    return lax_linalg.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)


def test_eig_eigenvectors():
    a = _rng().randn(4, 4)
    with jax.enable_x64():
        # the moduli are free of LAPACK's sign choice for real eigenvectors
        check_grads(lambda x: [jnp.abs(t) ** 2 for t in _eigvecs(x)], (a,), 1)
        check_grads(lambda x: jnp.abs(_eigvecs(x)[1]) ** 2, (a + 1j * a.T,), 1)
        with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
            jax.jacfwd(lambda x: lax_linalg.eig(x, compute_left_eigenvectors=False)[1])(a)


def test_eigvals_seed():
    f = lambda m: jnp.max(jnp.abs(jnp.linalg.eigvals(m)))  # noqa: E731
    g = jax.grad(f)(np.array([[1., -1.], [1., 1.]], np.float32))
    np.testing.assert_allclose(g, [[0.354, -0.354], [0.354, 0.354]], atol=1e-3)
    g = jax.grad(f)(np.array([[1 + 1j, -1], [1, 1]], np.complex64))
    np.testing.assert_allclose(g, [[0.38 - 0.616j, -0.38 - 0.235j],
                                   [0.38 + 0.235j, 0.145 - 0.235j]], atol=2e-3)
    check_grads(f, (np.array([[1., -1.], [1., 1.]]),), 1, atol=1e-2, rtol=1e-2)


def test_scatter_errors_as_jax():
    x, y = jnp.asarray(X, np.float32), jnp.asarray(Y, np.float32)
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        jax.grad(lambda y: x.at[IDX].multiply(y).sum())(y)
    with pytest.raises(NotImplementedError, match="partial eigen"):
        jax.grad(lambda a: lax_linalg.eigh(a, subset_by_index=(0, 2))[1].sum())(
            jnp.asarray(SPD, np.float32))
    with pytest.raises(NotImplementedError, match="full matrices"):
        jax.grad(lambda a: jnp.linalg.svd(a)[0].sum())(jnp.asarray(TALL, np.float32))


def test_rules_under_jit_and_vmap():
    x = X.astype(np.float32)
    g = jax.jit(jax.grad(lambda x: jnp.sort(x, axis=1)[:, -1].sum()))(x)
    np.testing.assert_allclose(g, (x == x.max(1, keepdims=True)).astype(np.float32))
    g = jax.vmap(jax.grad(lambda v: v[np.array([0, 0, 2])].sum()))(x)
    np.testing.assert_allclose(g, np.tile([2., 0, 1, 0, 0], (4, 1)))
    h = jax.jit(jax.hessian(lambda a: jnp.linalg.slogdet(a)[1]))(SQ.astype(np.float32))
    assert h.shape == (4, 4, 4, 4)


def test_sort_jaxpr_shape():
    # the JVP sorts an iota along and gathers the tangents (as JAX)
    jaxpr = jax.make_jaxpr(lambda x: jax.jvp(lambda v: lax.sort(v, dimension=0),
                                             (x,), (x,)))(X.astype(np.float32))
    text = str(jaxpr)
    assert "sort[" in text and "gather[" in text and "iota[" in text


def test_top_k():
    x = X.astype(np.float32)
    check_grads(lambda x: lax.top_k(x, 3)[0], (x,), 1)
    with jax.enable_x64():
        check_grads(lambda x: lax.top_k(x, 3)[0], (X,), 2)


def test_cummax_cummin():
    x = X.astype(np.float32)
    for f in (lambda v: lax.cummax(v, axis=0), lambda v: lax.cummin(v, axis=1),
              lambda v: lax.cummax(v, axis=1, reverse=True),
              lambda v: lax.cumprod(v, axis=0, reverse=True)):
        check_grads(f, (x,), 1)
        with jax.enable_x64():
            check_grads(f, (X,), 2)


def test_argmax_not_differentiable():
    g = jax.grad(lambda x: (jnp.argmax(x) * x).sum())(X[0].astype(np.float32))
    np.testing.assert_allclose(g, np.full(5, np.argmax(X[0]), np.float32))


# ----------------------------------------------------------------------------- vs JAX
def _scalarize(m, out):
    """A fixed random linear functional of the (pytree) output."""
    leaves = out if isinstance(out, (list, tuple)) else [out]
    total = 0.0
    for i, leaf in enumerate(leaves):
        w = np.random.RandomState(i).randn(*np.shape(leaf))
        total = total + m.sum(m.real(leaf) * w)
    return total


JAX_SKIP = {"at_set_dup"}  # which duplicate update wins is unspecified


@pytest.mark.parametrize("name", sorted(set(CASES) - JAX_SKIP))
def test_grad_matches_jax(name):
    jax_ = pytest.importorskip("jax")
    jjnp = pytest.importorskip("jax.numpy")
    fn, args = CASES[name]
    argnums = tuple(range(len(args)))
    with jax.enable_x64():
        ours = jax.grad(lambda *a: _scalarize(jnp, fn(jnp, *a)), argnums)(
            *[np.asarray(a, np.float64) for a in args])
    with jax_.enable_x64(True):
        ref = jax_.grad(lambda *a: _scalarize(jjnp, fn(jjnp, *a)), argnums)(
            *[np.asarray(a, np.float64) for a in args])
    for o, r in zip(ours, ref):
        np.testing.assert_allclose(np.asarray(o), np.asarray(r), rtol=1e-6, atol=1e-8,
                                   err_msg=name)


def test_eig_eigenvector_jvp_matches_jax():
    jax_ = pytest.importorskip("jax")
    a = _rng().randn(4, 4) + 1j * _rng().randn(4, 4) * 0.5
    t = np.random.RandomState(5).randn(4, 4)
    with jax.enable_x64():
        ours = jax.jvp(_eigvecs, (a,), (t + 0j,))
    with jax_.enable_x64(True):
        ref = jax_.jvp(lambda x: jax_.lax.linalg.eig(x, compute_left_eigenvectors=False,
                                                   enable_eigvec_derivs=True),
                       (a,), (t + 0j,))
    for o, r in zip(ours[0] + ours[1], ref[0] + ref[1]):
        np.testing.assert_allclose(np.asarray(o), np.asarray(r), rtol=1e-8, atol=1e-10)


def test_complex_eigvals_grad_matches_jax():
    jax_ = pytest.importorskip("jax")
    jjnp = pytest.importorskip("jax.numpy")
    a = (SQ + 1j * _rng().randn(4, 4)).astype(np.complex64)
    ours = jax.grad(lambda m: jnp.max(jnp.abs(jnp.linalg.eigvals(m))))(a)
    ref = jax_.grad(lambda m: jjnp.max(jjnp.abs(jjnp.linalg.eigvals(m))))(a)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-4, atol=1e-5)
