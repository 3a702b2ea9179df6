"""jax.numpy's evenly spaced samples: linspace, logspace, geomspace (traceable: start and
stop may be traced arrays; ``num`` must be static)."""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.core import dtypes, errors
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import asarray_value

__all__ = ["linspace", "logspace", "geomspace"]


def _static_int(v, what):
    if isinstance(v, Tracer):
        raise errors.ConcretizationTypeError(v, f"The {what} must be static (a Python int).")
    return operator.index(v)


def _inexact(dt):
    dt = np.dtype(dt)
    return dt if dtypes.issubdtype(dt, np.inexact) else np.dtype(dtypes.default_float_dtype())


def _bounds(start, stop, comp_dtype, axis):
    start = lax_ew._convert_element_type(asarray_value(start), comp_dtype, False)
    stop = lax_ew._convert_element_type(asarray_value(stop), comp_dtype, False)
    shape = tuple(np.broadcast_shapes(start.shape, stop.shape))
    from jaxlite._src.numpy.shape_ops import broadcast_to
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    axis = len(shape) + axis + 1 if axis < 0 else axis
    if not 0 <= axis <= len(shape):
        raise ValueError(f"axis {axis} is out of bounds for the {len(shape) + 1}-dimensional "
                         "result of linspace")
    return start, stop, shape, axis


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (inclusive when ``endpoint``),
    stacked along ``axis`` when the bounds are arrays. Each sample is
    ``start * (1 - t) + stop * t``, so both ends are exact."""
    num = _static_int(num, "'num' argument of jnp.linspace")
    axis = operator.index(axis)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "linspace")
    from jaxlite._src.numpy.ufuncs import add, floor, multiply, subtract, true_divide
    s0, s1 = asarray_value(start), asarray_value(stop)
    out_dt = np.dtype(dtypes.canonicalize_dtype(dtype)) if dtype is not None else \
        _inexact(dtypes.result_type(s0, s1))
    comp = _inexact(out_dt)
    lo, hi, shape, axis = _bounds(s0, s1, comp, axis)
    full = list(shape)
    full.insert(axis, 1)
    div = num - 1 if endpoint else num
    if num > 1:
        delta = true_divide(subtract(hi, lo), np.asarray(div, comp))
        real = np.dtype(dtypes.finfo(comp).dtype)   # np.finfo rejects bfloat16
        ishape = [1] * len(full)
        ishape[axis] = div
        iota = lax_shape.reshape(lax_shape.iota(real, div), tuple(ishape))
        one = asarray_value(np.asarray(1, comp))
        if comp.kind == "c" or comp.name == "bfloat16":   # (XLA widens bfloat16 first)
            t = lax_ew.div(iota, asarray_value(np.asarray(div, real)))
            t = lax_ew._convert_element_type(t, comp, False)
            out = add(multiply(lax_shape.reshape(lo, tuple(full)), lax_ew.sub(one, t)),
                      multiply(lax_shape.reshape(hi, tuple(full)), t))
        else:
            out = _lerp_as_xla(lo, hi, iota, div, full, comp)
        if endpoint:
            out = lax_shape.concatenate([out, lax_shape.expand_dims(hi, (axis,))], axis)
    elif num == 1:
        delta = asarray_value(np.asarray(np.nan, comp)) if endpoint else subtract(hi, lo)
        out = lax_shape.reshape(lo, tuple(full))
    else:
        full[axis] = 0
        delta = asarray_value(np.asarray(np.nan, comp))
        out = asarray_value(np.zeros(full, comp))
    if out_dt.kind in "iu" and out.dtype.kind not in "iu":
        out = floor(out)
    out = lax_ew._convert_element_type(out, out_dt, False)
    return (out, delta) if retstep else out


def _lerp_as_xla(lo, hi, iota, div, full, dt):
    """``lo * (1 - t) + hi * t`` for ``t = iota / div`` as XLA:CPU computes JAX's
    linspace, for JAX's bits: the division by the constant is a product with its rounded
    reciprocal ``r``, ``hi * (iota * r)`` is reassociated to ``iota * (hi * r)``, and that
    product is contracted with the add into one fused multiply-add."""
    from jaxlite._src.prims import xla_fma   # (XLA's contraction: a product kept exact)
    r = asarray_value(np.asarray(np.asarray(1, dt) / np.asarray(div, dt), dt))
    one = asarray_value(np.asarray(1, dt))
    lo_t = lax_ew.mul(lax_shape.reshape(lo, tuple(full)), lax_ew.sub(one, lax_ew.mul(iota, r)))
    return xla_fma.add(xla_fma.mul(iota, lax_ew.mul(lax_shape.reshape(hi, tuple(full)), r)),
                       lo_t)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``: samples evenly spaced on a log scale."""
    num = _static_int(num, "'num' argument of jnp.logspace")
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "logspace")
    from jaxlite._src.numpy.ufuncs import power
    s0, s1 = asarray_value(start), asarray_value(stop)
    out_dt = np.dtype(dtypes.canonicalize_dtype(dtype)) if dtype is not None else \
        _inexact(dtypes.result_type(s0, s1))
    comp = _inexact(out_dt)
    lin = linspace(s0, s1, num, endpoint=endpoint, dtype=comp, axis=axis)
    b = lax_ew._convert_element_type(asarray_value(base), comp, False)
    if b.ndim:
        b = lax_shape.expand_dims(b, (axis if axis >= 0 else lin.ndim + axis,))
    out = power(b, lin)
    return lax_ew._convert_element_type(out, out_dt, False)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples evenly spaced on a geometric scale (a constant ratio between neighbours);
    negative bounds give negative samples."""
    num = _static_int(num, "'num' argument of jnp.geomspace")
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "geomspace")
    from jaxlite._src.numpy.shape_ops import moveaxis
    from jaxlite._src.numpy.ufuncs import log10, multiply, sign, true_divide
    s0, s1 = asarray_value(start), asarray_value(stop)
    out_dt = np.dtype(dtypes.canonicalize_dtype(dtype)) if dtype is not None else \
        _inexact(dtypes.result_type(s0, s1))
    comp = _inexact(out_dt)
    s0 = lax_ew._convert_element_type(s0, comp, False)
    s1 = lax_ew._convert_element_type(s1, comp, False)
    sg = sign(s0)
    res = multiply(sg, logspace(log10(true_divide(s0, sg)), log10(true_divide(s1, sg)),
                                num, endpoint=endpoint, base=10.0, dtype=comp, axis=0))
    if axis != 0:
        res = moveaxis(res, 0, axis)
    return lax_ew._convert_element_type(res, out_dt, False)
