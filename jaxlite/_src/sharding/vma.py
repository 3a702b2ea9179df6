"""Varying manual axes (JAX's ``vma``): inside ``shard_map`` with ``check_vma=True`` every
value's type records the mesh axes along which it may differ from device to device
(``jax.typeof(x)`` prints ``float32[2,4]{V:(x,y)}``).

An argument varies over the axes its ``in_spec`` splits it on; constants vary over none;
an operation's result varies over the union of its operands' axes (JAX inserts ``pvary``
there) unless its primitive says otherwise with a ``vma_rule`` method (``psum`` makes its
axes invariant, ``axis_index`` is varying over its axis, ...); calls and control flow take
their bodies' types. shard_map checks its outputs against ``out_specs`` with these types,
and loops check that carries keep theirs. Tracing calls ``out_vmas`` after a primitive's
``abstract_eval`` while ``checking`` is on.
"""
from __future__ import annotations

import contextlib
import threading

from jaxlite._src.core.avals import ShapedArray

__all__ = ["checking", "current", "ordered", "with_vma", "out_vmas", "axes_tuple",
           "vma_text"]


class _State(threading.local):
    def __init__(self):
        self.stack = []


_state = _State()


@contextlib.contextmanager
def checking(axis_names):
    """Type values with their varying manual axes while tracing inside (``axis_names``: the
    mesh's axes, in order; None turns the typing off, as ``check_vma=False`` does)."""
    _state.stack.append(None if axis_names is None else tuple(axis_names))
    try:
        yield
    finally:
        _state.stack.pop()


def current():
    """The mesh axis order of the enclosing ``checking`` context (None: not typing vma)."""
    s = _state.stack
    return s[-1] if s else None


def axes_tuple(axes):
    """An axis name or a tuple of them as a tuple."""
    return tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)


def ordered(axes, names=None):
    """``axes`` in mesh order."""
    names = names if names is not None else (current() or ())
    axes = set(axes)
    return tuple(a for a in names if a in axes) + tuple(sorted(a for a in axes
                                                               if a not in names))


def with_vma(aval, vma):
    """``aval`` varying over ``vma``."""
    vma = tuple(vma)
    if type(aval) is not ShapedArray or aval.vma == vma:
        return aval   # (refs and other abstract values carry no vma)
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type, sharding=aval.sharding, vma=vma)


def vma_text(vma):
    """How JAX shows a set of axes in its messages: ``{x}``, ``{x,y}``."""
    return "{" + ",".join(vma) + "}"


def _inner_out_avals(params, n):
    for v in params.values():
        v = v[0] if isinstance(v, tuple) and v else v
        if hasattr(v, "jaxpr") and hasattr(v, "out_avals"):
            outs = v.out_avals
            if len(outs) == n:
                return outs
    return None


def out_vmas(prim, avals, params, outs):
    """``outs`` (what ``abstract_eval`` gave) typed with the manual axes they vary over."""
    names = current()
    multi = prim.multiple_results
    out_list = list(outs) if multi else [outs]
    rule = getattr(prim, "vma_rule", None)
    if rule is not None:
        got = rule(avals, **params)
    else:
        inner = _inner_out_avals(params, len(out_list))
        if inner is not None:
            got = [getattr(a, "vma", ()) for a in inner]
        else:
            u = set()
            for a in avals:
                u.update(getattr(a, "vma", ()))
            if not u:
                return outs
            got = [u] * len(out_list)
    res = [with_vma(o, ordered(g, names)) for o, g in zip(out_list, got)]
    return res if multi else res[0]
