"""jax.numpy reductions: sum, prod, max, min, all, any, mean, var, std, argmax/argmin and
their NaN-ignoring variants (the cumulative scans are in ``cumulative.py``).

Everything is expressed with lax operations, in the same order JAX emits them, so traced
programs print the same jaxpr as JAX's. The functions JAX wraps in a (non-inlined) ``jit`` are
wrapped here too (``cumsum``, ``var``, ``nansum`` ...): they appear as nested ``jit``
equations named like JAX's.
"""
from __future__ import annotations

import builtins
import operator
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import (asarray_value, canonicalize_axis, check_arraylike,
                                     promote_dtypes_numeric)
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std",
           "argmax", "argmin", "nanargmax", "nanargmin", "ptp", "count_nonzero",
           "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]

_bmax, _bmin, _ball, _bsum = builtins.max, builtins.min, builtins.all, builtins.sum


# ----------------------------------------------------------------------------- helpers
def _arraylike(name, *args):
    """Check that the arguments are arrays or scalars and return them as jaxlite values."""
    check_arraylike(name, *args)
    return [asarray_value(a) for a in args]


def _where(c, x, y):
    from jaxlite._src.numpy.where_op import where
    return where(c, x, y)


def _isnan(x):
    return lax.ne(x, x)


def _np_const(x, value):
    """A NumPy scalar constant of ``x``'s dtype (it becomes a literal when traced)."""
    return np.array(value, dtype=x.dtype)


_ISSUB_CACHE: dict = {}


def _issub(dt, kind):
    """Cached ``dtypes.issubdtype(dt, kind)`` (the reductions ask it on every call)."""
    key = (dt, kind)
    r = _ISSUB_CACHE.get(key)
    if r is None:
        r = _ISSUB_CACHE[key] = dtypes.issubdtype(dt, kind)
    return r


def _to_inexact(dt):
    dt = np.dtype(dt)
    if _issub(dt, np.inexact):
        return dt
    return dtypes.default_float_dtype()


def _user_dtype(dtype, name):
    dtypes.check_user_dtype_supported(dtype, name)
    return dtypes.canonicalize_dtype(dtype)


def _upcast_f16(dt):
    dt = np.dtype(dt)
    if dt.itemsize == 2 and _issub(dt, np.floating):
        return np.dtype(np.float32)
    return dt


def _promote_integer_dtype(dt):
    """Small integers and bools accumulate in the default (u)int type, as in JAX."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return dtypes.default_int_dtype()
    if _issub(dt, np.unsignedinteger):
        d = dtypes.default_uint_dtype()
        return d if dt.itemsize < d.itemsize else dt
    if _issub(dt, np.integer):
        d = dtypes.default_int_dtype()
        return d if dt.itemsize < d.itemsize else dt
    return dt


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _check_where(name, where):
    if where is None:
        return None
    (where,) = _arraylike(name, where)
    if where.dtype != np.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={where.dtype!r}.")
    return where


def _optional_axes(axis):
    """``axis`` as None, an int or a tuple of ints (it must be static)."""
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(i) for i in axis)


def _reduction_axes(a, axis):
    nd = np.ndim(a)
    if axis is None:
        return tuple(range(nd))
    axes = tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    canon = tuple(canonicalize_axis(x, nd) for x in axes)
    if len(set(canon)) != len(canon):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return canon


_INIT_CACHE: dict = {}


def _init_value(dt, value):
    """Cached :func:`_make_init_value` (the result is never mutated)."""
    key = (np.dtype(dt), value)
    r = _INIT_CACHE.get(key)
    if r is None:
        r = _INIT_CACHE[key] = _make_init_value(dt, value)
    return r


def _make_init_value(dt, value):
    """The identity of a reduction as a NumPy scalar of dtype ``dt`` (infinities become the
    extreme finite values for dtypes without infinity; integer overflow saturates)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.array(value > 0, dtype=dt)
    if _issub(dt, np.integer):
        if np.isinf(value) or not (dtypes.iinfo(dt).min <= value <= dtypes.iinfo(dt).max):
            info = dtypes.iinfo(dt)
            return np.array(info.min if value < 0 else info.max, dtype=dt)
        return np.array(value, dtype=dt)
    with np.errstate(over="ignore"):
        return np.array(value, dtype=dt)


# name -> (elementwise op, lax reduction) for numeric and for boolean operands
_OPS = {
    "sum": ((lax.add, lax_red.reduce_sum), (lax.bitwise_or, lax_red.reduce_or)),
    "prod": ((lax.mul, lax_red.reduce_prod), (lax.bitwise_and, lax_red.reduce_and)),
    "max": ((lax.max, lax_red.reduce_max), (lax.max, lax_red.reduce_max)),
    "min": ((lax.min, lax_red.reduce_min), (lax.min, lax_red.reduce_min)),
    "and": ((lax.bitwise_and, lax_red.reduce_and), (lax.bitwise_and, lax_red.reduce_and)),
    "or": ((lax.bitwise_or, lax_red.reduce_or), (lax.bitwise_or, lax_red.reduce_or)),
    "xor": ((lax.bitwise_xor, lax_red.reduce_xor), (lax.bitwise_xor, lax_red.reduce_xor)),
}


def _reduce(a, name, kind, init, *, has_identity=True, preproc=None, upcast_f16=False,
            axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
            promote_integers=False):
    """The shared body of the monoid reductions (sum, prod, max, min, all, any, ...)."""
    _no_out(out, name)
    (a,) = _arraylike(name, a)
    where = _check_where(name, where)
    if initial is None and not has_identity and where is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if preproc is not None:
        a = preproc(a)
    axes = _reduction_axes(a, axis)
    if initial is None and not has_identity:
        if not _ball(a.shape[d] >= 1 for d in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
    if dtype is None:
        result_dtype = np.dtype(a.dtype)
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = _user_dtype(dtype, name)
    comp_dtype = _upcast_f16(result_dtype) if upcast_f16 and _issub(
        result_dtype, np.inexact) else result_dtype
    if not (type(a) is ArrayImpl and a._value.dtype == comp_dtype and not a.weak_type):
        a = lax.convert_element_type(a, comp_dtype)
    (op, red), (bop, bred) = _OPS[kind]
    if comp_dtype == np.bool_:
        op, red = bop, bred
    init_val = _init_value(comp_dtype, init)
    if where is not None:
        a = _where(where, a, init_val)
    result = red(a, axes)
    if initial is not None:
        init_arr = lax.convert_element_type(initial, a.dtype)
        if np.shape(init_arr) != ():
            raise ValueError("initial value must be a scalar. Got array of shape "
                             f"{np.shape(init_arr)}")
        result = op(init_arr, result)
    if keepdims:
        result = lax_shape.expand_dims(result, axes)
    return lax.convert_element_type(result, dtype if dtype is not None else result_dtype)


def _to_numeric(x):
    return promote_dtypes_numeric(x)[0]


def _to_bool(x):
    if _issub(x.dtype, np.complexfloating):
        x = lax.real(x)
    return lax.convert_element_type(x, np.bool_)


def _require_integer(x):
    if not (x.dtype == np.bool_ or _issub(x.dtype, np.integer)):
        raise ValueError(f"integer argument required; got dtype={x.dtype}")
    return x


# ----------------------------------------------------------------------------- monoids
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    """Add up the elements of ``a`` over ``axis``.

    ``axis`` may be None (every axis), an int or a tuple of ints (negative counts from the
    end). With ``promote_integers`` (the default) booleans and integers narrower than the
    default integer type accumulate in it (int32, or int64 under x64); unsigned stay
    unsigned. ``dtype`` sets the accumulation and result type; ``initial`` is added to the
    result; elements where the boolean mask ``where`` is False are skipped; ``keepdims``
    keeps reduced axes with length one. ``out`` is not supported.
    """
    return _reduce(a, "sum", "sum", 0, preproc=_to_numeric, upcast_f16=dtype is None,
                   axis=_optional_axes(axis), dtype=dtype, out=out, keepdims=keepdims,
                   initial=initial, where=where, promote_integers=promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Multiply the elements of ``a`` over ``axis``.

    Arguments as for :func:`sum`; the empty product is one.
    """
    return _reduce(a, "prod", "prod", 1, preproc=_to_numeric, upcast_f16=dtype is None,
                   axis=_optional_axes(axis), dtype=dtype, out=out, keepdims=keepdims,
                   initial=initial, where=where, promote_integers=promote_integers)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Largest element of ``a`` over ``axis``.

    The maximum has no identity: reducing an empty axis needs ``initial``, and so does a
    ``where`` mask. ``initial`` also takes part in the comparison.
    """
    return _reduce(a, "max", "max", -np.inf, has_identity=False, axis=_optional_axes(axis),
                   out=out, keepdims=keepdims, initial=initial, where=where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Smallest element of ``a`` over ``axis`` (see :func:`max` for the arguments)."""
    return _reduce(a, "min", "min", np.inf, has_identity=False, axis=_optional_axes(axis),
                   out=out, keepdims=keepdims, initial=initial, where=where)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Alias of :func:`max`."""
    return max(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Alias of :func:`min`."""
    return min(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether every element of ``a`` over ``axis`` is true (nonzero); True when empty."""
    return _reduce(a, "all", "and", True, preproc=_to_bool, axis=_optional_axes(axis),
                   out=out, keepdims=keepdims, where=where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether some element of ``a`` over ``axis`` is true (nonzero); False when empty."""
    return _reduce(a, "any", "or", False, preproc=_to_bool, axis=_optional_axes(axis),
                   out=out, keepdims=keepdims, where=where)


def _bitwise_reduction(kind, name, init):
    def reducer(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        (arr,) = _arraylike(name, a)
        # all-ones in the operand's dtype, as a hashable Python scalar (init values are cached)
        iv = np.array(init).astype(dtype or arr.dtype).item() if kind == "and" else init
        return _reduce(arr, name, kind, iv, preproc=_require_integer,
                       axis=_optional_axes(axis), dtype=dtype, out=out, keepdims=keepdims,
                       initial=initial, where=where)
    reducer.__name__ = name
    return reducer


def _logical_reduction(kind, name, init):
    def reducer(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return _reduce(a, name, kind, init, preproc=_to_bool, axis=_optional_axes(axis),
                       dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)
    reducer.__name__ = name
    return reducer


# Used by the ufunc ``reduce`` methods (jnp.bitwise_and.reduce, jnp.logical_or.reduce ...).
reduce_bitwise_and = _bitwise_reduction("and", "reduce_bitwise_and", -1)
reduce_bitwise_or = _bitwise_reduction("or", "reduce_bitwise_or", 0)
reduce_bitwise_xor = _bitwise_reduction("xor", "reduce_bitwise_xor", 0)
reduce_logical_and = _logical_reduction("and", "reduce_logical_and", True)
reduce_logical_or = _logical_reduction("or", "reduce_logical_or", False)
reduce_logical_xor = _logical_reduction("xor", "reduce_logical_xor", False)


# ----------------------------------------------------------------------------- moments
def _axis_size(a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = 1
    for ax in axes:
        n *= np.shape(a)[ax]
    return n


def _count(a, axis, keepdims, where, dtype):
    """Number of elements entering a reduction, as a scalar (or array, with ``where``)."""
    if where is None:
        n = np.size(a) if axis is None else _axis_size(a, axis)
        return lax.convert_element_type(n, dtype)
    from jaxlite._src.numpy.shape_ops import broadcast_to
    return sum(broadcast_to(where, np.shape(a)), axis, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``.

    Integer and boolean inputs average in the default float type; float16/bfloat16 inputs
    accumulate in float32 and are cast back. ``where`` averages only the selected elements.
    """
    return _mean(a, _optional_axes(axis), dtype, out, keepdims, where=where,
                 upcast_f16=dtype is None)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, upcast_f16=True,
          where=None):
    (a,) = _arraylike("mean", a)
    where = _check_where("mean", where)
    _no_out(out, "mean")
    result_dtype = _to_inexact(a.dtype) if dtype is None else _user_dtype(dtype, "mean")
    comp_dtype = _upcast_f16(result_dtype) if upcast_f16 and _issub(
        result_dtype, np.inexact) else result_dtype
    n = _count(a, axis, keepdims, where, comp_dtype)
    s = sum(a, axis, dtype=comp_dtype, keepdims=keepdims, where=where)
    return _astype(lax.div(s, n), result_dtype)


def _astype(x, dt):
    """``x.astype(dt)`` (a no-op when the dtype already matches and ``x`` is not weak)."""
    return lax.convert_element_type(x, dt)


def _var_types(a_dtype, dtype):
    """(computation dtype, result dtype) of var/std."""
    if dtype:
        if (not _issub(dtype, np.complexfloating)
                and _issub(a_dtype, np.complexfloating)):
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the "
                "variance of an array of complex values. The semantics of numpy.var seem "
                "unclear in this case. Please comment on "
                "https://github.com/jax-ml/jax/issues/2283 if this behavior is important to "
                "you.")
        comp = np.dtype(dtype)
        res = np.dtype(dtype)
    elif not _issub(a_dtype, np.inexact):
        res = comp = _to_inexact(a_dtype)
    else:
        comp = np.dtype(a_dtype)
        res = np.array(0, a_dtype).real.dtype
    return _upcast_f16(comp), np.dtype(res)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Variance over ``axis``: the mean squared deviation from the mean.

    The divisor is the element count minus ``correction`` (alias ``ddof``; give only one);
    the result is NaN when the divisor is not positive. ``mean`` supplies a precomputed mean
    (with kept dimensions). Complex inputs give real variances.
    """
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    (a,) = _arraylike("var", a)
    return _var(a, axis=_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                keepdims=keepdims, where=where, a_mean=mean)


def _var_impl(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False,
              where=None, a_mean=None):
    where = _check_where("var", where)
    if dtype is not None:
        dtype = _user_dtype(dtype, "var")
    _no_out(out, "var")
    comp, dtype = _var_types(a.dtype, dtype)
    a = _astype(asarray_value(a), comp)
    if a_mean is None:
        a_mean = mean(a, axis, dtype=comp, keepdims=True, where=where)
    else:
        a_mean = _astype(_arraylike("var", a_mean)[0], comp)
    centered = lax.sub(a, a_mean)
    if _issub(comp, np.complexfloating):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        comp = centered.dtype
    else:
        centered = lax.square(centered)
    n = _count(a, axis, keepdims, where, comp)
    n = lax.sub(n, lax.convert_element_type(correction, comp))
    result = sum(centered, axis, dtype=comp, keepdims=keepdims, where=where)
    result = _astype(lax.div(result, n), dtype)
    from jaxlite._src.numpy.ufuncs import greater
    return _where(greater(n, 0), result, np.nan)


_var_impl.__name__ = _var_impl.__qualname__ = "_var"
_var = jit(_var_impl, static_argnames=("axis", "dtype", "keepdims"))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Standard deviation over ``axis``: the square root of :func:`var` (same arguments)."""
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    (a,) = _arraylike("std", a)
    return _std(a, axis=_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                keepdims=keepdims, where=where, mean=mean)


def _std_impl(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False,
              where=None, mean=None):
    where = _check_where("std", where)
    if dtype is not None:
        dtype = _user_dtype(dtype, "std")
        if not _issub(dtype, np.inexact):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    _no_out(out, "std")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims,
                        where=where, mean=mean))


_std_impl.__name__ = _std_impl.__qualname__ = "_std"
_std = jit(_std_impl, static_argnames=("axis", "dtype", "keepdims"))


def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: maximum minus minimum over ``axis``."""
    (a,) = _arraylike("ptp", a)
    return _ptp(a, _optional_axes(axis), out, keepdims)


def _ptp_impl(a, axis=None, out=None, keepdims=False):
    _no_out(out, "ptp")
    hi = max(a, axis=axis, keepdims=keepdims)
    lo = min(a, axis=axis, keepdims=keepdims)
    return lax.sub(hi, lo)


_ptp_impl.__name__ = _ptp_impl.__qualname__ = "_ptp"
_ptp = jit(_ptp_impl, static_argnames=("axis", "keepdims"))


def _count_nonzero(a, axis=None, keepdims=False):
    (a,) = _arraylike("count_nonzero", a)
    return sum(lax.ne(a, _np_const(a, 0)), axis=axis, dtype=dtypes.default_int_dtype(),
               keepdims=keepdims)


_count_nonzero.__name__ = _count_nonzero.__qualname__ = "count_nonzero"
_count_nonzero_jit = jit(_count_nonzero, static_argnames=("axis", "keepdims"))


def count_nonzero(a, axis=None, keepdims=False):
    """Number of nonzero (true) elements over ``axis``, in the default integer type."""
    return _count_nonzero_jit(a, axis=_optional_axes(axis), keepdims=keepdims)


# ----------------------------------------------------------------------------- arg-reductions
def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the largest element along ``axis`` (of the flattened array when None).

    Ties give the first index; NaN counts as the largest value. The result has the default
    integer type.
    """
    (arr,) = _arraylike("argmax", a)
    _no_out(out, "argmax")
    return _arg_reduce(arr, None if axis is None else operator.index(axis), bool(keepdims),
                       lax_red.argmax, "argmax")


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the smallest element along ``axis`` (see :func:`argmax`)."""
    (arr,) = _arraylike("argmin", a)
    _no_out(out, "argmin")
    return _arg_reduce(arr, None if axis is None else operator.index(axis), bool(keepdims),
                       lax_red.argmin, "argmin")


def _arg_reduce(a, axis, keepdims, red, name):
    if axis is None:
        dims = list(range(np.ndim(a)))
        from jaxlite._src.numpy.shape_ops import ravel
        a = ravel(a)
        axis = 0
    else:
        dims = [axis]
    if a.shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    if _issub(a.dtype, np.complexfloating):
        # JAX's argmax/argmin compare with `gt`/`lt`, which reject complex operands.
        raise TypeError(f"{'gt' if name == 'argmax' else 'lt'} does not accept dtype "
                        f"{np.dtype(a.dtype).name} at position 0. Accepted dtypes at position "
                        "0 are subtypes of integer, floating, bool.")
    r = red(a, canonicalize_axis(axis, a.ndim), dtypes.default_int_dtype())
    if keepdims:
        from jaxlite._src.numpy.shape_ops import expand_dims
        r = expand_dims(r, dims)
    return r


def nanargmax(a, axis=None, out=None, keepdims=None):
    """Index of the largest non-NaN element along ``axis``; -1 where every element is NaN."""
    (a,) = _arraylike("nanargmax", a)
    _no_out(out, "nanargmax")
    return _nanargmax(a, None if axis is None else operator.index(axis),
                      keepdims=bool(keepdims))


def nanargmin(a, axis=None, out=None, keepdims=None):
    """Index of the smallest non-NaN element along ``axis``; -1 where every element is
    NaN."""
    (a,) = _arraylike("nanargmin", a)
    _no_out(out, "nanargmin")
    return _nanargmin(a, None if axis is None else operator.index(axis),
                      keepdims=bool(keepdims))


def _nanarg(a, axis, keepdims, fn, fill):
    if not _issub(a.dtype, np.inexact):
        return fn(a, axis=axis, keepdims=keepdims)
    nan_mask = _isnan(a)
    a = _where(nan_mask, fill, a)
    r = fn(a, axis=axis, keepdims=keepdims)
    return _where(all(nan_mask, axis=axis, keepdims=keepdims), -1, r)


def _nanargmax_impl(a, axis=None, keepdims=False):
    return _nanarg(a, axis, keepdims, argmax, -np.inf)


def _nanargmin_impl(a, axis=None, keepdims=False):
    return _nanarg(a, axis, keepdims, argmin, np.inf)


_nanargmax_impl.__name__ = _nanargmax_impl.__qualname__ = "_nanargmax"
_nanargmin_impl.__name__ = _nanargmin_impl.__qualname__ = "_nanargmin"
_nanargmax = jit(_nanargmax_impl, static_argnames=("axis", "keepdims"))
_nanargmin = jit(_nanargmin_impl, static_argnames=("axis", "keepdims"))


# ----------------------------------------------------------------------------- NaN reductions
def _nan_reduce(a, name, reducer, init, nan_if_all_nan, axis=None, keepdims=False,
                where=None, **kw):
    (a,) = _arraylike(name, a)
    where = _check_where(name, where)
    if not _issub(a.dtype, np.inexact):
        return reducer(a, axis=axis, keepdims=keepdims, where=where, **kw)
    out = reducer(_where(_isnan(a), _init_value(a.dtype, init), a), axis=axis,
                  keepdims=keepdims, where=where, **kw)
    if nan_if_all_nan:
        return _where(all(_isnan(a), axis=axis, keepdims=keepdims), _np_const(a, np.nan), out)
    return out


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


@partial(jit, static_argnames=("axis", "keepdims"))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum over ``axis`` ignoring NaNs (NaN where every element is NaN, unless
    ``initial`` is given)."""
    return _nan_reduce(a, "nanmin", min, np.inf, initial is None, axis=axis, out=out,
                       keepdims=keepdims, initial=initial, where=where)


@partial(jit, static_argnames=("axis", "keepdims"))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum over ``axis`` ignoring NaNs (NaN where every element is NaN, unless
    ``initial`` is given)."""
    return _nan_reduce(a, "nanmax", max, -np.inf, initial is None, axis=axis, out=out,
                       keepdims=keepdims, initial=initial, where=where)


@partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum over ``axis`` counting NaNs as zero."""
    if dtype is not None:
        dtype = _user_dtype(dtype, "nanprod")
    return _nan_reduce(a, "nansum", sum, 0, False, axis=axis, dtype=dtype, out=out,
                       keepdims=keepdims, initial=initial, where=where)


@partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product over ``axis`` counting NaNs as one."""
    if dtype is not None:
        dtype = _user_dtype(dtype, "nanprod")
    return _nan_reduce(a, "nanprod", prod, 1, False, axis=axis, dtype=dtype, out=out,
                       keepdims=keepdims, initial=initial, where=where)


@partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean over ``axis`` of the non-NaN elements (NaN when there are none)."""
    (a,) = _arraylike("nanmean", a)
    where = _check_where("nanmean", where)
    _no_out(out, "nanmean")
    if a.dtype == np.bool_ or _issub(a.dtype, np.integer):
        return mean(a, axis, dtype, out, keepdims, where=where)
    dtype = _to_inexact(a.dtype) if dtype is None else _user_dtype(dtype, "mean")
    valid = lax.bitwise_not(_isnan(a))
    n = sum(valid, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), n)


@partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Variance over ``axis`` of the non-NaN elements (divisor: their count minus
    ``ddof``; NaN when that is not positive)."""
    (a,) = _arraylike("nanvar", a)
    where = _check_where("nanvar", where)
    if dtype is not None:
        dtype = _user_dtype(dtype, "nanvar")
    _no_out(out, "nanvar")
    comp, dtype = _var_types(a.dtype, dtype)
    a = _astype(a, comp)
    if mean is None:
        a_mean = nanmean(a, axis, dtype=comp, keepdims=True, where=where)
    else:
        a_mean = _astype(_arraylike("nanvar", mean)[0], comp)
    centered = _where(_isnan(a), 0, lax.sub(a, a_mean))
    if _issub(centered.dtype, np.complexfloating):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    n = sum(lax.bitwise_not(_isnan(a)), axis=axis, keepdims=keepdims, where=where)
    from jaxlite._src.numpy.ufuncs import subtract
    n = subtract(n, ddof)
    bad = lax.le(n, _np_const(n, 0))
    result = sum(centered, axis, keepdims=keepdims, where=where)
    result = _where(bad, np.nan, result)
    divisor = _where(bad, 1, n)
    result = lax.div(result, lax.convert_element_type(divisor, result.dtype))
    return lax.convert_element_type(result, dtype)


@partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Standard deviation over ``axis`` of the non-NaN elements."""
    (a,) = _arraylike("nanstd", a)
    where = _check_where("nanstd", where)
    if dtype is not None:
        dtype = _user_dtype(dtype, "nanstd")
    _no_out(out, "nanstd")
    return lax.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                           where=where, mean=mean))
