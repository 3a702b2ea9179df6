"""How jit compiles an extension primitive's registered lowering, at the time JAX runs it.

JAX runs a primitive's lowering once per compilation: a ``mlir.lower_fun(fun)`` rule traces
``fun`` into the compiled program, and an MLIR rule builds IR (libraries such as equinox
build a host callback with ``mlir.emit_python_callback``). jaxlite does the same with its own
compiler: at compile time ``fun`` is traced to a jaxpr and compiled as a nested function; an
MLIR rule is run against a small lowering context whose only builder is
``emit_python_callback``, and the compiled code calls the callback it registered. A rule that
needs anything else (real MLIR) is not run; the primitive's ``impl`` is called instead.
"""
from __future__ import annotations

import numpy as np

__all__ = ["lower_extension", "emit_python_callback"]


class _Operand:
    """A placeholder for one operand of the equation being lowered."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class _Result:
    """A placeholder for one result of a callback emitted by ``emit_python_callback``."""
    __slots__ = ("call", "index")

    def __init__(self, call, index):
        self.call, self.index = call, index


class _ModuleContext:
    platforms = ("cpu",)

    def __init__(self):
        self.keepalives = []

    def add_keepalive(self, obj):
        self.keepalives.append(obj)

    def add_host_callback(self, obj):
        self.keepalives.append(obj)


class _CallbackLoweringContext:
    """What an MLIR lowering rule reads of its context: the avals, and the module."""

    def __init__(self, eqn):
        self.avals_in = [v.aval for v in eqn.invars]
        self.avals_out = [v.aval for v in eqn.outvars]
        self.module_context = _ModuleContext()
        self.calls = []
        self.tokens_in = self.tokens_out = None


class _NotSupported(Exception):
    pass


class _HostCall:
    """A callback of the compiled code: NumPy operands in, NumPy results of the declared
    types out (as XLA's host callbacks convert them)."""
    __slots__ = ("callback", "operands", "result_avals")

    def __init__(self, callback, operands, result_avals):
        self.callback, self.operands, self.result_avals = callback, operands, result_avals

    def __call__(self, *args):
        outs = self.callback(*[np.asarray(args[i]) for i in self.operands])
        if len(outs) != len(self.result_avals):
            raise TypeError(f"a host callback returned {len(outs)} results where its "
                            f"lowering declared {len(self.result_avals)}")
        return [np.asarray(o, a.dtype).reshape(a.shape)
                for o, a in zip(outs, self.result_avals)]


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect=False, returns_token=True, partitioned=False,
                         sharding=None):
    """Inside an MLIR lowering rule run by jaxlite: make the compiled code call
    ``callback`` on the given operands (NumPy arrays) for results of ``result_avals``.
    Returns (results, token, keepalive) as JAX's does."""
    if not isinstance(ctx, _CallbackLoweringContext) or \
            not all(isinstance(o, _Operand) for o in operands):
        raise NotImplementedError(
            "emit_python_callback: jaxlite runs it only inside a lowering rule of a "
            "primitive defined with jax.extend.core.Primitive, on that rule's operands.")
    call = _HostCall(callback, [o.index for o in operands], list(result_avals))
    ctx.calls.append(call)
    results = [_Result(call, i) for i in range(len(result_avals))]
    return results, (token if returns_token else None), call


def lower_extension(prim, ctx, ins, outs, eqn):
    """Source lines computing ``eqn`` of the extension primitive ``prim`` from its
    registered lowering, or None when it has none jaxlite can run (``impl`` is called)."""
    if prim._lowering is not None:
        return _lower_fun(prim, ctx, ins, outs, eqn)
    if prim._mlir_rule is not None:
        return _lower_mlir_rule(prim, ctx, ins, outs, eqn)
    return None


def _assign(outs, expr, multiple):
    if multiple:
        lhs = (", ".join(outs) + ("," if len(outs) == 1 else "")) if outs else "_"
    else:
        lhs = outs[0]
    return [f"{lhs} = {expr}"]


def traced_lowering(prim, eqn):
    """The closed jaxpr of ``prim``'s lower_fun function on ``eqn``'s operands, or None
    when it does not trace (it computes on values)."""
    from jaxlite._src.core.ir import ClosedJaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    fun, params = prim._lowering.fun, eqn.params

    def traced(*xs):
        out = fun(*xs, **params)
        return list(out) if prim.multiple_results else [out]
    try:
        jaxpr, _, consts = trace_to_jaxpr(traced, [v.aval for v in eqn.invars])
    except Exception:   # not traceable (it computes on values): run it at call time
        return None
    closed = ClosedJaxpr(jaxpr, consts)
    if [a.shape for a in closed.out_avals] != [v.aval.shape for v in eqn.outvars]:
        raise TypeError(f"the lowering of primitive {prim.name!r} returned shapes "
                        f"{[a.shape for a in closed.out_avals]}; its abstract evaluation "
                        f"gives {[v.aval.shape for v in eqn.outvars]}")
    return closed


def _lower_fun(prim, ctx, ins, outs, eqn):
    closed = traced_lowering(prim, eqn)
    if closed is None:
        return None
    fn = ctx.compile_sub(closed, prim.name)
    call = f"{fn}({', '.join(ins)})"
    return _assign(outs, call if prim.multiple_results else f"{call}[0]",
                   prim.multiple_results)


def _lower_mlir_rule(prim, ctx, ins, outs, eqn):
    lctx = _CallbackLoweringContext(eqn)
    try:
        res = prim._mlir_rule(lctx, *[_Operand(i) for i in range(len(ins))], **eqn.params)
    except Exception:   # the rule builds real MLIR: not runnable here
        return None
    res = list(res) if prim.multiple_results else [res]
    if len(lctx.calls) != 1 or len(res) != len(outs) or not all(
            isinstance(r, _Result) and r.call is lctx.calls[0] and r.index == i
            for i, r in enumerate(res)):
        return None
    call = ctx.bind_global(lctx.calls[0], "hostcb_")
    expr = f"{call}({', '.join(ins)})"
    return _assign(outs, expr if prim.multiple_results else f"{expr}[0]",
                   prim.multiple_results)
