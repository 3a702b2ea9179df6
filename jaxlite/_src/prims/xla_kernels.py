"""Elementwise primitives whose float results are XLA:CPU's (``cpu_math``), in every tier.

``xla_class(cls)`` is the class of a primitive: ``cls`` itself, or, when ``cpu_math.table``
has a kernel for the primitive's name, a subclass with ``XlaMath`` in front. ``XlaMath``
makes float32 (and float16/bfloat16, through float32) operands run the kernel eagerly and in
tier 1's code, and the kernel's numba twin in tier 2's loops; other dtypes keep ``cls``'s
NumPy code (its ``impl``, ``lower_stmts`` and ``numba`` rules).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import dispatch, table

__all__ = ["XlaMath", "xla_class"]

_F32 = np.dtype(np.float32)


class XlaMath:
    """Mixin: float32 results from ``cpu_math``'s kernel of this primitive's name."""

    def __init__(self):
        super().__init__()
        numpy_impl = self.impl       # (the NumPy function, or the class's impl)
        self.impl = dispatch.impl(self.name, self.nargs, numpy_impl)
        self._numpy_impl = numpy_impl

    def lower_py(self, ctx, ins, **params):
        return None

    def lower_stmts(self, ctx, ins, outs, eqn):
        """Tier 1: the kernel's dispatcher for the float types it computes, the NumPy ufunc
        written inline for the others (when the primitive is one)."""
        dts = {a.aval.dtype for a in eqn.invars}
        if any(dispatch.computes(dt, self.name) for dt in dts):
            fn = self.impl
        elif getattr(super(), "lower_stmts", None) is not None:
            return super().lower_stmts(ctx, ins, outs, eqn)
        elif len(dts) == 1 and isinstance(self.np_fn, np.ufunc) and \
                getattr(np, self.np_fn.__name__, None) is self.np_fn and \
                self._numpy_impl is self.np_fn:
            return [f"{outs[0]} = np.{self.np_fn.__name__}({', '.join(ins)})"]
        else:
            fn = self._numpy_impl
        return [f"{outs[0]} = {ctx.bind_global(fn, 'impl_' + self.name + '_')}"
                f"({', '.join(ins)})"]

    def numba_scalar(self, eqn):
        """The numba twin tier 2 calls per element (``_xm.<name>``, see
        ``compiler.numba_kernels``) when every operand and the result are float32."""
        if all(a.aval.dtype == _F32 for a in (*eqn.invars, *eqn.outvars)):
            return f"_xm.{self.name}"
        return None

    def numba(self, code, eqn, ins, **params):
        """Tier 2's loop code: the twin for float32, NumPy's ufunc loop for other dtypes."""
        if self.numba_scalar(eqn) is not None:
            return [code.elementwise(eqn, ins)]
        if getattr(super(), "numba", None) is not None:
            return super().numba(code, eqn, ins, **params)
        if self._numpy_impl is self.np_fn and isinstance(self.np_fn, np.ufunc) and \
                len({a.aval.dtype for a in eqn.invars}) == 1:
            return [code.ufunc(eqn, ins)]
        return None


def xla_class(cls):
    """``cls``, or its subclass computing float32 with ``cpu_math``'s kernel of
    ``cls.name`` (``XlaMath`` in front) when the table has one."""
    if cls.name in table.ALL:
        return type(cls.__name__, (XlaMath, cls), {"__doc__": cls.__doc__,
                                                   "__module__": cls.__module__})
    return cls
