"""Mutable array references outside transformations: ``jax.new_ref``, ``jax.Ref``,
``jax.freeze``, ``jax.empty_ref``, ``jax.free_ref``.

A ``Ref`` owns a private, writable NumPy buffer. ``ref[idx]`` reads a copy of a block and
``ref[idx] = v`` / ``ref.addupdate(v, idx)`` write in place, with the indexing, clamping and
dtype rules of JAX's ref ``get``/``swap``/``addupdate`` (jaxlite's state primitives run on
the buffer). ``jax.typeof(ref)`` is an ``AbstractRef`` (printed ``Ref{float32[3]}``), and
``isinstance(x, jax.Ref)`` also holds for a traced ref (a Pallas kernel's operand).

What jaxlite does not support yet: refs under transformations. A ``Ref`` passed to (or
returned from) jit, grad, vmap..., or read or written while one of them traces, raises
NotImplementedError / TypeError saying so (JAX threads refs through jaxprs as mutable
inputs; jaxlite does not).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray, aval_of_value, hitype_aval_mappings
from jaxlite._src.core.trace import Tracer, ctx
from jaxlite._src.prims import state
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Ref", "new_ref", "empty_ref", "free_ref", "freeze"]

_UNTRACED = ("jaxlite supports mutable array references (jax.new_ref) only outside "
             "transformations yet")


class _RefMeta(type):
    def __instancecheck__(cls, inst):
        return super().__instancecheck__(inst) or (
            isinstance(inst, Tracer) and type(inst.aval) is state.AbstractRef)


class Ref(metaclass=_RefMeta):
    """A mutable array reference (made by ``jax.new_ref``)."""
    __slots__ = ("_buf", "_aval", "_memory_space", "_freed")
    _jaxlite_untraced = _UNTRACED

    def __init__(self, *args, **kwargs):
        raise TypeError("create a Ref with jax.new_ref(init_value), not Ref(...)")

    @classmethod
    def _make(cls, buf, memory_space):
        r = object.__new__(cls)
        r._buf, r._memory_space, r._freed = buf, memory_space, False
        r._aval = state.AbstractRef(ShapedArray(buf.shape, buf.dtype), memory_space)
        return r

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)

    def _live(self, what):
        if self._freed:
            raise RuntimeError(f"{what}: this Ref was frozen or freed (jax.freeze / "
                               "jax.free_ref) and can no longer be used")
        if ctx.trace is not None:
            raise NotImplementedError(f"{what} while a transformation (jit, grad, vmap...) "
                                      f"traces: {_UNTRACED}. Read the ref outside and pass "
                                      "the value in, or return the new value and write it "
                                      "back outside.")

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
        self._live("reading a Ref")
        tree, ops = self._index(idx, "reading a Ref")
        return ArrayImpl(np.array(state.get_p.impl(self._buf, *ops, tree=tree)), False)

    def _value_for(self, value, idx, what, prim):
        tree, ops = self._index(idx, what)
        v = asarray_value(value)
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
        self._live("writing a Ref")
        tree, ops, v = self._value_for(value, idx, "writing a Ref", "swap")
        state.swap_p.impl(self._buf, v, *ops, tree=tree)

    def addupdate(self, x, idx=()):
        """``ref[idx] += x`` in place."""
        self._live("accumulating into a Ref")
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




def new_ref(init_val, *, memory_space=None, kind=None):
    """A new mutable array reference holding a copy of ``init_val`` (an array or scalar).
    Outside transformations only (see the module docstring)."""
    if ctx.trace is not None or isinstance(init_val, Tracer):
        raise NotImplementedError(f"jax.new_ref under a transformation: {_UNTRACED}.")
    if isinstance(init_val, Ref):
        raise TypeError("jax.new_ref: the initial value is already a Ref")
    aval = aval_of_value(init_val)
    if isinstance(aval.dtype, dtypes.ExtendedDType):
        raise NotImplementedError("jax.new_ref of PRNG key arrays is not supported by jaxlite")
    v = init_val._value if isinstance(init_val, ArrayImpl) else init_val
    buf = np.array(v, dtype=aval.dtype)     # a private, writable copy
    return Ref._make(buf, memory_space)


def empty_ref(ty, memory_space=None):
    """A new reference of type ``ty`` (a ShapeDtypeStruct or aval); its contents are
    unspecified until written (jaxlite fills it with zeros)."""
    if ctx.trace is not None:
        raise NotImplementedError(f"jax.empty_ref under a transformation: {_UNTRACED}.")
    return Ref._make(np.zeros(tuple(ty.shape), dtypes.canonicalize_dtype(ty.dtype)),
                     memory_space)


def free_ref(ref):
    """Invalidate ``ref``; returns ``()``."""
    _check_ref(ref, "jax.free_ref")
    ref._live("jax.free_ref")
    ref._freed, ref._buf = True, None
    return ()


def freeze(ref):
    """The final value of ``ref`` as an (immutable) array. JAX invalidates the ref; outside
    transformations it stays readable there, so jaxlite returns a copy and keeps it usable."""
    _check_ref(ref, "jax.freeze")
    ref._live("jax.freeze")
    out = np.array(ref._buf)
    out.flags.writeable = False
    return ArrayImpl(out, False)


def _check_ref(ref, where):
    if isinstance(ref, Tracer):
        raise NotImplementedError(f"{where} under a transformation: {_UNTRACED}.")
    if not isinstance(ref, Ref):
        raise TypeError(f"{where} takes a Ref (made by jax.new_ref), got "
                        f"{type(ref).__name__}")
