"""Further linear-algebra primitives used by ``jax.scipy.linalg``: the Schur and Hessenberg
decompositions.

Both work on stacks of matrices (leading batch dimensions) through ``scipy.linalg``. As in
JAX, neither has derivative rules: differentiating through them raises NotImplementedError.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.prims.linalg import _check_matrix, _compute_dtype, _each, _LinalgPrimitive

__all__ = ["schur_p", "hessenberg_p", "schur", "hessenberg"]


class Schur(_LinalgPrimitive):
    """Schur decomposition ``a = vs @ t @ vs^H``: outputs ``(t, vs)``. For real input ``t``
    is quasi upper triangular (2x2 blocks for complex-conjugate eigenvalue pairs); for
    complex input it is upper triangular."""
    name = "schur"
    multiple_results = True

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(
            "The differentiation rules for the Schur factorization have not been "
            "implemented.")

    def impl(self, x, compute_schur_vectors=True, sort_eig_vals=False,
             select_callable=None):
        import scipy.linalg as sla
        cd = _compute_dtype(x.dtype)
        n = x.shape[-1]
        if x.size == 0:
            outs = [x.copy()]
            if compute_schur_vectors:
                outs.append(np.broadcast_to(np.eye(n, dtype=x.dtype), x.shape).copy())
            return outs

        def one(a):
            output = "complex" if np.dtype(cd).kind == "c" else "real"
            with np.errstate(all="ignore"):
                try:
                    t, z = sla.schur(a.astype(cd), output=output, check_finite=False)
                except (ValueError, np.linalg.LinAlgError):
                    t = z = np.full((n, n), np.nan, cd)
            return t.astype(x.dtype), z.astype(x.dtype)
        t, z = _each(x, one)
        return [t, z] if compute_schur_vectors else [t]

    def abstract_eval(self, x, compute_schur_vectors=True, sort_eig_vals=False,
                      select_callable=None):
        _check_matrix("schur", x, square=True)
        outs = [ShapedArray(x.shape, x.dtype)]
        if compute_schur_vectors:
            outs.append(ShapedArray(x.shape, x.dtype))
        return outs


class Hessenberg(_LinalgPrimitive):
    """Hessenberg reduction ``a = q @ h @ q^H`` with ``h`` zero below the first
    subdiagonal and ``q`` unitary: outputs ``(h, q)``. (JAX's primitive returns LAPACK's
    Householder form instead; jaxlite returns the explicit factors.)"""
    name = "hessenberg"
    multiple_results = True

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(
            "Differentiation rule for 'hessenberg' not implemented.")

    def impl(self, x):
        import scipy.linalg as sla
        cd = _compute_dtype(x.dtype)
        if x.size == 0:
            return [x.copy(), x.copy()]

        def one(a):
            with np.errstate(all="ignore"):
                h, q = sla.hessenberg(a.astype(cd), calc_q=True, check_finite=False)
            return np.triu(h, -1).astype(x.dtype), q.astype(x.dtype)
        return list(_each(x, one))

    def abstract_eval(self, x):
        _check_matrix("hessenberg", x, square=True)
        return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape, x.dtype)]


schur_p = Schur()
hessenberg_p = Hessenberg()


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """Schur decomposition ``(t, vs)`` of the square ``x`` (see :class:`Schur`)."""
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("jaxlite: schur does not sort eigenvalues.")
    outs = schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors),
                        sort_eig_vals=False, select_callable=None)
    return tuple(outs) if compute_schur_vectors else outs[0]


def hessenberg(x):
    """Hessenberg form and unitary factor ``(h, q)`` of the square ``x``."""
    return tuple(hessenberg_p.bind(x))
