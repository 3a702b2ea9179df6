"""Tier 2's whole loops over small arrays: numba code for a loop whose body computes on
arrays of any (static) shape, so that a ``while_loop``/``scan``/``fori_loop`` body of many
small ops runs as one compiled function instead of a Python loop calling NumPy per op.

``ArrayCode`` writes the code of closed jaxprs equation by equation. Rank-0 values are
numba scalars, the others C-contiguous numba arrays of their shape. Each equation becomes:

* an exact scalar expression (IEEE arithmetic, comparisons, selection, float casts: the ops
  ``numba_kernels.numba_expr_ok`` accepts), over the elements of its arrays in one loop;
* else, for an equation tier 1 computes with one NumPy ufunc (``np.sin``, ``np.maximum``,
  ``np.power`` ...), a call of that ufunc's own inner loop (``ufunc_loops``): NumPy's bits;
* else the primitive's ``numba(code, eqn, ins)`` rule (data movement, reductions,
  contractions, nested loops and conditionals), written to give tier 1's bits;
* a call primitive's body (nested ``jit``, custom derivatives, library primitives lowered
  through a function) is written in place;
* any other equation calls its ``impl`` from numba's object mode (when such calls are at
  most ``MAX_PYTHON_SHARE`` of the loop's equations).

No allocation per step where it can be avoided: a value that dies within its loop step has
a buffer allocated once, ahead of the loops, and rewritten each step (values that may reach
a jaxpr's outputs, even as views, get buffers of their own); an array carry computed by one
equation is computed into one of two buffers swapped each step (``carry_buffers``); an
updated carry is written in place (``loop_owned``).

Effects, callbacks, dtypes numba lacks and the random samplers' XLA-arithmetic ops leave the
loop to tier 1 (``Unsupported``). ``array_loops.py`` makes the kernel around this code and
compiles it once its loop has earned it. Array constants of the bodies and the addresses of
NumPy's loops are arguments of the kernel, so its source (the name of its disk cache entry)
depends on the program only.
"""
from __future__ import annotations

import itertools
import math
import re

import numpy as np

from jaxlite._src.compiler.codegen import _is_ufunc_eqn, _src_comment
from jaxlite._src.compiler.numba_kernels import (
    NUMBA_DTYPES, _nb_literal, _nb_scalar_expr, numba_expr_ok)
from jaxlite._src.core.ir import Literal, has_effects
from jaxlite._src.prims.base import Elementwise

__all__ = ["ArrayCode", "Unsupported", "call_impl", "inline_jaxpr"]

# dtypes the loop code holds (numba types); the exact expressions keep to NUMBA_DTYPES
HELD_DTYPES = NUMBA_DTYPES | {np.dtype(t) for t in (np.int8, np.int16, np.uint8, np.uint16,
                                                      np.uint32, np.uint64)}
# of a loop's ops, at most this share may call back into Python (else it stays tier 1's)
MAX_PYTHON_SHARE = 0.1


class Unsupported(Exception):
    """An equation ``ArrayCode`` cannot write: the loop stays with tier 1."""


def dt_text(dt):
    """The numba/NumPy scalar type of ``dt`` in source (``np.float32``)."""
    return "np.bool_" if dt == np.bool_ else f"np.{np.dtype(dt).name}"


class ArrayCode:
    """The lines of one numba function computing closed jaxprs (see the module doc)."""

    def __init__(self):
        self.lines = []
        self.indent = "    "
        self._ids = itertools.count()
        self.ptrs = []        # NumPy loop addresses: (loop, context, auxdata) triples
        self._ptr_index = {}
        self.consts = []      # array constants, passed to the kernel as arguments
        self._const_index = {}
        # elementwise results read once by another elementwise op: kept as expressions
        # (array elements written @@array@@) and computed in their reader's loop
        self._deferred = {}
        self._once = set()
        self._owned = set()   # variables whose buffer nothing else references
        self._read = set()    # variables something reads
        self.pycalls = []     # equations computed by their impl, called from the loop
        self.imports = []     # import lines the kernel's module needs (rules ask)
        self.n_eqns = 0
        self.uses_loops = False
        # Buffers of values that die within their loop step are allocated once, ahead of
        # the loops (``prelude``), and rewritten each step: ``_hoist`` says whether the
        # equation being written may use them (its results are not its jaxpr's outputs).
        # Names of fresh arrays are in ``_fresh``; names that may be (views of) such
        # reused buffers in ``_reused``: a jaxpr output among them is copied.
        self.prelude = []
        self._hoist = True
        # a loop carry's double buffer the equation being written computes its result in
        # (``carry_buffers``), and the names of such buffers
        self._wants = {}
        self._single = False
        self._fresh = set()
        self._reused = set()

    # -- writing
    dt = staticmethod(dt_text)

    def fresh(self, hint="v"):
        """A new local name."""
        return f"{hint}{next(self._ids)}"

    def emit(self, line):
        """Add a line at the current indentation."""
        self.lines.append(self.indent + line)

    def push(self):
        """Indent the following lines one level more (``pop`` undoes it)."""
        self.indent += "    "

    def pop(self):
        """Undo one ``push``."""
        self.indent = self.indent[:-4]

    def new_array(self, aval, hint="a"):
        """An uninitialised array of ``aval``'s shape and dtype for an equation's result:
        allocated here, or (where the result dies within its loop step) once ahead of the
        loops and reused each step."""
        want = self._wants.pop(0, None) if self._single else None
        if want is not None:
            self._single = False
            return want
        return self.buffer(tuple(aval.shape), aval.dtype, hint, self._hoist)

    def buffer(self, shape, dtype, hint="a", reuse=True):
        """An uninitialised array: allocated once ahead of the loops when ``reuse`` (its
        value must not outlive the loop step that writes it), else here."""
        nm = self.fresh(hint)
        line = f"{nm} = np.empty({tuple(shape)}, {dt_text(dtype)})"
        if reuse:
            self.prelude.append(line)
            self._reused.add(nm)
        else:
            self.emit(line)
            self._fresh.add(nm)
        return nm

    def reused(self, name):
        """Whether the value ``name`` (a name or an expression) may be, or be a view of, a
        buffer reused across loop steps."""
        return any(t in self._reused for t in re.findall(r"[A-Za-z_]\w*", name))

    def const(self, value, aval):
        """The name of an array constant (a kernel argument) or a literal scalar."""
        value = np.asarray(value, aval.dtype)
        if value.ndim == 0:
            return _nb_literal(Literal(value, aval))
        key = id(value)
        k = self._const_index.get(key)
        if k is None:
            k = self._const_index[key] = len(self.consts)
            self.consts.append((value, aval))
        return f"K{k}"

    def ptr(self, ufunc, dtypes):
        """Index into the kernel's address table of NumPy's loop of ``ufunc`` for
        ``dtypes``; raises ``Unsupported`` when NumPy does not give it."""
        from jaxlite._src.compiler.ufunc_loops import strided_loop
        loop = strided_loop(ufunc, dtypes)
        if loop is None:
            raise Unsupported(ufunc.__name__)
        k = self._ptr_index.get(loop)
        if k is None:
            k = self._ptr_index[loop] = len(self.ptrs)
            self.ptrs.append(loop)
        self.uses_loops = True
        return 3 * k

    def loop_nest(self, shape):
        """Open ``for`` loops over ``shape`` (returns the index names; ``close_nest``)."""
        idx = []
        for n in shape:
            i = self.fresh("i")
            self.emit(f"for {i} in range({n}):")
            self.push()
            idx.append(i)
        return idx

    def close_nest(self, idx):
        """Close the loops of ``loop_nest``."""
        for _ in idx:
            self.pop()

    def flat(self, name, aval):
        """A flat view of an array value (the value itself when of rank 1)."""
        return name if aval.ndim == 1 else f"{name}.reshape({max(aval.size, 0)})"

    def to_scalar(self, name, aval):
        """The element of a value of one element, as a scalar."""
        return name if aval.shape == () else f"{name}.reshape(1)[0]"

    def to_array(self, name, aval, shape):
        """A value of one element (scalar or array) as an array of ``shape``."""
        if aval.shape == ():
            nm = self.buffer(tuple(shape), aval.dtype, reuse=self._hoist)
            self.emit(f"{nm}.fill({name})")
            return nm
        return f"{name}.reshape({tuple(shape)})"

    # -- jaxprs
    def jaxpr(self, closed, ins, owned=(), into=None, copied=()):
        """Write ``closed`` with inputs named ``ins``; returns its outputs' names. The
        inputs at positions ``owned`` are buffers nothing else references (a loop's
        carries, see ``loop_owned``): an update where they die writes them in place.
        ``into`` maps output positions to the buffers they are computed in (a loop's
        ``carry_buffers``); the caller copies the outputs at positions ``copied``."""
        from jaxlite._src.compiler.passes import optimize
        closed = optimize(closed)
        jaxpr = closed.jaxpr
        self._owned.update(jaxpr.invars[k] for k in owned)
        env = dict(zip(jaxpr.invars, ins))
        for v, c in zip(jaxpr.constvars, closed.consts):
            env[v] = self.const(c, v.aval)

        def read(a):
            return self.const(a.val, a.aval) if isinstance(a, Literal) else env[a]
        uses = {}
        for e in jaxpr.eqns:
            for a in e.invars:
                if not isinstance(a, Literal):
                    uses[a] = uses.get(a, 0) + 1
        for a in jaxpr.outvars:
            if not isinstance(a, Literal):
                uses[a] = 2
        self._once.update(v for v, n in uses.items() if n == 1)
        self._read.update(uses)
        hoist, wants, single = self._hoist, self._wants, self._single
        escaping = _escaping(jaxpr)
        into = into or {}
        by_var = {}
        for k, nm in into.items():
            if not isinstance(jaxpr.outvars[k], Literal):
                by_var.setdefault(jaxpr.outvars[k], nm)
        _through_calls(jaxpr, by_var)
        for e in jaxpr.eqns:
            ins = [read(a) for a in e.invars]
            self._hoist = not any(v in escaping for v in e.outvars)
            wanted = {k: by_var[v] for k, v in enumerate(e.outvars) if v in by_var}
            self._wants = dict(wanted)
            outs = self.eqn(e, ins)
            for k, dst in wanted.items():
                outs[k] = self.into(dst, outs[k], e.outvars[k].aval)
            self._wants = {}
            self._track(e, ins, outs)
            env.update(zip(e.outvars, outs))
        self._hoist = False
        res = []
        for k, a in enumerate(jaxpr.outvars):
            x = self.real(read(a), a.aval)
            if k in into:
                x = self.into(into[k], x, a.aval)
            elif a.aval.shape and not isinstance(a, Literal) and k not in copied and \
                    x not in self._fresh and a not in self._owned and self.reused(x):
                nm = self.fresh("a")     # (it would outlive the buffer's step)
                self.emit(f"{nm} = {x}.copy()")
                self._fresh.add(nm)
                x = nm
            res.append(x)
        self._hoist, self._wants, self._single = hoist, wants, single
        return res

    def into(self, dst, x, aval):
        """The value ``x`` (of ``aval``) in the buffer ``dst``: copied there unless
        computed there."""
        if x != dst:
            x = self.real(x, aval)
            self.emit(f"{dst}.reshape({aval.size})[:] = {x}.reshape({aval.size})"
                      if aval.ndim > 1 else f"{dst}[:] = {x}")
        return dst

    def _track(self, e, ins, outs):
        """Note which results of ``e`` may be views of reused buffers: those not fresh
        whose equation read such a value (a result may be a view of its operand)."""
        fed = any(self.reused(x) for x in ins)
        for v, x in zip(e.outvars, outs):
            if v in self._owned:     # (a buffer of its own: see ``own``)
                self._fresh.add(x)
            elif fed and v.aval.shape and x not in self._fresh:
                self._reused.add(x)

    def may_update(self, eqn):
        """Whether ``eqn`` may write its operand's buffer in place: an owned buffer this
        equation reads last (no other reader, not an output)."""
        v = eqn.invars[0]
        return v in self._owned and v in self._once

    def own(self, var):
        """Note that ``var``'s buffer is referenced by nothing else (a fresh copy, or an
        owned buffer updated where it died)."""
        self._owned.add(var)

    def loop_owned(self, closed, first, n):
        """The carries (0..n-1; body inputs ``first``..) a loop may hand its body as owned
        buffers: those whose next value is the result of an update (``x.at[i].set``,
        ``dynamic_update_slice``) the body returns once and reads nowhere else. The loop
        copies their initial values once; each step's result is then a buffer of the
        loop's own."""
        from jaxlite._src.compiler.passes import optimize
        jaxpr = optimize(closed).jaxpr
        updated = _updated(jaxpr)
        return [k for k in range(n) if jaxpr.outvars[k] in updated]

    def carry_buffers(self, closed, first, carry, owned):
        """Two buffers each (swapped every step) for the array carries (names ``carry``;
        body inputs ``first``..) whose next value a body equation computes: the body
        writes it into the buffer that held the value of two steps ago, which nothing
        references any more when the body passes no carry value (or view of it) on (see
        ``_escaping``). Returns {carry: (buffer, other buffer)}; ``jaxpr(..., into=...)``
        takes the first names, ``swap`` exchanges them after each step. The buffers (and
        the carries, when the buffers are reused across steps of an enclosing loop) count
        as reused buffers: another value that is one of them is copied where it leaves
        its jaxpr."""
        from jaxlite._src.compiler.passes import optimize
        jaxpr = optimize(closed).jaxpr
        escaping = _escaping(jaxpr)
        made = {v for e in jaxpr.eqns for v in e.outvars}
        outs = list(jaxpr.outvars)
        res = {}
        for k, c in enumerate(carry):
            o = outs[k]
            if k in owned or isinstance(o, Literal) or not o.aval.shape or o not in made or \
                    outs.count(o) != 1 or jaxpr.invars[first + k] in escaping:
                continue
            res[k] = tuple(self.buffer(o.aval.shape, o.aval.dtype, "db", self._hoist)
                           for _ in range(2))
            self._reused.update(res[k])
            if self._hoist:     # (the loop's result is then one of them)
                self._reused.add(c)
        return res

    def swap(self, buffers):
        """Exchange each pair of ``carry_buffers`` (after a loop step)."""
        for a, b in buffers.values():
            self.emit(f"{a}, {b} = {b}, {a}")

    def real(self, x, aval):
        """``x`` as a computed value (an expression kept for its reader computed now)."""
        got = self._deferred.pop(x, None)
        return x if got is None else self.compute(got[0], aval)

    def compute(self, expr, out, src=""):
        """A new array of ``out`` whose element ``i`` is ``expr`` (array elements written
        ``@@array@@``), in one loop."""
        res = self.new_array(out)
        rf = self.fresh("f")
        self.emit(f"{rf} = {self.flat(res, out)}")
        flats = {}
        for leaf in re.findall(r"@@(.+?)@@", expr):
            if leaf not in flats:
                flats[leaf] = self.fresh("f")
                self.emit(f"{flats[leaf]} = {self.flat(leaf, out)}")
        i = self.fresh("i")
        text = re.sub(r"@@(.+?)@@", lambda m: f"{flats[m.group(1)]}[{i}]", expr)
        self.emit(f"for {i} in range({out.size}):{src}")
        self.emit(f"    {rf}[{i}] = {text}")
        return res

    def eqn(self, e, ins):
        """Write one equation; returns its outputs' names."""
        if has_effects(e) or not getattr(e.primitive, "fuses_as_its_name", True):
            # (a random sampler's XLA arithmetic under a lax op's name: its products carry
            # their exact value to the add they feed, which no loop code keeps)
            raise Unsupported(e.primitive.name)
        for a in list(e.invars) + list(e.outvars):
            if a.aval.dtype not in HELD_DTYPES:
                raise Unsupported(f"{e.primitive.name} on {a.aval.dtype}")
        self.n_eqns += 1
        src = _src_comment(e)
        rule = getattr(e.primitive, "numba", None)
        wants = dict(self._wants)
        self._single = len(e.outvars) == 1
        # (a scalar function of the primitive's own, e.g. an XLA kernel's twin, composes
        # into the surrounding expression as the plain operators do)
        if (rule is None or getattr(e.primitive, "numba_scalar", None) is not None) and \
                numba_expr_ok(e):
            return [self.elementwise(e, ins, src)]
        self._single = False    # (no wanted buffer for operands computed late)
        ins = [self.real(x, a.aval) for x, a in zip(ins, e.invars)]
        # (a single result is computed in its wanted buffer by the rule's first new array)
        self._single = len(e.outvars) == 1
        try:
            if rule is not None:
                outs = rule(self, e, ins, **e.params)
                if outs is not None:
                    return outs
            elif _is_ufunc_eqn(e):
                return [self.ufunc(e, ins, src)]
        except Unsupported:
            pass
        self._single = False
        body = inline_jaxpr(e)
        if body is not None:
            self.n_eqns -= 1
            self._wants = {}
            # (an owned buffer this call reads last is the body's own too)
            owned = [j for j, a in enumerate(e.invars) if a in self._owned and a in self._once]
            outs = self.jaxpr(body, ins, owned, into=wants)
            self._wants = wants
            return outs
        return self.python_call(e, ins, src)

    def python_call(self, e, ins, src=""):
        """An equation with no loop code of its own: its ``impl`` (what tier 1 runs), called
        from the compiled loop through numba's object mode (a few microseconds)."""
        k = len(self.pycalls)
        self.pycalls.append(_ImplCall(e))
        # (numba wants types for the block's results read after it, and only for those)
        outs = [self.fresh("r") if v in self._read else "_" for v in e.outvars]
        types = ", ".join(f'{o}="{_objmode_type(v.aval)}"' for o, v in zip(outs, e.outvars)
                          if o != "_")
        self.emit(f"with numba.objmode({types}):{src}")
        self.emit(f"    {', '.join(outs)}{',' if len(outs) == 1 else ''} = "
                  f"call_impl(KID, {k}, {', '.join(ins)})")
        return outs

    # -- elementwise
    def elementwise(self, e, ins, src="", expr=None):
        """An exact elementwise equation: a scalar expression (``expr(operands)``, by default
        the op's own), or a loop over elements computing it."""
        expr = expr or (lambda xs: _nb_scalar_expr(e, xs))
        out = e.outvars[0].aval
        if out.shape == ():
            ins = [self.to_scalar(x, a.aval) for x, a in zip(ins, e.invars)]
            nm = self.fresh("s")
            self.emit(f"{nm} = {expr(ins)}{src}")
            return nm
        terms = []
        for x, a in zip(ins, e.invars):
            if a.aval.shape == ():
                terms.append(x)
            elif tuple(a.aval.shape) != tuple(out.shape):
                raise Unsupported("broadcasting operands")
            elif x in self._deferred:
                terms.append(f"({self._deferred.pop(x)[0]})")
            else:
                terms.append(f"@@{x}@@")
        text = expr(terms)
        if e.outvars[0] in self._once and text.count("@@") < 48:
            nm = self.fresh("d")
            self._deferred[nm] = (text, out)
            return nm
        return self.compute(text, out, src)

    def ufunc(self, e, ins, src="", ufunc=None):
        """An equation tier 1 computes with one NumPy ufunc (``ufunc``, by default the
        primitive's): a call of its inner loop over the operands."""
        return self.ufunc_call(ufunc or e.primitive.np_fn,
                               [(x, a.aval) for x, a in zip(ins, e.invars)],
                               e.outvars[0].aval, src)

    def ufunc_call(self, ufunc, operands, out, src=""):
        """``ufunc(*operands)`` (pairs of a name or scalar expression and its aval) through
        NumPy's inner loop: arrays of ``out``'s shape, and rank-0 operands with stride 0, as
        NumPy passes them."""
        k = self.ptr(ufunc, [a.dtype for _, a in operands])
        ops = []
        for x, a in operands:
            if a.shape != () and tuple(a.shape) != tuple(out.shape):
                raise Unsupported("broadcasting operands")
            if a.shape == ():   # (a buffer of one element)
                b = self.buffer((1,), a.dtype, "b")
                self.emit(f"{b}[0] = {x}")
                ops.append((b, 0))
            else:
                ops.append((x, a.dtype.itemsize))
        res = self.out_buffer(out)
        ops.append((res, out.dtype.itemsize))
        if out.size:    # (an empty result: nothing to compute)
            self.call_loop(k, ops, out.size, src)
        return self.out_value(res, out)

    def out_buffer(self, out):
        """A fresh buffer a NumPy loop writes the value of ``out`` into (one element for a
        scalar)."""
        if out.shape:
            return self.new_array(out)
        return self.buffer((1,), out.dtype, "b")   # (its element is read at once)

    def out_value(self, res, out):
        """The value of ``out`` from its ``out_buffer``."""
        if out.shape:
            return res
        nm = self.fresh("s")
        self.emit(f"{nm} = {res}[0]")
        return nm

    def call_loop(self, k, ops, n, src="", offsets=None, core=()):
        """Call NumPy's loop number ``k`` over ``n`` elements of ``ops``: (array, stride in
        bytes) pairs, each read/written from its first element plus ``offsets``; ``core``:
        a generalized ufunc's (core dimensions, core strides), after the outer ones."""
        offsets = offsets or [0] * len(ops)
        dims = [n] + list(core[0] if core else [])
        strides = [s for _, s in ops] + list(core[1] if core else [])
        for j, d in enumerate(dims):
            self.emit(f"_D[{j}] = {d}" + (src if j == 0 else ""))
        for j, ((x, _), off) in enumerate(zip(ops, offsets)):
            self.emit(f"_A[{j}] = {x}.ctypes.data" + (f" + {off}" if off else ""))
        for j, s in enumerate(strides):
            self.emit(f"_S[{j}] = {s}")
        self.emit(f"call_loop(P[{k}], P[{k + 1}], _A.ctypes.data, _D.ctypes.data, "
                  f"_S.ctypes.data, P[{k + 2}])")

    def broadcast(self, x, aval, out, dims):
        """``broadcast_in_dim``: a loop nest over the result reading the operand."""
        if aval.shape == ():
            return self.to_array(x, aval, out.shape)
        return self.gather_nest(out, lambda idx: f"{x}[" + ", ".join(
            "0" if aval.shape[k] == 1 else idx[d] for k, d in enumerate(dims)) + "]")

    # -- helpers of the primitives' ``numba`` rules
    def clamped(self, s, hi):
        """A start index clamped into ``[0, hi]`` (XLA's rule for dynamic slices)."""
        return f"min(max(np.int64({s}), 0), {max(hi, 0)})"

    def copy_block(self, dst, dst_starts, src, src_starts, shape, combine=None):
        """``dst[dst_starts + i] = src[src_starts + i]`` over the block ``shape`` (or
        ``combine(dst[...], src[...])``: an expression template)."""
        if not shape:
            self.emit(f"{dst}[()] = {src}")
            return
        idx = self.loop_nest(shape)
        d = ", ".join(f"{s} + {i}" if s != "0" else i for s, i in zip(dst_starts, idx))
        r = ", ".join(f"{s} + {i}" if s != "0" else i for s, i in zip(src_starts, idx))
        val = f"{src}[{r}]"
        if combine is not None:
            val = combine.format(f"{dst}[{d}]", val)
        self.emit(f"{dst}[{d}] = {val}")
        self.close_nest(idx)

    def reduce(self, ufunc, x, aval, axes, out, identity, sequential=False):
        """``ufunc.reduce(x, axes)`` as NumPy computes it, through NumPy's own loop: over
        trailing axes each row runs the loop in reduction mode (from the ufunc's identity
        when ``identity`` is not None, else from the row's first element); over leading
        axes (``identity`` None only) the rows are combined one by one. ``sequential``
        (trailing axes, an identity): each row's elements added one by one from the
        identity instead (XLA's order for a window of a sum)."""
        nd, it = aval.ndim, aval.dtype.itemsize
        kept = [d for d in range(nd) if d not in axes]
        outer = math.prod([aval.shape[d] for d in kept])
        inner = math.prod([aval.shape[d] for d in axes])
        if inner == 0 or outer == 0:
            raise Unsupported("empty reduction")
        k = self.ptr(ufunc, [aval.dtype, aval.dtype])
        res = self.buffer((outer,), aval.dtype, "r", self._hoist or out.shape == ())
        xf = self.fresh("f")
        self.emit(f"{xf} = {self.flat(x, aval)}")
        if trailing(axes, nd):
            o = self.fresh("i")
            self.emit(f"for {o} in range({outer}):")
            self.push()
            first = 0 if identity is not None else 1
            start = identity if identity is not None else f"{xf}[{o} * {inner}]"
            self.emit(f"{res}[{o}] = {start}")
            if sequential:
                j = self.fresh("i")
                self.emit(f"for {j} in range({inner}):")
                self.push()
                self.emit(f"{res}[{o}] = {res}[{o}] + {xf}[{o} * {inner} + {j}]")
                self.pop()
            elif inner > first:
                self.call_loop(k, [(res, 0), (xf, it), (res, 0)], inner - first,
                               offsets=[f"{o} * {it}", f"({o} * {inner} + {first}) * {it}",
                                        f"{o} * {it}"])
            self.pop()
        elif identity is None and tuple(sorted(axes)) == tuple(range(len(axes))):
            self.emit(f"{res}[:] = {xf}[:{outer}]")
            r = self.fresh("i")
            self.emit(f"for {r} in range(1, {inner}):")
            self.push()
            self.call_loop(k, [(res, it), (xf, it), (res, it)], outer,
                           offsets=[0, f"{r} * {outer * it}", 0])
            self.pop()
        else:
            raise Unsupported("reduction over middle axes")
        if out.shape == ():
            nm = self.fresh("s")
            self.emit(f"{nm} = {res}[0]")
            return nm
        return f"{res}.reshape({tuple(out.shape)})"

    def tree_sum(self, x, aval, axes, out, window):
        """A float sum over ``axes`` in XLA:CPU's order (``ReduceSum.xla_sum``): while a
        summed dimension is longer than ``window``, windows of ``window`` along each such
        dimension (the zero padding split before and after, the smaller part before) and
        whole along the others, each window's elements added one by one in row-major
        order from 0; then the last partials the same way. (Adding a padding zero never
        changes a sum that started from +0, so windows at the ends are just shorter.)
        Each result element reads its operand through the strides of the summed axes,
        from an offset the kept axes give."""
        nd = aval.ndim
        strides = [math.prod(aval.shape[d + 1:]) for d in range(nd)]
        kept = [d for d in range(nd) if d not in axes]
        summed = sorted(axes)
        outer = math.prod([aval.shape[d] for d in kept])
        dims = [aval.shape[d] for d in summed]
        inner = math.prod(dims)
        if inner == 0 or outer == 0:
            raise Unsupported("empty reduction")
        dt = dt_text(aval.dtype)
        res = self.buffer((outer,), aval.dtype, "r", self._hoist or out.shape == ())
        xf = self.fresh("f")
        self.emit(f"{xf} = {self.flat(x, aval)}")
        o = self.fresh("i")
        self.emit(f"for {o} in range({outer}):")
        self.push()
        if summed == list(range(nd - len(summed), nd)):     # (trailing axes)
            base = f"{o} * {inner}"
        else:   # (the kept axes' indices of result element o, times their strides)
            terms, step = [], 1
            for d in reversed(kept):
                n = aval.shape[d]
                if n > 1:
                    idx = o if step == 1 else f"({o} // {step})"
                    idx = idx if step * n == outer else f"({idx} % {n})"
                    terms.append(f"{idx} * {strides[d]}")
                step *= n
            base = " + ".join(reversed(terms)) or "0"
        src, sstr = xf, [strides[d] for d in summed]
        while True:
            last = all(n <= window for n in dims)
            parts = [1 if last or n <= window else -(-n // window) for n in dims]
            pads = [(p * window - n) // 2 for p, n in zip(parts, dims)]
            if not last:
                part = self.buffer((math.prod(parts),), aval.dtype, "p")
            ks = [self.fresh("i") for _ in dims]
            depth = 0
            for k, p in zip(ks, parts):       # (one partial per window)
                if p > 1:
                    self.emit(f"for {k} in range({p}):")
                    self.push()
                    depth += 1
            acc = self.fresh("s")
            self.emit(f"{acc} = {dt}(0)")
            js = [self.fresh("i") for _ in dims]
            for j, k, p, n, lo in zip(js, ks, parts, dims, pads):   # (the window, in order)
                rng = f"max(0, {k} * {window} - {lo}), min({n}, {k} * {window} + " \
                      f"{window - lo})" if p > 1 else f"{n}"
                self.emit(f"for {j} in range({rng}):")
                self.push()
            flat = " + ".join(f"{j} * {st}" if st != 1 else j for j, st in zip(js, sstr))
            self.emit(f"{acc} = {dt}({acc} + {src}[{base} + {flat}])")
            for _ in js:
                self.pop()
            if last:
                self.emit(f"{res}[{o}] = {acc}")
            else:
                at = " + ".join(f"{k} * {math.prod(parts[d + 1:])}"
                                for d, (k, p) in enumerate(zip(ks, parts)) if p > 1)
                self.emit(f"{part}[{at}] = {acc}")
            for _ in range(depth):
                self.pop()
            if last:
                break
            src, base, dims = part, "0", parts
            sstr = [math.prod(parts[d + 1:]) for d in range(len(parts))]
        self.pop()
        if out.shape == ():
            nm = self.fresh("s")
            self.emit(f"{nm} = {res}[0]")
            return nm
        return f"{res}.reshape({tuple(out.shape)})"

    def matmul(self, a, aa, b, ba, out):
        """``np.matmul(a, b)`` for operands of rank 1 or 2 through NumPy's own loop (the
        BLAS call NumPy makes; a missing dimension has size 1 and stride 0, as NumPy
        passes it)."""
        k = self.ptr(np.matmul, [aa.dtype, ba.dtype])
        it = out.dtype.itemsize
        n = aa.shape[0] if aa.ndim == 2 else 1
        kk = aa.shape[-1]
        m = ba.shape[1] if ba.ndim == 2 else 1
        res = self.out_buffer(out)
        strides = [kk * it if aa.ndim == 2 else 0, it,
                   (m if ba.ndim == 2 else 1) * it, it if ba.ndim == 2 else 0,
                   (m if ba.ndim == 2 else 1) * it if aa.ndim == 2 else 0,
                   it if ba.ndim == 2 else 0]
        self.call_loop(k, [(a, 0), (b, 0), (res, 0)], 1, core=([n, kk, m], strides))
        return self.out_value(res, out)

    def reshape(self, x, aval, out):
        """``x`` (of ``aval``) with the shape of ``out`` (the same elements in order)."""
        if out.shape == ():
            return self.to_scalar(x, aval)
        if aval.shape == ():
            return self.to_array(x, aval, out.shape)
        nm = self.fresh("a")
        self.emit(f"{nm} = {x}.reshape({tuple(out.shape)})")
        return nm

    def gather_nest(self, out, read):
        """A new array of ``out`` whose element at the loop indices is ``read(indices)``."""
        res = self.new_array(out)
        idx = self.loop_nest(out.shape)
        self.emit(f"{res}[{', '.join(idx)}] = {read(idx)}")
        self.close_nest(idx)
        return res

    def need_import(self, line):
        """Have the kernel's module run the import ``line`` (functions a rule calls)."""
        if line not in self.imports:
            self.imports.append(line)

    def assign(self, names, values):
        """``names = values`` at once (a loop's new carries may be its old ones in another
        order; arrays by reference: values are never written after they are made)."""
        pairs = [(n, v) for n, v in zip(names, values) if n != v]
        if pairs:
            comma = "," if len(pairs) == 1 else ""
            self.emit(f"{', '.join(n for n, _ in pairs)}{comma} = "
                      f"{', '.join(v for _, v in pairs)}{comma}")


def _objmode_type(aval):
    """numba's type text of a value (``float32[:, ::1]``, ``int32``)."""
    base = "boolean" if aval.dtype == np.bool_ else aval.dtype.name
    if not aval.shape:
        return base
    return f"{base}[{', '.join([':'] * (aval.ndim - 1) + ['::1'])}]"


class _ImplCall:
    """An equation's impl as a loop kernel calls it: operands made NumPy values of their
    avals, results C-contiguous writable arrays (scalars for rank 0) of theirs."""

    def __init__(self, eqn):
        self.prim, self.params = eqn.primitive, eqn.params
        self.in_avals = [a.aval for a in eqn.invars]
        self.out_avals = [v.aval for v in eqn.outvars]

    def __call__(self, *args):
        vals = [np.asarray(a, av.dtype).reshape(av.shape) for a, av in
                zip(args, self.in_avals)]
        out = self.prim.impl(*vals, **self.params)
        outs = out if self.prim.multiple_results else [out]
        res = []
        for o, av in zip(outs, self.out_avals):
            o = np.asarray(o, av.dtype)
            if av.shape:
                res.append(np.array(o, order="C", copy=True).reshape(av.shape))
            else:
                res.append(o[()])
        return tuple(res)


_impl_tables = {}
_kids = itertools.count()


def call_impl(kid, k, *args):
    """Called from a loop kernel's object-mode block: equation ``k`` of kernel ``kid``."""
    return _impl_tables[kid][k](*args)


def inline_jaxpr(e):
    """The closed jaxpr a call-like equation runs (nested jit, custom derivative calls,
    library primitives lowered through a function), or None."""
    p = e.primitive
    if getattr(p, "inlinable", False):
        return e.params[getattr(p, "inline_param", "jaxpr")]
    get = getattr(p, "inline_body", None)
    return get(e) if get is not None else None


def _updated(jaxpr):
    """The outputs of ``jaxpr`` that are results of updates (``x.at[i].set``,
    ``dynamic_update_slice``; also inside calls written in place) which the jaxpr returns
    once and reads nowhere else: buffers of their own (see ``loop_owned``)."""
    made = set()
    for e in jaxpr.eqns:
        if e.primitive.updates_operand:
            made.add(e.outvars[0])
            continue
        body = inline_jaxpr(e)
        if body is not None:
            inner = _updated(body.jaxpr)
            made.update(v for v, o in zip(e.outvars, body.jaxpr.outvars) if o in inner)
    read = {a for e in jaxpr.eqns for a in e.invars if not isinstance(a, Literal)}
    outs = list(jaxpr.outvars)
    return {v for v in made if v not in read and outs.count(v) == 1}


def _through_calls(jaxpr, by_var):
    """Extend ``by_var`` (wanted buffers of variables of ``jaxpr``) to the values that a
    call written in place passes on unchanged as a wanted result (equinox's
    ``select_if_vmap`` outside vmap): the value is then computed in the buffer."""
    made = {v for e in jaxpr.eqns for v in e.outvars}
    for e in reversed(jaxpr.eqns):
        if not any(v in by_var for v in e.outvars):
            continue
        body = inline_jaxpr(e)
        if body is None:
            continue
        inner = body.jaxpr
        for v, o in zip(e.outvars, inner.outvars):
            if v in by_var and not isinstance(o, Literal) and o in inner.invars:
                src = e.invars[inner.invars.index(o)]
                if not isinstance(src, Literal) and src in made and src not in by_var:
                    by_var[src] = by_var[v]


def _escaping(jaxpr, outs=None):
    """The variables of ``jaxpr`` that may become (or be viewed by) its outputs (``outs``,
    by default all): those, and the operands of equations that may pass an operand on:
    not elementwise ones; of an in-place update, only its operand; of a call written in
    place, those its body may pass on; all operands of any other."""
    escaping = {a for a in (jaxpr.outvars if outs is None else outs)
                if not isinstance(a, Literal)}
    for e in reversed(jaxpr.eqns):
        hit = [k for k, v in enumerate(e.outvars) if v in escaping]
        if not hit or isinstance(e.primitive, Elementwise):
            continue
        body = None if e.primitive.updates_operand else inline_jaxpr(e)
        if e.primitive.updates_operand:
            passed = e.invars[:1]
        elif body is not None:
            inner = body.jaxpr
            esc = _escaping(inner, [inner.outvars[k] for k in hit])
            passed = [a for a, v in zip(e.invars, inner.invars) if v in esc]
        else:
            passed = e.invars
        escaping.update(a for a in passed if not isinstance(a, Literal))
    return escaping


def trailing(axes, ndim):
    """Whether ``axes`` are the last ``len(axes)`` dimensions."""
    return tuple(sorted(axes)) == tuple(range(ndim - len(axes), ndim))

