"""jax.scipy.linalg: factorizations and solvers.

Everything is written with jnp/lax and the primitives of ``prims/linalg.py`` (lu, cholesky,
eigh, svd, qr, triangular_solve) and ``prims/linalg_extra.py`` (schur, hessenberg), so the
functions are traceable, batchable and, where the underlying primitives are, differentiable.
Matrix functions (expm, sqrtm, funm, ...) live in ``linalg_matfuncs.py`` and the special
matrices (toeplitz, hilbert, pascal, ...) in ``linalg_special.py``.

Arguments SciPy has but JAX ignores (``overwrite_*``, ``check_finite``, ``lapack_driver``,
...) are accepted and ignored here too.
"""
from __future__ import annotations

import warnings
from functools import partial

import numpy as np

from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.numpy.util import promote_dtypes_inexact
from jaxlite._src.prims import linalg as L
from jaxlite._src.prims import linalg_extra as LX

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "eigh_tridiagonal",
           "hessenberg", "inv", "lu", "lu_factor", "lu_solve", "qr", "qr_multiply", "schur",
           "solve", "solve_triangular", "svd"]


# ----------------------------------------------------------------------------- helpers
def _H(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _tril(x, k=0):
    return L._tri_mask(x, True, k)


def _triu(x, k=0):
    return L._tri_mask(x, False, k)


def _diag_of(x):
    return jnp.diagonal(x, axis1=-2, axis2=-1)


def _bmul(a, b):
    """``a * b`` with both operands broadcast to the common shape first (so the product's
    derivative rules only ever see equal shapes)."""
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    return jnp.broadcast_to(a, shape) * jnp.broadcast_to(b, shape)


def _diag_matrix(v):
    """Square matrices with the last axis of ``v`` on their diagonal."""
    n = v.shape[-1]
    return _bmul(v[..., :, None], jnp.eye(n, dtype=v.dtype))


def _mm(a, b):
    return jnp.matmul(a, b, precision=lax.Precision.HIGHEST)


def _vec_signature(name, a, b, nargs_before=1):
    """JAX's rule for a right-hand side: a vector, a (deprecated) stack of vectors, or a
    (stack of) matrices. Returns the vectorize signature."""
    pre = "(n,n)," * nargs_before
    if b.ndim == 1:
        return pre + "(n)->(n)"
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are "
                      "deprecated, and in the future will be treated as a batched 2D solve. "
                      f"Use {name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
                      category=FutureWarning)
        return pre + "(n)->(n)"
    return pre + "(n,k)->(n,k)"


def _vector_ok(fn):
    """Wrap a matrix right-hand-side function so it also takes a vector."""
    def wrapped(*args):
        *rest, b = args
        if b.ndim == 1:
            return fn(*rest, b[:, None])[:, 0]
        return fn(*rest, b)
    return wrapped


# ----------------------------------------------------------------------------- cholesky
@partial(jit, static_argnames=("lower",))
def _cholesky(a, lower):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    c = L.cholesky(a if lower else _H(a), symmetrize_input=False)
    return c if lower else _H(c)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor of a Hermitian positive-definite matrix: upper ``U`` with
    ``a = U^H U`` by default, lower ``L`` with ``a = L L^H`` if ``lower``. Only that
    triangle of ``a`` is read; NaNs if ``a`` is not positive definite."""
    del overwrite_a, check_finite
    return _cholesky(a, bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factorization for :func:`cho_solve`: returns ``(c, lower)``. Unlike SciPy
    the unused triangle of ``c`` is zero."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


@partial(jit, static_argnames=("lower",))
def _cho_solve(c, b, lower):
    c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    sig = _vec_signature("cho_solve", c, b)

    def solve2(c, b):
        b = L.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                               conjugate_a=not lower)
        return L.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower,
                                  conjugate_a=lower)
    return jnp.vectorize(_vector_ok(solve2), signature=sig)(c, b)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` given ``(c, lower) = cho_factor(a)``."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, bool(lower))


# ----------------------------------------------------------------------------- triangular
@partial(jit, static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower, unit_diagonal):
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    sig = _vec_signature("solve_triangular", a, b)
    fn = partial(L.triangular_solve, left_side=True, lower=lower, transpose_a=transpose_a,
                 conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return jnp.vectorize(_vector_ok(fn), signature=sig)(a, b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """Solve ``op(a) x = b`` for triangular ``a``; ``trans`` 0/'N', 1/'T' or 2/'C' picks
    ``op`` (none, transpose, conjugate transpose). Only the triangle named by ``lower``
    is read."""
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, bool(lower), bool(unit_diagonal))


# ----------------------------------------------------------------------------- lu
def _pivots_to_permutation(pivots, m):
    """Traceable version of ``lax.linalg.lu_pivots_to_permutation`` for one pivot vector."""
    perm = jnp.arange(m, dtype=np.int32)
    for i in range(pivots.shape[-1]):     # static unrolled swaps (k is small in practice)
        p = pivots[i]
        a, b = perm[i], perm[p]
        perm = perm.at[i].set(b).at[p].set(a)
    return perm


def _lu_solve_core(lu, perm, b, trans):
    if trans == 0:
        x = b[perm, :]
        x = L.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return L.triangular_solve(lu, x, left_side=True, lower=False)
    conj = trans == 2
    x = L.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                           conjugate_a=conj)
    x = L.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True,
                           transpose_a=True, conjugate_a=conj)
    return x[jnp.argsort(perm), :]


@partial(jit, static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a, overwrite_a=False, check_finite=True):
    """LU factorization with partial pivoting for :func:`lu_solve`: ``(lu, piv)`` with L
    (unit diagonal) and U packed in ``lu`` and LAPACK's int32 row swaps ``piv``."""
    del overwrite_a, check_finite
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    lu_, pivots, _ = L.lu(a)
    return lu_, pivots


@partial(jit, static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` (``trans=0``), ``a^T x = b`` (1) or ``a^H x = b`` (2) given
    ``lu_factor(a)``."""
    del overwrite_b, check_finite
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    lu_, pivots = lu_and_piv
    lu_, b = promote_dtypes_inexact(jnp.asarray(lu_), jnp.asarray(b))
    m = lu_.shape[-2]
    perm = jnp.vectorize(lambda p: _pivots_to_permutation(p, m), signature="(k)->(m)")(
        lax.stop_gradient(jnp.asarray(pivots)))
    sig = _vec_signature("lu_solve", lu_, b).replace("(n,n),", "(n,n),(n),", 1)
    fn = _vector_ok(partial(_lu_solve_core, trans=trans))
    return jnp.vectorize(fn, signature=sig)(lu_, perm, b)


@partial(jit, static_argnums=(1,))
def _lu(a, permute_l):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    lu_, _, permutation = L.lu(a)
    dt = a.dtype
    m, n = a.shape[-2:]
    p = (permutation[..., None, :] == jnp.arange(m, dtype=np.int32)[:, None]).astype(dt)
    k = min(m, n)
    l_ = _tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=dt)
    u_ = _triu(lu_)[..., :k, :]
    if permute_l:
        return _mm(p, l_), u_
    return p, l_, u_


@partial(jit, static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """LU decomposition ``a = p @ l @ u`` (``(p, l, u)``), or ``(p @ l, u)`` with
    ``permute_l``; ``l`` is unit lower triangular (m x k) and ``u`` upper (k x n)."""
    del overwrite_a, check_finite
    return _lu(a, bool(permute_l))


# ----------------------------------------------------------------------------- qr
@partial(jit, static_argnames=("mode", "pivoting"))
def _qr(a, mode, pivoting):
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    q, r, *p = L.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition ``a = q @ r``. ``mode``: 'full' (square q), 'economic' (k columns)
    or 'r' (only ``(r,)``). With ``pivoting`` the column permutation ``p`` is appended and
    ``a[:, p] = q @ r``."""
    del overwrite_a, lwork, check_finite
    return _qr(a, mode, bool(pivoting))


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """Product with the Q of ``qr(a)``: ``(c @ Q, r)`` for ``mode='right'`` (``c`` has m
    columns) or ``(Q @ c, r)`` for ``mode='left'`` (``c`` has k rows), Q conjugated when
    ``conjugate``; ``r`` is the economic R and ``p`` is appended with ``pivoting``."""
    del overwrite_a, overwrite_c
    a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                         f"rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")
    q, r, *p = L.qr(a, pivoting=bool(pivoting), full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    cq = _mm(q, c) if mode == "left" else _mm(c, q)
    if onedim:
        cq = cq.ravel()
    return (cq, r, p[0]) if pivoting else (cq, r)


# ----------------------------------------------------------------------------- solve, inv, det
def _pos_solve(a, b, lower):
    """Solve with a Hermitian positive-definite ``a`` (only the triangle named by ``lower``
    is read) through its Cholesky factor, with the derivatives of JAX's
    ``custom_linear_solve``: ``a`` enters through ``a @ x`` as a full matrix, so
    ``dx = a^{-1} (db - da x)`` for any ``da``, at every order.

    The value is the Cholesky solve on constants; the derivatives come from an LU solve of
    ``M = H + (a - stop_gradient(a))`` (``H`` the Hermitian matrix the triangle defines),
    added as ``x_lu - stop_gradient(x_lu)``, which is exactly zero in value."""
    sg = lax.stop_gradient
    a0 = sg(a)
    tri = _tril(a0) if lower else _triu(a0)
    strict = _tril(a0, -1) if lower else _triu(a0, 1)
    herm = tri + _H(strict)
    x_chol = _cho_solve(cholesky(a0, lower=lower), sg(b), lower)
    x_lu = jnp.linalg.solve(herm + (a - a0), b)
    return x_chol + (x_lu - sg(x_lu))


@partial(jit, static_argnames=("assume_a", "lower"))
def _solve(a, b, assume_a, lower):
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={a.shape} and b={b.shape}")
    if b.ndim < 1 or b.shape[-1 if a.ndim == b.ndim + 1 else -2] != a.shape[-1]:
        raise ValueError(f"The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={a.shape} and b={b.shape}")
    if a.ndim == b.ndim + 1:
        return _pos_solve(a, b[..., None], lower)[..., 0]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    return _pos_solve(a, b, lower)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """Solve ``a x = b``. ``assume_a='pos'`` uses a Cholesky factorization (reading the
    triangle named by ``lower``); 'gen', 'sym' and 'her' use LU."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    return _solve(a, b, assume_a, bool(lower))


def inv(a, overwrite_a=False, check_finite=True):
    """Inverse of a (stack of) square matrices."""
    del overwrite_a, check_finite
    return jnp.linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """Determinant of a (stack of) square matrices."""
    del overwrite_a, check_finite
    return jnp.linalg.det(a)


# ----------------------------------------------------------------------------- eigen / svd
@partial(jit, static_argnames=("lower", "eigvals_only", "subset", "type"))
def _eigh(a, b, lower, eigvals_only, subset, type):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    if b is not None:
        a, b = promote_dtypes_inexact(a, jnp.asarray(b))
        c = cholesky(b, lower=True)      # b = c c^H
        if type == 1:                    # c^-1 a c^-H y = w y,  v = c^-H y
            t = L.triangular_solve(c, a, left_side=True, lower=True)
            a = _H(L.triangular_solve(c, _H(t), left_side=True, lower=True))
        else:                            # c^H a c y = w y
            a = _mm(_H(c), _mm(a, c))
    v, w = L.eigh(a, lower=lower, symmetrize_input=False, subset_by_index=subset)
    if b is not None:
        if type in (1, 2):
            v = L.triangular_solve(c, v, left_side=True, lower=True, transpose_a=True,
                                   conjugate_a=True)
        else:
            v = _mm(c, v)
    return w if eigvals_only else (w, v)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True, *, subset_by_index=None):
    """Eigenvalues ``w`` (ascending) and eigenvectors ``v`` (columns) of the Hermitian
    ``a``: ``(w, v)``, or ``w`` with ``eigvals_only``. Only the triangle named by ``lower``
    is read. With ``b`` (Hermitian positive definite) the generalized problem of SciPy's
    ``type`` 1 (a v = w b v), 2 (a b v = w v) or 3 (b a v = w v) is solved.
    ``subset_by_index=(lo, hi)`` (inclusive, as SciPy; ``eigvals`` is its old name) keeps
    eigenvalues lo..hi. JAX implements neither ``b`` nor subsets here; jaxlite does."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if type not in (1, 2, 3):
        raise ValueError("'type' must be 1, 2 or 3.")
    rng = subset_by_index if subset_by_index is not None else eigvals
    subset = None
    if rng is not None:
        lo, hi = (int(i) for i in rng)
        n = np.shape(a)[-1]
        if not 0 <= lo <= hi < n:
            raise ValueError(f"Requested eigenvalue indices are not valid. Valid range is "
                             f"[0, {n - 1}] and start <= end, but start={lo}, end={hi} "
                             "is given")
        subset = (lo, hi + 1)
    return _eigh(a, b, bool(lower), bool(eigvals_only), subset, int(type))


@partial(jit, static_argnames=("full_matrices", "compute_uv"))
def _svd(a, full_matrices, compute_uv):
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    return L.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """Singular value decomposition ``a = u @ diag(s) @ vh``: ``(u, s, vh)``, or ``s``
    without ``compute_uv``."""
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, bool(full_matrices), bool(compute_uv))


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """Eigenvalues (ascending) and eigenvectors of the Hermitian tridiagonal matrix with
    diagonal ``d`` and superdiagonal ``e`` (subdiagonal ``conj(e)``). ``select='i'`` with
    ``select_range=(lo, hi)`` keeps eigenvalues lo..hi. jaxlite builds the dense matrix and
    uses ``eigh`` (JAX uses bisection and inverse iteration; ``tol`` and ``key`` are
    accepted and ignored)."""
    del tol, key
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        "jax.scipy.linalg.eigh_tridiagonal, got "
                        f"{alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        return jnp.real(alpha) if eigvals_only else (jnp.real(alpha),
                                                      jnp.eye(n, dtype=alpha.dtype))
    if select == "a":
        subset = None
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        subset = (int(select_range[0]), int(select_range[1]) + 1)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    z = jnp.zeros((1,), alpha.dtype)
    a = (_diag_matrix(jnp.real(alpha).astype(alpha.dtype))
         + jnp.pad(_diag_matrix(jnp.concatenate([beta, z])), ((0, 0), (1, 0)))[:, :n]
         + jnp.pad(_diag_matrix(jnp.concatenate([jnp.conj(beta), z])), ((1, 0), (0, 0)))[:n])
    v, w = L.eigh(a, lower=True, symmetrize_input=False, subset_by_index=subset)
    return w if eigvals_only else (w, v)


# ----------------------------------------------------------------------------- schur & co
@partial(jit, static_argnames=("output",))
def _schur(a, output):
    if output == "complex":
        a = a.astype(dtypes.to_complex_dtype(a.dtype))
    return LX.schur(a)


def schur(a, output="real"):
    """Schur decomposition ``a = z @ t @ z^H``: ``(t, z)``; ``t`` is quasi-triangular for
    ``output='real'`` on real input and triangular for ``output='complex'``. Not
    differentiable (as in JAX)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    return _schur(a, output)


@partial(jit, static_argnames=("calc_q", "overwrite_a", "check_finite"))
def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """Upper Hessenberg form ``h`` of the square ``a`` (``a = q @ h @ q^H``); with
    ``calc_q`` returns ``(h, q)``. Not differentiable (as in JAX)."""
    del overwrite_a, check_finite
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    h, q = LX.hessenberg(a)
    return (h, q) if calc_q else h
