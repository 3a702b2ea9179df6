"""``jax.interpreters.partial_eval``: partial values and tracing a function with some inputs
known (computed now) and others unknown (staged into a jaxpr)."""
from __future__ import annotations

from typing import NamedTuple

from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.trace import ctx, set_current_trace
from jaxlite._src.interpreters.partial_eval import PartialEvalTrace
from jaxlite._src.interpreters.staging import StagingTracer, trace_to_jaxpr

__all__ = ["PartialVal", "trace_to_jaxpr_nounits", "trace_to_jaxpr_dynamic",
           "JaxprTracer", "DynamicJaxprTracer"]

JaxprTracer = StagingTracer
DynamicJaxprTracer = StagingTracer


class PartialVal(NamedTuple):
    """A value known now (``(None, const)``) or unknown with an abstract value
    (``(aval, None)``)."""
    aval: object
    const: object

    @classmethod
    def known(cls, const):
        """A known value."""
        return cls(None, const)

    @classmethod
    def unknown(cls, aval):
        """An unknown value of abstract value ``aval``."""
        return cls(aval, None)

    def is_known(self):
        """Whether the value is known."""
        return self.aval is None

    def get_known(self):
        """The known value, or None."""
        return self.const if self.aval is None else None

    def get_aval(self):
        """The abstract value, known or not."""
        return aval_of_value(self.const) if self.aval is None else self.aval


def _as_aval(a):
    return a if isinstance(a, ShapedArray) else ShapedArray(a.shape, a.dtype,
                                                            getattr(a, "weak_type", False))


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Run ``fun`` (a WrappedFun taking flat values) with the known values of ``pvals``
    computed now and the unknown ones staged. Returns (jaxpr, out_pvals, consts): the jaxpr
    computes the unknown outputs from its constants ``consts`` and the unknown inputs."""
    pe = PartialEvalTrace(ctx.trace)
    args = [pe.new_arg(_as_aval(pv.aval)) if pv.aval is not None else pv.const
            for pv in pvals]
    with set_current_trace(pe):
        outs = fun.call_wrapped(*args)
    inst = list(instantiate) if isinstance(instantiate, (list, tuple)) else \
        [bool(instantiate)] * len(outs)
    unknown = [pe.is_unknown(o) or i for o, i in zip(outs, inst)]
    jaxpr, consts = pe.finish([o for o, u in zip(outs, unknown) if u])
    out_pvals = [PartialVal.unknown(aval_of_value(o)) if u else PartialVal.known(o)
                 for o, u in zip(outs, unknown)]
    return jaxpr, out_pvals, consts


def trace_to_jaxpr_dynamic(fun, in_avals, *args, **kwargs):
    """Stage ``fun`` (a WrappedFun) for ``in_avals``: (jaxpr, out_avals, consts)."""
    jaxpr, tracer_consts, consts = trace_to_jaxpr(fun.call_wrapped,
                                                  [_as_aval(a) for a in in_avals])
    return jaxpr, [v.aval for v in jaxpr.outvars], list(tracer_consts) + list(consts)
