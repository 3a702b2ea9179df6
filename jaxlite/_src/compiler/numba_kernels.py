"""Tier 2's numba kernels: the scalar code numba compiles for a fused cluster (or a group
of independent clusters called at once) and for a loop primitive whose body is scalar code,
the on-disk kernel cache, and the exactness rules (which ops numba computes with NumPy's
bits). ``fusion.py`` plans the clusters; this module writes and loads their kernels.
"""
from __future__ import annotations

import itertools
import math
import os
import threading

import numpy as np

from jaxlite._src.cpu_math import threads
from jaxlite._src.runtime import build_threads, kernel_cache
from jaxlite._src.compiler.codegen import LowerCtx, _src_comment
from jaxlite._src.core.ir import Literal, has_effects
from jaxlite._src.prims.numba_exprs import FLOAT_KINDS, NUMBA_DTYPES

__all__ = ["numba_module", "NumbaGroup", "LoopKernel", "scalar_body", "cache_dir",
           "numba_expr_ok", "emit_numba_group", "loop_kernel", "chunk_run_kernel",
           "FLOAT_KINDS", "NUMBA_DTYPES", "kernel_cached"]

_kernel_ids = itertools.count()


def numba_module():
    """The numba module when tier 2 may use it (installed and not turned off with
    ``JAXLITE_NUMBA=0``), else None. Importing it costs ~0.2 s, paid in the background
    thread that builds tier 2."""
    if os.environ.get("JAXLITE_NUMBA", "1") == "0":
        return None
    mod = _numba_state.get("mod", _UNSET)
    if mod is _UNSET:
        with _numba_lock:
            mod = _numba_state.get("mod", _UNSET)
            if mod is _UNSET:
                try:
                    import numba as mod
                except ImportError:
                    mod = None
                else:
                    build_threads.shield_numba()
                _numba_state["mod"] = mod
    return mod


_UNSET = object()
_numba_state = {}
_numba_lock = threading.Lock()

def numba_expr_ok(eqn) -> bool:
    """Whether numba computes ``eqn`` exactly as NumPy does (so a loop may replace it): its
    primitive's ``numba_scalar`` (a twin of XLA's math) or ``numba_expr`` rule says so."""
    if not getattr(eqn.primitive, "fuses_as_its_name", True):
        return False    # (its own arithmetic under a lax op's name: XLA's FMA contraction)
    dts = [a.aval.dtype for a in eqn.invars] + [eqn.outvars[0].aval.dtype]
    if any(d not in NUMBA_DTYPES for d in dts):
        return False
    scalar = getattr(eqn.primitive, "numba_scalar", None)
    if scalar is not None:    # (a primitive with a scalar function of its own)
        return scalar(eqn) is not None
    rule = getattr(eqn.primitive, "numba_expr", None)
    return rule is not None and rule(eqn, _OPERANDS) is not None


_OPERANDS = ("x0", "x1", "x2", "x3")     # (stand-ins: numba_expr_ok asks for any source)


def _nb_literal(lit):
    val = np.asarray(lit.val, lit.aval.dtype)[()]
    dt = lit.aval.dtype
    if dt == np.bool_:
        return "True" if val else "False"
    if dt.kind == "f":
        f = float(val)
        text = repr(f) if math.isfinite(f) else ("np.nan" if f != f else
                                                   ("np.inf" if f > 0 else "-np.inf"))
        return f"np.{dt.name}({text})"
    return f"np.{dt.name}({int(val)})"


def _nb_scalar_expr(eqn, ins):
    dt = eqn.outvars[0].aval.dtype
    scalar = getattr(eqn.primitive, "numba_scalar", None)
    if scalar is not None:
        e = f"{scalar(eqn)}({', '.join(ins)})"
    else:
        e = eqn.primitive.numba_expr(eqn, ins)
        if e is None:
            raise NotImplementedError(eqn.primitive.name)
    return f"np.{'bool_' if dt == np.bool_ else dt.name}({e})"


def _nb_type(dt, array, readonly=False, ndim=1):
    """The numba type of a kernel argument, as source: inputs are read-only arrays (jaxlite's
    arrays are immutable; writable ones convert), outputs writable (C-contiguous, of rank
    ``ndim``)."""
    base = "_t.boolean" if dt == np.bool_ else f"_t.{dt.name}"
    if not array:
        return base
    if readonly:
        return f'_t.Array({base}, 1, "C", readonly=True)'
    return f"{base}[::1]" if ndim == 1 else f"{base}[{', '.join([':'] * (ndim - 1))}, ::1]"


def _nb_header(types):
    return ["import numba", "import numpy as np", "from numba import types as _t", "",
            f"@numba.njit(_t.void({', '.join(types)}), error_model='numpy', cache=True, "
            "nogil=True)"]


cache_dir = kernel_cache.cache_dir
_kernel_cache = {}


def _with_xla_math(source):
    """``source`` importing ``cpu_math``'s numba twins (``_xm``) if it calls them; the
    import line carries their fingerprint, so an edit of a twin changes the cache key."""
    if "_xm." not in source:
        return source
    from jaxlite._src.cpu_math import dispatch
    return dispatch.nb_import_line() + "\n" + source


def _load_numba_kernel(source):
    """The compiled kernel of ``source``: from this process's table, else from the module
    file ``k_<hash>.py`` in the cache directory (numba's disk cache beside it)."""
    source = _with_xla_math(source)
    key = kernel_cache.source_key(source)
    fn = _kernel_cache.get(key)
    if fn is None:
        fn = _kernel_cache[key] = _entry_point(kernel_cache.load_module(source).kernel)
    return fn


def kernel_cached(source):
    """Whether numba's compiled code of ``source`` is already in the disk cache (loading it
    then costs milliseconds, not a compilation)."""
    import glob
    key = kernel_cache.source_key(_with_xla_math(source))
    if key in _kernel_cache:
        return True
    return bool(glob.glob(os.path.join(cache_dir(), "__pycache__", f"k_{key}.*.nbi")))


def _entry_point(kernel):
    """The compiled function behind a numba dispatcher of one explicit signature: called
    directly it skips the dispatcher's type matching (~0.1 us an argument). It still checks
    each argument's type and dtype, not array layout: the generated calls pass inputs
    through ``ravel()`` and fresh C-ordered outputs."""
    try:
        (sig,) = kernel.signatures
        return kernel.overloads[sig].entry_point
    except (AttributeError, KeyError, ValueError):   # (another numba): the dispatcher
        return kernel


class NumbaGroup:
    """Adjacent numba clusters: one kernel call runs their loops one after the other (a
    call into numba costs microseconds; the loops of a small program's clusters take less).
    A cluster reading an earlier one's results reads them from that loop's output."""

    def __init__(self, clusters):
        self.clusters = clusters
        self.outputs = {v for c in clusters for v in c.results()}
        self.read_outside = None   # (set by the planner) results read outside the group

    allocates_outputs = True   # (fresh outputs, no reference kept: codegen.reuse_plan_items)

    def takes(self, c):
        """Whether cluster ``c``, right after the group's clusters, may join it (always:
        its loop runs after theirs)."""
        return True

    def io(self):
        """(variables it reads, variables it binds as Python names) in the function."""
        return ([c.aliases.get(v, v) for c in self.clusters for v in c.inputs],
                [v for c in self.clusters for v in c.results()])

    def emit(self, ctx, lines):
        emit_numba_group(self.clusters, ctx, lines, self.read_outside)


def _bcast_index(s, shape):
    """The flat index into an operand of shape ``s`` (size-1 dimensions broadcast to
    ``shape``) of the element the loop's flat index ``i`` over ``shape`` reads."""
    terms = []
    for d, (n, m) in enumerate(zip(s, shape)):
        if n == 1:
            continue
        t = "i" if math.prod(shape[d + 1:]) == 1 else f"(i // {math.prod(shape[d + 1:])})"
        if math.prod(shape[:d]) != 1:
            t = f"({t} % {m})"
        if math.prod(s[d + 1:]) != 1:
            t = f"{t} * {math.prod(s[d + 1:])}"
        terms.append(t)
    return " + ".join(terms) or "0"


def _nest_index(s):
    """The flat index, in a loop nest ``i0, i1, ...`` over a cluster's shape, of the element
    an operand of shape ``s`` (of the cluster's rank; size-1 dimensions broadcast) reads."""
    terms = []
    for d, n in enumerate(s):
        if n == 1:
            continue
        stride = math.prod(s[d + 1:])
        terms.append(f"i{d}" if stride == 1 else f"i{d} * {stride}")
    return " + ".join(terms) or "0"


def _splittable(group):
    """Whether ``group`` is one large flat loop whose operands are all read element by
    element (or are scalars): its kernel then runs on ranges of the elements on several
    threads (``run_split``)."""
    if len(group) != 1 or threads.workers() < 2:
        return False
    c = group[0]
    return len(c.shape) >= 1 and c.size >= threads.PARALLEL_MIN and not c.reductions and \
        all(tuple(v.aval.shape) in ((), c.shape) for v in c.inputs) and \
        all(tuple(v.aval.shape) == c.shape for v in c.outputs) and \
        not any(_outer(e) for e in c.eqns)


def run_split(kernel, n, arrays, *args):
    """Call ``kernel`` on ranges of ``n`` elements across the worker threads (numba's
    loops release the GIL): the 1-D arrays among ``args`` (``arrays``) sliced, scalars
    whole."""
    def run(lo, hi):
        kernel(*[a[lo:hi] if arr else a for a, arr in zip(args, arrays)])
    threads.parallel_chunks(run, n)


def _outer(e):
    """Whether ``e`` is an outer product (its operands indexed by row and column)."""
    f = getattr(e.primitive, "outer_product", None)
    return f is not None and f(e) is not None


def _heavy(e):
    """Whether ``e`` computes one of XLA's math kernels (tens of instructions; not a
    multiply-add) through its numba twin."""
    return _own_scalar(e) and not getattr(e.primitive, "light_kernel", False)


def _own_scalar(e):
    f = getattr(e.primitive, "numba_scalar", None)
    return f is not None and f(e) is not None


class _Blocks:
    """A flat loop holding two or more of XLA's kernels, written as a loop over blocks of
    ``SIZE`` elements whose body is one loop over the block per segment, each segment
    holding at most one kernel (with the cheap operations around it). One loop step
    computing several dependent kernels is bound by their latency: the processor cannot
    overlap the next element's work with a chain of hundreds of dependent instructions,
    and LLVM does not vectorise such a body; a loop per kernel has independent steps
    (vectorised or overlapped), as XLA's vectorised loops do. Values a later segment reads
    pass through block-sized scratch arrays; each element's operations are the same, in
    the same order, so the results are too."""
    SIZE = 128

    def __init__(self, eqns):
        self.on = sum(map(_heavy, eqns)) >= 2
        self.segments = [[]]
        self.heavy = False
        self.made = {}          # variable -> (segment, its loop name)
        self.scratch = {}       # variable -> its scratch array's name
        self.allocs = []

    def __bool__(self):
        return self.on

    def enter(self, e):
        """The segment ``e`` is written into (a new one for a second kernel)."""
        if _heavy(e):
            if self.heavy:
                self.segments.append([])
            self.heavy = True
        return self.segments[-1]

    def define(self, v):
        self.made[v] = (len(self.segments) - 1, None)

    def read(self, v, name):
        """The name the current segment reads ``v`` by: its scratch slot when an earlier
        segment computed it."""
        seg = self.made.get(v, (len(self.segments) - 1,))[0]
        if seg == len(self.segments) - 1:
            return name
        if v not in self.scratch:
            self.scratch[v] = b = f"bk{len(self.scratch)}"
            dt = v.aval.dtype
            self.allocs.append(f"    {b} = np.empty({self.SIZE}, "
                               f"np.{'bool_' if dt == np.bool_ else dt.name})")
            self.segments[seg].append(f"{b}[jj] = {name}")
        return f"{self.scratch[v]}[jj]"

    def store(self, v, line):
        """An output's store, in the segment computing it."""
        seg = self.made.get(v, (len(self.segments) - 1,))[0]
        self.segments[seg].append(line)

    def code(self, n):
        """The loop over blocks of ``n`` elements, scratch allocations first."""
        out = [*self.allocs, f"    for s0 in range(0, {n}, {self.SIZE}):",
               f"        m0 = min({self.SIZE}, {n} - s0)"]
        for seg in self.segments:
            out += ["        for jj in range(m0):", "            i = s0 + jj"]
            out += ["            " + ln for ln in seg]
        return out


def emit_numba_group(group, ctx: LowerCtx, lines, read_outside=None):
    """One numba kernel running, for each cluster of ``group``, a loop over its flattened
    elements; scalars are passed as scalars and literals written into the source, so the
    kernel depends only on the ops, dtypes and ranks (and on the shape, for operands
    broadcast through size-1 dimensions, outer products and leading-axis sums, whose
    indexing it writes out). Outputs of rank >= 1 are allocated with their shape and written
    through a flat view the kernel takes of them; a later loop reads an earlier loop's
    results from those views. ``read_outside`` (when known): the results something after
    the call reads; a rank-0 result outside it stays in its buffer, unnamed."""
    index, params, types, call = {}, [], [], []
    split = _splittable(group)
    made, inner = set(), set()   # results of the group's loops; those later loops read
    for c in group:
        inner.update(v for v in c.inputs if v in made)
        made.update(c.results())
    flatname = {}                # a result read by a later loop -> its flat output
    for c in group:
        for v in c.inputs:
            if v in index or v in inner:
                continue
            index[v] = nm = f"a{len(index)}"
            arr = bool(v.aval.shape)
            params.append(nm)
            types.append(_nb_type(v.aval.dtype, arr, readonly=True))
            # (an input that only inserts size-1 axes into a value: that value, read flat)
            src = getattr(c, "aliases", {}).get(v, v)
            call.append(f"{ctx.var(src)}.ravel()" if arr else f"{ctx.var(src)}[()]")
    outs, body, n_ops, post = [], [], 0, []
    for c in group:
        names = {}
        # a loop nest over the cluster's dimensions when an operand is read through
        # broadcast or outer-product indexing, or rows are summed: each operand's index is
        # then a sum of loop indices times strides (no division or remainder per element,
        # which keeps LLVM from vectorising); the elements are visited in the same
        # row-major order as the flat loop, so sums add in the same order
        nest = len(c.shape) > 1 and (bool(c.reductions) or any(
            _outer(e) for e in c.eqns) or any(
            v.aval.shape and tuple(v.aval.shape) != c.shape for v in c.inputs))
        for v in c.inputs:
            base = flatname[v] if v in inner else index[v]
            if not v.aval.shape:
                if v in inner:   # (read once, before the loop)
                    body.append(f"    {base}s = {base}[0]")
                    base = f"{base}s"
                names[v] = base
            elif tuple(v.aval.shape) == c.shape:
                names[v] = f"{base}[i]"
            elif nest:
                names[v] = f"{base}[{_nest_index(tuple(v.aval.shape))}]"
            else:
                names[v] = f"{base}[{_bcast_index(tuple(v.aval.shape), c.shape)}]"
        # a flat loop with two or more of XLA's kernels runs in blocks, each kernel in a
        # loop of its own over the block (see _Blocks)
        blocks = _Blocks(c.eqns) if not nest else None
        loop = blocks.segments[0] if blocks else []
        for j, e in enumerate(c.eqns):
            if blocks:
                loop = blocks.enter(e)
            if _outer(e):   # an outer product: lhs[row] * rhs[col]
                n = e.outvars[0].aval.shape[1]
                ixs = ("i0", "i1") if nest else (f"i // {n}", f"i % {n}")
                ins = [f"{flatname[a] if a in inner else index[a]}[{ix}]"
                       for a, ix in zip(e.invars, ixs)]
            else:
                ins = [_nb_literal(a) if isinstance(a, Literal) else
                       (blocks.read(a, names[a]) if blocks else names[a])
                       for a in e.invars]
            loop.append(f"v{j} = {_nb_scalar_expr(e, ins)}")
            names[e.outvars[0]] = f"v{j}"
            if blocks:
                blocks.define(e.outvars[0])
        n_ops += len(c.eqns) + len(c.reductions)
        flat = []
        for v in c.outputs:
            k = len(outs)
            outs.append(f"o{k}")
            dt = ctx.bind_global(v.aval.dtype, "dt")
            if c.shape:
                types.append(_nb_type(v.aval.dtype, True, ndim=1 if split else len(c.shape)))
                body.append(f"    f{k} = o{k}.reshape(o{k}.size)")
                lines.append(f"    {ctx.var(v)} = np.empty({c.shape}, {dt})")
                call.append(f"{ctx.var(v)}.reshape(-1)" if split else ctx.var(v))
            else:   # (rank 0: a 1-element buffer, viewed as rank 0 after the call)
                types.append(_nb_type(v.aval.dtype, True))
                body.append(f"    f{k} = o{k}")
                tmp = f"_{ctx.var(v)}_flat"
                lines.append(f"    {tmp} = np.empty(1, {dt})")
                call.append(tmp)
                if read_outside is None or v in read_outside:
                    post.append(f"    {ctx.var(v)} = {tmp}.reshape(())")
            if blocks:
                blocks.store(v, f"f{k}[i] = {names[v]}")
            else:
                loop.append(f"f{k}[i] = {names[v]}")
            flat.append(f"f{k}")
            flatname[v] = f"f{k}"
        # leading-axis sums: rows added in order into zeroed sums
        kept = c.reductions[0][1] if c.reductions else 0
        for r, _ in c.reductions:
            k = len(outs)
            outs.append(f"o{k}")
            rv = r.outvars[0]
            types.append(_nb_type(rv.aval.dtype, True, ndim=rv.aval.ndim))
            body.append(f"    f{k} = o{k}.reshape(o{k}.size)")
            body.append(f"    f{k}[:] = 0")
            lines.append(f"    {ctx.var(rv)} = np.empty({tuple(rv.aval.shape)}, "
                         f"{ctx.bind_global(rv.aval.dtype, 'dt')})")
            call.append(ctx.var(rv))
            flatname[rv] = f"f{k}"
            j = _nest_index((1,) * kept + c.shape[kept:])
            loop.append(f"f{k}[{j}] = np.{rv.aval.dtype.name}(f{k}[{j}] + "
                        f"{names[r.invars[0]]})")
        if nest:
            for d, n in enumerate(c.shape):
                body.append(f"    {'  ' * d}for i{d} in range({n}):")
            pad = "    " + "  " * len(c.shape)
            body.append(f"{pad}i = {_nest_index(c.shape)}")
        elif blocks:
            body.extend(blocks.code(f"{flat[0]}.shape[0]"))
            continue
        else:   # (no reductions here: those clusters have rank >= 2)
            body.append(f"    for i in range({flat[0]}.shape[0]):")
            pad = "        "
        body.extend(pad + ln for ln in loop)
    src = "\n".join([
        "# jaxlite tier-2 kernel (generated; the file name is the hash of this text)",
        *_nb_header(types),
        f"def kernel({', '.join(params + outs)}):", *body, ""])
    kern = _load_numba_kernel(src)
    kname = ctx.bind_global(kern, "nk")
    ctx.globals.setdefault("__kernel_sources__", []).append(src)
    loops = f" in {len(group)} loops" if len(group) > 1 else ""
    if split:
        arrays = tuple(bool(v.aval.shape) for v in index) + (True,) * len(outs)
        lines.append(f"    {ctx.bind_global(run_split, 'split')}({kname}, {group[0].size}, "
                     f"{arrays}, {', '.join(call)})  # fused: {n_ops} ops, numba loop on "
                     f"{threads.workers()} threads")
    else:
        lines.append(f"    {kname}({', '.join(call)})  # fused: {n_ops} ops{loops}, numba loop")
    lines.extend(post)


def chunk_run_kernel(eqns, inputs, outputs):
    """(kernel, source) of one numba loop running ``eqns`` (numba-exact elementwise
    equations, in order) over a chunk inside a NumPy-chunked cluster: ``inputs`` are
    ``(variable, is_array)`` pairs, arrays being 1-D C-ordered chunks and the rest scalars;
    the kernel takes them in that order, then one writable 1-D output per variable of
    ``outputs``, all of one length. (A NumPy chunk then calls one kernel where it called a
    ufunc per op; each op is computed as NumPy does, so the bits are the same.)"""
    names, params, types = {}, [], []
    for v, arr in inputs:
        names[v] = f"a{len(params)}" + ("[i]" if arr else "")
        params.append(f"a{len(params)}")
        types.append(_nb_type(v.aval.dtype, arr, readonly=arr))
    outs = []
    for k, v in enumerate(outputs):
        outs.append(f"o{k}")
        types.append(_nb_type(v.aval.dtype, True))
    loop = []
    for j, e in enumerate(eqns):
        ins = [_nb_literal(a) if isinstance(a, Literal) else names[a] for a in e.invars]
        loop.append(f"        v{j} = {_nb_scalar_expr(e, ins)}")
        names[e.outvars[0]] = f"v{j}"
    loop += [f"        o{k}[i] = {names[v]}" for k, v in enumerate(outputs)]
    src = "\n".join([
        "# jaxlite tier-2 chunk kernel (generated; the file name is the hash of this text)",
        *_nb_header(types), f"def kernel({', '.join(params + outs)}):",
        "    for i in range(o0.shape[0]):", *loop, ""])
    return _load_numba_kernel(src), src


# ----------------------------------------------------------------------------- whole loops

def scalar_body(closed, in_exprs, indent, arrays=None):
    """Scalar numba code of a closed jaxpr: (lines, output expressions) for inputs named by
    ``in_exprs``, or None when an equation has no exact scalar form.

    Values are rank 0, except the inputs listed in ``arrays`` ({input position: writable?}),
    vectors the code reads an element of (``x[i]``: a dynamic_slice of one element) and,
    when writable (a loop's carried array, whose buffer the loop owns), writes one element
    of in place (``x.at[i].set(v)``, ``.add(v)``, ``dynamic_update_slice`` of one element)
    where the value updated is not read afterwards. Such an output is the input's own name
    (the array updated in place)."""
    from jaxlite._src.compiler.passes import optimize
    closed = optimize(closed)
    jaxpr = closed.jaxpr
    names = dict(zip(jaxpr.invars, in_exprs))
    refs = {}           # vector value -> (array name, writable?)
    for k, w in (arrays or {}).items():
        v = jaxpr.invars[k]
        if v.aval.ndim != 1:
            return None
        refs[v] = (in_exprs[k], w)
    for v, c in zip(jaxpr.constvars, closed.consts):
        if np.shape(c) != () or v.aval.dtype not in NUMBA_DTYPES:
            return None
        names[v] = _nb_literal(Literal(np.asarray(c), v.aval))
    last = {}
    for j, e in enumerate(jaxpr.eqns):
        for a in e.invars:
            if not isinstance(a, Literal):
                last[a] = j
    for a in jaxpr.outvars:
        if not isinstance(a, Literal):
            last[a] = len(jaxpr.eqns)
    lines, one = [], {}     # one: rank-1 values of one element -> scalar expression
    uid = next(_kernel_ids)

    def scalar(a):
        if isinstance(a, Literal):
            return _nb_literal(a) if a.aval.shape == () else None
        return names.get(a) if a.aval.shape == () else one.get(a)
    for j, e in enumerate(jaxpr.eqns):
        nm = f"s{uid}_{j}"
        if len(e.outvars) != 1 or any(v.aval.shape not in ((), (1,)) and v not in refs
                                      for v in e.invars) or \
                (e.outvars[0].aval.shape not in ((), (1,)) and not any(a in refs for a in
                                                                     e.invars)):
            return None
        out = e.outvars[0]
        if any(a in refs for a in e.invars):
            got = _array_eqn(e, j, refs, scalar, last, nm, indent)
            if got is None:
                return None
            lines.extend(got)
            if out not in refs:
                (one if out.aval.shape == (1,) else names)[out] = nm
            continue
        if getattr(e.primitive, "one_element_as_is", False) and \
                e.invars[0].aval.size == 1:
            x = scalar(e.invars[0])      # (a scalar as one element, or back)
            if x is None:
                return None
            (one if out.aval.shape == (1,) else names)[out] = x
            continue
        if not numba_expr_ok(e):    # (values of one element computed as scalars)
            return None
        ins = [scalar(a) for a in e.invars]
        if any(x is None for x in ins):
            return None
        lines.append(f"{indent}{nm} = {_nb_scalar_expr(e, ins)}")
        (one if out.aval.shape == (1,) else names)[out] = nm
    outs = []
    for a in jaxpr.outvars:
        if a in refs:
            outs.append(refs[a][0])
        else:
            x = scalar(a)
            if x is None or a.aval.shape != ():
                return None
            outs.append(x)
    return lines, outs


def _array_eqn(e, j, refs, scalar, last, nm, indent):
    """The lines of an equation reading or updating a vector of ``refs`` (see
    ``scalar_body``; a read binds its element to ``nm``, an update makes its result the
    same array): its primitive's ``numba_vector_access`` rule, or None."""
    rule = getattr(e.primitive, "numba_vector_access", None)
    x = e.invars[0] if e.invars else None
    if rule is None or x not in refs or any(a in refs for a in e.invars[1:]):
        return None
    arr, writable = refs[x]
    return rule(e, VectorAccess(arr, x.aval.shape[0], writable and last.get(x, -1) == j,
                                scalar, nm, indent, refs, e.outvars[0]))


class VectorAccess:
    """What a primitive's ``numba_vector_access`` rule gets (``prims/numba_exprs.py``): the
    vector's array name ``arr`` and length ``n``; ``in_place`` (it is writable and nothing
    reads its old value after this equation); ``scalar(a)``, an operand's scalar source or
    None; ``nm``, the local name for a read element (or an index); the line ``indent``."""
    __slots__ = ("_out", "_refs", "arr", "in_place", "indent", "n", "nm", "scalar")

    def __init__(self, arr, n, in_place, scalar, nm, indent, refs, out):
        self.arr, self.n, self.in_place, self.scalar = arr, n, in_place, scalar
        self.nm, self.indent, self._refs, self._out = nm, indent, refs, out

    def updated(self):
        """The equation's result is the vector's array, updated in place."""
        self._refs[self._out] = (self.arr, True)


class LoopKernel:
    """A loop equation compiled whole to one numba function (see ``numba_loop``)."""

    def __init__(self, eqn, source):
        self.eqn = eqn
        self.source = source

    def io(self):
        """(variables it reads, variables it binds as Python names) in the function."""
        return self.eqn.invars, self.eqn.outvars

    def emit(self, ctx, lines):
        kern = _load_numba_kernel(self.source)
        kname = ctx.bind_global(kern, "nl")
        ctx.globals.setdefault("__kernel_sources__", []).append(self.source)
        call = [f"{ctx.var(a)}.ravel()" if a.aval.shape else f"{ctx.var(a)}[()]"
                for a in self.eqn.invars]
        flat = []
        for v in self.eqn.outvars:
            tmp = f"_{ctx.var(v)}_flat"
            flat.append(tmp)
            size = math.prod(v.aval.shape)
            lines.append(f"    {tmp} = np.empty({size}, "
                         f"{ctx.bind_global(v.aval.dtype, 'dt')})")
        lines.append(f"    {kname}({', '.join(call + flat)})  # {self.eqn.primitive.name} "
                     f"compiled whole: one numba loop{_src_comment(self.eqn)}")
        for v, tmp in zip(self.eqn.outvars, flat):
            lines.append(f"    {ctx.var(v)} = {tmp}.reshape({tuple(v.aval.shape)})")


def loop_kernel(eqn):
    """A ``LoopKernel`` for a loop equation whose body is scalar code, else None."""
    build = getattr(eqn.primitive, "numba_loop", None)
    if build is None or has_effects(eqn) or not eqn.outvars:
        return None
    for a in list(eqn.invars) + list(eqn.outvars):
        if a.aval.dtype not in NUMBA_DTYPES or a.aval.ndim > 1:
            return None
    ins = [f"a{i}" for i in range(len(eqn.invars))]
    outs = [f"o{i}" for i in range(len(eqn.outvars))]
    body = build(eqn, scalar_body, ins, outs)
    if body is None:
        return None
    types = [_nb_type(a.aval.dtype, bool(a.aval.shape), True) for a in eqn.invars] + \
        [_nb_type(v.aval.dtype, True) for v in eqn.outvars]
    src = "\n".join([
        f"# jaxlite tier-2 loop kernel: {eqn.primitive.name} (generated; the file name is the "
        "hash of this text)", *_nb_header(types),
        f"def kernel({', '.join(ins + outs)}):", *body, ""])
    return LoopKernel(eqn, src)
