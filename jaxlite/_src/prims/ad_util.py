"""The values autodiff works with, and small helpers the primitives' rules are written with.

``Zero`` (a symbolic zero tangent or cotangent) and ``UndefinedPrimal`` (a linear input of a
transpose rule) live here, below both the rules that take them and the AD interpreter
(``interpreters/ad.py``) that makes them, so the rules never import the interpreter.

The helpers bind primitives directly (so rules work under every trace, and prims never import
the ``lax`` wrappers above them) and follow lax's rules: both operands of a binary op share a
dtype; rank-0 operands broadcast.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core import dtypes
from jaxlite._src.core.dtypes import canonicalize_dtype, float0
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.tree_util import register_pytree_node

__all__ = ["aval", "const", "mul", "add", "sub", "neg", "div", "select", "zeros", "ones",
           "unbroadcast", "bcast", "convert", "is_zero", "instantiate", "Zero",
           "UndefinedPrimal", "is_undefined", "reduce_sum", "real_part", "eq", "ew",
           "tangent_aval", "zeros_like_aval", "add_tangents", "jvp_apply"]


# ----------------------------------------------------------------------------- AD values

def tangent_aval(aval):
    """The aval of tangents of values of ``aval`` (float0 for integers and booleans; a
    ref of floats has tangents that are refs of the same type)."""
    if hasattr(aval, "inner_aval") and not isinstance(aval.dtype, dtypes.ExtendedDType) \
            and dtypes.issubdtype(aval.dtype, np.inexact):
        return aval
    if type(aval) is ShapedArray:
        return aval.to_tangent_aval()
    # (tangents keep the sharding in the primal's type and the manual axes it varies over)
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type,
                       sharding=getattr(aval, "sharding", None),
                       vma=getattr(aval, "vma", ())).to_tangent_aval()


class Zero:
    """A symbolic zero tangent or cotangent of abstract value ``aval`` (never materialised
    unless a rule needs it)."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"

    @staticmethod
    def like(x):
        return Zero(tangent_aval(aval_of_value(x)))

    # JAX's name for ``like`` (rules written for JAX's extension API call it)
    from_primal_value = like


class UndefinedPrimal:
    """A linear input of a transpose rule: only its abstract value is known."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


# As in JAX, both are pytree nodes with no children (the aval is the node's data): a Zero
# tangent crosses ``vmap``/``jit`` boundaries and ``tree_map`` unchanged (equinox's vprim
# rules vmap a JVP rule whose tangents and outputs may be symbolic zeros).
register_pytree_node(Zero, lambda z: ((), z.aval), lambda aval, _: Zero(aval))
register_pytree_node(UndefinedPrimal, lambda u: ((), u.aval),
                     lambda aval, _: UndefinedPrimal(aval))


def zeros_like_aval(aval):
    """A concrete array of zeros for ``aval`` (bound in the current trace if needed)."""
    if aval.dtype == float0:
        return np.zeros(aval.shape, float0)
    rules = _edtype_rules(aval.dtype, "zero")
    if rules is not None:   # (JAX's rules protocol: the dtype's zero, broadcast)
        z = rules.zero(aval.dtype)
        if not aval.shape:
            return z
        return sp().broadcast_in_dim_p.bind(z, shape=tuple(aval.shape),
                                            broadcast_dimensions=(), sharding=None)
    if not aval.shape:
        return ArrayImpl(np.zeros((), aval.dtype), aval.weak_type)
    return sp().broadcast_in_dim_p.bind(ArrayImpl(np.zeros((), aval.dtype), False),
                                        shape=tuple(aval.shape), broadcast_dimensions=(),
                                        sharding=None)


def instantiate(t):
    """``t`` with a symbolic Zero replaced by real zeros."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    """Sum of two tangents, either possibly Zero."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return add_any(a, b)


def _edtype_rules(dt, hook):
    """The ``_rules`` of an extended dtype of JAX's rules protocol having ``hook``, or None."""
    if isinstance(dt, dtypes.ExtendedDType):
        rules = getattr(dt, "_rules", None)
        if rules is not None and hasattr(rules, hook):
            return rules
    return None


def jvp_apply(prim, primals, tangents, **params):
    """One application of the single-result ``prim`` differentiated forward, as the JVP
    trace applies it (for rules that differentiate a fixed composite of primitives):
    ``tangents`` may hold None or Zero. Returns (primal out, tangent out or Zero)."""
    rule = prim.jvp
    if rule is NOT_DIFFERENTIABLE or all(t is None or type(t) is Zero for t in tangents):
        out = prim.bind(*primals, **params)
        return out, Zero.like(out)
    out, t = rule(primals, [Zero.like(p) if t is None else t
                            for p, t in zip(primals, tangents)], **params)
    if type(t) is not Zero and aval_of_value(t).dtype == float0:
        t = Zero.like(out)
    return out, t


# ----------------------------------------------------------------------------- op helpers

def ew():
    from jaxlite._src.prims import elementwise
    return elementwise


def sp():
    from jaxlite._src.prims import shape
    return shape


def aval(x):
    return x.aval if hasattr(x, "aval") and not isinstance(x, np.ndarray) else \
        aval_of_value(x)


def const(x, v):
    """The rank-0 constant ``v`` with ``x``'s dtype and weak type (as JAX's ``_const``, so
    derivatives of weakly typed values stay weakly typed)."""
    a = aval(x)
    return ArrayImpl(np.asarray(v, a.dtype), bool(getattr(a, "weak_type", False)))


def zeros(a):
    """Zeros of the aval (or value) ``a``, keeping its weak type (JAX's ``full_like``)."""
    a = a if hasattr(a, "shape") and hasattr(a, "dtype") and not hasattr(a, "_value") and \
        not hasattr(a, "_trace") else aval(a)
    if _edtype_rules(a.dtype, "zero") is not None:
        return zeros_like_aval(a)
    weak = bool(getattr(a, "weak_type", False))
    if not a.shape:
        return ArrayImpl(np.zeros((), a.dtype), weak)
    return sp().broadcast_in_dim_p.bind(ArrayImpl(np.zeros((), a.dtype), weak),
                                        shape=tuple(a.shape), broadcast_dimensions=(),
                                        sharding=None)


def ones(a):
    """Ones shaped like the value ``a``, keeping its weak type (JAX's ``full_like``)."""
    a = aval(a)
    weak = bool(getattr(a, "weak_type", False))
    if not a.shape:
        return ArrayImpl(np.ones((), a.dtype), weak)
    return sp().broadcast_in_dim_p.bind(ArrayImpl(np.ones((), a.dtype), weak),
                                        shape=tuple(a.shape), broadcast_dimensions=(),
                                        sharding=None)


def mul(a, b):
    return ew().mul_p.bind(a, b)


def add(a, b):
    return ew().add_p.bind(a, b)


def add_any(a, b):
    """The sum of two tangents; for an extended dtype of JAX's rules protocol, its
    ``_rules.add`` (flax's fp8 meta dtypes accumulate with max)."""
    dt = aval(a).dtype
    rules = _edtype_rules(dt, "add")
    if rules is not None:
        return rules.add(dt, a, b)
    return ew().add_any_p.bind(a, b)


def sub(a, b):
    return ew().sub_p.bind(a, b)


def neg(a):
    return ew().neg_p.bind(a)


def div(a, b):
    return ew().div_p.bind(a, b)


def eq(a, b):
    return ew().eq_p.bind(a, b)


def select(pred, on_true, on_false):
    return ew().select_n_p.bind(pred, on_false, on_true)


def convert(x, dtype, weak_type=False):
    dtype = np.dtype(dtype)
    if aval(x).dtype == dtype:
        return x
    return ew().convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type,
                                            sharding=None)


def real_part(x):
    return ew().real_p.bind(x) if aval(x).dtype.kind == "c" else x


def reduce_sum(x, axes):
    from jaxlite._src.prims.reductions import reduce_sum_p
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=tuple(axes), out_sharding=None)


def bcast(t, shape):
    """``t`` broadcast to ``shape`` (t is rank-0, of equal rank with size-1 dims, or already
    of that shape)."""
    shape = tuple(shape)
    a = aval(t)
    if a.shape == shape:
        return t
    if a.ndim and a.ndim == len(shape):   # size-1 dims: squeeze them, then broadcast (JAX)
        dims = tuple(i for i, (m, n) in enumerate(zip(a.shape, shape)) if m == n)
        t = sp().reshape_p.bind(t, new_sizes=tuple(a.shape[i] for i in dims), dimensions=None,
                                sharding=None)
    else:
        dims = tuple(range(len(shape) - a.ndim, len(shape))) if a.ndim else ()
    return sp().broadcast_in_dim_p.bind(t, shape=shape, broadcast_dimensions=dims,
                                        sharding=None)


def unbroadcast(ct, target):
    """Sum the cotangent ``ct`` down to ``target``'s shape (lax's rank-0 and size-1
    broadcasting), and to its dtype's real part when the primal was real."""
    a = aval(ct)
    tshape = tuple(target.shape)
    if a.shape != tshape:
        if not tshape:
            ct = reduce_sum(ct, range(a.ndim))
        else:
            axes = [i for i, (n, m) in enumerate(zip(a.shape, tshape)) if n != m]
            ct = reduce_sum(ct, axes)
            ct = sp().reshape_p.bind(ct, new_sizes=tshape, dimensions=None, sharding=None)
    if aval(ct).dtype.kind == "c" and np.dtype(target.dtype).kind != "c":
        ct = ew().real_p.bind(ct)
    return ct


def is_zero(t):
    return type(t) is Zero


def is_undefined(x):
    return type(x) is UndefinedPrimal


def const_literal(lit):
    """The value of a jaxpr Literal as an array (keeping its weak type)."""
    return ArrayImpl(np.asarray(lit.val, lit.aval.dtype), lit.aval.weak_type)


# ----------------------------------------------------------------------------- lax-like helpers
# Each binds its primitive exactly as the ``lax`` wrapper of that name does (same operand
# normalisation, same no-op shortcuts), so a rule written with them stages the equations the
# lax spelling would, without prims importing the library layer above them.

def _shape(x):
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """``lax.broadcast_in_dim``."""
    shape = tuple(int(d) for d in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if _shape(x) == shape and broadcast_dimensions == tuple(range(len(shape))) and \
            hasattr(x, "aval"):
        return x
    return sp().broadcast_in_dim_p.bind(x, shape=shape,
                                        broadcast_dimensions=broadcast_dimensions,
                                        sharding=None)


def broadcast(x, sizes):
    """``lax.broadcast``: leading dimensions of ``sizes`` added to ``x``."""
    shp = _shape(x)
    n = len(sizes)
    return broadcast_in_dim(x, tuple(sizes) + shp, tuple(range(n, n + len(shp))))


def expand_dims(x, dimensions):
    """``lax.expand_dims``."""
    shp = list(_shape(x))
    nd = len(shp) + len(dimensions)
    dims = sorted(d % nd if d < 0 else d for d in dimensions)
    for d in dims:
        shp.insert(d, 1)
    return broadcast_in_dim(x, tuple(shp), tuple(i for i in range(nd) if i not in dims))


def reshape(x, new_sizes):
    """``lax.reshape`` (without ``dimensions``)."""
    new_sizes = tuple(int(d) for d in new_sizes)
    if _shape(x) == new_sizes and hasattr(x, "aval"):
        return x
    return sp().reshape_p.bind(x, new_sizes=new_sizes, dimensions=None, sharding=None)


def transpose(x, permutation):
    """``lax.transpose``."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))) and hasattr(x, "aval") and \
            len(permutation) == len(_shape(x)):
        return x
    return sp().transpose_p.bind(x, permutation=permutation)


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 (lax's name)
    """``lax.slice``."""
    return sp().slice_p.bind(x, start_indices=tuple(int(i) for i in start_indices),
                             limit_indices=tuple(int(i) for i in limit_indices),
                             strides=None if strides is None else tuple(int(s) for s in strides))


def concatenate(operands, dimension):
    """``lax.concatenate``."""
    operands = list(operands)
    if len(operands) == 1 and hasattr(operands[0], "aval"):
        return operands[0]
    return sp().concatenate_p.bind(*operands, dimension=int(dimension))


def pad(x, padding_value, padding_config):
    """``lax.pad``."""
    return sp().pad_p.bind(x, padding_value,
                           padding_config=tuple(tuple(c) for c in padding_config))


def iota(dtype, size):
    """``lax.iota``."""
    return sp().iota_p.bind(dtype=canonicalize_dtype(dtype), shape=(int(size),), dimension=0,
                            sharding=None)


def broadcasted_iota(dtype, shape, dimension):
    """``lax.broadcasted_iota``."""
    return sp().iota_p.bind(dtype=canonicalize_dtype(dtype), shape=tuple(shape),
                            dimension=int(dimension), sharding=None)


def full(shape, fill_value, dtype):
    """``lax.full`` with an explicit ``dtype`` (so not weakly typed)."""
    dtype = canonicalize_dtype(dtype)
    v = ArrayImpl(ew().convert_element_type_p.impl(np.asarray(fill_value), dtype), False)
    return broadcast_in_dim(v, tuple(int(d) for d in shape), ())


def full_like(x, fill_value):
    """``lax.full_like(x, fill_value)``."""
    return full(_shape(x), fill_value, x.dtype)


def convert_element_type(x, new_dtype):
    """``lax.convert_element_type`` of an array or tracer (not weakly typed after)."""
    new_dtype = canonicalize_dtype(new_dtype)
    if hasattr(x, "dtype") and x.dtype == new_dtype and not getattr(x, "weak_type", False) \
            and hasattr(x, "aval"):
        return x
    return ew().convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=False,
                                            sharding=None)


def conj(x):
    """``lax.conj`` of an array or tracer."""
    return ew().conj_p.bind(x, input_dtype=np.dtype(x.dtype))


def real(x):
    """``lax.real``."""
    return ew().real_p.bind(x)


def imag(x):
    """``lax.imag``."""
    return ew().imag_p.bind(x)


def abs(x):  # noqa: A001 (lax's name)
    """``lax.abs``."""
    return ew().abs_p.bind(x)


def complex(x, y):  # noqa: A001 (lax's name)
    """``lax.complex``."""
    return ew().complex_p.bind(x, y)


def le(a, b):
    """``lax.le``."""
    return ew().le_p.bind(a, b)


def ge(a, b):
    """``lax.ge``."""
    return ew().ge_p.bind(a, b)
