"""Interpret mode: a ``pallas_call`` becomes a generated Python function looping over the grid.

For a kernel with grid ``(2, 3)`` the generated source reads like::

    def pallas_matmul(a0, a1):
        x0 = a0                                  # (copied and padded only when needed)
        o0 = _uninit0()                          # outputs start uninitialised (NaN)
        for g0 in range(2):
            for g1 in range(3):
                _grid.ids = (_i32[g0], _i32[g1])
                s0 = min(max(g0 * 128, 0), 128)  # block starts from the index maps
                ...
                _kernel(x0[s0:s0 + 128, s1:s1 + 128, ...], ..., o0[...])
        return (o0,)

Blocks are NumPy views of the (padded) operands, so the kernel's writes land in place. The
source is registered with ``linecache``: tracebacks show it and pdb steps through it, and
into the kernel (itself generated code, one line per equation, see ``compiler/codegen.py``).
Semantics follow JAX's interpret mode: operands are padded to whole blocks with the
uninitialised value, block starts are clamped into the padded array, outputs nothing writes
stay uninitialised, scratch buffers persist across grid steps.
"""
from __future__ import annotations

import itertools
import linecache

import numpy as np

from jaxlite._src.core.ir import ClosedJaxpr, DropVar, Jaxpr, Literal, jaxprs_in_params
from jaxlite._src.pallas.core import Element, Squeezed, block_size
from jaxlite._src.pallas.primitives import grid_env, uninitialized

__all__ = ["build_runner", "written_inputs"]

_counter = itertools.count()
_WRITERS = {"swap", "addupdate", "masked_swap", "atomic_rmw", "atomic_cas"}


def _writes_anything(jaxpr):
    for e in jaxpr.eqns:
        if e.primitive.name in _WRITERS:
            return True
        if any(_writes_anything(s) for s in jaxprs_in_params(e.params)):
            return True
    return False


def written_inputs(jaxpr):
    """The invars of ``jaxpr`` (refs) that it may write (conservatively: every ref operand
    of an equation whose inner jaxprs write something)."""
    out = set()
    for e in jaxpr.eqns:
        if e.primitive.name in _WRITERS:
            out.add(e.invars[0])
        elif any(_writes_anything(s) for s in jaxprs_in_params(e.params)):
            out.update(v for v in e.invars if not isinstance(v, Literal))
    return {i for i, v in enumerate(jaxpr.invars) if v in out}


def drop_unused_reads(closed):
    """A copy of the kernel for execution in which writes whose old value (``swap``'s
    result) nothing reads bind a DropVar, so their lowering skips copying the old block.
    Nested jaxprs (cond branches, loop bodies, run_scoped) are rewritten too."""
    return ClosedJaxpr(_drop_jaxpr(closed.jaxpr), closed.consts)


def _drop_jaxpr(j):
    used = {a for e in j.eqns for a in e.invars if not isinstance(a, Literal)}
    used.update(a for a in j.outvars if not isinstance(a, Literal))
    eqns = []
    for e in j.eqns:
        params = {k: _drop_param(v) for k, v in e.params.items()}
        outvars = e.outvars
        if e.primitive.name in ("swap", "masked_swap") and outvars[0] not in used:
            outvars = [DropVar(outvars[0].aval)]
        if params != e.params or outvars is not e.outvars:
            e = e.replace(params=params, outvars=outvars)
        eqns.append(e)
    return j.replace(eqns=eqns)


def _drop_param(v):
    if isinstance(v, ClosedJaxpr):
        return ClosedJaxpr(_drop_jaxpr(v.jaxpr), v.consts) if _has_swap(v.jaxpr) else v
    if isinstance(v, Jaxpr):
        return _drop_jaxpr(v) if _has_swap(v) else v
    if type(v) is tuple and v and all(isinstance(x, (ClosedJaxpr, Jaxpr)) for x in v):
        return tuple(_drop_param(x) for x in v)
    return v


def _has_swap(j):
    return any(e.primitive.name in ("swap", "masked_swap")
               or any(_has_swap(s) for s in jaxprs_in_params(e.params)) for e in j.eqns)


def _readonly(x):
    v = x.view()
    v.flags.writeable = False
    return v


def _padded_shape(bm):
    shape = []
    for n, d in zip(bm.array_aval.shape, bm.block_shape):
        if isinstance(d, Element):
            lo, hi = d.padding
            shape.append(n + lo + hi)
        elif isinstance(d, Squeezed):
            shape.append(n)
        else:
            b = d.block_size
            shape.append(-(-n // b) * b if b else n)
    return tuple(shape)


def _needs_padding(bm):
    return (_padded_shape(bm) != tuple(bm.array_aval.shape)
            or any(isinstance(d, Element) and any(d.padding) for d in bm.block_shape))


def _prepare(x, bm, copy):
    """The operand as the grid loop indexes it: padded to whole blocks (and by Element
    padding) with the uninitialised value; copied when the kernel writes it, else
    read-only (so reading a block of it needs no copy)."""
    padded = _padded_shape(bm)
    lows = [d.padding[0] if isinstance(d, Element) else 0 for d in bm.block_shape]
    if padded == x.shape and not any(lows):
        return np.array(x) if copy else _readonly(x)
    out = uninitialized(padded, x.dtype)
    out[tuple(slice(lo, lo + n) for lo, n in zip(lows, x.shape))] = x
    return out if copy else _readonly(out)


def _unpad(o, bm):
    lows = [d.padding[0] if isinstance(d, Element) else 0 for d in bm.block_shape]
    shape = bm.array_aval.shape
    if o.shape == shape and not any(lows):
        return o
    return np.ascontiguousarray(o[tuple(slice(lo, lo + n) for lo, n in zip(lows, shape))])


def _index_map_exprs(ctx_globals, bm, k, grid_names, scalar_names=()):
    """Python expressions of the block indices: inlined when the index map returns grid
    indices or constants, else a call of the compiled index map (statements returned)."""
    from jaxlite._src.prims.call import jit_p
    closed = bm.index_map_jaxpr
    j = closed.jaxpr
    pos = {v: i for i, v in enumerate(j.invars)}
    exprs = []
    simple = True
    for a in j.outvars:
        if isinstance(a, Literal):
            exprs.append(str(int(np.asarray(a.val))))
        elif pos.get(a, len(grid_names)) < len(grid_names) and not j.constvars:
            exprs.append(grid_names[pos[a]])
        else:
            simple = False
            break
    if simple:
        return [], exprs
    fn = jit_p.compiled(closed, f"index_map_{k}")
    name = f"_imap{k}"
    ctx_globals[name] = fn
    args = [f"_i32[{g}]" for g in grid_names] + list(scalar_names)
    stmts = [f"t{k} = {name}({', '.join(args)}{',' if len(args) == 1 else ''})"]
    return stmts, [f"int(t{k}[{i}])" for i in range(len(j.outvars))]


def build_runner(kernel_closed: ClosedJaxpr, gm, input_output_aliases, name, debug=False):
    """Generate and compile the grid loop of one pallas_call; returns (function, source).

    The function takes the inputs as NumPy arrays and returns the list of outputs."""
    from jaxlite._src.prims.call import jit_p
    kernel = jit_p.compiled(drop_unused_reads(kernel_closed), _ident(name) + "_kernel")
    n_in, n_out = gm.num_inputs, gm.num_outputs
    grid = gm.grid
    written = written_inputs(kernel_closed.jaxpr)
    aliases = dict(input_output_aliases)   # input index -> output index
    largest = max(grid, default=1)
    # (the grid loop runs inside the pallas_call's quiet floating-point state: the kernel's
    # raw function, so pdb's 'up' from the kernel lands in this loop)
    g = {"np": np, "_kernel": kernel.raw, "_grid": grid_env, "_prepare": _prepare,
         "_unpad": _unpad, "_uninit": uninitialized, "_bms": gm.block_mappings,
         "_i32": [np.int32(i) for i in range(largest)], "__name__": "jaxlite._generated"}
    fname = "pallas_" + _ident(name)
    ns = len(gm.scalar_avals)
    g["_readonly"] = _readonly
    lines = [f"def {fname}({', '.join(f'a{i}' for i in range(ns + n_in))}):"]
    for j in range(ns):   # scalar-prefetch operands: whole refs for the kernel and index maps
        lines.append(f"    c{j} = np.array(a{j})" if j in written else
                     f"    c{j} = _readonly(a{j})")
    for i in range(n_in):
        copy = (ns + i) in written
        if _needs_padding(gm.block_mappings[i]):
            lines.append(f"    x{i} = _prepare(a{ns + i}, _bms[{i}], {copy})")
        else:
            lines.append(f"    x{i} = {'np.array' if copy else '_readonly'}(a{ns + i})")
    out_of = {o: i - ns for i, o in aliases.items()}
    for o in range(n_out):
        bm = gm.block_mappings[n_in + o]
        if o in out_of:   # starts as a copy of the aliased input (a buffer of its own)
            lines.append(f"    o{o} = _prepare(a{ns + out_of[o]}, _bms[{n_in + o}], True)")
        else:
            dt = bm.array_aval.dtype.name
            lines.append(f"    o{o} = _uninit({_padded_shape(bm)}, np.dtype('{dt}'))")
    for s, aval in enumerate(gm.scratch_avals):
        g[f"_saval{s}"] = aval
        lines.append(f"    r{s} = _uninit(_saval{s}.shape, _saval{s}.dtype)")
    kgrid = gm.kernel_grid
    lines.append("    _saved = (_grid.ids, _grid.sizes)")
    g["_ksizes"] = tuple(np.int32(x) for x in kgrid)
    lines.append("    _grid.sizes = _ksizes")
    # A loop of grid steps runs BLAS single-threaded: blocks are sized for a core's local
    # memory, and BLAS threads spun up for each block's matmul cost more than they give
    # (measured 2.5x slower on the quickstart's 4 steps of (512, 1024) blocks on a busy
    # 2-core machine, 3x on the TPU guide's 512 steps of 128-blocks).
    steps = int(np.prod(grid, dtype=np.int64)) if grid else 1
    many = steps > 1
    if many:
        from jaxlite._src.runtime.blas import single_threaded_blas
        g["_st_blas"] = single_threaded_blas
        lines.append("    _blas = _st_blas()")
        lines.append("    _blas.__enter__()")
    lines.append("    try:")
    indent = "        "
    gnames = [f"g{d}" for d in range(len(grid))]
    for d, n in enumerate(grid):
        lines.append(f"{indent}for g{d} in range({n}):")
        indent += "    "
    kid = [gnames[d] for d in range(len(grid)) if d not in gm.vmapped_dims]
    lines.append(f"{indent}_grid.ids = ({''.join(f'_i32[{x}], ' for x in kid)})")
    operands = [f"x{i}" for i in range(n_in)] + [f"o{o}" for o in range(n_out)]
    blocks = []
    for k, bm in enumerate(gm.block_mappings):
        stmts, exprs = _index_map_exprs(g, bm, k, gnames, [f"c{j}" for j in range(ns)])
        dims = ", ".join("None" if isinstance(d, Squeezed) else str(d) for d in bm.block_shape)
        lines.append(f"{indent}# {bm.origin}: block ({dims}) at block index "
                     f"({', '.join(e.replace('int(', '').rstrip(')') for e in exprs)})"
                     + (f" from {'_imap%d' % k}" if stmts else ""))
        lines.extend(indent + s for s in stmts)
        padded = _padded_shape(bm)
        parts = []
        for dim, (d, e, n) in enumerate(zip(bm.block_shape, exprs, padded)):
            bs = block_size(d)
            squeeze = isinstance(d, Squeezed)
            scale = 1 if isinstance(d, (Squeezed, Element)) else bs
            hi = max(n - bs, 0)
            if e.lstrip("-").isdigit():       # a constant block index
                st = min(max(int(e) * scale, 0), hi)
                parts.append(str(st) if squeeze else
                             (":" if (st, bs) == (0, n) else f"{st}:{st + bs}"))
                continue
            start = e if scale == 1 else f"{e} * {scale}"
            if e in gnames and (grid[gnames.index(e)] - 1) * scale <= hi:
                # a grid index whose every block lies inside the array: no clamping
                sv = start
            else:
                sv = f"s{k}_{dim}"
                lines.append(f"{indent}{sv} = min(max({start}, 0), {hi})")
            parts.append(sv if squeeze else f"{sv}:{sv} + {bs}")
        parts.append("...")
        blocks.append(f"{operands[k]}[{', '.join(parts)}]")
    blocks = [f"c{j}" for j in range(ns)] + blocks + [f"r{s}" for s in
                                                    range(len(gm.scratch_avals))]
    lines.append(f"{indent}_kernel({', '.join(blocks)})")
    lines.append("    finally:")
    lines.append("        _grid.ids, _grid.sizes = _saved")
    if many:
        lines.append("        _blas.__exit__(None, None, None)")
    outs = [f"_unpad(o{o}, _bms[{n_in + o}])" if _needs_padding(gm.block_mappings[n_in + o])
            else f"o{o}" for o in range(n_out)]
    lines.append(f"    return [{', '.join(outs)}]")
    source = "\n".join(lines) + "\n"
    filename = f"<jaxlite-pallas:{fname}:{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), g)
    fn = g[fname]
    fn.source = source
    if debug:
        print(f"\nJaxpr of the kernel in pallas_call {name}:")
        print(kernel_closed.jaxpr)
        print(f"\nThe grid loop of pallas_call {name} (jaxlite interpret mode):")
        print(source)
        print(f"The kernel {name}:")
        print(kernel.as_text())
    return fn, source


def _ident(s):
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in str(s))
    return out if out and not out[0].isdigit() else "k" + out
