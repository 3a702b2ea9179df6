"""Stackless tracing: the current trace, the Trace and Tracer base classes.

The current trace lives in a thread-local context. ``None`` means evaluation: primitives run
their NumPy ``impl`` directly. A transformation installs its trace for the duration of the
user function; ``Primitive.bind`` hands every primitive to the current trace, which lifts the
arguments it does not own and applies its rule, running that rule under its parent trace.
"""
from __future__ import annotations

import threading

from jaxlite._src.config import config
from jaxlite._src.core import errors

_CHECK_LEAKS = config._flags["jax_check_tracer_leaks"]

__all__ = ["Trace", "Tracer", "current_trace", "set_current_trace", "describe_tracer", "check_leaks",
           "innermost_trace", "staging_active",
           "new_trace_context"]


class _Context(threading.local):
    trace = None


ctx = _Context()


def current_trace():
    """The innermost active trace, or None when evaluating eagerly."""
    return ctx.trace


def staging_active() -> bool:
    """True while a function is being staged out into a jaxpr (the current trace, or one
    enclosing it, records equations): values made then without a primitive, such as the
    scalars jnp's promotion converts, are literals of the jaxpr as in JAX, where they stay
    Python/NumPy scalars; arrays made outside any staging are its constants."""
    t = ctx.trace
    while t is not None:
        if t.stages:
            return True
        t = t.parent
    return False


# staging_somewhere[0]: how many staging traces are installed as current now, in any thread
# (a staging trace stays an ancestor of the traces installed within it). Zero means no
# thread is staging, so array creation can skip ``staging_active`` (a thread-local read).
staging_somewhere = [0]
_count_lock = threading.Lock()


class set_current_trace:
    """Context manager installing ``trace`` as the current trace (None: eager evaluation)."""
    __slots__ = ("trace", "prev")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.prev = ctx.trace
        t = self.trace
        if t is not None and t.stages:
            with _count_lock:
                staging_somewhere[0] += 1
        ctx.trace = t
        return t

    def __exit__(self, *exc):
        ctx.trace = self.prev
        t = self.trace
        if t is not None and t.stages:
            with _count_lock:
                staging_somewhere[0] -= 1
        return False


new_trace_context = set_current_trace


class Trace:
    """Base class of a transformation's trace.

    Subclasses implement ``process_primitive(prim, args, params)``; ``parent`` is the trace
    that was current when this one started (None for eager evaluation).
    """
    __slots__ = ("parent", "__weakref__")
    stages = False   # (True for traces that record a jaxpr: see staging_active)

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

    # unhashable as in JAX: ``__hash__ = None``, so ``isinstance(x, collections.abc.Hashable)``
    # is False (libraries such as funsor key their caches on that) and ``hash(x)`` raises
    # TypeError "unhashable type: ..."
    __hash__ = None

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


def innermost_trace(values, top=None):
    """The innermost trace among ``top`` and the traces of the tracers in ``values`` (None
    when there are none)."""
    for x in values:
        if isinstance(x, Tracer):
            t = x._trace
            if top is None or (t is not top and top.is_ancestor_of(t)):
                top = t
    return top


def describe_tracer(tracer) -> str:
    """A description of a tracer for error messages: its type, where it was created and
    which argument of the traced function it depends on."""
    try:
        head = f"traced array with shape {tracer.aval.str_short(short_dtypes=False)}"
    except Exception:  # pragma: no cover - defensive
        head = repr(tracer)
    extra = tracer._provenance() if isinstance(tracer, Tracer) else ""
    return head + (".\n" + extra if extra else ".")


def _describe_holder(obj, target, seen) -> str:
    """How ``obj`` refers to ``target``: ``<list 123>[0]``, ``<dict 4>['k']``, ``mod.name``."""
    import types
    if isinstance(obj, dict):
        key = next((k for k, v in obj.items() if v is target), "?")
        if obj.get("__name__") and isinstance(obj.get("__name__"), str) and \
                any(isinstance(m, types.ModuleType) and m.__dict__ is obj
                    for m in _modules_named(obj["__name__"])):
            return f"{obj['__name__']}.{key}"
        return f"<dict {id(obj)}>[{key!r}]"
    if isinstance(obj, (list, tuple)):
        i = next((i for i, v in enumerate(obj) if v is target), "?")
        return f"<{type(obj).__name__} {id(obj)}>[{i}]"
    return f"<{type(obj).__name__} {id(obj)}>"


def _modules_named(name):
    import sys
    m = sys.modules.get(name)
    return [m] if m is not None else []


def check_leaks(trace, what: str):
    """With ``jax_check_tracer_leaks`` on, raise JAX's ``Exception("Leaked trace ...")`` when
    some tracer of ``trace`` (which has just finished) is still referenced from outside it,
    naming the objects that hold it (up to two levels: ``<list 1>[0]`` held by
    ``__main__.leak``). ``what`` names the transformation in the message."""
    if not _CHECK_LEAKS.value:
        return
    import gc
    import inspect
    gc.collect()
    objs = gc.get_objects()
    # (type(), not isinstance: a weakref proxy among the objects may have a dead referent)
    leaked = [o for o in objs if issubclass(type(o), Tracer) and o._trace is trace]
    del objs
    if not leaked:
        return
    mine = {id(leaked)}
    frame_ids = set()
    f = inspect.currentframe()
    while f is not None:
        frame_ids.add(id(f))
        f = f.f_back
    lines = []
    for t in leaked:
        holders = [r for r in gc.get_referrers(t)
                   if id(r) not in mine and id(r) not in frame_ids and
                   not isinstance(r, Tracer) and r is not trace and
                   not inspect.isframe(r)]
        if not holders:
            continue
        desc = [f"{t!r}"]
        prov = t._provenance()
        if prov:
            desc.append(prov)
        for h in holders[:3]:
            desc.append(f"<{type(t).__name__} {id(t)}> is referred to by "
                        f"{_describe_holder(h, t, mine)}")
            ups = [u for u in gc.get_referrers(h) if id(u) not in frame_ids and
                   id(u) not in mine and not inspect.isframe(u) and u is not holders]
            for u in ups[:2]:
                desc.append(f"{_describe_holder(h, t, mine).split('[')[0]} is referred to by "
                            f"{_describe_holder(u, h, mine)}")
        lines.append("\n".join(desc))
    del leaked
    if lines:
        raise Exception(f"Leaked trace {what}. Leaked tracer(s):\n\n" + "\n\n".join(lines))
