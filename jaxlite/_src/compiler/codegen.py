"""Lowering a jaxpr to an ordinary Python function over NumPy.

Each equation becomes one line of source: the primitive's ``lower_py`` expression, or a call
of its ``impl`` with the parameters bound (a primitive may instead give statements of its
own with ``lower_stmts(ctx, ins, outs, eqn)``, as ``jax.debug.breakpoint`` does). The source
is registered with ``linecache`` so tracebacks and pdb show it, and ``Compiled.as_text()``
returns it.
"""
from __future__ import annotations

import functools
import itertools
import keyword
import linecache
import os

import numpy as np

from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Literal

__all__ = ["LowerCtx", "lower_jaxpr", "emit_eqn", "CompiledFunction"]

_file_counter = itertools.count()
_RESERVED = set(keyword.kwlist) | {"np", "self"}


def _name_gen(reserved=frozenset()):
    for i in itertools.count():
        s = ""
        n = i
        while not s or n:
            n, r = divmod(n, 26)
            s = chr(97 + r) + s
        if s not in _RESERVED and s not in reserved:
            yield s


class LowerCtx:
    """State of one lowering: generated lines, global bindings and variable names.
    ``reserved`` names are never given to jaxpr variables (equations that bind Python names
    of their own, like a breakpoint exposing the user's variable names, reserve them)."""

    def __init__(self, reserved=frozenset(), planner=None):
        self.globals = {"np": np, "__name__": "jaxlite._generated"}
        self.planner = planner   # tier 2's fusion plan, for nested bodies too
        self._gid = itertools.count()
        self._names = {}
        self._fresh = _name_gen(reserved)

    def var(self, v) -> str:
        """The Python name of a jaxpr variable (or the expression of a literal)."""
        if isinstance(v, Literal):
            return self.literal(v)
        n = self._names.get(v)
        if n is None:
            n = self._names[v] = next(self._fresh)
        return n

    def bind_global(self, obj, hint="g") -> str:
        """Make ``obj`` available to the generated code under a fresh global name."""
        name = f"_{hint}{next(self._gid)}"
        self.globals[name] = obj
        return name

    def literal(self, lit: Literal) -> str:
        val = lit.val
        if not isinstance(val, (np.ndarray, np.generic)):
            val = np.asarray(val, lit.aval.dtype)
        if np.shape(val) == ():
            val = np.asarray(val, lit.aval.dtype)[()]
        return self.bind_global(val, "k")

    def compile_sub(self, closed: ClosedJaxpr, name="sub") -> str:
        """Compile a nested closed jaxpr to a function and return its global name."""
        from jaxlite._src.compiler.passes import optimize
        fn = lower_jaxpr(optimize(closed), name, planner=self.planner)
        if self.planner is not None:   # tier 2 shows the bodies it planned
            self.globals.setdefault("__kernel_sources__", []).append(fn.source)
        # the plain generated function (one Python frame less per call than the wrapper)
        return self.bind_global(fn.fn, "f_" + _ident(name) + "_")


def _ident(s):
    import keyword
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in str(s))
    if not out or out[0].isdigit():
        out = "f" + out
    return out + "_" if keyword.iskeyword(out) else out


class CompiledFunction:
    """A compiled jaxpr: callable on NumPy values, returning a tuple of NumPy values."""
    __slots__ = ("fn", "source", "filename", "name")

    def __init__(self, fn, source, filename, name):
        self.fn = fn
        self.source = source
        self.filename = filename
        self.name = name

    def __call__(self, *args):
        return self.fn(*args)

    def as_text(self):
        return self.source


def _src_comment(eqn):
    si = eqn.source_info
    if si is None:
        return ""
    return f"  # {os.path.basename(si.filename)}:{si.lineno} ({si.function})"


def emit_eqn(ctx: LowerCtx, eqn, lines: list) -> None:
    """Append the source lines computing one equation (its ``lower_stmts`` block, its
    ``lower_py`` expression, or a call of its ``impl``)."""
    prim = eqn.primitive
    ins = [ctx.var(a) for a in eqn.invars]
    stmts = getattr(prim, "lower_stmts", None)
    if stmts is not None:   # a primitive lowering to statements of its own
        block = stmts(ctx, ins, [ctx.var(v) for v in eqn.outvars], eqn)
        if block is not None:
            last = block[-1].rstrip() if block else ""
            if last and not last.endswith((":", "\\", ",", "(")) and "#" not in last:
                # the statement that computes the result carries the user's line
                block = block[:-1] + [block[-1] + _src_comment(eqn)]
            lines.extend("    " + ln for ln in block)
            return
    expr = prim.lower_py(ctx, ins, **eqn.params)
    if expr is None:
        f = functools.partial(prim.impl, **eqn.params) if eqn.params else prim.impl
        expr = f"{ctx.bind_global(f, _ident(prim.name) + '_')}({', '.join(ins)})"
    outs = [ctx.var(v) for v in eqn.outvars]
    if prim.multiple_results:
        lhs = (", ".join(outs) + ("," if len(outs) == 1 else "")) if outs else "_"
    else:
        lhs = outs[0]
    lines.append(f"    {lhs} = {expr}{_src_comment(eqn)}")


def lower_jaxpr(closed: ClosedJaxpr, name: str = "fn", planner=None) -> CompiledFunction:
    """Generate, compile and return a Python function computing ``closed``.

    ``planner(jaxpr)`` (the second tier's fusion pass) may regroup the equations: it returns
    a list of equations and of groups with an ``emit(ctx, lines)`` method of their own. It
    plans the bodies of nested calls and loops (``compile_sub``) as well."""
    jaxpr = closed.jaxpr
    reserved = set()
    for eqn in jaxpr.eqns:
        names = getattr(eqn.primitive, "reserved_names", None)
        if names is not None:
            reserved.update(names(eqn.params))
    ctx = LowerCtx(frozenset(reserved), planner)
    for v, c in zip(jaxpr.constvars, closed.consts):
        ctx._names[v] = ctx.bind_global(c, "c")
    params = [ctx.var(v) for v in jaxpr.invars]
    fname = _ident(name)
    lines = [f"def {fname}({', '.join(params)}):"]
    items = jaxpr.eqns if planner is None else planner(jaxpr)
    for item in items:
        if isinstance(item, Eqn):
            emit_eqn(ctx, item, lines)
        else:
            item.emit(ctx, lines)
    outs = [ctx.var(a) for a in jaxpr.outvars]
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    source = "\n".join(lines) + "\n"
    filename = f"<jaxlite-jit:{fname}:{next(_file_counter)}>"
    code = compile(source, filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(code, ctx.globals)
    kernels = ctx.globals.get("__kernel_sources__")
    if kernels:   # fused kernels (tier 2) are shown after the function calling them
        source += "".join("\n" + k for k in kernels)
    return CompiledFunction(ctx.globals[fname], source, filename, fname)
