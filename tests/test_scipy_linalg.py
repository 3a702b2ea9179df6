"""jax.scipy.linalg: values vs scipy.linalg (float32, float64, complex64), vs JAX when it is
installed (values, dtypes, shapes), gradients (check_grads), jit vs eager, vmap vs a loop,
and errors."""
import warnings

import numpy as np
import pytest
import scipy.linalg as sl

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.linalg as L
from jaxlite.test_util import check_grads

RNG = np.random.RandomState(0)
A4 = RNG.randn(4, 4)
SPD4 = A4 @ A4.T + 4 * np.eye(4)
B42 = RNG.randn(4, 2)
U4 = np.triu(RNG.randn(4, 4)) + 4 * np.eye(4)
C4 = RNG.randn(4, 4) + 1j * RNG.randn(4, 4)
HPD4 = C4 @ C4.conj().T + 4 * np.eye(4)
D5, E4 = RNG.randn(5), RNG.randn(4)

TOL = {np.float32: 2e-4, np.float64: 1e-10, np.complex64: 2e-4, np.complex128: 1e-10}


def _close(got, want, tol):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, tol)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _sign_fix(v):
    """Eigenvector columns scaled so their largest entry is real positive."""
    v = np.asarray(v)
    idx = np.argmax(np.abs(v), axis=0)
    ph = v[idx, np.arange(v.shape[1])]
    return v / (ph / np.abs(ph))


def _x64():
    from jaxlite._src.config import config
    return config.override("jax_enable_x64", True)


def _dtype_fixture(request):
    if request.param == np.float64:
        with _x64():
            yield request.param
    else:
        yield request.param


any_dt = pytest.fixture(params=[np.float32, np.float64, np.complex64])(_dtype_fixture)
real_dt = pytest.fixture(params=[np.float32, np.float64])(_dtype_fixture)


def _mat(dt, m=A4, spd=False):
    if np.dtype(dt).kind == "c":
        m = HPD4 if spd else C4
    elif spd:
        m = SPD4
    return np.asarray(m).astype(dt)


# ----------------------------------------------------------------------------- values
def test_solve_triangular(any_dt):
    u, b = np.triu(_mat(any_dt)) + 4 * np.eye(4, dtype=any_dt), B42.astype(any_dt)
    tol = TOL[any_dt] * 10
    for trans in (0, 1, 2, "N", "T", "C"):
        for lower in (False, True):
            a = u.T if lower else u
            want = sl.solve_triangular(a, b, trans=trans, lower=lower)
            got = L.solve_triangular(a, b, trans=trans, lower=lower)
            assert got.dtype == any_dt
            _close(got, want, tol)
    _close(L.solve_triangular(u, b[:, 0], unit_diagonal=True),
           sl.solve_triangular(u, b[:, 0], unit_diagonal=True), tol)


def test_cholesky_family(any_dt):
    a, b = _mat(any_dt, spd=True), B42.astype(any_dt)
    tol = TOL[any_dt] * 50
    for lower in (False, True):
        _close(L.cholesky(a, lower=lower), sl.cholesky(a, lower=lower), tol)
        c, low = L.cho_factor(a, lower=lower)
        assert low == lower
        _close(L.cho_solve((c, low), b), sl.cho_solve(sl.cho_factor(a, lower=lower), b), tol)
        _close(L.cho_solve((c, low), b[:, 0]), np.linalg.solve(a, b[:, 0]), tol)


def test_lu_family(any_dt):
    a, b = _mat(any_dt), B42.astype(any_dt)
    tol = TOL[any_dt] * 50
    _close(L.lu(a), sl.lu(a), tol)
    _close(L.lu(a, permute_l=True), sl.lu(a, permute_l=True), tol)
    _close(L.lu(a[:, :3]), sl.lu(a[:, :3]), tol)
    _close(L.lu(a[:3]), sl.lu(a[:3]), tol)
    lu_, piv = L.lu_factor(a)
    assert piv.dtype == np.int32
    _close((lu_, piv), sl.lu_factor(a), tol)
    for trans in (0, 1, 2):
        _close(L.lu_solve((lu_, piv), b, trans=trans),
               sl.lu_solve(sl.lu_factor(a), b, trans=trans), tol)
    _close(L.lu_solve((lu_, piv), b[:, 0]), np.linalg.solve(a, b[:, 0]), tol)


def test_qr_modes(any_dt):
    a = _mat(any_dt)[:, :3]
    tol = TOL[any_dt] * 50
    _close(L.qr(a), sl.qr(a), tol)
    _close(L.qr(a, mode="economic"), sl.qr(a, mode="economic"), tol)
    _close(L.qr(a, mode="r"), sl.qr(a, mode="r"), tol)
    q, r, p = L.qr(a, pivoting=True)
    _close((q, r, p), sl.qr(a, pivoting=True), tol)
    _close(L.qr(a, mode="r", pivoting=True), sl.qr(a, mode="r", pivoting=True), tol)
    with pytest.raises(ValueError, match="mode"):
        L.qr(a, mode="bogus")
    c = B42.T.astype(any_dt)
    _close(L.qr_multiply(a, c), sl.qr_multiply(a, c), tol)
    _close(L.qr_multiply(a, c[:, :3].T, mode="left"), sl.qr_multiply(a, c[:, :3].T,
                                                                      mode="left"), tol)
    _close(L.qr_multiply(a, c[0], conjugate=True), sl.qr_multiply(a, c[0], conjugate=True),
           tol)


def test_solve_inv_det(any_dt):
    a, spd, b = _mat(any_dt), _mat(any_dt, spd=True), B42.astype(any_dt)
    tol = TOL[any_dt] * 50
    for assume_a in ("gen", "sym", "her"):
        _close(L.solve(a, b, assume_a=assume_a), sl.solve(a, b), tol)
    for lower in (False, True):
        _close(L.solve(spd, b, assume_a="pos", lower=lower), np.linalg.solve(spd, b), tol)
        _close(L.solve(spd, b[:, 0], assume_a="pos", lower=lower),
               np.linalg.solve(spd, b[:, 0]), tol)
    _close(L.inv(a), sl.inv(a), tol)
    assert abs(complex(L.det(a)) - sl.det(a)) < tol * abs(sl.det(a))
    with pytest.raises(ValueError, match="assume_a"):
        L.solve(a, b, assume_a="banana")


def test_solve_pos_reads_one_triangle():
    spd = SPD4.astype(np.float32)
    junk = spd + np.triu(np.ones((4, 4), np.float32), 1) * 7
    _close(L.solve(junk, B42.astype(np.float32), assume_a="pos", lower=True),
           np.linalg.solve(spd, B42), 1e-4)
    bad = -np.eye(3, dtype=np.float32)
    assert np.isnan(np.asarray(L.solve(bad, np.ones(3, np.float32), assume_a="pos"))).all()


def test_eigh(any_dt):
    a = _mat(any_dt, spd=True)
    tol = TOL[any_dt] * 100
    w, v = L.eigh(a)
    ww, vv = sl.eigh(a)
    _close(w, ww, tol * np.abs(ww).max())
    _close(_sign_fix(v), _sign_fix(vv), tol * 10)
    assert np.asarray(w).dtype == np.finfo(any_dt).dtype
    _close(L.eigh(a, eigvals_only=True), ww, tol * np.abs(ww).max())
    _close(L.eigh(a, lower=False, eigvals_only=True), ww, tol * np.abs(ww).max())
    _close(L.eigh(a, subset_by_index=(1, 2), eigvals_only=True), ww[1:3],
           tol * np.abs(ww).max())
    bmat = (np.eye(4) * 2 + 0.1).astype(any_dt)
    for typ in (1, 2, 3):
        got_w, got_v = L.eigh(a, bmat, type=typ)
        want_w, want_v = sl.eigh(a, bmat, type=typ)
        _close(got_w, want_w, tol * 10 * np.abs(want_w).max())
        _close(_sign_fix(got_v), _sign_fix(want_v), tol * 100)


def test_eigh_tridiagonal(real_dt):
    d, e = D5.astype(real_dt), E4.astype(real_dt)
    tol = TOL[real_dt] * 100
    _close(L.eigh_tridiagonal(d, e, eigvals_only=True),
           sl.eigh_tridiagonal(d, e, eigvals_only=True), tol)
    w, v = L.eigh_tridiagonal(d, e)
    ww, vv = sl.eigh_tridiagonal(d, e)
    _close(w, ww, tol)
    _close(_sign_fix(v), _sign_fix(vv), tol)
    _close(L.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
           ww[1:4], tol)
    with pytest.raises(ValueError):
        L.eigh_tridiagonal(d, e, select="i")


def test_svd_schur_hessenberg(any_dt):
    a = _mat(any_dt)
    tol = TOL[any_dt] * 100
    _close(L.svd(a, compute_uv=False), sl.svd(a, compute_uv=False), tol)
    u, s, vh = L.svd(a[:, :3], full_matrices=False)
    _close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a[:, :3], tol)
    out = "complex" if np.dtype(any_dt).kind == "c" else "real"
    _close(L.schur(a, output=out), sl.schur(a, output=out), tol)
    t, z = L.schur(a, output="complex")
    _close(np.asarray(z) @ np.asarray(t) @ np.asarray(z).conj().T, a, tol)
    assert np.allclose(np.tril(np.asarray(t), -1), 0)
    _close(L.hessenberg(a, calc_q=True), sl.hessenberg(a, calc_q=True), tol)
    _close(L.hessenberg(a), sl.hessenberg(a), tol)
    with pytest.raises(ValueError, match="output"):
        L.schur(a, output="nope")


def test_matrix_functions(any_dt):
    a = _mat(any_dt) * 0.5
    spd = _mat(any_dt, spd=True)
    tol = TOL[any_dt] * 200
    _close(L.expm(a), sl.expm(a), tol)
    _close(L.expm(a * 8), sl.expm(a * 8), tol * 100)
    _close(L.expm(np.triu(a), upper_triangular=True), sl.expm(np.triu(a)), tol)
    e = np.eye(4, dtype=any_dt)
    _close(L.expm_frechet(a, e), sl.expm_frechet(a, e), tol)
    _close(L.expm_frechet(a, e, compute_expm=False), sl.expm_frechet(a, e,
                                                                      compute_expm=False), tol)
    _close(L.sqrtm(spd), sl.sqrtm(spd), tol * 10)
    _close(L.funm(a, jnp.exp), sl.expm(a), tol * 10)
    _close(L.funm(a, lambda x: jnp.sin(x) + 2 * jnp.cos(x)),
           sl.funm(a, lambda x: np.sin(x) + 2 * np.cos(x)), tol * 10)
    for side in ("right", "left"):
        _close(L.polar(a, side, method="svd"), sl.polar(a, side), tol)
    _close(L.polar(a), sl.polar(a), tol)
    if np.dtype(any_dt).kind != "c":
        t, z = sl.schur(a)
        _close(L.rsf2csf(t, z), sl.rsf2csf(t, z), tol)
    c = RNG.randn(4, 3).astype(any_dt)
    bb = (RNG.randn(3, 3) + 4 * np.eye(3)).astype(any_dt)
    aa = a + 4 * np.eye(4, dtype=any_dt)
    _close(L.solve_sylvester(aa, bb, c), sl.solve_sylvester(aa, bb, c), tol * 10)


def test_sqrtm_and_expm_general():
    a = A4.astype(np.float32)
    _close(L.sqrtm(a), sl.sqrtm(a.astype(np.complex64)), 2e-3)
    assert np.isnan(np.asarray(L.expm(a * 1e6, max_squarings=2))).all()
    assert L.expm(a).dtype == np.float32
    assert L.expm(np.eye(2, dtype=np.int32)).dtype == np.float32


def test_special_matrices():
    d, e = D5.astype(np.float32), E4.astype(np.float32)
    tol = 1e-5
    _close(L.block_diag(np.ones((2, 3)), 5.0, np.arange(2.0)),
           sl.block_diag(np.ones((2, 3)), 5.0, np.arange(2.0)), tol)
    _close(L.toeplitz(d, e), sl.toeplitz(d, e), tol)
    _close(L.toeplitz(d), sl.toeplitz(d), tol)
    _close(L.toeplitz(np.stack([d, 2 * d]), e)[1], sl.toeplitz(2 * d, e), tol)
    _close(L.hankel(d, e), sl.hankel(d, e), tol)
    _close(L.hankel(d), sl.hankel(d), tol)
    _close(L.circulant(d), sl.circulant(d), tol)
    _close(L.leslie(d, e), sl.leslie(d, e), tol)
    _close(L.companion(d), sl.companion(d), tol)
    _close(L.fiedler(d), sl.fiedler(d), tol)
    _close(L.fiedler_companion(d), sl.fiedler_companion(d), 1e-4)
    for mode in ("full", "valid", "same"):
        _close(L.convolution_matrix(d, 3, mode), sl.convolution_matrix(d, 3, mode), tol)
    _close(L.hilbert(5), sl.hilbert(5), tol)
    _close(L.invhilbert(4), sl.invhilbert(4), 1e-2)
    for kind in ("symmetric", "lower", "upper"):
        _close(L.pascal(5, kind), sl.pascal(5, kind), 1e-3)
        _close(L.invpascal(5, kind), sl.invpascal(5, kind), 1e-3)
    _close(L.helmert(5), sl.helmert(5), tol)
    _close(L.helmert(5, full=True), sl.helmert(5, full=True), tol)
    _close(L.hadamard(8), sl.hadamard(8), 0)
    assert L.hadamard(4).dtype == np.int32
    _close(L.dft(5), sl.dft(5), 1e-5)
    _close(L.dft(5, "sqrtn"), sl.dft(5, "sqrtn"), 1e-5)
    assert L.hilbert(3).dtype == np.float32 and L.dft(3).dtype == np.complex64
    with pytest.raises(ValueError):
        L.hadamard(6)
    with pytest.raises(ValueError):
        L.block_diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError):
        L.pascal(3, "diagonal")


def test_errors():
    with pytest.raises(ValueError):
        L.expm(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError):
        L.expm_frechet(np.ones((2, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError):
        L.solve_triangular(U4, B42, trans=7)
    with pytest.raises(ValueError):
        L.lu_solve(L.lu_factor(A4), B42, trans=5)
    with pytest.raises((ValueError, TypeError)):
        L.cholesky(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError):
        L.polar(np.ones(3))
    with pytest.raises(ValueError):
        L.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 3)))
    with pytest.raises(ValueError):
        L.eigh(SPD4, subset_by_index=(2, 9))
    with pytest.raises(NotImplementedError):
        jaxlite.grad(lambda a: L.schur(a)[0].sum())(A4.astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FutureWarning):
            L.solve_triangular(np.stack([U4, U4]), B42.T)


# ----------------------------------------------------------------------------- gradients
def _grad_cases():
    a, spd, b, u = A4[:3, :3], SPD4[:3, :3], B42[:3], U4[:3, :3]
    return {
        "solve_triangular": (lambda a, b: L.solve_triangular(a, b), (u, b)),
        "solve_triangular_lower_T": (lambda a, b: L.solve_triangular(a, b, trans="T",
                                                                      lower=True), (u.T, b)),
        "cho_solve": (lambda a, b: L.cho_solve(L.cho_factor(a @ a.T + 3 * jnp.eye(3)), b),
                      (a, b)),
        "lu_solve": (lambda a, b: L.lu_solve(L.lu_factor(a), b), (a, b)),
        "lu_solve_trans": (lambda a, b: L.lu_solve(L.lu_factor(a), b, trans=1), (a, b)),
        "solve": (L.solve, (a, b)),
        "solve_pos": (lambda a, b: L.solve((a + a.T) / 2, b, assume_a="pos"), (spd, b)),
        "inv": (L.inv, (a,)),
        "det": (L.det, (a,)),
        "expm": (L.expm, (a * 0.5,)),
        "expm_squarings": (L.expm, (a * 3,)),
        "eigh_vals": (lambda a: L.eigh(a + a.T, eigvals_only=True), (a,)),
        "eigh_vecs": (lambda a: L.eigh(a + a.T)[1] ** 2, (a,)),
        "block_diag": (lambda a, b: L.block_diag(a, b), (a, b)),
    }


@pytest.mark.parametrize("name", sorted(_grad_cases()))
def test_grads(name):
    with _x64():
        f, args = _grad_cases()[name]
        check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["cholesky", "polar", "sylvester", "toeplitz", "lu"])
def test_grads_more(name):
    a, b = A4[:3, :3], B42[:3]
    f, args = {
        "cholesky": (lambda a: L.cholesky(a @ a.T + 3 * jnp.eye(3)), (a,)),
        "polar": (lambda a: L.polar(a, method="svd")[1], (a,)),
        "sylvester": (lambda a, c: L.solve_sylvester(a + 5 * jnp.eye(3),
                                                    a.T + 4 * jnp.eye(3), c), (a, b @ b.T)),
        "toeplitz": (L.toeplitz, (b[:, 0], b[:, 1])),
        "lu": (lambda a: L.lu(a)[1:], (a,)),
    }[name]
    with _x64():
        check_grads(f, args, order=1, modes=("fwd", "rev"))


def test_solve_pos_gradient_is_full_matrix():
    """As JAX's custom_linear_solve: d/da of a^{-1} b is the full -(a^-T g) x^T."""
    with _x64():
        spd, b = SPD4, B42[:, 0]
        g = jaxlite.grad(lambda a: L.solve(a, b, assume_a="pos").sum())(spd)
        x = np.linalg.solve(spd, b)
        _close(g, -np.outer(np.linalg.solve(spd.T, np.ones(4)), x), 1e-10)


# ----------------------------------------------------------------------------- jit / vmap
_JIT_CASES = {
    "solve_triangular": lambda a, b: L.solve_triangular(a, b, lower=True),
    "cho_solve": lambda a, b: L.cho_solve(L.cho_factor(a @ a.T + 4 * jnp.eye(4)), b),
    "lu_solve": lambda a, b: L.lu_solve(L.lu_factor(a), b),
    "solve_pos": lambda a, b: L.solve(a @ a.T + 4 * jnp.eye(4), b, assume_a="pos"),
    "expm": lambda a, b: L.expm(a),
    "lu": lambda a, b: L.lu(a),
    "qr": lambda a, b: L.qr(a, mode="economic"),
    "eigh": lambda a, b: L.eigh(a + a.T, eigvals_only=True),
    "sqrtm": lambda a, b: L.sqrtm(a @ a.T + jnp.eye(4)),
    "polar": lambda a, b: L.polar(a),
    "funm": lambda a, b: L.funm(a, jnp.sin),
    "toeplitz": lambda a, b: L.toeplitz(b[:, 0], a[0]),
    "det_inv": lambda a, b: (L.det(a), L.inv(a)),
}


@pytest.mark.parametrize("name", sorted(_JIT_CASES))
def test_jit_matches_eager(name):
    f = _JIT_CASES[name]
    a, b = A4.astype(np.float32) + 3 * np.eye(4, dtype=np.float32), B42.astype(np.float32)
    _close(jaxlite.jit(f)(a, b), f(a, b), 1e-4)


_VMAP_CASES = {
    "solve_triangular": lambda a, b: L.solve_triangular(a, b, lower=True),
    "cho_solve": lambda a, b: L.cho_solve(L.cho_factor(a @ a.T + 4 * jnp.eye(4)), b),
    "lu_solve": lambda a, b: L.lu_solve(L.lu_factor(a), b),
    "solve_pos": lambda a, b: L.solve(a @ a.T + 4 * jnp.eye(4), b, assume_a="pos"),
    "expm": lambda a, b: L.expm(a * 0.3),
    "schur_eigs": lambda a, b: jnp.sort(_diag(L.schur(a, output="complex")[0]).real),
    "block_diag": lambda a, b: L.block_diag(a, b),
    "toeplitz": lambda a, b: L.toeplitz(b[:, 0], a[0]),
}


def _diag(x):
    return jnp.diagonal(x)


@pytest.mark.parametrize("name", sorted(_VMAP_CASES))
def test_vmap_matches_loop(name):
    f = _VMAP_CASES[name]
    a = (RNG.randn(3, 4, 4) + 3 * np.eye(4)).astype(np.float32)
    b = RNG.randn(3, 4, 2).astype(np.float32)
    got = jaxlite.vmap(f)(a, b)
    want = [f(a[i], b[i]) for i in range(3)]
    want = jaxlite.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]),
                                      *want)
    _close(got, want, 1e-4)


def test_batched_inputs():
    a = (RNG.randn(2, 4, 4) + 3 * np.eye(4)).astype(np.float32)
    b = RNG.randn(2, 4, 3).astype(np.float32)
    _close(L.lu_solve(L.lu_factor(a), b), np.linalg.solve(a, b), 1e-4)
    _close(L.expm(a * 0.2), np.stack([sl.expm(x * 0.2) for x in a]), 1e-3)
    _close(L.solve_triangular(np.triu(a), b), np.linalg.solve(np.triu(a), b), 1e-4)
    _close(L.polar(a, method="svd")[0], np.stack([sl.polar(x)[0] for x in a]), 1e-4)


# ----------------------------------------------------------------------------- vs JAX
def _jax():
    jax = pytest.importorskip("jax")
    import jax.scipy.linalg as jsl
    return jax, jsl


_VS_JAX = {
    "solve_triangular": (lambda m, a, b: m.solve_triangular(a, b, lower=True), "ab"),
    "cholesky": (lambda m, a, b: m.cholesky(a @ a.T + 4 * np.eye(4, dtype=a.dtype)), "ab"),
    "cho_solve": (lambda m, a, b: m.cho_solve(m.cho_factor(
        a @ a.T + 4 * np.eye(4, dtype=a.dtype), lower=True), b), "ab"),
    "lu": (lambda m, a, b: m.lu(a), "ab"),
    "lu_factor": (lambda m, a, b: m.lu_factor(a), "ab"),
    "lu_solve": (lambda m, a, b: m.lu_solve(m.lu_factor(a), b, trans=2), "ab"),
    "qr": (lambda m, a, b: m.qr(a, mode="economic"), "ab"),
    "qr_piv": (lambda m, a, b: m.qr(a, pivoting=True), "ab"),
    "solve": (lambda m, a, b: m.solve(a, b), "ab"),
    "solve_pos": (lambda m, a, b: m.solve(a @ a.T + 4 * np.eye(4, dtype=a.dtype), b,
                                          assume_a="pos"), "ab"),
    "inv": (lambda m, a, b: m.inv(a), "ab"),
    "det": (lambda m, a, b: m.det(a), "ab"),
    "eigh_vals": (lambda m, a, b: m.eigh(a + a.T, eigvals_only=True), "ab"),
    "svd_vals": (lambda m, a, b: m.svd(a, compute_uv=False), "ab"),
    "expm": (lambda m, a, b: m.expm(a), "ab"),
    "expm_frechet": (lambda m, a, b: m.expm_frechet(a * 0.5, a.T), "ab"),
    "sqrtm": (lambda m, a, b: m.sqrtm(a @ a.T + np.eye(4, dtype=a.dtype)), "ab"),
    "polar": (lambda m, a, b: m.polar(a), "ab"),
    "funm": (lambda m, a, b: m.funm(a, lambda x: x * x), "ab"),
    "schur_c": (lambda m, a, b: m.schur(a, output="complex")[0].diagonal(), "ab"),
    "hessenberg_h": (lambda m, a, b: abs(m.hessenberg(a)), "ab"),
    "sylvester": (lambda m, a, b: m.solve_sylvester(a + 5 * np.eye(4, dtype=a.dtype),
                                                    a.T + 5 * np.eye(4, dtype=a.dtype),
                                                    a), "ab"),
    "block_diag": (lambda m, a, b: m.block_diag(a, b, 3), "ab"),
    "toeplitz": (lambda m, a, b: m.toeplitz(b[:, 0], a[0]), "ab"),
    "hankel": (lambda m, a, b: m.hankel(b[:, 0], a[0]), "ab"),
    "circulant": (lambda m, a, b: m.circulant(a), "ab"),
    "companion": (lambda m, a, b: m.companion(a[0]), "ab"),
    "fiedler_companion": (lambda m, a, b: m.fiedler_companion(a[0]), "ab"),
    "convolution_matrix": (lambda m, a, b: m.convolution_matrix(a[0], 3, "same"), "ab"),
    "leslie": (lambda m, a, b: m.leslie(a[0], a[1, :3]), "ab"),
    "helmert": (lambda m, a, b: m.helmert(4, full=True), "ab"),
    "hilbert": (lambda m, a, b: m.hilbert(4), "ab"),
    "invhilbert": (lambda m, a, b: m.invhilbert(4), "ab"),
    "pascal": (lambda m, a, b: m.pascal(4), "ab"),
    "invpascal": (lambda m, a, b: m.invpascal(4, "lower"), "ab"),
    "hadamard": (lambda m, a, b: m.hadamard(4), "ab"),
    "dft": (lambda m, a, b: m.dft(4, "n"), "ab"),
}


@pytest.mark.parametrize("name", sorted(_VS_JAX))
def test_vs_jax(name):
    jax, jsl = _jax()
    f, _ = _VS_JAX[name]
    a = (A4 + 2 * np.eye(4)).astype(np.float32)
    b = B42.astype(np.float32)
    got = f(L, a, b)
    want = f(jsl, a, b)
    gl = jaxlite.tree_util.tree_leaves(got)
    wl = jax.tree_util.tree_leaves(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        assert np.asarray(g).dtype == np.asarray(w).dtype, name
        assert np.shape(g) == np.shape(w), name
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-3)


def test_grads_vs_jax():
    jax, jsl = _jax()
    a, b = (A4 + 2 * np.eye(4)).astype(np.float32), B42.astype(np.float32)
    fs = [lambda m, a: m.expm(a * 0.3).sum(),
          lambda m, a: m.solve(a @ a.T, b, assume_a="pos").sum(),
          lambda m, a: m.lu_solve(m.lu_factor(a), b).sum(),
          lambda m, a: m.det(a),
          lambda m, a: (m.eigh(a + a.T)[1] ** 2).sum()]
    for f in fs:
        g = jaxlite.grad(lambda x: f(L, x))(a)
        w = jax.grad(lambda x: f(jsl, x))(a)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-3)


def test_solves_of_empty_systems_under_jit():
    """A 0x0 system (diffrax's implicit solvers on an empty state) solves to an empty
    result, eagerly and under jit, as in JAX and SciPy (a size-0 reshape cannot infer -1)."""
    a, b = jnp.zeros((0, 0)), jnp.zeros((0, 2))
    cases = [(lambda a, b: L.lu_solve(L.lu_factor(a), b), (0, 2)),
             (lambda a, b: jnp.linalg.solve(a, b), (0, 2)),
             (lambda a, b: L.solve_triangular(a, b, lower=True), (0, 2)),
             (lambda a, b: L.cho_solve((a, True), b), (0, 2)),
             (lambda a, b: jnp.linalg.solve(a, b[:, 0]), (0,))]
    for f, shape in cases:
        for g in (f, jaxlite.jit(f)):
            out = g(a, b)
            assert out.shape == shape and out.dtype == np.float32
    assert sl.lu_solve(sl.lu_factor(np.zeros((0, 0))), np.zeros((0, 2))).shape == (0, 2)
