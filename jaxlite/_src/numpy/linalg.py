"""jax.numpy.linalg: norms, decompositions, solvers and the array-API product aliases.

Decompositions bind the primitives of prims/linalg.py (``lu``, ``cholesky``, ``eigh``,
``eig``, ``svd``, ``qr``, ``triangular_solve``); everything else is jnp/lax code on top.
"""
from __future__ import annotations

import builtins
import itertools
import math
import operator
from functools import partial
from typing import NamedTuple

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy import linalg_ops as _ops
from jaxlite._src.numpy import reductions as R
from jaxlite._src.numpy.shape_ops import matrix_transpose  # noqa: F401  (re-exported)
from jaxlite._src.numpy.util import (asarray_value, canonicalize_axis, check_arraylike,
                                     promote_dtypes_inexact)
from jaxlite._src.prims import linalg as L

__all__ = ["norm", "vector_norm", "matrix_norm", "cholesky", "det", "slogdet", "inv",
           "solve", "eig", "eigh", "eigvals", "eigvalsh", "svd", "svdvals", "qr", "pinv",
           "lstsq", "matrix_power", "matrix_rank", "cond", "tensorinv", "tensorsolve",
           "multi_dot", "matmul", "outer", "tensordot", "vecdot", "trace", "diagonal",
           "cross", "matrix_transpose"]

_bmax, _bmin = builtins.max, builtins.min


class SVDResult(NamedTuple):
    """Result of :func:`svd`: ``U @ diag(S) @ Vh``."""
    U: object
    S: object
    Vh: object


class EighResult(NamedTuple):
    """Result of :func:`eigh`."""
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    """Result of :func:`eig`."""
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    """Result of :func:`qr`."""
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    """Result of :func:`slogdet`: ``det = sign * exp(logabsdet)``."""
    sign: object
    logabsdet: object


def _U():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _arr(name, *args):
    check_arraylike(name, *args)
    return [asarray_value(a) for a in args]


def _H(x):
    """Conjugate transpose of the last two axes."""
    return _U().conj(matrix_transpose(x))


def _square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {a.shape}.")


# ----------------------------------------------------------------------------- norms
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector p-norm over ``axis`` (all elements when None): ``ord`` 2 (default), 1, inf,
    -inf, 0 (count of nonzeros) or any other number."""
    (x,) = _arr("jnp.linalg.vector_norm", x)
    U = _U()
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return U.sqrt(R.sum(U.real(U.multiply(x, U.conj(x))), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    if ord == np.inf:
        return R.amax(U.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return R.amin(U.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        if not dtypes.issubdtype(x.dtype, np.inexact):
            raise ValueError(f"data type {np.dtype(x.dtype).type} not inexact")
        fdt = dtypes.finfo(x.dtype).dtype
        return R.sum(U.not_equal(x, 0), dtype=fdt, axis=axis, keepdims=keepdims)
    if ord == 1:
        return R.sum(U.abs(x), axis=axis, keepdims=keepdims)
    ax = U.abs(x)
    p = np.array(ord, ax.dtype)
    pinv = np.array(1.0 / p, ax.dtype)
    return U.power(R.sum(U.power(ax, p), axis=axis, keepdims=keepdims), pinv)


@partial(jit, static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norm (one axis) or matrix norm (two axes) of ``x``, as numpy.linalg.norm.

    Matrix orders: None/"fro", "nuc", 1, -1, 2, -2, inf, -inf. With ``axis=None`` and
    ``ord=None`` the 2-norm of all elements is returned for any rank.
    """
    (x,) = _arr("jnp.linalg.norm", x)
    (x,) = promote_dtypes_inexact(x)
    nd = x.ndim
    U = _U()
    if axis is None:
        if ord is None:
            return U.sqrt(R.sum(U.real(U.multiply(x, U.conj(x))), keepdims=keepdims))
        axis = tuple(range(nd))
    elif isinstance(axis, tuple):
        axis = tuple(canonicalize_axis(a, nd) for a in axis)
    else:
        axis = (canonicalize_axis(axis, nd),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to "
                         "compute a vector-norm, or two axes to compute a matrix-norm.")
    row, col = axis
    if ord is None or ord in ("f", "fro"):
        return U.sqrt(R.sum(U.real(U.multiply(x, U.conj(x))), axis=axis, keepdims=keepdims))
    if ord in (1, -1):
        if not keepdims and col > row:
            col -= 1
        s = R.sum(U.abs(x), axis=row, keepdims=keepdims)
        return R.amax(s, axis=col, keepdims=keepdims, initial=0) if ord == 1 else \
            R.amin(s, axis=col, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row > col:
            row -= 1
        s = R.sum(U.abs(x), axis=col, keepdims=keepdims)
        return R.amax(s, axis=row, keepdims=keepdims, initial=0) if ord == np.inf else \
            R.amin(s, axis=row, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        from jaxlite._src.numpy.shape_ops import expand_dims, moveaxis
        x = moveaxis(x, axis, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = R.amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = R.amin(s, axis=-1)
        else:
            y = R.sum(s, axis=-1)
        if keepdims:
            y = expand_dims(y, axis)
        return y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes (see :func:`norm` for ``ord``)."""
    (x,) = _arr("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


# ----------------------------------------------------------------------------- factorizations
@partial(jit, static_argnames=("upper", "symmetrize_input"))
def cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor of a Hermitian positive-definite matrix (lower, or upper with
    ``upper=True``); NaNs when the matrix is not positive definite."""
    (a,) = _arr("jnp.linalg.cholesky", a)
    (a,) = promote_dtypes_inexact(a)
    low = L.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(low) if upper else low


@partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix; ``UPLO`` ("L"/"U")
    picks the triangle read when ``symmetrize_input=False``."""
    (a,) = _arr("jnp.linalg.eigh", a)
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    (a,) = promote_dtypes_inexact(a)
    v, w = L.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """Eigenvalues (ascending) of a Hermitian matrix."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def eig(a):
    """Eigenvalues and right eigenvectors of a general square matrix (complex results)."""
    (a,) = _arr("jnp.linalg.eig", a)
    (a,) = promote_dtypes_inexact(a)
    w, v = L.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@jit
def eigvals(a):
    """Eigenvalues of a general square matrix (complex)."""
    (a,) = _arr("jnp.linalg.eigvals", a)
    (a,) = promote_dtypes_inexact(a)
    return L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


@partial(jit, static_argnames=("full_matrices", "compute_uv", "hermitian",
                               "subset_by_index"))
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` (an :class:`SVDResult`), or
    just the singular values (descending) without ``compute_uv``."""
    (a,) = _arr("jnp.linalg.svd", a)
    (a,) = promote_dtypes_inexact(a)
    if hermitian:
        from jaxlite._src.numpy.sorting import _lax_sort as sort
        w, v = L.eigh(a, subset_by_index=subset_by_index)
        s = lax.abs(v)
        last = s.ndim - 1
        if compute_uv:
            sign = lax.sign(v)
            idx = lax_shape.broadcasted_iota(np.int32, s.shape, last)
            s, idx, sign = sort((s, idx, sign), dimension=-1, num_keys=1)
            s, idx, sign = (lax_shape.rev(t, (last,)) for t in (s, idx, sign))
            from jaxlite._src.numpy.indexing import take_along_axis
            u = take_along_axis(w, idx[..., None, :], axis=-1)
            vh = _H(_U().multiply(u, lax.convert_element_type(sign[..., None, :], u.dtype)))
            return SVDResult(u, s, vh)
        return lax_shape.rev(sort(s, dimension=-1), (last,))
    if compute_uv:
        u, s, vh = L.svd(a, full_matrices=full_matrices, compute_uv=True,
                         subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return L.svd(a, full_matrices=full_matrices, compute_uv=False,
                 subset_by_index=subset_by_index)


def svdvals(x, /):
    """Singular values of ``x`` (descending)."""
    (x,) = _arr("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


@partial(jit, static_argnames=("mode",))
def qr(a, mode="reduced"):
    """QR decomposition: ``mode`` "reduced" (default), "complete", "r" (R only) or "raw"
    (LAPACK's Householder form ``(h, taus)``, ``h`` of shape ``(..., n, m)`` as NumPy
    returns it: ``jax.lax.linalg.ormqr(h.mT, taus, c)`` applies Q)."""
    (a,) = _arr("jnp.linalg.qr", a)
    (a,) = promote_dtypes_inexact(a)
    if mode == "raw":
        from jaxlite._src.prims.linalg_householder import geqrf
        h, taus = geqrf(a)
        return h.mT, taus
    if mode in ("reduced", "r", "full"):
        full = False
    elif mode == "complete":
        full = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = L.qr(a, pivoting=False, full_matrices=full)
    return r if mode == "r" else QRResult(q, r)


# ----------------------------------------------------------------------------- determinants
def _diag(x):
    return _ops.diagonal(x, axis1=-2, axis2=-1)


def _lu_slogdet(a):
    U = _U()
    dt = a.dtype
    lu_, piv, _ = L.lu(a)
    d = _diag(lu_)
    zero = R.any(U.equal(d, np.array(0, dt)), axis=-1)
    iota = lax_shape.expand_dims(lax_shape.iota(piv.dtype, a.shape[-1]),
                                 tuple(range(piv.ndim - 1)))
    parity = R.count_nonzero(U.not_equal(piv, iota), axis=-1)
    if dtypes.issubdtype(dt, np.complexfloating):
        sign = R.prod(U.true_divide(d, lax.convert_element_type(U.abs(d), dt)), axis=-1)
    else:
        sign = np.array(1, dt)
        parity = U.add(parity, R.count_nonzero(U.less(d, 0), axis=-1))
    flip = lax.convert_element_type(U.subtract(1, U.multiply(2, U.remainder(parity, 2))), dt)
    sign = U.where(zero, np.array(0, dt), U.multiply(sign, flip))
    logdet = U.where(zero, np.array(-np.inf, dt),
                     lax.convert_element_type(R.sum(U.log(U.abs(d)), axis=-1), dt))
    return sign, U.real(logdet)


def _slogdet_small(a):
    U = _U()
    n = a.shape[-1]
    if n == 1:
        d = a[..., 0, 0]
    else:
        d = U.subtract(U.multiply(a[..., 0, 0], a[..., 1, 1]),
                       U.multiply(a[..., 0, 1], a[..., 1, 0]))
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        ad = U.abs(d)
        sign = U.where(U.equal(ad, 0), np.array(0, a.dtype),
                       U.true_divide(d, lax.convert_element_type(ad, a.dtype)))
    else:
        sign = U.sign(d)
    return sign, U.log(U.abs(d))


@partial(jit, static_argnames=("method",))
def slogdet(a, *, method=None):
    """Sign and natural log of the absolute determinant (stable for large/small
    determinants). ``method`` is "lu" (default) or "qr"."""
    (a,) = _arr("jnp.linalg.slogdet", a)
    (a,) = promote_dtypes_inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a.shape}")
    if method is None or method == "lu":
        if a.shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_lu_slogdet(a))
    if method == "qr":
        U = _U()
        q, r = L.qr(a, full_matrices=False)
        d = _diag(r)
        sdet = R.prod(U.sign(d), axis=-1)
        qdet = det(q)
        return SlogdetResult(U.multiply(sdet, qdet), R.sum(U.log(U.abs(d)), axis=-1))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                     "(`None`), and 'qr'.")


@jit
def det(a):
    """Determinant of a square matrix (or a stack of them)."""
    (a,) = _arr("jnp.linalg.det", a)
    (a,) = promote_dtypes_inexact(a)
    _square("det", a)
    U = _U()
    n = a.shape[-1]
    e = lambda i, j: a[..., i, j]  # noqa: E731
    if n == 0:
        return lax_shape.full(a.shape[:-2], 1, a.dtype)
    if n == 1:
        return e(0, 0)
    if n == 2:
        return U.subtract(U.multiply(e(0, 0), e(1, 1)), U.multiply(e(0, 1), e(1, 0)))
    if n == 3:
        m = U.multiply
        return U.subtract(U.subtract(U.subtract(U.add(U.add(
            m(m(e(0, 0), e(1, 1)), e(2, 2)), m(m(e(0, 1), e(1, 2)), e(2, 0))),
            m(m(e(0, 2), e(1, 0)), e(2, 1))), m(m(e(0, 2), e(1, 1)), e(2, 0))),
            m(m(e(0, 0), e(1, 2)), e(2, 1))), m(m(e(0, 1), e(1, 0)), e(2, 2)))
    lu_, piv, _ = L.lu(a)
    d = R.prod(_diag(lu_), axis=-1)
    iota = lax_shape.expand_dims(lax_shape.iota(piv.dtype, n), tuple(range(piv.ndim - 1)))
    parity = R.count_nonzero(U.not_equal(piv, iota), axis=-1)
    flip = lax.convert_element_type(U.subtract(1, U.multiply(2, U.remainder(parity, 2))),
                                    a.dtype)
    return U.multiply(d, flip)


# ----------------------------------------------------------------------------- solvers
def _permute_rows(b, perm):
    """``b[..., perm, :]`` for a batched int permutation ``perm``."""
    try:
        from jaxlite._src.numpy.indexing import take_along_axis
    except ImportError:
        take_along_axis = None
    if take_along_axis is not None:
        return take_along_axis(b, perm[..., :, None], axis=-2)
    # One-hot product (fallback while gather is unavailable).
    n = perm.shape[-1]
    onehot = _U().equal(perm[..., :, None], lax_shape.iota(perm.dtype, n))
    return _ops.matmul(lax.convert_element_type(onehot, b.dtype), b)


def _lu_solve_matrix(a, b):
    """Solve ``a @ x = b`` for matrices ``b`` (same leading batch shape as ``a``)."""
    lu_, _, perm = L.lu(a)
    x = _permute_rows(b, perm)
    x = L.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    return L.triangular_solve(lu_, x, left_side=True, lower=False)


@jit
def solve(a, b):
    """Solve ``a @ x = b`` for ``x``: ``b`` is a vector when 1-D, otherwise a (stack of)
    matrices; leading batch dimensions broadcast."""
    a, b = _arr("jnp.linalg.solve", a, b)
    a, b = promote_dtypes_inexact(a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got "
                         f"a.shape={a.shape}")
    _square("solve", a)
    if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
            and a.shape[-1] != b.shape[-2]):
        raise ValueError(
            f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this "
            "would have been treated as a batched 1-dimensional solve. To recover this "
            "behavior, use solve(a, b[..., None]).squeeze(-1).")
    from jaxlite._src.numpy.shape_ops import broadcast_shapes, broadcast_to
    vec = b.ndim == 1
    bm = b[:, None] if vec else b
    if bm.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: a has shape {a.shape} but b has shape {b.shape}; the "
                         "dimensions to solve over do not match.")
    batch = broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    bm = broadcast_to(bm, batch + bm.shape[-2:])
    x = _lu_solve_matrix(a, bm)
    return x[..., 0] if vec else x


@jit
def inv(a):
    """Inverse of a square matrix (or stack of them)."""
    (arr,) = _arr("jnp.linalg.inv", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    (arr,) = promote_dtypes_inexact(arr)
    from jaxlite._src.numpy.creation import eye
    return solve(arr, lax_shape.broadcast(eye(arr.shape[-1], dtype=arr.dtype),
                                          arr.shape[:-2]))


@partial(jit, static_argnames=("hermitian",))
def _pinv(a, rtol=None, hermitian=False):
    (a,) = _arr("jnp.linalg.pinv", a)
    (arr,) = promote_dtypes_inexact(a)
    m, n = arr.shape[-2:]
    U = _U()
    if m == 0 or n == 0:
        return lax_shape.full(arr.shape[:-2] + (n, m), 0, arr.dtype)
    arr = U.conj(arr)
    if rtol is None:
        rtol = 10.0 * _bmax(m, n) * np.array(np.finfo(R._to_inexact(
            np.finfo(arr.dtype).dtype if arr.dtype.kind == "c" else arr.dtype)).eps)
    rtol = asarray_value(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = lax_shape.expand_dims(rtol[..., None], tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = U.multiply(rtol, s[..., 0:1])
    s = lax.convert_element_type(U.where(U.greater(s, cutoff), s, np.inf), u.dtype)
    res = _ops.matmul(matrix_transpose(vh), U.true_divide(matrix_transpose(u), s[..., None]))
    return lax.convert_element_type(res, arr.dtype)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse via the SVD; singular values below ``rtol`` times the
    largest (default: 10 * max(m, n) * eps) are treated as zero."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    return _pinv(a, rtol, hermitian)


@partial(jit, static_argnames=("numpy_resid",))
def _lstsq(a, b, rcond, *, numpy_resid=False):
    U = _U()
    a, b = promote_dtypes_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_nd = b.ndim
    if b_nd == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = a.shape
    dt = a.dtype
    rdt = np.finfo(dt).dtype if np.dtype(dt).kind == "c" else dt
    if a.size == 0:
        s = lax_shape.full((0,), 0, rdt)
        rank = lax_shape.full((), 0, dtypes.default_int_dtype())
        x = lax_shape.full((n,) + b.shape[1:], 0, dt)
    else:
        eps = float(np.finfo(rdt).eps)
        rc = eps * _bmax(n, m) if rcond is None else U.where(U.less(rcond, 0), eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = U.logical_and(U.greater(s, 0),
                             U.greater_equal(s, U.multiply(lax.convert_element_type(
                                 rc, s.dtype), s[0])))
        rank = R.sum(mask)
        safe = lax.convert_element_type(U.where(mask, s, 1), dt)
        s_inv = U.where(mask, U.true_divide(1, safe), 0)[:, None]
        utb = _ops.matmul(U.conj(u).T, b)
        x = _ops.matmul(U.conj(vt).T, U.multiply(s_inv, utb))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = lax_shape.full((0,), 0, rdt)
    else:
        resid = U.power(norm(U.subtract(b, _ops.matmul(a, x)), axis=0), 2)
    if b_nd == 1:
        x = x[:, 0]
        if resid.ndim:
            resid = resid[0] if resid.shape[0] else resid
    return x, resid, rank, s


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of ``a @ x = b``: ``(x, residuals, rank, singular_values)``.
    With ``numpy_resid`` the residuals are empty when the system is not full-rank
    overdetermined, as NumPy returns them (this needs concrete inputs)."""
    a, b = _arr("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq.fun(a, b, rcond, numpy_resid=True)
    return _lstsq(a, b, rcond, numpy_resid=False)


@partial(jit, static_argnames=("n",))
def matrix_power(a, n):
    """``a`` multiplied by itself ``n`` times (``n`` may be negative: powers of the
    inverse; 0 gives the identity), by repeated squaring."""
    (arr,) = _arr("jnp.linalg.matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        from jaxlite._src.numpy.creation import eye
        from jaxlite._src.numpy.shape_ops import broadcast_to
        return broadcast_to(eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = -n
    mm = _ops.matmul
    if n == 1:
        return arr
    if n == 2:
        return mm(arr, arr)
    if n == 3:
        return mm(mm(arr, arr), arr)
    z = result = None
    while n > 0:
        z = arr if z is None else mm(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else mm(result, z)
    return result


@partial(jit, static_argnames=("hermitian",))
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """Number of singular values above ``rtol`` times the largest (default:
    max(m, n) * eps)."""
    (M,) = _arr("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = promote_dtypes_inexact(M)
    U = _U()
    if M.ndim < 2:
        return lax.convert_element_type(R.any(U.not_equal(M, 0)), np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = U.multiply(U.multiply(R.max(S, -1), np.array(_bmax(M.shape[-2:]), S.dtype)),
                          np.array(np.finfo(S.dtype).eps, S.dtype))
    rtol = asarray_value(rtol)
    rtol = lax_shape.expand_dims(rtol, (rtol.ndim,))
    return R.sum(U.greater(S, rtol), axis=-1)


@partial(jit, static_argnames=("p",))
def cond(x, p=None):
    """Condition number of ``x`` in the norm ``p`` (None/2: ratio of extreme singular
    values); infinite for singular matrices."""
    (arr,) = _arr("cond", x)
    U = _U()
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={arr.shape}")
    if p is None or p == 2:
        s = svdvals(arr)
        return U.true_divide(s[..., 0], s[..., -1])
    if p == -2:
        s = svdvals(arr)
        r = U.true_divide(s[..., -1], s[..., 0])
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got "
                             f"arr.shape={arr.shape}")
        r = U.multiply(norm(arr, ord=p, axis=(-2, -1)), norm(inv(arr), ord=p, axis=(-2, -1)))
    return U.where(U.logical_and(U.isnan(r), U.logical_not(
        R.any(U.isnan(arr), axis=(-2, -1)))), np.inf, r)


def tensorinv(a, ind=2):
    """Inverse of ``a`` seen as a linear map from its first ``ind`` axes to the rest."""
    (arr,) = _arr("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contract, batch = arr.shape[:ind], arr.shape[ind:]
    flat_c, flat_b = math.prod(contract), math.prod(batch)
    if flat_c != flat_b:
        raise ValueError(f"tensorinv is only possible when the product of the first {ind} "
                         f"dimensions equals that of the remaining dimensions. got "
                         f"a.shape={arr.shape}")
    from jaxlite._src.numpy.shape_ops import reshape
    return reshape(inv(reshape(arr, (flat_c, flat_b))), batch + contract)


def tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, x.ndim) = b`` for ``x`` (``axes`` of ``a`` are first moved
    to the end)."""
    a, b = _arr("tensorsolve", a, b)
    from jaxlite._src.numpy.shape_ops import moveaxis, reshape
    if axes is not None:
        a = moveaxis(a, axes, len(axes) * (a.ndim - 1,))
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError("b.shape must match the leading dimensions of a.shape. Got "
                         f"a.shape={a.shape}, b.shape={b.shape}")
    a2 = reshape(a, (b.size, math.prod(out_shape)))
    if a2.shape[0] != a2.shape[1]:
        raise ValueError("tensorsolve requires a square linear map; got "
                         f"a.shape={a.shape}, b.shape={b.shape}")
    return reshape(solve(a2, reshape(b, (-1,))), out_shape)


def multi_dot(arrays, *, precision=None):
    """Product of a chain of matrices in the cheapest order (the first and last may be
    vectors)."""
    arrs = _arr("jnp.linalg.multi_dot", *arrays)
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got "
                         f"len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
            and builtins.all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for "
                         "the first and last array which may be 1 or 2 dimensional. Got "
                         f"array shapes {[a.shape for a in arrs]}")
    if builtins.any(p.shape[-1] != q.shape[0] for p, q in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first "
                         "dimension of following array. Got array shapes "
                         f"{[a.shape for a in arrs]}")
    axes = [(i, i + 1) for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        axes[0] = axes[0][1:]
    if arrs[-1].ndim == 1:
        axes[-1] = axes[-1][:1]
    return _ops.einsum(*itertools.chain(*zip(arrs, axes)), optimize="auto",
                       precision=precision)


# ----------------------------------------------------------------------------- array API
def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product (same as jnp.matmul)."""
    return _ops.matmul(x1, x2, precision=precision,
                       preferred_element_type=preferred_element_type)


def outer(x1, x2, /):
    """Outer product of two 1-D arrays."""
    x1, x2 = _arr("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}")
    return _U().multiply(x1[:, None], x2[None, :])


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Tensor contraction (same as jnp.tensordot)."""
    return _ops.tensordot(x1, x2, axes=axes, precision=precision,
                          preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product along ``axis`` (same as jnp.vecdot)."""
    return _ops.vecdot(x1, x2, axis=axis, precision=precision,
                       preferred_element_type=preferred_element_type)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset``-th diagonal of the last two axes."""
    return _ops.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonal of the last two axes."""
    return _ops.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis``."""
    x1, x2 = _arr("jnp.linalg.cross", x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have x1.shape[{axis}]={x1.shape[axis]} and "
                         f"x2.shape[{axis}]={x2.shape[axis]}")
    return _ops.cross(x1, x2, axis=axis)
