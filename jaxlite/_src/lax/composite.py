"""``lax.composite``: wrap a function as a named composite operation."""
from __future__ import annotations

import functools

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.lax.control_flow import _trace
from jaxlite._src.prims.composite import composite_p
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["composite"]


def composite(decomposition, name, version=0):
    """Return a function computing ``decomposition`` as one ``composite`` operation named
    ``name`` (with ``version``): positional arguments are arrays (pytrees), keyword arguments
    are static attributes recorded on the operation. Its jaxpr shows
    ``composite[name=... jaxpr=...]``."""
    if not isinstance(name, str):
        raise TypeError(f"composite name must be a string, got {name!r}")

    @functools.wraps(decomposition)
    def wrapped(*args, **kwargs):
        leaves, in_tree = tree_flatten(args)
        vals = [asarray_value(x) for x in leaves]
        avals = [aval_of_value(v) for v in vals]
        attrs = []
        for k in sorted(kwargs):
            lv, tr = tree_flatten(kwargs[k])
            attrs.append((k, tuple(lv), tr))
        closed, tconsts, out_tree = _trace(
            lambda *a: decomposition(*a, **kwargs), in_tree, avals, "composite")
        outs = composite_p.bind(*tconsts, *vals, jaxpr=closed, name=name,
                                attributes=tuple(attrs), version=int(version))
        return tree_unflatten(out_tree, outs)
    return wrapped
