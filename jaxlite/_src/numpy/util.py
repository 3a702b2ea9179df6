"""Helpers shared by jax.numpy functions: argument checks and NumPy-style promotion.

``promote_args(name, *args)`` is what every jnp elementwise function starts with: it checks
the arguments are array-like, promotes their dtypes with JAX's lattice (weak types included)
and their ranks NumPy-style (respecting ``jax_numpy_rank_promotion``).
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.interpreters.ad import has_python_scalar_primal
from jaxlite._src.prims.elementwise import convert_element_type_p
from jaxlite._src.prims.operands import asarray_value, py_int_array
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.runtime import guards

__all__ = ["check_arraylike", "promote_dtypes", "promote_shapes", "promote_args",
           "promote_dtypes_inexact", "promote_dtypes_numeric", "promote_args_inexact",
           "promote_args_numeric", "is_arraylike", "asarray_value", "canonicalize_axis",
           "weak_constant"]

_py_scalars = (int, float, complex, bool)
_arraylike_types = (ArrayImpl, Tracer, np.ndarray, np.generic) + _py_scalars


def is_arraylike(x) -> bool:
    """True for arrays, tracers, NumPy arrays/scalars and Python scalars (not lists)."""
    return isinstance(x, _arraylike_types) or hasattr(x, "__jax_array__")


def lax_const(example, value):
    """``value`` as a constant for an operation with ``example`` (JAX's ``lax._const``): a
    Python scalar when ``example`` is a weakly typed scalar whose dtype it has (results stay
    weakly typed), else a NumPy scalar of ``example``'s dtype (a literal in jaxprs)."""
    dt = np.dtype(dtypes.dtype(example))
    if np.ndim(example) == 0 and dtypes.is_weakly_typed(example):
        v = dtypes.scalar_type_of(example)(value)
        if dtypes.python_scalar_dtype(v) == dt:
            return v
    return asarray_value(np.asarray(value, dt))


def check_arraylike(fun_name, *args, emit_warning=False):
    """Raise JAX's TypeError if any argument is not array-like (e.g. a list or tuple)."""
    for pos, a in enumerate(args):
        t = type(a)
        if t is ArrayImpl or t in _py_scalars:
            continue
        if not is_arraylike(a):
            msg = (f"{fun_name} requires ndarray or scalar arguments, got {t} at position "
                   f"{pos}.")
            if emit_warning:
                warnings.warn(msg + " In a future JAX release this will be an error.",
                              DeprecationWarning, stacklevel=3)
            else:
                raise TypeError(msg)


def ensure_arraylike(fun_name, *args):
    """Check that the arguments are array-like (JAX's TypeError otherwise) and return them as
    arrays, keeping their dtypes (Python scalars stay weakly typed): one array for one
    argument, else a tuple."""
    check_arraylike(fun_name, *args)
    if len(args) == 1:
        return asarray_value(args[0])
    return tuple(asarray_value(a) for a in args)


def _py_float_array(x, dtype):
    with np.errstate(over="ignore", invalid="ignore"):   # 1e10 as float16 is inf, silently
        return np.asarray(x, dtype)


def weak_constant(x, dtype, weak_type):
    """A concrete array of ``dtype`` from a Python scalar / NumPy value (no primitive)."""
    t = type(x)
    if t is int:
        if not -2147483648 <= x <= 2147483647:
            return ArrayImpl(py_int_array(x, dtype), weak_type)
        try:
            return ArrayImpl(np.asarray(x, dtype), weak_type)
        except OverflowError:
            return ArrayImpl(py_int_array(x, dtype), weak_type)
    if t is float and not -65504.0 <= x <= 65504.0:
        return ArrayImpl(_py_float_array(x, dtype), weak_type)
    return ArrayImpl(np.asarray(x, dtype), weak_type)


def _convert(x, dtype, weak):
    t = type(x)
    if t in _py_scalars or isinstance(x, (np.ndarray, np.generic)):
        if guards.active[0]:
            guards.check_host_to_device(x)   # jax.transfer_guard: an implicit transfer
        return weak_constant(x, dtype, weak)
    if x.dtype == dtype and x.weak_type == weak and not has_python_scalar_primal(x):
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak, sharding=None)


_promo_cache: dict = {}


def _on_config_change(name):
    if name in ("jax_enable_x64", "jax_numpy_dtype_promotion"):
        _promo_cache.clear()
        _scalar_values[0].clear()
        _scalar_values[1].clear()


config.add_listener(_on_config_change)


def _type_key(x):
    t = type(x)
    if t is ArrayImpl:
        return (x._value.dtype, x.weak_type)
    if t in _py_scalars:
        return t
    if isinstance(x, Tracer):
        a = x.aval
        return (a.dtype, a.weak_type)
    return None


def _has_extended(args):
    return any(isinstance(getattr(x, "dtype", None), dtypes.ExtendedDType) for x in args)


def _lattice_type(args):
    """(dtype, weak_type) the arguments promote to (cached on their dtypes/weak types), or
    (None, None) when some argument has an extended dtype (key arrays are not promoted: the
    primitive accepts them, as select_n and concatenate do, or rejects them)."""
    key = tuple(map(_type_key, args))
    if None in key:
        if _has_extended(args):
            return None, None
        return dtypes.lattice_result_type(*args)
    r = _promo_cache.get(key)
    if r is None:
        if _has_extended(args):
            return None, None
        r = _promo_cache[key] = dtypes.lattice_result_type(*args)
    return r


def promote_dtypes(*args):
    """Convert the arguments to their common JAX dtype (keeping weak types)."""
    if len(args) < 2:
        return [asarray_value(x) for x in args]
    to_dtype, weak = _lattice_type(args)
    if to_dtype is None:
        return [asarray_value(x) for x in args]
    return [_convert(x, to_dtype, weak) for x in args]


def promote_dtypes_inexact(*args):
    """Like promote_dtypes, then to an inexact dtype as JAX (ints of up to 32 bits and bool
    become float32, 64-bit ints float64): ``jnp.sin(1)`` is float32 (float64 with x64)."""
    to_dtype, weak = _lattice_type(args)
    if to_dtype is None:
        return [asarray_value(x) for x in args]
    to_dtype = dtypes.to_inexact_dtype(to_dtype)
    return [_convert(x, to_dtype, weak) for x in args]


def promote_dtypes_numeric(*args):
    """Like promote_dtypes, but bool results become int32 (as JAX, even with x64)."""
    to_dtype, weak = _lattice_type(args)
    if to_dtype is None:
        return [asarray_value(x) for x in args]
    to_dtype = dtypes.to_numeric_dtype(to_dtype)
    return [_convert(x, to_dtype, weak) for x in args]


def promote_shapes(fun_name, *args):
    """NumPy rank promotion: prepend unit dimensions to lower-rank operands (rank-0 operands
    are left alone: lax ops accept them directly)."""
    if len(args) < 2:
        return list(args)
    shapes = [np.shape(a) for a in args]
    ranks = [len(s) for s in shapes]
    nd = max(ranks)
    if all(r == nd or r == 0 for r in ranks):
        return list(args)
    policy = config._flags["jax_numpy_rank_promotion"].value
    if policy != "allow":
        msg = (f"Following NumPy automatic rank promotion for {fun_name} on shapes "
               f"{' '.join(str(tuple(s)) for s in shapes)}. Set the jax_numpy_rank_promotion "
               "config option to 'allow' to disable this message; for more information, see "
               "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
        if policy == "raise":
            raise ValueError("Operands could not be broadcast together with shapes "
                             f"{' '.join(str(tuple(s)) for s in shapes)} and with the config "
                             "option jax_numpy_rank_promotion='raise'. " + msg)
        warnings.warn(msg)
    padded = [(1,) * (nd - len(s)) + tuple(s) for s in shapes if s]
    for dims in zip(*padded):
        if len(set(dims) - {1}) > 1:    # JAX's class and text for jnp (lax says TypeError)
            raise ValueError("Incompatible shapes for broadcasting: shapes="
                             f"{[tuple(s) for s in shapes]}")
    from jaxlite._src.lax.shape import broadcast_to_rank
    return [a if r == nd or r == 0 else broadcast_to_rank(a, nd)
            for a, r in zip(args, ranks)]


# (Python scalar, its type, array dtype, array weak type) -> the read-only 0-d NumPy value of
# the scalar when the lattice leaves the array as it is (what ``_convert`` makes of it), else
# False: ``array op scalar`` on the eager fast path costs one lookup. One dict for
# promote_args, one for promote_args_inexact; cleared when x64 or the promotion mode changes.
# Only keys whose equality is identity of value are cached: ints within int32 (their
# conversion does not depend on x64), bools, and floats other than zeros (0.0 == -0.0) and
# NaNs; complex scalars are not cached.
_scalar_values: tuple = ({}, {})
_SCALAR_VALUES_MAX = 4096


def _scalar_value(s, ts, dt, weak, inexact, scalar_first=False):
    """The cache entry of ``_scalar_values[inexact]`` for (s, ts, dt, weak), computed (the
    operands in the call's order, which a strict-promotion error lists as JAX does)."""
    a = ArrayImpl(np.empty((), dt), weak)
    to, w = _lattice_type((s, a) if scalar_first else (a, s))
    if inexact:
        to = dtypes.to_inexact_dtype(to)
    if to != dt or w != weak:
        c = False
    else:
        c = weak_constant(s, dt, weak)._value
        if type(c) is np.ndarray:
            c.flags.writeable = False   # shared between the operands of many ops
    if (ts is float and s != 0.0 and s == s) or ts is bool or \
            (ts is int and -2147483648 <= s <= 2147483647):
        cache = _scalar_values[inexact]
        if len(cache) >= _SCALAR_VALUES_MAX:
            cache.clear()
        cache[(s, ts, dt, weak)] = c
    return c


def _array_scalar(a, s, ts, scalar_first, inexact):
    """Fast path of ``promote_args(_inexact)`` for an array and a Python scalar ``s`` (of type
    ``ts``): when the lattice leaves the array as it is, only the scalar is converted. None
    when the general path must run (the array itself converts)."""
    if guards.active[0]:
        guards.check_host_to_device(s)   # jax.transfer_guard: an implicit transfer
    dt, weak = a._value.dtype, a.weak_type
    c = _scalar_values[inexact].get((s, ts, dt, weak))
    if c is None:
        c = _scalar_value(s, ts, dt, weak, inexact, scalar_first)
    if c is False:
        return None
    return (ArrayImpl(c, weak), a) if scalar_first else (a, ArrayImpl(c, weak))


def _same_arrays(x, y, inexact):
    """Two arrays of one dtype, weak type and rank need no promotion (weak bools become
    strong; the inexact variants need a float or complex dtype)."""
    vx, vy = x._value, y._value
    dt = vx.dtype
    return dt == vy.dtype and x.weak_type == y.weak_type and vx.ndim == vy.ndim and \
        (dt.kind in _INEXACT_KINDS if inexact else (not x.weak_type or dt.kind != "b"))


def _two_operand_fast(x, y, inexact):
    """The promoted pair when an array meets an array of its own type or a Python scalar
    the lattice leaves it unchanged by (else None: the general path decides)."""
    tx, ty = type(x), type(y)
    if tx is ArrayImpl:
        if ty is ArrayImpl:
            return (x, y) if _same_arrays(x, y, inexact) else None
        if ty in _py_scalars:
            return _array_scalar(x, y, ty, False, inexact)
    elif ty is ArrayImpl and tx in _py_scalars:
        return _array_scalar(y, x, tx, True, inexact)
    return None


def promote_args(fun_name, *args):
    """Check, then promote the dtypes and ranks of the arguments of jnp function ``fun_name``."""
    if len(args) == 2:
        r = _two_operand_fast(args[0], args[1], False)
        if r is not None:
            return r
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


_INEXACT_KINDS = ("f", "c")


def promote_args_inexact(fun_name, *args):
    """promote_args, converting non-inexact results to the default float type."""
    if len(args) == 1 and type(args[0]) is ArrayImpl and \
            args[0]._value.dtype.kind in _INEXACT_KINDS:
        return args  # fast path: a float/complex array needs no promotion
    if len(args) == 2:
        r = _two_operand_fast(args[0], args[1], True)
        if r is not None:
            return r
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name, *args):
    """promote_args, converting bool results to the default int type."""
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def canonicalize_axis(axis, ndim):
    """Normalise a possibly negative axis, raising JAX's ValueError when out of range (and
    TypeError for a non-integer axis, as ``operator.index``)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis
