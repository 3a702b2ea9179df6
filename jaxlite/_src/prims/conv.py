"""conv_general_dilated: N-d convolution with strides, padding, lhs/rhs dilation, feature and
batch groups and arbitrary dimension layouts (XLA's Conv).

The NumPy implementation canonicalises both operands (lhs to ``(N, C, spatial...)``, rhs to
``(O, I, spatial...)``), dilates and pads the lhs once, takes strided window views
(``sliding_window_view``, no copy) and contracts them with the kernel as one batched BLAS
matmul per group (im2col), in batch chunks that bound the size of the patch matrix.
"""
from __future__ import annotations

import itertools
import operator
from typing import NamedTuple, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive, aval_nbytes
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import batch_util

__all__ = ["conv_general_dilated_p", "ConvDimensionNumbers"]

# Upper bound on the elements of one im2col patch matrix (the batch is chunked above it).
_PATCH_ELEMS = 1 << 22


class ConvDimensionNumbers(NamedTuple):
    """Batch, feature and spatial dimensions of a convolution's operands and output.

    ``lhs_spec``: (batch dimension, feature dimension, spatial dimensions...);
    ``rhs_spec``: (out feature dimension, in feature dimension, spatial dimensions...);
    ``out_spec``: (batch dimension, feature dimension, spatial dimensions...).
    """
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def dilate_shape(shape, dilation):
    """Sizes of ``shape`` after inserting ``dilation - 1`` holes between elements."""
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def stride_dim(d, window, stride):
    """Number of windows of size ``window`` at ``stride`` in a dimension of size ``d``."""
    if d < window:
        return 0
    return (d - window) // stride + 1


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Output shape of a conv with operands in canonical order (N, C, ...), (O, I, ...)."""
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={tuple(tuple(p) for p in pads)} for "
                         f"lhs_shape[2:]={tuple(int(d) for d in lhs_shape[2:])}")
    space = tuple(stride_dim(p, int(k), int(s)) for p, k, s in zip(padded, rhs_shape[2:],
                                                                   strides))
    n = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (int(n), int(rhs_shape[0])) + space


def dilate_pad(x, axes, dilation, padding, fill=0):
    """``x`` with ``dilation - 1`` holes between elements and ``(lo, hi)`` edge padding
    (negative padding crops) along ``axes``; holes and pads hold ``fill``."""
    if all(d == 1 for d in dilation) and all(lo == 0 and hi == 0 for lo, hi in padding):
        return x
    shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for ax, d, (lo, hi) in zip(axes, dilation, padding):
        n = x.shape[ax]
        size = max(dilate_shape((n,), (d,))[0] + lo + hi, 0)
        shape[ax] = size
        # element j lands at lo + j * d; keep the j with 0 <= lo + j * d < size
        j0 = max(0, -(lo // d))
        j1 = min(n, (size - 1 - lo) // d + 1) if size - 1 - lo >= 0 else 0
        j1 = max(j1, j0)
        src[ax] = slice(j0, j1)
        start = lo + j0 * d
        dst[ax] = slice(start, start + max(j1 - j0 - 1, 0) * d + (j1 > j0), d)
    out = np.full(shape, fill, x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out


def _compute_dtype(dt):
    """The dtype NumPy computes a conv in (half floats go through float32 BLAS)."""
    dt = np.dtype(dt)
    if dt.kind == "f" and dt.itemsize < 4 or dt.name == "bfloat16":
        return np.dtype(np.float32)
    return dt


def conv_impl(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
              dimension_numbers, feature_group_count, batch_group_count, out_dtype):
    """conv_general_dilated on NumPy arrays (see the module docstring)."""
    lspec, rspec, ospec = (tuple(int(i) for i in s) for s in dimension_numbers)
    ct = np.dtype(np.bool_) if lhs.dtype == np.bool_ else \
        _compute_dtype(np.result_type(lhs.dtype, out_dtype))
    if lhs.dtype != ct:
        lhs = lhs.astype(ct)
    if rhs.dtype != ct:
        rhs = rhs.astype(ct)
    nsp = lhs.ndim - 2
    if any(d > 1 for d in lhs_dilation) and all(s == 1 for s in window_strides) and \
            all(d == 1 for d in rhs_dilation):
        return _conv_by_phases(lhs, rhs, padding, lhs_dilation, dimension_numbers,
                               feature_group_count, batch_group_count, out_dtype)
    # dilate and pad in the operand's own layout, then view it as (N, C, spatial...)
    xp = dilate_pad(lhs, lspec[2:], lhs_dilation, padding)
    x = np.transpose(xp, lspec)
    w = np.transpose(rhs, rspec)                               # (O, Cg, k...)
    N, C = x.shape[:2]
    O, Cg = w.shape[:2]
    ksize = tuple(w.shape[2:])
    eff = dilate_shape(ksize, rhs_dilation)
    out_sp = tuple(stride_dim(n, e, s) for n, e, s in zip(x.shape[2:], eff, window_strides))
    G, B = feature_group_count, batch_group_count
    BG, Nb, Og = B * G, N // B, O // (B * G)
    out_canon = (Nb, O) + out_sp
    P = int(np.prod(out_sp, dtype=np.int64))
    PK = int(np.prod(ksize, dtype=np.int64))
    if P == 0 or Nb == 0 or O == 0 or PK == 0 or Cg == 0:
        return _reorder_out(np.zeros(out_canon, out_dtype), ospec)
    sp = tuple(range(2, 2 + nsp))
    win = sliding_window_view(x, eff, axis=sp)                 # (N, C, pos..., e...)
    win = win[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in window_strides)
              + tuple(slice(None, None, d) for d in rhs_dilation)]
    win = win.reshape((B, Nb, G, Cg) + out_sp + ksize)         # a view (splits only)
    osp = list(range(4, 4 + nsp))
    ksp = list(range(4 + nsp, 4 + 2 * nsp))
    # The patch matrix is one strided copy of the window view; lay it out so its innermost
    # axis is the view's smallest stride (long contiguous reads), then contract with BLAS:
    #  "mk": patches (BG, M, K) @ w (BG, K, Og)       smallest stride among the K axes
    #  "km": patches (BG, K, M)^T @ w (BG, K, Og)     ... among the M axes (Nb, out...)
    #  "ck": w (BG, 1, Og, K) @ patches (BG, Nb, K, P)  ... an output axis, channels-first out
    # (M: batch and output positions, K: input features and kernel taps).
    st = win.strides

    def stride(a):
        return abs(st[a]) if win.shape[a] > 1 else np.inf

    def by_stride(axes):
        return sorted(axes, key=lambda a: -stride(a))
    m_axes, k_axes = [1] + osp, [3] + ksp
    inner = min(m_axes + k_axes, key=lambda a: (stride(a), -win.shape[a]))
    if inner in k_axes:
        mode, m_order, k_order = "mk", m_axes, by_stride(k_axes)
    elif inner in osp and not ospec[1] > max(ospec[2:], default=-1):
        mode, m_order, k_order = "ck", [1] + by_stride(osp), k_axes
    else:
        mode, m_order, k_order = "km", by_stride(m_axes), k_axes
    Kp = Cg * PK
    wg = w.reshape((B, G, Og, Cg) + ksize)       # w axes: 0 B, 1 G, 2 Og, 3 Cg, 4.. k
    w_k = [3 if a == 3 else 4 + ksp.index(a) for a in k_order]
    if mode == "ck":
        wm = wg.transpose([0, 1, 2] + w_k).reshape(BG, 1, Og, Kp)
        layout = [0, 2, 1] + k_order + m_order[1:]
    else:
        wm = wg.transpose([0, 1] + w_k + [2]).reshape(BG, Kp, Og)
        layout = [0, 2] + (m_order + k_order if mode == "mk" else k_order + m_order)
    win = win.transpose(layout)
    nb_pos = layout.index(1)                                   # Nb in the patches
    nb_res = 1 if mode == "ck" else 1 + m_order.index(1)       # Nb in the result
    res_shape = [BG] + [win.shape[i] for i in range(2, win.ndim) if layout[i] in m_axes]
    res_shape = res_shape[:2] + [Og] + res_shape[2:] if mode == "ck" else res_shape + [Og]
    res = None
    step = max(1, _PATCH_ELEMS // max(1, BG * P * Kp))
    for n0 in range(0, Nb, step):
        n1 = min(Nb, n0 + step)
        idx = [slice(None)] * win.ndim
        idx[nb_pos] = slice(n0, n1)
        part = win[tuple(idx)]
        mc = (n1 - n0) * P
        if mode == "mk":
            r = _matmul(part.reshape(BG, mc, Kp), wm)
        elif mode == "km":
            r = _matmul(part.reshape(BG, Kp, mc).transpose(0, 2, 1), wm)
        else:
            r = _matmul(wm, part.reshape(BG, n1 - n0, Kp, P))
        if step >= Nb:
            res = r
            break
        if res is None:
            res = np.empty(res_shape, r.dtype)
        ridx = [slice(None)] * len(res_shape)
        ridx[nb_res] = slice(n0, n1)
        sub = list(res_shape)
        sub[nb_res] = n1 - n0
        res[tuple(ridx)] = r.reshape(sub)
    res = res.reshape(res_shape)
    labels = ["bg", 1, "og"] + m_order[1:] if mode == "ck" else ["bg"] + m_order + ["og"]
    res = res.transpose([labels.index(a) for a in [1, "bg", "og"] + osp])
    res = res.reshape(out_canon)
    if res.dtype != out_dtype:
        res = res.astype(out_dtype)
    return _reorder_out(res, ospec)


def _conv_by_phases(lhs, rhs, padding, lhs_dilation, dimension_numbers, fgc, bgc,
                    out_dtype):
    """A stride-1 conv of an lhs-dilated input (transposed convs, gradients of strided
    convs) without multiplying the holes: output positions ``r::d`` (one phase per residue
    ``r`` of each dilated axis) only meet the kernel taps ``k0::d``, so each phase is a
    dense conv of the undilated input with a sub-kernel."""
    lspec, rspec, ospec = dimension_numbers
    nsp = lhs.ndim - 2
    ksize = [rhs.shape[rspec[2 + i]] for i in range(nsp)]
    n_in = [lhs.shape[lspec[2 + i]] for i in range(nsp)]
    out_sp = [max(dilate_shape((n,), (d,))[0] + lo + hi - k + 1, 0)
              for n, d, (lo, hi), k in zip(n_in, lhs_dilation, padding, ksize)]
    out_shape = [0] * lhs.ndim
    out_shape[ospec[0]] = lhs.shape[lspec[0]] // bgc
    out_shape[ospec[1]] = rhs.shape[rspec[0]]
    for i in range(nsp):
        out_shape[ospec[2 + i]] = out_sp[i]
    ct = np.result_type(lhs.dtype, rhs.dtype)
    out = np.zeros(out_shape, ct)
    if 0 in out_shape:
        return out.astype(out_dtype)
    for phase in itertools.product(*[range(min(d, o)) for d, o in zip(lhs_dilation,
                                                                          out_sp)]):
        pads, ksl, osl = [], [slice(None)] * rhs.ndim, [slice(None)] * lhs.ndim
        for i, (r, d, (lo, _), k, n, o) in enumerate(zip(phase, lhs_dilation, padding,
                                                         ksize, n_in, out_sp)):
            k0 = (lo - r) % d
            kr = len(range(k0, k, d))
            m = len(range(r, o, d))
            if kr == 0:
                break
            b = (r + k0 - lo) // d
            pads.append((-b, m + kr - 1 - n + b))
            ksl[rspec[2 + i]] = slice(k0, None, d)
            osl[ospec[2 + i]] = slice(r, None, d)
        else:
            out[tuple(osl)] = conv_impl(lhs, rhs[tuple(ksl)], (1,) * nsp, pads, (1,) * nsp,
                                        (1,) * nsp, dimension_numbers, fgc, bgc, ct)
    return out if out.dtype == out_dtype else out.astype(out_dtype)


def _matmul(a, b):
    if a.dtype == np.bool_:
        return np.matmul(a.astype(np.int32), b.astype(np.int32)) != 0
    return np.matmul(a, b)


def _reorder_out(res, ospec):
    perm = tuple(int(i) for i in np.argsort(ospec))
    if perm != tuple(range(len(perm))):
        res = np.transpose(res, perm)
    return np.ascontiguousarray(res)


def _sdims(spec):
    return tuple(spec[2:])


def _spec_transpose(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                    lhs_dilation, rhs_dilation):
    """Padding of the transposed conv giving the lhs cotangent (JAX's rule)."""
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window_dimensions, rhs_dilation)
    out_d = dilate_shape(out_shape, window_strides)
    before = np.subtract(rhs_d, [lo for lo, _ in padding]) - 1
    after = np.add(lhs_d, rhs_d) - 1 - np.asarray(out_d, np.int64) - before
    return [(int(b), int(a)) for b, a in zip(before, after)]


def vjp_rhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                    lhs_dilation, rhs_dilation):
    """Padding of the conv (lhs with the cotangent) giving the rhs cotangent (JAX's rule)."""
    if len(in_shape) == 0:
        return []
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window_dimensions, rhs_dilation)
    out_d = dilate_shape(out_shape, window_strides)
    lo = [p for p, _ in padding]
    from_lhs = [o - i for o, i in zip(out_d, lhs_d)]
    from_rhs = [r - p - 1 for r, p in zip(rhs_d, lo)]
    return list(zip(lo, [a + b for a, b in zip(from_lhs, from_rhs)]))


def _reshape_axis_into(src, dst, x):
    """Merge axis ``src`` of ``x`` into axis ``dst`` (numbered after removing ``src``), as
    the major factor (JAX's helper)."""
    from jaxlite._src.prims.shape import reshape_p
    shape = tuple(u.aval(x).shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = list(np.delete(shape, src))
    new[dst] *= shape[src]
    dims = None if perm == list(range(len(shape))) else tuple(perm)
    return reshape_p.bind(x, new_sizes=tuple(int(d) for d in new), dimensions=dims,
                          sharding=None)


def _reshape_axis_out_of(src, size1, x):
    """Split axis ``src`` of ``x`` into ``(size1, rest)``."""
    from jaxlite._src.prims.shape import reshape_p
    shape = list(u.aval(x).shape)
    size2, ragged = divmod(shape[src], size1)
    assert not ragged
    shape[src:src + 1] = [size1, size2]
    return reshape_p.bind(x, new_sizes=tuple(int(d) for d in shape), dimensions=None,
                          sharding=None)


def _index_pads(pads):
    return tuple((operator.index(lo), operator.index(hi)) for lo, hi in pads)


def _check_preferred_element_type(input_dtype, pet):
    """JAX's TypeErrors for a ``preferred_element_type`` a convolution of ``input_dtype``
    operands cannot produce (``lax._validate_preferred_element_type``): integers may give
    floats; otherwise the kind (integer, floating, complex) and the signedness stay, and the
    type is not narrower."""
    if not (dtypes.issubdtype(input_dtype, np.integer) and
            dtypes.issubdtype(pet, np.floating)):
        kinds = (np.integer, np.floating, np.complexfloating)
        if any(dtypes.issubdtype(input_dtype, t) and not dtypes.issubdtype(pet, t)
               for t in kinds):
            raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                            "compatible combinations of (input_type, preferred_element_type)"
                            " are (integral, integral), (integral, floating), (floating, "
                            "floating), (complex, complex.")
        if dtypes.issubdtype(input_dtype, np.signedinteger) and \
                not dtypes.issubdtype(pet, np.signedinteger):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            "original type.")
    if pet.itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original "
                        "type.")


class ConvGeneralDilated(Primitive):
    """``conv_general_dilated(lhs, rhs)``: XLA's general convolution (see the module)."""
    name = "conv_general_dilated"

    def check_operands(self, vals, params):
        """Eager: JAX's TypeError for a ``preferred_element_type`` the operands' dtype
        cannot produce (checked only when one is given)."""
        pet = params.get("preferred_element_type")
        if pet is not None:
            _check_preferred_element_type(np.asarray(vals[0]).dtype, np.dtype(pet))

    def impl(self, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
             dimension_numbers, feature_group_count, batch_group_count, precision=None,
             preferred_element_type=None, out_sharding=None):
        out_dt = np.dtype(preferred_element_type or lhs.dtype)
        if lhs.dtype != out_dt:   # (XLA:CPU computes in the preferred type: bools counted)
            lhs, rhs = lhs.astype(out_dt), rhs.astype(out_dt)
        return conv_impl(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, feature_group_count, batch_group_count, out_dt)

    def sharding_rule(self, avals, dimension_numbers, feature_group_count=1,
                      batch_group_count=1, **params):
        """For the partitioner: the lhs batch dimension is the output batch dimension and
        the kernel's output-feature dimension the output feature dimension (each device
        convolves its block); the contracted feature and the spatial dimensions are
        computed whole (with batch groups, the batch dimension too)."""
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        lhs = [None] * avals[0].ndim
        if batch_group_count == 1:
            lhs[lhs_spec[0]] = out_spec[0]
        rhs = [None] * avals[1].ndim
        rhs[rhs_spec[0]] = out_spec[1]
        return [tuple(lhs), tuple(rhs)]

    def whole_dims(self, avals, dimension_numbers, feature_group_count=1,
                   batch_group_count=1, **params):
        """With feature or batch groups an output feature belongs to a group of input
        features: the kernel's output features are computed whole (the result is then
        split as the kernel was)."""
        grouped = feature_group_count != 1 or batch_group_count != 1
        return [(), (dimension_numbers.rhs_spec[0],) if grouped else ()]

    def explicit_sharding_rule(self, avals, dims, dimension_numbers, out_sharding=None,
                               **params):
        """Over Explicit axes (JAX's rule): the ``out_sharding`` asked for; else, with an
        unsplit kernel and lhs feature dimension, the lhs's splits (spatial dimensions must
        stay divisible)."""
        from jaxlite._src.sharding.types import (ShardingTypeError, mesh_of, sharding_dims,
                                                 varying_shape_dims)
        out = self.abstract_eval(*avals, dimension_numbers=dimension_numbers,
                                 out_sharding=out_sharding, **params)
        if out_sharding is not None:
            return [sharding_dims(out_sharding, out.ndim)]
        ld, rd = dims
        if any(rd) or ld[dimension_numbers.lhs_spec[1]]:
            raise ShardingTypeError(
                "Please specify the output sharding via `out_sharding` parameter of "
                "`conv_general_dilated`. (Its result sharding is only inferred from an "
                "unsplit kernel and an unsplit lhs feature dimension.)")
        return [varying_shape_dims("conv_general_dilated", avals[0], ld, out.shape,
                                   mesh_of(avals))]

    def cost(self, avals_in, avals_out, literals, window_strides, padding, lhs_dilation,
             rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
             **params):
        """XLA's ``convolution``: 2 flops per multiply-add, counting only the kernel taps that
        land on an input element (not on padding or between dilated input elements)."""
        lhs, rhs = avals_in
        out = avals_out[0]
        ls, rs, os_ = dimension_numbers
        taps = 1
        for i, (st, (lo, _), ld, rd) in enumerate(zip(window_strides, padding, lhs_dilation,
                                                       rhs_dilation)):
            n_in, k, n_out = lhs.shape[ls[2 + i]], rhs.shape[rs[2 + i]], out.shape[os_[2 + i]]
            pos = (np.arange(n_out)[:, None] * st + np.arange(k)[None, :] * rd - lo)
            ok = (pos >= 0) & (pos <= (n_in - 1) * ld) & (pos % ld == 0)
            taps *= int(ok.sum())
        batch = lhs.shape[ls[0]] // batch_group_count
        in_feat = lhs.shape[ls[1]] // feature_group_count
        fma = batch * in_feat * out.shape[os_[1]] * taps
        return [(2 * fma, 0, [aval_nbytes(a) for a in avals_in], aval_nbytes(out))]

    def abstract_eval(self, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                      dimension_numbers, feature_group_count, batch_group_count,
                      precision=None, preferred_element_type=None, out_sharding=None):
        shape = self.shape_rule(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, dimension_numbers, feature_group_count,
                                batch_group_count)
        if lhs.dtype != rhs.dtype:
            raise TypeError("lax.conv_general_dilated requires arguments to have the same "
                            f"dtypes, got {lhs.dtype.name}, {rhs.dtype.name}.")
        dt = lhs.dtype
        if preferred_element_type is not None:
            dt = np.dtype(preferred_element_type)
            _check_preferred_element_type(lhs.dtype, dt)
        return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)

    @staticmethod
    def shape_rule(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count):
        """The output shape, raising JAX's errors for inconsistent operands."""
        dn = dimension_numbers
        if len(lhs.shape) != len(rhs.shape):
            raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                             f"dimensions, but got {lhs.shape} and {rhs.shape}.")
        if not feature_group_count > 0:
            raise ValueError("conv_general_dilated feature_group_count must be a positive "
                             f"integer, got {feature_group_count}.")
        lhs_feat = lhs.shape[dn.lhs_spec[1]]
        quot, rem = divmod(lhs_feat, feature_group_count)
        if rem:
            raise ValueError("conv_general_dilated feature_group_count must divide lhs "
                             f"feature dimension size, but {feature_group_count} does not "
                             f"divide {lhs_feat}.")
        if quot != rhs.shape[dn.rhs_spec[1]]:
            raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                             "feature_group_count must equal the rhs input feature dimension "
                             f"size, but {lhs_feat} // {feature_group_count} != "
                             f"{rhs.shape[dn.rhs_spec[1]]}.")
        if rhs.shape[dn.rhs_spec[0]] % feature_group_count:
            raise ValueError("conv_general_dilated rhs output feature dimension size must be "
                             "a multiple of feature_group_count, but "
                             f"{rhs.shape[dn.rhs_spec[0]]} is not a multiple of "
                             f"{feature_group_count}.")
        if not batch_group_count > 0:
            raise ValueError("conv_general_dilated batch_group_count must be a positive "
                             f"integer, got {batch_group_count}.")
        lhs_batch = lhs.shape[dn.lhs_spec[0]]
        if batch_group_count > 1 and lhs_batch % batch_group_count:
            raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                             f"dimension size, but {batch_group_count} does not divide "
                             f"{lhs_batch}.")
        if rhs.shape[dn.rhs_spec[0]] % batch_group_count:
            raise ValueError("conv_general_dilated rhs output feature dimension size must be "
                             "a multiple of batch_group_count, but "
                             f"{rhs.shape[dn.rhs_spec[0]]} is not a multiple of "
                             f"{batch_group_count}.")
        if batch_group_count > 1 and feature_group_count > 1:
            raise ValueError("At most one of batch_group_count and feature_group_count may "
                             f"be > 1, got batch_group_count={batch_group_count} and "
                             f"feature_group_count={feature_group_count}")
        if len(_sdims(dn.rhs_spec)) != len(window_strides):
            raise ValueError("conv_general_dilated window and window_strides must have the "
                             f"same number of dimensions, but got {len(_sdims(dn.rhs_spec))} "
                             f"and {len(window_strides)}")
        for name, v in (("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
            if len(v) != len(window_strides):
                raise ValueError(f"conv_general_dilated {name} must have one entry per "
                                 f"spatial dimension, got {tuple(v)}.")
            if any(d < 1 for d in v):
                raise ValueError(f"conv_general_dilated {name} must be positive, got "
                                 f"{tuple(v)}.")
        if any(s < 1 for s in window_strides):
            raise ValueError("conv_general_dilated window_strides must be positive, got "
                             f"{tuple(window_strides)}.")
        lhs_t = dilate_shape(np.take(lhs.shape, dn.lhs_spec), (1, 1) + tuple(lhs_dilation))
        rhs_t = dilate_shape(np.take(rhs.shape, dn.rhs_spec), (1, 1) + tuple(rhs_dilation))
        out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding, batch_group_count)
        return tuple(int(d) for d in np.take(out_t, np.argsort(dn.out_spec)))

    def jvp(self, primals, tangents, **params):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y, **params)
        a = None if u.is_zero(tx) else self.bind(u.instantiate(tx), y, **params)
        b = None if u.is_zero(ty) else self.bind(x, u.instantiate(ty), **params)
        if a is None and b is None:
            return out, u.Zero(u.aval(out))
        return out, a if b is None else b if a is None else u.add_any(a, b)

    def transpose(self, ct, lhs, rhs, **params):
        if u.is_zero(ct):
            return [None, None]
        if u.is_undefined(lhs) and u.is_undefined(rhs):
            raise ValueError("conv_general_dilated is not linear in both operands at once")
        if u.is_undefined(lhs):
            return [self._transpose_lhs(ct, lhs, rhs, **params), None]
        return [None, self._transpose_rhs(ct, lhs, rhs, **params)]

    def _transpose_lhs(self, g, lhs, rhs, *, window_strides, padding, lhs_dilation,
                       rhs_dilation, dimension_numbers, feature_group_count,
                       batch_group_count, precision=None, preferred_element_type=None,
                       out_sharding=None):
        """The lhs cotangent: a conv of ``g`` with the spatially reversed kernel (in and out
        features swapped), lhs dilation from the strides (JAX's rule)."""
        from jaxlite._src.prims.shape import rev_p
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        lhs_aval = u.aval(lhs)
        rhs_shape = u.aval(rhs).shape
        g_shape = u.aval(g).shape
        t_rhs_spec = _spec_transpose(rhs_spec)
        if feature_group_count > 1:
            rhs = _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
            rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        elif batch_group_count > 1:
            rhs = _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
            rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
            feature_group_count = batch_group_count
        trans_dn = ConvDimensionNumbers(out_spec, t_rhs_spec, lhs_spec)
        pads = vjp_lhs_padding(np.take(lhs_aval.shape, _sdims(lhs_spec)),
                               np.take(rhs_shape, _sdims(rhs_spec)), window_strides,
                               np.take(g_shape, _sdims(out_spec)), padding, lhs_dilation,
                               rhs_dilation)
        revd = rev_p.bind(rhs, dimensions=tuple(int(d) for d in _sdims(rhs_spec)))
        revd = u.convert(revd, u.aval(g).dtype)
        out = self.bind(g, revd, window_strides=tuple(lhs_dilation),
                        padding=_index_pads(pads), lhs_dilation=tuple(window_strides),
                        rhs_dilation=tuple(rhs_dilation), dimension_numbers=trans_dn,
                        feature_group_count=feature_group_count, batch_group_count=1,
                        precision=precision, preferred_element_type=preferred_element_type,
                        out_sharding=None)
        out = u.convert(out, lhs_aval.dtype)
        if batch_group_count > 1:
            out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
            out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
        return out

    def _transpose_rhs(self, g, lhs, rhs, *, window_strides, padding, lhs_dilation,
                       rhs_dilation, dimension_numbers, feature_group_count,
                       batch_group_count, precision=None, preferred_element_type=None,
                       out_sharding=None):
        """The rhs cotangent: a conv of the lhs with ``g`` as the kernel, batch and feature
        roles swapped (JAX's rule)."""
        rhs_aval = u.aval(rhs)
        g_aval = u.aval(g)
        if int(np.prod(g_aval.shape)) == 0:
            return u.zeros(rhs_aval)
        lhs_shape = u.aval(lhs).shape
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        lhs_t, rhs_t, out_t = map(_spec_transpose, dimension_numbers)
        if batch_group_count > 1:
            feature_group_count, batch_group_count = batch_group_count, 1
        elif feature_group_count > 1:
            feature_group_count, batch_group_count = 1, feature_group_count
        trans_dn = ConvDimensionNumbers(lhs_t, out_t, rhs_t)
        pads = vjp_rhs_padding(np.take(lhs_shape, _sdims(lhs_spec)),
                               np.take(rhs_aval.shape, _sdims(rhs_spec)), window_strides,
                               np.take(g_aval.shape, _sdims(out_spec)), padding,
                               lhs_dilation, rhs_dilation)
        lhs = u.convert(lhs, g_aval.dtype)
        out = self.bind(lhs, g, window_strides=tuple(rhs_dilation), padding=_index_pads(pads),
                        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
                        dimension_numbers=trans_dn, feature_group_count=feature_group_count,
                        batch_group_count=batch_group_count, precision=precision,
                        preferred_element_type=preferred_element_type, out_sharding=None)
        return u.convert(out, rhs_aval.dtype)

    def batch_changes_order(self, size, avals, dims, **params):
        """A float/complex convolution batched is other matmuls (more rows or groups, other
        chunks of the patch matrix), whose accumulation order can differ."""
        return any(a.dtype.kind in "fc" for a in avals)

    def batch(self, size, args, dims, **params):
        """Fold the vmapped dimension into the conv's batch (lhs only), output features
        (rhs only) or feature groups (both), as JAX's rule."""
        lhs, rhs = args
        lb, rb = dims
        dn = params["dimension_numbers"]
        lhs_spec, rhs_spec, out_spec = dn
        fgc, bgc = params["feature_group_count"], params["batch_group_count"]
        if size == 0:
            return batch_util.loop_batch(self, size, args, dims, params)
        p = dict(params)
        if lb is not None and rb is not None:
            if bgc > 1:
                new_lhs = _reshape_axis_into(lb, lhs_spec[0], lhs)
                p["batch_group_count"] = bgc * size
            else:
                new_lhs = _reshape_axis_into(lb, lhs_spec[1], lhs)
                p["feature_group_count"] = fgc * size
            new_rhs = _reshape_axis_into(rb, rhs_spec[0], rhs)
            out = self.bind(new_lhs, new_rhs, **p)
            return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
        if lb is not None:
            if bgc == 1:
                new_lhs = _reshape_axis_into(lb, lhs_spec[0], lhs)
            else:
                new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lb <= lhs_spec[0]), bgc, lhs)
                new_lhs = _reshape_axis_into(lb + int(lhs_spec[0] < lb), lhs_spec[0] + 1,
                                             new_lhs)
                new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
            out = self.bind(new_lhs, rhs, **p)
            return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
        if fgc == 1 and bgc == 1:
            new_rhs = _reshape_axis_into(rb, rhs_spec[0], rhs)
            out = self.bind(lhs, new_rhs, **p)
            return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
        groups = fgc if fgc > 1 else bgc
        new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rb <= rhs_spec[0]), groups, rhs)
        new_rhs = _reshape_axis_into(rb + int(rhs_spec[0] < rb), rhs_spec[0] + 1, new_rhs)
        new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
        out = self.bind(lhs, new_rhs, **p)
        out = _reshape_axis_out_of(out_spec[1], groups, out)
        out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
        return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]

    def pp_params(self, params):
        out = []
        for k in sorted(params):
            v = params[k]
            if k == "preferred_element_type" and v is not None:
                v = np.dtype(v).name
            out.append((k, v))
        return out


conv_general_dilated_p = ConvGeneralDilated()
