"""lax's collectives over named axes: psum, pmean, pmax, pmin, all_gather, psum_scatter,
ppermute, pshuffle, axis_index (bound by ``vmap(axis_name=...)``; pmap and shard_map later)."""
from __future__ import annotations

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.prims import collectives as cp
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "pshuffle", "axis_index", "axis_size", "all_to_all", "pswapaxes",
           "with_sharding_constraint", "pcast", "ragged_all_to_all", "psend", "precv"]


def pcast(x, axis_name, *, to):
    """Inside shard_map, ``to='varying'`` marks the arrays of pytree ``x`` as varying over
    the manual mesh axes ``axis_name`` (a name or a tuple of names): what a scan carry or a
    cond branch whose type must match a varying value needs (values are unchanged)."""
    if to in ("reduced", "unreduced"):
        raise NotImplementedError(f"lax.pcast(..., to={to!r}) (reduced/unreduced shardings) "
                                  "is not supported by jaxlite; to='varying' is.")
    if to != "varying":
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: {'varying', "
                         f"'reduced', 'unreduced'}}, got to={to!r}.")
    axes = _axes(axis_name)
    if not axes:
        return x
    return tree_map(lambda v: cp.pvary_p.bind(_value(v), axes=axes), x)


_value = asarray_value


def _axes(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _groups(name, axis_name, axis_index_groups, equal=False):
    """``axis_index_groups`` as a tuple of tuples, checked: the sets must split the indices
    of the axis (every index in exactly one), and for the collectives that move blocks
    (``equal``) all be of one size."""
    if axis_index_groups is None:
        return None
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    n = cp.axis_size(axis_name)
    flat = sorted(i for g in groups for i in g)
    if flat != list(range(n)):
        raise ValueError(f"{name}: axis_index_groups must split the {n} indices of axis "
                         f"{axis_name!r}, each index in exactly one group; got {groups}.")
    if equal and len({len(g) for g in groups}) > 1:
        raise ValueError(f"{name}: axis_index_groups must all be the same size; got "
                         f"{groups}.")
    return groups


def _reduce(prim, x, axis_name, axis_index_groups=None):
    groups = _groups(prim.name, axis_name, axis_index_groups)
    leaves, tree = tree_flatten(x)
    if not leaves:
        return x
    outs = prim.bind(*[_value(v) for v in leaves], axes=_axes(axis_name),
                     axis_index_groups=groups)
    return tree_unflatten(tree, outs)


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` (a pytree) over the members of the named axis (or tuple of axes)."""
    return _reduce(cp.psum_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` (a pytree) over the members of the named axis (of each of the
    ``axis_index_groups``)."""
    if axis_index_groups is not None:   # each member divides by the size of its own group
        n = psum(1, axis_name, axis_index_groups=axis_index_groups)
        return tree_map(lambda v: v / n,
                        psum(x, axis_name, axis_index_groups=axis_index_groups))
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)   # (its errors first)
    n = 1
    for a in _axes(axis_name):
        n *= cp.axis_size(a)
    # ``v / n`` is jnp.true_divide, as JAX's pmean (integers average to floats)
    return tree_map(lambda v: v / n, total)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` (a pytree) over the members of the named axis."""
    return _reduce(cp.pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` (a pytree) over the members of the named axis."""
    return _reduce(cp.pmin_p, x, axis_name, axis_index_groups)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every member's ``x`` stacked along ``axis`` (concatenated when ``tiled``); with
    ``axis_index_groups``, every member of the caller's group, in the group's order."""
    groups = _groups("all_gather", axis_name, axis_index_groups, equal=True)
    size = len(groups[0]) if groups else cp.axis_size(axis_name)

    def one(v):
        v = _value(v)
        ax = axis % (v.ndim + (0 if tiled else 1))
        return cp.all_gather_p.bind(v, axis_name=_axes(axis_name), axis_index_groups=groups,
                                    all_gather_dimension=ax,
                                    axis_size=size, tiled=bool(tiled))
    return tree_map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum(x, axis_name)`` of which each member keeps only its own block along
    ``scatter_dimension`` (that dimension, of the axis size, is dropped; with ``tiled`` it is
    split into one block per member)."""
    groups = _groups("psum_scatter", axis_name, axis_index_groups, equal=True)
    for v in tree_leaves(x):     # (JAX checks the operands' vma before the axes)
        cp.check_sum_states("psum_scatter", aval_of_value(v), _axes(axis_name))
    size = len(groups[0]) if groups else cp.axis_size(axis_name)

    def one(v):
        v = _value(v)
        return cp.reduce_scatter_p.bind(v, axis_name=_axes(axis_name), axis_index_groups=groups,
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


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Each member splits ``x`` along ``split_axis`` into one chunk per member, sends chunk j
    to member j and concatenates the chunks it receives along ``concat_axis``. Without
    ``tiled``, ``split_axis`` must have the axis size and is removed, and a new axis of that
    size appears at ``concat_axis``."""
    from jaxlite._src.prims.shape import squeeze_p, broadcast_in_dim_p
    groups = _groups("all_to_all", axis_name, axis_index_groups, equal=True)
    n = len(groups[0]) if groups else cp.axis_size(axis_name)

    def one(v):
        v = _value(v)
        nd = v.ndim
        s, c = split_axis % nd, concat_axis % (nd if tiled else nd + 1)
        if tiled:
            return cp.all_to_all_p.bind(v, axis_name=axis_name, split_axis=s, concat_axis=c,
                                        axis_index_groups=groups, tiled=True)
        if v.shape[s] != n:
            raise ValueError(f"all_to_all: the split axis {split_axis} must have the size of "
                             f"axis {axis_name!r} ({n}) when tiled=False, got {v.shape[s]}.")
        # a unit axis placed so that it lands at concat_axis once the split axis is dropped
        q = c if c <= s else c + 1
        shape = list(v.shape)
        shape.insert(q, 1)
        dims = tuple(k if k < q else k + 1 for k in range(nd))
        v = broadcast_in_dim_p.bind(v, shape=tuple(shape), broadcast_dimensions=dims,
                                    sharding=None)
        s2 = s if s < q else s + 1
        out = cp.all_to_all_p.bind(v, axis_name=axis_name, split_axis=s2, concat_axis=q,
                                   axis_index_groups=groups, tiled=False)
        return squeeze_p.bind(out, dimensions=(s2,))
    return tree_map(one, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named axis with positional ``axis`` of ``x`` (an all_to_all with
    ``split_axis=concat_axis=axis``, tiled)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups,
                      tiled=True)


def axis_index(axis_name):
    """This member's index along the named axis."""
    return cp.axis_index_p.bind(axis_name=axis_name)


def axis_size(axis_name):
    """The number of members of the named axis."""
    return cp.axis_size(axis_name)


def with_sharding_constraint(x, shardings):
    """Ask for the layout of the arrays of pytree ``x`` (a Sharding, a PartitionSpec under a
    mesh context, or a pytree prefix of them): eagerly the arrays are placed so; under jit
    the partitioner lays the values out as asked."""
    from jaxlite._src.prims.sharding_constraint import sharding_constraint_p
    from jaxlite._src.sharding.mesh import current_mesh
    from jaxlite._src.sharding.shardings import Sharding, resolve_sharding
    from jaxlite._src.sharding.partition_spec import PartitionSpec

    def is_leaf(s):
        return s is None or isinstance(s, (Sharding, PartitionSpec))

    def one(v, s):
        s = resolve_sharding(s)
        if s is None:
            return v
        return sharding_constraint_p.bind(_value(v), sharding=s, layout=None,
                                          context_mesh=current_mesh(),
                                          unconstrained_dims=frozenset())
    if is_leaf(shardings):
        return tree_map(lambda v: one(v, shardings), x)
    return tree_map(lambda s, sub: tree_map(lambda v: one(v, s), sub), shardings, x,
                    is_leaf=is_leaf)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets,
                      recv_sizes, *, axis_name, axis_index_groups=None):
    """All-to-all of ragged data over the mapped axis ``axis_name``: slice ``i`` of
    ``operand`` (rows ``input_offsets[i]`` to ``input_offsets[i] + send_sizes[i]``) goes to
    member ``i // (len(input_offsets) / axis size)``, which writes it into its ``output`` at
    ``output_offsets[i]`` (an offset on the receiver). Returns ``output`` with the received
    rows written in (``recv_sizes`` are the sizes this member receives)."""
    groups = _groups("ragged_all_to_all", axis_name, axis_index_groups, equal=True)
    from jaxlite._src.prims.collectives_extra import ragged_all_to_all_p
    return ragged_all_to_all_p.bind(_value(operand), _value(output), _value(input_offsets),
                                    _value(send_sizes), _value(output_offsets),
                                    _value(recv_sizes), axis_name=_axes(axis_name),
                                    axis_index_groups=groups)


def psend(x, axis_name, perm):
    """Send each leaf of ``x`` along the ``(source, destination)`` pairs of ``perm`` over
    the mapped axis ``axis_name``; returns a token (per leaf) for ``precv``, which receives
    the data on the destination members. (JAX 0.10.2 runs the pair on GPUs only; jaxlite
    runs it on its CPU devices under shard_map and pmap.)"""
    from jaxlite._src.prims.collectives_extra import psend_p
    axes = _axes(axis_name)
    perm = tuple(tuple(int(i) for i in p) for p in perm)
    return tree_map(lambda v: psend_p.bind(_value(v), axis_name=axes, perm=perm), x)


def precv(token, out_shape, axis_name, perm):
    """Receive what the matching ``psend`` (same ``axis_name`` and ``perm``) sent to this
    member: an array of ``out_shape``'s shape and dtype (zeros where no one sends)."""
    from jaxlite._src.core.avals import ShapedArray
    from jaxlite._src.prims.collectives_extra import precv_p
    axes = _axes(axis_name)
    perm = tuple(tuple(int(i) for i in p) for p in perm)
    return precv_p.bind(token, out_shape=ShapedArray(out_shape.shape, out_shape.dtype),
                        axis_name=axes, perm=perm)
