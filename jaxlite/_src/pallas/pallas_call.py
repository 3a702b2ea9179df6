"""``pallas_call``: a kernel over refs, run once per step of a grid, as one primitive.

``pallas_call(kernel, out_shape, grid=..., in_specs=..., out_specs=...)`` returns a function of
arrays. Called, it traces the kernel once per argument signature to a jaxpr over refs (the
state primitives), canonicalises the block specs against the operands (``GridMapping``) and
binds ``pallas_call_p``, a higher-order primitive carrying that jaxpr. Its rules:
``impl``/``lower_py`` run the generated grid loop of ``interpret.py``; ``batch`` (vmap) adds a
leading grid dimension that the batched operands are blocked along, as JAX does.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.pallas import core as plc
from jaxlite._src.pallas.primitives import tracing_grid
from jaxlite._src.prims.state import AbstractRef
from jaxlite._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["pallas_call", "pallas_call_p"]


def _trace(fun, avals, name, what):
    from jaxlite._src.interpreters.staging import DebugInfo, trace_to_jaxpr
    di = DebugInfo.from_function(fun, [""] * len(avals), what)
    jaxpr, tconsts, consts = trace_to_jaxpr(fun, avals, di, parent=None)
    if tconsts:
        raise ValueError(
            f"The {what} {name} closes over traced values (of an enclosing jit, vmap or grad): "
            f"{', '.join(t.aval.str_short() for t in tconsts)}. Pass them to the pallas_call "
            "as inputs (with a BlockSpec) instead of capturing them.")
    return ClosedJaxpr(jaxpr, consts)


# ----------------------------------------------------------------------------- the primitive

class PallasCall(Primitive):
    """Run ``jaxpr`` (a kernel over refs) at every step of ``grid_mapping.grid``."""
    name = "pallas_call"
    multiple_results = True
    effectful = False
    # the kernel's writes land in refs the call owns: an unused call is dead code
    encapsulates_ref_effects = True

    def __init__(self):
        super().__init__()
        self._runners = {}

    def runner(self, params):
        """The compiled grid loop for these parameters (cached on the GridMapping)."""
        gm = params["grid_mapping"]
        fn = getattr(gm, "_runner", None)
        if fn is None or gm._runner_jaxpr is not params["jaxpr"]:
            from jaxlite._src.pallas.interpret import build_runner
            fn, _ = build_runner(params["jaxpr"], gm, params["input_output_aliases"],
                                 params["name"] or gm.kernel_name, params["debug"])
            gm._runner, gm._runner_jaxpr = fn, params["jaxpr"]
        return fn

    def impl(self, *args, **params):
        return self.runner(params)(*[np.asarray(a) for a in args])

    def abstract_eval(self, *avals, out_avals, grid_mapping, **_):
        for a, bm in zip(avals[len(grid_mapping.scalar_avals):], grid_mapping.block_mappings):
            if (tuple(a.shape), a.dtype) != (bm.array_aval.shape, bm.array_aval.dtype):
                raise TypeError(f"pallas_call: operand {a.str_short()} does not match the "
                                f"traced {bm.array_aval.str_short()}")
        return list(out_avals)

    def lower_py(self, ctx, ins, **params):
        fn = ctx.bind_global(self.runner(params), "pallas")
        return f"{fn}({', '.join(ins)})"

    def jvp(self, primals, tangents, **params):
        return _jvp(self, primals, tangents, params)

    def transpose(self, cts, *args, **params):
        raise NotImplementedError(
            "Reverse-mode differentiation (grad, vjp) of a pallas_call is not supported, as "
            "in JAX (forward mode, jvp/jacfwd, is). Wrap the call in jax.custom_vjp with a "
            "backward pass written as its own kernel, as Pallas kernels for training are.")

    def batch(self, size, args, dims, **params):
        return _batch(self, size, args, dims, params), [0] * len(params["out_avals"])


pallas_call_p = PallasCall()


def _is_float(aval):
    from jaxlite._src.core import dtypes
    return dtypes.issubdtype(aval.dtype, np.inexact)


def _jvp(prim, primals, tangents, params):
    """Forward mode, as JAX: the kernel's JVP is a kernel over the primal refs and tangent
    refs (one per float input with a nonzero tangent, float output and float scratch
    buffer); reads and writes of a ref do the same to its tangent ref. The tangent blocks
    follow their primal's BlockSpec."""
    from jaxlite._src.interpreters.ad import Zero, instantiate, jvp_jaxpr_nz
    gm, closed = params["grid_mapping"], params["jaxpr"]
    ns, n_in, n_out = len(gm.scalar_avals), gm.num_inputs, gm.num_outputs
    aliases = dict(params["input_output_aliases"])
    in_bms, out_bms = gm.block_mappings[:n_in], gm.block_mappings[n_in:]
    in_nz = [_is_float(bm.array_aval) and (type(t) is not Zero or ns + i in aliases)
             for i, (t, bm) in enumerate(zip(tangents[ns:], in_bms))]
    out_nz = [_is_float(bm.array_aval) for bm in out_bms]
    sc_nz = [_is_float(a) for a in gm.scratch_avals]
    nonzeros = [False] * ns + in_nz + out_nz + sc_nz
    jclosed, _ = jvp_jaxpr_nz(closed, nonzeros, False)
    # invars (primals..., tangents...) -> scalars, inputs, their tangents, outputs, their
    # tangents, scratch, its tangents: the order the grid loop passes blocks in
    j = jclosed.jaxpr
    n_prim = len(nonzeros)
    prim_vars, tan_vars = list(j.invars[:n_prim]), iter(j.invars[n_prim:])
    groups = [(0, ns, [False] * ns), (ns, n_in, in_nz), (ns + n_in, n_out, out_nz),
              (ns + n_in + n_out, len(sc_nz), sc_nz)]
    order = []
    for start, n, nz in groups:
        order += prim_vars[start:start + n]
        order += [next(tan_vars) for z in nz if z]
    jclosed = ClosedJaxpr(j.replace(invars=order), jclosed.consts)
    t_in = [bm for bm, z in zip(in_bms, in_nz) if z]
    t_out = [bm for bm, z in zip(out_bms, out_nz) if z]
    new_gm = plc.GridMapping(gm.grid, list(in_bms) + t_in + list(out_bms) + t_out,
                             n_in + len(t_in), n_out + len(t_out), gm.vmapped_dims,
                             list(gm.scratch_avals) + [a for a, z in zip(gm.scratch_avals,
                                                                          sc_nz) if z],
                             gm.scalar_avals)
    new_gm.kernel_name = gm.kernel_name
    # an aliased output's tangent starts as its input's tangent
    t_in_pos = {i: n_in + k for k, i in enumerate(i for i, z in enumerate(in_nz) if z)}
    t_out_pos = {o: n_out + k for k, o in enumerate(o for o, z in enumerate(out_nz) if z)}
    new_aliases = list(params["input_output_aliases"]) + [
        (ns + t_in_pos[i - ns], t_out_pos[o]) for i, o in aliases.items()
        if i - ns in t_in_pos and o in t_out_pos]
    t_args = [instantiate(t) for t, z in zip(tangents[ns:], in_nz) if z]
    out_avals = tuple(params["out_avals"])
    outs = prim.bind(*primals, *t_args, **dict(
        params, jaxpr=jclosed, grid_mapping=new_gm,
        out_avals=out_avals + tuple(a for a, z in zip(out_avals, out_nz) if z),
        input_output_aliases=tuple(sorted(new_aliases))))
    p_out, t_iter = outs[:n_out], iter(outs[n_out:])
    t_outs = [next(t_iter) if z else Zero.like(p) for p, z in zip(p_out, out_nz)]
    return list(p_out), t_outs


def _prepend_index_map(closed, batched):
    """The index map of a vmapped pallas_call: a new leading grid index ``b``; a batched
    operand's block index along its new leading dimension is ``b``."""
    from jaxlite._src.interpreters.eval import eval_jaxpr
    i32 = ShapedArray((), np.int32)

    def fn(b, *ids_and_scalars):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *ids_and_scalars)
        return ([b] if batched else []) + list(outs)
    return _trace(fn, [i32] + list(closed.in_avals), "index_map", "pallas_call index_map")


def _batch(prim, size, args, dims, params):
    from jaxlite._src.prims.batch_util import bdim_at_front, moveaxis
    gm = params["grid_mapping"]
    ns = len(gm.scalar_avals)
    if any(d is not None for d in dims[:ns]):
        raise NotImplementedError(
            "vmap of a pallas_call over its scalar-prefetch operands is not supported by "
            "jaxlite: map over the blocked inputs only (in_axes=None for the scalars), or "
            "loop with lax.map.")
    aliases = {i - ns: o for i, o in params["input_output_aliases"]}
    moved = list(args[:ns])
    args, dims = args[ns:], dims[ns:]
    for i, (x, d) in enumerate(zip(args, dims)):
        if d is None and i in aliases:   # an aliased input must carry the batch
            x, d = bdim_at_front(x, None, size), 0
        moved.append(x if d is None else moveaxis(x, d, 0))
    batched = tuple(i in aliases or d is not None for i, d in enumerate(dims))
    cache = gm.__dict__.setdefault("_batched", {})
    new_gm = cache.get((size, batched))
    if new_gm is None:
        new_gm = cache[(size, batched)] = _batched_grid_mapping(gm, size, batched)
    out_avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype) for a in
                      params["out_avals"])
    return prim.bind(*moved, **dict(params, grid_mapping=new_gm, out_avals=out_avals))


def _batched_grid_mapping(gm, size, batched):
    bms = []
    for bm, b in zip(gm.block_mappings, batched):
        if not b:
            bms.append(plc.BlockMapping(bm.block_shape, bm.array_aval,
                                        _prepend_index_map(bm.index_map_jaxpr, False),
                                        bm.block_aval, bm.origin))
            continue
        bms.append(_batched_mapping(bm, size))
    for bm in gm.block_mappings[gm.num_inputs:]:
        bms.append(_batched_mapping(bm, size))
    new_gm = plc.GridMapping((size,) + gm.grid, bms, gm.num_inputs, gm.num_outputs,
                             (0,) + tuple(d + 1 for d in gm.vmapped_dims), gm.scratch_avals,
                             gm.scalar_avals)
    new_gm.kernel_name = gm.kernel_name
    return new_gm


def _batched_mapping(bm, size):
    a = bm.array_aval
    return plc.BlockMapping((plc.squeezed,) + bm.block_shape,
                            ShapedArray((size,) + tuple(a.shape), a.dtype),
                            _prepend_index_map(bm.index_map_jaxpr, True), bm.block_aval,
                            bm.origin)


# ----------------------------------------------------------------------------- the API

def _is_spec_leaf(x):
    return x is None or isinstance(x, (plc.BlockSpec, plc.NoBlockSpec))


def _flat_specs(specs, tree, n, what):
    """One BlockSpec (or no_block_spec) per flat operand: ``specs`` mirrors the operands'
    structure, or is a prefix of it (one spec for a whole argument)."""
    if isinstance(specs, plc.NoBlockSpec) or specs is None:
        return [plc.no_block_spec] * n
    if isinstance(specs, plc.BlockSpec):
        return [specs] * n
    leaves, stree = tree_flatten(specs, is_leaf=_is_spec_leaf)
    if len(leaves) == n:
        return [plc.no_block_spec if s is None else s for s in leaves]
    try:
        from jaxlite._src.tree_util import broadcast_prefix
        full = broadcast_prefix(specs, tree_unflatten(tree, [0] * n), is_leaf=_is_spec_leaf)
    except Exception:
        full = None
    if full is None or len(full) != n:
        raise ValueError(f"pallas_call {what} must match the structure of the "
                         f"{'inputs' if what == 'in_specs' else 'outputs'} ({n} arrays): got "
                         f"{len(leaves)} block specs ({specs!r}).")
    return [plc.no_block_spec if s is None else s for s in full]


def _block_mapping(spec, aval, grid, origin, scalar_refs=()):
    """Canonicalise one operand's BlockSpec (shape checks, traced index map). The index map
    takes the grid indices, then the scalar-prefetch refs (``scalar_refs`` avals)."""
    shape = tuple(aval.shape)
    if isinstance(spec, plc.NoBlockSpec):
        spec = plc.BlockSpec()
    where = f"BlockSpec for {origin}"
    if spec.block_shape is None:
        dims = tuple(plc.Blocked(n) for n in shape)
    else:
        dims = tuple(plc.canonical_block_dim(d, where) for d in spec.block_shape)
        if len(dims) != len(shape):
            raise ValueError(f"Block shape for {origin} (= {spec.block_shape}) must have the "
                             f"same number of dimensions as the array shape {shape}.")
    i32 = ShapedArray((), np.int32)
    imap = spec.index_map
    if imap is None:
        def imap(*_):
            return (0,) * len(shape)
    code = getattr(imap, "__code__", None)
    imap_name = (f"{getattr(imap, '__name__', imap)} at {code.co_filename}:{code.co_firstlineno}"
                 if code is not None else str(imap))

    def flat_imap(*ids):
        out = imap(*ids)
        if isinstance(out, list):
            out = tuple(out)
        if not isinstance(out, tuple):
            out = (out,)
        if len(out) != len(dims):
            raise ValueError(
                f"Index map function {imap_name} for {origin} must return {len(dims)} "
                f"values to match block_shape={spec.block_shape}. Currently returning "
                f"{len(out)} values.")
        from jaxlite._src.prims.operands import asarray_value
        return [asarray_value(o) for o in out]
    with tracing_grid(grid):
        closed = _trace(flat_imap, [i32] * len(grid) + list(scalar_refs),
                        getattr(imap, "__name__", "index_map"), "pallas_call index_map")
    for k, a in enumerate(closed.out_avals):
        if a.shape or a.dtype.kind not in "iu":
            raise ValueError(f"Index map function {imap_name} for {origin} must return "
                             f"integer scalars. Output[{k}] has type {a.str_short()}.")
    ref_shape = tuple(plc.block_size(d) for d in dims if not isinstance(d, plc.Squeezed))
    ms = spec.memory_space
    block_aval = AbstractRef(ShapedArray(ref_shape, aval.dtype),
                             "default" if ms is None else str(ms))
    return plc.BlockMapping(dims, ShapedArray(shape, aval.dtype), closed, block_aval, origin)


def _out_leaf(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")


class _PallasCallable:
    """What ``pallas_call`` returns: call it on arrays (eagerly, or under jit/vmap)."""

    def __init__(self, kernel, out_shape, grid_spec, input_output_aliases, interpret, name,
                 compiler_params, cost_estimate, debug):
        self.kernel = kernel
        self.out_shape = out_shape
        self.grid_spec = grid_spec
        self.aliases = tuple(sorted(dict(input_output_aliases or {}).items()))
        self.interpret = interpret
        self.name = name
        self.compiler_params = compiler_params
        self.cost_estimate = cost_estimate
        self.debug = debug
        self._cache = {}
        self.kernel_name = getattr(kernel, "__name__", None) or getattr(
            getattr(kernel, "func", None), "__name__", "kernel")   # functools.partial too
        self.__name__ = "wrapped"   # as JAX names the function pallas_call returns
        self.__doc__ = getattr(kernel, "__doc__", None)

    def _prepare(self, in_tree, in_avals, scalar_avals):
        gs = self.grid_spec
        ns = len(scalar_avals)
        scalar_refs = [AbstractRef(a, "smem") for a in scalar_avals]
        out_leaves, out_tree = tree_flatten(self.out_shape, is_leaf=_out_leaf)
        for o in out_leaves:
            if not _out_leaf(o):
                raise TypeError(f"pallas_call out_shape must be a ShapeDtypeStruct (or a pytree "
                                f"of them), got {o!r}")
        out_avals = [ShapedArray(tuple(o.shape), np.dtype(o.dtype)) for o in out_leaves]
        n_in, n_out = len(in_avals), len(out_avals)
        in_specs = _flat_specs(gs.in_specs, in_tree, n_in, "in_specs")
        out_specs = _flat_specs(gs.out_specs, out_tree, n_out, "out_specs")
        grid = gs.grid
        bms = [_block_mapping(s, a, grid, f"args[{i + ns}]", scalar_refs)
               for i, (s, a) in enumerate(zip(in_specs, in_avals))]
        bms += [_block_mapping(s, a, grid, f"outputs[{i}]", scalar_refs)
                for i, (s, a) in enumerate(zip(out_specs, out_avals))]
        for i, o in self.aliases:   # input indices count the scalar-prefetch operands
            if not (ns <= i < ns + n_in and 0 <= o < n_out):
                raise ValueError(f"input_output_aliases {dict(self.aliases)}: the call has "
                                 f"{ns} scalar-prefetch operands, {n_in} blocked inputs and "
                                 f"{n_out} outputs")
            a = in_avals[i - ns]
            if (a.shape, a.dtype) != (out_avals[o].shape, out_avals[o].dtype):
                raise ValueError(
                    f"input_output_aliases: input {i} ({a.str_short()}) and output "
                    f"{o} ({out_avals[o].str_short()}) must have the same shape and dtype")
        scratch = []
        for s in gs.scratch_shapes:
            if not hasattr(s, "get_ref_aval"):
                raise TypeError(f"pallas_call scratch_shapes entries must be scratch types "
                                f"such as pltpu.VMEM((8, 128), jnp.float32), got {s!r}")
            scratch.append(s.get_ref_aval())
        gm = plc.GridMapping(grid, bms, n_in, n_out, (), [r.inner_aval for r in scratch],
                             scalar_avals)
        gm.kernel_name = self.kernel_name
        ref_avals = scalar_refs + [bm.block_aval for bm in bms] + scratch
        kernel = self.kernel
        multi_out = isinstance(self.out_shape, (tuple, list))

        def flat_kernel(*refs):
            scalars, refs = refs[:ns], refs[ns:]
            ins = tree_unflatten(in_tree, list(refs[:n_in]))
            outs = tree_unflatten(out_tree, list(refs[n_in:n_in + n_out]))
            outs = list(outs) if multi_out else [outs]
            res = kernel(*scalars, *ins, *outs, *refs[n_in + n_out:])
            if res is not None:
                raise ValueError(f"The Pallas kernel {self.kernel_name} returned {res!r}: kernels "
                                 "write their results into the output refs and return None.")
            return []
        from jaxlite._src.compiler.passes import dce
        with tracing_grid(gm.kernel_grid):
            closed = _trace(flat_kernel, ref_avals, self.kernel_name, "Pallas kernel")
        closed = dce(closed)
        return closed, gm, tuple(out_avals), out_tree

    def __call__(self, *args):
        from jaxlite._src.prims.operands import asarray_value
        ns = self.grid_spec.num_scalar_prefetch
        if len(args) < ns:
            raise TypeError(f"pallas_call with num_scalar_prefetch={ns} needs the {ns} "
                            f"scalar-prefetch arrays first, got {len(args)} arguments")
        scalars = [asarray_value(x) for x in args[:ns]]
        leaves, in_tree = tree_flatten(args[ns:])
        leaves = [asarray_value(x) for x in leaves]
        avals = [aval_of_value(x).strip_weak_type() for x in leaves]
        s_avals = [aval_of_value(x).strip_weak_type() for x in scalars]
        key = (in_tree, tuple(avals), tuple(s_avals))
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._prepare(in_tree, avals, s_avals)
        closed, gm, out_avals, out_tree = hit
        outs = pallas_call_p.bind(
            *scalars, *leaves, jaxpr=closed, grid_mapping=gm, out_avals=out_avals,
            input_output_aliases=self.aliases, interpret=self.interpret,
            compiler_params=self.compiler_params, cost_estimate=self.cost_estimate,
            debug=self.debug, mesh=None, metadata=None, name=self.name)
        return tree_unflatten(out_tree, list(outs))


def pallas_call(kernel, out_shape, *, grid_spec=None, grid=(), in_specs=plc.no_block_spec,
                out_specs=plc.no_block_spec, scratch_shapes=(), input_output_aliases=None,
                debug=False, interpret=False, name=None, compiler_params=None,
                cost_estimate=None, backend=None, metadata=None):
    """Turn ``kernel(*input_refs, *output_refs, *scratch_refs)`` into a function of arrays.

    ``out_shape`` is a ``ShapeDtypeStruct`` (or a pytree of them); the kernel runs once per
    step of ``grid`` (an int or a tuple), seeing the blocks the ``in_specs``/``out_specs``
    BlockSpecs select (the whole arrays by default), plus scratch refs for
    ``scratch_shapes``. ``input_output_aliases={input_index: output_index}`` makes an output
    start as a copy of an input. jaxlite always runs kernels in interpret mode (generated
    NumPy code looping over the grid), whatever ``interpret``, ``compiler_params`` and
    ``backend`` say; ``debug=True`` prints the kernel's jaxpr and the generated code.
    """
    if grid_spec is None:
        grid_spec = plc.GridSpec(grid, in_specs, out_specs, scratch_shapes)
    else:
        if grid not in ((), None) or not isinstance(in_specs, plc.NoBlockSpec) or \
                not isinstance(out_specs, plc.NoBlockSpec) or scratch_shapes:
            raise ValueError("pallas_call: if grid_spec is given, leave grid, in_specs, "
                             "out_specs and scratch_shapes unset (they belong to the GridSpec)")
    if debug:
        print(f"pallas_call {name or getattr(kernel, '__name__', kernel)}: jaxlite runs "
              "kernels in interpret mode")
    return _PallasCallable(kernel, out_shape, grid_spec, input_output_aliases, interpret, name,
                           compiler_params, cost_estimate, debug)
