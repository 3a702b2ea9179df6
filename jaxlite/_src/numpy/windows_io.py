"""jax.numpy window functions (bartlett, blackman, hamming, hanning, kaiser), i0, bit packing
(packbits, unpackbits), host I/O and interop (frombuffer, fromstring, fromiter, fromfile, load,
save, savez, from_dlpack) and printing (array_repr, array_str, get/set_printoptions,
printoptions).

The I/O functions work on concrete host data only (as in JAX); printing goes through NumPy.
"""
from __future__ import annotations


import numpy as np

from jaxlite._src.api.ad import jvp as _jvp
from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.lax.special import bessel_i0e
from jaxlite._src.numpy import array_edit, creation, searching, shape_ops, ufunc_objects, ufuncs
from jaxlite._src.numpy.extra_creation import concrete, named_jit
from jaxlite._src.numpy.util import asarray_value, check_arraylike, promote_args_inexact

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "i0", "packbits",
           "unpackbits", "frombuffer", "fromstring", "fromiter", "fromfile", "load", "save",
           "savez", "from_dlpack", "array_repr", "array_str", "get_printoptions",
           "set_printoptions", "printoptions"]


# -- windows


def _window_start(M, name):
    M = concrete(int, M, f"M argument of jnp.{name}")
    dtype = dtypes.default_float_dtype()
    if M <= 1:
        return M, dtype, lax_shape.full((max(M, 0),), 1, dtype)
    return M, dtype, None


def blackman(M):
    """The Blackman window of ``M`` points."""
    M, dtype, short = _window_start(M, "blackman")
    if short is not None:
        return short
    n = lax_shape.iota(dtype, M)
    return (0.42 - 0.5 * ufuncs.cos(2 * np.pi * n / (M - 1))
            + 0.08 * ufuncs.cos(4 * np.pi * n / (M - 1)))


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points."""
    M, dtype, short = _window_start(M, "bartlett")
    if short is not None:
        return short
    n = lax_shape.iota(dtype, M)
    return 1 - ufuncs.abs(2 * n + 1 - M) / (M - 1)


def hamming(M):
    """The Hamming window of ``M`` points."""
    M, dtype, short = _window_start(M, "hamming")
    if short is not None:
        return short
    n = lax_shape.iota(dtype, M)
    return 0.54 - 0.46 * ufuncs.cos(2 * np.pi * n / (M - 1))


def hanning(M):
    """The Hann window of ``M`` points."""
    M, dtype, short = _window_start(M, "hanning")
    if short is not None:
        return short
    n = lax_shape.iota(dtype, M)
    return 0.5 * (1 - ufuncs.cos(2 * np.pi * n / (M - 1)))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta``."""
    M, dtype, short = _window_start(M, "kaiser")
    if short is not None:
        return short
    n = lax_shape.iota(dtype, M)
    alpha = 0.5 * (M - 1)
    return i0(beta * ufuncs.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


# -- i0


@custom_jvp
def _i0(x):
    abs_x = lax_ew.abs(x)
    return lax_ew.mul(lax_ew.exp(abs_x), bessel_i0e(abs_x))


@_i0.defjvp
def _i0_jvp(primals, tangents):
    out, t = _jvp(_i0.fun, primals, tangents)
    return out, searching.where(primals[0] == 0, 0.0, t)


@jit
def i0(x):
    """The modified Bessel function of the first kind, order zero (real inputs)."""
    (x,) = promote_args_inexact("i0", x)
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    return _i0(x)


# -- bits


@named_jit("packbits", static_argnames=("axis", "bitorder"))
def _packbits(arr, axis, bitorder):
    arr = ufuncs.not_equal(arr, 0).astype("uint8")
    bits = creation.arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = shape_ops.ravel(arr)
        axis = 0
    arr = shape_ops.swapaxes(arr, axis, -1)
    rem = arr.shape[-1] % 8
    if rem:
        arr = lax_shape.pad(arr, np.uint8(0), (arr.ndim - 1) * [(0, 0, 0)] + [(0, 8 - rem, 0)])
    arr = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    bits = shape_ops.expand_dims(bits, tuple(range(arr.ndim - 1)))
    shifted = ufuncs.left_shift(arr, shape_ops.broadcast_to(bits, arr.shape))
    packed = shifted.sum(-1).astype("uint8")
    return shape_ops.swapaxes(packed, axis, -1)


def packbits(a, axis=None, bitorder="big"):
    """Pack the truthiness of the elements of ``a`` into uint8 bytes along ``axis``
    (flattened when None), most significant bit first unless ``bitorder='little'``."""
    check_arraylike("packbits", a)
    a = asarray_value(a)
    if not (dtypes.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return _packbits(a, axis=axis, bitorder=bitorder)


@named_jit("unpackbits", static_argnames=("axis", "count", "bitorder"))
def _unpackbits(arr, axis, count, bitorder):
    bits = ufuncs.left_shift(creation.asarray(1, dtype="uint8"), creation.arange(8, dtype="uint8"))
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = shape_ops.ravel(arr)
        axis = 0
    arr = shape_ops.swapaxes(arr, axis, -1)
    ex = shape_ops.broadcast_to(arr[..., None], arr.shape + (8,))
    bb = shape_ops.broadcast_to(shape_ops.expand_dims(bits, tuple(range(arr.ndim))),
                                arr.shape + (8,))
    unpacked = (ufunc_objects.bitwise_and(ex, bb) > 0).astype("uint8")
    unpacked = unpacked.reshape(unpacked.shape[:-2] + (-1,))
    if count is not None:
        if count > unpacked.shape[-1]:
            unpacked = array_edit.pad(unpacked, [(0, 0)] * (unpacked.ndim - 1)
                                      + [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return shape_ops.swapaxes(unpacked, axis, -1)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Expand the uint8 array ``a`` into its bits (0/1 uint8) along ``axis``; ``count``
    keeps (or zero-pads to) that many bits."""
    check_arraylike("unpackbits", a)
    a = asarray_value(a)
    if a.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return _unpackbits(a, axis=axis, count=count, bitorder=bitorder)


# -- host I/O and interop


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An array from the bytes of ``buffer`` interpreted as ``dtype`` (via NumPy)."""
    return creation.asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """An array parsed from the text ``string`` with separator ``sep`` (via NumPy)."""
    return creation.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


_IMPURE = ("jnp.{0}() is not implemented because it may be non-pure and thus unsafe for use "
           "with JIT and other JAX transformations. Consider using jnp.asarray(np.{0}(...)) "
           "instead, although care should be taken if np.{0} is used within a jax "
           "transformations because of its potential side-effect of consuming the {1}; for "
           "more information see https://docs.jax.dev/en/latest/notebooks/"
           "Common_Gotchas_in_JAX.html#pure-functions")


def fromiter(*args, **kwargs):
    """Not supported (reading an iterator is a side effect); use
    ``jnp.asarray(np.fromiter(...))``."""
    raise NotImplementedError(_IMPURE.format("fromiter", "iterable object"))


def fromfile(*args, **kwargs):
    """Not supported (reading a file is a side effect); use ``jnp.asarray(np.fromfile(...))``."""
    raise NotImplementedError(_IMPURE.format("fromfile", "file object"))


def load(file, *args, **kwargs):
    """``numpy.load``, returning a jaxlite array for ``.npy`` data (``.npz`` archives stay
    NumPy). NumPy saves bfloat16 data as 2-byte voids (``V2``): they are read back as
    bfloat16, as JAX does."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):
            out = out.view(dtypes.bfloat16)
        try:
            out = creation.asarray(out)
        except (TypeError, AssertionError):
            pass
    return out


def save(file, arr, allow_pickle=True, *args, **kwargs):
    """``numpy.save`` of an array (converted to NumPy)."""
    return np.save(file, np.asarray(arr), allow_pickle, *args, **kwargs)


def savez(file, *args, allow_pickle=True, **kwds):
    """``numpy.savez`` of several arrays (converted to NumPy)."""
    extra = {} if allow_pickle else {"allow_pickle": False}   # NumPy >= 2.1 takes it
    return np.savez(file, *[np.asarray(a) for a in args], **extra,
                    **{k: np.asarray(v) for k, v in kwds.items()})


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from any object with ``__dlpack__`` (NumPy arrays, torch tensors, ...); the
    data is copied into a jaxlite array."""
    from jaxlite._src.runtime.array import ArrayImpl
    if isinstance(x, ArrayImpl):
        return creation.array(x, copy=True) if copy else x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack requires an object with __dlpack__, got "
                        f"{type(x).__name__}")
    return creation.array(np.from_dlpack(x), copy=True)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's repr of the values of ``arr``."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's str of the values of ``a``."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def get_printoptions():
    """NumPy's print options (jaxlite arrays print through NumPy)."""
    return np.get_printoptions()


def set_printoptions(*args, **kwargs):
    """Set NumPy's print options (jaxlite arrays print through NumPy)."""
    return np.set_printoptions(*args, **kwargs)


def printoptions(*args, **kwargs):
    """Context manager setting NumPy's print options temporarily."""
    return np.printoptions(*args, **kwargs)
