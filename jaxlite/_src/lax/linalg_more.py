"""More of ``jax.lax.linalg``: householder_product, tridiagonal, symmetric_product,
cholesky_update (primitives in prims/linalg_more.py) and qdwh, the polar decomposition by
the QR-based dynamically weighted Halley iteration (Nakatsukasa, Bai & Gygi, SIAM J. Matrix
Anal. Appl. 31(5), 2010), written with lax operations so it runs under jit and vmap."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.lax.control_flow import while_loop
from jaxlite._src.lax.dot import dot_general
from jaxlite._src.lax.elementwise import (abs, add, bitwise_and, bitwise_not, conj,
                                          convert_element_type, div, eq, gt, lt, mul, select,
                                          sqrt, sub)
from jaxlite._src.lax.reductions import reduce_max, reduce_sum
from jaxlite._src.lax.shape import broadcast_in_dim, concatenate, slice as lax_slice, transpose
from jaxlite._src.prims.linalg import cholesky, qr, triangular_solve
from jaxlite._src.prims.linalg_more import (cholesky_update_p, householder_product_p,
                                            symmetric_product_p, tridiagonal_p)
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.prims.precision import Precision

__all__ = ["householder_product", "householder_product_p", "tridiagonal", "tridiagonal_p",
           "symmetric_product", "symmetric_product_p", "cholesky_update",
           "cholesky_update_p", "qdwh"]


def householder_product(a, taus):
    """The product of the Householder reflectors stored below the diagonal of ``a``
    ``[..., m, n]`` with scales ``taus`` ``[..., k]``: the first ``n`` columns of
    ``H_1 H_2 ... H_k`` (LAPACK's orgqr / ungqr)."""
    return householder_product_p.bind(asarray_value(a), asarray_value(taus))


def tridiagonal(a, *, lower=True):
    """Reduce the symmetric (Hermitian) matrices ``a`` to tridiagonal form: returns
    ``(arr, d, e, taus)`` as LAPACK's sytrd/hetrd (``arr`` holds the Householder reflectors
    on the ``lower`` (or upper) side, ``d``/``e`` the diagonal and off-diagonal, ``taus``
    the reflector scales)."""
    return tuple(tridiagonal_p.bind(asarray_value(a), lower=bool(lower)))


def _tril(x, k=0):
    n, m = x.shape[-2:]
    mask = np.tril(np.ones((n, m), bool), k)
    zero = broadcast_in_dim(np.zeros((), x.dtype), x.shape, ())
    return select(broadcast_in_dim(mask, x.shape, (x.ndim - 2, x.ndim - 1)), x, zero)


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """``alpha * a @ a^T + beta * c`` (BLAS syrk); with ``symmetrize_output`` the result's
    upper triangle is made the mirror of its lower triangle."""
    out = symmetric_product_p.bind(asarray_value(a_matrix), asarray_value(c_matrix),
                                   alpha=float(alpha), beta=float(beta))
    if symmetrize_output:
        perm = tuple(range(out.ndim - 2)) + (out.ndim - 1, out.ndim - 2)
        out = add(_tril(out, 0), transpose(_tril(out, -1), perm))
    return out


def cholesky_update(r_matrix, w_vector):
    """Given the upper Cholesky factor ``R`` of ``A = R^T R`` and a vector ``w``, the upper
    Cholesky factor of ``A + w w^T`` (a rank-one update, O(n^2))."""
    return cholesky_update_p.bind(asarray_value(r_matrix), asarray_value(w_vector))


# ----------------------------------------------------------------------------- QDWH

def _mm(a, b):
    return dot_general(a, b, (((1,), (0,)), ((), ())), Precision.HIGHEST, a.dtype)


def _ct(x):
    t = transpose(x, (1, 0))
    return conj(t) if dtypes.issubdtype(x.dtype, np.complexfloating) else t


def _fro(x):
    a = abs(x)
    return sqrt(reduce_sum(mul(a, a), (0, 1)))


def _scalar(v, dt):
    return np.asarray(v, dt)


def _halley_weights(l):
    """The dynamically weighted Halley coefficients (a, b, c) for the lower bound ``l`` of
    the scaled matrix's singular values, and the next bound (the paper's eq. 3.3-3.4)."""
    l2 = l * l
    d = (4.0 * (1.0 - l2) / (l2 * l2)) ** (1.0 / 3.0)
    a = (1.0 + d) ** 0.5 + 0.5 * (8.0 - 4.0 * d + 8.0 * (2.0 - l2) / (l2 * (1.0 + d) ** 0.5)
                                  ) ** 0.5
    b = (a - 1.0) ** 2 / 4.0
    c = a + b - 1.0
    return a, b, c, l * (a + b * l2) / (1.0 + c * l2)


def _qr_step(u, a, b, c, eye):
    """X <- (b/c) X + (a - b/c)/sqrt(c) Q1 Q2^H, [sqrt(c) X; I] = [Q1; Q2] R."""
    dt = u.dtype
    m = u.shape[0]
    sc = float(np.sqrt(c))
    stacked = concatenate([mul(u, _scalar(sc, dt)), eye], 0)
    q, _ = qr(stacked, full_matrices=False)
    n = u.shape[1]
    q1 = lax_slice(q, (0, 0), (m, n))
    q2 = lax_slice(q, (m, 0), (m + n, n))
    return add(mul(u, _scalar(b / c, dt)),
                  mul(_mm(q1, _ct(q2)), _scalar((a - b / c) / sc, dt)))


def _chol_step(u, a, b, c, eye):
    """X <- (b/c) X + (a - b/c) X (I + c X^H X)^-1, by a Cholesky factorisation."""
    dt = u.dtype
    z = add(mul(_mm(_ct(u), u), _scalar(c, dt)), eye)
    low = cholesky(z, symmetrize_input=False)
    # solve W (L L^H) = U  <=>  (L L^H) W^H = U^H
    y = triangular_solve(low, _ct(u), left_side=True, lower=True)
    w = triangular_solve(low, y, left_side=True, lower=True, transpose_a=True,
                         conjugate_a=True)
    return add(mul(u, _scalar(b / c, dt)),
                  mul(_ct(w), _scalar(a - b / c, dt)))


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """Polar decomposition ``x = u @ h`` of a full-rank ``[m, n]`` matrix (m >= n) by the
    QR-based dynamically weighted Halley iteration: returns ``(u, h, num_iters,
    is_converged)`` (``u`` with orthonormal columns, ``h`` Hermitian positive semidefinite).
    ``max_iterations`` defaults to 10; ``eps`` to the dtype's epsilon; ``is_hermitian`` is
    accepted and unused, as in JAX."""
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape (padded inputs) is not supported in "
                                  "jaxlite; pass the unpadded matrix.")
    x = asarray_value(x)
    if x.ndim != 2:
        raise ValueError(f"qdwh expects a matrix, got shape {x.shape}")
    m, n = x.shape
    if m < n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if not dtypes.issubdtype(x.dtype, np.inexact):
        raise TypeError(f"qdwh requires a floating point or complex matrix, got {x.dtype}")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    dt = x.dtype
    eps = float(np.finfo(dt).eps) if eps is None else float(eps)
    eye = np.eye(n, dtype=dt)
    # scale so that ||u||_2 <= 1: 1 / sqrt(||x||_1 ||x||_inf) (a bound of the 2-norm)
    ax = abs(x)
    one = reduce_max(reduce_sum(ax, (0,)), (0,))
    inf = reduce_max(reduce_sum(ax, (1,)), (0,))
    norm = sqrt(mul(one, inf))
    rdt = norm.dtype
    scale = select(eq(norm, np.zeros((), rdt)), np.ones((), rdt), norm)
    u = div(x, convert_element_type(scale, dt))
    # the weights depend only on the bound l (from eps): a static schedule
    l, tol_l = eps, 5.0 * eps
    tol = (tol_l) ** (1.0 / 3.0)
    steps = []
    while l + tol_l < 1.0 and len(steps) < max_iterations:
        a, b, c, l = _halley_weights(l)
        steps.append((a, b, c))
    not_conv = np.asarray(True)
    for a, b, c in steps:
        prev = u
        u = _qr_step(u, a, b, c, eye) if c > 100.0 else _chol_step(u, a, b, c, eye)
        if c <= 100.0:
            not_conv = gt(_fro(sub(u, prev)), _scalar(tol, np.finfo(dt).dtype))

    def cond(state):
        k, _, nc = state
        return bitwise_and(nc, lt(k, np.int32(max_iterations)))

    def body(state):
        k, v, _ = state
        nv = _chol_step(v, 3.0, 1.0, 3.0, eye)   # plain Halley once the weights reach it
        return (add(k, np.int32(1)), nv,
                gt(_fro(sub(nv, v)), _scalar(tol, np.finfo(dt).dtype)))

    k, u, not_conv = while_loop(cond, body, (np.int32(len(steps)), u,
                                             convert_element_type(not_conv, np.bool_)))
    # one Newton-Schulz step polishes the orthogonality
    u = sub(mul(u, _scalar(1.5, dt)),
               mul(_mm(u, _mm(_ct(u), u)), _scalar(0.5, dt)))
    h = _mm(_ct(u), x)
    h = mul(add(h, _ct(h)), _scalar(0.5, dt))
    return u, h, k, bitwise_not(not_conv)
