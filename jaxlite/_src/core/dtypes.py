"""Dtypes: JAX's type-promotion lattice, weak types, canonicalization (x64) and dtype helpers.

Python scalars are *weakly typed*: they adopt the dtype of the arrays they meet. The lattice
below is JAX's; ``result_type`` joins dtypes in it and canonicalizes the result (64-bit types
become 32-bit unless ``jax_enable_x64`` is on).
"""
from __future__ import annotations

import functools
import warnings

import ml_dtypes
import numpy as np

from jaxlite._src.config import config

__all__ = [
    "canonicalize_dtype", "result_type", "promote_types", "is_weakly_typed", "dtype",
    "python_scalar_dtype", "default_float_dtype", "default_int_dtype", "default_uint_dtype",
    "default_complex_dtype", "issubdtype", "finfo", "iinfo", "float0", "extended", "prng_key",
    "TypePromotionError", "scalar_type_of", "itemsize_bits", "check_user_dtype_supported",
    "short_dtype_name", "all_dtypes", "bfloat16",
]

bfloat16 = np.dtype(ml_dtypes.bfloat16)
float0 = np.dtype([("float0", np.void, 0)])

_ML_FLOATS = [np.dtype(getattr(ml_dtypes, n)) for n in (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
    "float6_e2m3fn", "float6_e3m2fn")]
_ML_SINTS = [np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.int4)]
_ML_UINTS = [np.dtype(ml_dtypes.uint2), np.dtype(ml_dtypes.uint4)]
_FLOAT8S = [d for d in _ML_FLOATS if d != bfloat16]

all_dtypes = ([np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                     np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
                                     np.float32, np.float64, np.complex64, np.complex128)]
              + _ML_FLOATS + _ML_SINTS + _ML_UINTS)


class TypePromotionError(ValueError):
    """No implicit promotion path exists between the given dtypes."""


class extended(np.generic):
    """Abstract base of JAX's extended dtypes (e.g. typed PRNG keys)."""


class prng_key(extended):
    """Abstract scalar type of typed PRNG key arrays."""


# ----------------------------------------------------------------------------- defaults

def _x64():
    return config._flags["jax_enable_x64"].value


def default_float_dtype():
    """float64 with x64 enabled, else float32."""
    return np.dtype(np.float64) if _x64() else np.dtype(np.float32)


def default_int_dtype():
    """int64 with x64 enabled, else int32."""
    return np.dtype(np.int64) if _x64() else np.dtype(np.int32)


def default_uint_dtype():
    """uint64 with x64 enabled, else uint32."""
    return np.dtype(np.uint64) if _x64() else np.dtype(np.uint32)


def default_complex_dtype():
    """complex128 with x64 enabled, else complex64."""
    return np.dtype(np.complex128) if _x64() else np.dtype(np.complex64)


_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32),
           np.dtype(np.complex128): np.dtype(np.complex64)}
_canon_cache: dict = {}


def _on_config_change(name):
    if name == "jax_enable_x64":
        _canon_cache.clear()
        _join_cache.clear()


config.add_listener(_on_config_change)


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype jaxlite actually uses for ``dtype``: 64-bit types narrow to 32-bit unless
    x64 is enabled. Accepts anything ``np.dtype`` accepts, ml_dtypes types and Python types."""
    try:
        return _canon_cache[dtype]
    except (KeyError, TypeError):
        pass
    if dtype is float:
        d = default_float_dtype()
    elif dtype is int:
        d = default_int_dtype()
    elif dtype is complex:
        d = default_complex_dtype()
    elif dtype is bool:
        d = np.dtype(bool)
    else:
        if hasattr(dtype, "dtype") and not isinstance(dtype, (np.dtype, type)):
            dtype = dtype.dtype
        try:
            d = np.dtype(dtype)
        except TypeError as e:
            raise TypeError(f"{dtype!r} is not a valid dtype") from e
        if d == float0:
            pass
        elif d.kind in "OSUVMm" and d not in all_dtypes:
            raise TypeError(f"JAX only supports number and bool dtypes, got dtype {d}")
        if not _x64():
            d = _NARROW.get(d, d)
    try:
        _canon_cache[dtype] = d
    except TypeError:
        pass
    return d


def python_scalar_dtype(x):
    """The (canonical) dtype of a Python scalar: bool, default int, float or complex."""
    t = type(x)
    if t is bool:
        return np.dtype(bool)
    if t is int:
        return default_int_dtype()
    if t is float:
        return default_float_dtype()
    if t is complex:
        return default_complex_dtype()
    raise TypeError(f"not a Python scalar: {x!r}")


_WEAK_TYPES = (int, float, complex)


def is_weakly_typed(x) -> bool:
    """True for Python int/float/complex scalars and for weakly typed arrays/tracers."""
    t = type(x)
    if t in _WEAK_TYPES:
        return True
    if t is bool:
        return False
    return bool(getattr(x, "weak_type", False))


def dtype(x, canonicalize=False):
    """The dtype of a value, dtype-like or Python scalar."""
    t = type(x)
    if t in (bool, int, float, complex):
        d = python_scalar_dtype(x) if canonicalize else np.dtype(
            {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}[t])
        return d
    if x in (float, int, complex, bool) if isinstance(x, type) else False:
        d = np.dtype(x) if x is not bool else np.dtype(bool)
    elif hasattr(x, "dtype") and not isinstance(x, type):
        d = np.dtype(x.dtype)
    else:
        d = np.dtype(x)
    return canonicalize_dtype(d) if canonicalize else d


def short_dtype_name(dt) -> str:
    """The short name JAX prints in jaxprs: f32, i32, u8, bf16, c64, bool, f8_e4m3fn ..."""
    dt = np.dtype(dt)
    if dt == float0:
        return "float0"
    return (dt.name.replace("float", "f").replace("uint", "u").replace("int", "i")
            .replace("complex", "c"))


# ----------------------------------------------------------------------------- the lattice

_I, _F, _C = "i*", "f*", "c*"   # weak int, weak float, weak complex
_d = np.dtype
_b1, _u8, _u16, _u32, _u64 = _d(bool), _d(np.uint8), _d(np.uint16), _d(np.uint32), _d(np.uint64)
_i8, _i16, _i32, _i64 = _d(np.int8), _d(np.int16), _d(np.int32), _d(np.int64)
_f16, _f32, _f64, _c64, _c128 = _d(np.float16), _d(np.float32), _d(np.float64), \
    _d(np.complex64), _d(np.complex128)
_i2, _i4, _u2, _u4 = _ML_SINTS + _ML_UINTS

_LATTICE = {
    _b1: [_I],
    _I: [_u8, _i8, _u2, _i2],
    _u2: [_u4], _u4: [_u8],
    _i2: [_i4], _i4: [_i8],
    _u8: [_u16, _i16], _u16: [_u32, _i32], _u32: [_u64, _i64], _u64: [_F],
    _i8: [_i16], _i16: [_i32], _i32: [_i64], _i64: [_F],
    _F: [_C, bfloat16, _f16] + _FLOAT8S,
    bfloat16: [_f32], _f16: [_f32], _f32: [_f64, _c64], _f64: [_c128],
    _C: [_c64], _c64: [_c128], _c128: [],
}
for _f8 in _FLOAT8S:
    _LATTICE[_f8] = []


@functools.lru_cache(maxsize=None)
def _upper(node):
    out = {node}
    for n in _LATTICE.get(node, []):
        out |= _upper(n)
    return frozenset(out)


def _lub(a, b):
    common = _upper(a) & _upper(b)
    for c in common:
        if common <= _upper(c):
            return c
    raise TypeError


def _node(dt, weak):
    if weak:
        k = dt.kind
        if k in "iu":
            return _I
        if k == "f" or dt in _ML_FLOATS:
            return _F
        if k == "c":
            return _C
    return dt


_join_cache: dict = {}
_WEAK_DEFAULT = {_I: default_int_dtype, _F: default_float_dtype, _C: default_complex_dtype}


def _join_nodes(nodes):
    key = tuple(nodes)
    r = _join_cache.get(key)
    if r is None:
        try:
            n = functools.reduce(_lub, nodes)
        except TypeError:
            names = tuple(str(x) if isinstance(x, str) else x.name for x in nodes)
            raise TypePromotionError(
                f"Input dtypes {names} have no available implicit dtype promotion path. "
                "To avoid unintended promotion, convert explicitly with .astype().") from None
        if isinstance(n, str):
            r = (canonicalize_dtype(_WEAK_DEFAULT[n]()), True)
        else:
            r = (canonicalize_dtype(n), False)
        _join_cache[key] = r
    return r


def _dtype_and_weak(x):
    t = type(x)
    if t in (int, float, complex):
        return python_scalar_dtype(x), True
    if t is bool:
        return _b1, False
    if isinstance(x, np.dtype):
        return x, False
    d = getattr(x, "dtype", None)
    if d is not None and not isinstance(x, type):
        return np.dtype(d), bool(getattr(x, "weak_type", False))
    if x is float or x is int or x is complex:
        return canonicalize_dtype(x), True
    return np.dtype(x), False


def result_type(*args, return_weak_type_flag=False):
    """JAX's result dtype for combining ``args`` (dtypes, arrays, Python scalars)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    nodes = []
    strict = config._flags["jax_numpy_dtype_promotion"].value == "strict"
    for a in args:
        dt, weak = _dtype_and_weak(a)
        if dt == float0:
            return (float0, False) if return_weak_type_flag else float0
        nodes.append(_node(dt, weak))
    if len(nodes) == 1:
        n = nodes[0]
        out = ((canonicalize_dtype(_WEAK_DEFAULT[n]()), True) if isinstance(n, str)
               else (canonicalize_dtype(n), False))
    else:
        if strict:
            strong = {n for n in nodes if not isinstance(n, str)}
            if len(strong) > 1:
                raise TypePromotionError(
                    f"Input dtypes {tuple(n.name for n in strong)} have no available implicit "
                    "dtype promotion path when jax_numpy_dtype_promotion=strict. Try "
                    "explicitly casting inputs to the desired output type.")
        out = _join_nodes(nodes)
    return out if return_weak_type_flag else out[0]


def promote_types(a, b):
    """The promoted (strong) dtype of two dtypes, as ``jnp.promote_types``."""
    na, nb = np.dtype(a), np.dtype(b)
    try:
        n = _lub(na, nb)
    except TypeError:
        raise TypePromotionError(f"Input dtypes ('{na.name}', '{nb.name}') have no available "
                                 "implicit dtype promotion path.") from None
    return np.dtype(n)


# ----------------------------------------------------------------------------- helpers

_ABSTRACT = {np.generic, np.number, np.inexact, np.floating, np.complexfloating, np.integer,
             np.signedinteger, np.unsignedinteger, np.bool_}


def issubdtype(a, b) -> bool:
    """``np.issubdtype`` that knows ml_dtypes' types (bfloat16 is floating, int4 integer)."""
    if isinstance(b, type) and issubclass(b, extended):
        return isinstance(a, type) and issubclass(a, b)
    if isinstance(a, type) and issubclass(a, extended):
        return isinstance(b, type) and issubclass(a, b)
    try:
        da = np.dtype(a)
    except TypeError:
        return False
    if da in _ML_FLOATS:
        if b in _ABSTRACT:
            return b in (np.generic, np.number, np.inexact, np.floating)
        return da == np.dtype(b)
    if da in _ML_SINTS or da in _ML_UINTS:
        if b in _ABSTRACT:
            signed = da in _ML_SINTS
            return b in (np.generic, np.number, np.integer) or (
                b is np.signedinteger and signed) or (b is np.unsignedinteger and not signed)
        return da == np.dtype(b)
    if b in _ABSTRACT or (isinstance(b, type) and issubclass(b, np.generic)):
        return np.issubdtype(da, b)
    try:
        return da == np.dtype(b)
    except TypeError:
        return False


def finfo(dt):
    """Machine limits of a floating dtype (ml_dtypes types included)."""
    return ml_dtypes.finfo(np.dtype(dt) if not hasattr(dt, "dtype") else dt.dtype)


def iinfo(dt):
    """Machine limits of an integer dtype (int4 and friends included)."""
    return ml_dtypes.iinfo(np.dtype(dt) if not hasattr(dt, "dtype") else dt.dtype)


def scalar_type_of(x):
    """The Python scalar type matching the dtype of ``x``: bool, int, float or complex."""
    dt = dtype(x)
    if dt == np.bool_:
        return bool
    if issubdtype(dt, np.integer):
        return int
    if issubdtype(dt, np.floating):
        return float
    if issubdtype(dt, np.complexfloating):
        return complex
    raise TypeError(f"Invalid scalar value {x}")


def itemsize_bits(dt) -> int:
    """Size of one element in bits (4 for int4, 8 for float8, ...)."""
    d = np.dtype(dt)
    if d in (_i4, _u4, np.dtype(ml_dtypes.float4_e2m1fn)):
        return 4
    if d in (_i2, _u2):
        return 2
    if d in (np.dtype(ml_dtypes.float6_e2m3fn), np.dtype(ml_dtypes.float6_e3m2fn)):
        return 6
    return d.itemsize * 8


def check_user_dtype_supported(dtype, fun_name=None):
    """Warn, as JAX does, when a 64-bit dtype is requested while x64 is disabled."""
    if dtype is None or isinstance(dtype, type) and dtype in (int, float, complex, bool):
        return
    try:
        d = np.dtype(dtype)
    except TypeError:
        return
    c = canonicalize_dtype(d)
    if c != d and d != float0:
        msg = (f"Explicitly requested dtype {d.name} "
               f"{'requested in ' + fun_name + ' ' if fun_name else ''}is not available, and "
               f"will be truncated to dtype {c.name}. To enable more dtypes, set the "
               "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
               "variable. See https://github.com/jax-ml/jax#current-gotchas for more.")
        warnings.warn(msg, stacklevel=3)
