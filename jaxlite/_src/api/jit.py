"""``jit``: trace once per input signature, optimise the jaxpr, generate Python code, cache.

The cache key is (pytree structure, per-leaf shape/dtype/weak type, static argument values,
the config flags that affect tracing) as in JAX. Under an enclosing trace a jitted function
binds the ``jit`` call primitive, so it nests in jaxprs as JAX prints it.
"""
from __future__ import annotations

import functools
import inspect
import logging
import time
import threading
import weakref

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import (ShapeDtypeStruct, abstract_arg, aval_of_value,
                                     hitype_aval_mappings, untraced_reason)
from jaxlite._src.core.ir import typecheck
from jaxlite._src.core.primitive import compile_time_eval
from jaxlite._src.core.trace import Tracer, ctx, innermost_trace, set_current_trace
from jaxlite._src.interpreters.staging import DebugInfo, closed_jaxpr_from_trace, trace_to_jaxpr
from jaxlite._src.runtime.argnums import (as_index_tuple, as_str_tuple, infer_argnums_and_argnames,
                                     validate_argnames, validate_argnums)
from jaxlite._src.api.hi_args import call_with_hi_leaves, has_hi_leaves
from jaxlite._src.api.ref_checks import check_no_ref_outputs, check_ref_args
from jaxlite._src.prims.call import jit_p
from jaxlite._src.prims.state import AbstractRef
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.runtime import dispatch as _dispatch_hooks, guards
from jaxlite._src.runtime.dispatch import placement_of, place_output, mesh_placement, \
    on_context_mesh
from jaxlite._src.sharding.mesh import mesh_active
from jaxlite._src.api.placement import device_put
from jaxlite._src.sharding.shardings import aval_sharding
from jaxlite._src.sharding.types import typed_aval
from jaxlite._src.api.sharded_jit import (flat_out_shardings, partition_for, run_partitioned,
                                          typed_out_shardings,
                                          arg_sharding, has_constraints)
from jaxlite._src.compiler.tiers import Program
# (the code generator and passes are imported with jit, not at its first compile: the
# first compile then costs compiling the program, not loading the compiler)
from jaxlite._src.compiler.codegen import lower_jaxpr
from jaxlite._src.compiler.passes import optimize
from jaxlite._src.api.jit_fastpath import MAX_GUARDS, MISS, make_guard
from jaxlite._src.runtime.donation import (Plan, check_call, donation_mask, finish, plan,
                                           owned_value, resolve_donation, run_donating)
from jaxlite._src.traceback_util import filter_exception
from jaxlite._src import monitoring, profiler
from jaxlite._src.api.stages import (Compiled, Lowered, Traced, _ext_types, _py_scalars,
                                     _to_numpy)

__all__ = ["jit", "JitWrapped", "Lowered", "Compiled", "Traced", "disable_jit"]

logger = logging.getLogger("jaxlite")
_COMPILE_LOCK = threading.Lock()
# jax_log_compiles: each trace and compilation is logged at WARNING (DEBUG otherwise), as JAX
# logs them (its loggers are jax._src.dispatch / pxla; jaxlite's is jaxlite._src.dispatch)
compile_logger = logging.getLogger("jaxlite._src.dispatch")


_DISABLE_JIT = config._flags["jax_disable_jit"]
_PROFILING = profiler.active


def _log_compile(msg, *args):
    level = logging.WARNING if config._flags["jax_log_compiles"].value else logging.DEBUG
    if compile_logger.isEnabledFor(level):
        compile_logger.log(level, msg, *args)

# fun -> {jit options: (cache, guards)}. As in JAX, compiled specialisations belong to the
# function and its jit options, not to one ``jit(fun)`` object: ``jit(f)`` applied twice
# traces ``f`` once. Functions that cannot be weakly referenced or hashed keep a private cache.
_shared_caches = weakref.WeakKeyDictionary()


def _caches_for(fun, options):
    try:
        per_fun = _shared_caches.get(fun)
        if per_fun is None:
            per_fun = _shared_caches[fun] = {}
        return per_fun.setdefault(options, ({}, [()]))
    except TypeError:
        return {}, [()]


def _leaf_sig(x, path_fn):
    """The part of the cache key contributed by one argument leaf."""
    t = type(x)
    if t is ArrayImpl:
        v = x._value
        return (v.shape, v.dtype, x.weak_type)
    if t in _py_scalars:
        # the key of the weakly typed array it becomes (JAX: f(1.0) then f(jnp.asarray(1.0))
        # or a weak result of f trace once)
        a = aval_of_value(x)
        return (a.shape, a.dtype, a.weak_type)
    if t in _ext_types:   # a key array: its key-dtype aval
        return x.aval
    if isinstance(x, Tracer):
        a = x.aval
        s, v = getattr(a, "sharding", None), getattr(a, "vma", ())
        return a if s is None and not v else (a, s, v)
    if isinstance(x, ArrayImpl) and x._sharding is not None:
        # (the sharding in the type of an array split over Explicit mesh axes is part of
        # what the traced program depends on)
        return (x.shape, x.dtype, x.weak_type, aval_sharding(x._sharding, x.ndim))
    if isinstance(x, (np.ndarray, np.generic)):
        return (x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    if isinstance(x, ArrayImpl):
        return (x.shape, x.dtype, x.weak_type)
    if isinstance(x, ShapeDtypeStruct):
        if isinstance(x.dtype, dtypes.ExtendedDType):
            return aval_of_value(x)
        return (x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    if hasattr(x, "__jax_array__"):
        return _leaf_sig(x.__jax_array__(), path_fn)
    if t in hitype_aval_mappings:    # a registered type (a Ref): its type is the key
        why = untraced_reason(t)
        if why is None:
            return hitype_aval_mappings[t](x)
    else:
        why = None
    if why is not None:
        raise TypeError(f"Argument at path {path_fn(x)[1]} of {path_fn(x)[0]} is a "
                        f"{type(x).__name__}: {why}. Pass its value instead.")
    raise TypeError(
        f"Error interpreting argument to {path_fn(x)[0]} as an abstract array. The "
        f"problematic value is of type {t} and was passed to the function at path "
        f"{path_fn(x)[1]}.\n"
        "This typically means that a jit-wrapped function was called with a non-array "
        "argument, and this argument was not marked as static using the static_argnums or "
        "static_argnames parameters of jax.jit.")


class _Entry:
    """One specialisation: its jaxpr, output structure and compiled ``Program`` (whose
    ``fn`` the call path runs: tier 1, then tier 2 once swapped in)."""
    __slots__ = ("closed", "out_tree", "out_weak", "program", "constrained", "guard_tc",
                 "guard_kinds", "donation", "out_ext", "has_keys")

    def __init__(self, closed, out_tree):
        self.closed = closed
        self.out_tree = out_tree
        self.out_weak = [a.weak_type for a in closed.out_avals]
        self.program = None
        self.constrained = has_constraints(closed)   # asked once, not on every call
        self.guard_tc = None    # the trace context a guard was last made (or declined) under
        # the leaf types (Arrays, NumPy arrays, Python scalars) of the calls guards were made
        # (or declined) for under guard_tc: one specialisation serves f(jnp_array) and
        # f(np_array) alike, each with its own guard
        self.guard_kinds = ()
        self.donation = None    # its donation.Plan, made at the first call of a donating jit
        # The dtypes of outputs of extended dtype (key arrays, rebuilt over the data the
        # program returns), or None when there are none.
        # float0 outputs (gradients of integer inputs) leave as NumPy arrays, as in JAX.
        ext = [a.dtype if isinstance(a.dtype, dtypes.ExtendedDType) or
               a.dtype == dtypes.float0 else None for a in closed.out_avals]
        self.out_ext = ext if any(d is not None for d in ext) else None
        self.has_keys = any(isinstance(a.dtype, dtypes.ExtendedDType) for a in closed.in_avals)

    def wrap(self, outs):
        """Outputs (arrays) with those of extended dtype rebuilt over their data, and those
        of dtype float0 as NumPy arrays."""
        return [o if d is None else np.zeros(o.shape, d) if d == dtypes.float0 else
                d.from_physical(o) for o, d in zip(outs, self.out_ext)]


def _resolve_argnums(fun, static_argnums, static_argnames):
    """(static_argnums, static_argnames, signature or None) as JAX's ``resolve_argnums``: the
    half not given is inferred from the signature (argnums.py), then both are checked."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        nums = () if static_argnums is None else as_index_tuple(static_argnums)
        names = () if static_argnames is None else as_str_tuple(static_argnames)
        return tuple(sorted(set(nums))), tuple(sorted(set(names))), None
    nums, names = infer_argnums_and_argnames(sig, static_argnums, static_argnames)
    validate_argnums(sig, nums, "static_argnums")
    validate_argnames(sig, names, "static_argnames")
    return tuple(sorted(set(nums))), tuple(sorted(set(names))), sig


class JitWrapped:
    """A jit-compiled function (what ``jax.jit`` returns).

    Call it like the original function. ``lower(*args)`` gives the traced program
    (``as_text()`` is its jaxpr) and ``lower(...).compile()`` the generated code;
    ``_cache_size()`` counts compiled specialisations.
    """

    def __init__(self, fun, static_argnums=None, static_argnames=None, donate_argnums=None,
                 donate_argnames=None, inline=False, keep_unused=False, in_shardings=None,
                 out_shardings=None):
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun!r}")
        self.fun = fun
        functools.update_wrapper(self, fun, updated=())
        self.static_argnums, self.static_argnames, self._sig = _resolve_argnums(
            fun, static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = resolve_donation(
            self._sig, self.static_argnums, self.static_argnames, donate_argnums,
            donate_argnames)
        self._donates = bool(self.donate_argnums or self.donate_argnames)
        self.inline = inline
        self.keep_unused = keep_unused
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        # _guards[0]: a tuple of jit_fastpath.Guard, replaced whole (calls in other threads
        # iterate the tuple they read)
        self._cache, self._guards = _caches_for(fun, (
            self.static_argnums, self.static_argnames, self.donate_argnums,
            self.donate_argnames, inline, keep_unused, in_shardings, out_shardings))
        self._name = getattr(fun, "__name__", None) or type(fun).__name__
        self._simple = not self.static_argnums and not self.static_argnames and \
            in_shardings is None and out_shardings is None
        # calls may take the guarded fast path (jit_fastpath.py; static arguments are
        # tested there for equal values)
        self._guardable = in_shardings is None and out_shardings is None and not (
            self._donates and (self.static_argnums or self.static_argnames))
        self._parts = {}   # partitioned programs, by input layout
        self._hi = {}      # programs over the arrays of hijax arguments (api/hi_args.py)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    @property
    def __signature__(self):
        """The wrapped function's signature: ``inspect.signature`` of a jitted function
        (also with ``follow_wrapped=False``) is the function's, as in JAX."""
        return self._sig

    def __repr__(self):
        return f"<PjitFunction of {self.fun!r}>"

    # -- argument handling
    def _split(self, args, kwargs):
        """(dynamic pytree, static key) for a call."""
        if self._simple:
            return (args, kwargs), ()
        statics = []
        dyn_args = []
        n = len(args)
        for i, a in enumerate(args):
            if i in self.static_argnums or (i - n) in self.static_argnums:
                statics.append((i, _check_hashable(a)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self.static_argnames:
                statics.append((k, _check_hashable(v)))
            else:
                dyn_kwargs[k] = v
        for i in self.static_argnums:
            if i < -n:   # (a number past the arguments given is ignored, as in JAX)
                raise ValueError(
                    "Positional argument indices, e.g. for `static_argnums`, must have value "
                    "greater than or equal to -len(args) and less than len(args), but got "
                    f"value {i} for len(args) == {n}.")
        return (tuple(dyn_args), dyn_kwargs), tuple(statics)

    def _bind_statics(self, statics, dyn_args, dyn_kwargs):
        """Rebuild the full (args, kwargs) from the dynamic part and the static values."""
        args = list(dyn_args)
        kwargs = dict(dyn_kwargs)
        for k, v in statics:
            if isinstance(k, int):
                args.insert(k if k >= 0 else len(args) + k + 1, v)
            else:
                kwargs[k] = v
        return args, kwargs

    def _run_dyn(self, statics):
        """The function of the dynamic arguments (args, kwargs) with ``statics`` bound."""
        def run(dargs, dkwargs):
            args, kwargs = self._bind_statics(statics, dargs, dkwargs)
            return self.fun(*args, **kwargs)
        return run

    def _lo_jit(self, lo_fun):
        """jit of the array form of this function for hijax arguments (hi_args.py)."""
        return JitWrapped(lo_fun, inline=self.inline, keep_unused=self.keep_unused)

    def _arg_names(self, in_tree, dyn):
        try:
            paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dyn)[0]]
        except Exception:
            return None
        names = []
        params = list(self._sig.parameters) if self._sig is not None else []
        nonstatic = [p for i, p in enumerate(params) if i not in self.static_argnums]
        for p in paths:
            # paths look like "[0][1]['w']" for args, "[1]['k']" for kwargs
            rest = p
            if rest.startswith("[0]"):
                rest = rest[3:]
                idx = rest[1:rest.index("]")] if rest.startswith("[") else None
                if idx is not None and idx.isdigit() and int(idx) < len(nonstatic):
                    names.append(nonstatic[int(idx)] + rest[len(idx) + 2:])
                    continue
                names.append("args" + rest)
            elif rest.startswith("[1]"):
                rest = rest[3:]
                names.append(rest[2:rest.index("]") - 1] + rest[rest.index("]") + 1:]
                             if rest.startswith("['") else "kwargs" + rest)
            else:
                names.append(p)
        return names

    def _bad_arg(self, bad, leaves, in_tree, dyn):
        """(the function's repr, the argument path of leaf ``bad``) for the error about a
        non-array argument."""
        names = self._arg_names(in_tree, dyn) or []
        k = next((i for i, leaf in enumerate(leaves) if leaf is bad), None)
        return repr(self.fun), (names[k] if k is not None and k < len(names) else "?")

    # -- tracing and compiling
    def _trace(self, leaves, in_tree, statics, parent):
        fun = self.fun
        if config._flags["jax_no_tracing"].value:
            raise RuntimeError(f"re-tracing function {fun_description(fun)} for `jit`, but "
                               "'no_tracing' is set")
        dyn = tree_util.tree_unflatten(in_tree, leaves)
        names = self._arg_names(in_tree, dyn) or [""] * len(leaves)
        avals = [typed_aval(x, aval_of_value(x)) if isinstance(x, ArrayImpl) else
                 aval_of_value(x) for x in leaves]

        def flat_fun(*tracers):
            dargs, dkwargs = tree_util.tree_unflatten(in_tree, list(tracers))
            args, kwargs = self._bind_statics(statics, dargs, dkwargs)
            out = fun(*args, **kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            store.append(out_tree)
            return out_leaves

        store = []
        di = DebugInfo.from_function(fun, names, "jit")
        check_ref_args(leaves, names, fun, "jit")
        jaxpr, tracer_consts, consts = trace_to_jaxpr(flat_fun, avals, di, names, parent)
        check_no_ref_outputs(jaxpr, names, fun, "jit")
        closed = closed_jaxpr_from_trace(jaxpr, tracer_consts, consts)
        if config.jaxlite_debug >= 2:
            logger.warning("jaxpr for %s:\n%s", self._name, closed)
        return closed, store[0], tracer_consts

    def _entry(self, key, leaves, in_tree, statics):
        entry = self._cache.get(key)
        if entry is None:
            if config._flags["jax_explain_cache_misses"].value:
                self._explain_miss(key)
            t0 = time.perf_counter()
            with monitoring.timed_event(monitoring.JAXPR_TRACE_EVENT, self._name):
                closed, out_tree, tconsts = self._trace(leaves, in_tree, statics, None)
            if tconsts:
                # (only under ensure_compile_time_eval: the function closes over tracers
                # of a trace it suspended; the call is that trace's, not compiled now)
                return innermost_trace(tconsts)
            _log_compile("Finished tracing %s for jit in %s sec", self._name,
                         time.perf_counter() - t0)
            # (threads tracing the same call at once all use the entry stored first)
            entry = self._cache.setdefault(key, _Entry(closed, out_tree))
        return entry

    def _compile(self, entry, owned=()):
        t0 = time.perf_counter()
        n = len(entry.closed.in_avals)
        _log_compile("Compiling jit(%s) with global shapes and types %s. Argument mapping: "
                     "%s.", self._name, tuple(entry.closed.in_avals),
                     "(" + ", ".join(["UnspecifiedValue"] * n) + ("," if n == 1 else "") + ")")
        if config._flags["jax_enable_checks"].value:
            typecheck(entry.closed.jaxpr)
        with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, self._name):
            opt = optimize(entry.closed)
        if len(opt.jaxpr.invars) != len(owned):
            owned = ()
        with monitoring.timed_event(monitoring.BACKEND_COMPILE_EVENT, self._name):
            prog = Program(opt, lower_jaxpr(opt, self._name, owned_invars=owned), self._name)
        with _COMPILE_LOCK:   # (threads compiling the same entry at once: the first wins)
            if entry.program is None:
                entry.program = prog
        _log_compile("Finished jaxpr to Python code generation of jit(%s) in %s sec",
                     self._name, time.perf_counter() - t0)
        if config.jaxlite_debug >= 3:
            logger.warning("generated code for %s:\n%s", self._name, entry.program.source())
        return entry.program.fn

    def __call__(self, *args, **kwargs):
        guards = self._guards[0]
        if guards and ctx.trace is None and not _PROFILING[0] and not _DISABLE_JIT.value \
                and not mesh_active[0]:
            # Fast path: a call shaped like one already compiled (jit_fastpath.py)
            tc = config._trace_ctx_cache
            try:
                for g in guards:
                    if g.tc is tc:
                        r = g.run(args, kwargs)
                        if r is not MISS:
                            return r
            except Exception as e:   # (free until raised: hide jaxlite's frames)
                filter_exception(e)
                raise
        if _PROFILING[0] and ctx.trace is None:
            return self._call_profiled(args, kwargs)
        try:
            return self._call_slow(args, kwargs)
        except Exception as e:   # free until raised: hide jaxlite's frames (JAX's filtering)
            filter_exception(e)
            raise

    def _call_profiled(self, args, kwargs):
        """A call while jax.profiler collects a trace: recorded as one ``jit(name)`` span."""
        t0 = time.perf_counter()
        try:
            return self._call_slow(args, kwargs)
        except Exception as e:
            filter_exception(e)
            raise
        finally:
            profiler.record_span(f"jit({self._name})", t0, time.perf_counter(),
                                 cat="execute")

    def _add_guard(self, args, kwargs, leaves, entry, tc, donation=None):
        """Write the fast path of calls shaped like this one (once per specialisation,
        config and kind of leaves; a call the guards do not cover is not retried)."""
        kinds = tuple([type(x) for x in leaves])
        if entry.guard_tc is tc:
            if kinds in entry.guard_kinds:
                return
            entry.guard_kinds += (kinds,)
        else:
            entry.guard_tc, entry.guard_kinds = tc, (kinds,)
        if entry.out_ext is not None:      # key arrays out: rebuilt on the general path
            return
        g = make_guard(args, kwargs, leaves, entry, tc, donation, self.static_argnums,
                       self.static_argnames)
        if g is None:
            return
        # guards made under other flag values can never match again: drop them
        kept = [h for h in self._guards[0] if h.tc is tc]
        self._guards[0] = tuple(kept[-(MAX_GUARDS - 1):] + [g])

    def _call_slow(self, args, kwargs):
        if config._flags["jax_disable_jit"].value:
            return self.fun(*args, **kwargs)
        trace = ctx.trace
        if trace is not None and getattr(trace, "checks_floats", False):
            # jax_debug_nans/infs: run compiled, re-run without jit if an output is invalid
            return trace.jit_call(self, args, kwargs)
        dyn, statics = self._split(args, kwargs)
        if self.in_shardings is not None and ctx.trace is None:
            dyn = (device_put(dyn[0], self.in_shardings), dyn[1])
        leaves, in_tree = tree_util.tree_flatten(dyn)
        if has_hi_leaves(leaves):    # values of hijax types: the program takes their arrays
            return call_with_hi_leaves(self._lo_jit, self._hi, self._run_dyn(statics),
                                       leaves, in_tree, statics)
        trace = ctx.trace
        if trace is None and compile_time_eval.depth and \
                any(isinstance(x, Tracer) for x in leaves):
            # ensure_compile_time_eval on tracers (numpyro's argument checks under grad): the
            # call goes to the innermost trace among them, as a primitive's bind does
            return _call_in_operand_trace(self, leaves, args, kwargs)
        sig = tuple([_leaf_sig(x, lambda bad: self._bad_arg(bad, leaves, in_tree, dyn))
                     for x in leaves])
        key = (in_tree, sig, statics, config.trace_context())
        for s_ in sig:
            if type(s_) is AbstractRef:   # (refs among the arguments: each one once)
                check_ref_args(leaves, self._arg_names(in_tree, dyn), self.fun, "jit")
                break
        if trace is not None:
            return self._call_traced(key, leaves, in_tree, statics, trace)
        if guards.active[0]:
            guards.check_execution(f"jit({self._name})")
            for x in leaves:
                if isinstance(x, (np.ndarray, np.generic)) or type(x) in _py_scalars:
                    guards.check_host_to_device(x)
        entry = self._cache.get(key)
        seen = entry is not None and entry.program is not None
        if entry is None:
            entry = self._entry(key, leaves, in_tree, statics)
            if not isinstance(entry, _Entry):     # (a suspended trace the function needs)
                with set_current_trace(entry):
                    return self._call_slow(args, kwargs)
        dplan = None
        if self._donates:
            dplan = entry.donation
            if dplan is None:
                dplan = entry.donation = self._donation_plan(args, kwargs, entry)
            if dplan.donated:
                check_call(leaves, dplan)
            else:
                dplan = None
        fn = entry.program.fn if entry.program is not None else self._compile(
            entry, () if dplan is None else dplan.owned(len(leaves)))
        placed, multi = placement_of(leaves, self._name)
        if not multi and entry.has_keys:    # key arrays split over devices (their data is)
            multi = any(type(x) in _ext_types and arg_sharding(x) is not None for x in leaves)
        out_sh = typed_out_shardings(entry.closed, leaves) if self.out_shardings is None \
            else flat_out_shardings(self.out_shardings, entry.out_tree)
        ctx_placed = mesh_placement() if placed is None else None
        if seen and self._guardable and placed is None and not entry.constrained and \
                ctx_placed is None and \
                not guards.active[0] and \
                not (out_sh and any(sh is not None for sh in out_sh)):
            # (from the second call on: a function called once does not pay for a guard;
            # results typed with shardings take the general path)
            self._add_guard(args, kwargs, leaves, entry, key[3], dplan)
        if multi or (out_sh and any(s is not None and s.num_devices > 1 for s in out_sh)) or \
                entry.constrained:
            # Arrays split over several devices: the partitioned per-device program (or, for
            # layouts it cannot name on one mesh, the program op by op, each op following its
            # operands' shardings).
            part = partition_for(entry.closed, leaves, out_sh, self._parts, self.keep_unused)
            if part is not None:
                outs = run_partitioned(part, leaves)
                if dplan is not None:
                    finish(leaves, [], dplan)
                return tree_util.tree_unflatten(entry.out_tree, outs)
            from jaxlite._src.interpreters.eval import eval_jaxpr
            out = tree_util.tree_unflatten(
                entry.out_tree, eval_jaxpr(entry.closed.jaxpr, entry.closed.consts, *leaves))
            if dplan is not None:
                finish(leaves, [], dplan)
        else:
            if dplan is None:
                outs = fn(*[_to_numpy(x) for x in leaves])
            else:
                d = set(dplan.donated)
                outs = run_donating(fn, [owned_value(x, _to_numpy) if i in d else
                                         _to_numpy(x) for i, x in enumerate(leaves)], leaves,
                                    dplan)
            outs = [place_output(o, w, placed, multi) for o, w in zip(outs, entry.out_weak)]
            if entry.out_ext is not None:
                outs = entry.wrap(outs)
            if ctx_placed is not None:     # (under jax.set_mesh: on the mesh's devices)
                outs = on_context_mesh(outs)
            out = tree_util.tree_unflatten(entry.out_tree, outs)
        if self.out_shardings is not None:
            out = device_put(out, self.out_shardings)
        return out

    def _dyn_donate_argnums(self, statics):
        """The donated argument numbers counted among the dynamic (non-static) arguments."""
        if not self.static_argnums:
            return self.donate_argnums
        return tuple(d - sum(1 for s in self.static_argnums if 0 <= s < d)
                     for d in self.donate_argnums if d >= 0)

    def _donation_plan(self, args, kwargs, entry):
        """The donation ``Plan`` of a specialisation (warns about unusable donations)."""
        mask = donation_mask(args, kwargs, self.static_argnums, self.static_argnames,
                             self.donate_argnums, self.donate_argnames)
        if mask is None:
            return Plan(())
        return plan(mask, entry.closed.in_avals, entry.closed.out_avals)

    def _call_traced(self, key, leaves, in_tree, statics, trace):
        entry = self._cache.get(key)
        if entry is not None:
            closed, out_tree, tconsts = entry.closed, entry.out_tree, []
        else:
            closed, out_tree, tconsts = self._trace(leaves, in_tree, statics, trace)
            if not tconsts:
                self._cache[key] = _Entry(closed, out_tree)
        mask = None
        if self._donates:
            args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
            mask = donation_mask(args, kwargs, (), (), self._dyn_donate_argnums(statics),
                                 self.donate_argnames)
        outs = jit_p.bind(*tconsts, *leaves, jaxpr=closed, name=self._name,
                          donated_invars=(False,) * len(tconsts) + (
                              mask or (False,) * len(leaves)),
                          inline=self.inline, keep_unused=self.keep_unused)
        return tree_util.tree_unflatten(out_tree, outs)

    def _explain_miss(self, key):
        if not self._cache:
            logger.warning("TRACING CACHE MISS at %s because:\n  never seen function:\n  %s",
                           _caller(), self._describe())
            return
        best = min(self._cache, key=lambda k: _key_distance(k, key))
        reasons = _key_diff(best, key)
        logger.warning("TRACING CACHE MISS at %s because:\n  for %s\n%s", _caller(),
                       self._describe(), "\n".join("  " + r for r in reasons))

    def _describe(self):
        code = getattr(self.fun, "__code__", None)
        where = f" defined at {code.co_filename}:{code.co_firstlineno}" if code else ""
        return f"{self._name}{where}"

    def _tiers(self):
        """The tier (1 or 2) each compiled specialisation currently runs."""
        return [e.program.tier for e in self._cache.values() if e.program is not None]

    def _programs(self):
        """The compiled ``Program`` of each specialisation (tests and benchmarks use it to
        promote or wait for tier 2)."""
        return [e.program for e in self._cache.values() if e.program is not None]

    def _cache_size(self):
        """Number of compiled specialisations held by this function's cache."""
        return len(self._cache)

    def clear_cache(self):
        """Forget all compiled specialisations."""
        self._cache.clear()
        self._guards[0] = ()

    # -- AOT
    def trace(self, *args, **kwargs):
        """Trace for these arguments without compiling; returns a ``Traced`` stage."""
        dyn, statics = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten(dyn)
        shardings = _aot_shardings(self.in_shardings, dyn, leaves)
        # the tracing is shared with calls (as JAX's): lowering then calling with the same
        # argument types traces the function once
        try:
            key = (in_tree, tuple([_leaf_sig(x, lambda bad: self._bad_arg(
                bad, leaves, in_tree, dyn)) for x in leaves]), statics,
                config.trace_context())
            entry = self._cache.get(key)
        except TypeError:
            key = entry = None
        if entry is not None:
            closed, out_tree = entry.closed, entry.out_tree
        else:
            leaves = [_abstractify_leaf(x) for x in leaves]
            closed, out_tree, tconsts = self._trace(leaves, in_tree, statics, None)
            if key is not None and not tconsts:
                self._cache[key] = _Entry(closed, out_tree)
        t = Traced(self, closed, in_tree, out_tree)
        t._arg_shardings = shardings
        t._donated = donation_mask(args, kwargs, self.static_argnums, self.static_argnames,
                                   self.donate_argnums, self.donate_argnames) \
            if self._donates else None
        return t

    def lower(self, *args, **kwargs):
        """Trace and lower for these arguments (AOT); returns a ``Lowered`` stage."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        """The output shapes/dtypes as ShapeDtypeStructs, without running anything."""
        t = self.trace(*args, **kwargs)
        return tree_util.tree_unflatten(t.out_tree, [ShapeDtypeStruct(a.shape, a.dtype,
                                                                      weak_type=a.weak_type)
                                                     for a in t.jaxpr.out_avals])


def _aot_shardings(in_shardings, dyn, leaves):
    """The sharding of each argument leaf for AOT lowering (None: not split over several
    devices): jit's ``in_shardings`` (for the positional arguments, as a call places them),
    else a ShapeDtypeStruct's ``sharding`` or an Array's own."""
    flat = None
    if in_shardings is not None:
        pos = tree_util.tree_structure(dyn[0])
        flat = flat_out_shardings(in_shardings, pos) + [None] * (len(leaves) -
                                                                 pos.num_leaves)
    res = []
    for k, x in enumerate(leaves):
        s = flat[k] if flat is not None and flat[k] is not None else \
            x.sharding if isinstance(x, ShapeDtypeStruct) else arg_sharding(x)
        res.append(s if s is not None and getattr(s, "num_devices", 1) > 1 else None)
    return res


def _abstractify_leaf(x):
    aval = abstract_arg(x)
    return x if aval is None else _AbstractLeaf(aval)


class _AbstractLeaf:
    """An argument given only by its type (ShapeDtypeStruct) during AOT tracing."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


def _check_hashable(v):
    try:
        hash(v)
    except TypeError as e:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(v)}, {v}. The error was:\nTypeError: {e}\n"
            "Fix: pass a hashable value (e.g. a tuple instead of a list), or make the argument "
            "dynamic by removing it from static_argnums/static_argnames.") from None
    return v


def _key_distance(a, b):
    return sum(x != y for x, y in zip(a, b)) + (0 if len(a[1]) == len(b[1]) else 1)


def _key_diff(old, new):
    reasons = []
    if old[0] != new[0]:
        reasons.append(f"different input pytree structure: {old[0]} vs {new[0]}")
    elif old[1] != new[1]:
        for i, (x, y) in enumerate(zip(old[1], new[1])):
            if x != y:
                reasons.append(f"argument {i}: type changed from {_sig_str(x)} to "
                               f"{_sig_str(y)}")
    if old[2] != new[2]:
        reasons.append(f"static arguments changed from {old[2]} to {new[2]}")
    if old[3] != new[3]:
        changed = [f"{k}={v}" for (k, v), (_, v0) in zip(new[3], old[3]) if v != v0]
        reasons.append("config changed: " + ", ".join(changed))
    return reasons or ["unknown reason"]


def _sig_str(s):
    if isinstance(s, tuple) and len(s) == 3:
        shape, dt, weak = s
        return (f"{dtypes.short_dtype_name(dt)}[{','.join(map(str, shape))}]"
                + ("{weak_type=True}" if weak is True else ""))
    if isinstance(s, type):
        return f"Python {s.__name__} (weakly typed)"
    return str(s)


def fun_description(fun) -> str:
    """``name at file:line`` of a Python function (its repr for other callables)."""
    code = getattr(fun, "__code__", None)
    if code is None:
        return repr(fun)
    return f"{getattr(fun, '__name__', '?')} at {code.co_filename}:{code.co_firstlineno}"


def _caller():
    from jaxlite._src.core.source_info import user_frame
    f = user_frame(3)
    return str(f) if f else "<unknown>"


def _call_in_operand_trace(wrapped, leaves, args, kwargs):
    with set_current_trace(innermost_trace(leaves)):
        return wrapped._call_slow(args, kwargs)


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, keep_unused=False, device=None, backend=None, inline=False,
        abstracted_axes=None, in_shardings=None, out_shardings=None, compiler_options=None):
    """Compile ``fun``: trace it once per input signature to a jaxpr, optimise it (DCE, CSE,
    constant folding) and run generated NumPy code on later calls. A specialisation that
    proves hot is recompiled in the background to tier 2 (fused elementwise kernels, scalar
    loops compiled whole; same results) and swapped in; ``jaxlite_tier`` forces a tier.

    Args:
      fun: the function to compile; its arguments and results are pytrees of arrays.
      static_argnums / static_argnames: arguments treated as compile-time constants (must be
        hashable); a new value triggers a new trace.
      donate_argnums / donate_argnames: arguments whose buffers the call may take over (as
        JAX on CPU: the donated arrays are deleted after the call; an output of a donated
        buffer's shape and dtype is written into it).
      inline: accepted (nested jit calls are always inlined by jaxlite's compiler).
    Returns:
      A ``JitWrapped`` callable with ``lower``, ``trace``, ``eval_shape`` and ``_cache_size``.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 keep_unused=keep_unused, inline=inline,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
    return JitWrapped(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                      inline, keep_unused, in_shardings, out_shardings)


class disable_jit:
    """Context manager (and decorator) running jitted functions eagerly, op by op."""

    def __init__(self, disable: bool = True):
        self.disable = disable

    def __enter__(self):
        self._cm = config.override("jax_disable_jit", self.disable)
        self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


# -- arrays spanning processes (jax.distributed): eager ops that need other processes' data
# and device_put to another layout run as a jit, whose partitioned program moves the data.

def _eager_spanning_processes(prim, args, params):
    def one(*xs):
        return prim.bind(*xs, **params)
    return jit(one)(*args)


def _reshard_spanning_processes(x, sharding):
    return jit(lambda a: a, out_shardings=sharding)(x)


_dispatch_hooks.set_global_fallback(_eager_spanning_processes, _reshard_spanning_processes)

# A jitted function's type is named as JAX's (``jaxlib._jax.PjitFunction``): libraries tell
# jitted functions apart by it (chex's ``is_traceable``), as by its repr.
JitWrapped.__name__ = JitWrapped.__qualname__ = "PjitFunction"
PjitFunction = JitWrapped   # (the name pickle looks the class up by)
