"""Host callback primitives: ``pure_callback``, ``io_callback``, ``debug_callback`` and
``debug_print``, and the effects they carry.

A callback primitive runs a Python function on the host with its operands as (concrete)
arrays, eagerly or from jit's generated code, where it is one line that calls it. Effects
are JAX's: ``io_callback`` has the IO effect (OrderedIO when ``ordered``), the debug
primitives the Debug effect (OrderedDebug); the compiler never removes, merges or folds an
equation with an effect (``core.ir.has_effects``), and since the generated code runs the
equations one after the other, effects happen in program order. ``pure_callback`` has no
effect: it is removed when its result is unused, as in JAX, but never merged with an equal
call nor evaluated at compile time (``no_cse``/``no_fold``), so it is called exactly as often
as in JAX.
"""
from __future__ import annotations

import logging
import sys
import traceback

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.errors import JaxRuntimeError
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.core.source_info import _is_internal
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Effect", "DebugEffect", "OrderedDebugEffect", "IOEffect", "OrderedIOEffect",
           "debug_effect", "ordered_debug_effect", "io_effect", "ordered_io_effect",
           "FlatCallback", "pure_callback_p", "io_callback_p", "debug_callback_p",
           "debug_print_p", "unroll_batch", "host_args", "ordered_effects",
           "EffectTypeSet", "control_flow_allowed_effects",
           "custom_derivatives_allowed_effects", "remat_allowed_effects"]

# JAX's logger name: libraries filter its "jax.pure_callback failed" records by it (equinox
# does, around the errors it raises from callbacks on purpose)
logger = logging.getLogger("jax._src.callback")


# ----------------------------------------------------------------------------- effects

class Effect:
    """A side effect of a primitive, as found in ``jaxpr.effects``."""
    __slots__ = ()
    ordered = False


class DebugEffect(Effect):
    """The effect of ``jax.debug.callback``/``print``/``breakpoint``."""
    __slots__ = ()
    __str__ = lambda self: "Debug"  # noqa: E731


class OrderedDebugEffect(Effect):
    """The effect of the debug callbacks with ``ordered=True``."""
    __slots__ = ()
    ordered = True
    __str__ = lambda self: "OrderedDebug"  # noqa: E731


class IOEffect(Effect):
    """The effect of ``io_callback``."""
    __slots__ = ()
    __str__ = lambda self: "IO"  # noqa: E731


class OrderedIOEffect(Effect):
    """The effect of ``io_callback(..., ordered=True)``."""
    __slots__ = ()
    ordered = True
    __str__ = lambda self: "OrderedIO"  # noqa: E731


class EffectTypeSet:
    """A set of effect types (JAX's ``effects.EffectTypeSet``): ``add_type`` enters a class,
    ``contains(effect)`` asks whether an effect is an instance of one of them."""

    def __init__(self):
        self._types = set()

    def __repr__(self):
        return f"EffectTypeSet({self._types})"

    def add_type(self, effect_type):
        """Enter the effect class ``effect_type``."""
        if not isinstance(effect_type, type):
            raise TypeError(f"add_type takes an effect class, got {effect_type!r}")
        self._types.add(effect_type)

    def contains(self, eff):
        """Whether ``eff`` is an instance of an entered effect class."""
        return any(isinstance(eff, t) for t in self._types)

    def filter_in(self, effects):
        """The effects among ``effects`` this set contains."""
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects):
        """The effects among ``effects`` this set does not contain."""
        return [e for e in effects if not self.contains(e)]


# The effects JAX lets cond/while/scan bodies, custom derivative rules and remat'd functions
# have. jaxlite's control flow, custom derivatives and remat accept bodies with any effect (the
# generated code runs their equations in program order), so these sets only record which
# effect types libraries declare as allowed, for code that asks.
control_flow_allowed_effects = EffectTypeSet()
custom_derivatives_allowed_effects = EffectTypeSet()
remat_allowed_effects = EffectTypeSet()

debug_effect, ordered_debug_effect = DebugEffect(), OrderedDebugEffect()
io_effect, ordered_io_effect = IOEffect(), OrderedIOEffect()


def ordered_effects(effects):
    """The ordered ones among ``effects``."""
    return frozenset(e for e in effects if getattr(e, "ordered", False))


# ----------------------------------------------------------------------------- helpers

class FlatCallback:
    """A Python function called with flat arguments, returning flat results (the
    ``callback`` parameter of pure_callback/io_callback; prints as JAX's ``_FlatCallback``).
    Two of them are equal when they wrap the same function with the same argument tree."""
    __slots__ = ("callback_func", "in_tree", "__weakref__")

    def __init__(self, callback_func, in_tree):
        self.callback_func = callback_func
        self.in_tree = in_tree

    def __call__(self, *flat_args):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, list(flat_args))
        return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

    def __eq__(self, other):
        return (type(other) is FlatCallback and self.callback_func == other.callback_func
                and self.in_tree == other.in_tree)

    def __hash__(self):
        return hash((self.callback_func, self.in_tree))

    def __repr__(self):
        return (f"_FlatCallback(callback_func={self.callback_func!r}, "
                f"in_tree={self.in_tree!r})")


def host_args(vals):
    """Operands as the arrays a callback receives (JAX passes ``jax.Array``s on the CPU)."""
    return [ArrayImpl(np.asarray(v), False) for v in vals]


def _check_results(outs, result_avals):
    """The callback's results as NumPy values of the declared types (RuntimeError with
    JAX's text when their number, shapes or dtypes differ)."""
    if len(outs) != len(result_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_avals)}, Actual: {len(outs)}")
    vals = []
    for i, (o, a) in enumerate(zip(outs, result_avals)):
        v = np.asarray(o)
        dt = dtypes.canonicalize_dtype(v.dtype)
        if dt != v.dtype:
            v = v.astype(dt)
        if v.shape != tuple(a.shape):
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {tuple(a.shape)}, Actual: {v.shape}")
        if v.dtype != a.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {a.dtype}, Actual: {v.dtype}")
        vals.append(v)
    return vals


def _callback_name(fn):
    fn = getattr(fn, "callback_func", fn)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    code = getattr(fn, "__code__", None)
    where = f" (defined at {code.co_filename}:{code.co_firstlineno})" if code else ""
    return f"`{name}`{where}"


def _runtime_error(e, note):
    """JAX's JaxRuntimeError for an exception raised by (or about) a host callback: the
    message is XLA's ``CpuCallback error`` with the callback's own frames; ``note`` (shown
    below the message in tracebacks, not part of ``str(err)``) says which callback failed
    and how to fix it."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not _is_internal(f.filename)]
    text = "".join(traceback.format_list(frames))
    msg = ("INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):\n"
           + text + "".join(traceback.format_exception_only(type(e), e)).rstrip("\n"))
    err = JaxRuntimeError(msg)
    if hasattr(err, "add_note"):
        err.add_note(note)
    return err


def _note(api, callback, hint=None):
    if callback is None:
        return (f"{api} failed while formatting its arguments: check that the format "
                "string's fields and format specs fit the values passed.")
    note = f"The callback {_callback_name(callback)} passed to {api} failed."
    return note + (" " + hint if hint else "")


_VECTORIZED_HINT = (
    "jax.pure_callback has no `vectorized=` option since JAX 0.6 (it is passed on to the "
    "callback as a keyword argument): use vmap_method='legacy_vectorized' (or "
    "'expand_dims' / 'broadcast_all') instead.")


def _result_hint(e):
    s = str(e)
    if s.startswith(("Incorrect output", "Mismatched number")):
        return ("Fix: make the callback return arrays of exactly the shapes and dtypes "
                "declared in result_shape_dtypes (one leaf per declared leaf).")
    if isinstance(e, TypeError) and "'vectorized'" in s:
        return _VECTORIZED_HINT
    return None


def _index_in_dim(x, i, d):
    """``x[..., i, ...]`` along dimension ``d`` (as JAX's ``index_in_dim``: a slice and a
    squeeze)."""
    from jaxlite._src.core.avals import aval_of_value
    from jaxlite._src.prims.shape import slice_p, squeeze_p
    shp = tuple(aval_of_value(x).shape)
    start = tuple(i if k == d else 0 for k in range(len(shp)))
    limit = tuple(i + 1 if k == d else n for k, n in enumerate(shp))
    s = slice_p.bind(x, start_indices=start, limit_indices=limit, strides=(1,) * len(shp))
    return squeeze_p.bind(s, dimensions=(d,))


def unroll_batch(prim, args, dims, params):
    """Batch a primitive without outputs by binding it once per batch member, in order (JAX's
    rule for the debug callbacks: one print per member)."""
    from jaxlite._src.core.avals import aval_of_value
    size = next(aval_of_value(a).shape[d] for a, d in zip(args, dims) if d is not None)
    for i in range(size):
        prim.bind(*[a if d is None else _index_in_dim(a, i, d) for a, d in zip(args, dims)],
                  **params)
    return [], []


def _scan_map(fn, unbatched, batched, unroll):
    """``lax.map`` over the leading axis of ``batched`` (unbatched operands are constants of
    the loop): a ``scan`` whose body calls ``fn(unbatched + batched_slices)``."""
    from jaxlite._src.core.avals import aval_of_value
    from jaxlite._src.core.ir import ClosedJaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    from jaxlite._src.prims.scan import scan_p
    u_avals = [aval_of_value(a) for a in unbatched]
    b_avals = [aval_of_value(a) for a in batched]
    length = b_avals[0].shape[0]
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in b_avals]
    nu = len(unbatched)
    jaxpr, tconsts, consts = trace_to_jaxpr(lambda *xs: fn(list(xs[:nu]), list(xs[nu:])),
                                            u_avals + x_avals)
    assert not tconsts
    n = nu + len(batched)
    return scan_p.bind(*unbatched, *batched, jaxpr=ClosedJaxpr(jaxpr, consts), length=length,
                       reverse=False, num_consts=nu, num_carry=0,
                       unroll=length if unroll else 1, linear=(False,) * n,
                       _split_transpose=False)


def _split(args, dims):
    from jaxlite._src.interpreters.batching import moveaxis
    moved = [a if d is None else moveaxis(a, d, 0) for a, d in zip(args, dims)]
    is_b = [d is not None for d in dims]
    return moved, is_b


def _merge(is_b, unbatched, batched):
    u, b = iter(unbatched), iter(batched)
    return [next(b) if f else next(u) for f in is_b]


def _has_io(closed, ordered=None):
    effs = closed.effects
    if ordered is None:
        return io_effect in effs or ordered_io_effect in effs
    return (ordered_io_effect if ordered else io_effect) in effs


def check_vmap_of_cond(branches):
    """JAX's errors for vmapping a ``cond`` whose branches call ``io_callback`` or use a
    ref."""
    if any(_has_io(b) for b in branches):
        raise NotImplementedError("IO effect not supported in vmap-of-cond.")
    if any(getattr(v.aval, "is_ref", False) for b in branches
           for v in b.jaxpr.invars + b.jaxpr.constvars):
        # (branches reading or writing a ref they are given or close over)
        raise NotImplementedError("State effect not supported in vmap-of-cond.")


def check_vmap_of_while(size, dims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """JAX's errors for vmapping a ``while_loop`` that calls ``io_callback``: never when
    ordered, and not when the loop predicate is batched (members would stop at different
    iterations)."""
    if not (_has_io(cond_jaxpr) or _has_io(body_jaxpr)):
        return
    if _has_io(cond_jaxpr, True) or _has_io(body_jaxpr, True):
        raise Exception("Ordered IO effects not supported in vmap.")
    from jaxlite._src.interpreters.batching import batch_jaxpr_keep_dims
    nc = cond_nconsts + body_nconsts
    cdims, bdims = list(dims[:cond_nconsts]), list(dims[cond_nconsts:nc])
    carry = [None if d is None else 0 for d in dims[nc:]]
    bdims = [None if d is None else 0 for d in bdims]
    cdims = [None if d is None else 0 for d in cdims]
    for _ in range(len(carry) + 1):   # which carries are batched: a fixpoint
        _, out = batch_jaxpr_keep_dims(body_jaxpr, size, bdims + carry)
        new = [0 if (c is not None or o is not None) else None for c, o in zip(carry, out)]
        if new == carry:
            break
        carry = new
    _, (pred,) = batch_jaxpr_keep_dims(cond_jaxpr, size, cdims + carry)
    if pred is not None:
        raise Exception("Unordered IO effects not supported in while_loop with batched "
                        "predicate")


# ----------------------------------------------------------------------------- primitives

class _HostCallback(Primitive):
    """Shared rules of pure_callback and io_callback: results as declared, no weak types,
    the callback called with arrays, its results checked."""
    multiple_results = True
    weak_rule = "never"
    no_fold = True
    api = "?"
    runs_per_device = True   # called once per device under pmap/shard_map, with its context

    def abstract_eval(self, *avals, result_avals, **_):
        return [ShapedArray(a.shape, a.dtype) for a in result_avals]

    def explicit_sharding_rule(self, avals, dims, result_avals, **params):
        """Over Explicit mesh axes the results are typed unsplit, as JAX types them (the
        host function sees whole arrays)."""
        return [((),) * len(a.shape) for a in result_avals]

    def impl(self, *args, callback, result_avals, **_):
        try:
            return _check_results(callback(*host_args(args)), result_avals)
        except Exception as e:
            logger.exception("%s failed", self.api)
            raise _runtime_error(e, _note(self.api, callback, _result_hint(e))) from e

    def lower_py(self, ctx, ins, **params):
        import functools
        fn = ctx.bind_global(functools.partial(self.impl, **params), self.name + "_")
        return f"{fn}({', '.join(ins)})"


class PureCallback(_HostCallback):
    """``jax.pure_callback``: a side-effect-free host function (DCE may drop it)."""
    name = "pure_callback"
    api = "jax.pure_callback"
    no_cse = True

    def jvp(self, primals, tangents, **params):
        raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to "
                         "use callbacks while taking gradients.")

    def transpose(self, cts, *args, **params):
        raise ValueError("Pure callbacks do not support transpose. Please use "
                         "`jax.custom_vjp` to use callbacks while taking gradients.")

    def batch(self, size, args, dims, *, vmap_method, result_avals, **params):
        return batch_by_vmap_method(
            self, size, args, dims, vmap_method, result_avals, params,
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")


class IOCallback(_HostCallback):
    """``jax.experimental.io_callback``: a host function with side effects; never removed,
    and with ``ordered=True`` run in program order relative to other ordered effects."""
    name = "io_callback"
    api = "jax.io_callback"
    effectful = True

    def effects_of(self, params):
        return (ordered_io_effect if params["ordered"] else io_effect,)

    def jvp(self, primals, tangents, **params):
        raise ValueError("IO callbacks do not support JVP.")

    def transpose(self, cts, *args, **params):
        raise ValueError("IO callbacks do not support transpose.")

    def batch(self, size, args, dims, *, ordered, **params):
        if ordered:
            raise ValueError("Cannot `vmap` ordered IO callback.")
        moved, is_b = _split(args, dims)
        unbatched = [a for a, b in zip(moved, is_b) if not b]
        batched = [a for a, b in zip(moved, is_b) if b]

        def body(u, b):
            return self.bind(*_merge(is_b, u, b), ordered=False, **params)
        outs = _scan_map(body, unbatched, batched, False)
        return list(outs), [0] * len(outs)


class _DebugBase(Primitive):
    """Shared rules of the debug callbacks: no outputs, the Debug effect, JVP on primals
    (so grad prints primal values), nothing to transpose, one call per vmapped member.
    Eagerly the callback's exception propagates as is; from jit it becomes a
    JaxRuntimeError, as in JAX."""
    multiple_results = True
    effectful = True
    api = "jax.debug.callback"

    def abstract_eval(self, *avals, **params):
        return []

    def jvp(self, primals, tangents, **params):
        return self.bind(*primals, **params), []

    def transpose(self, cts, *args, **params):
        return [None] * len(args)

    def batch(self, size, args, dims, **params):
        return unroll_batch(self, args, dims, params)

    def impl(self, *args, **params):
        try:
            self.run(host_args(args), params)
        except BaseException:
            logger.exception("jax.debug.callback failed")
            raise
        return []

    def run_compiled(self, *args, **params):
        try:
            self.run(host_args(args), params)
        except Exception as e:
            logger.exception("jax.debug.callback failed")
            raise _runtime_error(e, _note(self.api, self.callback_of(params))) from e
        return []

    def lower_py(self, ctx, ins, **params):
        import functools
        fn = ctx.bind_global(functools.partial(self.run_compiled, **params), self.name + "_")
        return f"{fn}({', '.join(ins)})"


class DebugCallback(_DebugBase):
    """``jax.debug.callback``: ``callback(*flat_args)`` for its side effect."""
    name = "debug_callback"

    def effects_of(self, params):
        return (params["effect"],)

    def run(self, args, params):
        params["callback"](*args)

    def callback_of(self, params):
        return getattr(params["callback"], "user_callback", params["callback"])

    # jax.debug.breakpoint stages a debug_callback (as JAX does) that jit lowers to
    # statements of the generated code (see debugging/breakpoint.py)
    def reserved_names(self, params):
        bp = getattr(params["callback"], "jaxlite_breakpoint", None)
        return bp.names if bp is not None else ()

    def lower_stmts(self, ctx, ins, outs, eqn):
        bp = getattr(eqn.params["callback"], "jaxlite_breakpoint", None)
        return bp.lower_stmts(ctx, ins) if bp is not None else None


class DebugPrint(_DebugBase):
    """``jax.debug.print``: formats its operands with ``fmt`` (str.format, NumPy's print
    options as they were when it was traced) and writes a line to stdout (or logs it)."""
    name = "debug_print"
    api = "jax.debug.print"

    def effects_of(self, params):
        return (ordered_debug_effect if params["ordered"] else debug_effect,)

    def run(self, args, params):
        fmt, np_opts = params["fmt"], dict(params["np_printoptions"])
        statics = dict(params["static_args"])
        leaves, it = [], iter(args)
        for i in range(len(statics) + len(args)):
            leaves.append(statics[i] if i in statics else next(it))
        c_args, c_kwargs = tree_util.tree_unflatten(params["in_tree"], leaves)
        if params["has_placeholders"]:
            with np.printoptions(**np_opts):
                msg = fmt.format(*c_args, **c_kwargs)
        else:
            msg = " ".join((fmt, *(str(a) for a in c_args)))
        record = params["logging_record"]
        if record is not None:
            import copy
            record = copy.copy(record)
            record.msg = msg
            logging.getLogger("jaxlite._src.debugging").handle(record)
        else:
            sys.stdout.write(msg + "\n")

    def callback_of(self, params):
        return None


pure_callback_p, io_callback_p = PureCallback(), IOCallback()
debug_callback_p, debug_print_p = DebugCallback(), DebugPrint()


def batch_by_vmap_method(prim, size, args, dims, vmap_method, result_avals, params, error,
                         relayout=None):
    """The batching rule of a host call (pure_callback, ffi_call) by its ``vmap_method``:
    "sequential"/"sequential_unrolled" map the call over the batch (a scan), the others call
    it once on batched operands ("expand_dims" gives unbatched operands a size-1 leading
    axis, "broadcast_all" the full batch, "legacy_vectorized" leaves them as they are).
    ``relayout(params, vmap_method, is_batched)`` adjusts parameters for a batched call;
    another method raises NotImplementedError(``error``)."""
    from jaxlite._src.prims.shape import broadcast_in_dim_p
    from jaxlite._src.core.avals import aval_of_value
    moved, is_b = _split(args, dims)
    if vmap_method in ("sequential", "sequential_unrolled"):
        unbatched = [a for a, b in zip(moved, is_b) if not b]
        batched = [a for a, b in zip(moved, is_b) if b]

        def body(u, b):
            return prim.bind(*_merge(is_b, u, b), vmap_method=vmap_method,
                             result_avals=result_avals, **params)
        outs = _scan_map(body, unbatched, batched, vmap_method == "sequential_unrolled")
        return list(outs), [0] * len(outs)
    if vmap_method not in ("legacy_vectorized", "expand_dims", "broadcast_all"):
        raise NotImplementedError(error)
    batched_avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype)
                          for a in result_avals)
    if relayout is not None:
        params = relayout(dict(params), vmap_method, is_b)
    new = list(moved)
    if vmap_method != "legacy_vectorized":
        n = size if vmap_method == "broadcast_all" else 1
        for k, (a, b) in enumerate(zip(moved, is_b)):
            if not b:
                shp = tuple(aval_of_value(a).shape)
                new[k] = broadcast_in_dim_p.bind(
                    a, shape=(n,) + shp, broadcast_dimensions=tuple(range(1, 1 + len(shp))),
                    sharding=None)
    outs = prim.bind(*new, vmap_method=vmap_method, result_avals=batched_avals, **params)
    return list(outs), [0] * len(outs)
