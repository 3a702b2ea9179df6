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
import math
import os

import numpy as np

from jaxlite._src.core.fpe import quiet
from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Literal

__all__ = ["LowerCtx", "lower_jaxpr", "emit_eqn", "CompiledFunction", "reuse_plan",
           "reuse_plan_items"]

_file_counter = itertools.count()
# Buffer reuse, early scheduling and ``del`` lines are for memory: values smaller than this
# are left to Python's reference counting (the three passes were 40% of code generation of
# small programs, whose first call they slowed for nothing).
MEM_MIN_BYTES = 1 << 14
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

    def compile_sub(self, closed: ClosedJaxpr, name="sub", owned_invars=()) -> str:
        """Compile a nested closed jaxpr to a function and return its global name.
        ``owned_invars`` flags the inputs its caller hands over (a loop's carries: the
        function may update their buffers in place)."""
        from jaxlite._src.compiler.passes import optimize
        fn = lower_jaxpr(optimize(closed), name, planner=self.planner,
                         owned_invars=owned_invars)
        if self.planner is not None:   # tier 2 shows the bodies it planned
            self.globals.setdefault("__kernel_sources__", []).append(fn.source)
        # the raw generated function: it runs inside this program, already in the quiet
        # floating-point state (one Python frame and a state switch less per call)
        return self.bind_global(fn.raw, "f_" + _ident(name) + "_")


def _ident(s):
    import keyword
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in str(s))
    if not out or out[0].isdigit():
        out = "f" + out
    return out + "_" if keyword.iskeyword(out) else out


def needs_quiet(jaxpr):
    """Whether running ``jaxpr`` may meet a NumPy floating-point error: False only for
    programs that forward or move values (an identity, a reshape: ``moves_values``)."""
    return not all(getattr(e.primitive, "moves_values", False) for e in jaxpr.eqns)


class CompiledFunction:
    """A compiled jaxpr: callable on NumPy values, returning a tuple of NumPy values.
    ``fn`` runs it in NumPy's quiet floating-point state; ``raw`` is the bare function, for
    callers already in that state (or, ``needs_quiet`` False, for anyone)."""
    __slots__ = ("fn", "raw", "source", "filename", "name", "needs_quiet")

    def __init__(self, fn, source, filename, name, needs_quiet=True):
        # inf/nan silently whatever NumPy's error mode (as XLA); a program that only moves
        # values meets no floating-point error, and runs bare (a wrapper's frame less)
        self.fn = quiet(fn) if needs_quiet else fn
        self.raw = fn         # for callers already in that mode (no extra frame in pdb)
        self.needs_quiet = needs_quiet
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
    note = getattr(si, "note", None)
    return f"  # {os.path.basename(si.filename)}:{si.lineno} ({si.function})" + \
        ("" if note is None else f": {note}")


_ufunc_prims = {}   # id(primitive) -> whether it lowers to one ufunc call


def _is_ufunc_eqn(eqn):
    """Whether the equation lowers to one call of a NumPy ufunc (``np.<ufunc>(...)``, the
    elementwise primitives' default lowering): its result is a fresh array, or the array
    given as ``out=``, and it keeps no reference to its operands."""
    if eqn.params:
        return False
    prim = eqn.primitive
    writes = getattr(prim, "accepts_out", None)
    if writes is not None:   # (an elementwise impl taking ``out=`` for some dtypes)
        return writes(eqn)
    r = _ufunc_prims.get(id(prim))
    if r is None:
        from jaxlite._src.prims.base import Elementwise
        fn = getattr(prim, "np_fn", None)
        r = _ufunc_prims[id(prim)] = (
            isinstance(prim, Elementwise) and type(prim).lower_py is Elementwise.lower_py
            and getattr(prim, "lower_stmts", None) is None and isinstance(fn, np.ufunc)
            and getattr(np, fn.__name__, None) is fn and fn.nout == 1)
    return r


def reuse_plan(jaxpr, owned_invars=()):
    """{equation index: input variable whose buffer its result is written into} for tier 1.

    A ufunc equation may write into the buffer of one of its operands when that operand dies
    there (not used later, not an output), has the result's shape and dtype (rank >= 1), and
    is owned by the program: the result of an earlier ufunc equation or of a primitive whose
    result is ``fresh_result``, or an input the caller hands over (``owned_invars``, donated
    buffers), used only by ufunc and ``fresh_result`` equations (which keep no reference or
    view of it). Elementwise ufuncs read each element before writing it, so
    the results are bit for bit the same."""
    from jaxlite._src.core.ir import Literal
    eqns = jaxpr.eqns
    ufunc = [_is_ufunc_eqn(e) for e in eqns]
    last, shared = {}, set(v for v in jaxpr.outvars if not isinstance(v, Literal))
    donated = {v for v, o in zip(jaxpr.invars, owned_invars) if o}
    for k, e in enumerate(eqns):
        for v in e.invars:
            if not isinstance(v, Literal):
                last[v] = k
                if not ufunc[k] and not e.primitive.fresh_result:
                    shared.add(v)   # (may keep it, or a view of it, beyond its last use)
    owned = {v for v, o in zip(jaxpr.invars, owned_invars) if o}
    plan = {}
    for k, e in enumerate(eqns):
        if not ufunc[k]:
            if e.primitive.updates_operand:   # an in-place update of its dying operand
                v, oa = e.invars[0], e.outvars[0].aval
                if not isinstance(v, Literal) and v in owned and last[v] == k and \
                        v not in shared and v.aval.shape == oa.shape and \
                        v.aval.dtype == oa.dtype and oa.shape and \
                        all(a is not v for a in e.invars[1:]):
                    plan[k] = v
                    owned.discard(v)
            if e.primitive.fresh_result and len(e.outvars) == 1:
                owned.add(e.outvars[0])
            continue
        out = e.outvars[0]
        oa = out.aval
        if not oa.shape:
            continue
        # (a donated input first: the update of a donated parameter lands in its buffer)
        for v in sorted(e.invars, key=lambda v: v not in donated):
            if v in owned and last[v] == k and v not in shared and \
                    v.aval.shape == oa.shape and v.aval.dtype == oa.dtype:
                plan[k] = v
                owned.discard(v)
                break
        owned.add(out)
    return plan


def reuse_plan_items(items, outvars, owned_invars=()):
    """{item index: input variable whose buffer its result is written into} for a tier-2
    plan (``items``: equations and fused groups, whose ``io()`` gives (read, bound)
    variables). As ``reuse_plan``: a ufunc equation writes into an operand of its shape and
    dtype that dies there, when the program owns that buffer: the result of an earlier
    ufunc equation, of a ``fresh_result`` primitive or of a numba kernel (which allocates
    its outputs and, like those, keeps no reference to what it reads), or an input the
    caller hands over (``owned_invars``: (variable, owned?) pairs), which an update
    primitive (scatter, dynamic_update_slice) may also write in place where it dies.
    Everything read by anything else may be kept or viewed, so it is never written."""
    from jaxlite._src.core.ir import Literal
    ufunc = [isinstance(it, Eqn) and _is_ufunc_eqn(it) for it in items]
    last, shared = {}, {v for v in outvars if not isinstance(v, Literal)}
    ios = []
    for k, it in enumerate(items):
        if isinstance(it, Eqn):
            ins, outs = it.invars, it.outvars
            keeps = not ufunc[k] and not it.primitive.fresh_result
        else:
            ins, outs = it.io()
            keeps = not getattr(it, "allocates_outputs", False)
        ios.append((ins, outs, keeps))
        for v in ins:
            if not isinstance(v, Literal):
                last[v] = k
                if keeps:
                    shared.add(v)
    owned, plan = {v for v, o in owned_invars if o}, {}
    for k, (ins, outs, keeps) in enumerate(ios):
        it = items[k]
        if isinstance(it, Eqn) and it.primitive.updates_operand:
            v, oa = ins[0], outs[0].aval
            if not isinstance(v, Literal) and v in owned and last[v] == k and \
                    v not in shared and v.aval.shape == oa.shape and \
                    v.aval.dtype == oa.dtype and oa.shape and \
                    all(a is not v for a in ins[1:]):
                plan[k] = v
                owned.discard(v)
        elif ufunc[k] and outs[0].aval.shape:
            oa = outs[0].aval
            for v in ins:
                if v in owned and last[v] == k and v not in shared and \
                        v.aval.shape == oa.shape and v.aval.dtype == oa.dtype:
                    plan[k] = v
                    owned.discard(v)
                    break
        if not keeps:
            owned.update(v for v in outs if v.aval.shape)
    return plan


def schedule_early(jaxpr, owned_invars=()):
    """The equations reordered for memory (tier 1): an elementwise ufunc equation moves up to
    right after the point where every operand it reads is ready and dies at it, when one of
    those operands is the program's own array at least as big as the result (so it frees
    or reuses memory instead of holding it). A gradient's update ``w - lr * dw`` then runs
    as soon as ``dw`` is computed and ``w`` has no other reader, in place, instead of every
    ``dw`` living until the end. Only pure ufunc equations move, never past their operands:
    the values are those of the original order."""
    from jaxlite._src.core.ir import Literal
    eqns = jaxpr.eqns
    n = len(eqns)
    ufunc = [_is_ufunc_eqn(e) for e in eqns]
    if sum(ufunc) < 2:
        return eqns
    outs = set(v for v in jaxpr.outvars if not isinstance(v, Literal))
    remaining = {}
    consumers = {}
    for j, e in enumerate(eqns):
        for v in e.invars:
            if not isinstance(v, Literal):
                remaining[v] = remaining.get(v, 0) + 1
                consumers.setdefault(v, []).append(j)
    own = {v for v, o in zip(jaxpr.invars, owned_invars) if o}
    for e in eqns:
        own.update(e.outvars)
    ready = set(jaxpr.invars) | set(jaxpr.constvars)
    done = [False] * n
    order = []

    def movable(j):
        e = eqns[j]
        ins = e.invars
        for v in ins:
            if type(v) is not Literal and (v not in ready or v in outs or
                                           remaining[v] != ins.count(v)):
                return False
        size = math.prod(e.outvars[0].aval.shape)
        return size > 0 and any(type(v) is not Literal and v in own and
                                math.prod(v.aval.shape) >= size for v in ins)

    def emit(j):
        done[j] = True
        order.append(eqns[j])
        e = eqns[j]
        for v in e.invars:
            if not isinstance(v, Literal):
                remaining[v] -= 1
        ready.update(e.outvars)
        # candidates: readers of the new values, and of operands now down to their last
        # reader (an operand read by many is not rescanned at each of its reads)
        for v in (*e.invars, *e.outvars):
            if type(v) is Literal or (v in remaining and remaining[v] > 2 and
                                      v not in e.outvars):
                continue
            for c in consumers.get(v, ()):
                if c > j + 1 and ufunc[c] and not done[c] and movable(c):
                    emit(c)

    for j in range(n):
        if not done[j]:
            emit(j)
    return order


def _nbytes(aval):
    return math.prod(aval.shape) * getattr(aval.dtype, "itemsize", 8)


def has_big_values(jaxpr):
    """Whether an equation of ``jaxpr`` makes a value of ``MEM_MIN_BYTES`` or more."""
    lim = MEM_MIN_BYTES
    for e in jaxpr.eqns:
        for v in e.outvars:
            if _nbytes(v.aval) >= lim:
                return True
    return False


def dead_after(jaxpr, items=None):
    """{item index: variables dead after it} for the ``del`` lines: a dead intermediate is
    freed at once, so the allocator reuses its memory, instead of living until the function
    returns. ``items`` are the equations, or tier 2's plan (equations and groups with an
    ``io()`` method: the variables they read and bind); only names an item binds are
    deleted (not outputs, not equations lowered to statements of their own, not values
    under ``MEM_MIN_BYTES``), and nothing when an item's variables are unknown."""
    from jaxlite._src.core.ir import DropVar, Literal
    items = jaxpr.eqns if items is None else items
    last, defined = {}, {}
    for k, it in enumerate(items):
        if isinstance(it, Eqn):
            uses = it.invars
            # (statements of a primitive's own may not bind their outputs, except those of
            # a fresh_result primitive, whose outputs are its results)
            defs = it.outvars if getattr(it.primitive, "lower_stmts", None) is None or \
                it.primitive.fresh_result else ()
        elif hasattr(it, "io"):
            uses, defs = it.io()
        else:
            return {}
        for v in uses:
            if not isinstance(v, Literal) and v in defined:
                last[v] = k
        for v in defs:
            defined[v] = k
    outs = set(v for v in jaxpr.outvars if not isinstance(v, Literal))
    dead = {}
    lim = MEM_MIN_BYTES
    for v, k in defined.items():
        if v not in outs and not isinstance(v, DropVar) and _nbytes(v.aval) >= lim:
            dead.setdefault(last.get(v, k), []).append(v)
    return dead


def emit_eqn(ctx: LowerCtx, eqn, lines: list, out=None) -> None:
    """Append the source lines computing one equation (its ``lower_stmts`` block, its
    ``lower_py`` expression, or a call of its ``impl``); ``out`` names a buffer a ufunc
    equation writes its result into (``reuse_plan``)."""
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
    if out is not None and prim.updates_operand:   # (``reuse_plan``: out is ins[0])
        f = functools.partial(prim.impl_into, **eqn.params) if eqn.params else prim.impl_into
        expr = f"{ctx.bind_global(f, _ident(prim.name) + '_into_')}({', '.join(ins)})"
        lines.append(f"    {ctx.var(eqn.outvars[0])} = {expr}{_src_comment(eqn)}")
        return
    expr = prim.lower_py(ctx, ins, **eqn.params)
    if out is not None and expr is not None and expr.endswith(")") and (
            expr.startswith("np.") or getattr(prim, "accepts_out", None) is not None):
        expr = f"{expr[:-1]}, out={out})"
    if expr is None:
        f = functools.partial(prim.impl, **eqn.params) if eqn.params else prim.impl
        expr = f"{ctx.bind_global(f, _ident(prim.name) + '_')}({', '.join(ins)})"
    outs = [ctx.var(v) for v in eqn.outvars]
    if prim.multiple_results:
        lhs = (", ".join(outs) + ("," if len(outs) == 1 else "")) if outs else "_"
    else:
        lhs = outs[0]
    lines.append(f"    {lhs} = {expr}{_src_comment(eqn)}")


def lower_jaxpr(closed: ClosedJaxpr, name: str = "fn", planner=None,
                owned_invars=()) -> CompiledFunction:
    """Generate, compile and return a Python function computing ``closed``.

    Without a planner (tier 1) dead intermediates' buffers are reused (``reuse_plan``), and
    so are the buffers of inputs flagged in ``owned_invars`` (donated: the caller hands them
    over, writeable and referenced by nothing else), when the program has a value of
    ``MEM_MIN_BYTES`` or more or a donated input.

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
    # tier 1's memory passes, for programs with big values or donated inputs
    big = any(owned_invars) or has_big_values(jaxpr)
    mem = planner is None and big
    if mem:
        jaxpr = jaxpr.replace(eqns=schedule_early(jaxpr, owned_invars))
    items = jaxpr.eqns if planner is None else planner(jaxpr)
    items = list(items)
    if planner is not None:   # (tier 2: for speed, an allocation saved per reuse)
        reuse = reuse_plan_items(items, jaxpr.outvars, zip(jaxpr.invars, owned_invars))
    else:
        reuse = reuse_plan(jaxpr, owned_invars) if mem else {}
    dead = dead_after(jaxpr, items) if big else {}
    for k, item in enumerate(items):
        if isinstance(item, Eqn):
            v = reuse.get(k)
            emit_eqn(ctx, item, lines, None if v is None else ctx.var(v))
        else:
            item.emit(ctx, lines)
        if k in dead:
            lines.append(f"    del {', '.join(ctx.var(d) for d in dead[k])}")
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
    return CompiledFunction(ctx.globals[fname], source, filename, fname,
                            needs_quiet(closed.jaxpr))
