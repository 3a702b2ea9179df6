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
_F64 = np.dtype(np.float64)


class XlaMath:
    """Mixin: float32 results from ``cpu_math``'s kernel of this primitive's name."""

    def __init__(self):
        super().__init__()
        numpy_impl = self.impl       # (the NumPy function, or the class's impl)
        self.impl = dispatch.impl(self.name, self.nargs, numpy_impl)
        self._numpy_impl = numpy_impl

    def accepts_out(self, eqn):
        """Whether tier 1 may hand the call an ``out=`` buffer (compiler/codegen.py
        reuse_plan): for the dtypes the kernel computes (elementwise, so an operand's
        buffer may be it)."""
        return any(dispatch.computes(a.aval.dtype, self.name) for a in eqn.invars) or \
            self._ufunc_fallback(eqn)

    def ufunc_for(self, eqn):
        """The NumPy ufunc computing ``eqn`` exactly (the other dtypes' code), or None (the
        kernel's dtypes; tier 2's NumPy chunks call it with ``out=``)."""
        if any(dispatch.computes(a.aval.dtype, self.name) for a in eqn.invars) or \
                not self._ufunc_fallback(eqn) or eqn.params:
            return None
        return self.np_fn

    def _ufunc_fallback(self, eqn):
        """Whether the other dtypes' code is one NumPy ufunc over operands of one dtype."""
        return self._numpy_impl is self.np_fn and isinstance(self.np_fn, np.ufunc) and \
            len({a.aval.dtype for a in eqn.invars}) == 1

    def lower_py(self, ctx, ins, **params):
        """Tier 1: a call of the kernel's dispatcher (``out=`` appended where a dying
        operand's buffer is reused)."""
        return f"{ctx.bind_global(self.impl, 'impl_' + self.name + '_')}({', '.join(ins)})"

    def lower_stmts(self, ctx, ins, outs, eqn):
        """Tier 1 for the float types the kernel computes: ``lower_py``'s call (None here);
        for the others, the class's own statements or the NumPy ufunc written inline."""
        dts = {a.aval.dtype for a in eqn.invars}
        if any(dispatch.computes(dt, self.name) for dt in dts) or self._ufunc_fallback(eqn):
            return None
        if getattr(super(), "lower_stmts", None) is not None:
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
        ``compiler.numba_kernels``) when every operand and the result are float32 (or
        float64, for the primitives of ``table.F64``: ``_xm.<name>_f64``)."""
        if all(a.aval.dtype == _F32 for a in (*eqn.invars, *eqn.outvars)):
            return f"_xm.{self.name}"
        if self.name in table.F64 and \
                all(a.aval.dtype == _F64 for a in (*eqn.invars, *eqn.outvars)):
            return f"_xm.{self.name}_f64"
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
