"""The functions a Pallas kernel calls: grid queries, masked loads and stores, atomics,
conditionals, scoped scratch buffers and compiler hints."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.pallas import primitives as P
from jaxlite._src.prims import state
from jaxlite._src.prims.operands import asarray_value

__all__ = ["program_id", "num_programs", "when", "load", "store", "swap", "atomic_rmw",
           "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg", "atomic_cas", "multiple_of", "max_contiguous", "run_scoped",
           "debug_print", "loop", "with_scoped", "reciprocal", "broadcast_to", "empty",
           "empty_like", "sync_copy", "make_async_copy", "async_copy", "AsyncCopyDescriptor"]


def program_id(axis: int):
    """The index of the running kernel instance along grid axis ``axis`` (int32)."""
    return P.program_id_p.bind(axis=int(axis))


def num_programs(axis: int):
    """The size of the grid along ``axis`` (int32). While a kernel of a static grid is
    traced it is that constant, as in JAX."""
    grid = P.grid_env.tracing
    if grid is not None:
        P.num_programs_p.check_axis(int(axis))
        from jaxlite._src.runtime.array import ArrayImpl
        return ArrayImpl(np.asarray(grid[int(axis)], np.int32), False)
    return P.num_programs_p.bind(axis=int(axis))


def when(condition):
    """Decorator: run the decorated function (no arguments, no results) only when
    ``condition`` holds; a traced condition becomes a ``lax.cond``."""
    def wrapped(f):
        if isinstance(condition, (bool, np.bool_)):
            if condition:
                f()
        else:
            from jaxlite._src.lax.control_flow import cond
            cond(condition, f, lambda: None)
    return wrapped


def _split_ref(x_ref_or_view, idx, where):
    base, tree, ops = state._resolve(x_ref_or_view, idx, where)
    return base, tree, ops


def _mask(mask, where):
    if mask is None:
        return []
    m = asarray_value(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"{where}: mask must be a boolean array, got {m.dtype}")
    return [m]


def load(x_ref_or_view, idx=None, *, mask=None, other=None, cache_modifier=None,
         eviction_policy=None, volatile=False):
    """Read a block: ``pl.load(ref.at[idx], mask=m, other=v)`` (the older
    ``pl.load(ref, idx, mask=..., other=...)`` too). Masked-off lanes read ``other``; lanes
    past the ref's end read the uninitialised value (NaN) unless masked."""
    base, tree, ops = _split_ref(x_ref_or_view, idx, "pl.load")
    masks = _mask(mask, "pl.load")
    others = []
    if other is not None and masks:
        o = asarray_value(other)
        if o.dtype != base.aval.dtype:
            if not o.weak_type:
                raise ValueError(f"pl.load: other has dtype {np.dtype(o.dtype).name} but the "
                                 f"ref holds {np.dtype(base.aval.dtype).name}")
            from jaxlite._src.prims.conversion import convert_element_type_p
            o = convert_element_type_p.bind(o, new_dtype=np.dtype(base.aval.dtype),
                                            weak_type=False, sharding=None)
        others = [o]
    return P.masked_load_p.bind(base, *ops, *masks, *others, tree=tree,
                                has_mask=bool(masks), has_other=bool(others))


def swap(x_ref_or_view, idx, val, *, mask=None):
    """Write ``val`` into a block (where ``mask`` holds) and return the old block."""
    base, tree, ops = _split_ref(x_ref_or_view, idx, "pl.swap")
    v = state._cast_value(val, base, tree, ops, "pl.store")
    return P.masked_swap_p.bind(base, v, *ops, *_mask(mask, "pl.store"), tree=tree,
                                has_mask=mask is not None)


def store(x_ref_or_view, idx=None, val=None, *, mask=None, eviction_policy=None):
    """Write a block: ``pl.store(ref.at[idx], val, mask=m)`` (or the older
    ``pl.store(ref, idx, val, mask=m)``); masked-off lanes and lanes past the end are left
    unchanged."""
    if val is None:   # store(ref, val)
        idx, val = None, idx
    swap(x_ref_or_view, idx, val, mask=mask)


def atomic_rmw(x_ref_or_view, idx, val, *, mask=None, atomic_type):
    """Read-modify-write ``x_ref[idx]`` with ``atomic_type``; returns the old value."""
    base, tree, ops = _split_ref(x_ref_or_view, idx, f"pl.atomic_{atomic_type.value}")
    v = state._cast_value(val, base, tree, ops, f"pl.atomic_{atomic_type.value}")
    return P.atomic_rmw_p.bind(base, *ops, v, *_mask(mask, "atomic"), tree=tree,
                               has_mask=mask is not None, atomic_type=atomic_type)


def _atomic(kind, doc):
    def f(x_ref_or_view, idx, val, *, mask=None):
        return atomic_rmw(x_ref_or_view, idx, val, mask=mask, atomic_type=kind)
    f.__name__ = f.__qualname__ = f"atomic_{kind.value}"
    f.__doc__ = doc
    return f


atomic_add = _atomic(P.AtomicOpType.ADD, "``x_ref[idx] += val``; returns the old value.")
atomic_max = _atomic(P.AtomicOpType.MAX, "``x_ref[idx] = max(x_ref[idx], val)``; returns the "
                     "old value.")
atomic_min = _atomic(P.AtomicOpType.MIN, "``x_ref[idx] = min(x_ref[idx], val)``; returns the "
                     "old value.")
atomic_and = _atomic(P.AtomicOpType.AND, "``x_ref[idx] &= val``; returns the old value.")
atomic_or = _atomic(P.AtomicOpType.OR, "``x_ref[idx] |= val``; returns the old value.")
atomic_xor = _atomic(P.AtomicOpType.XOR, "``x_ref[idx] ^= val``; returns the old value.")
atomic_xchg = _atomic(P.AtomicOpType.XCHG, "``x_ref[idx] = val``; returns the old value.")


def atomic_cas(ref, cmp, val):
    """Compare-and-swap: ``x_ref[...] = val`` where it equals ``cmp``; returns the old value
    (``ref`` may be a view, ``ref.at[idx]``)."""
    base, tree, ops = _split_ref(ref, None, "pl.atomic_cas")
    c = state._cast_value(cmp, base, tree, ops, "pl.atomic_cas")
    v = state._cast_value(val, base, tree, ops, "pl.atomic_cas")
    return P.atomic_cas_p.bind(base, c, v, *ops, tree=tree)


def multiple_of(x, values):
    """``x``, with the promise that it is a multiple of ``values`` (a compiler hint)."""
    vals = tuple(values) if isinstance(values, (list, tuple)) else (int(values),)
    return P.multiple_of_p.bind(asarray_value(x), values=vals)


def max_contiguous(x, values):
    """``x`` (a hint for Triton that runs of ``values`` elements are contiguous)."""
    return asarray_value(x)


def _scratch_aval(t):
    if hasattr(t, "get_ref_aval"):
        return t.get_ref_aval()
    if hasattr(t, "shape") and hasattr(t, "dtype"):
        return state.AbstractRef(ShapedArray(tuple(t.shape), np.dtype(t.dtype)))
    raise TypeError(f"pl.run_scoped: expected scratch types such as pltpu.VMEM((8,), "
                    f"jnp.float32), got {t!r}")


def run_scoped(f, *types, collective_axes=(), **kw_types):
    """Call ``f`` with freshly allocated scratch refs of ``types`` (e.g.
    ``pltpu.VMEM((8, 128), jnp.float32)``), live only for the call; returns ``f``'s
    result."""
    from jaxlite._src.interpreters.staging import (DebugInfo, closed_jaxpr_from_trace,
                                                   trace_to_jaxpr)
    from jaxlite._src.tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten((types, kw_types), is_leaf=lambda t: hasattr(t, "shape"))
    avals = [_scratch_aval(t) for t in leaves]
    store = {}

    def flat(*refs):
        a, k = tree_unflatten(tree, list(refs))
        out = f(*a, **k)
        outs, store["tree"] = tree_flatten(out)
        return [asarray_value(o) for o in outs]
    di = DebugInfo.from_function(f, [""] * len(avals), "run_scoped")
    jaxpr, tconsts, consts = trace_to_jaxpr(flat, avals, di)
    closed = closed_jaxpr_from_trace(jaxpr, tconsts, consts)
    outs = P.run_scoped_p.bind(*tconsts, jaxpr=closed, collective_axes=tuple(collective_axes),
                               ref_transforms=((),) * len(avals))
    return tree_unflatten(store["tree"], list(outs))


def sync_copy(src_ref, dst_ref):
    """Copy ``src_ref`` into ``dst_ref`` (refs or views of the same shape), now."""
    state.ref_set(dst_ref, None, state.ref_get(src_ref, None))


class AsyncCopyDescriptor:
    """A DMA between refs (``pltpu.make_async_copy``). Interpret mode copies at ``start``;
    ``wait`` has nothing left to wait for."""

    def __init__(self, src_ref, dst_ref, sem):
        self.src_ref, self.dst_ref, self.sem = src_ref, dst_ref, sem

    def start(self, priority=0):
        """Start the copy (in interpret mode: do it)."""
        sync_copy(self.src_ref, self.dst_ref)
        return self

    def wait(self):
        """Wait for the copy to finish (it already has)."""


def make_async_copy(src_ref, dst_ref, sem):
    """A copy descriptor from ``src_ref`` to ``dst_ref`` signalling ``sem``."""
    return AsyncCopyDescriptor(src_ref, dst_ref, sem)


def async_copy(src_ref, dst_ref, sem, *, priority=0):
    """Start copying ``src_ref`` to ``dst_ref``; returns the descriptor to ``wait`` on."""
    return make_async_copy(src_ref, dst_ref, sem).start(priority)


def loop(lower, upper, *, init_carry=None, step=1, unroll=None):
    """Decorator: run the decorated ``body(i)`` (or ``body(i, carry) -> carry`` with
    ``init_carry``) for ``i`` in ``range(lower, upper, step)``, as a ``lax.fori_loop``;
    returns the final carry."""
    from jaxlite._src.lax.control_flow import fori_loop
    from jaxlite._src.pallas.core import cdiv
    static = all(isinstance(v, (int, np.integer)) for v in (lower, upper, step))
    if not static:
        lower, upper, step = (asarray_value(v) for v in (lower, upper, step))
    n = cdiv(upper - lower, step)

    def decorator(body):
        if init_carry is None:
            def body_fn(i, _):
                body(lower + i * step)
        else:
            def body_fn(i, carry):
                return body(lower + i * step, carry)
        return fori_loop(0, n, body_fn, init_carry, unroll=unroll)
    return decorator


def with_scoped(*types, collective_axes=(), **kw_types):
    """Decorator: the decorated function runs with scratch refs of ``types`` appended to
    its arguments (``pl.run_scoped`` around each call)."""
    def decorator(f):
        def inner(*args):
            return run_scoped(lambda *refs, **kw: f(*args, *refs, **kw), *types,
                              collective_axes=collective_axes, **kw_types)
        return inner
    return decorator


def reciprocal(x, *, approx=False, full_range=True):
    """``1 / x`` (``approx`` and ``full_range`` are hardware hints; the result is exact)."""
    return 1 / asarray_value(x)


def broadcast_to(a, shape):
    """``a`` broadcast to ``shape`` (as ``jnp.broadcast_to``)."""
    from jaxlite._src.numpy.shape_ops import broadcast_to as _bt
    return _bt(a, shape)


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose contents do not matter (zeros here)."""
    from jaxlite._src.numpy.creation import zeros
    return zeros(shape, dtype)


def empty_like(x):
    """A pytree like ``x`` (leaves with ``shape``/``dtype``) of arrays whose contents do
    not matter."""
    from jaxlite._src.tree_util import tree_map
    return tree_map(lambda leaf: empty(leaf.shape, leaf.dtype), x)


def debug_print(fmt, *args):
    """Print from inside a kernel (``fmt`` with ``{}`` placeholders), as jax.debug.print."""
    from jaxlite._src.debugging.callbacks import debug_print as _dp
    _dp(fmt, *args)
