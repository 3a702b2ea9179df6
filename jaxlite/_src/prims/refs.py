"""Mutable array references (JAX's ``jax.new_ref``): the eager ``Ref`` value and the
primitives that make and retire refs, ``new_ref``, ``empty_ref``, ``freeze`` and
``free_ref`` (reading and writing are the state primitives ``get``/``swap``/``addupdate``
of prims/state.py).

Representation: outside transformations a ``Ref`` owns a private, writable NumPy buffer.
While tracing, a ref is a tracer whose abstract value is an ``AbstractRef`` (printed
``Ref{f32[3]}``); a ``Ref`` a traced function closes over becomes a constant of the jaxpr and
a ``Ref`` passed to ``jit`` an input of type ``Ref{...}``. In compiled code (and whenever a
jaxpr runs) a ref is its NumPy buffer, updated in place, so writes inside ``jit`` are seen
by the caller's ``Ref`` as in JAX.

Differentiation follows JAX: the tangent of a ref is a ref (``new_ref`` makes one for its
tangent), reads and writes apply to both, and in the backward pass the cotangent of a ref
is a ref accumulating cotangents (``ad_util.RefAccum``); ``freeze``'s transpose writes into
it and ``new_ref``'s transpose reads it out.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray, aval_of_value, hitype_aval_mappings
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.core.trace import Tracer, ctx
from jaxlite._src.prims import state
from jaxlite._src.prims.ad_util import UndefinedPrimal, Zero, tangent_aval, zeros_like_aval
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Ref", "new_ref_p", "empty_ref_p", "freeze_p", "free_ref_p", "RefAccum"]


class _RefMeta(type):
    def __instancecheck__(cls, inst):
        return super().__instancecheck__(inst) or (
            isinstance(inst, Tracer) and type(inst.aval) is state.AbstractRef)


class Ref(metaclass=_RefMeta):
    """A mutable array reference (made by ``jax.new_ref``)."""
    __slots__ = ("_buf", "_aval", "_memory_space", "_freed", "__weakref__")
    _jaxlite_untraced = None    # (transformations trace refs)

    def __init__(self, *args, **kwargs):
        raise TypeError("create a Ref with jax.new_ref(init_value), not Ref(...)")

    @classmethod
    def _make(cls, buf, memory_space, weak_type=False):
        r = object.__new__(cls)
        r._buf, r._memory_space, r._freed = buf, memory_space, False
        r._aval = state.AbstractRef(ShapedArray(buf.shape, buf.dtype, weak_type),
                                    memory_space)
        return r

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)

    def _runtime_value(self):
        """The NumPy buffer standing for this ref where a program runs (compiled code,
        eager primitives): updated in place."""
        self._check_live("using a Ref")
        return self._buf

    def _check_live(self, what):
        if self._freed:
            raise RuntimeError(f"{what}: this Ref was freed (jax.free_ref) and can no "
                               "longer be used")

    def _index(self, idx, what):
        tree, ops = state.parse_indexer(idx, self.shape, what)
        ops = [np.asarray(o._value if isinstance(o, ArrayImpl) else o) for o in ops]
        if tree is not None:    # concrete integer indices past the end are errors, as in JAX
            it = iter(ops)
            for entry, n in zip(tree, self.shape):
                if entry[0] == "i" or entry[1] is None:
                    v = next(it)
                    if entry[0] == "i" and v.ndim == 0 and int(v) >= n:
                        raise ValueError(f"Out of bound indexer: idx={int(v)}, dim={n}.")
        return tree, ops

    def __getitem__(self, idx):
        if ctx.trace is not None:
            return state.ref_get(self, idx)
        self._check_live("reading a Ref")
        tree, ops = self._index(idx, "reading a Ref")
        return ArrayImpl(np.array(state.get_p.impl(self._buf, *ops, tree=tree)),
                         self._aval.inner_aval.weak_type)

    def _value_for(self, value, idx, what, prim):
        tree, ops = self._index(idx, what)
        v = state.implicit_cast(self.dtype, asarray_value(value))
        expect = tuple(state._indexed_shape(tree, self.shape, [aval_of_value(o) for o in ops]))
        # as JAX: the value must have the block's dtype and shape (no casts, no broadcasting)
        if v.dtype != self.dtype:
            raise ValueError(f"Invalid dtype for `{prim}`. Ref dtype: {self.dtype}. Value "
                             f"dtype: {v.dtype}. ({what}: cast the value with "
                             f".astype({self.dtype}))")
        if tuple(v.shape) != expect:
            raise ValueError(f"Invalid shape for `{prim}`. Ref shape: {self.shape}. Expected "
                             f"shape: {expect}. Value shape: {tuple(v.shape)}. ({what}: "
                             "broadcast the value to the block's shape)")
        return tree, ops, np.asarray(v._value if isinstance(v, ArrayImpl) else v)

    def __setitem__(self, idx, value):
        if ctx.trace is not None or isinstance(value, Tracer):
            return state.ref_set(self, idx, value)
        self._check_live("writing a Ref")
        tree, ops, v = self._value_for(value, idx, "writing a Ref", "swap")
        state.swap_p.impl(self._buf, v, *ops, tree=tree)

    def addupdate(self, x, idx=()):
        """``ref[idx] += x`` in place."""
        if ctx.trace is not None or isinstance(x, Tracer):
            return state.ref_addupdate(self, idx, x)
        self._check_live("accumulating into a Ref")
        tree, ops, v = self._value_for(x, idx, "accumulating into a Ref", "addupdate")
        state.addupdate_p.impl(self._buf, v, *ops, tree=tree)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        if self._freed:
            return f"Ref(<freed>, {self._aval})"
        return f"Ref({np.array2string(self._buf, separator=', ')}, dtype={self.dtype.name})"

    @property
    def at(self):
        raise NotImplementedError("Ref.at is not supported outside kernels (JAX does not "
                                  "implement it either); index the ref directly")


hitype_aval_mappings[Ref] = lambda r: r._aval


# ----------------------------------------------------------------------------- primitives

class NewRef(Primitive):
    """``new_ref``: a new ref holding a copy of its operand. The tangent of a new ref is a
    new ref of the operand's tangent (made in the linear part when linearizing: its
    hidden ``tangent`` parameter tells partial evaluation to stage it)."""
    name = "new_ref"
    effectful = True
    no_fold = True
    jvp_always = True
    batch_always = True
    hidden_params = ("tangent",)

    def eager(self, args, params):
        if params.get("memory_space") is not None:
            raise NotImplementedError("array ref with memory space only works inside of a "
                                      "`jit`.")
        (x,) = args
        if isinstance(x, Ref):
            raise TypeError("jax.new_ref: the initial value is already a Ref")
        aval = aval_of_value(x)
        if isinstance(aval.dtype, dtypes.ExtendedDType):
            raise NotImplementedError("jax.new_ref of PRNG key arrays is not supported by "
                                      "jaxlite")
        v = x._value if isinstance(x, ArrayImpl) else x
        return Ref._make(np.array(v, dtype=aval.dtype), None, aval.weak_type)

    def impl(self, x, *, memory_space=None, kind=None, tangent=False):
        return np.array(x)     # the ref's private buffer

    def abstract_eval(self, x, *, memory_space=None, kind=None, tangent=False):
        if type(x) is not ShapedArray:
            raise TypeError(f"jax.new_ref takes an array, got a value of type "
                            f"{x.str_short()}")
        return state.AbstractRef(x, memory_space, weak_type=x.weak_type)

    def stage_known(self, params):
        """Partial evaluation stages the tangent ref even when its operand is known."""
        return params.get("tangent", False)

    def jvp(self, primals, tangents, *, memory_space=None, kind=None, tangent=False):
        from jaxlite._src.prims.ad_util import instantiate
        (x,), (t,) = primals, tangents
        out = self.bind(x, memory_space=memory_space, kind=kind)
        t_ref = self.bind(instantiate(t), memory_space=memory_space, kind=kind, tangent=True)
        return out, t_ref

    def transpose(self, ct, x, **params):
        # ct: the RefAccum holding the cotangent of the ref's contents
        return [ct.freeze() if isinstance(x, UndefinedPrimal) else None]

    def batch(self, size, args, dims, **params):
        from jaxlite._src.prims.batch_util import broadcast_batch
        (x,), (d,) = args, dims
        if d is None:   # batched defensively: a batched value may be written into it later
            x, d = broadcast_batch(x, size, 0), 0
        return self.bind(x, **params), d


class EmptyRef(Primitive):
    """``empty_ref``: a new ref of type ``ty`` with unspecified contents (zeros here)."""
    name = "empty_ref"
    effectful = True
    no_fold = True
    jvp_always = True
    hidden_params = ("tangent",)

    def stage_known(self, params):
        """Partial evaluation stages the tangent ref (see ``NewRef``)."""
        return params.get("tangent", False)

    def jvp(self, primals, tangents, *, ty, memory_space=None, tangent=False):
        from jaxlite._src.prims.ad_util import tangent_aval
        out = self.bind(ty=ty, memory_space=memory_space)
        return out, self.bind(ty=tangent_aval(ty), memory_space=memory_space, tangent=True)

    def transpose(self, ct, **params):
        return []

    def eager(self, args, params):
        ty = params["ty"]
        if params.get("memory_space") is not None:
            raise NotImplementedError("array ref with memory space only works inside of a "
                                      "`jit`.")
        return Ref._make(np.zeros(ty.shape, ty.dtype), None)

    def impl(self, *, ty, memory_space=None, tangent=False):
        return np.zeros(ty.shape, ty.dtype)

    def abstract_eval(self, *, ty, memory_space=None, tangent=False):
        return state.AbstractRef(ty, memory_space)

    def batch(self, size, args, dims, **params):
        return self.bind(**params), None


class Freeze(Primitive):
    """``freeze``: the final contents of a ref, as an immutable array."""
    name = "freeze"
    effectful = True
    no_fold = True

    def _check_eager(self, vals, weak, params, out):
        """(The eager type check cannot see that a NumPy operand is a ref's buffer.)"""

    def eager(self, args, params):
        (r,) = args
        if isinstance(r, Ref):
            r._check_live("jax.freeze")
            return ArrayImpl(np.array(r._buf), r._aval.inner_aval.weak_type)
        return super().eager(args, params)

    def impl(self, ref):
        return np.array(ref)

    def abstract_eval(self, ref):
        state._check_ref("freeze", ref)
        return ref.inner_aval

    def jvp(self, primals, tangents):
        from jaxlite._src.prims.ad_util import Zero
        (r,), (t,) = primals, tangents
        out = self.bind(r)
        if type(t) is Zero:
            return out, Zero.like(out)
        return out, self.bind(t)

    def transpose(self, ct, ref):
        return [ct]     # accumulated into the ref's cotangent (a RefAccum)

    def batch(self, size, args, dims):
        return self.bind(args[0]), dims[0]


class FreeRef(Primitive):
    """``free_ref``: retire a ref (no outputs)."""
    name = "free_ref"
    effectful = True
    multiple_results = True
    no_fold = True

    def _check_eager(self, vals, weak, params, out):
        """(The eager type check cannot see that a NumPy operand is a ref's buffer.)"""

    def eager(self, args, params):
        (r,) = args
        if isinstance(r, Ref):
            r._check_live("jax.free_ref")
            r._freed, r._buf = True, None
        return []

    def impl(self, ref):
        return []

    def abstract_eval(self, ref):
        state._check_ref("free_ref", ref)
        return []

    def jvp(self, primals, tangents):
        from jaxlite._src.prims.ad_util import Zero
        self.bind(primals[0])
        if type(tangents[0]) is not Zero:
            self.bind(tangents[0])
        return [], []

    def transpose(self, cts, ref):
        return [None]

    def batch(self, size, args, dims):
        return self.bind(args[0]), []


new_ref_p = NewRef()
empty_ref_p = EmptyRef()
freeze_p = Freeze()
free_ref_p = FreeRef()


# ----------------------------------------------------------------------------- AD

class RefAccum(UndefinedPrimal):
    """The cotangent of a ref in the backward pass: a ref (made at the first cotangent that
    reaches it) into which the transposes of the reads, writes and ``freeze`` of the primal
    ref accumulate. Transpose rules receive it in place of the ref's ``UndefinedPrimal``
    (and ``new_ref``'s rule as its output's cotangent); ``aval`` is the ref's type."""
    __slots__ = ("ref",)

    def __init__(self, aval, ref=None):
        super().__init__(aval)
        self.ref = ref

    def __repr__(self):
        return f"RefAccum({self.aval})"

    def _ct_aval(self):
        return tangent_aval(self.aval.inner_aval)

    def accum(self, x):
        """Add the cotangent ``x`` of the ref's whole contents."""
        if x is None or type(x) is Zero:
            return
        if self.ref is None:
            self.ref = new_ref_p.bind(x, memory_space=None, kind=None)
        else:
            state.addupdate_p.bind(self.ref, x, tree=None)

    def inst(self):
        """This accumulator with its ref made (zeros) if no cotangent reached it yet."""
        if self.ref is None:
            self.ref = new_ref_p.bind(zeros_like_aval(self._ct_aval()), memory_space=None,
                                      kind=None)
        return self

    def freeze(self):
        """The accumulated cotangent (Zero when nothing reached it)."""
        if self.ref is None:
            return Zero(self._ct_aval())
        return freeze_p.bind(self.ref)
