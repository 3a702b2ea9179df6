"""``to_edtype`` and ``from_edtype``: conversions between an array of an extended dtype
defined with JAX's rules protocol (a dtype whose ``_rules`` give ``physical_element_aval``,
``convert_to``/``convert_from`` or ``allow_conversion``, ``tangent_dtype``, ``add``, ``zero``;
flax's fp8 meta dtypes are such) and an array of its representation dtype.

``lax.convert_element_type`` binds them when either dtype is extended, as JAX does. The
rules decide whether a conversion is allowed; the data does not change (the compiler's
physical pass and eager execution take the representation array as it is).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util as u

__all__ = ["from_edtype_p", "physical_element_aval", "to_edtype_p"]


def _name(dt) -> str:
    return dt.name if isinstance(dt, dtypes.ExtendedDType) else np.dtype(dt).name


def physical_element_aval(edtype):
    """The aval of one element's data of the rules-protocol extended dtype ``edtype``."""
    rules = getattr(edtype, "_rules", None)
    if rules is None or not hasattr(rules, "physical_element_aval"):
        raise TypeError(f"extended dtype {edtype} has no _rules.physical_element_aval: only "
                        "dtypes defined with JAX's rules protocol convert to and from their "
                        "representation dtype")
    return rules.physical_element_aval(edtype)


def _allowed(rules, hook, a, b) -> bool:
    # (as JAX: a ``convert_to``/``convert_from`` rule decides, else ``allow_conversion``)
    fn = getattr(rules, hook, None)
    if fn is not None:
        return bool(fn(a, b))
    return bool(getattr(rules, "allow_conversion", False))


def _convert_tangent(t, want):
    """``t`` converted to the tangent dtype ``want`` (JAX's convert_element_type of the
    tangent: to or from the extended dtype, or between numeric dtypes)."""
    have = u.aval(t).dtype
    if have == want:
        return t
    if isinstance(want, dtypes.ExtendedDType):
        return to_edtype_p.bind(t, edtype=want)
    if isinstance(have, dtypes.ExtendedDType):
        return from_edtype_p.bind(t, dtype=want)
    from jaxlite._src.prims.elementwise import convert_element_type_p
    return convert_element_type_p.bind(t, new_dtype=want, weak_type=False, sharding=None)


class _EdtypeConversion(Primitive):
    """Shared rules: the data is unchanged (``physical`` is the identity), batching maps the
    leading (array) dimensions, the weak type is dropped."""
    weak_rule = "never"
    accepts_extended = True

    def physical(self, avals, data, **params):
        return data

    def eager(self, args, params):
        from jaxlite._src.core.avals import aval_of_value
        self.abstract_eval(*[aval_of_value(a) for a in args], **params)
        # (JAX needs a result handler of the dtype for concrete arrays of it: convert
        # inside jit, where the value is its representation data)
        raise NotImplementedError(
            f"{self.name}: jaxlite has no concrete arrays of extended dtypes other than "
            "typed PRNG keys; convert to and from this dtype inside jax.jit")

    def batch(self, size, args, dims, **params):
        from jaxlite._src.prims.batch_util import bdim_at_front
        return self.bind(bdim_at_front(args[0], dims[0], size), **params), 0


class ToEdtype(_EdtypeConversion):
    """``to_edtype[edtype](x)``: the array of extended dtype ``edtype`` whose data is ``x``
    (of the representation dtype, the element's data shape in trailing dimensions)."""
    name = "to_edtype"

    def abstract_eval(self, x, *, edtype):
        if not _allowed(edtype._rules, "convert_to", x.dtype, edtype):
            raise ValueError(f"Cannot convert_element_type from {_name(x.dtype)} "
                             f"to {_name(edtype)}")
        rep = physical_element_aval(edtype)
        if x.dtype != rep.dtype:
            raise ValueError(
                "can only convert to extended dtype from its representation dtype, but "
                f"tried to convert from {_name(x.dtype)} to {_name(edtype)} which doesn't "
                f"match the representation type {_name(rep.dtype)}.")
        if x.ndim < rep.ndim:
            raise ValueError(
                "can only convert to extended dtype from an array of its representation "
                f"type, but the extended dtype {_name(edtype)} has a representation shape "
                f"{rep.shape} (rank {rep.ndim}) while the given representation array has "
                f"shape {x.shape} (rank {x.ndim} < {rep.ndim}).")
        n = x.ndim - rep.ndim
        if tuple(x.shape[n:]) != tuple(rep.shape):
            raise ValueError(
                "can only convert to extended dtype from an array of its representation "
                f"type, but the extended dtype {_name(edtype)} has a representation shape "
                f"{rep.shape} while the given representation array has shape {x.shape}, so "
                f"the shape suffix does not match: given {tuple(x.shape[n:])} but required "
                f"{rep.shape}.")
        return ShapedArray(tuple(x.shape[:n]), edtype)

    def jvp(self, primals, tangents, *, edtype):
        (x,), (t,) = primals, tangents
        out = self.bind(x, edtype=edtype)
        if u.is_zero(t):
            return out, u.Zero.like(out)
        return out, _convert_tangent(t, u.tangent_aval(u.aval(out)).dtype)

    def transpose(self, ct, x, *, edtype):
        if u.is_zero(ct):
            return [None]
        return [from_edtype_p.bind(ct, dtype=x.aval.dtype)]


class FromEdtype(_EdtypeConversion):
    """``from_edtype[dtype](x)``: the representation data (of ``dtype``) of the array ``x``
    of an extended dtype."""
    name = "from_edtype"

    def abstract_eval(self, x, *, dtype):
        edtype = x.dtype
        if not _allowed(edtype._rules, "convert_from", edtype, dtype):
            raise ValueError(f"Cannot convert_element_type from {_name(edtype)} "
                             f"to {_name(dtype)}")
        rep = physical_element_aval(edtype)
        if rep.dtype != dtype:
            raise ValueError(
                "can only convert from extended dtype to its representation dtype, but "
                f"tried to convert from {_name(edtype)} to {_name(dtype)} which doesn't "
                f"match the representation type {_name(rep.dtype)}.")
        return ShapedArray(tuple(x.shape) + tuple(rep.shape), dtype)

    def jvp(self, primals, tangents, *, dtype):
        (x,), (t,) = primals, tangents
        out = self.bind(x, dtype=dtype)
        if u.is_zero(t):
            return out, u.Zero.like(out)
        return out, _convert_tangent(t, u.tangent_aval(u.aval(out)).dtype)

    def transpose(self, ct, x, *, dtype):
        if u.is_zero(ct):
            return [None]
        return [to_edtype_p.bind(ct, edtype=x.aval.dtype)]


to_edtype_p = ToEdtype()
from_edtype_p = FromEdtype()
