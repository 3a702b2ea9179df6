"""More ``jax.lax.linalg`` primitives: ``householder_product`` (LAPACK orgqr/ungqr),
``tridiagonal`` (sytrd/hetrd), ``symmetric_product`` (syrk) and ``cholesky_update``.

Their values are LAPACK's (through ``scipy.linalg.lapack``) on stacks of matrices. As in JAX
they have no derivative rules (differentiating raises NotImplementedError); the batching
rule is the linalg family's (leading dimensions are a batch).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.prims.linalg import _check_matrix, _compute_dtype, _each, _LinalgPrimitive

__all__ = ["householder_product_p", "tridiagonal_p", "symmetric_product_p",
           "cholesky_update_p"]


def _lapack(name, dt):
    """SciPy's LAPACK routine ``name`` for dtype ``dt`` (the complex counterpart of the
    real orthogonal-matrix routines: ungqr for orgqr, unmqr for ormqr)."""
    from scipy.linalg import lapack
    prefix = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
              np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}[np.dtype(dt)]
    if prefix in "cz":
        name = {"orgqr": "ungqr", "ormqr": "unmqr"}.get(name, name)
    return getattr(lapack, prefix + name)


def _no_jvp(name):
    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")
    return jvp


class HouseholderProduct(_LinalgPrimitive):
    """``Q = H_1 ... H_k`` (first n columns) from the Householder reflectors below the
    diagonal of ``a`` [..., m, n] and their scales ``taus`` [..., k], as LAPACK's orgqr."""
    name = "householder_product"
    jvp = _no_jvp("householder_product")

    def impl(self, a, taus):
        cd = _compute_dtype(a.dtype)
        kind = "ungqr" if np.dtype(cd).kind == "c" else "orgqr"
        m, n = a.shape[-2:]
        if a.size == 0:
            return np.zeros(a.shape, a.dtype)
        flat_a = a.reshape((-1, m, n)).astype(cd)
        flat_t = taus.reshape((-1, taus.shape[-1])).astype(cd)
        fn = _lapack(kind, cd)
        outs = []
        for mat, tau in zip(flat_a, flat_t):
            q, _, info = fn(mat, tau, lwork=max(1, n) * 64)
            outs.append(q if info == 0 else np.full((m, n), np.nan, cd))
        return np.stack(outs).reshape(a.shape).astype(a.dtype)

    def abstract_eval(self, a, taus):
        _check_matrix("householder_product", a)
        m, n = a.shape[-2:]
        if m < n:
            raise ValueError("The first argument to householder_product must have at least "
                             f"as many rows as columns, got shape {a.shape}")
        if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2] or \
                taus.shape[-1] > min(m, n):
            raise ValueError("The second argument to householder_product must have shape "
                             f"[..., k] with k <= min(m, n) = {min(m, n)} and the batch "
                             f"dimensions of the first, got {taus.shape} for {a.shape}")
        if taus.dtype != a.dtype:
            raise TypeError("householder_product requires both arguments to have the same "
                            f"dtype, got {a.dtype.name} and {taus.dtype.name}")
        return ShapedArray(a.shape, a.dtype)


class Tridiagonal(_LinalgPrimitive):
    """Reduction of a symmetric / Hermitian matrix to tridiagonal form ``Q^H a Q = T``
    (LAPACK sytrd/hetrd): outputs ``(arr, d, e, taus)``, ``arr`` holding the reflectors
    below (``lower``) or above the off-diagonal, ``d`` the diagonal, ``e`` the off-diagonal
    and ``taus`` the reflector scales (``householder_product`` rebuilds ``Q``)."""
    name = "tridiagonal"
    multiple_results = True
    jvp = _no_jvp("tridiagonal")

    def impl(self, a, lower=True):
        cd = _compute_dtype(a.dtype)
        n = a.shape[-1]
        real = np.finfo(cd).dtype
        fn = _lapack("hetrd" if np.dtype(cd).kind == "c" else "sytrd", cd)

        def one(m):
            c, d, e, tau, info = fn(m.astype(cd), lower=int(bool(lower)))
            if info != 0:
                return (np.full((n, n), np.nan, cd), np.full(n, np.nan, real),
                        np.full(max(n - 1, 0), np.nan, real),
                        np.full(max(n - 1, 0), np.nan, cd))
            return c, d, e, tau
        if a.size == 0:
            b = a.shape[:-2]
            return [a.copy(), np.zeros(b + (n,), real), np.zeros(b + (max(n - 1, 0),), real),
                    np.zeros(b + (max(n - 1, 0),), a.dtype)]
        arr, d, e, tau = _each(a, one)
        rdt = np.finfo(a.dtype).dtype if np.dtype(a.dtype).kind in "fc" else a.dtype
        return [arr.astype(a.dtype), d.astype(rdt), e.astype(rdt), tau.astype(a.dtype)]

    def abstract_eval(self, a, lower=True):
        _check_matrix("tridiagonal", a, square=True)
        n = a.shape[-1]
        b = a.shape[:-2]
        real = np.finfo(a.dtype).dtype
        return [ShapedArray(a.shape, a.dtype), ShapedArray(b + (n,), real),
                ShapedArray(b + (max(n - 1, 0),), real),
                ShapedArray(b + (max(n - 1, 0),), a.dtype)]


class SymmetricProduct(_LinalgPrimitive):
    """``alpha * a @ a^T + beta * c`` (BLAS syrk)."""
    name = "symmetric_product"
    jvp = _no_jvp("symmetric_product")

    def impl(self, a, c, alpha=1.0, beta=0.0):
        cd = _compute_dtype(a.dtype)
        a64 = a.astype(cd)
        prod = np.matmul(a64, np.swapaxes(a64, -1, -2))
        return (np.asarray(alpha, cd) * prod + np.asarray(beta, cd) * c.astype(cd)) \
            .astype(a.dtype)

    def abstract_eval(self, a, c, alpha=1.0, beta=0.0):
        _check_matrix("symmetric_product", a)
        m = a.shape[-2]
        if c.shape != a.shape[:-2] + (m, m):
            raise ValueError("symmetric_product: c_matrix must have shape "
                             f"{a.shape[:-2] + (m, m)} for a_matrix of shape {a.shape}, got "
                             f"{c.shape}")
        if c.dtype != a.dtype:
            raise TypeError("symmetric_product requires both arguments to have the same "
                            f"dtype, got {a.dtype.name} and {c.dtype.name}")
        return ShapedArray(c.shape, a.dtype)


class CholeskyUpdate(_LinalgPrimitive):
    """The upper Cholesky factor ``R'`` of ``R^T R + w w^T`` given the factor ``R`` of
    ``R^T R`` (a rank-one update by Givens rotations, O(n^2))."""
    name = "cholesky_update"
    jvp = _no_jvp("cholesky_update")

    def impl(self, r, w):
        cd = _compute_dtype(r.dtype)
        n = r.shape[-1]

        def one(args):
            rm, wv = args
            rm, wv = rm.astype(cd).copy(), wv.astype(cd).copy()
            for k in range(n):
                rkk = rm[k, k]
                rad = np.hypot(rkk, wv[k])
                c, s = rad / rkk, wv[k] / rkk
                rm[k, k] = rad
                rm[k, k + 1:] = (rm[k, k + 1:] + s * wv[k + 1:]) / c
                wv[k + 1:] = c * wv[k + 1:] - s * rm[k, k + 1:]
            return rm
        if r.size == 0:
            return r.copy()
        flat_r = r.reshape((-1, n, n))
        flat_w = w.reshape((-1, n))
        with np.errstate(all="ignore"):
            out = np.stack([one(p) for p in zip(flat_r, flat_w)])
        return out.reshape(r.shape).astype(r.dtype)

    def abstract_eval(self, r, w):
        _check_matrix("cholesky_update", r, square=True)
        if w.shape != r.shape[:-1]:
            raise ValueError("cholesky_update: w_vector must have shape "
                             f"{r.shape[:-1]} for r_matrix of shape {r.shape}, got {w.shape}")
        if w.dtype != r.dtype:
            raise TypeError("cholesky_update requires both arguments to have the same dtype, "
                            f"got {r.dtype.name} and {w.dtype.name}")
        return ShapedArray(r.shape, r.dtype)


householder_product_p = HouseholderProduct()
tridiagonal_p = Tridiagonal()
symmetric_product_p = SymmetricProduct()
cholesky_update_p = CholeskyUpdate()
