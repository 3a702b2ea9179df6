"""The primitives a Pallas kernel uses besides ``get``/``swap``/``addupdate``.

``program_id``/``num_programs`` read the grid step the interpreter is running (a thread-local
set by the generated grid loop); ``masked_load``/``masked_swap`` read and write blocks that may
run past the ref's end (masked lanes and lanes out of bounds read ``other`` or the
uninitialised value and are not written); ``atomic_rmw``/``atomic_cas`` update a ref and
return the old contents; ``multiple_of`` is a compiler hint (the identity here);
``run_scoped`` runs a function on freshly allocated scratch refs.
"""
from __future__ import annotations

import enum
import threading
import weakref

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims import state
from jaxlite._src.prims.state import AbstractRef, pp_ref_index

__all__ = ["program_id_p", "num_programs_p", "multiple_of_p", "masked_load_p",
           "masked_swap_p", "atomic_rmw_p", "atomic_cas_p", "run_scoped_p", "AtomicOpType",
           "grid_env", "uninitialized", "tracing_grid"]


class _GridEnv(threading.local):
    ids = None      # the kernel-visible program ids (np.int32) of the running grid step
    sizes = None    # the kernel-visible grid
    tracing = None  # the kernel-visible grid while a kernel is being traced


grid_env = _GridEnv()


class tracing_grid:
    """Context manager: a kernel for ``grid`` is being traced (program_id checks axes)."""

    def __init__(self, grid):
        self.grid = tuple(grid)

    def __enter__(self):
        self.prev = grid_env.tracing
        grid_env.tracing = self.grid

    def __exit__(self, *exc):
        grid_env.tracing = self.prev


def uninitialized(shape, dtype):
    """What JAX's interpret mode puts in buffers nothing wrote yet: NaN for floats, the
    minimum for integers, False for booleans."""
    dt = np.dtype(dtype)
    if dt.kind in "fc" or dtypes.issubdtype(dt, np.inexact):   # bfloat16 & co too
        return np.full(shape, np.nan, dt)
    if dt.kind in "iu":
        return np.full(shape, np.iinfo(dt).min, dt)
    return np.zeros(shape, dt)


def _no_kernel(name):
    return ValueError(f"pl.{name} can only be called inside a Pallas kernel (a function "
                      "passed to pl.pallas_call), while it runs or is traced.")


class _GridQuery(Primitive):
    jvp = NOT_DIFFERENTIABLE

    def abstract_eval(self, *, axis):
        return ShapedArray((), np.int32, False)

    def check_axis(self, axis):
        grid = grid_env.tracing
        if grid is not None and not 0 <= axis < len(grid):
            raise ValueError(f"pl.{self.name}({axis}): the kernel's grid {grid} has "
                             f"{len(grid)} dimension(s); use an axis in "
                             f"range({len(grid)}).")

    def bind(self, *args, **params):
        self.check_axis(params["axis"])
        return super().bind(*args, **params)

    def pp_params(self, params):
        return [("axis", params["axis"])]


class ProgramId(_GridQuery):
    """The index of the running grid step along ``axis``."""
    name = "program_id"

    def impl(self, *, axis):
        if grid_env.ids is None:
            raise _no_kernel("program_id")
        return np.asarray(grid_env.ids[axis])

    def lower_py(self, ctx, ins, axis):
        return f"{ctx.bind_global(grid_env, 'grid')}.ids[{axis}]"


class NumPrograms(_GridQuery):
    """The size of the grid along ``axis``."""
    name = "num_programs"

    def impl(self, *, axis):
        if grid_env.sizes is None:
            raise _no_kernel("num_programs")
        return np.asarray(np.int32(grid_env.sizes[axis]))

    def lower_py(self, ctx, ins, axis):
        return f"{ctx.bind_global(grid_env, 'grid')}.sizes[{axis}]"


program_id_p = ProgramId()
num_programs_p = NumPrograms()


class MultipleOf(Primitive):
    """``x`` unchanged, with the promise that it is a multiple of ``values`` (a hint for
    compilers; interpret mode does not check it)."""
    name = "multiple_of"

    def impl(self, x, *, values):
        return x

    def abstract_eval(self, x, *, values):
        return x

    def lower_py(self, ctx, ins, values):
        return ins[0]

    def jvp(self, primals, tangents, *, values):
        return self.bind(primals[0], values=values), tangents[0]

    def batch(self, size, args, dims, *, values):
        return self.bind(args[0], values=values), dims[0]


multiple_of_p = MultipleOf()


# ----------------------------------------------------------------------------- masked ops

def _block_plan(ref, tree, ops):
    """Per dimension (start, size, stride, is_int) with traced starts clamped into [0, n]
    (as JAX pads the ref by the block before its dynamic slice), or None when an index is
    an integer array (a gather, which clamps)."""
    if tree is None:
        return [(0, n, 1, False) for n in ref.shape]
    it = iter(ops)
    plan = []
    for n, e in zip(ref.shape, tree):
        if e[0] == "s":
            _, start, size, stride = e
            if start is None:
                start = min(max(int(next(it)), 0), n)
            plan.append((start, size, stride, False))
        else:
            v = next(it)
            if np.ndim(v):
                return None
            plan.append((min(max(int(v), 0), n), 1, 1, True))
    return plan


def _inbounds(plan, shape):
    """Source slices into the ref and destination slices into the block for the part of
    the block inside the ref."""
    src, dst = [], []
    for (start, size, stride, _), n in zip(plan, shape):
        count = max(0, min(size, -(-(n - start) // stride))) if start < n else 0
        src.append(slice(start, start + (count - 1) * stride + 1 if count else start, stride))
        dst.append(slice(0, count))
    return tuple(src), tuple(dst)


def masked_read(ref, tree, ops, mask=None, other=None):
    """The indexed block of ``ref``; lanes past the end read the uninitialised value,
    masked-off lanes read ``other`` (when given)."""
    plan = _block_plan(ref, tree, ops)
    if plan is None:
        out = np.array(ref[state.index_numpy(ref, tree, ops)])
    else:
        full = tuple(p[1] for p in plan)
        out = uninitialized(full, ref.dtype)
        src, dst = _inbounds(plan, ref.shape)
        out[dst] = ref[src]
        out = out.reshape(tuple(p[1] for p in plan if not p[3]))
    if mask is not None and other is not None:
        out = np.where(mask, out, np.asarray(other, ref.dtype)).astype(ref.dtype, copy=False)
    return out


def masked_write(ref, tree, ops, val, mask=None):
    """Write ``val`` into the indexed block of ``ref`` where ``mask`` is set and the lane is
    inside the ref; returns the block's old contents (as masked_read)."""
    plan = _block_plan(ref, tree, ops)
    if plan is None:
        ix = state.index_numpy(ref, tree, ops)
        old = np.array(ref[ix])
        ref[ix] = val if mask is None else np.where(mask, val, old)
        return old
    full = tuple(p[1] for p in plan)
    kept = tuple(p[1] for p in plan if not p[3])
    old = uninitialized(full, ref.dtype)
    src, dst = _inbounds(plan, ref.shape)
    old[dst] = ref[src]
    new = np.broadcast_to(np.asarray(val, ref.dtype), kept).reshape(full)
    if mask is not None:
        new = np.where(np.broadcast_to(mask, kept).reshape(full), new, old)
    ref[src] = new[dst]
    return old.reshape(kept)


def _split_masked(args, n_idx, has_mask, has_other):
    idx = args[:n_idx]
    rest = list(args[n_idx:])
    mask = rest.pop(0) if has_mask else None
    other = rest.pop(0) if has_other else None
    return idx, mask, other


def _n_idx(tree):
    if tree is None:
        return 0
    return sum(1 for e in tree if e[0] == "i" or e[1] is None)


def _check_mask(name, mask_aval, shape):
    if mask_aval is None:
        return
    if mask_aval.dtype != np.bool_:
        raise TypeError(f"{name}: mask must be a boolean array, got {mask_aval.str_short()}")
    try:
        np.broadcast_shapes(tuple(mask_aval.shape), tuple(shape))
    except ValueError:
        raise ValueError(f"Cannot broadcast mask shape {mask_aval.shape} to the block shape "
                         f"{tuple(shape)}") from None


class _MaskedBase(Primitive):
    hidden_params = ("tree", "has_mask", "has_other")
    no_cse = True   # a write may come between two reads of a ref

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(f"differentiation of `{self.name}` inside a kernel is not "
                                  "supported by jaxlite")

    def _masked_jvp(self, primals, tangents, n_before, params):
        """Apply the op to the primal ref and to the tangent ref (a Zero tangent ref: the
        tangent is zero); masks and indices are shared, ``other``'s tangent is zero."""
        from jaxlite._src.prims.ad_util import Zero, instantiate
        out = self.bind(*primals, **params)
        if type(tangents[0]) is Zero:
            return out, Zero.like(out)
        args = list(primals)
        args[0] = tangents[0]
        for k in range(1, n_before):   # the value written: its tangent
            args[k] = instantiate(tangents[k])
        if params.get("has_other"):
            args[-1] = instantiate(Zero.like(primals[-1]))
        return out, self.bind(*args, **params)

    def batch(self, size, args, dims, **params):
        raise NotImplementedError(f"vmap of `{self.name}` inside a kernel is not supported "
                                  "by jaxlite: vmap the pallas_call instead.")

    def _mask_text(self, eqn, pp_var, rest):
        out = ""
        it = iter(rest)
        if eqn.params["has_mask"]:
            out += f" mask={pp_var(next(it))}"
        if eqn.params.get("has_other"):
            out += f" other={pp_var(next(it), literal_dtype=True)}"
        return out


class MaskedLoad(_MaskedBase):
    """``pl.load``: a block read with an optional mask and fill value."""
    name = "masked_load"

    def impl(self, ref, *args, tree, has_mask, has_other):
        idx, mask, other = _split_masked(args, _n_idx(tree), has_mask, has_other)
        return masked_read(ref, tree, idx, mask, other)

    def jvp(self, primals, tangents, **params):
        return self._masked_jvp(primals, tangents, 1, params)

    def abstract_eval(self, ref, *args, tree, has_mask, has_other):
        state._check_ref(self.name, ref)
        n = _n_idx(tree)
        idx, mask, other = _split_masked(args, n, has_mask, has_other)
        out = ShapedArray(state._indexed_shape(tree, ref.shape, idx), ref.dtype, False)
        _check_mask("pl.load", mask, out.shape)
        return out

    def pp_eqn(self, eqn, ctx, pp_var):
        ref, *args = eqn.invars
        n = _n_idx(eqn.params["tree"])
        r = pp_var(ref) + pp_ref_index(eqn.params["tree"], ref.aval.shape,
                                       [pp_var(a) for a in args[:n]])
        return f"{pp_var(eqn.outvars[0], True)} <- {r}" + self._mask_text(eqn, pp_var, args[n:])


class MaskedSwap(_MaskedBase):
    """``pl.store``: a block write with an optional mask; returns the old block."""
    name = "masked_swap"
    effectful = True
    ref_effect = True

    def impl(self, ref, val, *args, tree, has_mask, has_other=False):
        idx, mask, _ = _split_masked(args, _n_idx(tree), has_mask, False)
        return masked_write(ref, tree, idx, val, mask)

    def jvp(self, primals, tangents, **params):
        return self._masked_jvp(primals, tangents, 2, params)

    def abstract_eval(self, ref, val, *args, tree, has_mask, has_other=False):
        state._check_ref(self.name, ref)
        idx, mask, _ = _split_masked(args, _n_idx(tree), has_mask, False)
        out = ShapedArray(state._indexed_shape(tree, ref.shape, idx), ref.dtype, False)
        if tuple(val.shape) != out.shape or val.dtype != out.dtype:
            raise ValueError(f"pl.store: the value {val.str_short()} does not match the "
                             f"block {out.str_short()} of the ref")
        _check_mask("pl.store", mask, out.shape)
        return out

    def pp_eqn(self, eqn, ctx, pp_var):
        ref, val, *args = eqn.invars
        n = _n_idx(eqn.params["tree"])
        r = pp_var(ref) + pp_ref_index(eqn.params["tree"], ref.aval.shape,
                                       [pp_var(a) for a in args[:n]])
        return (f"{pp_var(eqn.outvars[0], True)}, {r} <- {r}, "
                f"{pp_var(val, literal_dtype=True)}" + self._mask_text(eqn, pp_var, args[n:]))


masked_load_p = MaskedLoad()
masked_swap_p = MaskedSwap()


# ----------------------------------------------------------------------------- atomics

class AtomicOpType(enum.Enum):
    """The read-modify-write operation of ``atomic_rmw``."""
    XCHG = "xchg"
    ADD = "add"
    MAX = "max"
    MIN = "min"
    AND = "and"
    OR = "or"
    XOR = "xor"


_UFUNC = {AtomicOpType.ADD: np.add, AtomicOpType.MAX: np.maximum,
          AtomicOpType.MIN: np.minimum, AtomicOpType.AND: np.bitwise_and,
          AtomicOpType.OR: np.bitwise_or, AtomicOpType.XOR: np.bitwise_xor}


def _split_atomic(args, tree, has_mask):
    """(indices, value, mask) from atomic_rmw's operands ``*indices, value, [mask]``."""
    n = _n_idx(tree)
    return args[:n], args[n], (args[n + 1] if has_mask else None)


class AtomicRMW(_MaskedBase):
    """``old = ref[idx]; ref[idx] = op(old, val)`` where ``mask`` is set; returns ``old``.
    Repeated integer-array indices apply the operation once per occurrence."""
    name = "atomic_rmw"
    effectful = True
    ref_effect = True
    hidden_params = ("tree", "has_mask")

    def impl(self, ref, *args, tree, has_mask, atomic_type):
        idx, val, mask = _split_atomic(args, tree, has_mask)
        ix = state.index_numpy(ref, tree, idx)
        old = np.array(ref[ix])
        if atomic_type is AtomicOpType.XCHG:
            ref[ix] = val if mask is None else np.where(mask, val, old)
            return old
        uf = _UFUNC[atomic_type]
        if any(isinstance(i, np.ndarray) for i in (ix if type(ix) is tuple else ())):
            v = np.broadcast_to(np.asarray(val, ref.dtype), old.shape)
            if mask is not None:
                keep = np.broadcast_to(mask, old.shape)
                ix = tuple(np.broadcast_to(i, old.shape)[keep] if isinstance(i, np.ndarray)
                           else i for i in ix)
                v = v[keep]
            uf.at(ref, ix, v)
            return old
        new = uf(old, np.asarray(val, ref.dtype)).astype(ref.dtype, copy=False)
        ref[ix] = new if mask is None else np.where(mask, new, old)
        return old

    def abstract_eval(self, ref, *args, tree, has_mask, atomic_type):
        state._check_ref(self.name, ref)
        idx, val, mask = _split_atomic(args, tree, has_mask)
        out = ShapedArray(state._indexed_shape(tree, ref.shape, idx), ref.dtype, False)
        if tuple(val.shape) != out.shape or val.dtype != out.dtype:
            raise ValueError(f"pl.atomic_{atomic_type.value}: the value {val.str_short()} "
                             f"does not match the block {out.str_short()} of the ref")
        if atomic_type in (AtomicOpType.AND, AtomicOpType.OR, AtomicOpType.XOR) and \
                not dtypes.issubdtype(ref.dtype, np.integer):
            raise ValueError(f"pl.atomic_{atomic_type.value} needs an integer ref, got "
                             f"{ref.str_short()}")
        _check_mask(f"pl.atomic_{atomic_type.value}", mask, out.shape)
        return out

    def pp_params(self, params):
        return [("atomic_type", f"AtomicOpType.{params['atomic_type'].name}")]


class AtomicCAS(_MaskedBase):
    """``old = ref[idx]; ref[idx] = val if old == cmp else old``; returns ``old``."""
    name = "atomic_cas"
    effectful = True
    ref_effect = True
    hidden_params = ("tree", "has_mask")

    def impl(self, ref, cmp, val, *idx, tree, has_mask=False):
        ix = state.index_numpy(ref, tree, idx)
        old = np.array(ref[ix])
        ref[ix] = np.where(old == cmp, val, old)
        return old

    def abstract_eval(self, ref, cmp, val, *idx, tree, has_mask=False):
        state._check_ref(self.name, ref)
        out = ShapedArray(state._indexed_shape(tree, ref.shape, idx), ref.dtype, False)
        for a in (cmp, val):
            if tuple(a.shape) != out.shape or a.dtype != out.dtype:
                raise ValueError(f"pl.atomic_cas: {a.str_short()} does not match the block "
                                 f"{out.str_short()} of the ref")
        return out


atomic_rmw_p = AtomicRMW()
atomic_cas_p = AtomicCAS()


# ----------------------------------------------------------------------------- run_scoped

_pp_views = weakref.WeakKeyDictionary()   # run_scoped jaxpr -> its printed form


def _run_scoped(fn, avals, *args):
    bufs = [uninitialized(a.shape, a.dtype) for a in avals]
    return fn(*args, *bufs)


class RunScoped(Primitive):
    """``jaxpr(*operands, *fresh scratch refs)``: the scratch refs live for the call only.
    Operands are the values and refs the function closed over; ``ref_transforms`` has one
    (empty) entry per scratch ref, as JAX records it."""
    name = "run_scoped"
    multiple_results = True

    def _scratch(self, jaxpr, n_ops):
        return [a.inner_aval for a in jaxpr.in_avals[n_ops:]]

    def impl(self, *args, jaxpr, collective_axes=(), ref_transforms=()):
        from jaxlite._src.prims.call import jit_p
        fn = jit_p.compiled(jaxpr, "run_scoped")
        return list(_run_scoped(fn, self._scratch(jaxpr, len(args)), *args))

    def abstract_eval(self, *avals, jaxpr, collective_axes=(), ref_transforms=()):
        for a in jaxpr.in_avals[len(avals):]:
            if type(a) is not AbstractRef:
                raise TypeError("run_scoped: the scoped arguments must be refs")
        return list(jaxpr.out_avals)

    def lower_py(self, ctx, ins, jaxpr, collective_axes=(), ref_transforms=()):
        fn = ctx.compile_sub(jaxpr, "run_scoped")
        run = ctx.bind_global(_run_scoped, "run_scoped")
        avals = ctx.bind_global(self._scratch(jaxpr, len(ins)), "scratch")
        return f"{run}({fn}, {avals}, {', '.join(ins)})"

    def pp_params(self, params):
        """As JAX prints it: the values and refs the body closed over are the printed
        jaxpr's constvars, the scratch refs its invars."""
        closed, n_scratch = params["jaxpr"], len(params["ref_transforms"])
        view = _pp_views.get(closed)
        if view is None:
            j = closed.jaxpr
            k = len(j.invars) - n_scratch
            view = j.replace(constvars=list(j.constvars) + list(j.invars[:k]),
                             invars=list(j.invars[k:]))
            _pp_views[closed] = view
        return [("collective_axes", params["collective_axes"]), ("jaxpr", view),
                ("ref_transforms", params["ref_transforms"])]

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError("differentiation of pl.run_scoped is not supported by "
                                  "jaxlite")

    def batch(self, size, args, dims, **params):
        raise NotImplementedError("vmap of pl.run_scoped inside a kernel is not supported "
                                  "by jaxlite: vmap the pallas_call instead.")


run_scoped_p = RunScoped()
