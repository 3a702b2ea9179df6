"""Family base classes for primitives: elementwise n-ary ops, reductions and the like.

A family gives the shared rules (abstract evaluation, dtype checks, the jit lowering of a NumPy
function) so that each concrete primitive is a few lines in its family file.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.fpe import enter_quiet, leave_quiet
from jaxlite._src.core.primitive import (
    NOT_DIFFERENTIABLE,
    Primitive,
    _slow_eager,
    aval_nbytes,
)
from jaxlite._src.core.trace import ctx
from jaxlite._src.prims.batch_util import moveaxis
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Elementwise", "UnaryElementwise", "BinaryElementwise", "Comparison",
           "check_dtype_kind", "broadcast_shapes_or_scalar"]

# Dtype categories accepted by elementwise primitives, as JAX names them in its errors.
_KIND_TEST = {
    "float": lambda d: dtypes.issubdtype(d, np.floating),
    "inexact": lambda d: dtypes.issubdtype(d, np.inexact),
    "complex": lambda d: dtypes.issubdtype(d, np.complexfloating),
    "int": lambda d: dtypes.issubdtype(d, np.integer),
    "int_or_bool": lambda d: dtypes.issubdtype(d, np.integer) or d == np.bool_,
    "num": lambda d: d != np.bool_,
    "real_num": lambda d: d != np.bool_ and not dtypes.issubdtype(d, np.complexfloating),
    "any": lambda d: True,
    "signed_num": lambda d: not (dtypes.issubdtype(d, np.unsignedinteger) or d == np.bool_),
    "ordered": lambda d: not dtypes.issubdtype(d, np.complexfloating),
    "number": lambda d: d != np.bool_,
}
_KIND_TEXT = {
    "float": "floating",
    "inexact": "floating, complexfloating",
    "complex": "complexfloating",
    "int": "integer",
    "int_or_bool": "integer, bool",
    "num": "integer, floating, complexfloating",
    "real_num": "integer, floating",
    "any": "any",
    "signed_num": "signedinteger, floating, complexfloating",
    "ordered": "integer, floating, bool",
    "number": "number",
}


def check_dtype_kind(name, kind, dtype, position=None):
    """Raise JAX's TypeError when a primitive does not accept ``dtype`` (for an operand of
    a primitive of several, JAX's text names its ``position``)."""
    if not _KIND_TEST[kind](dtype):
        at = "" if position is None else f" at position {position}"
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}{at}. Accepted "
                        f"dtypes{at} are subtypes of {_KIND_TEXT[kind]}.")


def broadcast_shapes_or_scalar(name, shapes):
    """The common shape of elementwise operands: rank-0 operands mix with anything; operands
    of equal rank broadcast size-1 dimensions (lax's rule; ranks are not promoted)."""
    out = None
    for s in shapes:
        if s == ():
            continue
        if out is None:
            out = s
            continue
        if len(s) != len(out):
            raise TypeError(f"{name}: arrays must have same number of dimensions, got "
                            f"{', '.join(str(tuple(x)) for x in shapes)}.")
        dims = []
        for a, b in zip(out, s):
            if a == b or b == 1:
                dims.append(a)
            elif a == 1:
                dims.append(b)
            else:
                raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                                f"{', '.join(str(tuple(x)) for x in shapes)}.")
        out = tuple(dims)
    return out if out is not None else ()


def broadcast_batcher(prim, size, args, dims, params):
    """Batching for elementwise primitives (as JAX's broadcast_batcher): operands batched
    alike keep their batch dimension; otherwise batch dimensions move to the front and
    unbatched operands get a unit leading dimension."""
    from jaxlite._src.core.avals import aval_of_value
    from jaxlite._src.prims.shape import broadcast_in_dim_p
    shapes = [tuple(aval_of_value(a).shape) for a in args]
    batched = [(s, d) for s, d in zip(shapes, dims) if d is not None]
    if len({s for s, _ in batched}) == 1 and len({d for _, d in batched}) == 1 and all(
            not s for s, d in zip(shapes, dims) if d is None):
        return prim.bind(*args, **params), batched[0][1]
    rank = max(len(s) - (d is not None) for s, d in zip(shapes, dims))
    new = []
    for a, s, d in zip(args, shapes, dims):
        if d is None:
            if s:
                a = broadcast_in_dim_p.bind(
                    a, shape=(1,) * (1 + rank - len(s)) + s,
                    broadcast_dimensions=tuple(1 + rank - len(s) + i
                                               for i in range(len(s))), sharding=None)
        else:
            a = moveaxis(a, d, 0)
            r = len(s) - 1
            if r < rank:
                a = broadcast_in_dim_p.bind(
                    a, shape=(s[d],) + (1,) * (rank - r) + tuple(x for i, x in enumerate(s)
                                                                if i != d),
                    broadcast_dimensions=(0,) + tuple(range(1 + rank - r, 1 + rank)),
                    sharding=None)
        new.append(a)
    return prim.bind(*new, **params), 0


class _OkDtypes(dict):
    """dtype -> True for the dtypes an elementwise primitive accepts (checked once each)."""
    __slots__ = ("prim",)

    def __init__(self, prim):
        super().__init__()
        self.prim = prim

    def __missing__(self, dt):
        try:
            check_dtype_kind(self.prim.name, self.prim.kind, dt)
        except TypeError:
            return False
        self[dt] = True
        return True

    def __contains__(self, dt):
        return self[dt]


def elementwise_sharding_rule(avals):
    """The sharding rule of elementwise operations: operand dimension k is output dimension k,
    except size-1 dimensions stretched by broadcasting (and rank-0 operands)."""
    nd = max(a.ndim for a in avals)
    out = [max(a.shape[k] for a in avals if a.ndim == nd) for k in range(nd)]
    return [tuple(k if a.shape[k] == out[k] else None for k in range(a.ndim))
            if a.ndim == nd else () for a in avals]


# HLO opcodes XLA's cost analysis counts as transcendentals (one per element), not flops
TRANSCENDENTAL_HLO = frozenset({
    "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "power",
    "sqrt", "cbrt", "rsqrt", "tanh", "sine", "cosine", "tan", "atan2", "erf"})


class Elementwise(Primitive):
    """n-ary elementwise primitive implemented by a NumPy function ``np_fn``.

    Operands must share a dtype (JAX's lax rule) and a shape (rank-0 operands broadcast).
    ``kind`` names the accepted dtypes; ``out_dtype`` fixes the result dtype (e.g. bool for
    comparisons) or None to keep the operand dtype.
    """
    np_fn = None
    kind = "any"
    out_dtype = None
    nargs = 1
    # HLO's opcode for the operation (None: no single HLO instruction) and its attributes
    hlo_op = None
    hlo_attrs = ()

    def __init__(self):
        super().__init__()
        # dtypes seen to pass abstract_eval (filled by _check_eager/abstract_eval via
        # Primitive.eager), so the fast path keeps lax's dtype rules at a set lookup's cost
        self._ok_dtypes = _OkDtypes(self)
        if type(self).impl is Elementwise.impl and self.np_fn is not None:
            self.impl = self.np_fn  # skip a Python call on the eager hot path

    def cost(self, avals_in, avals_out, literals, **params):
        """One flop per element (one transcendental for XLA's transcendental opcodes), after a
        ``broadcast`` of each rank-0 operand of a non-scalar result, as JAX lowers it.
        Operations without a single HLO opcode are counted as one flop per element (XLA
        counts the several operations they expand to)."""
        out = avals_out[0]
        n = int(np.prod(out.shape, dtype=np.int64))
        ops, in_bytes = [], []
        for a in avals_in:
            if not a.shape and out.shape:
                b = n * a.dtype.itemsize
                ops.append((0, 0, [aval_nbytes(a)], b))
                in_bytes.append(b)
            else:
                in_bytes.append(aval_nbytes(a))
        trans = self.hlo_op in TRANSCENDENTAL_HLO
        ops.append((0 if trans else n, n if trans else 0, in_bytes, aval_nbytes(out)))
        return ops

    def impl(self, *args):
        return self.np_fn(*args)

    def batch(self, size, args, dims, **params):
        return broadcast_batcher(self, size, args, dims, params)

    def sharding_rule(self, avals, **params):
        """Operand dimension k is output dimension k (rank-0 operands broadcast)."""
        return elementwise_sharding_rule(avals)

    def check_operands(self, vals, params):
        v0 = vals[0]
        dt, shape = v0.dtype, v0.shape
        for v in vals[1:]:
            if v.dtype != dt or (v.shape != shape and v.ndim and v0.ndim):
                break
        else:
            if dt in self._ok_dtypes:
                return
        self.abstract_eval(*[ShapedArray(v.shape, v.dtype) for v in vals], **params)

    def abstract_eval(self, *avals):
        if len(avals) != self.nargs:
            raise TypeError(f"{self.name} takes {self.nargs} operands, got {len(avals)}")
        dt = avals[0].dtype
        for a in avals[1:]:
            if a.dtype != dt:
                raise TypeError(
                    f"lax.{self.name} requires arguments to have the same dtypes, got "
                    f"{', '.join(x.dtype.name for x in avals)}. (Tip: jnp.{self.name} is a "
                    "similar function that does automatic type promotion on inputs).")
        check_dtype_kind(self.name, self.kind, dt, 0 if self.nargs > 1 else None)
        shape = broadcast_shapes_or_scalar(self.name, [a.shape for a in avals])
        out_dt = self.out_dtype if self.out_dtype is not None else dt
        return ShapedArray(shape, out_dt, self.out_weak(avals, {}))

    def hlo(self, b, *ins, **params):
        """One HLO instruction ``hlo_op`` over the operands broadcast to the result shape."""
        if self.hlo_op is None:
            return b.custom_call(self, ins, params)
        out = b.out_avals[0]
        ops = [b.broadcast_to(x, a, out.shape) for x, a in zip(ins, b.in_avals)]
        return b.op(self.hlo_op, out, ops, *self.hlo_attrs)

    def lower_py(self, ctx, ins):
        fn = self.np_fn
        if isinstance(fn, np.ufunc) and getattr(np, fn.__name__, None) is fn:
            return f"np.{fn.__name__}({', '.join(ins)})"
        return None


class UnaryElementwise(Elementwise):
    """One-operand elementwise primitive. ``tangent(g, x, y)`` (y = the output) gives the
    output tangent for the input tangent ``g`` in primitive ops (the holomorphic derivative
    for complex inputs, as JAX)."""
    nargs = 1
    tangent = None

    def jvp(self, primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = self.bind(x, **params)
        if self.tangent is None:
            raise NotImplementedError(f"Differentiation rule for '{self.name}' is not "
                                      "implemented in jaxlite.")
        return y, self.tangent(t, x, y)

    def bind(self, x, **params):
        # Eager fast path: a concrete array operand and no active trace.
        if type(x) is ArrayImpl and ctx.trace is None and not _slow_eager[0] and not params \
                and x._sharding is None and \
                (self._ok_dtypes.get(x._value.dtype) or x._value.dtype in self._ok_dtypes):
            token = enter_quiet()     # inf/nan silently, never a warning, as JAX
            try:
                return ArrayImpl(self.impl(x._value), x.weak_type)
            finally:
                leave_quiet(token)
        return Primitive.bind(self, x, **params)


class BinaryElementwise(Elementwise):
    nargs = 2

    def bind(self, x, y):
        # Eager fast path: two concrete array operands and no active trace.
        if (type(x) is ArrayImpl and type(y) is ArrayImpl and ctx.trace is None
                and not _slow_eager[0] and x._sharding is None and y._sharding is None):
            xv, yv = x._value, y._value
            dt = xv.dtype
            if dt is yv.dtype and (self._ok_dtypes.get(dt) or dt in self._ok_dtypes) and \
                    (not yv.ndim or xv.shape == yv.shape or not xv.ndim):
                token = enter_quiet()     # (as the unary fast path)
                try:
                    return ArrayImpl(self.impl(xv, yv), x.weak_type and y.weak_type)
                finally:
                    leave_quiet(token)
        return Primitive.bind(self, x, y)


class Comparison(BinaryElementwise):
    out_dtype = np.dtype(bool)
    hlo_op = "compare"
    jvp = NOT_DIFFERENTIABLE
