"""``jax.lax.linalg``: the linear-algebra primitives' functions, plus
``tridiagonal_solve`` (the Thomas algorithm as a ``scan``, so it differentiates and batches
like any composite of primitives)."""
from __future__ import annotations

from jaxlite._src.lax.control_flow import scan
from jaxlite._src.prims import ad_util as au
from jaxlite._src.prims.linalg import (  # noqa: F401
    cholesky, cholesky_p, eig, eig_p, eigh, eigh_p, lu, lu_p, lu_pivots_to_permutation,
    qr, qr_p, svd, svd_p, triangular_solve, triangular_solve_p, SvdAlgorithm,
    EighImplementation, EigImplementation)
from jaxlite._src.prims.linalg_householder import ormqr, ormqr_p  # noqa: F401
from jaxlite._src.prims.linalg_extra import (  # noqa: F401
    hessenberg, hessenberg_p, schur, schur_p)
from jaxlite._src.lax.linalg_more import (  # noqa: F401
    householder_product, householder_product_p, tridiagonal, tridiagonal_p,
    symmetric_product, symmetric_product_p, cholesky_update, cholesky_update_p, qdwh)

__all__ = ["SvdAlgorithm", "EighImplementation", "EigImplementation",
           "cholesky", "cholesky_p", "eig", "eig_p", "eigh", "eigh_p", "lu", "lu_p",
           "lu_pivots_to_permutation", "qr", "qr_p", "svd", "svd_p", "triangular_solve",
           "triangular_solve_p", "hessenberg", "hessenberg_p", "schur", "schur_p",
           "tridiagonal_solve", "householder_product", "householder_product_p",
           "tridiagonal", "tridiagonal_p", "symmetric_product", "symmetric_product_p",
           "cholesky_update", "cholesky_update_p", "qdwh", "ormqr", "ormqr_p"]


def _to_front(x, axis):
    return au.transpose(x, (axis,) + tuple(i for i in range(x.ndim) if i != axis))


def _from_front(x, axis):
    perm = list(range(1, x.ndim))
    perm.insert(axis, 0)
    return au.transpose(x, tuple(perm))


def tridiagonal_solve(dl, d, du, b):
    """Solve the tridiagonal systems ``A x = b``: ``dl``, ``d``, ``du`` (shape ``[..., m]``)
    are the sub-, main and super-diagonals of ``A`` (``dl[..., 0]`` and ``du[..., m-1]`` are
    ignored); ``b`` has shape ``[..., m, n]``. Returns ``x`` shaped like ``b``."""
    for name, v in (("dl", dl), ("du", du)):
        if v.shape != d.shape:
            raise ValueError(f"tridiagonal_solve: {name} must have the shape of d "
                             f"{tuple(d.shape)} (..., m), got {tuple(v.shape)}")
    if d.ndim < 1 or b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise ValueError(f"tridiagonal_solve: b must have shape (..., m, n) with (..., m) = "
                         f"{tuple(d.shape)}, got {tuple(b.shape)}")
    if not (dl.dtype == d.dtype == du.dtype == b.dtype):
        raise TypeError("tridiagonal_solve: dl, d, du and b must have the same dtype, got "
                        f"{dl.dtype}, {d.dtype}, {du.dtype}, {b.dtype}")
    k = d.ndim - 1
    # the system index first; the diagonals get a trailing unit axis to meet b's columns
    dl_, d_, du_ = (_to_front(au.expand_dims(v, (v.ndim,)), k) for v in (dl, d, du))
    b_ = _to_front(b, k)
    zero_c = au.zeros(au.aval(d_).update(shape=d_.shape[1:]))
    zero_y = au.zeros(au.aval(b_).update(shape=b_.shape[1:]))

    def forward(carry, row):
        c_prev, y_prev = carry
        lo, di, up, bi = row
        denom = au.sub(di, au.mul(lo, c_prev))
        c = au.div(up, denom)
        y = au.div(au.sub(bi, au.mul(lo, y_prev)), denom)
        return (c, y), (c, y)

    # dl[0] multiplies nothing: zero it so the first row reads d[0] x[0] + du[0] x[1]
    dl_ = au.concatenate([au.expand_dims(zero_c, (0,)), dl_[1:]], 0)
    _, (cs, ys) = scan(forward, (zero_c, zero_y), (dl_, d_, du_, b_))

    def backward(x_next, row):
        c, y = row
        x = au.sub(y, au.mul(c, x_next))
        return x, x

    _, xs = scan(backward, zero_y, (cs, ys), reverse=True)
    return _from_front(xs, k)
