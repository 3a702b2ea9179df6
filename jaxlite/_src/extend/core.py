"""``jax.extend.core`` and the ``jax.core`` helpers libraries use with it: mapped and
unmapped avals, the top trace, an opaque trace state, jaxpr evaluation, new equations."""
from __future__ import annotations

import weakref

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import AbstractValue, ShapedArray, aval_of_value
from jaxlite._src.core.errors import ConcretizationTypeError
from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Var, jaxprs_in_params
from jaxlite._src.core.trace import Tracer, ctx, innermost_trace
from jaxlite._src.interpreters.eval import eval_jaxpr as _eval_jaxpr

__all__ = ["mapped_aval", "unmapped_aval", "find_top_trace", "get_opaque_trace_state",
           "jaxpr_as_fun", "eval_jaxpr", "new_jaxpr_eqn", "gensym", "subjaxprs",
           "jaxprs_in_params", "primal_dtype_to_tangent_dtype", "valid_jaxtype",
           "concrete_or_error", "raise_to_shaped", "AbstractValue", "OpaqueTraceState",
           "unsafe_am_i_under_a_jit", "unsafe_am_i_under_a_vmap", "typeof_aval"]



def mapped_aval(size, axis, aval):
    """The aval of one slice of ``aval`` along its mapped dimension ``axis`` (of length
    ``size``); ``axis=None`` leaves it unchanged."""
    if axis is None:
        return aval
    shape = tuple(aval.shape)
    if not -len(shape) <= axis < len(shape) or shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval} does not have size {size}")
    axis %= len(shape)
    return ShapedArray(shape[:axis] + shape[axis + 1:], aval.dtype, aval.weak_type)


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
    """The aval of ``size`` stacked values of ``aval``, stacked along ``axis`` (None:
    unchanged)."""
    if axis is None:
        return aval
    shape = tuple(aval.shape)
    if not -len(shape) - 1 <= axis <= len(shape):
        raise ValueError(f"unmapped_aval: axis {axis} out of range for {aval}")
    axis %= len(shape) + 1
    return ShapedArray(shape[:axis] + (size,) + shape[axis:], aval.dtype, aval.weak_type)


def find_top_trace(xs):
    """The innermost trace among those owning tracers in ``xs`` and the current one."""
    return innermost_trace(xs, ctx.trace)


class OpaqueTraceState:
    """The identity of the trace current when it was taken: two states compare equal when
    taken under the same trace (libraries use it to notice a transformation in between)."""
    __slots__ = ("_ref", "convention")

    def __init__(self, trace, convention):
        self._ref = None if trace is None else weakref.ref(trace)
        self.convention = convention

    def _trace(self):
        return None if self._ref is None else self._ref()

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._ref == other._ref

    def __hash__(self):
        return hash(self._ref)

    def __repr__(self):
        t = self._trace()
        return f"OpaqueTraceState({type(t).__name__ if t is not None else 'eval'})"


def get_opaque_trace_state(convention=None):
    """An ``OpaqueTraceState`` for the current trace."""
    return OpaqueTraceState(ctx.trace, convention)


def jaxpr_as_fun(closed, *args):
    """A function evaluating the ClosedJaxpr ``closed`` on positional arguments (a list of
    outputs); with ``args`` given, the outputs of that call."""
    def fun(*a):
        return _eval_jaxpr(closed.jaxpr, closed.consts, *a)
    return fun(*args) if args else fun


def eval_jaxpr(jaxpr, consts, *args, propagate_source_info=True):
    """Evaluate ``jaxpr`` (a Jaxpr) on its constants and arguments in the current trace."""
    if isinstance(jaxpr, ClosedJaxpr):
        raise TypeError("eval_jaxpr takes a Jaxpr and its consts; for a ClosedJaxpr use "
                        "jaxpr_as_fun(closed)(*args)")
    return _eval_jaxpr(jaxpr, consts, *args)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None,
                  ctx=None):
    """A new equation applying ``primitive`` with ``params`` to ``invars``."""
    return Eqn(primitive, list(invars), dict(params), list(outvars), source_info)


def gensym(suffix=""):
    """A function making fresh variables: ``gensym()(aval)``."""
    return Var


def subjaxprs(jaxpr):
    """The jaxprs carried by the equations of ``jaxpr`` (one level down)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def primal_dtype_to_tangent_dtype(dtype):
    """The dtype of tangents of values of ``dtype`` (float0 for integers and booleans)."""
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return dtypes.float0


def valid_jaxtype(x):
    """Whether ``x`` can be an array argument of a jaxlite transformation."""
    try:
        aval_of_value(x)
    except TypeError:
        return False
    return True


def concrete_or_error(force, val, context=""):
    """``force(val)`` for a concrete ``val`` (identity when ``force`` is None); a traced
    value raises ConcretizationTypeError naming ``context``."""
    if isinstance(val, Tracer):
        raise ConcretizationTypeError(val, context)
    if force is None:
        return val
    return force(val)


def raise_to_shaped(aval, weak_type=None):
    """``aval`` itself (jaxlite's abstract values are already shaped)."""
    if weak_type is None or not isinstance(aval, ShapedArray):
        return aval
    return aval.update(weak_type=weak_type)


def typeof_aval(x):
    """The abstract value of ``x`` (an array, tracer or scalar)."""
    return aval_of_value(x)


def _traces():
    t = ctx.trace
    while t is not None:
        yield t
        t = t.parent


def unsafe_am_i_under_a_jit():
    """Whether a jit (staging) trace is active."""
    from jaxlite._src.interpreters.staging import StagingTrace
    return any(isinstance(t, StagingTrace) for t in _traces())


def unsafe_am_i_under_a_vmap():
    """Whether a vmap (batching) trace is active."""
    from jaxlite._src.interpreters.batching import BatchTrace
    return any(isinstance(t, BatchTrace) for t in _traces())



def unsafe_get_axis_names():
    """The axis names collectives can name here: those of enclosing vmaps (innermost first),
    then of the enclosing pmap/shard_map."""
    from jaxlite._src.prims.collectives import env_axes
    from jaxlite._src.runtime import collectives as rt
    names = [t.axis_name for t in _traces() if getattr(t, "axis_name", None) is not None]
    names += [n for n in env_axes() if n not in names]
    spmd = rt.current()
    if spmd is not None:
        names += [n for n in spmd.axis_names if n not in names]
    return names


def nonempty_axis_env():
    """Whether some axis name is bound (by vmap, pmap or shard_map)."""
    return bool(unsafe_get_axis_names())


class take_current_trace:
    """``with take_current_trace() as t:`` gives the current trace and runs the block with
    no trace (operations evaluate), as JAX's interpreters do around their rules."""
    __slots__ = ("_cm",)

    def __enter__(self):
        from jaxlite._src.core.trace import set_current_trace
        prev = ctx.trace
        self._cm = set_current_trace(None)
        self._cm.__enter__()
        return prev

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


class TraceTag:
    """A tag identifying a transformation's traces (all tags compare equal and hash alike,
    as in JAX: they only matter by identity to the tracers that keep them)."""

    def __hash__(self):
        return hash(TraceTag)

    def __eq__(self, other):
        return isinstance(other, TraceTag)


def call_impl(f, *args, **params):
    """The implementation of a call primitive: call the WrappedFun ``f`` on ``args``
    (``params`` parameterize the primitive, not the function)."""
    del params
    return f.call_wrapped(*args)


def _array_types():
    from jaxlite._src.runtime.array import ArrayImpl
    scalars = {np.dtype(n).type for n in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                          "uint16", "uint32", "uint64", "float16", "float32",
                                          "float64", "complex64", "complex128")}
    return {np.ndarray, ArrayImpl, dtypes.bfloat16.type} | scalars


array_types = _array_types()
no_effects = frozenset()


def _effects_type():
    from typing import Set
    from jaxlite._src.prims.callback import Effect
    return Set[Effect]


Effects = _effects_type()   # (JAX's type of a set of effects)
