"""lax's collectives over named axes: psum, pmean, pmax, pmin, all_gather, psum_scatter,
ppermute, pshuffle, axis_index (bound by ``vmap(axis_name=...)``; pmap and shard_map later)."""
from __future__ import annotations

from jaxlite._src.prims import collectives as cp
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "pshuffle", "axis_index", "axis_size"]


_value = asarray_value


def _axes(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _reduce(prim, x, axis_name):
    leaves, tree = tree_flatten(x)
    outs = prim.bind(*[_value(v) for v in leaves], axes=_axes(axis_name))
    return tree_unflatten(tree, outs)


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` (a pytree) over the members of the named axis."""
    if axis_index_groups is not None:
        raise NotImplementedError("psum axis_index_groups is not supported by jaxlite yet.")
    return _reduce(cp.psum_p, x, axis_name)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` (a pytree) over the members of the named axis."""
    n = 1
    for a in _axes(axis_name):
        n *= cp.axis_size(a)
    # ``v / n`` is jnp.true_divide, as JAX's pmean (integers average to floats)
    return tree_map(lambda v: v / n, psum(x, axis_name, axis_index_groups=axis_index_groups))


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` (a pytree) over the members of the named axis."""
    return _reduce(cp.pmax_p, x, axis_name)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` (a pytree) over the members of the named axis."""
    return _reduce(cp.pmin_p, x, axis_name)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every member's ``x`` stacked along ``axis`` (concatenated when ``tiled``)."""
    size = cp.axis_size(axis_name)

    def one(v):
        v = _value(v)
        ax = axis % (v.ndim + (0 if tiled else 1))
        return cp.all_gather_p.bind(v, axis_name=axis_name, all_gather_dimension=ax,
                                    axis_size=size, tiled=bool(tiled))
    return tree_map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum(x, axis_name)`` of which each member keeps only its own block along
    ``scatter_dimension`` (that dimension, of the axis size, is dropped; with ``tiled`` it is
    split into one block per member)."""
    if axis_index_groups is not None:
        raise NotImplementedError("psum_scatter axis_index_groups is not supported by jaxlite "
                                  "yet.")
    size = cp.axis_size(axis_name)

    def one(v):
        v = _value(v)
        return cp.reduce_scatter_p.bind(v, axis_name=axis_name,
                                        scatter_dimension=scatter_dimension % v.ndim,
                                        axis_size=size, tiled=bool(tiled))
    return tree_map(one, x)


def ppermute(x, axis_name, perm):
    """Send ``x`` from member ``src`` to member ``dst`` for each (src, dst) in ``perm``."""
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    return tree_map(lambda v: cp.ppermute_p.bind(_value(v), axis_name=axis_name, perm=perm),
                    x)


def pshuffle(x, axis_name, perm):
    """Member ``i`` receives the ``x`` of member ``perm[i]`` (``ppermute`` with the
    permutation given as a list of sources)."""
    perm = [int(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def axis_index(axis_name):
    """This member's index along the named axis."""
    return cp.axis_index_p.bind(axis_name=axis_name)


def axis_size(axis_name):
    """The number of members of the named axis."""
    return cp.axis_size(axis_name)
