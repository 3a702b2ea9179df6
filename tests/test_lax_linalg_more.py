"""lax.linalg.householder_product, tridiagonal, symmetric_product, cholesky_update and qdwh
(issue 20) against LAPACK through SciPy / NumPy identities, and JAX when installed."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.lax import linalg as L

lapack = pytest.importorskip("scipy.linalg.lapack")
rng = np.random.default_rng(0)
A = rng.standard_normal((5, 3)).astype(np.float32)
S = rng.standard_normal((4, 4)).astype(np.float32)
S = S + S.T


def test_householder_product_rebuilds_q():
    qr, tau, _, _ = lapack.sgeqrf(A)
    q = np.asarray(L.householder_product(qr, tau))
    r = np.triu(qr[:3])
    np.testing.assert_allclose(q @ r, A, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-5)
    out = jax.vmap(L.householder_product)(np.stack([qr, qr]), np.stack([tau, tau]))
    np.testing.assert_allclose(out[1], q, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(L.householder_product)(qr, tau), q, rtol=1e-6)
    with pytest.raises(ValueError, match="at least as many rows"):
        L.householder_product(qr.T, tau)
    with pytest.raises(NotImplementedError, match="householder_product"):
        jax.grad(lambda a: L.householder_product(a, tau).sum())(qr)


@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal(lower):
    arr, d, e, taus = (np.asarray(t) for t in L.tridiagonal(S, lower=lower))
    c, d0, e0, tau0, _ = lapack.ssytrd(S, lower=int(lower))
    np.testing.assert_allclose(arr, c, rtol=1e-6)
    np.testing.assert_allclose(d, d0, rtol=1e-6)
    np.testing.assert_allclose(taus, tau0, rtol=1e-6)
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(T), np.linalg.eigvalsh(S), rtol=1e-4,
                               atol=1e-4)
    if lower:   # Q from the reflectors below the subdiagonal: Q^T S Q = T
        v = np.zeros((4, 3), np.float32)
        v[1:, :] = np.tril(arr[1:, :3], -1) + np.eye(3, dtype=np.float32)
        qsub = np.asarray(L.householder_product(np.tril(arr[1:, :3], -1), taus))
        Q = np.eye(4, dtype=np.float32)
        Q[1:, 1:] = qsub
        np.testing.assert_allclose(Q.T @ S @ Q, T, atol=1e-4)


def test_symmetric_product():
    C = rng.standard_normal((5, 5)).astype(np.float32)
    out = np.asarray(L.symmetric_product(A, C, alpha=2.0, beta=3.0))
    np.testing.assert_allclose(out, 2 * A @ A.T + 3 * C, rtol=1e-5, atol=1e-5)
    sym = np.asarray(L.symmetric_product(A, C, beta=1.0, symmetrize_output=True))
    low = np.tril(A @ A.T + C)
    np.testing.assert_allclose(sym, low + np.tril(low, -1).T, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="c_matrix must have shape"):
        L.symmetric_product(A, C[:3, :3])


def test_cholesky_update():
    M = S @ S.T + np.eye(4, dtype=np.float32)
    R = np.linalg.cholesky(M).T.astype(np.float32)
    w = rng.standard_normal(4).astype(np.float32)
    R1 = np.asarray(L.cholesky_update(R, w))
    np.testing.assert_allclose(R1, np.linalg.cholesky(M + np.outer(w, w)).T, rtol=1e-4,
                               atol=1e-4)
    assert np.all(np.tril(R1, -1) == 0)
    b = jax.vmap(L.cholesky_update)(np.stack([R, R]), np.stack([w, 2 * w]))
    np.testing.assert_allclose(b[0], R1, rtol=1e-6)


@pytest.mark.parametrize("shape", [(5, 3), (6, 6)])
def test_qdwh_is_the_polar_decomposition(shape):
    x = rng.standard_normal(shape).astype(np.float32)
    u, h, iters, conv = L.qdwh(x)
    u, h = np.asarray(u, np.float64), np.asarray(h, np.float64)
    np.testing.assert_allclose(u @ h, x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(u.T @ u, np.eye(shape[1]), atol=1e-5)
    W, s, Vt = np.linalg.svd(x.astype(np.float64), full_matrices=False)
    np.testing.assert_allclose(u, W @ Vt, rtol=1e-4, atol=1e-4)
    assert bool(conv) and 0 < int(iters) <= 10
    u2 = jax.jit(L.qdwh)(x)[0]
    np.testing.assert_allclose(u2, u, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="M >= N"):
        L.qdwh(x.T if shape[0] != shape[1] else x[:2])


def test_vs_jax():
    jr = pytest.importorskip("jax")
    x = rng.standard_normal((6, 4)).astype(np.float32)
    a, b = L.qdwh(x), jr.lax.linalg.qdwh(x)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-5)
    assert int(a[2]) == int(b[2]) and bool(a[3]) == bool(b[3])
    qr, tau, _, _ = lapack.sgeqrf(A)
    np.testing.assert_allclose(L.householder_product(qr, tau),
                               jr.lax.linalg.householder_product(qr, tau), rtol=1e-6)
    for p, q in zip(L.tridiagonal(S), jr.lax.linalg.tridiagonal(S)):
        np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-6)


def test_lu_of_a_singular_matrix_warns_nothing_and_keeps_the_filters():
    # JAX says nothing of a singular matrix; jaxlite calls LAPACK's getrf directly rather
    # than silencing SciPy's LinAlgWarning with (process-wide) catch_warnings
    import warnings
    before = list(warnings.filters)
    a = jnp.asarray(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lu, piv, perm = jax.lax.linalg.lu(a)
    assert warnings.filters == before
    assert np.asarray(lu)[1, 1] == 0 and list(np.asarray(perm)) == [1, 0]
