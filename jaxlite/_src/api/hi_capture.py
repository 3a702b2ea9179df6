"""Mutable hijax values closed over by a loop body (JAX hoists them into the loop's state).

JAX stages a mutable hijax value (a ``MutableHiType``, such as flax.nnx's hijax
``Variable``) that a ``scan`` or ``while_loop`` body closes over as an input of the body,
and lowering threads
its arrays through the loop and writes the final ones back into the value. jaxlite passes
hijax values through transformations as the objects themselves, holding tracers, so a body
that mutated a value it closed over would store its tracers into that value. Instead:

- while a loop body traces, it is a *capture scope* (``capture_scope``): a hijax primitive
  applied there to a mutable value whose arrays are not values of the body's trace (concrete
  arrays, or tracers of an enclosing trace) raises ``HiCapture`` with that value
  (``check_captured``, called by ``HiPrimitive.bind``);
- the loop catches it and runs again with the value's arrays as extra carries
  (``with_captured``): the body sees the value holding the carries' tracers (its type's
  ``update_from_loval``), and returns the arrays of its final state (``read_loval``), which
  are written back into the value after the loop.

A value whose arrays belong to an enclosing loop body that has not captured it is handed on
to that loop the same way, so the state goes through every loop level, as in JAX. Other
staged functions (jit, make_jaxpr, cond branches) are no capture scopes yet: a value mutated
there still receives their tracers.
"""
from __future__ import annotations

import threading

from jaxlite._src.api.hi_args import _spec_of
from jaxlite._src.core.trace import Tracer, ctx

__all__ = ["HiCapture", "capture_scope", "capture_active", "check_captured", "with_captured"]


class HiCapture(Exception):   # noqa: N818 - a control signal, not an error shown to users
    """Raised while a loop body traces when a hijax primitive is applied to a mutable hijax
    value the body closed over; the loop catches it and threads the value's arrays."""

    def __init__(self, value):
        super().__init__("a loop body closed over a mutable hijax value")
        self.value = value


class _Scopes(threading.local):
    stack = None


_scopes = _Scopes()
capture_active = [0]     # nonzero while some thread traces a loop body (a cheap test)


class capture_scope:  # noqa: N801 - used as a context manager, like set_current_trace
    """Context manager for the body of a loop that threads closed-over hijax values: the
    trace current on entry (the body's) is the one whose values count as the body's own."""
    __slots__ = ()

    def __enter__(self):
        s = _scopes.stack
        if s is None:
            s = _scopes.stack = []
        s.append(ctx.trace)
        capture_active[0] += 1
        return self

    def __exit__(self, *exc):
        _scopes.stack.pop()
        capture_active[0] -= 1
        return False


class _unchecked:  # noqa: N801
    """Context manager: hijax primitives applied inside (the value type's own
    ``read_loval``/``update_from_loval``, which may bind them) are not checked."""
    __slots__ = ()

    def __enter__(self):
        s = _scopes.stack
        if s is None:
            s = _scopes.stack = []
        s.append(None)
        return self

    def __exit__(self, *exc):
        _scopes.stack.pop()
        return False


def _owned(owner, x):
    """Whether every array of the mutable hijax value ``x`` is a tracer of ``owner`` (or of
    a trace inside it)."""
    s = _spec_of(x)
    if s is None or not s.aval.has_qdd:
        return True
    for leaf in s.aval.read_loval(s.qdd, x):
        if not (isinstance(leaf, Tracer) and owner.is_ancestor_of(leaf._trace)):
            return False
    return True


def check_captured(args):
    """Raise ``HiCapture`` for the first of ``args`` that is a mutable hijax value the
    innermost loop body being traced closed over (its arrays are not that body's)."""
    s = _scopes.stack
    if not s or s[-1] is None:
        return
    owner = s[-1]
    for a in args:
        if isinstance(a, Tracer):
            continue
        with _unchecked():
            owned = _owned(owner, a)
        if not owned:
            raise HiCapture(a)


def with_captured(run, captured, init):
    """Run a loop over the carry ``init`` with the mutable hijax values ``captured`` (closed
    over by its body) threaded as extra carries.

    ``run(body_wrap, init2)`` runs the loop: ``body_wrap(f)`` turns the user's body ``f`` (a
    function of the carry first) into one over ``(carry, states)`` returning ``(f's result,
    new states)``, and ``init2`` is the carry with the values' arrays; ``run`` returns
    ``(the loop's result, final states)``. The
    values are updated with their final arrays afterwards (restored if the loop raises)."""
    check_captured_outer(captured)
    with _unchecked():
        specs = [_spec_of(v) for v in captured]
        states = [s.lower(v) for v, s in zip(captured, specs)]
    finals_qdd = {}

    def body_wrap(f):
        def body(carry, *rest):
            c, sts = carry
            with _unchecked():
                for v, s, st in zip(captured, specs, sts):
                    s.aval.update_from_loval(s.qdd, v, *st)
            out = f(c, *rest)
            new = []
            with _unchecked():
                for i, (v, s) in enumerate(zip(captured, specs)):
                    qdd = v.cur_qdd()
                    finals_qdd[i] = qdd
                    new.append(list(s.aval.read_loval(qdd, v)))
            return out, new
        return body

    try:
        result, final_states = run(body_wrap, (init, states))
    except BaseException:
        with _unchecked():
            for v, s, st in zip(captured, specs, states):
                s.aval.update_from_loval(s.qdd, v, *st)
        raise
    with _unchecked():
        for i, (v, s, st) in enumerate(zip(captured, specs, final_states)):
            s.aval.update_from_loval(finals_qdd.get(i, s.qdd), v, *st)
    return result


def check_captured_outer(captured):
    """Hand ``captured`` on to an enclosing loop body being traced that does not hold their
    arrays (it captures them in turn)."""
    if ctx.trace is not None:
        check_captured(captured)
