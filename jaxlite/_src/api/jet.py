"""``jax.experimental.jet``: Taylor-mode higher-order differentiation.

``jet(fun, primals, series)`` pushes truncated Taylor series through ``fun``: ``primals[i]``
is the point and ``series[i]`` the list of derivative terms of input ``i`` (the k-th term
is the k-th derivative along the path when ``factorial_scaled``, the default; the plain
Taylor coefficient otherwise). Returns ``(fun(*primals), series_out)`` with the output's
terms in the same form. The work is done by the jet trace (interpreters/jet.py) and the
primitives' Taylor rules.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.interpreters.jet import jet_flat
from jaxlite._src.prims import elementwise as ew
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.prims.special import lgamma_p
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["jet", "jet2"]


def _fact(n):
    # n! as JAX's jet computes it, exp(lgamma(n + 1)) in (weak) float32
    return ew.exp_p.bind(lgamma_p.bind(ArrayImpl(np.float32(n + 1.0), True)))


def _scaled(term, n, inverse):
    f = _fact(n)
    return ew.mul_p.bind(term, f) if inverse else ew.div_p.bind(term, f)


def jet(fun, primals, series, factorial_scaled=True, **_):
    """Taylor-mode differentiation of ``fun`` at ``primals`` along the truncated series
    ``series`` (one list of terms per primal, all of one length, the order). Returns
    ``(primals_out, series_out)``: ``fun(*primals)`` and the terms of its output series,
    with the output's pytree structure (each leaf's terms a list)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError("jet: primals and series must be tuples or lists, got "
                        f"{type(primals).__name__} and {type(series).__name__}")
    if len(primals) != len(series):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series")
    orders = set(map(len, series))
    if len(orders) != 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments")
    order, = orders
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    primals = [asarray_value(x) for x in primals]
    series = [[asarray_value(t) for t in terms] for terms in series]
    for i, (x, terms) in enumerate(zip(primals, series)):
        for j, t in enumerate(terms):
            if aval_of_value(t).shape != aval_of_value(x).shape:
                raise ValueError(f"jet: term {j} for argument {i} has shape "
                                 f"{aval_of_value(t).shape}, its primal "
                                 f"{aval_of_value(x).shape}")
    if factorial_scaled:
        series = [[_scaled(t, k + 1, False) for k, t in enumerate(terms)] for terms in series]
    store = []

    def flat_fun(*args):
        out = fun(*args)
        leaves, tree = tree_util.tree_flatten(out)
        store.append(tree)
        return [asarray_value(x) for x in leaves]

    outs, terms = jet_flat(flat_fun, primals, series, order)
    if factorial_scaled:
        terms = [[_scaled(t, k + 1, True) for k, t in enumerate(ts)] for ts in terms]
    tree = store[0]
    return tree_util.tree_unflatten(tree, outs), tree_util.tree_unflatten(tree, terms)


def jet2(fun, primals, series, **kwargs):
    """``jet`` with series of plain Taylor coefficients (not scaled by factorials), in and
    out."""
    return jet(fun, primals, series, factorial_scaled=False, **kwargs)
