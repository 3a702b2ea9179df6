"""jax.numpy cumulative reductions: cumsum, cumprod, their NaN-skipping forms and the
array-API ``cumulative_sum`` / ``cumulative_prod`` (each a jit-wrapped scan, as in JAX)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.reductions import (_arraylike, _isnan, _named, _np_const,
                                           _promote_integer_dtype, _user_dtype, _where)
from jaxlite._src.numpy.util import canonicalize_axis

__all__ = ["cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod"]


def _cumulative(name, scan, a, axis, dtype, out=None, fill_nan=False, fill_value=0,
                promote_integers=False):
    (a,) = _arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
    if axis is None:      # (a 0-d array with an axis fails below, as in JAX)
        a = lax_shape.reshape(a, (np.size(a),))
    if axis is None:
        axis = 0
    axis = canonicalize_axis(axis, np.ndim(a))
    if fill_nan:
        a = _where(_isnan(a), _np_const(a, fill_value), a)
    if dtype is None:
        res = _promote_integer_dtype(a.dtype) if promote_integers or a.dtype == np.bool_ \
            else np.dtype(a.dtype)
        comp = res
    elif np.dtype(dtype) == np.bool_:
        res = np.dtype(np.bool_)
        if a.dtype != res:
            from jaxlite._src.numpy.ufuncs import not_equal
            a = not_equal(a, 0)
        comp = _promote_integer_dtype(res)
    else:
        res = comp = _user_dtype(dtype, name)
    a = lax.convert_element_type(a, comp)
    return lax.convert_element_type(scan(a, axis), res)


def _scan_fn(name, scan, fill_nan=False, fill_value=0, doc=""):
    def fn(a, axis=None, dtype=None, out=None):
        return _cumulative(name, scan, a, axis, dtype, out, fill_nan=fill_nan,
                           fill_value=fill_value)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return jit(fn, static_argnames=("axis", "dtype"))


cumsum = _scan_fn("cumsum", lax_red.cumsum, doc=(
    "Running sum along ``axis`` (over the flattened array when ``axis`` is None).\n\n"
    "Booleans accumulate in the default integer type; other inputs keep their dtype unless "
    "``dtype`` is given. ``out`` is not supported."))
cumprod = _scan_fn("cumprod", lax_red.cumprod, doc=(
    "Running product along ``axis`` (over the flattened array when ``axis`` is None)."))
nancumsum = _scan_fn("nancumsum", lax_red.cumsum, True, 0, doc=(
    "Running sum along ``axis`` treating NaNs as zero."))
nancumprod = _scan_fn("nancumprod", lax_red.cumprod, True, 1, doc=(
    "Running product along ``axis`` treating NaNs as one."))


def _cumsum_with_promotion_impl(a, axis=None, dtype=None, out=None):
    return _cumulative("_cumsum_with_promotion", lax_red.cumsum, a, axis, dtype, out,
                       promote_integers=True)


_cumsum_with_promotion = jit(_named(_cumsum_with_promotion_impl, "_cumsum_with_promotion"),
                             static_argnames=("axis", "dtype"))


def _cumprod_with_promotion_impl(a, axis=None, dtype=None, out=None):
    return _cumulative("cumulative_prod", lax_red.cumprod, a, axis, dtype, out)


def _array_api_cumulative(name, x, axis, dtype, include_initial, what, scan_fn, identity):
    (x,) = _arraylike(name, x)
    if x.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however "
                         "a scalar value or scalar array was given.")
    if axis is None:
        axis = 0
        if x.ndim > 1:
            raise ValueError(
                f"The input array has rank {x.ndim}, however axis was not set to an explicit "
                "value. The axis argument is only optional for one-dimensional arrays.")
    axis = canonicalize_axis(axis, x.ndim)
    if dtype is not None:
        dtype = _user_dtype(dtype, name)
    out = scan_fn(x, axis, dtype)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        out = lax_shape.concatenate([lax_shape.full(shape, identity, dtype=out.dtype), out],
                                    axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sum along ``axis`` (array-API form): ``axis`` may be omitted only for 1-D
    input; small integers accumulate in the default integer type; ``include_initial``
    prepends a zero."""
    return _array_api_cumulative(
        "cumulative_sum", x, axis, dtype, include_initial, "sum",
        lambda v, ax, dt: _cumsum_with_promotion(v, axis=ax, dtype=dt), 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running product along ``axis`` (array-API form); ``include_initial`` prepends a
    one."""
    return _array_api_cumulative(
        "cumulative_prod", x, axis, dtype, include_initial, "product",
        lambda v, ax, dt: _cumulative("cumulative_prod", lax_red.cumprod, v, ax, dt), 1)
