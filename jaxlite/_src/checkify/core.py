"""The ``check`` primitive and the ``checkify`` transformation.

``checkify(f)`` traces ``f`` (closing over its arguments, as JAX does) to a jaxpr, then
evaluates that jaxpr equation by equation in the current trace with an ``Error`` value
threaded through: a primitive with a rule in ``rules.py`` returns an updated error (nan,
division, index checks, and the ``check`` primitive itself); control flow and calls carry
the error through their bodies. Since evaluation happens in the current trace, the result
works eagerly, under jit (the error becomes outputs), vmap (a batched error) and autodiff.

``check`` outside ``checkify`` binds ``check``: eagerly it raises at once; staged by jit it
cannot run (JAX's "not functionalized" error), unless it is a ``debug_check``.
"""
from __future__ import annotations

import contextlib

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr, Literal
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.core.source_info import user_frame
from jaxlite._src.core.trace import Tracer, ctx
from jaxlite._src.runtime.array import Array, ArrayImpl
from jaxlite._src.checkify.errors import (Error, FailedCheckError, JaxRuntimeError,
                                          assert_func, init_error, update_error, user_checks)

__all__ = ["check", "debug_check", "check_error", "checkify", "check_p", "checkify_eval",
           "checkify_closed", "current_source", "select", "logical_or", "any_true"]

_FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it "
    "through `checkify.checkify`.")


# ----------------------------------------------------------------------------- small ops

def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false`` (pred scalar or of the same shape)."""
    from jaxlite._src.prims.conversion import select_n_p
    return select_n_p.bind(pred, on_false, on_true)


def logical_or(a, b):
    from jaxlite._src.prims.elementwise import or_p
    return or_p.bind(a, b)


def any_true(x):
    """A bool scalar: whether any element of the bool array ``x`` is True."""
    from jaxlite._src.prims.reductions import reduce_or_p
    return reduce_or_p.bind(x, axes=tuple(range(len(aval_of_value(x).shape))),
                            out_sharding=None)


# ----------------------------------------------------------------------------- source lines

_source = [None]


def current_source():
    """Where the check being added comes from: the user line of the equation being
    checkified (or the caller, outside checkify)."""
    return _source[0] if _source[0] is not None else user_frame(3)


@contextlib.contextmanager
def _at(src):
    prev = _source[0]
    _source[0] = src
    try:
        yield
    finally:
        _source[0] = prev


# ----------------------------------------------------------------------------- check_p

class Check(Primitive):
    """``check``: raise the error held by its operands (the leaves of an ``Error``). Eagerly
    it raises ``JaxRuntimeError``; under ``checkify`` it is turned into error values; under
    jit without checkify it cannot be compiled (``debug=True``: it does nothing)."""
    name = "check"
    multiple_results = True
    effectful = True
    accepts_extended = True   # format arguments may be key arrays (printed as JAX prints them)

    def effects_of(self, params):
        return tuple(e for e, _ in params["layout"])

    def abstract_eval(self, *avals, layout, metadata, debug):
        return []

    def pp_params(self, params):
        return [("debug", params["debug"])]

    def physical_extended(self, in_avals, out_avals, *vals, layout, metadata, debug):
        # on key-array operands (format arguments): their data made keys again
        if debug:
            return []
        vals = [a.dtype.from_physical(v) if isinstance(a.dtype, dtypes.ExtendedDType) else v
                for a, v in zip(in_avals, vals)]
        return self.impl(*vals, layout=layout, metadata=metadata, debug=debug)

    def impl(self, *args, layout, metadata, debug):
        if debug:
            return []
        err = Error.from_leaves(layout, [a if isinstance(a, Array) else np.asarray(a)
                                         for a in args], dict(metadata))
        exc = err.get_exception()
        if exc is not None:
            raise JaxRuntimeError(str(exc)) from exc
        return []

    def lower_py(self, ctx_, ins, layout, metadata, debug):
        if debug:
            return "[]"
        raise ValueError(_FUNCTIONALIZATION_ERROR)

    def jvp(self, primals, tangents, **params):
        self.bind(*primals, **params)
        return [], []

    def transpose(self, cts, *args, **params):
        return [None] * len(args)

    def batch(self, size, args, dims, *, layout, metadata, debug):
        from jaxlite._src.interpreters.batching import bdim_at_front
        leaves = [bdim_at_front(a, d, size) for a, d in zip(args, dims)]
        err = _reduce_any_error(Error.from_leaves(layout, leaves, dict(metadata)))
        self.bind(*err.leaves(), layout=layout, metadata=metadata, debug=debug)
        return [], []


check_p = Check()


def _reduce_any_error(error):
    """A batched error reduced to one member's (one whose check failed, if any)."""
    from jaxlite._src.numpy.sorting import argsort
    from jaxlite._src.prims.elementwise import convert_element_type_p
    pred, code, payload = {}, {}, {}
    for e in error._pred:
        p = error._pred[e]
        if not aval_of_value(p).shape:
            pred[e], code[e], payload[e] = p, error._code[e], error._payload[e]
            continue
        p_int = convert_element_type_p.bind(p, new_dtype=np.dtype(np.int32), weak_type=False,
                                            sharding=None)
        i = argsort(p_int, stable=True)[-1]
        pred[e], code[e] = p[i], error._code[e][i]
        payload[e] = [x[i] for x in error._payload[e]]
    return Error(pred, code, error._metadata, payload)


def _check_error(error, *, debug=False):
    if any(np.shape(v) for v in error._pred.values()) and not any(
            isinstance(v, Tracer) for v in error._pred.values()):
        error = _reduce_any_error(error)
    check_p.bind(*error.leaves(), layout=error.layout(),
                 metadata=tuple(sorted(error._metadata.items(), key=lambda kv: kv[0])),
                 debug=debug)


def _is_scalar_pred(pred):
    return isinstance(pred, bool) or (isinstance(pred, Array) and tuple(pred.shape) == ()
                                      and np.dtype(pred.dtype) == np.bool_)


def _check(pred, msg, debug, *fmt_args, **fmt_kwargs):
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        shown = pred if not isinstance(pred, Tracer) else \
            f"Traced<{pred.aval.str_short(short_dtypes=False)}>"
        raise TypeError(f"{name} takes a scalar pred as argument, got {shown}. Fix: reduce it "
                        "to one bool, e.g. jnp.all(x > 0).")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {arg!r} of type {type(arg)}.")
    src = user_frame(3)
    from jaxlite._src.prims.elementwise import not_p
    not_pred = not pred if isinstance(pred, bool) else not_p.bind(pred)
    error = assert_func(init_error, not_pred, FailedCheckError(src, msg, *fmt_args,
                                                                 **fmt_kwargs))
    _check_error(error, debug=debug)


def check(pred, msg, *fmt_args, debug=False, **fmt_kwargs):
    """Assert ``pred`` (a scalar bool); if it is False the error says ``msg`` formatted with
    the (array) ``fmt_args``/``fmt_kwargs``, e.g. ``check(x > 0, "{x} must be > 0", x=x)``.

    Eagerly a failed check raises ``JaxRuntimeError`` at once. Inside a function transformed
    by ``checkify`` it becomes part of the returned ``Error`` instead; staged by jit/scan
    without ``checkify`` it cannot run (checkify the function first). ``debug=True`` makes it
    a no-op outside ``checkify`` (see ``debug_check``).
    """
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred, msg, *fmt_args, **fmt_kwargs):
    """Like ``check``, but a no-op unless the function runs under ``checkify``."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error):
    """Raise the error held by ``error`` (an ``Error``) as ``check`` would: at once eagerly,
    or as part of the error of an enclosing ``checkify``."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} "
                        "instead.")
    _check_error(error, debug=False)


# ----------------------------------------------------------------------------- interpreter

def _literal(a):
    return ArrayImpl(np.asarray(a.val, a.aval.dtype), a.aval.weak_type)


def checkify_eval(jaxpr, consts, error, enabled, *args):
    """Evaluate ``jaxpr`` in the current trace threading ``error``; returns (error, outs)."""
    from jaxlite._src.checkify.rules import rule_for
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(a):
        return _literal(a) if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        rule = rule_for(eqn.primitive)
        with _at(eqn.source_info):
            if rule is None:
                out = eqn.primitive.bind(*ins, **eqn.params)
            else:
                error, out = rule(error, enabled, eqn.primitive, eqn.params, *ins)
        outs = out if eqn.primitive.multiple_results else [out]
        env.update(zip(eqn.outvars, outs))
    return error, [read(a) for a in jaxpr.outvars]


def checkify_closed(closed, enabled, error, extra_out=None):
    """``closed`` with the error threaded through, as a ClosedJaxpr taking
    (error leaves, inputs) and returning (error leaves, outputs): returns (jaxpr, out error
    layout, metadata of the checks it holds). ``extra_out(error, outs)`` may post-process."""
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    layout, n = error.layout(), len(error.leaves())
    got = {}

    def fun(*xs):
        err = Error.from_leaves(layout, list(xs[:n]), error._metadata)
        err, outs = checkify_eval(closed.jaxpr, closed.consts, err, enabled, *xs[n:])
        if extra_out is not None:
            err, outs = extra_out(err, outs)
        got["layout"], got["meta"] = err.layout(), err._metadata
        return err.leaves() + list(outs)
    jaxpr, tconsts, consts = trace_to_jaxpr(fun, error.leaf_avals() + list(closed.in_avals))
    assert not tconsts
    return ClosedJaxpr(jaxpr, consts), got["layout"], got["meta"]


def out_effects(closed, enabled, error):
    """The error effects ``closed`` can produce when run with ``error`` (a dry trace)."""
    _, layout, _ = checkify_closed(closed, enabled, error)
    return {e for e, _ in layout}


# ----------------------------------------------------------------------------- checkify

def checkify(f, errors=user_checks):
    """Functionalise the checks of ``f``: the returned function returns ``(error, out)``
    where ``out`` is ``f``'s result and ``error`` an ``Error`` holding the first failed check
    (``error.get()`` is its message, None if all passed; ``error.throw()`` raises it).

    ``errors`` picks the checks: ``user_checks`` (``check`` calls, the default),
    ``nan_checks`` (a primitive produced a nan), ``div_checks`` (division by zero),
    ``index_checks`` (out-of-bounds indexing), ``float_checks``, ``automatic_checks``,
    ``all_checks``, or unions of these. The checkified function works eagerly and under
    jit, vmap (a batched error: ``get()`` names each failing member) and grad.
    """
    enabled = frozenset(errors)

    def checked_fun(*args, **kwargs):
        from jaxlite._src.interpreters.staging import DebugInfo, trace_to_jaxpr
        store = {}

        def closed_f():
            leaves, store["tree"] = tree_util.tree_flatten(f(*args, **kwargs))
            return leaves
        di = DebugInfo.from_function(f, [], "checkify")
        jaxpr, tconsts, consts = trace_to_jaxpr(closed_f, [], di, parent=ctx.trace)
        error, outs = checkify_eval(jaxpr, list(tconsts) + list(consts), init_error, enabled)
        return error, tree_util.tree_unflatten(store["tree"], outs)

    try:
        import functools
        checked_fun = functools.wraps(f)(checked_fun)
    except (AttributeError, TypeError):
        pass
    return checked_fun


def merge_into(error, other, enabled=None):
    """``error`` with every slot of ``other`` merged in (its first errors kept)."""
    if enabled is not None and FailedCheckError not in enabled:
        other = other.without({FailedCheckError})
    for e in sorted(other._pred):
        error = update_error(error, other._pred[e], other._code[e], other._metadata,
                             list(other._payload[e]), e)
    return Error(error._pred, error._code, {**error._metadata, **other._metadata},
                 error._payload)
