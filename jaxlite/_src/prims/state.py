"""Mutable references (refs) and the state primitives that read and write them.

A ref is a mutable buffer that a kernel (a Pallas kernel, ``run_scoped`` scratch) or a
program holding ``jax.new_ref`` refs (prims/refs.py) reads and writes in place. While tracing, a ref is a tracer whose abstract value is an ``AbstractRef``
(printed ``Ref<default>{f32[8]}``); NumPy indexing on it binds the state primitives, named and
printed as JAX names and prints them:

  ``get``        ``v:f32[4] <- r[1:3]``              read a block (a copy)
  ``swap``       ``old:f32[4], r[...] <- r[...], v``  write a block, returning the old contents
  ``addupdate``  ``r[0] += v``                        accumulate into a block

When a jaxpr holding them runs, a ref is a NumPy array, mutated in place. Indexers are static
parameters (``tree``): one entry per dimension of the ref, either a slice ``("s", start,
size, stride)`` whose start is an int or ``None`` (a traced start, the next operand), or an
integer index ``("i",)`` (a scalar or integer-array operand). Traced starts and indices are
clamped into range, as XLA's dynamic slices are. ``tree=None`` is the whole ref (``r[...]``).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import AbstractValue, ShapedArray, aval_method
from jaxlite._src.core.ir import DropVar
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.core.trace import Tracer
from jaxlite._src.tree_util import register_pytree_node

__all__ = ["AbstractRef", "Slice", "ds", "dslice", "get_p", "swap_p", "addupdate_p",
           "ref_get", "ref_set", "ref_swap", "ref_addupdate", "parse_indexer",
           "TransformedRef", "is_ref", "index_numpy", "pp_ref_index"]


class AbstractRef(AbstractValue):
    """The abstract value of a mutable reference to an array of ``inner_aval``'s type, in
    ``memory_space`` (a name printed in ``Ref<...>``: ``default``, ``vmem``, ``smem``...)."""
    __slots__ = ("inner_aval", "memory_space")
    is_ref = True

    def __init__(self, inner_aval, memory_space="default", weak_type=False):
        # (a ref made by jax.new_ref from a weakly typed value reads weakly typed values)
        self.inner_aval = ShapedArray(inner_aval.shape, inner_aval.dtype, weak_type)
        # None: a ref made by jax.new_ref (printed ``Ref{float32[3]}``, as JAX)
        self.memory_space = None if memory_space is None else str(memory_space)

    def update(self, shape=None, dtype=None, weak_type=None):
        """This ref type with another shape / dtype of its contents."""
        inner = self.inner_aval.update(shape=shape, dtype=dtype, weak_type=weak_type)
        return AbstractRef(inner, self.memory_space, inner.weak_type)

    def to_tangent_aval(self):
        return AbstractRef(self.inner_aval.to_tangent_aval(), self.memory_space)

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: self.inner_aval.size)
    weak_type = False
    sharding = None
    vma = ()

    def str_short(self, short_dtypes=True):
        ms = "" if self.memory_space is None else f"<{self.memory_space}>"
        return f"Ref{ms}{{{self.inner_aval.str_short(short_dtypes)}}}"

    def __str__(self):
        return self.str_short(self.memory_space is not None)

    def strip_weak_type(self):
        return self

    # (tracers of refs: ``r.addupdate(x, idx)`` as on a jax.Ref)
    addupdate = aval_method(lambda self, x, idx=(): ref_addupdate(self, idx, x))

    def __eq__(self, other):
        return (type(other) is AbstractRef and self.inner_aval == other.inner_aval
                and self.memory_space == other.memory_space)

    def __hash__(self):
        return hash((self.inner_aval, self.memory_space))

    def __repr__(self):
        return f"AbstractRef({self.str_short(False)})"


def is_ref(x) -> bool:
    """Whether ``x`` is a ref (an eager ``Ref``, a tracer of an AbstractRef) or a view of
    one."""
    return isinstance(x, TransformedRef) or type(getattr(x, "aval", None)) is AbstractRef


class Slice:
    """``start:start+size:stride`` where ``start`` may be traced (``pl.ds``)."""
    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride=1):
        if not isinstance(stride, (int, np.integer)) or stride < 1:
            raise ValueError(f"pl.ds stride must be a static int >= 1, got {stride!r}")
        self.start, self.size, self.stride = start, size, int(stride)

    def __repr__(self):
        return f"Slice(start={self.start}, size={self.size}, stride={self.stride})"


def dslice(start, size=None, stride=None):
    """A slice with a (possibly traced) start and a static size: ``ds(i, n)`` is
    ``i:i+n``, ``ds(n)`` is ``:n``, ``ds(None)`` is ``:``."""
    if start is None:
        return slice(None)
    if size is None:
        start, size = 0, start
    return Slice(start, size, 1 if stride is None else stride)


ds = dslice


def _static_int(x):
    """A Python int for a concrete integer value, else None (a traced value)."""
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    return None


def _size_int(x, where):
    v = _static_int(x)
    if v is None:
        if isinstance(x, Tracer):
            raise ValueError(f"{where}: a slice size must be static (a Python int), got a "
                             "traced value. Use a fixed block size and a mask "
                             "(pl.load(..., mask=...)) for ragged edges.")
        try:
            v = int(np.asarray(x))
        except Exception:
            raise TypeError(f"{where}: slice size {x!r} is not an int") from None
    if v < 0:
        raise ValueError(f"{where}: slice size must be >= 0, got {v}")
    return v


def parse_indexer(idx, shape, where="ref indexing"):
    """NumPy-style ``idx`` on an array of ``shape`` -> (tree, dynamic operands).

    ``tree`` is None for the whole ref (``...`` or ``()``), else one entry per dimension."""
    if idx is None or idx is Ellipsis or (type(idx) is tuple and not idx):
        return None, []
    if type(idx) is not tuple:
        idx = (idx,)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError(f"{where}: an index can only have a single ellipsis ('...')")
    if n_ell:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - len(idx) + 1) + idx[k + 1:]
    if len(idx) > len(shape):
        raise IndexError(f"{where}: too many indices for a ref of shape {shape}: got "
                         f"{len(idx)} indices")
    idx = tuple(idx) + (slice(None),) * (len(shape) - len(idx))
    tree, ops = [], []
    for d, (i, n) in enumerate(zip(idx, shape)):
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step < 1:
                raise ValueError(f"{where}: slices must have a step >= 1, got {step}")
            size = max(0, -(-(stop - start) // step))
            tree.append(("s", start, size, step))
        elif isinstance(i, Slice):
            size = _size_int(i.size, where)
            if size > n:
                raise ValueError(f"{where}: pl.ds size {size} is larger than dimension {d} "
                                 f"of the ref (shape {shape})")
            st = _static_int(i.start)
            if st is not None:
                if st < 0 or st + (size - 1) * i.stride >= n + (size == 0):
                    raise ValueError(f"{where}: out of bound slice: start={st}, "
                                     f"size={size}, stride={i.stride}, dim={n} (dimension "
                                     f"{d}). Use a start in range({n - size + 1}).")
                tree.append(("s", st, size, i.stride))
            else:
                tree.append(("s", None, size, i.stride))
                ops.append(_index_operand(i.start, where))
        elif i is None:
            raise IndexError(f"{where}: None (np.newaxis) cannot index a ref; reshape the "
                             "value read from it instead")
        else:
            st = _static_int(i)
            if st is not None and st < 0:   # counts from the end; out of range clamps (JAX)
                i = st + n
            tree.append(("i",))
            ops.append(_index_operand(i, where))
    return tuple(tree), ops


def _index_operand(x, where):
    from jaxlite._src.prims.operands import asarray_value
    v = asarray_value(x)
    dt = v.dtype
    if not (dtypes.issubdtype(dt, np.integer)):
        raise TypeError(f"{where}: indices must be integers, got {np.dtype(dt).name}")
    return v


def _indexed_shape(tree, shape, op_avals):
    """The shape ``tree`` selects from ``shape`` (NumPy's rule for integer indices)."""
    if tree is None:
        return tuple(shape)
    ops = iter(op_avals)
    parts, int_shapes, int_pos = [], [], []
    for k, e in enumerate(tree):
        if e[0] == "s":
            if e[1] is None:
                a = next(ops)
                if a.shape:
                    raise TypeError(f"pl.ds start must be a scalar, got {a.str_short()}")
            parts.append(e[2])
        else:
            a = next(ops)
            int_shapes.append(a.shape)
            int_pos.append(k)
            parts.append(None)
    if not int_shapes:
        return tuple(parts)
    ishape = np.broadcast_shapes(*int_shapes)
    contiguous = int_pos == list(range(int_pos[0], int_pos[0] + len(int_pos)))
    slices = [p for p in parts if p is not None]
    if not contiguous:
        return tuple(ishape) + tuple(slices)
    first = sum(1 for p in parts[:int_pos[0]] if p is not None)
    return tuple(slices[:first]) + tuple(ishape) + tuple(slices[first:])


def index_numpy(ref, tree, ops):
    """The NumPy index tuple of ``tree`` on array ``ref`` with dynamic operand values."""
    if tree is None:
        return Ellipsis
    it = iter(ops)
    out = []
    for n, e in zip(ref.shape, tree):
        if e[0] == "s":
            _, start, size, stride = e
            if start is None:
                hi = n - ((size - 1) * stride + 1) if size else n
                start = min(max(int(next(it)), 0), max(hi, 0))
            out.append(slice(start, start + (size - 1) * stride + 1 if size else start,
                             stride))
        else:
            v = next(it)
            if np.ndim(v) == 0:
                out.append(min(max(int(v), 0), n - 1))
            else:
                out.append(np.clip(np.asarray(v), 0, n - 1))
    return tuple(out)


# ----------------------------------------------------------------------------- lowering

def _lower_index(ctx, tree, shape, ins):
    """Python source of the index expression (static parts inline, traced ones clamped)."""
    if tree is None:
        return "..."
    it = iter(ins)
    parts = []
    for n, e in zip(shape, tree):
        if e[0] == "s":
            _, start, size, stride = e
            st = "" if stride == 1 else f":{stride}"
            if start is not None:
                parts.append(f"{start}:{start + (size - 1) * stride + 1 if size else start}{st}")
            else:
                hi = max(n - ((size - 1) * stride + 1), 0) if size else n
                s = f"min(max(int({next(it)}), 0), {hi})"
                w = (size - 1) * stride + 1 if size else 0
                parts.append(f"{s}:{s}+{w}{st}")
        else:
            v = next(it)
            clip = ctx.bind_global(_clip_index, "clip")
            parts.append(f"{clip}({v}, {n - 1})")
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def _clip_index(v, hi):
    if np.ndim(v) == 0:
        return min(max(int(v), 0), hi)
    return np.clip(v, 0, hi)


def _as_value(v):
    """A read block as a value later writes cannot change: a (C-contiguous) copy, unless
    the ref is read-only (a kernel input nothing writes) and the block C-contiguous, when
    it is a view. Strided blocks are copied: BLAS and ufuncs run far faster on the copy."""
    if type(v) is np.ndarray and not v.flags.writeable and v.flags.c_contiguous:
        return v
    return np.array(v)


# ----------------------------------------------------------------------------- printing

def pp_ref_index(tree, shape, names):
    """JAX's text for an indexed ref: ``[...]``, ``[:,:2]``, ``[d:d+2]``, ``[1,:]``."""
    if tree is None:
        return "[...]"
    it = iter(names)
    parts = []
    for n, e in zip(shape, tree):
        if e[0] == "s":
            _, start, size, _stride = e
            if start is None:
                s = next(it)
                parts.append(f"{s}:{s}+{size}")
            else:
                end = start + size
                parts.append(f"{'' if start == 0 else start}:{'' if end == n else end}")
        else:
            parts.append(next(it))
    return "[" + ",".join(parts) + "]"


def _check_ref(name, ref_aval):
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`{name}` must be called on a Ref, got {ref_aval.str_short()}")


class _StateBase(Primitive):
    """Shared parts of get/swap/addupdate: the indexed shape and JAX's printing. Reads are
    never merged by the compiler (a write may come between two reads of a ref)."""
    hidden_params = ("tree",)
    no_cse = True
    no_fold = True      # (a constant ref's contents change when the program runs)

    def _check_eager(self, vals, weak, params, out):
        """(The eager type check cannot see that a NumPy operand is a ref's buffer.)"""

    def _block_aval(self, ref_aval, idx_avals, tree):
        _check_ref(self.name, ref_aval)
        shape = _indexed_shape(tree, ref_aval.shape, idx_avals)
        return ShapedArray(shape, ref_aval.dtype, ref_aval.inner_aval.weak_type)

    def _check_value(self, ref_aval, val_aval, expect):
        if tuple(val_aval.shape) != tuple(expect.shape):
            raise ValueError(f"Invalid shape for `{self.name}`. Ref shape: {ref_aval.shape}. "
                             f"Expected shape: {expect.shape}. Value shape: {val_aval.shape}.")
        if val_aval.dtype != expect.dtype:
            raise ValueError(f"Invalid dtype for `{self.name}`. Ref dtype: {expect.dtype}. "
                             f"Value dtype: {val_aval.dtype}.")

    def batch(self, size, args, dims, *, tree):
        ref, rest = args[0], list(args[1:])
        rd, rest_dims = dims[0], list(dims[1:])
        nval = 0 if self is get_p else 1
        val, vd = (rest[0], rest_dims[0]) if nval else (None, None)
        idx, idims = rest[nval:], rest_dims[nval:]
        if rd is None and (vd is not None or any(d is not None for d in idims)) and nval:
            op = "set/swap" if self is swap_p else "addupdate"
            raise Exception(f"performing a{'n' if op[0] == 'a' else ''} {op} operation with "
                            f"vmapped value on an unbatched array reference of type "
                            f"{_aval(ref).str_short(False)}. Move the array reference to be "
                            "an argument to the vmapped function?")
        shape = _aval(ref).shape
        if rd is not None:
            shape = shape[:rd] + shape[rd + 1:]
        from jaxlite._src.prims.state_batch import batch_indexer
        new_tree, new_idx, out_dim = batch_indexer(size, rd, tree, idx, idims, shape,
                                                   self.name)
        if not nval:
            return self.bind(ref, *new_idx, tree=new_tree), out_dim
        from jaxlite._src.prims.batch_util import broadcast_batch, moveaxis
        val = broadcast_batch(val, size, out_dim) if vd is None else \
            moveaxis(val, vd, out_dim)
        out = self.bind(ref, val, *new_idx, tree=new_tree)
        return (out, out_dim) if self is swap_p else (out, [])


class Get(_StateBase):
    """``ref[idx]``: a copy of the indexed block."""
    name = "get"

    def impl(self, ref, *idx, tree):
        return _as_value(ref[index_numpy(ref, tree, idx)])

    def abstract_eval(self, ref, *idx, tree):
        return self._block_aval(ref, idx, tree)

    def lower_stmts(self, ctx, ins, outs, eqn):
        ref, *idx = ins
        shape = eqn.invars[0].aval.shape
        val = ctx.bind_global(_as_value, "value")
        return [f"{outs[0]} = {val}({ref}[{_lower_index(ctx, eqn.params['tree'], shape, idx)}])"]

    def pp_eqn(self, eqn, ctx, pp_var):
        ref, *idx = eqn.invars
        return (f"{pp_var(eqn.outvars[0], True)} <- {pp_var(ref)}"
                f"{pp_ref_index(eqn.params['tree'], ref.aval.shape, [pp_var(a) for a in idx])}")

    def jvp(self, primals, tangents, tree):
        ref, *idx = primals
        out = self.bind(*primals, tree=tree)
        if _is_zero(tangents[0]):
            return out, _zero_like(out)
        return out, self.bind(tangents[0], *idx, tree=tree)

    def transpose(self, ct, ref, *idx, tree):
        # ref: the RefAccum of the ref's cotangent; a read's cotangent adds into it
        if not _is_zero(ct):
            if tree is None:
                ref.accum(ct)
            else:
                addupdate_p.bind(ref.inst().ref, ct, *idx, tree=tree)
        return [None] * (1 + len(idx))


class Swap(_StateBase):
    """``old = ref[idx]; ref[idx] = val``: returns the old block."""
    name = "swap"
    effectful = True
    ref_effect = True   # a write to a ref: visible only to the ref's owner

    def impl(self, ref, val, *idx, tree):
        ix = index_numpy(ref, tree, idx)
        old = _as_value(ref[ix])
        ref[ix] = val
        return old

    def abstract_eval(self, ref, val, *idx, tree):
        out = self._block_aval(ref, idx, tree)
        self._check_value(ref, val, out)
        return out

    def lower_stmts(self, ctx, ins, outs, eqn):
        ref, val, *idx = ins
        ix = _lower_index(ctx, eqn.params["tree"], eqn.invars[0].aval.shape, idx)
        if isinstance(eqn.outvars[0], DropVar):   # the old value is never read
            return [f"{ref}[{ix}] = {val}"]
        return [f"{outs[0]} = np.array({ref}[{ix}])", f"{ref}[{ix}] = {val}"]

    def pp_eqn(self, eqn, ctx, pp_var):
        ref, val, *idx = eqn.invars
        r = pp_var(ref) + pp_ref_index(eqn.params["tree"], ref.aval.shape,
                                       [pp_var(a) for a in idx])
        old = pp_var(eqn.outvars[0], True)
        if old.startswith("_:"):    # the old value is never read (JAX's ``ref_set`` text)
            return f"{r} <- {pp_var(val, literal_dtype=True)}"
        return f"{old}, {r} <- {r}, {pp_var(val, literal_dtype=True)}"

    def jvp(self, primals, tangents, tree):
        ref, val, *idx = primals
        out = self.bind(*primals, tree=tree)
        if _is_zero(tangents[0]):
            if not _is_zero(tangents[1]):
                raise Exception(
                    "performing a set/swap operation with a differentiated value on a "
                    f"non-differentiated array reference of type {_aval(ref).str_short(False)}"
                    ". Move the array reference to be an argument of the differentiated "
                    "function?")
            return out, _zero_like(out)
        return out, self.bind(tangents[0], _instantiate(tangents[1]), *idx, tree=tree)

    def transpose(self, ct, ref, val, *idx, tree):
        # ref: the RefAccum of the ref's cotangent; the cotangent of the old block goes in,
        # the block's cotangent comes out as the written value's
        n = 2 + len(idx)
        if getattr(ref, "ref", None) is None and _is_zero(ct):
            return [None] * n
        cref = ref.inst().ref
        x_bar = self.bind(cref, _instantiate(ct), *idx, tree=tree)
        return [None, x_bar] + [None] * len(idx)


class AddUpdate(_StateBase):
    """``ref[idx] += val``."""
    name = "addupdate"
    effectful = True
    ref_effect = True   # a write to a ref: visible only to the ref's owner
    multiple_results = True

    def impl(self, ref, val, *idx, tree):
        ix = index_numpy(ref, tree, idx)
        ref[ix] += val
        return []

    def abstract_eval(self, ref, val, *idx, tree):
        self._check_value(ref, val, self._block_aval(ref, idx, tree))
        return []

    def lower_stmts(self, ctx, ins, outs, eqn):
        ref, val, *idx = ins
        ix = _lower_index(ctx, eqn.params["tree"], eqn.invars[0].aval.shape, idx)
        return [f"{ref}[{ix}] += {val}"]

    def pp_eqn(self, eqn, ctx, pp_var):
        ref, val, *idx = eqn.invars
        r = pp_var(ref) + pp_ref_index(eqn.params["tree"], ref.aval.shape,
                                       [pp_var(a) for a in idx])
        return f"{r} += {pp_var(val, literal_dtype=True)}"

    def jvp(self, primals, tangents, tree):
        ref, val, *idx = primals
        self.bind(*primals, tree=tree)
        if not _is_zero(tangents[1]):
            if _is_zero(tangents[0]):
                raise Exception(
                    "performing an addupdate operation with a differentiated value on a "
                    f"non-differentiated array reference of type {_aval(ref).str_short(False)}"
                    ". Move the array reference to be an argument of the differentiated "
                    "function?")
            self.bind(tangents[0], tangents[1], *idx, tree=tree)
        return [], []

    def transpose(self, cts, ref, val, *idx, tree):
        # the added value's cotangent is the block's cotangent
        from jaxlite._src.prims.ad_util import UndefinedPrimal
        x_bar = None
        if getattr(ref, "ref", None) is not None and isinstance(val, UndefinedPrimal):
            x_bar = get_p.bind(ref.ref, *idx, tree=tree)
        return [None, x_bar] + [None] * len(idx)


def _is_zero(t):
    from jaxlite._src.prims.ad_util import Zero
    return type(t) is Zero


def _zero_like(x):
    from jaxlite._src.prims.ad_util import Zero
    return Zero.like(x)


def _instantiate(t):
    from jaxlite._src.prims.ad_util import instantiate
    return instantiate(t)


get_p = Get()
swap_p = Swap()
addupdate_p = AddUpdate()


# ----------------------------------------------------------------------------- views

class TransformedRef:
    """A view of a ref (``ref.at[idx]``): reading or writing the view indexes the
    underlying ref through ``idx`` composed with the view's own indexer. A pytree (the ref
    and the traced indices are its leaves), so views pass through control flow."""
    __slots__ = ("ref", "tree", "ops", "shape")

    def __init__(self, ref, tree, ops, shape):
        self.ref, self.tree, self.ops, self.shape = ref, tree, list(ops), tuple(shape)

    dtype = property(lambda self: self.ref.dtype)
    ndim = property(lambda self: len(self.shape))

    @property
    def at(self):
        return _RefAt(self)

    def __getitem__(self, idx):
        return ref_get(self, idx)

    def __setitem__(self, idx, value):
        ref_set(self, idx, value)

    def __repr__(self):
        return f"TransformedRef(shape={self.shape}, ref={self.ref!r})"


def _flatten_view(v):
    return [v.ref, *v.ops], (v.tree, v.shape)


def _unflatten_view(aux, children):
    return TransformedRef(children[0], aux[0], children[1:], aux[1])


register_pytree_node(TransformedRef, _flatten_view, _unflatten_view)


class _RefAt:
    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def __getitem__(self, idx):
        base, tree, ops = _resolve(self.ref, idx, "ref.at[...]")
        shape = _indexed_shape(tree, base.aval.shape, [_aval(o) for o in ops])
        return TransformedRef(base, tree, ops, shape)


def ref_at(ref):
    """``ref.at[idx]``: a view of ``ref`` (for pl.load/pl.store and atomics)."""
    return _RefAt(ref)


def _aval(x):
    from jaxlite._src.core.avals import aval_of_value
    return aval_of_value(x)


def _idx32(x):
    from jaxlite._src.prims.operands import asarray_value
    from jaxlite._src.prims.conversion import convert_element_type_p
    v = asarray_value(x)
    if v.dtype != np.int32:
        v = convert_element_type_p.bind(v, new_dtype=np.dtype(np.int32), weak_type=False,
                                        sharding=None)
    return v


def _resolve(ref, idx, where):
    if isinstance(ref, TransformedRef):
        tree, ops = _compose_view(ref, idx, where)
        return ref.ref, tree, ops
    if not is_ref(ref):
        raise TypeError(f"{where}: expected a Ref (a kernel argument, scratch or "
                        f"run_scoped buffer), got {type(ref).__name__}")
    tree, ops = parse_indexer(idx, ref.aval.shape, where)
    return ref, tree, ops


def _compose_view(view, idx, where):
    inner_tree, inner_ops = parse_indexer(idx, view.shape, where)
    if inner_tree is None:
        return view.tree, list(view.ops)
    base_shape = view.ref.aval.shape
    outer = view.tree if view.tree is not None else tuple(("s", 0, n, 1) for n in base_shape)
    from jaxlite._src.prims.elementwise import add_p, mul_p
    o_ops, i_ops, i_tree = iter(view.ops), iter(inner_ops), iter(inner_tree)
    tree, ops = [], []
    for e in outer:
        if e[0] == "i":
            tree.append(e)
            ops.append(next(o_ops))
            continue
        _, ostart, _osize, ostride = e
        ostart_v = next(o_ops) if ostart is None else ostart
        ie = next(i_tree)
        if ie[0] == "s":
            _, istart, isize, istride = ie
            istart_v = next(i_ops) if istart is None else istart
            if isinstance(ostart_v, int) and isinstance(istart_v, int):
                tree.append(("s", ostart_v + istart_v * ostride, isize, ostride * istride))
                continue
            off = istart_v if ostride == 1 else mul_p.bind(_idx32(istart_v), _idx32(ostride))
            tree.append(("s", None, isize, ostride * istride))
            ops.append(add_p.bind(_idx32(ostart_v), _idx32(off)))
        else:
            iv = next(i_ops)
            tree.append(("i",))
            if isinstance(ostart_v, int) and ostart_v == 0 and ostride == 1:
                ops.append(iv)
                continue
            scaled = iv if ostride == 1 else mul_p.bind(_idx32(iv), _idx32(ostride))
            ops.append(add_p.bind(_idx32(ostart_v), _idx32(scaled)))
    return tuple(tree), ops


# ----------------------------------------------------------------------------- functions

def ref_get(ref, idx=None):
    """``ref[idx]``: read a block of a ref (binds ``get``)."""
    base, tree, ops = _resolve(ref, idx, "reading a Ref")
    return get_p.bind(base, *ops, tree=tree)


def ref_swap(ref, idx, value, _where="writing a Ref"):
    """``old = ref[idx]; ref[idx] = value``; returns ``old`` (binds ``swap``)."""
    base, tree, ops = _resolve(ref, idx, _where)
    val = _cast_value(value, base, tree, ops, _where)
    return swap_p.bind(base, val, *ops, tree=tree)


def ref_set(ref, idx, value):
    """``ref[idx] = value`` (a ``swap`` whose result is unused)."""
    ref_swap(ref, idx, value, "writing a Ref")


def ref_addupdate(ref, idx, value):
    """``ref[idx] += value`` in place (binds ``addupdate``)."""
    base, tree, ops = _resolve(ref, idx, "accumulating into a Ref")
    val = _cast_value(value, base, tree, ops, "accumulating into a Ref")
    addupdate_p.bind(base, val, *ops, tree=tree)


def _cast_value(value, base, tree, ops, where):
    """``value`` as an array of the ref's dtype and the indexed block's shape: Python
    scalars take the ref's dtype, other dtypes must match, as JAX requires."""
    from jaxlite._src.prims.operands import asarray_value
    from jaxlite._src.prims.conversion import convert_element_type_p
    from jaxlite._src.prims.shape import broadcast_in_dim_p
    v = asarray_value(value)
    dt = base.aval.dtype
    if base.aval.memory_space is None:
        # a jax.new_ref ref: JAX's rules (weak Python scalars of the same kind are cast; no
        # other casts, no broadcasting: the primitive's type rule raises JAX's errors)
        return implicit_cast(dt, v)
    if v.dtype != dt:
        if not getattr(v, "weak_type", False):
            raise ValueError(f"{where}: the value has dtype {np.dtype(v.dtype).name} but the "
                             f"Ref holds {np.dtype(dt).name}; cast it with .astype("
                             f"{np.dtype(dt).name}) first.")
        v = convert_element_type_p.bind(v, new_dtype=np.dtype(dt), weak_type=False,
                                        sharding=None)
    shape = _indexed_shape(tree, base.aval.shape, [_aval(o) for o in ops])
    if tuple(v.shape) != tuple(shape) and v.shape == ():
        v = broadcast_in_dim_p.bind(v, shape=tuple(shape), broadcast_dimensions=(),
                                    sharding=None)
    return v


def implicit_cast(dtype, v):
    """JAX's implicit cast of a value written into a ref of ``dtype``: a weakly typed float
    into a float ref, an integer into an integer ref; anything else is left as it is."""
    from jaxlite._src.prims.conversion import convert_element_type_p
    vd = v.dtype
    if isinstance(vd, dtypes.ExtendedDType) or isinstance(dtype, dtypes.ExtendedDType):
        return v
    weak = getattr(v, "weak_type", False)
    if (weak and dtypes.issubdtype(dtype, np.floating) and dtypes.issubdtype(vd, np.floating)) \
            or (dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(vd, np.integer)):
        if vd != dtype or weak:     # (a weak value of the ref's dtype is made strong)
            return convert_element_type_p.bind(v, new_dtype=np.dtype(dtype),
                                               weak_type=False, sharding=None)
    return v
