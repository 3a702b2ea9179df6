"""jax.numpy histograms and binning: bincount, digitize, histogram_bin_edges, histogram,
histogram2d, histogramdd and interp."""
from __future__ import annotations

import builtins
import math
import operator
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.lax import sort as lax_sort
from jaxlite._src.numpy import reductions as R
from jaxlite._src.numpy.differences import diff
from jaxlite._src.numpy.reductions import _arraylike
from jaxlite._src.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["bincount", "digitize", "histogram", "histogram_bin_edges", "histogram2d",
           "histogramdd", "interp"]

_bmin, _bmax, _brange = builtins.min, builtins.max, builtins.range


def _where(c, x, y):
    from jaxlite._src.numpy.ufuncs import where
    return where(c, x, y)


def _ufuncs():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _concrete_error(x, context):
    from jaxlite._src.core.errors import ConcretizationTypeError
    return ConcretizationTypeError(x, context)


# ----------------------------------------------------------------------------- histograms
def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
    """Count occurrences of each non-negative integer in ``x`` (summing ``weights``
    instead when given). The output length is ``max(x) + 1`` (at least ``minlength``),
    which needs a concrete ``x`` unless the static ``length`` is given."""
    (x,) = _arraylike("bincount", x)
    if x.dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if np.ndim(x) != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        if isinstance(x, Tracer):
            raise _concrete_error(
                x, "The error occurred because of argument 'x' of jnp.bincount. To avoid "
                   "this error, pass a static `length` argument.")
        xv = np.asarray(x)
        length = _bmax(minlength, xv.size and int(_bmax(0, xv.max())) + 1)
    else:
        length = operator.index(length)
    if weights is None:
        weights = np.array(1, dtype=dtypes.default_int_dtype())
    elif np.shape(x) != np.shape(weights):
        raise ValueError("type of weights must match type of x.")
    from jaxlite._src.numpy.creation import zeros
    return zeros(length, dtypes.dtype(weights)).at[_ufuncs().clip(x, 0)].add(weights,
                                                                          mode="drop")


@partial(jit, static_argnames=("right", "method"))
def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each value of ``x`` falls in (``bins`` monotonic, increasing or
    decreasing)."""
    from jaxlite._src.numpy.sorting import searchsorted
    x, bins_arr = _arraylike("digitize", x, bins)
    right = bool(right)
    if bins_arr.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins_arr.shape[0] == 0:
        return lax_shape.full(np.shape(x), 0, np.int32)
    side = "right" if not right else "left"
    kw = {} if method is None else {"method": method}
    U = _ufuncs()
    return _where(U.greater_equal(bins_arr[-1], bins_arr[0]),
                  searchsorted(bins_arr, x, side=side, **kw),
                  U.subtract(bins_arr.shape[0],
                             searchsorted(bins_arr[::-1], x, side=side, **kw)))


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins :func:`histogram` would use (``bins`` equal-width bins over
    ``range`` or the data's extent, or the given edges)."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.numpy.spacing import linspace
    arr = asarray(a)
    dt = R._to_inexact(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dt)
    nb = operator.index(bins)
    if range is None:
        range = [R.min(arr), R.max(arr)]
    rng = asarray(range, dtype=dt)
    if np.shape(rng) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    U = _ufuncs()
    same = U.equal(R.ptp(rng), 0)
    lo = _where(same, U.subtract(rng[0], 0.5), rng[0])
    hi = _where(same, U.add(rng[1], 0.5), rng[1])
    return linspace(lo, hi, nb + 1, dtype=dt)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts (or summed ``weights``) of ``a`` in each bin, and the bin edges. With
    ``density`` the counts are normalised to a probability density."""
    from jaxlite._src.numpy.creation import ones_like, zeros
    from jaxlite._src.numpy.sorting import searchsorted
    U = _ufuncs()
    if weights is None:
        a, _ = _arraylike("histogram", a, bins)
        (a,) = promote_dtypes_inexact(a)
        weights = ones_like(a)
    else:
        a, _, weights = _arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote_dtypes_inexact(a, weights)
    edges = histogram_bin_edges(a, bins, range, weights)
    idx = searchsorted(edges, a, side="right")
    idx = _where(U.equal(a, edges[-1]), len(edges) - 1, idx)
    counts = zeros(len(edges), weights.dtype).at[idx].add(weights)[1:]
    if density:
        counts = U.true_divide(U.true_divide(counts, diff(edges)), R.sum(counts))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """Two-dimensional histogram of the points (x, y): counts and the edges per axis."""
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.numpy.joining import stack
    x, y = _arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        e = asarray(bins)
        bins = [e, e]
    hist, edges = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """Histogram of N points in D dimensions (``sample`` has shape (N, D)): the counts array
    and the list of bin edges per dimension."""
    from jaxlite._src.numpy.sorting import searchsorted
    from jaxlite._src.numpy.shape_ops import reshape
    U = _ufuncs()
    if weights is None:
        (sample,) = _arraylike("histogramdd", sample)
        (sample,) = promote_dtypes_inexact(sample)
    else:
        sample, weights = _arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(sample, weights)
    N, D = np.shape(sample)
    if range is not None and (len(range) != D or builtins.any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs "
                         f"or Nones; got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = D * [bins]
    else:
        if len(per_dim) != D:
            raise ValueError("should be a bin for each dimension.")
    idx_by_dim, edges_by_dim = [], []
    for i in _brange(D):
        col = sample[:, i]
        edges = histogram_bin_edges(col, per_dim[i], None if range is None else range[i],
                                    weights)
        idx = searchsorted(edges, col, side="right")
        idx = _where(U.equal(col, edges[-1]), U.subtract(idx, 1), idx)
        idx_by_dim.append(idx)
        edges_by_dim.append(edges)
    nbins = tuple(len(e) + 1 for e in edges_by_dim)
    flat = None
    stride = 1
    for idx, nb in reversed(list(zip(idx_by_dim, nbins))):
        term = U.multiply(U.clip(idx, 0, nb - 1), stride)
        flat = term if flat is None else U.add(flat, term)
        stride *= nb
    hist = reshape(bincount(flat, weights, length=math.prod(nbins)), nbins)
    hist = hist[D * (slice(1, -1),)]
    if density:
        hist = lax.convert_element_type(hist, sample.dtype)
        hist = U.true_divide(hist, R.sum(hist))
        for k, e in enumerate(edges_by_dim):
            shp = [1] * D
            shp[k] = len(e) - 1
            hist = U.true_divide(hist, reshape(diff(e), shp))
    return hist, edges_by_dim


def _interp_impl(x, xp, fp, left=None, right=None, period=None):
    from jaxlite._src.numpy.joining import concatenate
    from jaxlite._src.numpy.sorting import searchsorted
    U = _ufuncs()
    x, xp, fp = _arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x_arr, xp_arr = promote_dtypes_inexact(x, xp)
    (fp_arr,) = promote_dtypes_inexact(fp)
    ext = {}
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str):
            if v != "extrapolate":
                raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                                 f"but got: {v!r}")
            ext[name] = True
        else:
            ext[name] = False
    if dtypes.issubdtype(x_arr.dtype, np.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = U.abs(period)
        x_arr = U.remainder(x_arr, period)
        xp_arr = U.remainder(xp_arr, period)
        xp_arr, fp_arr = lax_sort.sort_key_val(xp_arr, fp_arr, -1)
        xp_arr = concatenate([U.subtract(xp_arr[-1:], period), xp_arr,
                              U.add(xp_arr[:1], period)])
        fp_arr = concatenate([fp_arr[-1:], fp_arr, fp_arr[:1]])
    i = U.clip(searchsorted(xp_arr, x_arr, side="right"), 1, len(xp_arr) - 1)
    im1 = U.subtract(i, 1)
    df = U.subtract(fp_arr[i], fp_arr[im1])
    dx = U.subtract(xp_arr[i], xp_arr[im1])
    delta = U.subtract(x_arr, xp_arr[im1])
    eps = np.spacing(np.finfo(xp_arr.dtype).eps)
    dx0 = U.less_equal(lax.abs(dx), eps)
    f = _where(dx0, fp_arr[im1], U.add(fp_arr[im1], U.multiply(
        U.true_divide(delta, _where(dx0, 1, dx)), df)))
    if not ext["left"] and period is None:
        f = _where(U.less(x_arr, xp_arr[0]), fp_arr[0] if left is None else left, f)
    if not ext["right"] and period is None:
        f = _where(U.greater(x_arr, xp_arr[-1]), fp_arr[-1] if right is None else right, f)
    return f


_interp_impl.__name__ = _interp_impl.__qualname__ = "_interp"
_interp_jits: dict = {}


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (``xp``, ``fp``) at ``x``.

    Outside ``[xp[0], xp[-1]]`` the result is ``left``/``right`` (default: the end values),
    or the linear extrapolation when they are "extrapolate"; ``period`` makes ``xp``
    periodic.
    """
    static = []
    if isinstance(left, str) or left is None:
        static.append("left")
    if isinstance(right, str) or right is None:
        static.append("right")
    if period is None:
        static.append("period")
    key = tuple(static)
    fn = _interp_jits.get(key)
    if fn is None:
        fn = _interp_jits[key] = jit(_interp_impl, static_argnames=static)
    return fn(x, xp, fp, left, right, period)
