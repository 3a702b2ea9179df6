"""Windowed reductions: reduce_window_sum / _max / _min (pooling), and the two primitives
their derivatives are written with, select_and_gather_add (the tangent at each window's
arg-max/min) and select_and_scatter_add (its transpose: a cotangent scattered to the
arg-max/min), as in JAX.

Implementations pad and dilate the operand once, then combine the window taps: a loop of
elementwise NumPy ops over strided slices for small windows, a reduction over
``sliding_window_view`` for large ones. Ties pick the first position of a window.
"""
from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import batch_util
from jaxlite._src.prims.conv import dilate_pad, dilate_shape, stride_dim, vjp_lhs_padding

__all__ = ["reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
           "select_and_gather_add_p", "select_and_scatter_add_p", "reduce_window_shape_tuple",
           "max_identity", "min_identity"]

# Windows with more taps than this are reduced over a sliding_window_view instead of a loop.
_MAX_LOOP_TAPS = 64


def max_identity(dtype):
    """The identity of ``max`` for ``dtype`` (-inf, the smallest integer, or False)."""
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):     # (bfloat16 and float8 too)
        return np.array(-np.inf, dtype)
    if dtype.kind in "iu":
        return np.array(np.iinfo(dtype).min, dtype)
    if dtype.kind == "b":
        return np.array(False)
    raise ValueError(f"Unsupported dtype for max: {dtype}")


def min_identity(dtype):
    """The identity of ``min`` for ``dtype`` (inf, the largest integer, or True)."""
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(np.inf, dtype)
    if dtype.kind in "iu":
        return np.array(np.iinfo(dtype).max, dtype)
    if dtype.kind == "b":
        return np.array(True)
    raise ValueError(f"Unsupported dtype for min: {dtype}")


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """Output shape of a windowed reduction."""
    if base_dilation is not None:
        operand_shape = dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = dilate_shape(window_dimensions, window_dilation)
    padded = [int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(operand_shape, padding)]
    return tuple(stride_dim(p, int(w), int(s)) for p, w, s in zip(padded, window_dimensions,
                                                                   window_strides))


def _check_shapelike(name, arg, obj, non_zero=False):
    if any(int(d) < 0 for d in obj):
        raise TypeError(f"{name} {arg} must have every element be nonnegative, got "
                        f"{tuple(obj)}.")
    if non_zero and any(int(d) == 0 for d in obj):
        raise TypeError(f"{name} {arg} must have every element be strictly positive, got "
                        f"{tuple(obj)}.")


def common_shape_rule(operand, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation, name="reduce_window"):
    """The output shape of a windowed op, raising JAX's TypeErrors for bad windows."""
    _check_shapelike(name, "window_dimensions", window_dimensions, True)
    _check_shapelike(name, "window_strides", window_strides, True)
    _check_shapelike(name, "base_dilation", base_dilation, True)
    _check_shapelike(name, "window_dilation", window_dilation, True)
    if operand.ndim != len(window_dimensions):
        raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got "
                        f"operand shape {tuple(operand.shape)} with window_dimensions "
                        f"{tuple(window_dimensions)}.")
    for arg, v in (("window_strides", window_strides), ("base_dilation", base_dilation),
                   ("window_dilation", window_dilation)):
        if len(v) != len(window_dimensions):
            raise TypeError(f"{name} got inconsistent {arg} and window_dimensions: got {arg} "
                            f"{tuple(v)} and window_dimensions {tuple(window_dimensions)}.")
    if len(padding) != len(window_dimensions):
        raise TypeError(f"{name} got inconsistent padding and window_dimensions: got padding "
                        f"{tuple(padding)} and window_dimensions {tuple(window_dimensions)}.")
    return reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                     padding, base_dilation, window_dilation)


class _Taps:
    """The padded/dilated operand and, for each window tap, the strided slice of it that
    holds that tap of every window."""

    def __init__(self, x, fill, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
        self.xp = dilate_pad(x, tuple(range(x.ndim)), base_dilation, padding, fill)
        self.out_shape = reduce_window_shape_tuple(x.shape, window_dimensions,
                                                   window_strides, padding, base_dilation,
                                                   window_dilation)
        self.wd, self.ws, self.wdil = window_dimensions, window_strides, window_dilation

    @property
    def ntaps(self):
        return int(np.prod(self.wd, dtype=np.int64))

    def slices(self):
        """Index tuples into ``xp``, one per tap, in row-major window order."""
        for tap in itertools.product(*[range(k) for k in self.wd]):
            yield tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in
                        zip(tap, self.wdil, self.out_shape, self.ws))

    def view(self, a=None):
        """The windows of ``a`` (default ``xp``) as an array of shape out + window."""
        a = self.xp if a is None else a
        eff = dilate_shape(self.wd, self.wdil)
        win = sliding_window_view(a, eff)
        idx = tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(self.out_shape, self.ws))
        return win[idx + tuple(slice(None, None, d) for d in self.wdil)]


def _window_reduce(x, kind, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    """reduce_window_{sum,max,min} on a NumPy array."""
    fill = (np.zeros((), x.dtype) if kind == "sum" else
            max_identity(x.dtype) if kind == "max" else min_identity(x.dtype))
    taps = _Taps(x, fill, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation)
    if 0 in taps.out_shape:
        return np.zeros(taps.out_shape, x.dtype)
    if taps.ntaps > _MAX_LOOP_TAPS:
        axes = tuple(range(x.ndim, 2 * x.ndim))
        fn = {"sum": np.sum, "max": np.max, "min": np.min}[kind]
        return np.asarray(fn(taps.view(), axis=axes), x.dtype)
    op = {"sum": np.add, "max": np.maximum, "min": np.minimum}[kind]
    it = taps.slices()
    out = np.array(taps.xp[next(it)], copy=True)
    for sl in it:
        op(out, taps.xp[sl], out=out)
    return out


class _WindowSharding:
    """The partitioner's rule for windowed operations (pooling and its gradients): every
    operand dimension is the same result dimension; a dimension the window spans, strides,
    pads or dilates is computed whole (then split again as the operand was, where the result
    divides evenly), one of window 1 and stride 1 keeps its split."""

    def sharding_rule(self, avals, **params):
        return [tuple(range(a.ndim)) for a in avals]

    def whole_dims(self, avals, window_dimensions, window_strides, padding,
                   base_dilation=None, window_dilation=None, **_):
        n = len(window_dimensions)
        base = base_dilation or (1,) * n
        dil = window_dilation or (1,) * n
        ks = tuple(k for k in range(n)
                   if (window_dimensions[k], window_strides[k], tuple(padding[k]), base[k],
                       dil[k]) != (1, 1, (0, 0), 1, 1))
        return [ks] * len(avals)


class _ReduceWindowBase(_WindowSharding, Primitive):
    """Shared parameters, shape rule and batching rule of the reduce_window_* family."""
    kind = "sum"

    def impl(self, x, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        return _window_reduce(x, self.kind, window_dimensions, window_strides, padding,
                              base_dilation, window_dilation)

    def abstract_eval(self, x, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
        shape = common_shape_rule(x, window_dimensions, window_strides, padding,
                                  base_dilation, window_dilation)
        return ShapedArray(shape, x.dtype, x.weak_type)

    def explicit_sharding_rule(self, avals, dims, **params):
        """Over Explicit axes (JAX's rule) the result keeps the operand's sharding; a split
        dimension whose size changes must stay divisible."""
        from jaxlite._src.sharding.types import mesh_of, varying_shape_dims
        out = self.abstract_eval(*avals, **params).shape
        return [varying_shape_dims("reduce_window", avals[0], dims[0], out, mesh_of(avals))]

    def batch(self, size, args, dims, window_dimensions, window_strides, padding,
              base_dilation, window_dilation):
        d = dims[0]
        ins = lambda t, v: tuple(t[:d]) + (v,) + tuple(t[d:])  # noqa: E731
        return self.bind(args[0], window_dimensions=ins(window_dimensions, 1),
                         window_strides=ins(window_strides, 1), padding=ins(padding, (0, 0)),
                         base_dilation=ins(base_dilation, 1),
                         window_dilation=ins(window_dilation, 1)), d


def _check_number(name, dtype):
    """JAX's TypeError for a non-numeric operand (bool) of a windowed sum."""
    if dtype == np.bool_ or not dtypes.issubdtype(dtype, np.number):
        raise TypeError(f"operand to {name} must have a number dtype, got {dtype.name}")


class ReduceWindowSum(_ReduceWindowBase):
    """Sum over each window (sum pooling); linear."""
    name, kind = "reduce_window_sum", "sum"

    def check_operands(self, vals, params):
        _check_number("reduce_window_sum", np.asarray(vals[0]).dtype)

    def abstract_eval(self, x, **params):
        _check_number("reduce_window_sum", x.dtype)
        return super().abstract_eval(x, **params)

    def jvp(self, primals, tangents, **params):
        return self.bind(primals[0], **params), self.bind(u.instantiate(tangents[0]),
                                                          **params)

    def transpose(self, ct, x, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
        """Pad the cotangent (interior ``stride - 1``) and sum-pool it again (JAX's rule)."""
        if u.is_zero(ct):
            return [None]
        from jaxlite._src.prims.shape import pad_p
        in_shape = u.aval(x).shape
        ct_shape = u.aval(ct).shape
        pads = vjp_lhs_padding(in_shape, window_dimensions, window_strides, ct_shape, padding,
                               base_dilation, window_dilation)
        cfg = tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides))
        padded = pad_p.bind(ct, u.const(ct, 0), padding_config=cfg)
        n = len(in_shape)
        out = self.bind(padded, window_dimensions=tuple(window_dimensions),
                        window_strides=tuple(base_dilation), padding=((0, 0),) * n,
                        base_dilation=(1,) * n, window_dilation=tuple(window_dilation))
        return [out]


class _ReduceWindowChooser(_ReduceWindowBase):
    """Max/min over each window; the JVP gathers the tangent at each window's choice."""

    def jvp(self, primals, tangents, **params):
        from jaxlite._src.prims import elementwise as ew
        x, = primals
        sel = ew.ge_p if self.kind == "max" else ew.le_p
        out = self.bind(x, **params)
        if u.is_zero(tangents[0]):
            return out, u.Zero(u.aval(out))
        return out, select_and_gather_add_p.bind(u.instantiate(tangents[0]), x,
                                                 select_prim=sel, **params)


class ReduceWindowMax(_ReduceWindowChooser):
    """Maximum over each window (max pooling)."""
    name, kind = "reduce_window_max", "max"


class ReduceWindowMin(_ReduceWindowChooser):
    """Minimum over each window (min pooling)."""
    name, kind = "reduce_window_min", "min"


def _choose(taps_x, taps_t, kind):
    """(index of the chosen tap, tangent at that tap) of every window; the first tap wins
    ties."""
    itx, itt = taps_x.slices(), None if taps_t is None else taps_t.slices()
    sl = next(itx)
    best = np.array(taps_x.xp[sl], copy=True)
    idx = np.zeros(best.shape, np.int32)
    tsel = None if taps_t is None else np.array(taps_t.xp[next(itt)], copy=True)
    for k, sl in enumerate(itx, start=1):
        cand = taps_x.xp[sl]
        better = np.greater(cand, best) if kind == "max" else np.less(cand, best)
        np.copyto(best, cand, where=better)
        np.copyto(idx, k, where=better)
        if tsel is not None:
            np.copyto(tsel, taps_t.xp[next(itt)], where=better)
    return idx, tsel


def _kind_of(select_prim):
    name = getattr(select_prim, "name", str(select_prim))
    if name not in ("ge", "le"):
        raise TypeError(f"select_prim must be ge or le, got {select_prim}.")
    return "max" if name == "ge" else "min"


class SelectAndGatherAdd(_WindowSharding, Primitive):
    """The element of ``tangents`` at the position of each window's max (select_prim=ge)
    or min (le) of ``operand``; linear in ``tangents``."""
    name = "select_and_gather_add"

    def impl(self, t, x, select_prim, window_dimensions, window_strides, padding,
             base_dilation, window_dilation):
        kind = _kind_of(select_prim)
        fill = max_identity(x.dtype) if kind == "max" else min_identity(x.dtype)
        args = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
        tx = _Taps(x, fill, *args)
        if 0 in tx.out_shape:
            return np.zeros(tx.out_shape, t.dtype)
        tt = _Taps(t, np.zeros((), t.dtype), *args)
        return _choose(tx, tt, kind)[1]

    def abstract_eval(self, t, x, select_prim, window_dimensions, window_strides, padding,
                      base_dilation, window_dilation):
        if t.shape != x.shape:
            raise TypeError("select_and_gather_add tangents and operand shapes must match, "
                            f"got {tuple(t.shape)} and {tuple(x.shape)}.")
        shape = common_shape_rule(x, window_dimensions, window_strides, padding,
                                  base_dilation, window_dilation)
        return ShapedArray(shape, t.dtype, t.weak_type)

    def jvp(self, primals, tangents, **params):
        t, x = primals
        out = self.bind(t, x, **params)
        if u.is_zero(tangents[0]):
            return out, u.Zero(u.aval(out))
        return out, self.bind(u.instantiate(tangents[0]), x, **params)

    def transpose(self, ct, t, x, select_prim, window_dimensions, window_strides, padding,
                  base_dilation, window_dilation):
        if u.is_zero(ct):
            return [None, None]
        if any(d != 1 for d in window_dilation):
            raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) "
                                      "with window dilation, got window_dilation="
                                      f"{tuple(window_dilation)}.")
        from jaxlite._src.prims.shape import pad_p, slice_p
        has_bd = any(d != 1 for d in base_dilation)
        if has_bd:
            ident = max_identity if _kind_of(select_prim) == "max" else min_identity
            fill = u.const(x, ident(u.aval(x).dtype))
            x = pad_p.bind(x, fill, padding_config=tuple((0, 0, d - 1) for d in base_dilation))
        res = select_and_scatter_add_p.bind(ct, x, select_prim=select_prim,
                                            window_dimensions=tuple(window_dimensions),
                                            window_strides=tuple(window_strides),
                                            padding=tuple(padding))
        if has_bd:
            shp = u.aval(res).shape
            res = slice_p.bind(res, start_indices=(0,) * len(shp), limit_indices=tuple(shp),
                               strides=tuple(base_dilation))
        return [res, None]

    def batch(self, size, args, dims, select_prim, window_dimensions, window_strides, padding,
              base_dilation, window_dilation):
        t, x = (batch_util.bdim_at_front(a, d, size) for a, d in zip(args, dims))
        return self.bind(t, x, select_prim=select_prim,
                         window_dimensions=(1,) + tuple(window_dimensions),
                         window_strides=(1,) + tuple(window_strides),
                         padding=((0, 0),) + tuple(padding),
                         base_dilation=(1,) + tuple(base_dilation),
                         window_dilation=(1,) + tuple(window_dilation)), 0


class SelectAndScatterAdd(_WindowSharding, Primitive):
    """``source`` (one value per window) added into a zero array shaped like ``operand`` at
    each window's max (select_prim=ge) or min (le); linear in ``source``."""
    name = "select_and_scatter_add"

    def impl(self, src, x, select_prim, window_dimensions, window_strides, padding):
        kind = _kind_of(select_prim)
        n = x.ndim
        fill = max_identity(x.dtype) if kind == "max" else min_identity(x.dtype)
        tx = _Taps(x, fill, window_dimensions, window_strides, padding, (1,) * n, (1,) * n)
        out = np.zeros(tx.xp.shape, src.dtype)
        if 0 not in tx.out_shape:
            idx, _ = _choose(tx, None, kind)
            zero = np.zeros((), src.dtype)
            for k, sl in enumerate(tx.slices()):
                out[sl] += np.where(idx == k, src, zero)
        # undo the padding: crop what was padded, zero-fill what was cropped
        return np.ascontiguousarray(dilate_pad(out, tuple(range(n)), (1,) * n,
                                               [(-lo, -hi) for lo, hi in padding]))

    def abstract_eval(self, src, x, select_prim, window_dimensions, window_strides, padding):
        n = x.ndim
        shape = common_shape_rule(x, window_dimensions, window_strides, padding, (1,) * n,
                                  (1,) * n, name="select_and_scatter_add")
        if tuple(src.shape) != tuple(shape):
            raise TypeError("select_and_scatter_add source must have the shape of the "
                            f"windowed operand {shape}, got {tuple(src.shape)}.")
        return ShapedArray(x.shape, src.dtype, src.weak_type)

    def jvp(self, primals, tangents, **params):
        src, x = primals
        out = self.bind(src, x, **params)
        if u.is_zero(tangents[0]):
            return out, u.Zero(u.aval(out))
        return out, self.bind(u.instantiate(tangents[0]), x, **params)

    def transpose(self, ct, src, x, select_prim, window_dimensions, window_strides, padding):
        if u.is_zero(ct):
            return [None, None]
        ones = (1,) * len(window_dimensions)
        return [select_and_gather_add_p.bind(ct, x, select_prim=select_prim,
                                             window_dimensions=window_dimensions,
                                             window_strides=window_strides, padding=padding,
                                             base_dilation=ones, window_dilation=ones), None]

    def batch(self, size, args, dims, select_prim, window_dimensions, window_strides,
              padding):
        s, x = (batch_util.bdim_at_front(a, d, size) for a, d in zip(args, dims))
        return self.bind(s, x, select_prim=select_prim,
                         window_dimensions=(1,) + tuple(window_dimensions),
                         window_strides=(1,) + tuple(window_strides),
                         padding=((0, 0),) + tuple(padding)), 0


reduce_window_sum_p = ReduceWindowSum()
reduce_window_max_p = ReduceWindowMax()
reduce_window_min_p = ReduceWindowMin()
select_and_gather_add_p = SelectAndGatherAdd()
select_and_scatter_add_p = SelectAndScatterAdd()
