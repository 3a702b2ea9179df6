"""Reference-JAX printing as jaxlite is specified against it (tests only).

JAX 0.10 builds a few parameters with NumPy integer arithmetic (batching rules of reductions,
broadcasts and gathers), and on NumPy 2 its jaxprs then print ``np.int64(2)`` where JAX on
NumPy 1 printed ``2`` (e.g. ``broadcast_dimensions=(0, np.int64(2))``). jaxlite's parameters
are plain Python ints, so its jaxprs read as JAX's NumPy-1 text. ``use_numpy1_scalar_repr``
makes the installed JAX print jaxprs that way (NumPy's own ``legacy="1.25"`` scalar repr,
scoped to the jaxpr's ``__str__``), so jaxpr text can be compared exactly. It changes nothing
else: arrays and NumPy scalars printed elsewhere keep NumPy 2's repr.
"""
import functools

import numpy as np

__all__ = ["use_numpy1_scalar_repr"]


def _numpy1_repr(method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with np.printoptions(legacy="1.25"):
            return method(self, *args, **kwargs)
    wrapper._numpy1_repr = True
    return wrapper


def use_numpy1_scalar_repr():
    """Patch the installed JAX's Jaxpr/ClosedJaxpr printing (idempotent; no-op without jax)."""
    try:
        from jax._src import core
    except ImportError:
        return False
    for cls in (core.Jaxpr, core.ClosedJaxpr):
        for name in ("__str__", "__repr__", "pretty_print"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_numpy1_repr", False):
                setattr(cls, name, _numpy1_repr(method))
    return True
