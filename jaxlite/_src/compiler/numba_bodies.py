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

Effects, callbacks, dtypes numba lacks and the random samplers' XLA-arithmetic ops leave the
loop to tier 1: ``array_loop_kernel`` returns None. A kernel is compiled once its loop has
earned it (``LazyKernel``). Array constants of the bodies and the addresses of
NumPy's loops are arguments of the kernel, so its source (the name of its disk cache entry)
depends on the program only.
"""
from __future__ import annotations

import atexit
import itertools
import logging
import math
import threading
import time
import weakref

import numpy as np

from jaxlite._src.compiler.codegen import _is_ufunc_eqn, _src_comment
from jaxlite._src.compiler.numba_kernels import (
    LoopKernel, NUMBA_DTYPES, _load_numba_kernel, _nb_literal, _nb_scalar_expr, _nb_type,
    kernel_cached, numba_expr_ok)
from jaxlite._src.core.ir import Literal, has_effects

__all__ = ["ArrayCode", "Unsupported", "array_loop_kernel", "ArrayLoopKernel", "call_impl"]

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
        """A fresh uninitialised array of ``aval``'s shape and dtype."""
        nm = self.fresh(hint)
        self.emit(f"{nm} = np.empty({tuple(aval.shape)}, {dt_text(aval.dtype)})")
        return nm

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
        """A flat view of an array value."""
        return f"{name}.reshape({max(aval.size, 0)})"

    def to_scalar(self, name, aval):
        """The element of a value of one element, as a scalar."""
        return name if aval.shape == () else f"{name}.reshape(1)[0]"

    def to_array(self, name, aval, shape):
        """A value of one element (scalar or array) as an array of ``shape``."""
        if aval.shape == ():
            nm = self.fresh("a")
            self.emit(f"{nm} = np.full({tuple(shape)}, {name}, {dt_text(aval.dtype)})")
            return nm
        return f"{name}.reshape({tuple(shape)})"

    # -- jaxprs
    def jaxpr(self, closed, ins, owned=()):
        """Write ``closed`` with inputs named ``ins``; returns its outputs' names. The
        inputs at positions ``owned`` are buffers nothing else references (a loop's
        carries, see ``loop_owned``): an update where they die writes them in place."""
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
        for e in jaxpr.eqns:
            outs = self.eqn(e, [read(a) for a in e.invars])
            env.update(zip(e.outvars, outs))
        return [self.real(read(a), a.aval) for a in jaxpr.outvars]

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
        made = {e.outvars[0] for e in jaxpr.eqns if e.primitive.updates_operand}
        read = {a for e in jaxpr.eqns for a in e.invars if not isinstance(a, Literal)}
        outs = list(jaxpr.outvars)
        return [k for k in range(n) if outs[k] in made and outs[k] not in read and
                outs.count(outs[k]) == 1]

    def real(self, x, aval):
        """``x`` as a computed value (an expression kept for its reader computed now)."""
        got = self._deferred.pop(x, None)
        return x if got is None else self.compute(got[0], aval)

    def compute(self, expr, out, src=""):
        """A new array of ``out`` whose element ``i`` is ``expr`` (array elements written
        ``@@array@@``), in one loop."""
        import re
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
        if rule is None and numba_expr_ok(e):
            return [self.elementwise(e, ins, src)]
        ins = [self.real(x, a.aval) for x, a in zip(ins, e.invars)]
        try:
            if rule is not None:
                outs = rule(self, e, ins, **e.params)
                if outs is not None:
                    return outs
            elif _is_ufunc_eqn(e):
                return [self.ufunc(e, ins, src)]
        except Unsupported:
            pass
        body = inline_jaxpr(e)
        if body is not None:
            self.n_eqns -= 1
            return self.jaxpr(body, ins)
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
                b = self.fresh("b")
                self.emit(f"{b} = np.full(1, {x}, {dt_text(a.dtype)})")
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
        res = self.fresh("b")
        self.emit(f"{res} = np.empty(1, {dt_text(out.dtype)})")
        return res

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

    def reduce(self, ufunc, x, aval, axes, out, identity):
        """``ufunc.reduce(x, axes)`` as NumPy computes it, through NumPy's own loop: over
        trailing axes each row runs the loop in reduction mode (from the ufunc's identity
        when ``identity`` is not None, else from the row's first element); over leading
        axes (``identity`` None only) the rows are combined one by one."""
        nd, it = aval.ndim, aval.dtype.itemsize
        kept = [d for d in range(nd) if d not in axes]
        outer = math.prod([aval.shape[d] for d in kept])
        inner = math.prod([aval.shape[d] for d in axes])
        if inner == 0 or outer == 0:
            raise Unsupported("empty reduction")
        k = self.ptr(ufunc, [aval.dtype, aval.dtype])
        res = self.fresh("r")
        self.emit(f"{res} = np.empty({outer}, {dt_text(aval.dtype)})")
        xf = self.fresh("f")
        self.emit(f"{xf} = {self.flat(x, aval)}")
        if trailing(axes, nd):
            o = self.fresh("i")
            self.emit(f"for {o} in range({outer}):")
            self.push()
            first = 0 if identity is not None else 1
            start = identity if identity is not None else f"{xf}[{o} * {inner}]"
            self.emit(f"{res}[{o}] = {start}")
            if inner > first:
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


class ArrayLoopKernel(LoopKernel):
    """A loop equation whose body computes on small arrays, compiled whole to one numba
    function (its constants and NumPy's loop addresses are arguments)."""

    def __init__(self, eqn, source, consts, ptrs, pycalls):
        super().__init__(eqn, source)
        self.consts = consts
        self.kid = next(_kids)
        if pycalls:   # (what its object-mode blocks call)
            _impl_tables[self.kid] = pycalls
        self.ptrs = np.array([a for t in ptrs for a in t] or [0], np.int64)

    def emit(self, ctx, lines):
        """The kernel's call where numba has compiled it, else tier 1's loop, timed: the
        loop earns its compilation (``LazyKernel``)."""
        from jaxlite._src.compiler.codegen import emit_eqn
        from jaxlite._src.config import config
        lazy = LazyKernel(self.source, self.eqn)
        if config._flags["jaxlite_tier"].value in (2, "2") or kernel_cached(self.source):
            lazy.build()      # (forced tier 2, or on disk already: load it now)
        if lazy.state == "failed":
            emit_eqn(ctx, self.eqn, lines)
            return
        ctx.globals.setdefault("__kernel_sources__", []).append(self.source)
        lz = ctx.bind_global(lazy, "lazy")
        perf = ctx.bind_global(time.perf_counter, "perf")
        call = [ctx.bind_global(self.ptrs, "ptrs"), str(self.kid)]
        call += [f"{ctx.var(a)}.ravel()" if a.aval.shape else f"{ctx.var(a)}[()]"
                 for a in self.eqn.invars]
        # (writable copies: the kernel types its constants as its own arrays)
        call += [ctx.bind_global(np.array(c, copy=True).ravel(), "kc") for c, _ in self.consts]
        flat = []
        lines.append(f"    if {lz}.fn is not None:")
        for v in self.eqn.outvars:
            tmp = f"_{ctx.var(v)}_flat"
            flat.append(tmp)
            lines.append(f"        {tmp} = np.empty({max(v.aval.size, 1)}, "
                         f"{ctx.bind_global(v.aval.dtype, 'dt')})")
        lines.append(f"        {lz}.fn({', '.join(call + flat)})  # "
                     f"{self.eqn.primitive.name} compiled whole (arrays): one numba "
                     f"function{_src_comment(self.eqn)}")
        for v, tmp in zip(self.eqn.outvars, flat):
            lines.append(f"        {ctx.var(v)} = {tmp}[:{v.aval.size}].reshape("
                         f"{tuple(v.aval.shape)})")
        lines.append("    else:   # (until numba has compiled it: tier 1's loop, timed)")
        lines.append(f"        _t0 = {perf}()")
        tier1 = []
        emit_eqn(ctx, self.eqn, tier1)
        lines.extend("    " + ln for ln in tier1)
        lines.append(f"        {lz}.charge({perf}() - _t0)")


_building = weakref.WeakSet()


@atexit.register
def _join_builds():
    """Let kernel compilations finish before the interpreter tears down."""
    for t in list(_building):
        t.join(timeout=30)


class LazyKernel:
    """A loop kernel compiled when its loop has earned it: compiling a large body takes
    numba seconds (in a background thread, but holding the GIL much of the time), so the
    loop runs as tier 1's until the time spent in it reaches an estimate of the compile
    time (a ski-rental choice: at most about twice the best time), then numba compiles it
    in the background and the next call runs it. ``fn`` is the compiled kernel or None."""

    def __init__(self, source, eqn):
        self.source, self.eqn = source, eqn
        self.fn = None
        self.state = "cold"
        self.spent = 0.0
        # (numba compiles ~30 lines a second here, after ~0.5 s of setting up)
        self.budget = 0.5 + source.count("\n") / 30
        self.lock = threading.Lock()

    def charge(self, seconds):
        """Add time spent in the loop as tier 1's; start compiling once it is earned."""
        self.spent += seconds
        if self.spent < self.budget or self.state != "cold":
            return
        with self.lock:
            if self.state != "cold":
                return
            self.state = "building"
        t = threading.Thread(target=self.build, daemon=True, name="jaxlite-loop-kernel")
        _building.add(t)
        t.start()

    def build(self):
        """Compile (or load) the kernel now."""
        try:
            fn = _load_numba_kernel(self.source)
        except Exception as e:   # (the loop stays tier 1's)
            self.state = "failed"
            logging.getLogger("jaxlite").warning(
                "tier 2: the %s loop%s did not compile whole (%s: %s); it runs as tier 1's "
                "loop", self.eqn.primitive.name, _src_comment(self.eqn).replace("  #", ""),
                type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            return
        self.state = "ready"
        self.fn = fn


def array_loop_kernel(eqn):
    """An ``ArrayLoopKernel`` for a loop equation (``scan``, ``while``) whose body
    ``ArrayCode`` can write, else None."""
    if getattr(eqn.primitive, "numba_loop", None) is None or has_effects(eqn) or \
            not eqn.outvars:
        return None
    code = ArrayCode()
    ins, pre = [], []
    for k, a in enumerate(eqn.invars):
        if a.aval.dtype not in HELD_DTYPES:
            return None
        # (a mutable copy: the loop's arrays are then all of one numba type)
        pre.append(f"    x{k} = p{k}.reshape({tuple(a.aval.shape)}).copy()" if a.aval.shape
                   else f"    x{k} = p{k}")
        ins.append(f"x{k}")
    try:
        outs = code.eqn(eqn, ins)
    except Unsupported as e:
        logging.getLogger("jaxlite").debug("tier 2: the %s loop%s stays tier 1's (%s)",
                                           eqn.primitive.name, _src_comment(eqn), e)
        return None
    if len(code.pycalls) > MAX_PYTHON_SHARE * code.n_eqns:
        return None
    params = ["P", "KID"] + [f"p{k}" for k in range(len(ins))] + \
        [f"k{k}" for k in range(len(code.consts))] + [f"o{k}" for k in range(len(outs))]
    types = ["_t.int64[::1]", "_t.int64"]
    types += [_nb_type(a.aval.dtype, bool(a.aval.shape), True) for a in eqn.invars]
    types += [_nb_type(aval.dtype, True) for _, aval in code.consts]
    types += [_nb_type(v.aval.dtype, True) for v in eqn.outvars]
    body = pre + [f"    K{k} = k{k}.reshape({tuple(aval.shape)})"
                  for k, (_, aval) in enumerate(code.consts)]
    if code.uses_loops:
        body += ["    _A = np.empty(8, np.int64)", "    _D = np.empty(4, np.int64)",
                 "    _S = np.empty(16, np.int64)"]
    body += code.lines
    for k, (o, v) in enumerate(zip(outs, eqn.outvars)):
        if v.aval.shape:
            body.append(f"    o{k}[:] = {o}.reshape({v.aval.size})")
        else:
            body.append(f"    o{k}[0] = {o}")
    header = ["import numba", "import numpy as np", "from numba import types as _t"]
    if code.uses_loops:
        header.append("from jaxlite._src.compiler.ufunc_loops import call_loop")
    if code.pycalls:
        header.append("from jaxlite._src.compiler.numba_bodies import call_impl")
    header += code.imports
    # (object-mode blocks take the GIL: nogil would only earn numba's warning)
    header += ["", f"@numba.njit(_t.void({', '.join(types)}), error_model='numpy', "
               f"cache=True{'' if code.pycalls else ', nogil=True'})"]
    src = "\n".join([
        f"# jaxlite tier-2 loop kernel over arrays: {eqn.primitive.name} (generated; the "
        "file name is the hash of this text)", *header,
        f"def kernel({', '.join(params)}):", *body, ""])
    return ArrayLoopKernel(eqn, src, code.consts, code.ptrs, code.pycalls)


def trailing(axes, ndim):
    """Whether ``axes`` are the last ``len(axes)`` dimensions."""
    return tuple(sorted(axes)) == tuple(range(ndim - len(axes), ndim))

