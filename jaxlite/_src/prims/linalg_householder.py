"""QR factorisation in LAPACK's Householder form: ``geqrf`` (the reflectors and their
scale factors, what ``jnp.linalg.qr(mode="raw")`` returns) and ``ormqr`` (Q, Q^T or Q^H
applied to a matrix without forming Q, LAPACK's ormqr/unmqr); the explicit Q is
``householder_product`` (prims/linalg_more.py).

They work on stacks of matrices (leading batch dimensions) through ``scipy.linalg.lapack``.
As in JAX, none has derivative rules: differentiating through them raises
NotImplementedError.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.prims.linalg import _check_matrix, _compute_dtype, _LinalgPrimitive
from jaxlite._src.prims.linalg_more import _lapack, _no_jvp

__all__ = ["geqrf_p", "ormqr_p", "geqrf", "ormqr"]


def _stack(x, batch):
    return x.reshape((-1,) + x.shape[len(batch):])


class Geqrf(_LinalgPrimitive):
    """``geqrf``: ``a`` of shape ``[..., m, n]`` -> ``(r_and_reflectors, taus)``, R in the
    upper triangle, the Householder vectors below it, ``taus`` of shape ``[..., min(m, n)]``."""
    name = "geqrf"
    multiple_results = True
    jvp = _no_jvp("geqrf")

    def impl(self, a):
        _check_matrix("geqrf", a)
        cd = _compute_dtype(a.dtype)
        m, n = a.shape[-2:]
        batch = a.shape[:-2]
        out = np.empty(a.shape, cd)
        taus = np.empty(batch + (min(m, n),), cd)
        if a.size:
            f = _lapack("geqrf", cd)
            for i, mat in enumerate(_stack(a.astype(cd), batch)):
                qr, tau, _, _ = f(mat)
                out.reshape((-1, m, n))[i] = qr
                taus.reshape((-1, min(m, n)))[i] = tau
        return [out.astype(a.dtype), taus.astype(a.dtype)]

    def abstract_eval(self, a):
        _check_matrix("geqrf", a)
        m, n = a.shape[-2:]
        return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (min(m, n),),
                                                           a.dtype)]


def _check_taus(name, a, taus):
    _check_matrix(name, a)
    if taus.dtype != a.dtype:
        raise TypeError(f"{name}: taus must have the dtype of a ({a.dtype.name}), got "
                        f"{taus.dtype.name}.")
    if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
        raise ValueError(f"{name}: taus must have shape a.shape[:-2] + (k,), got a of shape "
                         f"{a.shape} and taus of shape {taus.shape}.")


class Ormqr(_LinalgPrimitive):
    """``ormqr(a, taus, c, left, transpose)``: Q @ c, Q^T @ c, c @ Q or c @ Q^T (Q^H for
    complex types) with Q given by ``geqrf``'s reflectors, without forming Q."""
    name = "ormqr"
    jvp = _no_jvp("ormqr")

    def impl(self, a, taus, c, left, transpose):
        _check_ormqr(a, taus, c, left)
        cd = _compute_dtype(np.result_type(a.dtype, c.dtype))
        batch = c.shape[:-2]
        out = np.empty(c.shape, cd)
        if c.size:
            f = _lapack("ormqr", cd)
            trans = ("C" if np.dtype(cd).kind == "c" else "T") if transpose else "N"
            side = "L" if left else "R"
            k = taus.shape[-1]
            for i, (mat, tau, cm) in enumerate(zip(_stack(a.astype(cd), batch),
                                                   _stack(taus.astype(cd), batch),
                                                   _stack(c.astype(cd), batch))):
                if k == 0:
                    out.reshape((-1,) + c.shape[-2:])[i] = cm
                    continue
                # LAPACK wants the reflectors as an [m, k] block and a workspace size
                lwork = max(1, cm.shape[1] if left else cm.shape[0]) * 64
                res = f(side, trans, np.asfortranarray(mat[:, :k]), tau, cm, lwork)
                out.reshape((-1,) + c.shape[-2:])[i] = res[0]
        return out.astype(c.dtype)

    def abstract_eval(self, a, taus, c, left, transpose):
        _check_ormqr(a, taus, c, left)
        return ShapedArray(c.shape, c.dtype)


def _check_ormqr(a, taus, c, left):
    # (arrays or avals: eager execution runs impl alone, so impl checks too)
    _check_taus("ormqr", a, taus)
    if c.ndim != a.ndim or c.shape[:-2] != a.shape[:-2]:
        raise ValueError(f"ormqr: c must have a's batch dimensions, got a of shape "
                         f"{a.shape} and c of shape {c.shape}.")
    m = a.shape[-2]
    if left and c.shape[-2] != m:
        raise ValueError(
            "ormqr with left=True expects c to have the same number of rows as the "
            f"Householder matrix a. Got a shape {a.shape[-2:]} and c shape {c.shape[-2:]}.")
    if not left and c.shape[-1] != m:
        raise ValueError(
            "ormqr with left=False expects c to have the same number of columns as the "
            f"Householder matrix a has rows. Got a shape {a.shape[-2:]} and c shape "
            f"{c.shape[-2:]}.")
    if not dtypes.issubdtype(c.dtype, np.inexact) or c.dtype != a.dtype:
        raise TypeError(f"ormqr: c must have the dtype of a ({a.dtype.name}), got "
                        f"{c.dtype.name}.")


geqrf_p = Geqrf()
ormqr_p = Ormqr()


def geqrf(a):
    """QR factorisation of ``a`` (``[..., m, n]``) in Householder form: ``(a_out, taus)``
    with R in the upper triangle of ``a_out`` and the reflectors below it."""
    return tuple(geqrf_p.bind(a))


def ormqr(a, taus, c, *, left=True, transpose=False):
    """``Q @ c`` (``left=True``), ``c @ Q`` (``left=False``), or with ``Q^T`` (``Q^H`` for
    complex types) when ``transpose``, Q being given by ``geqrf``'s reflectors ``a``
    (``jnp.linalg.qr(x, mode="raw")[0].mT``) and ``taus``, without forming Q."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))
