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
    "TypePromotionError", "ExtendedDType", "extended_array_types", "is_extended", "scalar_type_of", "itemsize_bits",
    "check_user_dtype_supported",
    "short_dtype_name", "all_dtypes", "bfloat16", "supports_inf",
]

bfloat16 = np.dtype(ml_dtypes.bfloat16)
float0 = np.dtype([("float0", np.void, 0)])

_ML_FLOATS = [np.dtype(getattr(ml_dtypes, n)) for n in (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
    "float6_e2m3fn", "float6_e3m2fn")]
_ML_SINTS = [np.dtype(getattr(ml_dtypes, n)) for n in ("int1", "int2", "int4")
             if hasattr(ml_dtypes, n)]
_ML_UINTS = [np.dtype(getattr(ml_dtypes, n)) for n in ("uint1", "uint2", "uint4")
             if hasattr(ml_dtypes, n)]
_i2, _i4 = np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.int4)
_u2, _u4 = np.dtype(ml_dtypes.uint2), np.dtype(ml_dtypes.uint4)
_FLOAT8S = [d for d in _ML_FLOATS if d != bfloat16]   # all the small floats (8, 6, 4 bits)

all_dtypes = ([np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                     np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
                                     np.float32, np.float64, np.complex64, np.complex128)]
              + _ML_FLOATS + _ML_SINTS + _ML_UINTS)


class TypePromotionError(ValueError):
    """No implicit promotion path exists between the given dtypes."""


class ExtendedDType:
    """Base class of extended dtypes: the dtypes of arrays that are not NumPy numbers, such
    as typed PRNG keys (``key<fry>``). An instance has a ``type`` (a subclass of
    ``extended``) and a ``name``.

    Avals may carry an extended dtype: the transformations treat such an array as one value
    of that type. Where values become NumPy data (eager execution, the compiler) an extended
    dtype says how, through the methods below: every element is ``physical_shape`` words of
    ``physical_dtype``, stored as trailing dimensions.
    """
    __slots__ = ()

    # A dtype defined with JAX's rules protocol (flax's fp8 meta dtypes) has a ``_rules``
    # class whose ``physical_element_aval(dtype)`` gives one element's data: the defaults
    # below read it. Key and token dtypes override them.
    @property
    def physical_shape(self) -> tuple:
        """The trailing dimensions each element's data has."""
        rules = getattr(self, "_rules", None)
        return tuple(rules.physical_element_aval(self).shape) if rules is not None else ()

    @property
    def physical_dtype(self):
        """The NumPy dtype of the data."""
        rules = getattr(self, "_rules", None)
        return np.dtype(rules.physical_element_aval(self).dtype) if rules is not None \
            else None

    def physical_aval(self, aval):
        """The aval of the NumPy data of an array of abstract value ``aval`` (its shape
        followed by ``physical_shape``, of ``physical_dtype``)."""
        rules = getattr(self, "_rules", None)
        if rules is None:
            raise NotImplementedError(f"extended dtype {self} says nothing of its data: "
                                      "define physical_aval or JAX's _rules protocol")
        e = rules.physical_element_aval(self)
        return e.update(shape=tuple(aval.shape) + tuple(e.shape), weak_type=False)

    def to_physical(self, x):
        """The data (an Array, or a tracer of the physical aval) of the concrete array
        ``x``."""
        raise NotImplementedError

    def from_physical(self, data):
        """The array of this dtype over ``data`` (the inverse of ``to_physical``)."""
        raise NotImplementedError


# Python types of concrete arrays of extended dtypes (typed key arrays register theirs):
# eager execution and jit hand such values to the dtype's physical rules.
extended_array_types: set = set()


_NO_INF = {getattr(ml_dtypes, n) for n in ("float8_e4m3b11fnuz", "float8_e4m3fn",
                                           "float8_e4m3fnuz", "float8_e5m2fnuz")
           if hasattr(ml_dtypes, n)}


def supports_inf(dtype) -> bool:
    """Return true if the dtype supports infinity, else return False (JAX's list: the
    float8 types without infinities return False)."""
    if np.dtype(dtype).type in _NO_INF:
        return False
    return issubdtype(dtype, np.inexact)


def is_extended(dt) -> bool:
    """Whether ``dt`` is an extended dtype (e.g. a key dtype)."""
    return isinstance(dt, ExtendedDType)


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
    if name in ("jax_enable_x64", "jax_numpy_dtype_promotion"):
        _canon_cache.clear()
        _lrt_cache.clear()


config.add_listener(_on_config_change)


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype jaxlite actually uses for ``dtype``: 64-bit types narrow to 32-bit unless
    x64 is enabled. Accepts anything ``np.dtype`` accepts, ml_dtypes types and Python types;
    an extended dtype (e.g. a key dtype) only with ``allow_extended_dtype=True``, as in JAX."""
    try:
        return _canon_cache[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, ExtendedDType):
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} with "
                         "allow_extended_dtype=False")
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
            raise TypeError(f"dtype {dtype!r} not understood") from e
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
        if isinstance(x.dtype, ExtendedDType):
            return x.dtype
        d = np.dtype(x.dtype)
    else:
        d = np.dtype(x)
    return canonicalize_dtype(d) if canonicalize else d


def short_dtype_name(dt) -> str:
    """The short name JAX prints in jaxprs: f32, i32, u8, bf16, c64, bool, f8_e4m3fn ..."""
    if isinstance(dt, ExtendedDType):
        return dt.name
    dt = np.dtype(dt)
    if dt == float0:
        return "float0"
    return (dt.name.replace("float", "f").replace("uint", "u").replace("int", "i")
            .replace("complex", "c"))


# ----------------------------------------------------------------------------- the lattice
#
# Nodes are dtypes plus three weak nodes standing for Python int/float/complex (the types a
# weakly typed value promotes like). The lattice is JAX's "standard" one; with x64 off the
# uint32 x int32 join is int32 so no 64-bit type is formed from 32-bit inputs. Sub-byte ints
# and the small floats (float8/6/4) only join with weak values of their own kind.

_I, _F, _C = int, float, complex   # the weak nodes are the Python types, as in JAX
_WEAK_NODES = (_I, _F, _C)
_PY_WEAK = {int: _I, float: _F, complex: _C}
_d = np.dtype
_b1, _u8, _u16, _u32, _u64 = _d(bool), _d(np.uint8), _d(np.uint16), _d(np.uint32), _d(np.uint64)
_i8, _i16, _i32, _i64 = _d(np.int8), _d(np.int16), _d(np.int32), _d(np.int64)
_f16, _f32, _f64, _c64, _c128 = _d(np.float16), _d(np.float32), _d(np.float64), \
    _d(np.complex64), _d(np.complex128)
_INT_TYPES = _ML_UINTS + [_u8, _u16, _u32, _u64] + _ML_SINTS + [_i8, _i16, _i32, _i64]
_FLOAT_TYPES = _FLOAT8S + [bfloat16, _f16, _f32, _f64]
_JAX_TYPES = [_b1] + _INT_TYPES + _FLOAT_TYPES + [_c64, _c128]
_JAX_DTYPE_SET = frozenset(_JAX_TYPES) | {float0}


def _lattice(strict, x64):
    if strict:
        out = {t: [] for t in _JAX_TYPES}
        out.update({_I: [_F] + _INT_TYPES, _F: [_C] + _FLOAT_TYPES, _C: [_c64, _c128]})
        return out
    out = {_b1: [_I], _I: [_u8, _i8] + _ML_UINTS + _ML_SINTS,
           _u8: [_i16, _u16], _u16: [_i32, _u32], _u32: [_i64, _u64] if x64 else [_i32, _u64],
           _u64: [_F], _i8: [_i16], _i16: [_i32], _i32: [_i64], _i64: [_F],
           _F: _FLOAT8S + [bfloat16, _f16, _C], bfloat16: [_f32], _f16: [_f32],
           _f32: [_f64, _c64], _f64: [_c128], _C: [_c64], _c64: [_c128], _c128: []}
    for t in _ML_UINTS + _ML_SINTS + _FLOAT8S:
        out[t] = []
    return out


def _upper_bounds(lattice):
    ub = {}

    def up(n):
        r = ub.get(n)
        if r is None:
            r = {n}
            for m in lattice[n]:
                r |= up(m)
            ub[n] = r = frozenset(r)
        return r
    for n in lattice:
        up(n)
    return ub


_UB = {(strict, x64): _upper_bounds(_lattice(strict, x64))
       for strict in (False, True) for x64 in (False, True)}


def _promotion_mode():
    return config._flags["jax_numpy_dtype_promotion"].value == "strict", _x64()


def _is_weak_node(n):
    return isinstance(n, type)   # never ``n in _WEAK_NODES``: np.dtype('int64') == int


def _least_upper_bound(strict, x64, *nodes):
    """The join of ``nodes`` in the lattice; the error lists ``nodes`` in the given order
    (callers pass them in the order JAX does, so messages match)."""
    ub = _UB[strict, x64]
    node_set = set(nodes)
    try:
        bounds = [ub[n] for n in node_set]
    except KeyError:
        bad = next(n for n in node_set if n not in ub)
        raise ValueError(f"dtype={bad!r} is not a valid dtype for JAX type promotion.") from None
    cub = frozenset.intersection(*bounds)
    lub = (cub & node_set) or {c for c in cub if cub <= ub[c]}
    if len(lub) == 1:
        return next(iter(lub))
    names = tuple(str(n) for n in nodes)
    head = f"Input dtypes {names} have no available implicit dtype promotion path"
    kinds = [("8-bit floats", [d for d in _FLOAT8S if d.itemsize == 1 and d not in _SUB8_FLOATS]),
             ("6-bit floats", _SUB8_FLOATS[1:]), ("4-bit floats", _SUB8_FLOATS[:1])]
    if strict:
        msg = (f"{head} when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to "
               "the desired output type, or set jax_numpy_dtype_promotion=standard.")
    else:
        msg = None
        for what, group in kinds:
            if any(n in group for n in nodes if not _is_weak_node(n)):
                msg = (f"{head}. To avoid unintended promotion, {what} do not support implicit "
                       "promotion. If you'd like your inputs to be promoted to another type, "
                       "you can do so explicitly using e.g. x.astype('float32')")
                break
        if msg is None and any(n in _INTN for n in nodes if not _is_weak_node(n)):
            msg = (f"{head}. To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do "
                   "not support implicit promotion. If you'd like your inputs to be promoted "
                   "to another type, you can do so explicitly using e.g. x.astype('int32')")
        if msg is None:
            msg = f"{head}. Try explicitly casting inputs to the desired output type."
    raise TypePromotionError(msg)


_SUB8_FLOATS = [np.dtype(ml_dtypes.float4_e2m1fn), np.dtype(ml_dtypes.float6_e2m3fn),
                np.dtype(ml_dtypes.float6_e3m2fn)]
_INTN = frozenset(_ML_SINTS + _ML_UINTS)
_CUSTOM_FLOATS = frozenset(_ML_FLOATS)


def _jax_type(dt, weak):
    """The lattice node of a dtype with a weak-type flag."""
    if not weak or dt == _b1:
        return dt
    if dt in _CUSTOM_FLOATS:
        return _F
    k = dt.kind
    if k in "iu" or dt in _INTN:
        return _I
    if k == "f":
        return _F
    if k == "c":
        return _C
    return dt


def _node_dtype(n):
    if _is_weak_node(n):
        return {_I: default_int_dtype, _F: default_float_dtype, _C: default_complex_dtype}[n]()
    return canonicalize_dtype(n)


def _check_valid(d, x):
    if d not in _JAX_DTYPE_SET:
        raise TypeError(f"Value '{x}' with dtype {d} is not a valid JAX array type. Only arrays "
                        "of numeric types are supported by JAX.")
    return d


def _dtype_and_weak(x):
    """(dtype, weak_type) of a promotion argument, as JAX's ``_dtype_and_weaktype``: Python
    scalars and the types int/float/complex are weak; jaxlite arrays keep their dtype (an
    extended one too: ``result_type`` of key arrays is their key dtype); NumPy values and
    dtype-likes are canonicalized."""
    t = type(x)
    if t in _PY_WEAK:
        return python_scalar_dtype(x), True
    if t is bool:
        return _b1, False
    if t is np.dtype:
        return _check_valid(canonicalize_dtype(x), x), False
    if isinstance(x, type):
        if x in _PY_WEAK:
            return canonicalize_dtype(x), True
        if x is bool:
            return _b1, False
        try:
            d = np.dtype(x)   # NumPy scalar types, jnp.float32 & co
        except TypeError as e:
            raise TypeError(f"Cannot determine dtype of {x}") from e
        return _check_valid(canonicalize_dtype(d), x), False
    if isinstance(x, ExtendedDType):   # as JAX: an extended dtype is no promotion argument
        raise TypeError(f"Cannot determine dtype of {x}")
    d = getattr(x, "dtype", None)
    if d is not None and not isinstance(x, type):
        if isinstance(d, ExtendedDType):   # key arrays (and their avals) keep their dtype
            return d, bool(getattr(x, "weak_type", False))
        d = np.dtype(d)
        if hasattr(x, "aval"):  # jaxlite arrays and tracers: dtype as is
            return d, bool(getattr(x, "weak_type", False))
        return _check_valid(canonicalize_dtype(d), x), False
    try:
        d = np.dtype(d if d is not None else x)
    except TypeError as e:
        raise TypeError(f"Cannot determine dtype of {x}") from e
    return _check_valid(canonicalize_dtype(d), x), False


_lrt_cache: dict = {}


def _lattice_result_type(key):
    """(dtype, weak) joining (dtype, weak) pairs, cached (the cache is cleared on x64 and
    promotion-mode changes)."""
    r = _lrt_cache.get(key)
    if r is not None:
        return r
    dts = [k[0] for k in key]
    weaks = [k[1] for k in key]
    strict, x64 = _promotion_mode()
    if len(key) == 1:
        out, weak = key[0]
    elif len(set(dts)) == 1 and not all(weaks):
        out, weak = dts[0], False
    elif all(weaks) and not strict:
        n = _least_upper_bound(strict, x64, *{_jax_type(d, False) for d in dts})
        out, weak = _node_dtype(n), True
    else:
        n = _least_upper_bound(strict, x64, *{_jax_type(d, w) for d, w in key})
        out, weak = _node_dtype(n), _is_weak_node(n)
    r = _lrt_cache[key] = (out, weak and out != _b1)
    return r


def lattice_result_type(*args):
    """(dtype, weak_type) of the promotion of ``args`` on the lattice (no defaulting of weak
    results: a weak float16 stays float16). This is what jnp operations promote to."""
    return _lattice_result_type(tuple(map(_dtype_and_weak, args)))


_WEAK_DEFAULTS = {"b": lambda: _b1, "i": default_int_dtype, "u": default_uint_dtype,
                  "f": default_float_dtype, "c": default_complex_dtype}


def result_type(*args, return_weak_type_flag=False):
    """JAX's result dtype for combining ``args`` (dtypes, arrays, Python scalars; None means
    the default float). Weakly typed results take the default dtype of their kind."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    dt, weak = lattice_result_type(*(default_float_dtype() if a is None else a for a in args))
    if weak:
        dt = _WEAK_DEFAULTS["f" if dt in _CUSTOM_FLOATS else dt.kind]()
    return (dt, weak) if return_weak_type_flag else dt


def promote_types(a, b):
    """The promoted dtype of two dtypes, as ``jnp.promote_types``: Python int/float/complex
    are weak (``promote_types('uint8', int)`` is uint8); no canonicalization."""
    for x in (a, b):
        if isinstance(x, ExtendedDType):   # (JAX's text: NumPy cannot read the dtype)
            raise TypeError(f"Cannot interpret '{x}' as a data type")
    na = _PY_WEAK[a] if a in _PY_WEAK and isinstance(a, type) else np.dtype(a)
    nb = _PY_WEAK[b] if b in _PY_WEAK and isinstance(b, type) else np.dtype(b)
    strict, x64 = _promotion_mode()
    return np.dtype(_node_dtype_raw(_least_upper_bound(strict, x64, na, nb)))


def _node_dtype_raw(n):
    return {_I: np.int64, _F: np.float64, _C: np.complex128}[n] if _is_weak_node(n) else n


_TO_INEXACT = {np.dtype(k): np.dtype(v) for k, v in [
    ("bool", "float32"), ("uint8", "float32"), ("int8", "float32"), ("uint16", "float32"),
    ("int16", "float32"), ("uint32", "float32"), ("int32", "float32"), ("uint64", "float64"),
    ("int64", "float64")]}
_TO_INEXACT.update({_u4: _f32, _i4: _f32})


def to_inexact_dtype(dt):
    """The inexact dtype an operation producing floats uses for ``dt`` (ints of up to 32 bits
    and bool become float32, 64-bit ints float64; inexact dtypes are kept)."""
    d = np.dtype(dt)
    return _TO_INEXACT.get(d, d)


def to_numeric_dtype(dt):
    """bool becomes int32; other dtypes are kept."""
    d = np.dtype(dt)
    return _i32 if d == _b1 else d


def to_complex_dtype(dt):
    """complex128 for float64/complex128 (after to_inexact_dtype), else complex64."""
    d = to_inexact_dtype(dt)
    return _c128 if d in (_f64, _c128) else _c64


# ----------------------------------------------------------------------------- helpers

_CUSTOM_FLOAT_SUPERS = frozenset({np.floating, np.inexact, np.number, np.generic})
_SINT_SUPERS = frozenset({np.signedinteger, np.integer, np.number, np.generic})
_UINT_SUPERS = frozenset({np.unsignedinteger, np.integer, np.number, np.generic})


def _sctype(x):
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    if x is not None and not isinstance(x, (type, np.dtype, str)) and hasattr(x, "dtype"):
        x = x.dtype   # jnp scalar types and other dtype holders
    return np.dtype(x).type


@functools.lru_cache(maxsize=1024)
def _issubdtype_cached(a, b):
    if isinstance(b, type) and issubclass(b, extended):
        if isinstance(a, type):
            return issubclass(a, b)
        return issubclass(_sctype(a), b)
    a_t, b_t = _sctype(a), _sctype(b)
    if a_t in _CUSTOM_FLOAT_TYPES:
        return b_t is a_t or b_t in _CUSTOM_FLOAT_SUPERS
    if a_t in _SINT_TYPES:
        return b_t is a_t or b_t in _SINT_SUPERS
    if a_t in _UINT_TYPES:
        return b_t is a_t or b_t in _UINT_SUPERS
    return bool(np.issubdtype(a_t, b_t))


def issubdtype(a, b) -> bool:
    """``np.issubdtype`` that knows ml_dtypes' types (bfloat16 is floating, int4 signed
    integer) and extended dtypes, as ``jnp.issubdtype``."""
    try:
        return _issubdtype_cached(a, b)
    except TypeError:  # unhashable argument
        return _issubdtype_cached.__wrapped__(a, b)


_CUSTOM_FLOAT_TYPES = frozenset(d.type for d in _ML_FLOATS)
_SINT_TYPES = frozenset(d.type for d in _ML_SINTS)
_UINT_TYPES = frozenset(d.type for d in _ML_UINTS)


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
    """Size of one element in bits (4 for int4, 8 for float8 and for bool, ...)."""
    if dt is None:
        raise ValueError("dtype cannot be None.")
    d = np.dtype(dt)
    if d == _b1:
        return 8
    if issubdtype(d, np.integer):
        return iinfo(d).bits
    if issubdtype(d, np.floating):
        return finfo(d).bits
    if issubdtype(d, np.complexfloating):
        return 2 * finfo(d).bits
    raise ValueError(f"unexpected input: dtype={dt!r}")


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
