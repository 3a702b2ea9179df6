"""jnp.convolve and jnp.correlate: 1-D convolution/correlation via lax.conv_general_dilated."""
from __future__ import annotations

from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.numpy.util import check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["convolve", "correlate"]


@partial(jit, static_argnames=("mode", "op", "precision", "preferred_element_type"))
def _conv(x, y, mode, op, precision, preferred_element_type):
    from jaxlite._src.lax.convolution import conv_general_dilated
    from jaxlite._src.numpy.shape_ops import flip
    from jaxlite._src.numpy.ufuncs import conjugate
    if np.ndim(x) != 1 or np.ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if len(x) == 0 or len(y) == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {tuple(x.shape)} and "
                         f"{tuple(y.shape)}.")
    out_order = slice(None)
    if op == "correlate":
        if np.dtype(y.dtype).kind == "c":
            y = conjugate(y)
        if len(x) < len(y):
            x, y = y, x
            out_order = slice(None, None, -1)
    else:
        if len(x) < len(y):
            x, y = y, x
        y = flip(y)
    n = y.shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(n // 2, n - n // 2 - 1)]
    elif mode == "full":
        padding = [(n - 1, n - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = conv_general_dilated(x[None, None, :], y[None, None, :], (1,), padding,
                               precision=precision,
                               preferred_element_type=preferred_element_type)
    return out[0, 0, out_order]


@partial(jit, static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete 1-D convolution ``c[k] = sum_j a[k - j] v[j]`` (NumPy's convolve;
    ``mode`` 'full', 'same' or 'valid'). Inputs are promoted to an inexact dtype."""
    check_arraylike("convolve", a, v)
    return _conv(a, v, mode, "convolve", precision, preferred_element_type)


@partial(jit, static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Discrete 1-D cross-correlation ``c[k] = sum_j a[k + j] conj(v[j])`` (NumPy's
    correlate; ``mode`` 'valid' (default), 'same' or 'full')."""
    check_arraylike("correlate", a, v)
    return _conv(a, v, mode, "correlate", precision, preferred_element_type)
