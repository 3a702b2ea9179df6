"""``lax.conv_general_dilated_patches`` (image patches as a convolution with a one-hot
kernel) and ``lax.conv_general_dilated_local`` (a convolution with untied weights: one
filter per output position, as a dot_general over the patches). Both follow JAX's
definitions, including the order of the flattened patch dimension (input channel major,
then the filter's spatial dimensions in ``rhs_spec`` order)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.lax.convolution import conv_dimension_numbers, conv_general_dilated
from jaxlite._src.lax.dot import dot_general
from jaxlite._src.lax.elementwise import add, convert_element_type, eq
from jaxlite._src.lax.shape import broadcast_in_dim, broadcasted_iota, reshape, transpose
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.prims.precision import Precision, canonicalize_precision

__all__ = ["conv_general_dilated_patches", "conv_general_dilated_local"]


def _moveaxis(x, src, dst):
    """``x`` with axes ``src`` moved to positions ``dst`` (NumPy's moveaxis)."""
    nd = x.ndim
    src = [s % nd for s in src]
    dst = [d % nd for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x if order == list(range(nd)) else transpose(x, tuple(order))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                                 precision=None, preferred_element_type=None):
    """The patches a ``conv_general_dilated`` with a filter of spatial shape
    ``filter_shape`` would see, flattened into the output feature dimension: its size is
    ``C * prod(filter_shape)`` (channel major). Arguments as ``conv_general_dilated``."""
    lhs = asarray_value(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    size = math.prod(filter_shape)
    channels = lhs.shape[lhs_spec[1]]
    # one output channel per (input channel, window position): a one-hot kernel
    # (row + offset 0 == column, as JAX builds its eye: the same jaxpr)
    rows = add(broadcasted_iota(np.int32, (size, size), 0), np.int32(0))
    eye = convert_element_type(eq(rows, broadcasted_iota(np.int32, (size, size), 1)),
                               lhs.dtype)
    rhs = broadcast_in_dim(eye, (channels, size, size), (1, 2))
    rhs = reshape(rhs, (channels * size, 1) + filter_shape)
    rhs = _moveaxis(rhs, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=channels, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """A convolution whose filter differs at every output position ("locally connected"):
    ``rhs`` has the output spatial dimensions where a convolution kernel has its filter
    dimensions, and its input-feature dimension has size ``C * prod(filter_shape)`` (the
    flattened patch, as ``conv_general_dilated_patches`` orders it)."""
    lhs = asarray_value(lhs)
    rhs = asarray_value(rhs)
    c = canonicalize_precision(precision)
    if c is None:
        lhs_precision = None
    elif isinstance(c, tuple) and len(c) == 2:
        lhs_precision = c[0]
    else:
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           lhs_precision)
    _, rhs_spec, out_spec = conv_dimension_numbers(lhs.shape, (1, 1) + tuple(filter_shape),
                                                   dimension_numbers)
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    dn = (([out_spec[1]], [rhs_spec[1]]), (lhs_b, rhs_b))
    out = dot_general(patches, rhs, dn, precision)
    return _moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))
