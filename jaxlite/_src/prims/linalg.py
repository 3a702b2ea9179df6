"""Linear-algebra primitives (JAX's ``lax.linalg``): lu, cholesky, eigh, eig, svd, qr and
triangular_solve, plus their lax-level wrappers.

Every primitive works on stacks of matrices (leading batch dimensions) and is implemented
with numpy.linalg / scipy.linalg. As in JAX, factorizations that fail (a Cholesky of a
matrix that is not positive definite, a singular triangular solve) give NaNs rather than
raising.
"""
from __future__ import annotations

import enum

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util
from jaxlite._src.prims import linalg_geev

__all__ = ["lu_p", "cholesky_p", "eigh_p", "eig_p", "svd_p", "qr_p", "triangular_solve_p",
           "lu", "cholesky", "eigh", "eig", "svd", "qr", "triangular_solve",
           "lu_pivots_to_permutation"]


# ----------------------------------------------------------------------------- helpers
def _ad():
    from jaxlite._src.prims import linalg_ad
    return linalg_ad


_compute_dtypes = {}


def _compute_dtype(dt):
    """NumPy's LAPACK needs float32/64 or complex64/128: widen half precision. (Cached per
    dtype: ``dtype.name`` alone costs microseconds, more than a small matrix's LAPACK call.)"""
    r = _compute_dtypes.get(dt)
    if r is None:
        d = np.dtype(dt)
        if (d.kind == "f" and d.itemsize < 4) or d.kind == "V" or d.name == "bfloat16":
            r = np.dtype(np.float32)
        else:
            r = d
        _compute_dtypes[dt] = r
    return r


def _real_dtype(dt):
    return np.dtype(np.finfo(np.dtype(dt)).dtype) if np.dtype(dt).kind == "c" else \
        np.dtype(dt)


_complex_dtypes = {}


def _complex_dtype(dt):
    r = _complex_dtypes.get(dt)
    if r is None:
        d = np.dtype(dt)
        r = _complex_dtypes[dt] = d if d.kind == "c" else \
            np.dtype(np.complex128) if d == np.float64 else np.dtype(np.complex64)
    return r


def _check_matrix(name, x, square=False):
    if x.ndim < 2:
        raise ValueError(f"Argument to {name} must have shape [..., m, n], got {x.shape}.")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {x.shape}.")
    if not dtypes.issubdtype(x.dtype, np.inexact):
        raise TypeError(f"{name} requires a floating point or complex operand, got "
                        f"{x.dtype.name}.")


def _each(x, fn, n_batch_dims=None):
    """Apply ``fn`` to every matrix of the stack ``x`` (a tuple of outputs per matrix)."""
    batch = x.shape[:-2] if n_batch_dims is None else x.shape[:n_batch_dims]
    flat = x.reshape((-1,) + x.shape[len(batch):])
    outs = [fn(m) for m in flat]
    if not outs:
        return None
    k = len(outs[0])
    return tuple(np.stack([o[i] for o in outs]).reshape(batch + np.shape(outs[0][i]))
                 for i in range(k))


def _stack_or_each(x, fn, failed):
    """``fn`` (a tuple of outputs) over the whole stack ``x`` at once; when LAPACK fails on
    it, over each matrix alone, with ``failed(matrix)`` for the ones that fail: one bad
    matrix of a batch does not spoil the others (as XLA's batched kernels)."""
    try:
        return fn(x)
    except np.linalg.LinAlgError:
        def one(a):
            try:
                return fn(a)
            except np.linalg.LinAlgError:
                return failed(a)
        return _each(x, one)


_geev_cache = {}


def _geev_funcs(dtype, n):
    """SciPy's ``geev`` for ``dtype`` and the workspace size ``scipy.linalg.eig`` asks it
    for an n x n matrix (cached: the query costs microseconds a call)."""
    key = (np.dtype(dtype), n)
    r = _geev_cache.get(key)
    if r is None:
        from scipy.linalg import lapack
        geev, geev_lwork = lapack.get_lapack_funcs(("geev", "geev_lwork"),
                                                   (np.empty((n, n), dtype),))
        lwork = lapack._compute_lwork(geev_lwork, n, compute_vl=0, compute_vr=0)
        r = _geev_cache[key] = (geev, lwork)
    return r


def _eigvals_geev(x, out_dt):
    """Eigenvalues of every matrix of the stack ``x`` from LAPACK's geev, called directly with
    the workspace ``scipy.linalg.eig`` asks for (the same call, so the same values) but
    without its per-matrix checks; None when geev reports a failure (the caller's
    per-matrix path then gives NaNs where ``scipy.linalg.eig`` fails)."""
    n = x.shape[-1]
    flat = x.reshape((-1, n, n))
    geev, lwork = _geev_funcs(flat.dtype, n)
    whole = linalg_geev.stack_geev(flat, geev.typecode, lwork)   # one compiled loop
    if whole is not None and whole.dtype == out_dt:
        return whole.reshape(x.shape[:-1])
    out = np.empty(flat.shape[:2], out_dt)
    unit = np.complex64(1j)   # scipy's constant: w = wr + 1j * wi
    with np.errstate(all="ignore"):
        for k in range(flat.shape[0]):
            if geev.typecode in "cz":
                w, _, _, info = geev(flat[k], lwork=lwork, compute_vl=0, compute_vr=0)
            else:
                wr, wi, _, _, info = geev(flat[k], lwork=lwork, compute_vl=0, compute_vr=0)
                w = wr + unit * wi
            if info != 0:
                return None
            out[k] = w
    return out.reshape(x.shape[:-1])


class _LinalgPrimitive(Primitive):
    """Shared batching rule: move the batch dimension of every operand to the front and
    rebind (these primitives treat leading dimensions as a batch)."""
    weak_rule = "never"
    leading_batch_results = True   # results of several ranks share the leading batch dims

    def sharding_rule(self, avals, **params):
        """For the partitioner: the leading (batch) dimensions keep their split, each device
        factoring its own matrices; the matrix dimensions (the last two) are computed
        whole."""
        return [tuple(k if k < a.ndim - 2 else None for k in range(a.ndim)) for a in avals]

    def explicit_sharding_rule(self, avals, dims, **params):
        """Over Explicit axes (JAX's rule): the matrix dimensions (the last two) must not be
        split; results keep the leading (batch) dimensions' splits."""
        from jaxlite._src.sharding.types import ShardingTypeError, spec_of
        for i, (a, d) in enumerate(zip(avals, dims)):
            if any(d[max(a.ndim - 2, 0):]):
                raise ShardingTypeError(
                    f"Input {i} to {self.name} must be unsharded on non-batch dimensions, but "
                    f"got {spec_of(d)}. Reshard it so that its last two dimensions are not "
                    f"split (jax.sharding.reshard(x, P(..., None, None))).")
        batch = dims[0][:max(avals[0].ndim - 2, 0)]
        outs = self.abstract_eval(*avals, **params)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        return [tuple(batch[:o.ndim]) + ((),) * (o.ndim - len(batch[:o.ndim])) for o in outs]

    def batch(self, size, args, dims, **params):
        moved = []
        for a, d in zip(args, dims):
            if d is None:
                moved.append(ad_util.broadcast(a, (size,)))
            elif d != 0:
                perm = (d,) + tuple(i for i in range(a.ndim) if i != d)
                moved.append(ad_util.transpose(a, perm))
            else:
                moved.append(a)
        out = self.bind(*moved, **params)
        if self.multiple_results:
            return out, [0] * len(out)
        return out, 0


# ----------------------------------------------------------------------------- lu
class Lu(_LinalgPrimitive):
    """LU decomposition with partial pivoting: ``a[perm] = L @ U`` with ``L`` unit lower
    triangular (stored below the diagonal of ``lu``) and ``U`` upper triangular. Outputs
    (lu, pivots, permutation) with int32 pivots (LAPACK's row swaps) and permutation."""
    name = "lu"
    multiple_results = True

    def jvp(self, primals, tangents):
        return _ad().lu_jvp(self, primals, tangents)

    def impl(self, x):
        import scipy.linalg as sla
        cd = _compute_dtype(x.dtype)
        m, n = x.shape[-2:]
        k = min(m, n)

        def one(a):
            # LAPACK's getrf itself: scipy's lu_factor would warn of a singular matrix (JAX
            # does not), and silencing that with catch_warnings is process-wide state that
            # per-device threads would race on
            a = a.astype(cd)
            getrf, = sla.get_lapack_funcs(("getrf",), (a,))
            with np.errstate(all="ignore"):
                lu_, piv, info = getrf(a, overwrite_a=True)
            if info < 0:
                lu_, piv = np.full((m, n), np.nan, cd), np.arange(k)
            perm = np.arange(m)
            for i, p in enumerate(piv[:k]):
                perm[i], perm[p] = perm[p], perm[i]
            return lu_.astype(x.dtype), piv[:k].astype(np.int32), perm.astype(np.int32)
        if x.size == 0:
            b = x.shape[:-2]
            return [x.copy(), np.zeros(b + (k,), np.int32),
                    np.broadcast_to(np.arange(m, dtype=np.int32), b + (m,)).copy()]
        return list(_each(x, one))

    def abstract_eval(self, x):
        _check_matrix("lu", x)
        m, n = x.shape[-2:]
        b = x.shape[:-2]
        return [ShapedArray(x.shape, x.dtype), ShapedArray(b + (min(m, n),), np.int32),
                ShapedArray(b + (m,), np.int32)]


# ----------------------------------------------------------------------------- cholesky
class Cholesky(_LinalgPrimitive):
    """Lower Cholesky factor ``L`` with ``a = L @ L^H`` (NaNs when ``a`` is not positive
    definite). Only the lower triangle of ``a`` is read."""
    name = "cholesky"

    def jvp(self, primals, tangents):
        return _ad().cholesky_jvp(self, primals, tangents)

    def impl(self, x):
        cd = _compute_dtype(x.dtype)

        def one(a):
            try:
                return (np.linalg.cholesky(a.astype(cd)),)
            except np.linalg.LinAlgError:
                return (np.full(a.shape, np.nan, cd),)
        if x.size == 0:
            return x.copy()
        a = np.tril(x) + np.swapaxes(np.conj(np.tril(x, -1)), -1, -2)
        return _each(a, one)[0].astype(x.dtype)

    def abstract_eval(self, x):
        _check_matrix("cholesky", x, square=True)
        return ShapedArray(x.shape, x.dtype)


# ----------------------------------------------------------------------------- eigh
class Eigh(_LinalgPrimitive):
    """Eigendecomposition of a Hermitian matrix: outputs (v, w) with eigenvalues ``w``
    (real, ascending) and eigenvectors in the columns of ``v``. ``lower`` selects the
    triangle that is read; ``subset_by_index=(lo, hi)`` keeps eigenvalues lo..hi-1."""
    name = "eigh"
    multiple_results = True

    def jvp(self, primals, tangents, **params):
        return _ad().eigh_jvp(self, primals, tangents, **params)

    def impl(self, x, lower=True, sort_eigenvalues=True, subset_by_index=None,
             algorithm=None):
        _check_cpu_choice("eigh", algorithm)
        cd = _compute_dtype(x.dtype)
        n = x.shape[-1]
        lo, hi = subset_by_index if subset_by_index is not None else (0, n)
        if x.size == 0:
            return [np.zeros(x.shape[:-1] + (hi - lo,), x.dtype),
                    np.zeros(x.shape[:-2] + (hi - lo,), _real_dtype(x.dtype))]
        with np.errstate(all="ignore"):
            w, v = _stack_or_each(
                x.astype(cd), lambda a: tuple(np.linalg.eigh(a, UPLO="L" if lower else "U")),
                lambda a: (np.full(a.shape[:-1], np.nan, _real_dtype(cd)),
                           np.full(a.shape, np.nan, cd)))
        return [v[..., lo:hi].astype(x.dtype), w[..., lo:hi].astype(_real_dtype(x.dtype))]

    def abstract_eval(self, x, lower=True, sort_eigenvalues=True, subset_by_index=None,
                      algorithm=None):
        _check_matrix("eigh", x, square=True)
        n = x.shape[-1]
        k = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
        return [ShapedArray(x.shape[:-1] + (k,), x.dtype),
                ShapedArray(x.shape[:-2] + (k,), _real_dtype(x.dtype))]


# ------------------------------------------------------------------ algorithm choices


class SvdAlgorithm(enum.Enum):
    """The algorithm ``svd`` uses (on CPU: DEFAULT, QR and DIVIDE_AND_CONQUER, all
    LAPACK's; JACOBI and POLAR raise, as in JAX)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


class EighImplementation(enum.Enum):
    """The algorithm ``eigh`` uses (on CPU only QR, LAPACK's, as in JAX)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class EigImplementation(enum.Enum):
    """The library ``eig`` uses (on CPU only LAPACK, as in JAX)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _check_cpu_choice(name, choice):
    """Raise JAX's error for an algorithm choice CPUs do not run."""
    if choice is None:
        return
    if name == "eigh":
        if choice == EighImplementation.JACOBI:
            raise NotImplementedError("Jacobi implementation is not supported on CPU")
        if choice == EighImplementation.QDWH:
            raise NotImplementedError("QDWH implementation is only supported on TPU")
    elif name == "svd":
        if choice in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
            raise NotImplementedError("The SVD Jacobi and Polar algorithms are not "
                                      "implemented on CPU.")
    elif choice != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")


# ----------------------------------------------------------------------------- eig
class Eig(_LinalgPrimitive):
    """Eigendecomposition of a general square matrix: outputs the (complex) eigenvalues,
    then the left and/or right eigenvectors as requested."""
    name = "eig"
    multiple_results = True

    def jvp(self, primals, tangents, **params):
        return _ad().eig_jvp(self, primals, tangents, **params)

    def impl(self, x, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
             enable_eigvec_derivs=False, implementation=None):
        _check_cpu_choice("eig", implementation)
        import scipy.linalg as sla
        cd = _compute_dtype(x.dtype)
        out_dt = _complex_dtype(x.dtype)
        left, right = compute_left_eigenvectors, compute_right_eigenvectors
        n = x.shape[-1]

        def one(a):
            with np.errstate(all="ignore"):
                try:
                    if not np.isfinite(a).all():    # (LAPACK would complain on stderr)
                        raise ValueError
                    r = sla.eig(a.astype(cd), left=left, right=right, check_finite=False)
                except (ValueError, np.linalg.LinAlgError):
                    nanv = np.full((n, n), complex(np.nan, np.nan), out_dt)
                    r = (np.full((n,), complex(np.nan, np.nan), out_dt),) + \
                        (nanv,) * (left + right)
            r = r if isinstance(r, tuple) else (r,)
            return tuple(np.asarray(o).astype(out_dt) for o in r)
        if x.size == 0:
            return [np.zeros(x.shape[:-1], out_dt)] + [np.zeros(x.shape, out_dt)] * (
                left + right)
        if not left and not right and np.isfinite(x).all():
            w = _eigvals_geev(x.astype(cd), out_dt)
            if w is not None:
                return [w]
        return list(_each(x, one))

    def abstract_eval(self, x, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
                      enable_eigvec_derivs=False, implementation=None):
        _check_matrix("eig", x, square=True)
        dt = _complex_dtype(x.dtype)
        outs = [ShapedArray(x.shape[:-1], dt)]
        outs += [ShapedArray(x.shape, dt)] * (bool(compute_left_eigenvectors)
                                               + bool(compute_right_eigenvectors))
        return outs


# ----------------------------------------------------------------------------- svd
class Svd(_LinalgPrimitive):
    """Singular value decomposition ``a = u @ diag(s) @ vh``: outputs (s, u, vh), or just
    (s,) without ``compute_uv``. Singular values are real and descending."""
    name = "svd"
    multiple_results = True

    def _k(self, m, n, subset_by_index):
        k = min(m, n)
        return k if subset_by_index is None else subset_by_index[1] - subset_by_index[0]

    def jvp(self, primals, tangents, **params):
        return _ad().svd_jvp(self, primals, tangents, **params)

    def impl(self, x, full_matrices=True, compute_uv=True, subset_by_index=None,
             algorithm=None):
        _check_cpu_choice("svd", algorithm)
        cd = _compute_dtype(x.dtype)
        m, n = x.shape[-2:]
        k = min(m, n)
        lo, hi = subset_by_index if subset_by_index is not None else (0, k)
        rd = _real_dtype(x.dtype)
        if x.size == 0:
            avals = self.abstract_eval(ShapedArray(x.shape, x.dtype), full_matrices,
                                       compute_uv, subset_by_index, algorithm)
            outs = [np.zeros(a.shape, a.dtype) for a in avals]
            if compute_uv and full_matrices:
                outs[1] = np.broadcast_to(np.eye(m, dtype=x.dtype), outs[1].shape).copy()
                outs[2] = np.broadcast_to(np.eye(n, dtype=x.dtype), outs[2].shape).copy()
            return outs
        def failed(a):
            nan_s = np.full(a.shape[:-2] + (k,), np.nan, rd)
            if not compute_uv:
                return (nan_s,)
            return (np.full(a.shape[:-1] + (m if full_matrices else k,), np.nan, cd), nan_s,
                    np.full(a.shape[:-2] + (n if full_matrices else k, n), np.nan, cd))

        def run(a):
            if compute_uv:
                return tuple(np.linalg.svd(a, full_matrices=full_matrices))
            return (np.linalg.svd(a, compute_uv=False),)
        with np.errstate(all="ignore"):
            res = _stack_or_each(x.astype(cd), run, failed)
        if compute_uv:
            u, s, vh = res
        else:
            (s,) = res
        s = s[..., lo:hi].astype(rd)
        if not compute_uv:
            return [s]
        if subset_by_index is not None:
            u, vh = u[..., :, lo:hi], vh[..., lo:hi, :]
        return [s, u.astype(x.dtype), vh.astype(x.dtype)]

    def abstract_eval(self, x, full_matrices=True, compute_uv=True, subset_by_index=None,
                      algorithm=None):
        _check_matrix("svd", x)
        m, n = x.shape[-2:]
        b = x.shape[:-2]
        k = self._k(m, n, subset_by_index)
        s = ShapedArray(b + (k,), _real_dtype(x.dtype))
        if not compute_uv:
            return [s]
        if full_matrices and subset_by_index is None:
            return [s, ShapedArray(b + (m, m), x.dtype), ShapedArray(b + (n, n), x.dtype)]
        return [s, ShapedArray(b + (m, k), x.dtype), ShapedArray(b + (k, n), x.dtype)]


# ----------------------------------------------------------------------------- qr
class Qr(_LinalgPrimitive):
    """QR decomposition ``a = q @ r``: q has orthonormal columns and r is upper triangular.
    With ``pivoting`` a third output gives the int32 column permutation (``a[:, p] =
    q @ r``)."""
    name = "qr"
    multiple_results = True

    def jvp(self, primals, tangents, **params):
        return _ad().qr_jvp(self, primals, tangents, **params)

    def impl(self, x, pivoting=False, full_matrices=True, use_magma=None):
        cd = _compute_dtype(x.dtype)
        m, n = x.shape[-2:]
        avals = self.abstract_eval(ShapedArray(x.shape, x.dtype), pivoting, full_matrices,
                                   use_magma)
        if x.size == 0:
            outs = [np.zeros(a.shape, a.dtype) for a in avals]
            if full_matrices:
                outs[0] = np.broadcast_to(np.eye(m, dtype=x.dtype), outs[0].shape).copy()
            if pivoting:
                outs[2] = np.broadcast_to(np.arange(n, dtype=np.int32), outs[2].shape).copy()
            return outs
        if pivoting:
            import scipy.linalg as sla
            mode = "full" if full_matrices else "economic"

            def one(a):
                q, r, p = sla.qr(a.astype(cd), mode=mode, pivoting=True, check_finite=False)
                return q.astype(x.dtype), r.astype(x.dtype), p.astype(np.int32)
            return list(_each(x, one))
        with np.errstate(all="ignore"):
            q, r = np.linalg.qr(x.astype(cd), mode="complete" if full_matrices else "reduced")
        return [q.astype(x.dtype), r.astype(x.dtype)]

    def abstract_eval(self, x, pivoting=False, full_matrices=True, use_magma=None):
        _check_matrix("qr", x)
        m, n = x.shape[-2:]
        b = x.shape[:-2]
        k = m if full_matrices else min(m, n)
        outs = [ShapedArray(b + (m, k), x.dtype), ShapedArray(b + (k, n), x.dtype)]
        if pivoting:
            outs.append(ShapedArray(b + (n,), np.int32))
        return outs


# ----------------------------------------------------------------------------- triangular
class TriangularSolve(_LinalgPrimitive):
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for triangular ``a``,
    where ``op`` optionally conjugates and/or transposes ``a``; only the triangle named by
    ``lower`` is read, and ``unit_diagonal`` assumes ones on the diagonal."""
    name = "triangular_solve"

    def jvp(self, primals, tangents, **params):
        return _ad().triangular_solve_jvp(self, primals, tangents, **params)

    def transpose(self, ct, a, b, **params):
        return _ad().triangular_solve_transpose(self, ct, a, b, **params)

    def impl(self, a, b, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
             unit_diagonal=False):
        import scipy.linalg as sla
        cd = np.result_type(_compute_dtype(a.dtype), _compute_dtype(b.dtype))
        n = a.shape[-1]
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        nb = int(np.prod(batch))     # (not -1: a reshape of size 0 cannot infer it)
        A = np.broadcast_to(a, batch + a.shape[-2:]).reshape((nb, n, n)).astype(cd)
        B = np.broadcast_to(b, batch + b.shape[-2:]).reshape((nb,) + b.shape[-2:]).astype(cd)
        out = np.empty(B.shape, cd)
        for i in range(A.shape[0]):
            m = np.conj(A[i]) if conjugate_a else A[i]
            rhs, low, trans = B[i], lower, transpose_a
            if not left_side:
                # x @ op(a) = b  <=>  op(a)^T @ x^T = b^T
                rhs, trans = rhs.T, not trans
            with np.errstate(all="ignore"):
                try:
                    x = sla.solve_triangular(m, rhs, trans=1 if trans else 0, lower=low,
                                             unit_diagonal=unit_diagonal, check_finite=False)
                except (np.linalg.LinAlgError, ValueError):
                    x = _masked_solve(m, rhs, low, trans, unit_diagonal)
            out[i] = x if left_side else x.T
        return out.reshape(batch + b.shape[-2:]).astype(b.dtype)

    def abstract_eval(self, a, b, left_side=False, lower=False, transpose_a=False,
                      conjugate_a=False, unit_diagonal=False):
        _check_matrix("triangular_solve", a, square=True)
        if b.ndim < 2:
            raise TypeError("triangular_solve requires b to have at least two dimensions, "
                            f"got {b.shape}.")
        if a.dtype != b.dtype:
            raise TypeError("triangular_solve requires a and b to have the same dtype, got "
                            f"{a.dtype.name} and {b.dtype.name}.")
        n = a.shape[-1]
        k = b.shape[-2] if left_side else b.shape[-1]
        if k != n:
            raise TypeError("triangular_solve requires the shared dimension of a and b to "
                            f"match, got shapes {a.shape} and {b.shape} "
                            f"(left_side={left_side}).")
        if a.shape[:-2] != b.shape[:-2]:
            raise TypeError("triangular_solve requires both arguments to have the same "
                            f"batch dimensions, got {a.shape} and {b.shape}.")
        return ShapedArray(b.shape, b.dtype)


def _masked_solve(a, b, lower, trans, unit):
    """Plain forward/back substitution (no singularity check: division by a zero pivot
    gives inf/NaN, as LAPACK's trsm does)."""
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t.copy()
        np.fill_diagonal(t, 1)
    if trans:
        t, lower = t.T, not lower
    n = t.shape[0]
    x = np.zeros(np.broadcast_shapes(b.shape), np.result_type(t, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in order:
            x[i] = (b[i] - t[i] @ x) / t[i, i]
    return x


lu_p = Lu()
cholesky_p = Cholesky()
eigh_p = Eigh()
eig_p = Eig()
svd_p = Svd()
qr_p = Qr()
triangular_solve_p = TriangularSolve()


# ----------------------------------------------------------------------------- helpers
def _H(x):
    nd = x.ndim
    t = ad_util.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    return ad_util.conj(t) if dtypes.issubdtype(x.dtype, np.complexfloating) else t


def _symmetrize(x):
    return ad_util.div(ad_util.add(x, _H(x)), np.array(2, x.dtype))


def _tri_mask(x, lower, k=0):
    """``x`` with the strict other triangle zeroed (tril when ``lower`` else triu)."""
    m, n = x.shape[-2:]
    r = ad_util.add(ad_util.broadcasted_iota(np.int32, (m, n), 0), np.int32(k))
    c = ad_util.broadcasted_iota(np.int32, (m, n), 1)
    mask = ad_util.ge(r, c) if lower else ad_util.le(r, c)
    if x.ndim > 2:
        mask = ad_util.broadcast_in_dim(mask, x.shape, (x.ndim - 2, x.ndim - 1))
    return ad_util.select(mask, x, ad_util.full_like(x, 0))


# ----------------------------------------------------------------------------- lax wrappers
def lu(x):
    """LU decomposition with partial pivoting: ``(lu, pivots, permutation)``."""
    return tuple(lu_p.bind(x))


def cholesky(x, *, symmetrize_input=True):
    """Lower Cholesky factor of the Hermitian positive-definite ``x`` (NaNs if it is not
    positive definite). With ``symmetrize_input``, ``(x + x^H) / 2`` is factored."""
    if symmetrize_input:
        x = _symmetrize(x)
    return _tri_mask(cholesky_p.bind(x), True)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
    """Eigenvectors and eigenvalues ``(v, w)`` of the Hermitian ``x``."""
    if symmetrize_input:
        x = _symmetrize(x)
    v, w = eigh_p.bind(x, lower=lower, sort_eigenvalues=sort_eigenvalues,
                       subset_by_index=None if subset_by_index is None
                       else tuple(int(i) for i in subset_by_index),
                       algorithm=implementation)
    return v, w


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, use_magma=None, implementation=None):
    """Eigenvalues and (left/right) eigenvectors of a general square ``x`` (complex).
    Eigenvector derivatives need ``enable_eigvec_derivs=True`` (they assume distinct
    eigenvalues and LAPACK's normalisation, as JAX)."""
    return eig_p.bind(x, compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=compute_right_eigenvectors,
                      enable_eigvec_derivs=bool(enable_eigvec_derivs),
                      implementation=implementation)


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition: ``(u, s, vh)``, or ``s`` without ``compute_uv``."""
    outs = svd_p.bind(x, full_matrices=full_matrices, compute_uv=compute_uv,
                      subset_by_index=None if subset_by_index is None
                      else tuple(int(i) for i in subset_by_index), algorithm=algorithm)
    if compute_uv:
        s, u, vh = outs
        return u, s, vh
    return outs[0]


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition: ``(q, r)`` (plus the column permutation with ``pivoting``)."""
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    return tuple(outs)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Solve a triangular system (see :class:`TriangularSolve`)."""
    return triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                   transpose_a=transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation produced by applying LAPACK-style row swaps ``pivots`` to
    ``range(permutation_size)`` (on concrete pivots)."""
    from jaxlite._src.core.trace import Tracer
    from jaxlite._src.runtime.array import ArrayImpl
    if isinstance(pivots, Tracer):
        raise NotImplementedError("jaxlite: lu_pivots_to_permutation needs concrete pivots; "
                                  "use the permutation output of lax.linalg.lu instead.")
    p = np.asarray(pivots)
    batch = p.shape[:-1]
    flat = p.reshape((-1, p.shape[-1]))
    out = np.empty((flat.shape[0], permutation_size), np.int32)
    for r, piv in enumerate(flat):
        perm = np.arange(permutation_size)
        for i, q in enumerate(piv):
            perm[i], perm[q] = perm[q], perm[i]
        out[r] = perm
    return ArrayImpl(out.reshape(batch + (permutation_size,)), False)
