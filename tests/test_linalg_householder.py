"""QR in Householder form: ``jnp.linalg.qr(mode="raw")`` (geqrf), ``lax.linalg.
householder_product`` and ``lax.linalg.ormqr`` (lineax's QR solver is built on them).
Checked against NumPy's raw QR and explicit Q products, and against JAX when installed."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.lax import linalg as L

RNG = np.random.default_rng(0)
A = RNG.standard_normal((5, 3)).astype(np.float32)
AC = (RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))).astype(np.complex64)


def _q_complete(a):
    return np.linalg.qr(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                        mode="complete")[0]


@pytest.mark.parametrize("a", [A, A.T.copy(), AC], ids=["tall", "wide", "complex"])
def test_raw_qr_matches_numpy_and_q_products(a):
    h, taus = jnp.linalg.qr(a, mode="raw")
    nh, ntaus = np.linalg.qr(a, mode="raw")
    assert h.shape == nh.shape and taus.shape == ntaus.shape and h.dtype == a.dtype
    # (the sign convention of the reflectors is LAPACK's in both)
    np.testing.assert_allclose(np.asarray(h), nh, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(taus), ntaus, rtol=1e-4, atol=1e-4)
    q = _q_complete(a)
    m = a.shape[0]
    c = RNG.standard_normal((m, 2)).astype(a.dtype)
    for left in (True, False):
        for tr in (False, True):
            cc = c if left else c.T.copy()
            qq = q.conj().T if tr else q
            want = qq @ cc if left else cc @ qq
            got = L.ormqr(h.mT, taus, cc, left=left, transpose=tr)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    if a.shape[0] >= a.shape[1]:
        qp = L.householder_product(h.mT, taus)
        np.testing.assert_allclose(np.asarray(qp), q[:, :a.shape[1]], rtol=1e-4, atol=1e-4)


def test_batched_jitted_and_errors():
    stack = np.stack([A, 2 * A, -A])
    taus = jax.vmap(lambda a: jnp.linalg.qr(a, mode="raw")[1])(stack)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(taus[i]), np.linalg.qr(stack[i], mode="raw")[1],
                                   rtol=1e-4, atol=1e-5)
    solve_q = jax.jit(lambda a, c: L.ormqr(jnp.linalg.qr(a, mode="raw")[0].mT,
                                           jnp.linalg.qr(a, mode="raw")[1], c, transpose=True))
    qtq = jax.vmap(solve_q, in_axes=(0, None))(stack, np.eye(5, dtype=np.float32))
    for i in range(3):
        q = _q_complete(stack[i])
        np.testing.assert_allclose(np.asarray(qtq[i]), q.T, rtol=1e-4, atol=1e-4)
    h, t = jnp.linalg.qr(A, mode="raw")
    for f in (lambda: L.ormqr(h.mT, t, jnp.ones((3, 2))), jax.jit(lambda: L.ormqr(
            h.mT, t, jnp.ones((3, 2))))):
        with pytest.raises(ValueError, match="same number of rows"):
            f()
    with pytest.raises(NotImplementedError, match="geqrf"):
        jax.jvp(lambda a: jnp.linalg.qr(a, mode="raw")[0], (A,), (A,))


def test_compared_with_jax():
    real = pytest.importorskip("jax")
    rl = real.lax.linalg
    for a in (A, A.T.copy(), AC):
        h, t = jnp.linalg.qr(a, mode="raw")
        rh, rt = real.numpy.linalg.qr(a, mode="raw")
        np.testing.assert_allclose(np.asarray(h), np.asarray(rh), rtol=1e-4, atol=1e-4)
        c = np.ones((a.shape[0], 2), a.dtype)
        for tr in (False, True):
            np.testing.assert_allclose(
                np.asarray(L.ormqr(h.mT, t, c, transpose=tr)),
                np.asarray(rl.ormqr(rh.mT, rt, c, transpose=tr)), rtol=1e-4, atol=1e-4)
