"""jax.scipy.linalg matrix functions: expm (and its Frechet derivative), sqrtm, funm,
polar, rsf2csf and solve_sylvester, written with jnp/lax on top of the factorizations in
``linalg.py`` (so expm, polar and solve_sylvester differentiate by tracing; those built on
the Schur form do not, as in JAX)."""
from __future__ import annotations

from functools import partial

import numpy as np

from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.numpy.util import promote_dtypes_inexact
from jaxlite._src.prims import linalg as L
from jaxlite._src.scipy.linalg import _H, _bmul, _diag_matrix, _diag_of, _mm, _triu, schur

__all__ = ["expm", "expm_frechet", "funm", "polar", "rsf2csf", "solve_sylvester", "sqrtm"]


def _polar_2d(a, side, method):
    m, n = a.shape
    if method == "qdwh":
        if not ((m >= n and side == "right") or (m < n and side == "left")):
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' "
                f"and m >= n side='left', got {a.shape} with side={side!r}")
    elif method != "svd":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    u, s, vh = L.svd(a, full_matrices=False)
    s = s.astype(u.dtype)
    unitary = _mm(u, vh)
    if side == "right":
        posdef = _mm(_bmul(_H(vh), s[None, :]), vh)
    else:
        posdef = _mm(_bmul(u, s[None, :]), _H(u))
    return unitary, posdef


@partial(jit, static_argnames=("side", "method", "eps", "max_iterations"))
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """Polar decomposition ``a = u @ p`` (``side='right'``) or ``p @ u`` ('left') with
    ``u`` unitary and ``p`` Hermitian positive semi-definite. jaxlite computes it from the
    SVD for both methods (JAX's default 'qdwh' iterates; results agree to rounding)."""
    del eps, max_iterations
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    (arr,) = promote_dtypes_inexact(arr)
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return jnp.vectorize(partial(_polar_2d, side=side, method=method), signature=sig)(arr)


def _sqrtm_triu(t):
    """Square root of an upper-triangular matrix, one superdiagonal at a time: with the
    diagonals below offset p known, ``(u @ u)[i, i+p]`` is exactly the sum the recurrence
    needs."""
    n = t.shape[-1]
    d = jnp.sqrt(_diag_of(t))
    u = _diag_matrix(d)
    denom = d[:, None] + d[None, :]
    rows = lax.broadcasted_iota(np.int32, (n, n), 0)
    cols = lax.broadcasted_iota(np.int32, (n, n), 1)
    def body(p, u):
        s = _mm(u, u)
        val = jnp.where(t == s, jnp.zeros((), t.dtype), (t - s) / denom)
        return jnp.where(cols - rows == p, val, u)
    return lax.fori_loop(1, n, body, u) if n > 1 else u


@jit
def _sqrtm(a):
    t, z = schur(a, output="complex")
    return _mm(_mm(z, _sqrtm_triu(t)), _H(z))


def sqrtm(A, blocksize=1):
    """Principal square root of the square matrix ``A`` (complex result), through the
    complex Schur form."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"sqrtm expects a square 2-D matrix, got shape {a.shape}.")
    return _sqrtm(a)


def _rsf2csf_2d(t, z):
    dt = L._complex_dtype(jnp.result_type(t, z))
    t, z = t.astype(dt), z.astype(dt)
    eps = float(dtypes.finfo(dt).eps)
    n = t.shape[0]
    if n == 1:
        return t, z

    def update(m, t, z):
        blk = t[m - 1:m + 1, m - 1:m + 1]
        mu = jnp.linalg.eigvals(blk) - t[m, m]
        r = jnp.sqrt(jnp.abs(mu[0]) ** 2 + jnp.abs(t[m, m - 1]) ** 2).astype(dt)
        c, s = mu[0] / r, t[m, m - 1] / r
        g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        t = t.at[m - 1:m + 1, m - 1:].set(_mm(g, t[m - 1:m + 1, m - 1:]))
        t = t.at[:m + 1, m - 1:m + 1].set(_mm(t[:m + 1, m - 1:m + 1], _H(g)))
        z = z.at[:, m - 1:m + 1].set(_mm(z[:, m - 1:m + 1], _H(g)))
        return t, z

    for m in range(n - 1, 0, -1):
        big = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(big, partial(update, m), lambda t, z: (t, z), t, z)
        t = t.at[m, m - 1].set(0)
    return t, z


@partial(jit, static_argnames=("check_finite",))
def rsf2csf(T, Z, check_finite=True):
    """Convert a real Schur form ``(T, Z)`` into the complex Schur form (triangular
    ``T``) with Givens rotations that split each 2x2 block."""
    del check_finite
    t, z = jnp.asarray(T), jnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def funm(A, func, disp=True):
    """``func`` applied to the square matrix ``A`` (complex result) through the Schur form
    and Parlett's recurrence (Golub & Van Loan, algorithm 11.1.1). ``func`` maps an array
    of eigenvalues elementwise. With ``disp=False`` also returns an error estimate."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    n = t.shape[0]
    f = _diag_matrix(jnp.asarray(func(_diag_of(t))).astype(t.dtype))
    diag = _diag_of(t)
    den = diag[None, :] - diag[:, None]
    rows = lax.broadcasted_iota(np.int32, (n, n), 0)
    cols = lax.broadcasted_iota(np.int32, (n, n), 1)
    def body(p, f):
        # with f known below offset p, (t f - f t)[i, i+p] is the recurrence's numerator
        s = _mm(t, f) - _mm(f, t)
        val = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
        return jnp.where(cols - rows == p, val, f)
    if n > 1:
        f = lax.fori_loop(1, n, body, f)
    minden = jnp.min(jnp.where(cols > rows, jnp.abs(den), jnp.abs(t[0, 0])))
    f = _mm(_mm(z, f), _H(z))
    if disp:
        return f
    tol = float(np.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf, jnp.minimum(1, jnp.maximum(
        tol, (tol / minden) * jnp.linalg.norm(_triu(t, 1), 1))))
    return f, err


def _sylvester_2d(a, b, c, *, tol):
    m, n = c.shape
    dt = c.dtype
    # row-major vec: vec(a x) = kron(a, I_n) vec(x), vec(x b) = kron(I_m, b^T) vec(x)
    eye_m, eye_n = jnp.eye(m, dtype=dt), jnp.eye(n, dtype=dt)
    k = (_bmul(a[:, None, :, None], eye_n[None, :, None, :])
         + _bmul(eye_m[:, None, :, None], b.T[None, :, None, :])).reshape(m * n, m * n)
    x = jnp.linalg.solve(k, c.reshape(m * n)).reshape(m, n)
    ea, eb = jnp.linalg.eigvals(lax.stop_gradient(a)), jnp.linalg.eigvals(lax.stop_gradient(b))
    bad = jnp.any(jnp.abs(ea[:, None] + eb[None, :]) < tol)
    return jnp.where(bad, jnp.full_like(x, np.nan), x)


@partial(jit, static_argnames=("method",))
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """Solve the Sylvester equation ``A X + X B = C``. Returns NaNs when some eigenvalue
    sum ``eig(A)_i + eig(B)_j`` is below ``tol`` in magnitude (no unique solution).
    jaxlite solves the Kronecker-product system directly (differentiable; fine for the
    small matrices this is used on) for both methods."""
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         '"schur" or "eigen".')
    A, B, C = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\n"
                         f"B: {B.shape}\nC: {C.shape}")
    return jnp.vectorize(partial(_sylvester_2d, tol=tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)


# ----------------------------------------------------------------------------- expm
# Pade approximants [m/m] of exp as (U, V) with exp(A) ~ (V - U)^-1 (V + U) (Higham 2005).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}


def _pade(m):
    b = _PADE[m]

    def approx(a):
        ident = jnp.eye(*a.shape, dtype=a.dtype)
        a2 = _mm(a, a)
        if m == 13:
            a4 = _mm(a2, a2)
            a6 = _mm(a4, a2)
            u = _mm(a, _mm(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                    + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
            v = (_mm(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
                 + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident)
            return u, v
        powers = [ident, a2]
        for _ in range(m // 2 - 1):
            powers.append(_mm(powers[-1], a2))
        top = len(powers) - 1      # summed highest power first, as JAX
        u_in = b[2 * top + 1] * powers[top]
        v = b[2 * top] * powers[top]
        for i in range(top - 1, -1, -1):
            u_in = u_in + b[2 * i + 1] * powers[i]
            v = v + b[2 * i] * powers[i]
        return _mm(a, u_in), v
    return approx


def _calc_p_q(a):
    a_l1 = jnp.linalg.norm(a, 1)
    if a.dtype in (np.float64, np.complex128):
        maxnorm, orders = 5.371920351148152, (3, 5, 7, 9, 13)
        conds = (0.01495585217958292, 0.253939833006323, 0.9504178996162932,
                 2.097847961257068)
    elif a.dtype in (np.float32, np.complex64):
        maxnorm, orders = 3.92572478313866, (3, 5, 7)
        conds = (0.4258730016922831, 1.880152677804762)
    else:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(a_l1 / maxnorm)))
    a = a / (2 ** n_squarings.astype(a.dtype))
    idx = jnp.digitize(a_l1, jnp.array(conds, dtype=a_l1.dtype))
    u, v = lax.switch(idx, [_pade(m) for m in orders], a)
    return u + v, -u + v, n_squarings


def _expm_2d(a, upper_triangular, max_squarings):
    p, q, n_squarings = _calc_p_q(a)

    def compute(args):
        _, p, q = args
        if upper_triangular:
            r = L.triangular_solve(q, p, left_side=True, lower=False)
        else:
            r = jnp.linalg.solve(q, p)

        def step(c, i):
            return lax.cond(i < n_squarings, lambda x: _mm(x, x), lambda x: x, c), None
        r, _ = lax.scan(step, r, jnp.arange(max_squarings, dtype=n_squarings.dtype))
        return r
    return lax.cond(n_squarings > max_squarings, lambda args: jnp.full_like(args[0], np.nan),
                    compute, (a, p, q))


@partial(jit, static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular=False, max_squarings=16):
    """Matrix exponential by scaling and squaring with a Pade approximant whose order is
    picked from the 1-norm (Higham 2005, as JAX and SciPy). Differentiable by tracing; NaNs
    when more than ``max_squarings`` squarings would be needed."""
    (A,) = promote_dtypes_inexact(jnp.asarray(A))
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape}.")
    return jnp.vectorize(partial(_expm_2d, upper_triangular=upper_triangular,
                                 max_squarings=max_squarings), signature="(n,n)->(n,n)")(A)


@partial(jit, static_argnames=("method", "compute_expm"))
def expm_frechet(A, E, *, method=None, compute_expm=True):
    """Frechet derivative of the matrix exponential at ``A`` in direction ``E`` (the JVP
    of :func:`expm`): ``(expm(A), L(A, E))``, or only ``L(A, E)`` without
    ``compute_expm``."""
    del method
    from jaxlite._src.api.ad import jvp
    a, e = jnp.asarray(A), jnp.asarray(E)
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a.shape} "
                         f"E.shape={e.shape}")
    ea, lae = jvp(partial(expm, upper_triangular=False, max_squarings=16), (a,), (e,))
    return (ea, lae) if compute_expm else lae
