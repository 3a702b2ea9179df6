"""Stackless tracing: the current trace, the Trace and Tracer base classes.

The current trace lives in a thread-local context. ``None`` means evaluation: primitives run
their NumPy ``impl`` directly. A transformation installs its trace for the duration of the
user function; ``Primitive.bind`` hands every primitive to the current trace, which lifts the
arguments it does not own and applies its rule, running that rule under its parent trace.
"""
from __future__ import annotations

import threading

from jaxlite._src.core import errors

__all__ = ["Trace", "Tracer", "current_trace", "set_current_trace", "describe_tracer",
           "new_trace_context"]


class _Context(threading.local):
    trace = None


ctx = _Context()


def current_trace():
    """The innermost active trace, or None when evaluating eagerly."""
    return ctx.trace


class set_current_trace:
    """Context manager installing ``trace`` as the current trace (None: eager evaluation)."""
    __slots__ = ("trace", "prev")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.prev = ctx.trace
        ctx.trace = self.trace
        return self.trace

    def __exit__(self, *exc):
        ctx.trace = self.prev
        return False


new_trace_context = set_current_trace


class Trace:
    """Base class of a transformation's trace.

    Subclasses implement ``process_primitive(prim, args, params)``; ``parent`` is the trace
    that was current when this one started (None for eager evaluation).
    """
    __slots__ = ("parent", "__weakref__")

    def __init__(self, parent=None):
        self.parent = parent

    def process_primitive(self, prim, args, params):
        raise NotImplementedError

    @property
    def main(self):
        """The identity of this transformation (JAX's older ``trace.main``, which libraries
        compare with ``is`` to tell their own tracers from others')."""
        return self

    def is_ancestor_of(self, other) -> bool:
        """True if this trace is ``other`` or encloses it."""
        t = other
        while t is not None:
            if t is self:
                return True
            t = t.parent
        return False

    def leaked(self, tracer):
        """Raise the error for a tracer used outside the transformation that created it."""
        raise errors.UnexpectedTracerError(
            f"Encountered an unexpected tracer: {describe_tracer(tracer)}\n"
            "A tracer from a transformation (jit, grad, vmap, ...) escaped its scope, usually "
            "by being stored in a global variable, a closure or an object attribute during "
            "tracing and then used afterwards. Return such values from the transformed "
            "function instead of saving them as side effects.")


class Tracer:
    """A stand-in for an array while a transformation traces a function.

    It has an abstract value (``aval``: shape, dtype, weak type) and belongs to one trace.
    Array methods and operators are installed on this class by jaxlite.numpy, so code written
    for arrays works on tracers. Converting a tracer to a concrete Python or NumPy value
    raises the ConcretizationTypeError family with the user's line and the fix.
    """
    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    @property
    def weak_type(self):
        return self.aval.weak_type

    def __getattr__(self, name):
        # Reached only for names the class does not define: an abstract value's class may
        # give its tracers methods and properties (``aval_method``/``aval_property``).
        if name.startswith("__") or name in Tracer.__slots__:
            raise AttributeError(name)
        from jaxlite._src.core.avals import aval_method, aval_property
        try:
            aval = self.aval
        except (AttributeError, NotImplementedError):
            aval = None
        attr = getattr(type(aval), name, None)
        if type(attr) is aval_property:
            return attr.fget(self)
        if type(attr) is aval_method:
            return attr.fun.__get__(self, type(self))
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __bool__(self):
        raise errors.TracerBoolConversionError(self)

    def __int__(self):
        raise errors.ConcretizationTypeError(
            self, "The problem arose with the `int` function. Mark the argument static "
                  "(static_argnums) or avoid converting traced values to Python ints.")

    def __float__(self):
        raise errors.ConcretizationTypeError(
            self, "The problem arose with the `float` function. Keep the value as an array "
                  "inside jit, or mark the argument static (static_argnums).")

    def __complex__(self):
        raise errors.ConcretizationTypeError(
            self, "The problem arose with the `complex` function.")

    def __index__(self):
        raise errors.TracerIntegerConversionError(self)

    def __array__(self, dtype=None, copy=None):
        raise errors.TracerArrayConversionError(self)

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def __setitem__(self, idx, value):
        raise TypeError(
            f"{type(self).__name__!r} object does not support item assignment. JAX arrays are "
            "immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another "
            ".at[] method: https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    def item(self, *args):
        raise errors.ConcretizationTypeError(
            self, "The problem arose with the `item` method.")

    def tolist(self):
        raise errors.ConcretizationTypeError(
            self, "The problem arose with the `tolist` method.")

    def _provenance(self) -> str:
        return ""

    def __repr__(self):
        return f"Traced<{self.aval.str_short(short_dtypes=False)}>with<{type(self._trace).__name__}>"


def describe_tracer(tracer) -> str:
    """A description of a tracer for error messages: its type, where it was created and
    which argument of the traced function it depends on."""
    try:
        head = f"traced array with shape {tracer.aval.str_short(short_dtypes=False)}"
    except Exception:  # pragma: no cover - defensive
        head = repr(tracer)
    extra = tracer._provenance() if isinstance(tracer, Tracer) else ""
    return head + (".\n" + extra if extra else ".")
