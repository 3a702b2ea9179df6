"""``jax.debug.breakpoint()``: a real pdb session, also inside jit.

JAX stages a breakpoint as a ``debug_callback`` whose operands are the traced values found in
the caller's frame, and gives them to a limited debugger of its own. jaxlite stages the same
equation (so jaxprs print as JAX's), but since its compiled code is Python the breakpoint is
lowered to statements of the generated function itself::

    # jax.debug.breakpoint() at model.py:12 (loss)
    x = a                      # the user's names, bound to the traced values (NumPy arrays)
    params = _bp_tree_3(b, c)  # pytrees of traced values are rebuilt
    _breakpoint_4()            # starts pdb on this frame
    pass  # model.py:12 (loss): jax.debug.breakpoint()   <- pdb stops here

so pdb stops *inside the generated code*: ``p x``, ``ll`` (the generated source), ``w`` (the
stack, from the user's call of the jitted function), ``n`` (step through the compiled
equations, each commented with its user line), ``c``. Called eagerly it stops in the caller's
own frame, as Python's ``breakpoint()``; run eagerly by a transformation (vmap, grad without
jit) it stops in a small generated frame holding the same names.
"""
from __future__ import annotations

import builtins
import functools
import keyword
import linecache
import itertools
import sys

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core.source_info import SourceInfo
from jaxlite._src.core.trace import Tracer, ctx

__all__ = ["breakpoint"]

_counter = itertools.count()
_BUILTINS = frozenset(dir(builtins))


def _bindable(name):
    return (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)
            and not name.startswith("_") and name != "np" and name not in _BUILTINS)


class _Breakpoint:
    """What one staged breakpoint needs at run time: the user's names for its operands
    (``bindings``), where it was written, and the debugger options."""
    __slots__ = ("bindings", "names", "source", "pdb_kwargs", "_frame_fn", "__weakref__")

    def __init__(self, bindings, source, pdb_kwargs):
        self.bindings = bindings    # [(name, "leaf", index) | (name, "tree", (treedef, spec))
        #                              | (name, "static", value)]
        self.names = tuple(b[0] for b in bindings)
        self.source = source
        self.pdb_kwargs = pdb_kwargs
        self._frame_fn = None

    def where(self):
        src = self.source
        return f"{src}: {src.line_text()}" if src is not None else "<unknown>"

    def lower_stmts(self, ctx_, ins):
        """The generated statements: bind the user's names, then stop in pdb."""
        lines = [f"# jax.debug.breakpoint() at {self.source}"]
        for name, kind, payload in self.bindings:
            if kind == "leaf":
                lines.append(f"{name} = {ins[payload]}")
            elif kind == "tree":
                treedef, spec = payload
                fn = ctx_.bind_global(functools.partial(_rebuild, treedef, spec), "bp_tree")
                ops = [ins[i] for is_op, i in spec if is_op]
                lines.append(f"{name} = {fn}({', '.join(ops)})")
            else:
                lines.append(f"{name} = {ctx_.bind_global(payload, 'bp_obj')}")
        stop = ctx_.bind_global(self.stop, "breakpoint")
        lines.append(f"{stop}()")
        lines.append(f"pass  # {self.where()}")
        return lines

    def stop(self):
        """Start pdb on the calling (generated) frame; it stops on the next line."""
        frame = sys._getframe(1)
        shown = ", ".join(self.names) or "none"
        out = self.pdb_kwargs.get("stdout") or sys.stdout
        out.write(f"Entering jaxlite breakpoint at {self.source} (pdb in the generated code; "
                  f"traced values as NumPy arrays: {shown}; 'c' continues)\n")
        _pdb(self.pdb_kwargs).set_trace(frame)

    def __call__(self, *flat_args):
        """The staged callback run outside compiled code (eagerly under vmap/grad): stop in
        a small generated frame with the same names bound to the values."""
        if self._frame_fn is None:
            self._frame_fn = self._make_frame_fn(len(flat_args))
        self._frame_fn(*[np.asarray(a) for a in flat_args])
        return ()

    def _make_frame_fn(self, n):
        from jaxlite._src.compiler.codegen import LowerCtx
        lctx = LowerCtx(frozenset(self.names))
        params = [next(lctx._fresh) for _ in range(n)]
        fname = "breakpoint_in_" + (self.source.function if self.source else "fn")
        fname = "".join(c if c.isalnum() or c == "_" else "_" for c in fname)
        body = self.lower_stmts(lctx, params)
        src = f"def {fname}({', '.join(params)}):\n" + "".join(f"    {ln}\n" for ln in body)
        filename = f"<jaxlite-breakpoint:{fname}:{next(_counter)}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        exec(compile(src, filename, "exec"), lctx.globals)
        return lctx.globals[fname]


def _rebuild(treedef, spec, *ops):
    it = iter(ops)
    return tree_util.tree_unflatten(treedef, [next(it) if is_op else v for is_op, v in spec])


def _pdb(kwargs):
    import pdb
    return pdb.Pdb(**{k: v for k, v in kwargs.items() if k in ("stdin", "stdout", "skip",
                                                               "nosigint", "completekey")})


def _alive(x, trace):
    return isinstance(x, Tracer) and x._trace.is_ancestor_of(trace)


def _collect(frame, trace):
    """(operands, bindings) for the caller's locals that hold traced values (other locals
    are bound as they are)."""
    operands, index, bindings = [], {}, []

    def operand(t):
        k = id(t)
        if k not in index:
            index[k] = len(operands)
            operands.append(t)
        return index[k]

    for name, value in frame.f_locals.items():
        if not _bindable(name):
            continue
        if _alive(value, trace):
            bindings.append((name, "leaf", operand(value)))
            continue
        try:
            leaves, treedef = tree_util.tree_flatten(value)
        except Exception:  # noqa: BLE001 - an object pytrees cannot walk: bind it as is
            leaves, treedef = [], None
        if treedef is not None and any(_alive(x, trace) for x in leaves):
            spec = [(True, operand(x)) if _alive(x, trace) else (False, x) for x in leaves]
            bindings.append((name, "tree", (treedef, spec)))
        elif not isinstance(value, Tracer):
            bindings.append((name, "static", value))
    return operands, bindings


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,
               token=None, **kwargs):
    """Stop in the Python debugger (pdb) at this point of the program, also inside jit.

    Eagerly this is Python's ``breakpoint()`` in the caller's frame. While tracing, the
    caller's local variables that hold traced values are staged with the breakpoint; under
    ``jit`` the compiled function stops in pdb *in its generated code*, with those variables
    bound under their own names to their values (NumPy arrays; pytrees rebuilt), the
    generated source (``ll``) commented with the user's lines, and the user's call in the
    stack (``w``). Under ``vmap`` it stops once per batch member, under ``grad`` with the
    primal values.

    Args:
      backend, filter_frames, num_frames: accepted for compatibility with JAX (the debugger
        is always pdb; the caller's frame is the one captured).
      ordered: keep program order with respect to other ordered debug effects.
      token: a pytree of arrays; the breakpoint runs once it is computed and it is returned
        unchanged (the breakpoint is dropped when the result is unused), as in JAX.
      **kwargs: ``stdin=``/``stdout=`` (and other ``pdb.Pdb`` options) for the debugger.
    Returns:
      ``token`` when given, else None.
    """
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    frame = sys._getframe(1)
    trace = ctx.trace
    if trace is None or getattr(trace, "checks_floats", False):
        out = kwargs.get("stdout") or sys.stdout
        out.write(f"Entering jaxlite breakpoint at {frame.f_code.co_filename}:"
                  f"{frame.f_lineno} ({frame.f_code.co_name}); 'c' continues\n")
        _pdb(kwargs).set_trace(frame)
        return token
    from jaxlite._src.prims.callback import (FlatCallback, debug_callback_p, debug_effect,
                                             ordered_debug_effect, pure_callback_p)
    operands, bindings = _collect(frame, trace)
    code = frame.f_code
    info = _Breakpoint(bindings, SourceInfo(code.co_filename, frame.f_lineno, code.co_name),
                       dict(kwargs))

    def _breakpoint_callback(*flat_args):
        return info(*flat_args)
    _breakpoint_callback.__qualname__ = "breakpoint.<locals>._breakpoint_callback"
    _breakpoint_callback.jaxlite_breakpoint = info
    if token is None:
        debug_callback_p.bind(*operands, callback=_breakpoint_callback,
                              effect=ordered_debug_effect if ordered else debug_effect,
                              partitioned=False)
        return None
    from jaxlite._src.core.avals import ShapedArray, aval_of_value
    from jaxlite._src.prims.custom import stop_gradient_p
    t_leaves, t_tree = tree_util.tree_flatten(token)
    t_leaves = [stop_gradient_p.bind(x) for x in t_leaves]
    operands = [stop_gradient_p.bind(x) for x in operands]
    nt = len(t_leaves)

    def _breakpoint_callback_wrapper(*flat):
        info(*flat[nt:])
        return list(flat[:nt])
    avals = tuple(ShapedArray(aval_of_value(x).shape, aval_of_value(x).dtype)
                  for x in t_leaves)
    outs = pure_callback_p.bind(
        *t_leaves, *operands,
        callback=FlatCallback(_breakpoint_callback_wrapper,
                              tree_util.tree_structure((tuple(t_leaves + operands), {}))),
        result_avals=avals, sharding=None, vmap_method="sequential")
    return tree_util.tree_unflatten(t_tree, outs)
