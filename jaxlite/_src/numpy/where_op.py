"""jnp.where's three-argument form (``_where``, which JAX jits under that name): a module
of its own below ``ufuncs`` so the jnp modules that select with it import it without a
cycle (``searching.where`` adds the one-argument form)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.numpy.util import asarray_value, check_arraylike, promote_args

__all__ = ["where"]


def _to_bool(x):
    x = asarray_value(x)
    return x if x.dtype == np.bool_ else lax.ne(x, asarray_value(np.zeros((), x.dtype)))


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` else ``y`` (with broadcasting): jnp.where's three-argument
    form (``searching.where``, the public one, adds the one-argument form: nonzero)."""
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         "to jax.numpy.where, got {x} and {y}.")
    check_arraylike("where", condition, x, y)
    from jaxlite._src.core.trace import ctx
    if ctx.trace is None:   # eagerly: skip the jit dispatch, same ops
        return _where(condition, x, y)
    global _where_jit
    if _where_jit is None:
        from jaxlite._src.api.jit import jit
        _where_jit = jit(_where)
    return _where_jit(condition, x, y)


_where_jit = None


def _where(condition, x, y):
    """jnp.where's body (JAX jits it as ``_where``)."""
    c = _to_bool(condition)
    x, y = promote_args("where", x, y)
    from jaxlite._src.numpy.shape_ops import broadcast_arrays
    if np.ndim(c) == 0:   # select_n takes a scalar predicate as it is
        x, y = broadcast_arrays(x, y)
    else:
        c, x, y = broadcast_arrays(c, x, y)
    return lax.select(c, x, y)
