"""JVP and transpose rules of the linear-algebra primitives (JAX's formulas from
``jax/_src/lax/linalg.py``), written with primitives so they compose with jit, vmap and
higher-order differentiation. The primitive classes in ``linalg.py`` call these."""
from __future__ import annotations

import numpy as np

from jaxlite._src.prims import ad_util as u

__all__ = ["lu_jvp", "cholesky_jvp", "eigh_jvp", "eig_jvp", "svd_jvp", "qr_jvp",
           "triangular_solve_jvp", "triangular_solve_transpose"]


def _L():
    from jaxlite._src.prims import linalg as L
    return L


# ----------------------------------------------------------------------------- helpers
def _nd(x):
    return u.aval(x).ndim


def _shape(x):
    return tuple(u.aval(x).shape)


def _dtype(x):
    return u.aval(x).dtype


def _mm(a, b):
    """Batched matrix product over the leading dimensions."""
    from jaxlite._src.prims.dot import dot_general_p
    nd = _nd(a)
    bd = tuple(range(nd - 2))
    return dot_general_p.bind(a, b, dimension_numbers=(((nd - 1,), (nd - 2,)), (bd, bd)),
                              precision=None, preferred_element_type=_dtype(a),
                              out_sharding=None)


def _T(x):
    nd = _nd(x)
    return u.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _conj(x):
    return u.conj(x) if _dtype(x).kind == "c" else x


def _H(x):
    return _conj(_T(x))


def _real(x):
    return u.real(x) if _dtype(x).kind == "c" else x


def _tril(x, k=0):
    return _L()._tri_mask(x, True, k)


def _triu(x, k=0):
    return _L()._tri_mask(x, False, k)


def _eye(dtype, n, nd=2, m=None):
    """The identity (n x m) with unit leading dimensions up to rank ``nd``."""
    m = n if m is None else m
    e = u.convert_element_type(
        u.eq(u.broadcasted_iota(np.int32, (n, m), 0), u.broadcasted_iota(np.int32, (n, m), 1)),
        dtype)
    return u.reshape(e, (1,) * (nd - 2) + (n, m)) if nd > 2 else e


def _cast(x, dtype):
    return u.convert(x, dtype)


def _rows(x, axis=-1):
    """``x[..., None, :]`` (axis=-2 inserted) or ``x[..., :, None]``."""
    nd = _nd(x)
    return u.expand_dims(x, (nd - 1,) if axis == -2 else (nd,))


def _diag(x):
    """The diagonal of a (batched) square matrix."""
    n = _shape(x)[-1]
    from jaxlite._src.prims.reductions import reduce_sum_p
    return reduce_sum_p.bind(u.mul(x, _bcast(_eye(_dtype(x), n, _nd(x)), _shape(x))),
                             axes=(_nd(x) - 1,), out_sharding=None)


def _bcast(x, shape):
    """Broadcast ``x`` (same rank, size-1 dims) to ``shape``."""
    if _shape(x) == tuple(shape):
        return x
    return u.broadcast_in_dim(x, tuple(shape), tuple(range(len(shape))))


def _sl(x, rows=None, cols=None):
    """``x[..., r0:r1, c0:c1]``."""
    shp = _shape(x)
    r0, r1 = rows if rows is not None else (0, shp[-2])
    c0, c1 = cols if cols is not None else (0, shp[-1])
    nb = len(shp) - 2
    return u.slice(x, (0,) * nb + (r0, c0), shp[:-2] + (r1, c1))


def _pad2(x, rows=(0, 0), cols=(0, 0)):
    nb = _nd(x) - 2
    return u.pad(x, u.const(x, 0), ((0, 0, 0),) * nb + ((rows[0], rows[1], 0),
                                                        (cols[0], cols[1], 0)))


def _perm_matrix(perm, dtype):
    """P with ``(P @ x)[i] = x[perm[i]]`` for the (batched) int permutation ``perm``."""
    n = _shape(perm)[-1]
    nd = _nd(perm) + 1
    cols = u.broadcasted_iota(np.int32, _shape(perm) + (n,), nd - 1)
    p = _rows(u.convert_element_type(perm, np.int32), -1)
    return u.convert_element_type(u.eq(_bcast(p, _shape(cols)), cols), dtype)


def _tsolve(a, b, **kw):
    return _L().triangular_solve_p.bind(a, b, **{**dict(
        left_side=False, lower=False, transpose_a=False, conjugate_a=False,
        unit_diagonal=False), **kw})


def _solve(a, b):
    """``a^{-1} b`` for (batched) square ``a`` and matrix ``b`` via LU."""
    lu, _, perm = _L().lu_p.bind(a)
    x = _mm(_perm_matrix(perm, _dtype(b)), b)
    x = _tsolve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    return _tsolve(lu, x, left_side=True, lower=False)


def _add(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = u.add(out, x)
    return out


# ----------------------------------------------------------------------------- rules
def lu_jvp(prim, primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = prim.bind(a)
    zt = [u.Zero.like(pivots), u.Zero.like(perm)]
    if u.is_zero(a_dot):
        return [lu, pivots, perm], [u.Zero.like(lu)] + zt
    # De Hoog, Anderssen & Lukas: with A = P^T L U, X = L^{-1} P dA U^{-1};
    # dL = L tril(X, -1), dU = triu(X) U.
    *_, m, n = _shape(a)
    k = min(m, n)
    nd = _nd(a)
    dt = _dtype(a)
    l_ = _add(_pad2(_tril(_sl(lu, cols=(0, k)), -1), cols=(0, m - k)), _eye(dt, m, nd))
    u_eye = _pad2(_eye(dt, n - k, nd), rows=(k, 0), cols=(k, 0))
    u_ = _add(_pad2(_triu(_sl(lu, rows=(0, k))), rows=(0, n - k)), u_eye)
    l_ = _bcast(l_, _shape(a)[:-2] + (m, m))
    u_ = _bcast(u_, _shape(a)[:-2] + (n, n))
    la = _tsolve(l_, _mm(_perm_matrix(perm, dt), a_dot), left_side=True, lower=True,
                 unit_diagonal=True)
    lau = _tsolve(u_, la, left_side=False, lower=False)
    lu_dot = u.add(_mm(l_, _tril(lau, -1)), _mm(_triu(lau), u_))
    return [lu, pivots, perm], [lu_dot] + zt


def cholesky_jvp(prim, primals, tangents):
    (x,), (sigma_dot,) = primals, tangents
    L = _tril(prim.bind(x))
    if u.is_zero(sigma_dot):
        return L, u.Zero.like(L)
    n = _shape(x)[-1]
    dt = _dtype(x)
    # Murray (arXiv:1602.07527): dL = L phi(L^{-1} dA L^{-H}), phi = tril with half diag
    tmp = _tsolve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True,
                  lower=True)
    inner = _tsolve(L, tmp, left_side=True, transpose_a=False, lower=True)
    half = u.add(u.const(x, 1), _eye(dt, n, _nd(x)))
    phi = u.div(_tril(inner), _bcast(half, _shape(inner)))
    return L, _mm(L, phi)


def eigh_jvp(prim, primals, tangents, lower, sort_eigenvalues, subset_by_index, algorithm):
    (a,), (a_dot,) = primals, tangents
    n = _shape(a)[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    sym = _L()._symmetrize(a)
    v, w_real = prim.bind(sym, lower=lower, sort_eigenvalues=sort_eigenvalues,
                          subset_by_index=subset_by_index, algorithm=algorithm)
    if u.is_zero(a_dot):
        return [v, w_real], [u.Zero.like(v), u.Zero.like(w_real)]
    dt = _dtype(a)
    nd = _nd(a)
    w = _cast(w_real, dt)
    eye = _eye(dt, n, nd)
    # nondegenerate perturbation theory: F_ij = 1 / (w_j - w_i) off the diagonal
    diff = u.sub(_rows(w, -2), _rows(w, -1))
    Fmat = u.sub(u.div(u.const(a, 1), u.add(_bcast(eye, _shape(diff)), diff)),
                 _bcast(eye, _shape(diff)))
    vdag_adot_v = _mm(_mm(_H(v), a_dot), v)
    dv = _mm(v, u.mul(Fmat, vdag_adot_v))
    dw = _diag(_real(vdag_adot_v))
    return [v, w_real], [dv, dw]


def _eig_vec_jvp(w, v, da):
    n = _shape(w)[-1]
    nd = _nd(v)
    eye = _eye(_dtype(w), n, nd)
    diff = u.sub(_rows(w, -2), _rows(w, -1))
    eyeb = _bcast(eye, _shape(diff))
    Fmat = u.sub(u.div(u.const(w, 1), u.add(eyeb, diff)), eyeb)
    P = _mm(_solve(v, da), v)
    dw = _diag(P)
    U = _mm(v, u.mul(Fmat, P))
    # fix the free scale of each eigenvector as LAPACK does (unit norm, real largest
    # component): c_j = -Re(v_j^* u_j) - i Im(u_kj) / v_kj with k = argmax_i |v_ij|
    from jaxlite._src.prims.reductions import argmax_p, reduce_sum_p
    k = argmax_p.bind(u.abs(v), axes=(nd - 2,), index_dtype=np.dtype(np.int32))
    iota = u.broadcasted_iota(np.int32, _shape(v), nd - 2)
    mask = _cast(u.eq(iota, _bcast(_rows(k, -2), _shape(v))), _dtype(v))

    def colsum(x):
        return reduce_sum_p.bind(x, axes=(nd - 2,), out_sharding=None)
    re = u.neg(u.real(colsum(u.mul(_conj(v), U))))
    im = u.div(u.neg(u.imag(colsum(u.mul(mask, U)))), u.real(colsum(u.mul(mask, v))))
    c = u.complex(re, im)
    return dw, u.add(U, u.mul(v, _bcast(_rows(c, -2), _shape(v))))


def eig_jvp(prim, primals, tangents, compute_left_eigenvectors, compute_right_eigenvectors,
            enable_eigvec_derivs, implementation):
    (a,), (da,) = primals, tangents
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if (left or right) and not enable_eigvec_derivs:
        raise NotImplementedError(
            'Derivatives of non-symmetric eigenvectors are only valid under '
            'assumptions on the input that JAX cannot check (see the '
            'enable_eigvec_derivs argument to jax.lax.linalg.eig). Pass '
            'enable_eigvec_derivs=True to jax.lax.linalg.eig to opt in. See '
            'https://github.com/jax-ml/jax/issues/2748 for discussion.')
    outs = prim.bind(a, compute_left_eigenvectors=left, compute_right_eigenvectors=True,
                     enable_eigvec_derivs=enable_eigvec_derivs,
                     implementation=implementation)
    w, vr = outs[0], outs[-1]
    primal_out = [w] + ([outs[1]] if left else []) + ([vr] if right else [])
    if u.is_zero(da):
        return primal_out, [u.Zero.like(o) for o in primal_out]
    da = _cast(da, _dtype(vr))
    if not (left or right):
        from jaxlite._src.prims.reductions import reduce_sum_p
        dw = reduce_sum_p.bind(u.mul(_solve(vr, da), _T(vr)), axes=(_nd(vr) - 1,),
                               out_sharding=None)
        return [w], [dw]
    dw, dvr = _eig_vec_jvp(w, vr, da)
    tangent_out = [dw]
    if left:
        _, dvl = _eig_vec_jvp(_conj(w), outs[1], _H(da))
        tangent_out.append(dvl)
    if right:
        tangent_out.append(dvr)
    return primal_out, tangent_out


def svd_jvp(prim, primals, tangents, full_matrices, compute_uv, subset_by_index, algorithm):
    (A,), (dA,) = primals, tangents
    s, U, Vt = prim.bind(A, full_matrices=False, compute_uv=True,
                         subset_by_index=subset_by_index, algorithm=algorithm)
    *_, m, n = _shape(A)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    primal_out = [s, U, Vt] if compute_uv else [s]
    if u.is_zero(dA):
        return primal_out, [u.Zero.like(o) for o in primal_out]
    dt = _dtype(A)
    nd = _nd(A)
    Ut, V = _H(U), _H(Vt)
    s_dim = _rows(s, -2)
    dS = _mm(_mm(Ut, dA), V)
    ds = _diag(_real(dS))
    if not compute_uv:
        return [s], [ds]
    k = _shape(s)[-1]
    s_col = _T(s_dim)
    s_diffs = u.mul(u.add(_bcast(s_dim, _shape(s)[:-1] + (k, k)), s_col),
                    u.sub(_bcast(s_dim, _shape(s)[:-1] + (k, k)), s_col))
    eye_r = _bcast(_eye(_dtype(s), k, nd), _shape(s_diffs))
    F = u.sub(u.div(u.const(s, 1), u.add(s_diffs, eye_r)), eye_r)
    s_dim_c = _cast(s_dim, dt)
    dSS = u.mul(_bcast(s_dim_c, _shape(dS)), dS)
    SdS = u.mul(_bcast(_T(s_dim_c), _shape(dS)), dS)
    s_zeros = _cast(u.eq(s, u.zeros(u.aval(s))), _dtype(s))
    s_inv = u.sub(u.div(u.const(s, 1), u.add(s, s_zeros)), s_zeros)
    s_inv_mat = u.mul(_bcast(_rows(s_inv, -2), _shape(s_diffs)), eye_r)
    dUdV_diag = u.mul(u.mul(u.const(dS, 0.5), u.sub(dS, _H(dS))), _cast(s_inv_mat, dt))
    Fc = _cast(F, dt)
    dU = _mm(U, u.add(u.mul(Fc, u.add(dSS, _H(dSS))), dUdV_diag))
    dV = _mm(V, u.mul(Fc, u.add(SdS, _H(SdS))))
    if m > n:
        dAV = _mm(dA, V)
        dU = u.add(dU, u.div(u.sub(dAV, _mm(U, _mm(Ut, dAV))), _bcast(s_dim_c, _shape(dAV))))
    if n > m:
        dAHU = _mm(_H(dA), U)
        dV = u.add(dV, u.div(u.sub(dAHU, _mm(V, _mm(Vt, dAHU))),
                             _bcast(s_dim_c, _shape(dAHU))))
    return [s, U, Vt], [ds, dU, _H(dV)]


def _thin_qr_jvp(q, r, dx):
    """JVP of the QR decomposition of [..., m, n] matrices with m >= n (J. Townsend)."""
    dx_rinv = _tsolve(r, dx)  # right-side solve
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    lower = _tril(qt_dx_rinv, -1)
    do = u.sub(lower, _H(lower))  # skew-Hermitian
    if _dtype(q).kind == "c":
        n = _shape(r)[-1]
        I = _bcast(_eye(_dtype(do), n, _nd(do)), _shape(do))
        do = u.add(do, u.mul(I, u.sub(qt_dx_rinv, _cast(_real(qt_dx_rinv), _dtype(do)))))
    dq = u.add(_mm(q, u.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(u.sub(qt_dx_rinv, do), r)
    return dq, dr


def qr_jvp(prim, primals, tangents, pivoting, full_matrices, use_magma):
    (x,), (dx,) = primals, tangents
    outs = prim.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    q, r, *p = outs
    if u.is_zero(dx):
        return list(outs), [u.Zero.like(o) for o in outs]
    *_, m, n = _shape(x)
    dt = _dtype(x)
    if pivoting:
        dx = _mm(dx, _T(_perm_matrix(p[0], dt)))  # dx[..., p]
    dp = [u.Zero.like(p[0])] if pivoting else []
    if m < n:
        # X = [X1 X2] = Q [R1 R2]: the square block's rule, then dR2 = dQ^H X2 + Q^H dX2
        x2 = _sl(x, cols=(m, n))
        dx1, dx2 = _sl(dx, cols=(0, m)), _sl(dx, cols=(m, n))
        dq, dr1 = _thin_qr_jvp(q, _sl(r, cols=(0, m)), dx1)
        dr2 = u.add(_mm(_H(dq), x2), _mm(_H(q), dx2))
        dr = u.concatenate([dr1, dr2], _nd(dr1) - 1)
        return list(outs), [dq, dr] + dp
    q_mn = _sl(q, cols=(0, n)) if full_matrices else q
    r_nn = _sl(r, rows=(0, n)) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return list(outs), [dq_mn, dr_nn] + dp
    # full matrices (arXiv:2409.13374): Z_pn = Q_pn (Q_nn - I)^{-1}
    q_nn, q_pn = _sl(q_mn, rows=(0, n)), _sl(q_mn, rows=(n, m))
    q_mp = _sl(q, cols=(n, m))
    dq_nn, dq_pn = _sl(dq_mn, rows=(0, n)), _sl(dq_mn, rows=(n, m))
    I_n = _bcast(_eye(dt, n, _nd(q)), _shape(q_nn))
    z_pn_H = _solve(_H(u.sub(q_nn, I_n)), _H(q_pn))
    z_pn = _H(z_pn_H)
    dq_mp = u.sub(_mm(dq_mn, z_pn_H),
                  _mm(u.add(q_mn, _mm(q_mp, z_pn)), _H(u.sub(dq_pn, _mm(z_pn, dq_nn)))))
    dq = u.concatenate([dq_mn, dq_mp], _nd(dq_mn) - 1)
    zeros = _zeros(_shape(dr_nn)[:-2] + (m - n, n), _dtype(dr_nn))
    dr = u.concatenate([dr_nn, zeros], _nd(dr_nn) - 2)
    return list(outs), [dq, dr] + dp


def _zeros(shape, dtype):
    from jaxlite._src.core.avals import ShapedArray
    return u.zeros(ShapedArray(tuple(shape), np.dtype(dtype)))


def triangular_solve_jvp(prim, primals, tangents, left_side, lower, transpose_a,
                         conjugate_a, unit_diagonal):
    a, b = primals
    g_a, g_b = tangents
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    ans = prim.bind(a, b, **kw)
    out = None
    if not u.is_zero(g_a):
        # d(op(A)^{-1} B) = -op(A)^{-1} op(dA) X (left side; mirrored on the right)
        *_, m, n = _shape(b)
        kk = 1 if unit_diagonal else 0
        g = _tril(g_a, -kk) if lower else _triu(g_a, kk)
        g = u.neg(g)
        g = _T(g) if transpose_a else g
        g = _conj(g) if conjugate_a else g

        def a_inverse(rhs):
            return prim.bind(a, rhs, **kw)
        if left_side:
            out = a_inverse(_mm(g, ans)) if m > n else _mm(a_inverse(g), ans)
        else:
            out = a_inverse(_mm(ans, g)) if m < n else _mm(ans, a_inverse(g))
    if not u.is_zero(g_b):
        tb = prim.bind(a, g_b, **kw)
        out = tb if out is None else u.add_any(out, tb)
    return ans, (u.Zero.like(ans) if out is None else out)


def triangular_solve_transpose(prim, ct, a, b, left_side, lower, transpose_a, conjugate_a,
                               unit_diagonal):
    if u.is_undefined(a):
        raise ValueError("triangular_solve is not linear in its first operand")
    if u.is_zero(ct):
        return [None, None]
    return [None, prim.bind(a, ct, left_side=left_side, lower=lower,
                            transpose_a=not transpose_a, conjugate_a=conjugate_a,
                            unit_diagonal=unit_diagonal)]
