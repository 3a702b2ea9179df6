"""The ahead-of-time stages of a jitted function (``jax.stages``): ``Traced`` (the jaxpr for
given argument types), ``Lowered`` (its text, HLO text, partitioning and sharding
explanations) and ``Compiled`` (the generated code, callable with arguments of those types).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Union

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.api.make_jaxpr import out_info as _out_info
from jaxlite._src.api.sharded_jit import (flat_out_shardings, has_constraints, run_partitioned,
                                          used_inputs)
from jaxlite._src.compiler.tiers import Program
from jaxlite._src.runtime.donation import check_call, owned_value, plan, run_donating

__all__ = ["Traced", "Lowered", "Compiled", "ArgInfo", "CompilerOptions"]

# The options ``Lowered.compile(compiler_options=...)`` takes (JAX's type alias).
CompilerOptions = dict[str, Union[str, bool]]


@dataclasses.dataclass(frozen=True, slots=True)
class ArgInfo:
    """One argument of a staged computation (``stage.args_info``): its abstract value and
    whether it is donated."""
    _aval: Any
    donated: bool

    @property
    def shape(self):
        """The argument's shape."""
        if not hasattr(self._aval, "shape"):
            raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
        return self._aval.shape

    @property
    def dtype(self):
        """The argument's dtype."""
        if not hasattr(self._aval, "dtype"):
            raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
        return self._aval.dtype


class _Stage:
    """What every stage tells about its arguments (JAX's ``Stage``)."""

    def _arg_avals(self):
        closed = getattr(self, "jaxpr", None) or self._closed
        return closed.in_avals

    @property
    def args_info(self):
        """The pytree ``(args, kwargs)`` of ArgInfo: each argument's aval and donation."""
        mask = getattr(self, "_donated", None) or ()
        avals = self._arg_avals()
        return self.in_tree.unflatten([ArgInfo(a, bool(i < len(mask) and mask[i]))
                                       for i, a in enumerate(avals)])

    @property
    def in_avals(self):
        """The pytree ``(args, kwargs)`` of the arguments' avals."""
        return self.in_tree.unflatten(list(self._arg_avals()))

    @property
    def donate_argnums(self):
        """The flat indices of the donated arguments."""
        mask = getattr(self, "_donated", None) or ()
        return tuple(i for i, d in enumerate(mask) if d)

_py_scalars = (int, float, complex, bool)
_ext_types = dtypes.extended_array_types   # (the set itself: types register later)


def _to_numpy(x):
    t = type(x)
    if t is ArrayImpl:
        return x._value
    if t in _py_scalars:
        return np.asarray(x, dtypes.python_scalar_dtype(x))
    if t in _ext_types:   # a key array: its data
        return x.dtype.to_physical(x)._value
    if isinstance(x, (np.ndarray, np.generic)):
        dt = dtypes.canonicalize_dtype(x.dtype)
        return x if x.dtype == dt else x.astype(dt)
    if isinstance(x, ArrayImpl):
        return x._value
    rv = getattr(t, "_runtime_value", None)
    if rv is not None:    # a Ref: its buffer, which the program updates in place
        return rv(x)
    return _to_numpy(x.__jax_array__())


class Traced(_Stage):
    """A function traced for specific argument types: ``.jaxpr``, ``.lower()``."""

    def __init__(self, wrapped, closed, in_tree, out_tree):
        self._wrapped = wrapped
        self.jaxpr = closed
        self.in_tree = in_tree
        self.out_tree = out_tree

    out_info = property(lambda self: _out_info(self.jaxpr, self.out_tree),
                        doc="The outputs' types: a pytree of ShapeDtypeStruct.")

    def lower(self):
        low = Lowered(self._wrapped, self.jaxpr, self.in_tree, self.out_tree)
        low._arg_shardings = getattr(self, "_arg_shardings", None)
        low._donated = getattr(self, "_donated", None)
        return low


class Lowered(_Stage):
    """The lowered stage of AOT compilation; ``as_text()`` is the jaxpr text."""

    def __init__(self, wrapped, closed, in_tree, out_tree):
        self._wrapped = wrapped
        self._closed = closed
        self.in_tree = in_tree
        self.out_tree = out_tree

    out_info = property(lambda self: _out_info(self._closed, self.out_tree),
                        doc="The outputs' types: a pytree of ShapeDtypeStruct.")

    def as_text(self, dialect=None, **_):
        """The program's text: its jaxpr, or with ``dialect="hlo"`` its HLO text."""
        ir = self.compiler_ir(dialect)
        return ir.as_hlo_text() if dialect == "hlo" else str(ir)

    def compiler_ir(self, dialect=None):
        """The program in a compiler IR. ``"hlo"``: an ``HloComputation`` whose
        ``as_hlo_text()`` prints the optimised jaxpr in XLA's HLO syntax (compiler/hlo.py);
        otherwise (jaxlite has no StableHLO) the ClosedJaxpr, printed in JAX's format."""
        if dialect == "hlo":
            from jaxlite._src.compiler.hlo import HloComputation
            return HloComputation(self._closed, self._wrapped._name)
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"unknown dialect: {dialect}")
        return self._closed

    def _partitioned(self):
        w = self._wrapped
        shardings = getattr(self, "_arg_shardings", None) or []
        if shardings and not w.keep_unused:     # (unused arguments are pruned, as at calls)
            shardings = [s if u else None for s, u in
                         zip(shardings, used_inputs(self._closed.jaxpr))]
        out_sh = None if w.out_shardings is None else \
            flat_out_shardings(w.out_shardings, self.out_tree)
        if not any(s is not None for s in shardings) and not out_sh and \
                not has_constraints(self._closed):
            return None
        from jaxlite._src.compiler.partition import partition
        return partition(self._closed, shardings, out_sh)

    def explain_sharding(self):
        """Why the partitioner inserted each collective of the per-device program: one line
        per collective with the user line of the equation that needed it and the reason."""
        part = self._partitioned()
        if part is None:
            return "not partitioned: no argument is split over several devices"
        return part.explain()

    def compile(self, compiler_options=None):
        """Generate and compile the code; returns a ``Compiled`` stage (for arguments split
        over several devices, the per-device program with its collectives)."""
        from jaxlite._src.api.misc import check_compiler_options
        from jaxlite._src.compiler.codegen import lower_jaxpr
        from jaxlite._src.compiler.passes import optimize
        check_compiler_options(compiler_options)
        part = self._partitioned()
        if part is not None:
            code = lower_jaxpr(optimize(part.body), self._wrapped._name)
            head = (f"# per-device program: mesh {part.mesh}, inputs {tuple(part.in_specs)}, "
                    f"outputs {tuple(part.out_specs)}\n" +
                    "".join(f"# {n}\n" for n in part.notes))
            c = Compiled(code, self._closed, self.in_tree, self.out_tree)
            c._part, c._head = part, head
            c._donated = getattr(self, "_donated", None)
            return c
        name = self._wrapped._name
        opt = optimize(self._closed)
        mask = getattr(self, "_donated", None)
        dplan = None if mask is None else plan(mask, self._closed.in_avals,
                                               self._closed.out_avals)
        owned = () if dplan is None else dplan.owned(len(mask))
        prog = Program(opt, lower_jaxpr(opt, name, owned_invars=owned if len(owned) == len(
            opt.jaxpr.invars) else ()), name)
        if prog.tier2 is None:   # the jitted function may have built tier 2 already
            text = str(self._closed)
            for e in list(self._wrapped._cache.values()):
                p = e.program
                if p is not None and p.tier2 is not None and str(e.closed) == text:
                    prog.tier2, prog.tier, prog.state = p.tier2, 2, "final"
                    prog.install(p.tier2.raw, p.tier2.fn)
                    break
        c = Compiled(prog.tier1, self._closed, self.in_tree, self.out_tree)
        c._program = prog
        c._donation = dplan
        c._donated = mask
        return c

    def cost_analysis(self):
        """XLA's cost analysis of the program (a dict: ``flops``, ``transcendentals``,
        ``bytes accessed`` and per-operand keys), as JAX's ``Lowered.cost_analysis``: the
        unoptimized program, each operation counted on its own (see api/cost.py)."""
        from jaxlite._src.api.cost import program_cost
        return program_cost(self._closed)


class Compiled(_Stage):
    """The compiled stage: call it with arguments of the lowered types;
    ``as_text()`` is the generated Python source (tier 1's, then tier 2's once built)."""

    def __init__(self, compiled, closed, in_tree, out_tree):
        self._compiled = compiled
        self._closed = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self._out_weak = [a.weak_type for a in closed.out_avals]

    out_info = property(lambda self: _out_info(self._closed, self.out_tree),
                        doc="The outputs' types: a pytree of ShapeDtypeStruct.")

    def as_text(self):
        """The generated Python source of the compiled function (of the per-device program,
        headed by why each collective is there, when it was partitioned)."""
        prog = getattr(self, "_program", None)
        if prog is not None:
            return prog.source()
        return getattr(self, "_head", "") + self._compiled.source

    def cost_analysis(self):
        """XLA's cost analysis of the compiled program (a dict, as JAX 0.10's
        ``Compiled.cost_analysis``); ``bytes accessed`` counts the program as one fusion
        reading its inputs and writing its outputs once (see api/cost.py)."""
        from jaxlite._src.api.cost import compiled_cost
        return compiled_cost(self._closed)

    def __call__(self, *args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        part = getattr(self, "_part", None)
        if part is not None:
            return tree_util.tree_unflatten(self.out_tree, run_partitioned(part, leaves))
        if in_tree != self.in_tree:
            raise TypeError(f"Compiled function called with input structure {in_tree}, but "
                            f"it was compiled for {self.in_tree}")
        for x, a in zip(leaves, self._closed.in_avals):
            xa = aval_of_value(x)
            if (xa.shape, xa.dtype) != (a.shape, a.dtype):
                raise TypeError(f"Argument types differ from the types for which this "
                                f"computation was compiled: got {xa.str_short()}, expected "
                                f"{a.str_short()}")
        prog = getattr(self, "_program", None)
        fn = prog.fn if prog is not None else self._compiled.fn
        dplan = getattr(self, "_donation", None)
        if dplan is not None and dplan.donated:
            check_call(leaves, dplan)
            d = set(dplan.donated)
            outs = run_donating(fn, [owned_value(x, _to_numpy) if i in d else _to_numpy(x)
                                     for i, x in enumerate(leaves)], leaves, dplan)
        else:
            outs = fn(*[_to_numpy(x) for x in leaves])
        outs = [ArrayImpl(o, w) for o, w in zip(outs, self._out_weak)]
        outs = [a.dtype.from_physical(o) if dtypes.is_extended(a.dtype) else
                np.zeros(a.shape, a.dtype) if a.dtype == dtypes.float0 else o
                for o, a in zip(outs, self._closed.out_avals)]   # key arrays over their data
        return tree_util.tree_unflatten(self.out_tree, outs)
