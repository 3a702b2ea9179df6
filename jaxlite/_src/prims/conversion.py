"""Conversion and selection primitives: convert_element_type, select_n (with the
branchless ``where`` used by its impl and lowering), clamp and bitcast_convert_type."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.fpe import ignoring
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive, aval_nbytes
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import numba_exprs as nx
from jaxlite._src.prims.base import elementwise_sharding_rule
from jaxlite._src.prims.batch_util import bdim_at_front, moveaxis
from jaxlite._src.prims import taylor

__all__ = ["convert_element_type_p", "select_n_p", "clamp_p", "bitcast_convert_type_p",
           "where"]


class ConvertElementType(Primitive):
    """Cast to ``new_dtype``; ``weak_type`` sets the weak type of the result."""
    name = "convert_element_type"
    weak_rule = "param"
    numba_expr = nx.convert
    casts = True   # (a value cast: passes.bool_products sees a boolean through it)
    hidden_params = ("sharding",)


    def cost(self, avals_in, avals_out, literals, **params):
        """XLA's ``convert``: one flop per element; a change of weak type alone lowers to no
        instruction and costs nothing."""
        a, out = avals_in[0], avals_out[0]
        if a.dtype == out.dtype:
            return []
        return [(int(np.prod(out.shape, dtype=np.int64)), 0, [aval_nbytes(a)],
                 aval_nbytes(out))]

    def hlo(self, b, x, new_dtype, weak_type=False, sharding=None):
        if b.in_avals[0].dtype == b.out_avals[0].dtype:
            return x   # a change of weak type only: no instruction
        return b.op("convert", b.out_avals[0], (x,))

    def impl(self, x, new_dtype, weak_type=False, sharding=None):
        if x.dtype == new_dtype:
            return x
        if x.dtype.kind == "b":   # casts of booleans never overflow (e.g. a cond's index)
            return x.astype(new_dtype) if x.ndim else new_dtype.type(x)
        if x.dtype.kind == "c" and new_dtype.kind != "c":
            x = np.real(x)
        with ignoring():
            if x.dtype.kind == "f" and new_dtype.kind in "iu":
                info = np.iinfo(new_dtype)
                x = np.where(np.isnan(x), 0, np.clip(x, info.min, info.max))
            return np.asarray(x).astype(new_dtype) if np.ndim(x) else new_dtype.type(x)

    def abstract_eval(self, x, new_dtype, weak_type=False, sharding=None):
        return ShapedArray(x.shape, new_dtype, weak_type)

    def sharding_rule(self, avals, **params):
        """Elementwise: operand dimension k is output dimension k (scalars broadcast)."""
        return elementwise_sharding_rule(avals)

    def fold(self, x, new_dtype, weak_type=False, sharding=None):
        # a cast of a scalar constant is done while tracing (JAX's folding rule)
        if sharding is not None or dtypes.issubdtype(new_dtype, dtypes.extended):
            return None
        from jaxlite._src.runtime.array import ArrayImpl
        return ArrayImpl(np.asarray(self.impl(np.asarray(x), new_dtype)), bool(weak_type))

    def lower_py(self, ctx, ins, new_dtype, weak_type=False, sharding=None):
        return None

    def batch(self, size, args, dims, **params):
        return self.bind(args[0], **params), dims[0]

    def jvp(self, primals, tangents, new_dtype, weak_type=False, sharding=None):
        (x,), (t,) = primals, tangents
        out = self.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
        if not dtypes.issubdtype(new_dtype, np.inexact):
            return out, u.Zero(ShapedArray(u.aval(out).shape, dtypes.float0))
        ta = u.aval(t)
        if ta.dtype == new_dtype and ta.weak_type == weak_type and \
                type(t) not in (float, int, complex, bool):   # (a Python scalar becomes an array)
            return out, t
        return out, self.bind(t, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)

    def transpose(self, ct, x, new_dtype, weak_type=False, sharding=None):
        if u.is_zero(ct):
            return [None]
        a = u.aval(x)
        return [self.bind(ct, new_dtype=a.dtype, weak_type=a.weak_type, sharding=sharding)]


convert_element_type_p = ConvertElementType()


_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def where(which, on_true, on_false):
    """``np.where`` for a bool mask and two same-dtype cases, bit for bit. Large arrays are
    selected branchlessly on the bit patterns (``f ^ ((t ^ f) & -which)``): NumPy's
    ``where`` branches per element and costs ~4 ns/element on unpredictable masks, 7x more."""
    u = _UINT_OF_SIZE.get(on_true.dtype.itemsize)
    if (u is None or which.dtype != np.bool_ or which.size < 4096 or on_true.dtype.kind == "b"
            or on_true.shape != which.shape or on_false.shape != which.shape):
        return np.where(which, on_true, on_false)
    mask = np.negative(which, dtype=u)
    f = on_false.view(u)
    r = np.bitwise_xor(on_true.view(u), f)
    np.bitwise_and(r, mask, out=r)
    np.bitwise_xor(r, f, out=r)
    return r.view(on_true.dtype)


def _check_select(which, *cases):
    """JAX's TypeErrors for select_n operands (arrays or avals) that do not fit."""
    if not cases:
        raise TypeError("select must have at least one case")
    if any(c.shape != cases[0].shape for c in cases[1:]):
        raise TypeError(f"select cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(f"select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    if any(c.dtype != cases[0].dtype for c in cases[1:]):
        raise TypeError(f"lax.select requires arguments to have the same dtypes, got "
                        f"{', '.join(np.dtype(c.dtype).name for c in cases)}. (Tip: jnp.where "
                        f"is a similar function that does automatic type promotion on inputs).")
    if which.dtype != np.bool_ and which.dtype.kind not in "iu":
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{np.dtype(which.dtype).name}.")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")


class Select(Primitive):
    """``select_n(which, *cases)``: pick elementwise from ``cases`` by the bool/int ``which``."""
    accepts_extended = True
    name = "select_n"
    selects_cases = True
    numba_expr = nx.select


    def cost(self, avals_in, avals_out, literals, **params):
        """XLA's ``select`` is elementwise: one flop per element."""
        out = avals_out[0]
        return [(int(np.prod(out.shape, dtype=np.int64)), 0,
                 [aval_nbytes(a) for a in avals_in], aval_nbytes(out))]

    def hlo(self, b, which, *cases):
        """``select`` for a boolean predicate (cases swapped: HLO picks its second operand
        on true); an integer index becomes a chain of compares and selects."""
        out, w = b.out_avals[0], b.in_avals[0]
        cases = [b.broadcast_to(c, a, out.shape) for c, a in zip(cases, b.in_avals[1:])]
        if len(cases) == 1:
            return cases[0]
        pred_aval = out.update(dtype=np.dtype(bool))
        if w.dtype == np.bool_:
            return b.op("select", out, (b.broadcast_to(which, w, out.shape), cases[1],
                                        cases[0]))
        which = b.broadcast_to(which, w, out.shape)
        acc = cases[-1]
        for k in range(len(cases) - 2, -1, -1):
            kk = b.broadcast_to(b.scalar(k + 1, w.dtype), w.update(shape=()), out.shape)
            lt = b.op("compare", pred_aval, (which, kk), "direction=LT")
            acc = b.op("select", out, (lt, cases[k], acc))
        return acc

    def impl(self, which, *cases):
        if len(cases) == 1:
            return cases[0]
        if which.dtype == np.bool_:
            return where(which, cases[1], cases[0])
        return np.choose(which, cases)

    def sharding_rule(self, avals, **params):
        """Elementwise: operand dimension k is output dimension k (scalars broadcast)."""
        return elementwise_sharding_rule(avals)

    def check_operands(self, vals, params):
        if len(vals) == 3:      # (the common case, checked cheaply: an eager hot path)
            w, a, b = vals
            if a.dtype == b.dtype and a.shape == b.shape and w.dtype == np.bool_ and (
                    w.shape == a.shape or not w.shape):
                return
        _check_select(*[np.asarray(v) for v in vals])

    def abstract_eval(self, which, *cases):
        _check_select(which, *cases)
        dt = cases[0].dtype
        return ShapedArray(cases[0].shape, dt, self.out_weak((which,) + cases, {}))

    def lower_py(self, ctx, ins):
        if len(ins) == 3:
            return f"{ctx.bind_global(where, 'where')}({ins[0]}, {ins[2]}, {ins[1]})"
        return None

    def jvp(self, primals, tangents):
        which, *cases = primals
        tcases = tangents[1:]
        out = self.bind(which, *cases)
        if all(u.is_zero(t) for t in tcases):
            return out, u.Zero(u.aval(tcases[0]))
        ts = [u.zeros(t.aval) if u.is_zero(t) else t for t in tcases]
        return out, self.bind(which, *ts)

    def batch(self, size, args, dims):
        # JAX's rule: keep a shared batch dim when possible, else batch dims to the front
        from jaxlite._src.prims.shape import broadcast_in_dim_p
        (which, *cases), (wd, *cds) = args, dims
        wshape, cshape = tuple(u.aval(which).shape), tuple(u.aval(cases[0]).shape)
        if all(d == wd for d in cds):
            if wshape != cshape:   # a scalar predicate of the vmapped function
                which = broadcast_in_dim_p.bind(which, shape=cshape, broadcast_dimensions=(wd,),
                                                sharding=None)
            return self.bind(which, *cases), wd
        if not wshape and all(d is not None for d in cds):
            if all(d == cds[0] for d in cds[1:]):
                return self.bind(which, *cases), cds[0]
            if all(tuple(u.aval(c).shape) == cshape for c in cases):
                return self.bind(which, cases[0], *[moveaxis(c, d, cds[0]) for c, d in
                                                     zip(cases[1:], cds[1:])]), cds[0]
        if wshape:
            which = bdim_at_front(which, wd, size)
        if any(u.aval(c).shape for c in cases):
            cases = [bdim_at_front(c, d, size) for c, d in zip(cases, cds)]
        full = tuple(u.aval(cases[0]).shape)
        nw = len(u.aval(which).shape)
        if 0 < nw < len(full):
            which = broadcast_in_dim_p.bind(which, shape=full, broadcast_dimensions=(0,),
                                            sharding=None)
        if nw > len(full):
            wfull = tuple(u.aval(which).shape)
            cases = [broadcast_in_dim_p.bind(c, shape=wfull, broadcast_dimensions=(),
                                             sharding=None) for c in cases]
        return self.bind(which, *cases), 0

    def transpose(self, ct, which, *cases):
        if u.is_undefined(which):
            raise ValueError("select_n is not linear in its predicate")
        res = [None]
        z = None if u.is_zero(ct) else u.zeros(u.aval(ct))
        for i, c in enumerate(cases):
            if not u.is_undefined(c) or u.is_zero(ct):
                res.append(None)
                continue
            res.append(self.bind(which, *[ct if j == i else z for j in range(len(cases))]))
        return res


select_n_p = Select()
# select_n's weak type follows its cases, not the predicate.
select_n_p.weak_rule = lambda flags: all(flags[1:])


class Clamp(Primitive):
    """``clamp(lo, x, hi)``: elementwise min(max(x, lo), hi)."""
    name = "clamp"

    def hlo(self, b, lo, x, hi):
        out = b.out_avals[0]
        return b.op("clamp", out, [b.broadcast_to(v, a, out.shape)
                                   for v, a in zip((lo, x, hi), b.in_avals)])

    def impl(self, lo, x, hi):
        return np.asarray(np.minimum(np.maximum(x, lo), hi), x.dtype) if np.ndim(x) else \
            x.dtype.type(min(max(x, lo), hi))

    def numba(self, code, eqn, ins):
        """Tier 2's loop code (``compiler/numba_bodies.py``), as ``impl``: for arrays,
        NumPy's maximum then minimum loops; for scalars, Python's ``min(max(x, lo), hi)``
        (which keeps ``x`` unless a bound compares beyond it)."""
        out = eqn.outvars[0].aval
        lo, x, hi = (a.aval for a in eqn.invars)
        if out.shape:
            m = code.ufunc_call(np.maximum, [(ins[1], x), (ins[0], lo)], out)
            return [code.ufunc_call(np.minimum, [(m, out), (ins[2], hi)], out)]
        t = code.dt(out.dtype)
        return [code.elementwise(eqn, ins, expr=lambda v: (
            f"{t}(({v[2]} if {v[2]} < ({v[0]} if {v[0]} > {v[1]} else {v[1]}) else "
            f"({v[0]} if {v[0]} > {v[1]} else {v[1]})))"))]

    def sharding_rule(self, avals, **params):
        """Elementwise: operand dimension k is output dimension k (scalars broadcast)."""
        return elementwise_sharding_rule(avals)

    def check_operands(self, vals, params):
        """Eagerly too, the bounds must have the operand's dtype (a Python float bound of an
        integer operand is JAX's TypeError, not a silent cast)."""
        if len({np.asarray(v).dtype for v in vals}) > 1:
            self.abstract_eval(*[ShapedArray(np.shape(v), np.asarray(v).dtype) for v in vals])

    def abstract_eval(self, lo, x, hi):
        for a in (lo, hi):
            if a.dtype != x.dtype:
                raise TypeError("lax.clamp requires arguments to have the same dtypes, got "
                                f"{lo.dtype.name}, {x.dtype.name}, {hi.dtype.name}.")
            if a.shape and a.shape != x.shape:
                raise TypeError(f"clamp requires min.shape == operand.shape or "
                                f"min.shape == (), got {a.shape}.")
        return ShapedArray(x.shape, x.dtype, self.out_weak((lo, x, hi), {}))

    def batch(self, size, args, dims):
        return _full_batch(self, size, args, dims, {}, (0, 2))

    def jvp(self, primals, tangents):
        from jaxlite._src.prims.elementwise import and_p, gt_p, lt_p
        lo, x, hi = primals
        tlo, tx, thi = tangents
        out = self.bind(lo, x, hi)
        shape = u.aval(x).shape
        t = None
        parts = [(tlo, lambda: gt_p.bind(lo, x)),
                 (tx, lambda: and_p.bind(gt_p.bind(x, lo), lt_p.bind(x, hi))),
                 (thi, lambda: lt_p.bind(hi, x))]
        for tt, cond in parts:
            if u.is_zero(tt):
                continue
            tt = u.bcast(tt, shape)
            b = u.select(u.bcast(cond(), shape), tt, u.zeros(u.aval(tt)))
            t = b if t is None else u.add_any(t, b)
        return out, t


clamp_p = Clamp()
clamp_p.weak_rule = lambda flags: flags[1]

def _full_batch(prim, size, args, dims, params, scalar_ok):
    """Batch ops whose operands must match exactly, except scalars at the positions
    ``scalar_ok`` (select_n's predicate, clamp's bounds): keep a shared batch dimension when
    possible, else move it to the front and broadcast."""
    from jaxlite._src.prims.shape import broadcast_in_dim_p
    shapes = [u.aval(a).shape for a in args]
    batched = {(sh, d) for sh, d in zip(shapes, dims) if d is not None}
    if len(batched) == 1 and all(not sh and i in scalar_ok
                                 for i, (sh, d) in enumerate(zip(shapes, dims)) if d is None):
        (sh, d0), = batched
        if all(d is not None or not s for s, d in zip(shapes, dims)) and \
                all(s == sh for s, d in zip(shapes, dims) if d is not None):
            return prim.bind(*args, **params), d0
    full = max((tuple(s[:d] + s[d + 1:]) if d is not None else tuple(s)
                for s, d in zip(shapes, dims)), key=len)
    new = []
    for i, (a, s, d) in enumerate(zip(args, shapes, dims)):
        if d is None and not s and i in scalar_ok:
            new.append(a)
            continue
        if d is None:   # (JAX's batching.broadcast: NumPy ints in the printed params)
            sh = tuple(u.aval(a).shape)
            x = broadcast_in_dim_p.bind(a, shape=(size,) + sh, broadcast_dimensions=tuple(
                np.arange(1, 1 + len(sh))), sharding=None)
        else:
            x = bdim_at_front(a, d, size)
        per = tuple(u.aval(x).shape[1:])
        if per != full:
            x = broadcast_in_dim_p.bind(
                x, shape=(size,) + full,
                broadcast_dimensions=(0,) + tuple(range(1 + len(full) - len(per),
                                                       1 + len(full))), sharding=None)
        new.append(x)
    return prim.bind(*new, **params), 0


class BitcastConvertType(Primitive):
    """Reinterpret the bits of each element as ``new_dtype``. A narrower type adds a trailing
    dimension (one entry per piece), a wider one consumes a trailing dimension of that size."""
    name = "bitcast_convert_type"

    def hlo(self, b, x, new_dtype):
        return b.op("bitcast-convert", b.out_avals[0], (x,))
    weak_rule = "never"
    jvp = NOT_DIFFERENTIABLE

    def sharding_rule(self, avals, new_dtype):
        """Leading dimensions keep their layout; a dimension added or consumed by a change
        of width is whole."""
        x = avals[0]
        old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
        if old >= new:
            return [tuple(range(x.ndim))]
        return [tuple(range(x.ndim - 1)) + (None,)]

    def impl(self, x, new_dtype):
        x = np.asarray(x)
        x = x if x.flags.c_contiguous else x.copy()
        old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
        if old == new:
            return x.view(new_dtype)
        if old > new:
            return x.reshape(x.shape + (1,)).view(new_dtype)
        return x.view(new_dtype).reshape(x.shape[:-1])

    def batch(self, size, args, dims, **params):
        d = dims[0]
        if d is not None and d == args[0].ndim - 1 and \
                np.dtype(params["new_dtype"]).itemsize > args[0].dtype.itemsize:
            from jaxlite._src.prims.batch_util import moveaxis
            args, d = [moveaxis(args[0], d, 0)], 0
        return self.bind(args[0], **params), d

    def abstract_eval(self, x, new_dtype):
        old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
        shape = tuple(x.shape)
        if old > new:
            shape = shape + (old // new,)
        elif old < new:
            if not shape or shape[-1] * old != new:
                n = shape[-1] if shape else 1
                raise ValueError(
                    f"Attempting to convert array of shape {shape} from {x.dtype.name} of "
                    f"size {old * 8} bits to {np.dtype(new_dtype).name} of size {new * 8}, "
                    f"bits but {n} * {old * 8} != {new * 8}")
            shape = shape[:-1]
        return ShapedArray(shape, np.dtype(new_dtype), False)


bitcast_convert_type_p = BitcastConvertType()

# Taylor mode (jax.experimental.jet): linear in the inexact operands
convert_element_type_p.jet, select_n_p.jet = (taylor.linear(convert_element_type_p),
                                              taylor.linear(select_n_p))
