"""jax.numpy diagonal/triangle helpers, index grids and small utilities: diag, diagflat,
diag_indices(_from), tril, triu, tril/triu_indices(_from), mask_indices, fill_diagonal,
indices, ix_, mgrid, ogrid, r_, c_, s_, index_exp, fromfunction, vander, astype, iterable,
ComplexWarning.

Everything is written with other jnp/lax functions (so it traces, differentiates and batches);
arguments that fix an output shape must be concrete, as in JAX.
"""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.errors import ConcretizationTypeError
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy import creation, joining, linalg_ops, searching, shape_ops, spacing, ufuncs
from jaxlite._src.numpy.util import asarray_value, check_arraylike, promote_dtypes

__all__ = ["diag", "diagflat", "diag_indices", "diag_indices_from", "tril", "triu",
           "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "mask_indices", "fill_diagonal", "indices", "ix_", "mgrid", "ogrid", "r_", "c_",
           "s_", "index_exp", "fromfunction", "vander", "astype", "iterable",
           "ComplexWarning"]


# NumPy's class (as jax.numpy.ComplexWarning), so warning filters match either name.
ComplexWarning = np.exceptions.ComplexWarning


def concrete(fn, value, context):
    """``fn(value)`` for a concrete ``value``; JAX's ConcretizationTypeError for a tracer."""
    if isinstance(value, Tracer):
        raise ConcretizationTypeError(value, f"The problem arose with the {context}.")
    return fn(value)


def named_jit(name, **kw):
    """jit of the decorated helper, named ``name`` in jaxprs (as JAX's public function)."""
    def deco(f):
        f.__name__ = f.__qualname__ = name
        return jit(f, **kw)
    return deco


def _index(value, context):
    return concrete(operator.index, value, context)


# -- diagonals and triangles


def diag(v, k=0):
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with the 1-D ``v`` on its
    ``k``-th diagonal."""
    check_arraylike("diag", v)
    return _diag(asarray_value(v), _index(k, "k argument of jnp.diag()"))


@partial(jit, static_argnames=("k",))
def _diag(v, k):
    shape = np.shape(v)
    if len(shape) == 1:
        zero = lax_shape.full_like(v, 0, shape=())
        n = shape[0] + abs(k)
        v = lax_shape.pad(v, zero, ((max(0, -k), max(0, k), 0),))
        return searching.where(creation.eye(n, k=k, dtype=bool), v[:, None], zero)
    if len(shape) == 2:
        return linalg_ops.diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal."""
    check_arraylike("diagflat", v)
    k = _index(k, "k argument of jnp.diagflat()")
    v_ravel = shape_ops.ravel(v)
    n = v_ravel.shape[0]
    adj = n + abs(k)
    res = creation.zeros(adj * adj, dtype=v_ravel.dtype)
    i = creation.arange(0, adj - abs(k))
    fi = i + k + i * adj if k >= 0 else i + (i - k) * adj
    return res.at[fi].set(v_ravel).reshape(adj, adj)


def _index_dtype():
    return dtypes.default_int_dtype()


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an ``n``-by-...-by-``n`` array of rank ``ndim``."""
    n = _index(n, "'n' argument of jnp.diag_indices()")
    ndim = _index(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax_shape.iota(_index_dtype(), n),) * ndim


def diag_indices_from(arr):
    """diag_indices for the (square, rank >= 2) array ``arr``."""
    check_arraylike("diag_indices_from", arr)
    s = np.shape(arr)
    if len(s) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], ndim=len(s))


@named_jit("tril", static_argnames=("k",))
def _tril(m, k):
    shape = np.shape(m)
    if len(shape) < 2:
        raise ValueError("Argument to jax.numpy.tril must be at least 2D")
    mask = creation.tri(*shape[-2:], k=k, dtype=bool)
    which = lax_shape.broadcast(mask, shape[:-2])
    return lax_ew.select(which, m, creation.zeros_like(m))


@named_jit("triu", static_argnames=("k",))
def _triu(m, k):
    shape = np.shape(m)
    if len(shape) < 2:
        raise ValueError("Argument to jax.numpy.triu must be at least 2D")
    mask = creation.tri(*shape[-2:], k=k - 1, dtype=bool)
    which = lax_shape.broadcast(mask, shape[:-2])
    return lax_ew.select(which, creation.zeros_like(m), m)


def tril(m, k=0):
    """``m`` with the elements above the ``k``-th diagonal of its last two axes zeroed."""
    check_arraylike("tril", m)
    return _tril(asarray_value(m), k=_index(k, "k argument of jnp.tril()"))


def triu(m, k=0):
    """``m`` with the elements below the ``k``-th diagonal of its last two axes zeroed."""
    check_arraylike("triu", m)
    return _triu(asarray_value(m), k=_index(k, "k argument of jnp.triu()"))


def _triu_size(n, m, k):
    # number of elements of an n-by-m matrix on or above diagonal k
    if k < 0:
        return n * m - _triu_size(m, n, (1 - k))
    if k >= m:
        return 0
    mk = min(n, m - k)
    return mk * (mk + 1) // 2 + mk * (m - k - mk)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (on and below diagonal ``k``) of an
    ``n``-by-``m`` matrix."""
    n = _index(n, "n argument of jnp.tril_indices")
    k = _index(k, "k argument of jnp.tril_indices")
    m = n if m is None else _index(m, "m argument of jnp.tril_indices")
    return tuple(searching.nonzero(tril(creation.ones((n, m)), k=k), size=_triu_size(m, n, -k)))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (on and above diagonal ``k``) of an
    ``n``-by-``m`` matrix."""
    n = _index(n, "n argument of jnp.triu_indices")
    k = _index(k, "k argument of jnp.triu_indices")
    m = n if m is None else _index(m, "m argument of jnp.triu_indices")
    return tuple(searching.nonzero(triu(creation.ones((n, m)), k=k), size=_triu_size(n, m, k)))


def _shape_of_2d(arr, name):
    if hasattr(arr, "shape"):
        shape = arr.shape
    else:
        check_arraylike(name, arr)
        shape = np.shape(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr, k=0):
    """tril_indices for the shape of the 2-D ``arr``."""
    shape = _shape_of_2d(arr, "tril_indices_from")
    return tril_indices(shape[0], k=k, m=shape[1])


def triu_indices_from(arr, k=0):
    """triu_indices for the shape of the 2-D ``arr``."""
    shape = _shape_of_2d(arr, "triu_indices_from")
    return triu_indices(shape[0], k=k, m=shape[1])


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. mask_func=jnp.triu)."""
    i, j = searching.nonzero(mask_func(creation.ones((n, n)), k), size=size)
    return (i, j)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of ``a`` with its main diagonal set to ``val`` (repeated as needed); JAX arrays
    are immutable, so ``inplace=False`` is required."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a, val = asarray_value(a), asarray_value(val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and not all(n == a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = diag_indices(n, a.ndim)
    if val.ndim == 0:
        return a.at[idx].set(val)
    flat = shape_ops.ravel(val)
    size = flat.shape[0]
    if size == 0:
        return a
    reps = -(-n // size)
    return a.at[idx].set(joining.tile(flat, reps)[:n])


# -- index grids


def indices(dimensions, dtype=None, sparse=False):
    """A grid of indices for an array of shape ``dimensions``: one array per axis (stacked,
    or broadcastable pieces with ``sparse=True``)."""
    dimensions = tuple(_index(d, "dimensions argument of jnp.indices") for d in dimensions)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    dtypes.check_user_dtype_supported(dtype, "indices")
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"indices requires an integer dtype, got {dtype}")
    n = len(dimensions)
    out = []
    for i, d in enumerate(dimensions):
        iota = lax_shape.iota(dtype, d)
        shape = (1,) * i + (d,) + (1,) * (n - i - 1)
        if sparse:
            out.append(lax_shape.broadcast_in_dim(iota, shape, (i,)))
        else:
            out.append(lax_shape.broadcast_in_dim(iota, dimensions, (i,)))
    if sparse:
        return tuple(out)
    return joining.stack(out, 0) if out else creation.array([], dtype=dtype)


def ix_(*args):
    """Open-mesh index arrays from 1-D sequences: ``a[ix_(rows, cols)]`` picks the
    cross product."""
    check_arraylike("ix", *args)
    args = [asarray_value(a) for a in args]
    n = len(args)
    out = []
    for i, a in enumerate(args):
        if len(a.shape) != 1:
            raise ValueError("Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}")
        if a.dtype == bool:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = a.shape[0]
        if a.shape[0] == 0:
            out.append(lax_shape.full(shape, np.zeros((), np.intp)))
        else:
            out.append(lax_shape.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(out)


def _grid_1d(s, op_name):
    start = concrete(lambda x: x, s.start, f"slice start of jnp.{op_name}") or 0
    stop = concrete(lambda x: x, s.stop, f"slice stop of jnp.{op_name}")
    step = concrete(lambda x: x, s.step, f"slice step of jnp.{op_name}") or 1
    if np.iscomplex(step):
        return spacing.linspace(start, stop, int(abs(step)))
    return creation.arange(start, stop, step)


class _Mgrid:
    """``mgrid[0:3, 0:4]``: a dense (stacked) mesh grid from slices; a complex step
    ``5j`` means five points including the stop."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_1d(key, "mgrid")
        out = promote_dtypes(*[_grid_1d(k, "mgrid") for k in key])
        if not out:
            return creation.arange(0)
        return joining.stack(creation.meshgrid(*out, indexing="ij", sparse=False), 0)


class _Ogrid:
    """``ogrid[0:3, 0:4]``: an open (sparse, broadcastable) mesh grid from slices."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_1d(key, "ogrid")
        out = promote_dtypes(*[_grid_1d(k, "ogrid") for k in key])
        return creation.meshgrid(*out, indexing="ij", sparse=True)


class _AxisConcat:
    """Concatenation by indexing (NumPy's r_/c_): slices become ranges, an optional leading
    string directive sets 'axis,ndmin,trans1d' or makes a row ('r') / column ('c') matrix."""
    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"

    def __getitem__(self, key):
        key_tup = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = key_tup[0] if key_tup else None
        if isinstance(directive, str):
            key_tup = key_tup[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec = directive.split(",")
                k = len(vec)
                vec = vec + params[k:] if k < 4 else vec[:3] + [params[-1]]
                try:
                    params = list(map(int, vec))
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in key_tup:
            if isinstance(item, slice):
                newobj = _grid_1d(item, self.op_name)
                item_ndim = 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                newobj = creation.array(item, copy=False)
                item_ndim = newobj.ndim
            newobj = creation.array(newobj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                shape_obj = tuple(range(ndmin))
                num_lshifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                shape_obj = tuple(shape_obj[num_lshifts:] + shape_obj[:num_lshifts])
                newobj = shape_ops.transpose(newobj, shape_obj)
            output.append(newobj)
        res = joining.concatenate(tuple(output), axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = shape_ops.expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0


class RClass(_AxisConcat):
    """``r_[...]``: concatenate along the first axis (slices become aranges)."""
    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
    """``c_[...]``: stack 1-D pieces as columns (concatenate along the last axis, at least
    2-D)."""
    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


mgrid = _Mgrid()
ogrid = _Ogrid()
r_ = RClass()
c_ = CClass()
s_ = np.s_
index_exp = np.index_exp


# -- misc


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` applied to the index grid of ``shape`` (one coordinate array per axis),
    vectorised with vmap as JAX does."""
    from jaxlite._src.api.vmap import vmap
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(_index(d, "shape argument of jnp.fromfunction()") for d in shape)
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(creation.arange(s, dtype=dtype) for s in shape), **kwargs)


@named_jit("vander", static_argnames=("N", "increasing"))
def _vander(x, N, increasing):
    iota = lax_shape.iota(x.dtype, N)
    if not increasing:
        iota = lax_ew.sub(np.asarray(N - 1, x.dtype), iota)
    base, expo = x[..., None], shape_ops.expand_dims(iota, tuple(range(x.ndim)))
    if not dtypes.issubdtype(x.dtype, np.inexact):
        # jaxlite's integer power needs equal shapes (JAX broadcasts inside power)
        base, expo = shape_ops.broadcast_arrays(base, expo)
    return ufuncs.power(base, expo)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns are powers of ``x`` (decreasing from
    ``N-1`` unless ``increasing``)."""
    check_arraylike("vander", x)
    x = asarray_value(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else _index(N, "'N' argument of jnp.vander()")
    if N < 0:
        raise ValueError("N must be nonnegative")
    return _vander(x, N=N, increasing=bool(increasing))


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype`` (None means the default float type). Complex to bool
    tests for nonzero."""
    check_arraylike("astype", x)
    x = asarray_value(x)
    if dtypes.is_extended(x.dtype):   # key arrays: only to their own dtype (a no-op)
        if dtype == x.dtype:
            return x
        name = dtype if dtypes.is_extended(dtype) else np.dtype(dtype).name
        raise ValueError(f"Cannot convert_element_type from {x.dtype} to {name}")
    if dtype is None:
        dtype = dtypes.default_float_dtype()
    else:
        dtypes.check_user_dtype_supported(dtype, "astype")
        dtype = dtypes.canonicalize_dtype(dtype)
    if dtypes.issubdtype(x.dtype, np.complexfloating) and np.dtype(dtype) == np.bool_:
        x = ufuncs.not_equal(x, 0)
    out = lax_ew._convert_element_type(x, dtype, False)
    if copy and out is x:
        out = creation.array(x, copy=True)
    return out


def iterable(y):
    """True if ``iter(y)`` works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True
