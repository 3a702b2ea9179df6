"""Mutable array references: ``jax.new_ref``, ``jax.Ref``, ``jax.freeze``, ``jax.empty_ref``,
``jax.free_ref`` and ``jax.ref.get/set/swap/addupdate``.

A ``Ref`` owns a private, writable buffer. ``ref[idx]`` reads a copy of a block and
``ref[idx] = v`` / ``ref.addupdate(v, idx)`` write in place, with the indexing, clamping and
dtype rules of JAX's ref ``get``/``swap``/``addupdate``. As in JAX, refs work under
transformations: a ``Ref`` passed to or closed over by ``jit`` is updated in place by the
compiled program, refs can be made inside ``jit``/``grad``/``vmap``, read and written in
``lax.scan``/``fori_loop``/``while_loop``/``cond`` bodies, and differentiated (the tangent
of a ref is a ref). A traced function cannot return a ref, nor take one ref twice.
``jax.typeof(ref)`` is an ``AbstractRef`` (printed ``Ref{float32[3]}``), and
``isinstance(x, jax.Ref)`` also holds for a traced ref.
"""
from __future__ import annotations

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.trace import Tracer
from jaxlite._src.prims import state
from jaxlite._src.prims.refs import Ref, empty_ref_p, free_ref_p, freeze_p, new_ref_p

__all__ = ["Ref", "new_ref", "empty_ref", "free_ref", "freeze", "get", "set", "swap",
           "addupdate"]


def new_ref(init_val, *, memory_space=None, kind=None):
    """A new mutable array reference holding a copy of ``init_val`` (an array or scalar)."""
    if isinstance(init_val, Ref):
        raise TypeError("jax.new_ref: the initial value is already a Ref")
    return new_ref_p.bind(init_val, memory_space=memory_space, kind=kind)


def empty_ref(ty, memory_space=None):
    """A new reference of type ``ty`` (a ShapeDtypeStruct or aval); its contents are
    unspecified until written (jaxlite fills it with zeros)."""
    aval = ShapedArray(tuple(ty.shape), dtypes.canonicalize_dtype(ty.dtype))
    return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def free_ref(ref):
    """Invalidate ``ref``; returns ``()``."""
    _check_ref(ref, "jax.free_ref")
    free_ref_p.bind(ref)
    return ()


def freeze(ref):
    """The final value of ``ref`` as an (immutable) array. JAX invalidates the ref; outside
    transformations it stays readable in jaxlite, which returns a copy."""
    _check_ref(ref, "jax.freeze")
    return freeze_p.bind(ref)


def get(ref, idx=None):
    """``ref[idx]``: a copy of a block of ``ref``."""
    _check_ref(ref, "jax.ref.get")
    return ref[Ellipsis if idx is None else idx]


def swap(ref, idx, value, _function_name="ref_swap"):
    """Write ``value`` into ``ref[idx]`` and return the block's previous contents."""
    _check_ref(ref, "jax.ref.swap")
    if isinstance(ref, Ref) and not isinstance(value, Tracer):
        from jaxlite._src.core.trace import ctx
        if ctx.trace is None:
            old = ref[Ellipsis if idx is None else idx]
            ref[Ellipsis if idx is None else idx] = value
            return old
    return state.ref_swap(ref, idx, value)


def set(ref, idx, value):  # noqa: A001 (JAX's name)
    """``ref[idx] = value``."""
    _check_ref(ref, "jax.ref.set")
    ref[Ellipsis if idx is None else idx] = value


def addupdate(ref, idx, value):
    """``ref[idx] += value`` in place."""
    _check_ref(ref, "jax.ref.addupdate")
    if isinstance(ref, Ref):
        return ref.addupdate(value, () if idx is None else idx)
    state.ref_addupdate(ref, idx, value)


def _check_ref(ref, where):
    if not isinstance(ref, Ref):
        raise TypeError(f"{where} takes a Ref (made by jax.new_ref), got "
                        f"{type(ref).__name__}")
