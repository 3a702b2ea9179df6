"""Tier 2's loop kernels over arrays: the numba function of a ``scan``/``while`` loop
whose body ``numba_bodies.ArrayCode`` writes (its arguments, constants, NumPy loop
addresses and results around the body's code), and ``LazyKernel``, which compiles it once
the loop has earned it."""
from __future__ import annotations

import contextlib
import logging
import threading
import time
import weakref

import numpy as np

from jaxlite._src.compiler.codegen import _src_comment
from jaxlite._src.compiler.numba_bodies import (
    HELD_DTYPES, MAX_PYTHON_SHARE, ArrayCode, Unsupported, _impl_tables, _kids)
from jaxlite._src.compiler.numba_kernels import (
    LoopKernel, _load_numba_kernel, _nb_type, kernel_cached)
from jaxlite._src.core.ir import has_effects
from jaxlite._src.runtime import build_threads

__all__ = ["ArrayLoopKernel", "EqnKernel", "LazyKernel", "array_loop_kernel", "earned",
           "eqn_kernel", "lazy_kernel"]

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
        lazy = lazy_kernel(self.source, self.eqn)
        if config._flags["jaxlite_tier"].value in (2, "2") or kernel_cached(self.source) or \
                getattr(_earned, "seconds", 0.0) >= lazy.budget:
            lazy.build()      # (forced tier 2, on disk already, or earned: compile it now)
        if lazy.state == "failed":
            emit_eqn(ctx, self.eqn, lines)
            return
        ctx.globals.setdefault("__kernel_sources__", []).append(self.source)
        lz = ctx.bind_global(lazy, "lazy")
        perf = ctx.bind_global(time.perf_counter, "perf")
        lines.append(f"    if {lz}.fn is not None:")
        self.call_lines(ctx, lines, f"{lz}.fn", "        ",
                        " compiled whole (arrays): one numba function")
        lines.append("    else:   # (until numba has compiled it: tier 1's loop, timed)")
        lines.append(f"        _t0 = {perf}()")
        tier1 = []
        emit_eqn(ctx, self.eqn, tier1)
        lines.extend("    " + ln for ln in tier1)
        lines.append(f"        {lz}.charge({perf}() - _t0)")

    def call_lines(self, ctx, lines, fn, pad, what):
        """Lines (indented by ``pad``) calling the compiled ``fn`` on the equation's
        operands, constants and fresh flat outputs, then naming the outputs (``what``
        ends the call's comment)."""
        call = [ctx.bind_global(self.ptrs, "ptrs"), str(self.kid)]
        call += [f"{ctx.var(a)}.ravel()" if a.aval.shape else f"{ctx.var(a)}[()]"
                 for a in self.eqn.invars]
        # (writable copies: the kernel types its constants as its own arrays)
        call += [ctx.bind_global(np.array(c, copy=True).ravel(), "kc") for c, _ in self.consts]
        flat = []
        for v in self.eqn.outvars:
            tmp = f"_{ctx.var(v)}_flat"
            flat.append(tmp)
            lines.append(f"{pad}{tmp} = np.empty({max(v.aval.size, 1)}, "
                         f"{ctx.bind_global(v.aval.dtype, 'dt')})")
        lines.append(f"{pad}{fn}({', '.join(call + flat)})  # {self.eqn.primitive.name}"
                     f"{what}{_src_comment(self.eqn)}")
        for v, tmp in zip(self.eqn.outvars, flat):
            lines.append(f"{pad}{ctx.var(v)} = {tmp}[:{v.aval.size}].reshape("
                         f"{tuple(v.aval.shape)})")


# seconds the program being built for tier 2 has spent running as tier 1's: its loops have
# earned their compilation when that is more than compiling them takes (``earned``)
_earned = threading.local()


@contextlib.contextmanager
def earned(seconds):
    """Within: loop kernels of the program being built are compiled at once when the
    program has spent ``seconds`` (as tier 1's) at least as long as compiling them takes."""
    prev = getattr(_earned, "seconds", 0.0)
    _earned.seconds = seconds
    try:
        yield
    finally:
        _earned.seconds = prev


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
        self._build_lock = threading.Lock()

    def charge(self, seconds):
        """Add time spent in the loop as tier 1's; start compiling once it is earned."""
        self.spent += seconds
        if self.spent < self.budget or self.state != "cold":
            return
        with self.lock:
            if self.state != "cold":
                return
            self.state = "building"
        build_threads.start(self.build, "jaxlite-loop-kernel")

    def build(self):
        """Compile (or load) the kernel now (waiting for a build under way elsewhere: one
        compilation per kernel)."""
        with self._build_lock:
            if self.fn is None and self.state != "failed":
                self._build()

    def _build(self):
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


def _array_source(eqn, copy_inputs):
    """(source, code) of one numba function computing ``eqn`` with ``ArrayCode``, or None
    where ``ArrayCode`` cannot write it (or would call back into Python too often).
    ``copy_inputs``: the function's arrays start as copies of its operands (a loop's
    carried arrays are then all of one, writable, numba type)."""
    code = ArrayCode()
    ins, pre = [], []
    for k, a in enumerate(eqn.invars):
        if a.aval.dtype not in HELD_DTYPES:
            return None
        shaped = f"p{k}.reshape({tuple(a.aval.shape)})"
        pre.append(f"    x{k} = {shaped}{'.copy()' if copy_inputs else ''}" if a.aval.shape
                   else f"    x{k} = p{k}")
        ins.append(f"x{k}")
    try:
        outs = code.eqn(eqn, ins)
    except Unsupported as e:
        logging.getLogger("jaxlite").debug("tier 2: the %s equation%s stays tier 1's (%s)",
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
    body += ["    " + ln for ln in code.prelude] + code.lines
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
    what = "loop kernel over arrays" if copy_inputs else "kernel"
    src = "\n".join([
        f"# jaxlite tier-2 {what}: {eqn.primitive.name} (generated; the file name is the "
        "hash of this text)", *header,
        f"def kernel({', '.join(params)}):", *body, ""])
    return src, code


def array_loop_kernel(eqn):
    """An ``ArrayLoopKernel`` for a loop equation (``scan``, ``while``) whose body
    ``ArrayCode`` can write, else None."""
    if getattr(eqn.primitive, "numba_loop", None) is None or has_effects(eqn) or \
            not eqn.outvars:
        return None
    return _made(ArrayLoopKernel, eqn, copy_inputs=True)


def _made(cls, eqn, copy_inputs):
    """A ``cls`` kernel of ``eqn`` from ``_array_source``, or None."""
    made = _array_source(eqn, copy_inputs)
    if made is None:
        return None
    src, code = made
    return cls(eqn, src, code.consts, code.ptrs, code.pycalls)


class EqnKernel(ArrayLoopKernel):
    """One equation tier 1 runs through a costly Python impl (its primitive's
    ``numba_alone`` says so: a sum in XLA's order), compiled to a numba function of its
    own when the program is built (it is small: no waiting to earn it)."""

    def emit(self, ctx, lines):
        """The kernel's call (tier 1's code where numba failed to compile it)."""
        from jaxlite._src.compiler.codegen import emit_eqn
        try:
            fn = _load_numba_kernel(self.source)
        except Exception as e:
            logging.getLogger("jaxlite").warning(
                "tier 2: the %s equation%s did not compile (%s: %s); tier 1 runs it",
                self.eqn.primitive.name, _src_comment(self.eqn).replace("  #", ""),
                type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            emit_eqn(ctx, self.eqn, lines)
            return
        ctx.globals.setdefault("__kernel_sources__", []).append(self.source)
        self.call_lines(ctx, lines, ctx.bind_global(fn, "ek"), "    ", ": numba kernel")


def eqn_kernel(eqn):
    """An ``EqnKernel`` for an equation whose primitive asks for one (``numba_alone``) and
    ``ArrayCode`` can write, else None."""
    alone = getattr(eqn.primitive, "numba_alone", None)
    if alone is None or has_effects(eqn) or not eqn.outvars or not alone(eqn):
        return None
    return _made(EqnKernel, eqn, copy_inputs=False)


_lazies = weakref.WeakValueDictionary()


def lazy_kernel(source, eqn):
    """The ``LazyKernel`` of a loop kernel's ``source``: one per source text alive, so a
    tier-2 program's loop and tier 1's run of the same loop (``LoopPromotion``) share its
    compilation and the time they charge to it."""
    with _lazies_lock:
        lazy = _lazies.get(source)
        if lazy is None:
            lazy = _lazies[source] = LazyKernel(source, eqn)
    return lazy


_lazies_lock = threading.Lock()
