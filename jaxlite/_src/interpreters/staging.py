"""Staging: trace a Python function into a jaxpr (used by jit, make_jaxpr, eval_shape)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import (ShapeDtypeStruct, ShapedArray, aval_of_value,
                                     hitype_aval_mappings, untraced_reason)
from jaxlite._src.core.primitive import check_extended, compile_time_eval
from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from jaxlite._src.core.source_info import user_frame
from jaxlite._src.core.trace import Trace, Tracer, check_leaks, set_current_trace
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.types import out_types, typed_aval, typing_on
from jaxlite._src.sharding import vma

__all__ = ["StagingTrace", "StagingTracer", "trace_to_jaxpr", "DebugInfo"]

_py_scalars = {int, float, complex, bool}


class DebugInfo:
    """What a traced function was: its name, source location and argument names."""
    __slots__ = ("func_name", "func_src", "arg_names", "traced_for")

    def __init__(self, func_name, func_src, arg_names, traced_for="jit"):
        self.func_name = func_name
        self.func_src = func_src
        self.arg_names = arg_names
        self.traced_for = traced_for

    @classmethod
    def from_function(cls, fun, arg_names, traced_for="jit"):
        name = getattr(fun, "__name__", None) or type(fun).__name__
        code = getattr(fun, "__code__", None)
        src = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"
        return cls(name, src, arg_names, traced_for)


class StagingTracer(Tracer):
    """A tracer standing for a jaxpr variable being built by a StagingTrace."""
    __slots__ = ("var", "source")

    def __init__(self, trace, var, source=None):
        self._trace = trace
        self.var = var
        self.source = source

    @property
    def aval(self):
        return self.var.aval

    def _provenance(self):
        return self._trace.provenance(self)


class StagingTrace(Trace):
    """Records every primitive applied to its tracers as an equation of a jaxpr."""
    stages = True
    __slots__ = ("eqns", "invars", "constvars", "const_vals", "_const_ids", "debug_info",
                 "_var_eqn", "tracer_consts", "_tracer_const_ids", "arg_paths")

    def __init__(self, parent=None, debug_info=None):
        super().__init__(parent)
        self.eqns = []
        self.invars = []
        self.constvars = []
        self.const_vals = []
        self._const_ids = {}
        self.tracer_consts = []      # tracers of enclosing traces captured by closure
        self._tracer_const_ids = {}
        self.debug_info = debug_info
        self._var_eqn = {}
        self.arg_paths = []

    def new_arg(self, aval, path=""):
        """A tracer for a new input variable with abstract value ``aval``."""
        v = Var(aval)
        self.invars.append(v)
        self.arg_paths.append(path)
        return StagingTracer(self, v)

    def to_atom(self, x):
        """The Var or Literal standing for ``x`` in the jaxpr being built."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x.var
            if x._trace.is_ancestor_of(self.parent) or compile_time_eval.holds(x._trace):
                # (a tracer of an enclosing trace, or of one ensure_compile_time_eval
                # suspended: a constant the caller passes in)
                key = id(x)
                v = self._tracer_const_ids.get(key)
                if v is None:
                    v = Var(x.aval)
                    self._tracer_const_ids[key] = v
                    self.tracer_consts.append((x, v))
                return v
            self.leaked(x)
        t = type(x)
        if t in _py_scalars:
            aval = aval_of_value(x)
            return Literal(np.asarray(x, aval.dtype), aval, x)
        if t is ArrayImpl or isinstance(x, (ArrayImpl, np.ndarray, np.generic)):
            aval = aval_of_value(x)
            if isinstance(x, ArrayImpl):
                if x._sharding is not None:
                    aval = typed_aval(x, aval)
                # an array spanning processes stays itself: its value is not all here
                val = x._value if x.is_fully_addressable or x.is_fully_replicated else x
            else:
                val = np.asarray(x, aval.dtype)
            if aval.shape == () and (not isinstance(x, ArrayImpl)
                                     or getattr(x, "_literal", False)):
                # (as JAX: NumPy scalars, and arrays made while staging, are inlined; a
                # jax.Array made outside, even 0-d, is a constant input of the jaxpr)
                return Literal(val, aval)
            key = id(x)
            hit = self._const_ids.get(key)
            if hit is not None:
                return hit[1]
            v = Var(aval)
            self._const_ids[key] = (x, v)   # keep x alive so its id stays unique
            self.constvars.append(v)
            # (a 0-d array stays itself: re-staging the jaxpr with its consts keeps its weak
            # type and takes it as a constant again, as it was here)
            self.const_vals.append(x if aval.shape == () and type(x) is ArrayImpl else val)
            return v
        if t is ShapeDtypeStruct:
            # as JAX: a constant of the struct's type with no value (eval_shape and
            # make_jaxpr take it; running the program raises, compiler/passes.py)
            key = id(x)
            hit = self._const_ids.get(key)
            if hit is not None:
                return hit[1]
            v = Var(ShapedArray(tuple(x.shape), x.dtype, bool(x.weak_type)))
            self._const_ids[key] = (x, v)
            self.constvars.append(v)
            self.const_vals.append(x)
            return v
        if t in dtypes.extended_array_types:
            # a concrete key array: a constant of its extended type (the compiler's
            # physical pass turns it into its data)
            key = id(x)
            hit = self._const_ids.get(key)
            if hit is not None:
                return hit[1]
            v = Var(x.aval)
            self._const_ids[key] = (x, v)
            self.constvars.append(v)
            self.const_vals.append(x)
            return v
        if hasattr(x, "__jax_array__"):
            return self.to_atom(x.__jax_array__())
        if t in hitype_aval_mappings and untraced_reason(t) is None:
            # a value of a registered type that programs can hold (a jax.new_ref Ref): a
            # constant of its type, whose value is the object itself (its buffer at run time)
            key = id(x)
            hit = self._const_ids.get(key)
            if hit is not None:
                return hit[1]
            v = Var(hitype_aval_mappings[t](x))
            self._const_ids[key] = (x, v)
            self.constvars.append(v)
            self.const_vals.append(x)
            return v
        raise TypeError(f"Value {x!r} of type {t.__name__} is not a valid JAX type")

    def process_primitive(self, prim, args, params):
        atoms = [self.to_atom(a) for a in args]
        if not prim.accepts_extended:
            for a in atoms:
                if isinstance(a.aval.dtype, dtypes.ExtendedDType):
                    check_extended(prim, [b.aval for b in atoms], params)
                    break
        if prim.fold is not None and atoms and all(type(a) is Literal for a in atoms):
            out = prim.fold(*[a.val for a in atoms], **params)
            if out is not None:
                return out
        in_avals = [a.aval for a in atoms]
        out = prim.abstract_eval(*in_avals, **params)
        if _types_needed(in_avals, params) and typing_on():
            out = out_types(prim, in_avals, params, out)
        if vma.current() is not None:
            out = vma.out_vmas(prim, in_avals, params, out)
        src = user_frame(3)
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
        else:
            outvars = [Var(out)]
        eqn = Eqn(prim, atoms, params, outvars, src)
        self.eqns.append(eqn)
        for v in outvars:
            self._var_eqn[v] = eqn
        if prim.multiple_results:
            return [StagingTracer(self, v, src) for v in outvars]
        return StagingTracer(self, outvars[0], src)

    def stage_known(self, prim, args, params, out_aval, src):
        """Record ``prim`` on ``args`` with its result type already known (``out_aval``, a
        single result): for compiler passes rebuilding a program equation by equation (the
        partitioner), which know each result's type from the program they rebuild and need
        not run the primitive's type rule again. Returns the result's tracer."""
        atoms = [self.to_atom(a) for a in args]
        v = Var(out_aval)
        eqn = Eqn(prim, atoms, params, [v], src)
        self.eqns.append(eqn)
        self._var_eqn[v] = eqn
        return StagingTracer(self, v, src)

    def to_jaxpr(self, outs):
        """Finish: the ClosedJaxpr computing ``outs`` (a list of tracers/values)."""
        outvars = [self.to_atom(o) for o in outs]
        constvars = [v for _, v in self.tracer_consts] + self.constvars
        jaxpr = Jaxpr(constvars, self.invars, self.eqns, outvars, self.debug_info)
        return jaxpr

    def provenance(self, tracer) -> str:
        """Explain which arguments a tracer depends on, for concretization errors."""
        deps = self._arg_deps(tracer.var)
        di = self.debug_info
        lines = []
        if tracer.source is not None:
            lines.append(f"The traced value was created on line {tracer.source}:\n"
                         f"    {tracer.source.line_text()}")
        if di is not None:
            lines.append(f"The error occurred while tracing the function {di.func_name} at "
                         f"{di.func_src} for {di.traced_for}.")
        names = [self.arg_paths[i] for i in deps if self.arg_paths[i]]
        if names:
            lines.append("This concrete value was not available in Python because it depends "
                         f"on the value of the argument{'s' if len(names) > 1 else ''} "
                         + ", ".join(f"{n}" for n in names) + ".")
        return "\n".join(lines)

    def _inputs_reached(self, var, inputs):
        """The members of ``inputs`` (vars) that ``var`` is computed from."""
        seen, stack, found = set(), [var], set()
        while stack:
            v = stack.pop()
            if v in seen or not isinstance(v, Var):
                continue
            seen.add(v)
            if v in inputs:
                found.add(v)
                continue
            eqn = self._var_eqn.get(v)
            if eqn is not None:
                stack.extend(eqn.invars)
        return found

    def _arg_deps(self, var):
        index = {v: i for i, v in enumerate(self.invars)}
        return sorted(index[v] for v in self._inputs_reached(var, index))

    def is_input_free(self, var):
        """Whether ``var`` depends on no argument of the traced function and on no value
        captured from an enclosing trace (it would be a compile-time constant)."""
        inputs = set(self.invars) | {v for _, v in self.tracer_consts}
        return not self._inputs_reached(var, inputs)


def _types_needed(avals, params):
    """Whether a result sharding must be typed: an operand carries a sharding in its type,
    or the equation names one (``out_sharding``)."""
    for a in avals:
        if getattr(a, "sharding", None) is not None:
            return True
    return params.get("out_sharding") is not None or params.get("sharding") is not None


def trace_to_jaxpr(fun, in_avals, debug_info=None, arg_paths=None, parent=None,
                   originals=False):
    """Trace ``fun(*tracers)`` with one tracer per aval; returns (jaxpr, consts, outs_tracers).

    ``fun`` takes and returns flat lists. The ClosedJaxpr's constvars come first: tracers of
    enclosing traces captured by closure (returned as ``tracer_consts``), then array constants
    (their NumPy values; with ``originals`` the arrays the function closed over, as JAX's
    make_jaxpr gives them).
    """
    from jaxlite._src.core.trace import ctx
    parent = ctx.trace if parent is None else parent
    trace = StagingTrace(parent, debug_info)
    paths = arg_paths or [""] * len(in_avals)
    tracers = [trace.new_arg(a, p) for a, p in zip(in_avals, paths)]
    with set_current_trace(trace):
        outs = fun(*tracers)
    jaxpr = trace.to_jaxpr(outs)
    del tracers, outs
    check_leaks(trace, "DynamicJaxprTrace")
    tracer_consts = [t for t, _ in trace.tracer_consts]
    if originals:
        objs = {v: x for x, v in trace._const_ids.values()}
        vals = [o if isinstance(o := objs.get(v), ArrayImpl) and val is o._value else val
                for v, val in zip(trace.constvars, trace.const_vals)]
    else:
        vals = trace.const_vals
    return jaxpr, tracer_consts, vals


def closed_jaxpr_from_trace(jaxpr, tracer_consts, const_vals):
    """Turn the result of trace_to_jaxpr into (ClosedJaxpr, tracer_consts): tracer constants
    become leading invars so the caller passes them explicitly."""
    n = len(tracer_consts)
    if n:
        jaxpr = jaxpr.replace(constvars=jaxpr.constvars[n:],
                              invars=jaxpr.constvars[:n] + jaxpr.invars)
    return ClosedJaxpr(jaxpr, const_vals)
