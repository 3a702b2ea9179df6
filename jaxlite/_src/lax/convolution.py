"""lax convolutions: conv_general_dilated and its convenience wrappers (conv,
conv_with_general_padding, conv_transpose), dimension-number helpers and padding strings."""
from __future__ import annotations

import enum
import operator
from typing import Union

import numpy as np

from jaxlite._src.api.sharding_types import place_as
from jaxlite._src.core import dtypes
from jaxlite._src.prims.precision import canonicalize_precision, check_cpu_precision
from jaxlite._src.sharding.types import resolve_out_sharding
from jaxlite._src.prims.conv import (ConvDimensionNumbers, conv_general_dilated_p,
                                     conv_shape_tuple as _conv_shape_tuple, dilate_shape)

__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "conv_dimension_numbers", "conv_general_permutations", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "conv_shape_tuple", "ConvDimensionNumbers",
           "ConvGeneralDilatedDimensionNumbers", "padtype_to_pads", "PaddingType",
           "conv_general_dilated_p"]

ConvGeneralDilatedDimensionNumbers = Union[tuple, ConvDimensionNumbers, None]


class PaddingType(enum.Enum):
    """Padding modes of convolutions and windowed reductions."""
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def _shape(x):
    if hasattr(x, "shape"):
        return tuple(int(d) for d in x.shape)
    raise TypeError(f"convolution operands must be arrays, got {type(x).__name__} {x!r}.")


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """``(low, high)`` pads for each dimension from a padding string ('SAME', 'SAME_LOWER',
    'VALID') or PaddingType: SAME keeps ``ceil(in / stride)`` outputs, with the odd extra
    pad at the end (at the start for SAME_LOWER); VALID pads nothing."""
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError as err:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.") from err
    if padding in (PaddingType.SAME, PaddingType.SAME_LOWER):
        pads = []
        for n, k, s in zip(in_shape, window_shape, window_strides):
            n, k, s = int(n), int(k), int(s)
            out = -(-n // s)
            total = max((out - 1) * s + k - n, 0)
            if padding == PaddingType.SAME:
                pads.append((total // 2, total - total // 2))
            else:
                pads.append((total - total // 2, total // 2))
        return pads
    if padding == PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    raise TypeError(f"Unknown padding type: {padding}.")


def conv_general_permutations(dimension_numbers):
    """``(lhs_perm, rhs_perm, out_perm)`` of a string spec such as
    ``('NHWC', 'HWIO', 'NHWC')`` (spatial dimensions ordered as in the rhs spec)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1]) ==
            set(out_spec) - set(charpairs[2])):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {dimension_numbers}.")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
    return tuple(perm(s, p) for s, p in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, a ConvDimensionNumbers or three spec strings) as a
    ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dimension_numbers)}.")
        if not all(isinstance(e, str) for e in dimension_numbers):
            raise TypeError("convolution dimension_numbers elements must be strings, got "
                            f"{tuple(map(type, dimension_numbers))}.")
        for i, e in enumerate(dimension_numbers):
            if len(e) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to "
                                f"the ndim of lhs and rhs, got {len(e)} for lhs and rhs "
                                f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Output shape of a conv of operands in canonical (N, C, ...)/(O, I, ...) order;
    ``pads`` may be a padding string."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    return _conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """Output shape of ``conv_general_dilated`` (no dilation) with string
    ``dimension_numbers``."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lp), np.take(rhs_shape, rp), window_strides,
                           padding)
    return tuple(int(d) for d in np.take(out, np.argsort(op)))


def _conv_transpose_padding(k, s, padding):
    """(before, after) padding of one dimension of a transposed conv (JAX's rule)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a = pads[0]
        pad_len = sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """Output shape of ``conv_transpose`` with string ``dimension_numbers``."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lhs_t = np.take(lhs_shape, lp)
    rhs_t = np.take(rhs_shape, rp)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(int(k), s, padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    padding = [int(np.sum(p)) for p in padding]
    unpad = [(int(i) - 1) * s - int(k) + 2 for i, k, s in zip(lhs_t[2:], rhs_t[2:],
                                                               window_strides)]
    space = [a + b for a, b in zip(unpad, padding)]
    out = (int(lhs_t[0]), int(rhs_t[0])) + tuple(space)
    return tuple(int(d) for d in np.take(out, np.argsort(op)))


def _canon_dtype(dt, name):
    if dt is None:
        return None
    return dtypes.canonicalize_dtype(np.dtype(dt))


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-d convolution with strides, padding, lhs (transposed-conv) and rhs
    (atrous) dilation, feature/batch groups and any dimension layout.

    ``padding`` is 'SAME', 'SAME_LOWER', 'VALID' or ``n`` ``(low, high)`` pairs;
    ``dimension_numbers`` is None (``('NCHW', 'OIHW', 'NCHW')``-like), a
    ConvDimensionNumbers, or three strings such as ``('NHWC', 'HWIO', 'NHWC')``. Operands
    must share a dtype (no promotion, as in JAX). ``out_sharding`` (a Sharding, or a
    PartitionSpec under ``jax.set_mesh``) lays out the result."""
    lshape, rshape = _shape(lhs), _shape(rhs)
    dnums = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    if lhs_dilation is None:
        lhs_dilation = (1,) * (len(lshape) - 2)
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution "
                         "using this op. Please either exactly specify the required padding "
                         "or use conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * (len(rshape) - 2)
    if isinstance(padding, str):
        rk = np.take(rshape, dnums.rhs_spec)[2:]
        eff = dilate_shape(rk, rhs_dilation)
        padding = padtype_to_pads(np.take(lshape, dnums.lhs_spec)[2:], eff, window_strides,
                                  padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError) as e:
        raise ValueError("padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from e
    precision = canonicalize_precision(precision)
    check_cpu_precision(precision, "conv_general_dilated")
    s = resolve_out_sharding(out_sharding)
    out = conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides), padding=padding,
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation), dimension_numbers=dnums,
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), precision=precision,
        preferred_element_type=_canon_dtype(preferred_element_type, "conv_general_dilated"),
        out_sharding=s)
    return out if s is None else place_as(out, s)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution of (N, C, spatial...) inputs with (O, I, spatial...) kernels;
    ``padding`` is 'SAME' or 'VALID' (or explicit pairs)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv`` with explicit padding and lhs/rhs dilation (default layouts)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """Transposed ("fractionally strided") convolution: a conv with lhs dilation
    ``strides``. Layout defaults to TensorFlow's (``NHWC``/``HWIO``); ``transpose_kernel``
    flips the kernel's spatial axes and swaps its in/out features (Keras' Conv2DTranspose).
    'SAME'/'VALID' (and, with ``use_consistent_padding``, explicit pairs) name the padding
    of the corresponding forward conv."""
    lshape, rshape = _shape(lhs), _shape(rhs)
    if not (len(lshape) == len(rshape) and len(lshape) >= 2):
        raise ValueError("conv_transpose requires lhs and rhs of the same rank >= 2, got "
                         f"shapes {lshape} and {rshape}.")
    nd = len(lshape)
    one = (1,) * (nd - 2)
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if nd not in defaults:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    k_sdims = np.take(rshape, dn.rhs_spec)[2:]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (nd - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        eff = dilate_shape(k_sdims, rhs_dilation)
        reps = [padding] * len(strides) if isinstance(padding, str) else \
            [tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(int(k), int(s), p)
                     for k, s, p in zip(eff, strides, reps))
    else:
        pads = padding
    if transpose_kernel:
        from jaxlite._src.lax.shape import rev, transpose
        for d in dn.rhs_spec[2:]:     # one rev per axis, as JAX's np.flip loop
            rhs = rev(rhs, (int(d),))
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, one, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
