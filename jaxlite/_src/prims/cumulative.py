"""Cumulative scan primitives (cumsum, cumprod, cummax, cummin): inclusive scans along one
axis, a float32/float64 sum or product in XLA:CPU's blocked order."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive, aval_nbytes
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.base import check_dtype_kind
from jaxlite._src.prims.reductions import _check_axes

__all__ = ["cummax_p", "cummin_p", "cumprod_p", "cumsum_p"]


class Cumulative(Primitive):
    """Inclusive scan along ``axis`` (optionally from the end)."""
    np_fn = None

    def cost(self, avals_in, avals_out, literals, axis, **params):
        """JAX lowers a cumulative reduction on CPU to a ``reduce-window`` of the axis' length
        (padded before): XLA counts (window size - 1) flops per output element and reads the
        operand and the scalar initial value."""
        a, out = avals_in[0], avals_out[0]
        n = int(np.prod(out.shape, dtype=np.int64))
        return [(n * (a.shape[axis] - 1), 0, [aval_nbytes(a), a.dtype.itemsize],
                 aval_nbytes(out))]

    def sharding_rule(self, avals, axis, reverse):
        return [tuple(range(avals[0].ndim))]

    def whole_dims(self, avals, axis, reverse):
        """The scanned axis is computed whole (then split as the operand was)."""
        return [(axis,)]

    def explicit_whole_message(self, aval, k, axis, reverse):
        """JAX's error for a scanned axis split in the operand's type (Explicit axes)."""
        return (f"Input should be unsharded over the axis being reduced. Got input "
                f"type={aval} and axis={axis}.")

    def impl(self, x, axis, reverse):
        if reverse:
            x = np.flip(x, axis)
        r = self.np_fn(x, axis=axis)
        r = np.asarray(r, x.dtype)
        return np.flip(r, axis) if reverse else r

    def batch(self, size, args, dims, axis, reverse):
        d = dims[0]
        return self.bind(args[0], axis=axis + (axis >= d), reverse=reverse), d

    def check_operands(self, vals, params):
        check_dtype_kind(self.name, "number", np.asarray(vals[0]).dtype)

    def abstract_eval(self, x, axis, reverse):
        check_dtype_kind(self.name, "number", x.dtype)
        _check_axes(self.name, x, (axis,))
        return ShapedArray(x.shape, x.dtype, x.weak_type)


SCAN_BLOCK = 16


def _blocked_scan(v, op, one):
    """Inclusive scans of the rows of ``v`` in XLA:CPU's order (jaxlib 0.10.2): a
    cumulative sum/product is a reduce-window that XLA rewrites into blocks of
    ``SCAN_BLOCK`` (the last padded), each scanned one element after another from the
    identity, the blocks' totals scanned the same way (recursively), and each block's
    elements combined once with the total of the blocks before it."""
    r, n = v.shape
    if n <= SCAN_BLOCK:
        return op(op.accumulate(v, axis=1), one)
    m = -(-n // SCAN_BLOCK)
    p = np.full((r, m * SCAN_BLOCK), one, v.dtype)
    p[:, :n] = v
    w = op.accumulate(p.reshape(r, m, SCAN_BLOCK), axis=2)
    inc = _blocked_scan(w[:, :, -1], op, one)
    carry = np.concatenate([np.full((r, 1), one, v.dtype), inc[:, :-1]], axis=1)
    return op(w, carry[:, :, None]).reshape(r, -1)[:, :n]


def _blocked_rscan(v, op, one):
    """``_blocked_scan`` from the end (``reverse=True``): the reduce-window's windows run
    forward from each element, so within a block element j combines ``v[j], v[j+1], ...``
    in increasing order from the identity; the blocks' totals (their first elements) are
    scanned from the end recursively, and each block combined once with the total of the
    blocks after it."""
    r, n = v.shape
    m = -(-n // SCAN_BLOCK)
    b = min(n, SCAN_BLOCK)
    p = np.full((r, m * b), one, v.dtype)
    p[:, :n] = v
    w = p.reshape(r, m, b)
    s = op(w, one)
    for d in range(1, b):
        s[:, :, :b - d] = op(s[:, :, :b - d], w[:, :, d:])
    if m == 1:
        return s.reshape(r, -1)[:, :n]
    inc = _blocked_rscan(s[:, :, 0], op, one)
    carry = np.concatenate([inc[:, 1:], np.full((r, 1), one, v.dtype)], axis=1)
    return op(s, carry[:, :, None]).reshape(r, -1)[:, :n]


def _xla_scan(x, axis, op, reverse):
    """``op``'s (``np.add``/``np.multiply``) inclusive scan of a float32/float64 ``x``
    along ``axis`` in XLA:CPU's order (``_blocked_scan``/``_blocked_rscan``), else
    None."""
    if x.dtype.kind != "f" or x.dtype.itemsize not in (4, 8) or not x.size:
        return None
    v = np.moveaxis(x, axis, -1)
    one = x.dtype.type(0 if op is np.add else 1)
    out = (_blocked_rscan if reverse else _blocked_scan)(v.reshape(-1, v.shape[-1]), op, one)
    return np.moveaxis(out.reshape(v.shape), -1, axis)


class CumSum(Cumulative):
    name = "cumsum"

    def jvp(self, primals, tangents, axis, reverse):
        return (self.bind(primals[0], axis=axis, reverse=reverse),
                self.bind(tangents[0], axis=axis, reverse=reverse))

    def transpose(self, ct, x, axis, reverse):
        return [None if u.is_zero(ct) else self.bind(ct, axis=axis, reverse=not reverse)]

    def impl(self, x, axis, reverse):
        """XLA's blocked order (``_blocked_scan``) for float32/float64, else NumPy's."""
        x = np.asarray(x)
        r = _xla_scan(x, axis, np.add, reverse)
        if r is not None:
            return r
        if reverse:
            return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return np.cumsum(x, axis=axis, dtype=x.dtype)


def _prefix_scan_jvp(combine, x, t, axis, reverse, identity):
    """Inclusive scan of ``x`` along ``axis`` in log2(n) doubling steps, each combining
    with a copy shifted by the step (padded with ``identity``), differentiated forward along
    with its tangent ``t``: the scan is built from differentiable primitives (``combine`` is
    one), so their JVP rules give the cumulative reductions' derivatives (JAX differentiates
    its associative_scan alike)."""
    from jaxlite._src.prims.shape import pad_p
    xa = u.aval(x)
    n = xa.shape[axis]
    ident = u.const(x, identity)
    s = 1
    while s < n:
        cfg = [(0, 0, 0)] * xa.ndim
        cfg[axis] = (-s, s, 0) if reverse else (s, -s, 0)
        px, pt = u.jvp_apply(pad_p, (x, ident), (t, None), padding_config=tuple(cfg))
        x, t = u.jvp_apply(combine, (px, x), (pt, t))
        s *= 2
    return x, t


def _cumulative_jvp(combine, identity, primals, tangents, axis, reverse):
    dt = u.aval(primals[0]).dtype
    ident = identity(dt) if callable(identity) else identity
    return _prefix_scan_jvp(combine, primals[0], tangents[0], axis, reverse, ident)


def _extreme(sign):
    def ident(dt):
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return info.min if sign < 0 else info.max
        return sign * np.inf
    return ident


class CumProd(Cumulative):
    name = "cumprod"

    def jvp(self, primals, tangents, axis, reverse):
        return _cumulative_jvp(u.ew().mul_p, 1, primals, tangents, axis, reverse)

    def impl(self, x, axis, reverse):
        """XLA's blocked order (``_blocked_scan``) for float32/float64, else NumPy's."""
        x = np.asarray(x)
        r = _xla_scan(x, axis, np.multiply, reverse)
        if r is not None:
            return r
        if reverse:
            return np.flip(np.cumprod(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return np.cumprod(x, axis=axis, dtype=x.dtype)


class CumMax(Cumulative):
    name, np_fn = "cummax", staticmethod(np.maximum.accumulate)

    def jvp(self, primals, tangents, axis, reverse):
        return _cumulative_jvp(u.ew().max_p, _extreme(-1), primals,
                               tangents, axis, reverse)


class CumMin(Cumulative):
    name, np_fn = "cummin", staticmethod(np.minimum.accumulate)

    def jvp(self, primals, tangents, axis, reverse):
        return _cumulative_jvp(u.ew().min_p, _extreme(1), primals,
                               tangents, axis, reverse)


cumsum_p, cumprod_p, cummax_p, cummin_p = CumSum(), CumProd(), CumMax(), CumMin()
