"""JAX's extension API for primitives: ``Primitive("name")`` with ``def_impl`` /
``def_abstract_eval``, and the rule tables ``ad.primitive_jvps``, ``ad.primitive_transposes``,
``batching.primitive_batchers`` (and its ``axis_``/``fancy_`` forms) and
``mlir.register_lowering``.

jaxlite keeps every rule of a primitive on the primitive's class (DESIGN.md). This module is a
thin adapter on top of that: ``Primitive("name")`` makes a new class for that one primitive
(a subclass of jaxlite's Primitive) and returns its instance; ``def_impl`` and friends set
methods of that class; the tables are views whose ``__setitem__`` installs the rule on the
primitive's class (in jaxlite's calling convention) and whose ``__getitem__`` reads it back in
JAX's. So a primitive defined this way traces, jits, differentiates and batches through the
same code paths as jaxlite's own, and the tables also read jaxlite's built-in primitives.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import primitive as core_primitive
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE
from jaxlite._src.core.trace import Tracer, set_current_trace
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Primitive", "RuleTable", "primitive_jvps", "primitive_transposes",
           "primitive_batchers", "axis_primitive_batchers", "fancy_primitive_batchers",
           "AxisData", "LoweringFun", "lower_fun", "register_lowering", "to_aval"]


def to_aval(a):
    """A jaxlite ShapedArray for what an abstract-evaluation rule returned (a ShapedArray,
    or anything with ``shape`` and ``dtype`` such as a ShapeDtypeStruct)."""
    if type(a) is ShapedArray:
        return a
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return ShapedArray(a.shape, a.dtype, getattr(a, "weak_type", False))
    raise TypeError(f"an abstract evaluation rule returned {a!r} ({type(a).__name__}); it "
                    "must return a jax.core.ShapedArray (or a list of them with "
                    "multiple_results=True).")


def _wrap_in(v):
    return v if isinstance(v, ArrayImpl) else ArrayImpl(np.asarray(v), False)


def _to_numpy(x, name):
    if isinstance(x, ArrayImpl):
        return x._value
    if isinstance(x, (np.ndarray, np.generic, int, float, complex, bool)):
        return np.asarray(x)
    if hasattr(x, "__jax_array__"):
        return _to_numpy(x.__jax_array__(), name)
    raise TypeError(f"the implementation of primitive {name!r} returned {type(x).__name__}, "
                    "not an array")


class _PrimitiveMeta(type):
    """``isinstance(p, jax.extend.core.Primitive)`` holds for every jaxlite primitive, as
    every JAX primitive is an instance of that class."""

    def __instancecheck__(cls, obj):
        if cls is Primitive:
            return isinstance(obj, core_primitive.Primitive)
        return super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub):
        if cls is Primitive:
            return issubclass(sub, core_primitive.Primitive)
        return super().__subclasscheck__(sub)


# Attributes set through an instance that belong to the primitive's class.
_CLASS_ATTRS = frozenset({"multiple_results", "call_primitive", "map_primitive"})


class Primitive(core_primitive.Primitive, metaclass=_PrimitiveMeta):
    """A primitive defined through JAX's extension API (``jax.extend.core.Primitive``).

    ``Primitive("name")`` creates a class of its own for this primitive and returns its only
    instance; ``def_impl``, ``def_abstract_eval`` and the ``ad``/``batching``/``mlir`` tables
    fill that class's rule methods. Unlike jaxlite's built-in primitives it is not entered in
    the by-name registry (libraries may reuse a name).
    """
    call_primitive = False
    map_primitive = False
    weak_rule = "never"
    _impl_fn = None
    _abstract_fn = None
    _effectful_abstract = False
    _lowering = None
    _mlir_rule = None

    def __new__(cls, name, *args, **kwargs):
        if not isinstance(name, str):
            raise TypeError(f"Primitive(name): the name must be a string, got {name!r}")
        own = type(f"{cls.__name__}[{name}]", (cls,),
                   {"name": name, "__module__": cls.__module__, "_own": True})
        return core_primitive.Primitive.__new__(own)

    def __init__(self, name, *args, **kwargs):  # noqa: D107 - not registered by name
        pass

    def __setattr__(self, key, value):
        if key in _CLASS_ATTRS:
            setattr(type(self), key, value)
        else:
            object.__setattr__(self, key, value)

    def __repr__(self):
        return self.name

    # -- JAX's definition methods
    def def_impl(self, impl):
        """Set the eager implementation: ``impl(*arrays, **params)`` returning an array (a
        sequence of arrays with ``multiple_results``). Returns ``impl``."""
        type(self)._impl_fn = staticmethod(impl)
        return impl

    def def_abstract_eval(self, abstract_eval):
        """Set the abstract evaluation rule: ``abstract_eval(*avals, **params)`` returning a
        ``ShapedArray`` (a sequence of them with ``multiple_results``)."""
        type(self)._abstract_fn = staticmethod(abstract_eval)
        type(self)._effectful_abstract = False
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        """As ``def_abstract_eval``, for a rule returning ``(avals, effects)``; a primitive
        with effects is never removed or merged by the compiler."""
        type(self)._abstract_fn = staticmethod(effectful_abstract_eval)
        type(self)._effectful_abstract = True
        return effectful_abstract_eval

    def bind_with_trace(self, trace, args, params):
        """Apply the primitive within ``trace`` (None: evaluate eagerly)."""
        with set_current_trace(trace):
            return self.bind(*args, **params)

    def get_bind_params(self, params):
        """The parameters to re-bind an equation with (JAX 0.10's protocol: a dict)."""
        return dict(params)

    # -- jaxlite's rules, from the definitions above
    def impl(self, *args, **params):
        """Run the definition on NumPy operands (eager execution and compiled code)."""
        fn = self._impl_fn
        if fn is None:
            if self._lowering is None:
                msg = (f"Evaluation rule for {self.name!r} not implemented: give the "
                       "primitive an implementation with def_impl")
                if self._mlir_rule is not None:
                    msg += (" (its lowering is an MLIR rule, which jaxlite cannot run; "
                            "register mlir.lower_fun(fn, multiple_results=...) instead)")
                raise NotImplementedError(msg + ".")
            fn = self._lowering.fun
        if any(isinstance(a, Tracer) for a in args):
            # called on traced values (as libraries call ``prim.impl`` to inline a
            # primitive while tracing): the definition runs on them, as JAX's impl does
            return fn(*args, **params)
        with set_current_trace(None):
            out = fn(*[_wrap_in(a) for a in args], **params)
        if self.multiple_results:
            return [_to_numpy(o, self.name) for o in out]
        return _to_numpy(out, self.name)

    def abstract_eval(self, *avals, **params):
        fn = self._abstract_fn
        if fn is None:
            raise NotImplementedError(
                f"Abstract evaluation for {self.name!r} not implemented: give the primitive "
                "an abstract evaluation rule with def_abstract_eval.")
        out = fn(*avals, **params)
        if self._effectful_abstract:
            out, effects = out
            if effects:
                type(self).effectful = True
        if self.multiple_results:
            return [to_aval(a) for a in out]
        return to_aval(out)

    def lower_stmts(self, ctx, ins, outs, eqn):
        """jit compiles the registered lowering when it is one jaxlite can run (a traceable
        ``lower_fun`` function, or an MLIR rule emitting a Python callback), running it at
        compile time as JAX does; otherwise None (``lower_py`` below)."""
        from jaxlite._src.extend.lowering import lower_extension
        return lower_extension(self, ctx, ins, outs, eqn)

    def inline_body(self, eqn):
        """The closed jaxpr compiled code may run in place of ``eqn`` (its traced lower_fun
        function), or None."""
        if self._lowering is None:
            return None
        from jaxlite._src.extend.lowering import traced_lowering
        return traced_lowering(self, eqn)

    def lower_py(self, ctx, ins, **params):
        """Compiled code calls ``impl`` (the definition, or the lower_fun function)."""
        if self._lowering is not None and self._impl_fn is not None:
            # JAX compiles the lowering, not the eager implementation
            f = _LoweredCall(self, params)
            return f"{ctx.bind_global(f, 'ext_')}({', '.join(ins)})"
        return None


class _LoweredCall:
    """The lower_fun function of an extension primitive, called from compiled code on
    NumPy operands."""
    __slots__ = ("prim", "params")

    def __init__(self, prim, params):
        self.prim = prim
        self.params = params

    def __call__(self, *args):
        prim = self.prim
        with set_current_trace(None):
            out = prim._lowering.fun(*[_wrap_in(a) for a in args], **self.params)
        if prim.multiple_results:
            return [_to_numpy(o, prim.name) for o in out]
        return _to_numpy(out, prim.name)


# ----------------------------------------------------------------------------- rule tables

def _check_prim(prim, table):
    if not isinstance(prim, core_primitive.Primitive):
        raise TypeError(f"{table}[...]: expected a primitive, got {prim!r} "
                        f"({type(prim).__name__})")


class RuleTable:
    """A mapping view ``{primitive: rule}`` onto one rule method of primitive classes.

    ``table[prim] = rule`` converts ``rule`` from JAX's calling convention to jaxlite's and
    installs it on ``type(prim)``; ``table[prim]`` returns the class's rule in JAX's
    convention (for extension and built-in primitives alike); ``prim in table`` says whether
    the primitive has the rule.
    """

    def __init__(self, name, slot, to_jaxlite, from_jaxlite):
        self.name = name
        self.slot = slot
        self._to = to_jaxlite
        self._from = from_jaxlite

    def __setitem__(self, prim, rule):
        _check_prim(prim, self.name)
        cls = type(prim)
        if not getattr(cls, "_own", False):
            # a built-in primitive: its instance gets the override (its class may be shared)
            object.__setattr__(prim, self.slot, self._to(prim, rule).__get__(prim))
        else:
            setattr(cls, self.slot, self._to(prim, rule))
        jax_rules = prim.__dict__.get("_jax_rules")
        if jax_rules is None:
            jax_rules = {}
            object.__setattr__(prim, "_jax_rules", jax_rules)
        jax_rules[self.name] = rule

    def __getitem__(self, prim):
        _check_prim(prim, self.name)
        given = prim.__dict__.get("_jax_rules", {}).get(self.name)
        if given is not None:
            return given
        rule = getattr(prim, self.slot, None)
        if rule is None or rule is NOT_DIFFERENTIABLE:
            raise KeyError(prim)
        return self._from(prim, rule)

    def __contains__(self, prim):
        try:
            self[prim]
        except (KeyError, TypeError):
            return False
        return True

    def get(self, prim, default=None):
        """The rule of ``prim``, or ``default`` when it has none."""
        try:
            return self[prim]
        except (KeyError, TypeError):
            return default

    def __delitem__(self, prim):
        _check_prim(prim, self.name)
        if getattr(type(prim), "_own", False):
            setattr(type(prim), self.slot, None)
        else:
            prim.__dict__.pop(self.slot, None)
        prim.__dict__.get("_jax_rules", {}).pop(self.name, None)

    def __repr__(self):
        return f"<jaxlite rule table {self.name}: a view onto primitives' {self.slot} rules>"


def _same_to(prim, rule):
    def method(self, *args, **params):
        return rule(*args, **params)
    method.__name__ = rule.__name__ if hasattr(rule, "__name__") else "rule"
    return method


def _same_from(prim, rule):
    return rule


def _jvp_to(prim, rule):
    def method(self, primals, tangents, **params):
        # (JAX hands a rule its primals and tangents as tuples; rules written for JAX build
        # pytrees (vmap's in_axes) matching them)
        return rule(tuple(primals), tuple(tangents), **params)
    method.__name__ = rule.__name__ if hasattr(rule, "__name__") else "rule"
    return method


primitive_jvps = RuleTable("primitive_jvps", "jvp", _jvp_to, _same_from)
primitive_transposes = RuleTable("primitive_transposes", "transpose", _same_to, _same_from)


class AxisData:
    """What a ``fancy_primitive_batchers`` rule learns about the mapped axis."""
    __slots__ = ("name", "size", "spmd_name", "explicit_mesh_axis")

    def __init__(self, name, size, spmd_name=None, explicit_mesh_axis=None):
        self.name = name
        self.size = size
        self.spmd_name = spmd_name
        self.explicit_mesh_axis = explicit_mesh_axis

    def __repr__(self):
        return f"AxisData(name={self.name!r}, size={self.size})"


def _axis_name():
    from jaxlite._src.interpreters.batching import _rule_ctx
    return _rule_ctx.axis_name


def _batch_size(args, dims):
    for a, d in zip(args, dims):
        if d is not None:
            return np.shape(a)[d] if not hasattr(a, "shape") else a.shape[d]
    return None


def _batch_to(prim, rule):
    def batch(self, axis_size, args, dims, **params):
        return rule(tuple(args), tuple(dims), **params)
    return batch


def _batch_from(prim, rule):
    def rule_(args, dims, **params):
        return rule(_batch_size(args, dims), args, dims, **params)
    return rule_


def _axis_batch_to(prim, rule):
    def batch(self, axis_size, args, dims, **params):
        return rule(axis_size, _axis_name(), None, tuple(args), tuple(dims), **params)
    return batch


def _axis_batch_from(prim, rule):
    def rule_(axis_size, axis_name, trace_type, args, dims, **params):
        return rule(axis_size, args, dims, **params)
    return rule_


def _fancy_batch_to(prim, rule):
    def batch(self, axis_size, args, dims, **params):
        return rule(AxisData(_axis_name(), axis_size), tuple(args), tuple(dims), **params)
    return batch


def _fancy_batch_from(prim, rule):
    def rule_(axis_data, args, dims, **params):
        return rule(axis_data.size, args, dims, **params)
    return rule_


primitive_batchers = RuleTable("primitive_batchers", "batch", _batch_to, _batch_from)
axis_primitive_batchers = RuleTable("axis_primitive_batchers", "batch", _axis_batch_to,
                                    _axis_batch_from)
fancy_primitive_batchers = RuleTable("fancy_primitive_batchers", "batch", _fancy_batch_to,
                                     _fancy_batch_from)


# ----------------------------------------------------------------------------- lowering

class LoweringFun:
    """A lowering given as a JAX-level function (``mlir.lower_fun(fun, multiple_results)``):
    jaxlite's compiled code calls ``fun`` on the operands."""
    __slots__ = ("fun", "multiple_results")

    def __init__(self, fun, multiple_results=True):
        self.fun = fun
        self.multiple_results = multiple_results

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError(
            "jaxlite does not build MLIR: a lower_fun lowering is run by jaxlite's compiler, "
            "not called with an MLIR lowering context.")


def lower_fun(fun, multiple_results=True):
    """A lowering rule computing a primitive with the JAX-level function ``fun``."""
    return LoweringFun(fun, multiple_results)


def register_lowering(prim, rule, platform=None, **kwargs):
    """Register ``rule`` as the lowering of ``prim``. A ``lower_fun`` rule is what jit runs
    for the primitive; an MLIR-building rule is recorded but cannot run on jaxlite (the
    primitive then needs ``def_impl``). Returns ``rule``."""
    _check_prim(prim, "register_lowering")
    owner = type(prim) if getattr(type(prim), "_own", False) else None
    if isinstance(rule, LoweringFun):
        if owner is None:
            raise TypeError(f"register_lowering: {prim.name!r} is a jaxlite built-in "
                            "primitive, whose lowering cannot be replaced.")
        if platform in (None, "cpu"):
            owner._lowering = rule
    elif owner is not None:
        owner._mlir_rule = staticmethod(rule)
    return rule
