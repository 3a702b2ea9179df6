"""jax.numpy polynomials (coefficients highest power first, as NumPy's poly1d API): poly,
polyadd, polysub, polymul, polydiv, polyder, polyint, polyval, polyfit, roots; plus unwrap.

``roots`` strips leading zeros, which needs a concrete input; under jit pass
``strip_zeros=False`` (then leading zeros give NaN roots), as in JAX.
"""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy import (array_edit, convolution, creation, cumulative, differences,
                                joining, linalg, linalg_ops, reductions, scalar_types, searching,
                                shape_ops, ufunc_objects, ufuncs)
from jaxlite._src.numpy.extra_creation import concrete, diag, named_jit, vander
from jaxlite._src.numpy.util import (asarray_value, check_arraylike, promote_dtypes,
                                     promote_dtypes_inexact)

__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyval", "polyfit", "roots", "unwrap"]


def _complex_dtype(dt):
    return np.dtype(np.complex128) if np.dtype(dt) in (np.float64, np.complex128) \
        else np.dtype(np.complex64)


def _convolve_full(a, b):
    """Full 1-D convolution: ``jnp.convolve(a, b, mode='full')``."""
    return convolution.convolve(a, b, mode="full")


@jit
def _roots_no_zeros(p):
    if p.size < 2:
        return creation.array([], dtype=_complex_dtype(p.dtype))
    A = diag(creation.ones((p.size - 2,), p.dtype), -1)
    A = A.at[0, :].set(-p[1:] / p[0])
    return linalg.eigvals(A)


@jit
def _roots_with_zeros(p, num_leading_zeros):
    from jaxlite._src.lax.sort import sort_key_val
    p = searching.where(len(p) == num_leading_zeros, 1.0, p)
    r = _roots_no_zeros(joining.roll(p, -num_leading_zeros))
    r = sort_key_val(r == 0, r)[1]
    return searching.where(creation.arange(r.size) < r.size - num_leading_zeros, r,
                           complex(np.nan, np.nan))


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p`` (eigenvalues of its companion
    matrix), as a complex array."""
    check_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(p)
    p = shape_ops.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p.size < 2:
        return creation.array([], dtype=_complex_dtype(p.dtype))
    nlz = searching.where(reductions.all(p == 0), len(p), reductions.argmin(p == 0))
    if strip_zeros:
        nlz = concrete(int, nlz, "leading zeros of the input of jnp.roots(). To use it within "
                       "a JIT-compiled context, pass strip_zeros=False, but be aware that "
                       "leading zeros will result in some returned roots being set to NaN.")
        return _roots_no_zeros(p[nlz:])
    return _roots_with_zeros(p, nlz)


@named_jit("polyfit", static_argnames=("deg", "rcond", "full", "cov"))
def _polyfit(x, y, w, deg, rcond, full, cov):
    order = deg + 1
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        (w,) = promote_dtypes_inexact(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = ufuncs.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, creation.asarray(rcond)
    if cov:
        vbase = linalg.inv(linalg_ops.dot(lhs.T, lhs)) / linalg_ops.outer(scale, scale)
        if cov == "unscaled":
            fac = creation.array(1.0)
        else:
            if len(x) <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (len(x) - order)
        if y.ndim == 1:
            return c, vbase * shape_ops.atleast_1d(fac)[None]
        return c, vbase[:, :, None] * shape_ops.atleast_1d(fac)[None, None, :]
    return c


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree ``deg`` to the points (x, y) (y may be 2-D, one
    fit per column); ``full`` adds residuals, rank, singular values and rcond, ``cov`` the
    coefficients' covariance."""
    if w is None:
        check_arraylike("polyfit", x, y)
    else:
        check_arraylike("polyfit", x, y, w)
        w = asarray_value(w)
    x, y = asarray_value(x), asarray_value(y)
    deg = concrete(int, deg, "deg argument of jnp.polyfit (deg must be int)")
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * float(scalar_types.finfo(x.dtype).eps)
    rcond = concrete(float, rcond, "rcond argument of jnp.polyfit (rcond must be float)")
    return _polyfit(x, y, w, deg=deg, rcond=rcond, full=bool(full), cov=cov)


@named_jit("poly")
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or of the
    characteristic polynomial of a square matrix)."""
    check_arraylike("poly", seq_of_zeros)
    (z,) = promote_dtypes_inexact(seq_of_zeros)
    z = shape_ops.atleast_1d(z)
    sh = z.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        z = linalg.eigvals(z)
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = z.dtype
    if len(z) == 0:
        return creation.ones((), dtype=dt)
    a = creation.ones((1,), dtype=dt)
    for k in range(len(z)):
        a = _convolve_full(a, creation.array([1, -z[k]], dtype=dt))
    return a


@named_jit("polyval", static_argnames=("unroll",))
def _polyval(p, x, unroll):
    from jaxlite._src.lax.control_flow import scan
    shape = np.broadcast_shapes(p.shape[1:], x.shape)
    y = creation.zeros(shape, dtype=x.dtype)
    y, _ = scan(lambda y, c: (y * x + c, None), y, p, unroll=unroll)
    return y


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients ``p`` evaluated at ``x`` (Horner's rule in a
    scan)."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    if p.ndim == 0:
        raise IndexError("tuple index out of range: polyval's coefficients p must have at "
                         "least one dimension (highest power first)")
    return _polyval(p, x, unroll=unroll)


@named_jit("polyadd")
def _polyadd(a1, a2):
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[-a2.shape[0]:].add(a2)
    return a2.at[-a1.shape[0]:].add(a1)


def polyadd(a1, a2):
    """Sum of two polynomials (coefficient arrays aligned at the constant term)."""
    check_arraylike("polyadd", a1, a2)
    return _polyadd(*promote_dtypes(a1, a2))


def polysub(a1, a2):
    """Difference of two polynomials."""
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    return _polysub(a1, a2)


@named_jit("polysub")
def _polysub(a1, a2):
    return _polyadd(a1, -a2)


@named_jit("polyint", static_argnames=("m",))
def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial; ``k`` gives the integration constants
    (a scalar or one per integration)."""
    m = concrete(operator.index, m, "'m' argument of jnp.polyint")
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = shape_ops.atleast_1d(k)
    if len(k) == 1:
        k = creation.full((m,), k[0])
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = (creation.arange(len(p) + m, dtype=p.dtype)[None]
            - creation.arange(m, dtype=p.dtype)[:, None])
    coeff = ufunc_objects.maximum(1, grid).prod(0)[::-1]
    return ufuncs.true_divide(joining.concatenate((p, k)), coeff)


@named_jit("polyder", static_argnames=("m",))
def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial."""
    check_arraylike("polyder", p)
    m = concrete(operator.index, m, "'m' argument of jnp.polyder")
    (p,) = promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    coeff = (creation.arange(m, len(p), dtype=p.dtype)[None]
             - creation.arange(m, dtype=p.dtype)[:, None]).prod(0)
    return p[:-m] * coeff[::-1]


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials (a full convolution of the coefficients)."""
    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(a1, a2)
    if trim_leading_zeros and (len(a1) > 1 or len(a2) > 1):
        a1, a2 = array_edit.trim_zeros(a1, trim="f"), array_edit.trim_zeros(a2, trim="f")
    if len(a1) == 0:
        a1 = creation.zeros(1, dtype=a2.dtype)
    if len(a2) == 0:
        a2 = creation.zeros(1, dtype=a1.dtype)
    return _convolve_full(a1, a2)


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial division ``u / v``."""
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(u, v)
    m, n = len(u) - 1, len(v) - 1
    scale = 1.0 / v[0]
    q = creation.zeros(max(m - n + 1, 1), dtype=u.dtype)
    for k in range(0, m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        tol = float(np.sqrt(np.finfo(u.dtype).eps))
        mask = concrete(np.asarray, ufuncs.abs(u) >= tol, "remainder of jnp.polydiv with "
                        "trim_leading_zeros=True")
        nz = np.flatnonzero(mask)
        u = u[nz[0]:] if nz.size else u[:0]
    return q, u


@named_jit("unwrap", static_argnames=("axis",))
def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """``p`` with jumps larger than ``discont`` (default period/2) along ``axis`` replaced by
    their wrap-around equivalents modulo ``period``."""
    check_arraylike("unwrap", p)
    p, period = promote_dtypes(p, period)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period // 2 if dtypes.issubdtype(p.dtype, np.integer) else period / 2
    dd = differences.diff(p, axis=axis)
    ddmod = ufuncs.mod(dd + interval, period) - interval
    ddmod = searching.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    ph_correct = searching.where(ufuncs.abs(dd) < discont, 0, ddmod - dd)
    n = p.shape[axis]
    first = lax_shape.slice_in_dim(p, 0, 1, axis=axis)
    rest = lax_shape.slice_in_dim(p, 1, n, axis=axis) + cumulative.cumsum(ph_correct, axis=axis)
    return joining.concatenate((first, rest), axis=axis)
