"""vmap of the state primitives (get/swap/addupdate): the indexer that reads or writes a
whole batch of blocks at once."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import aval_of_value

__all__ = ["batch_indexer"]


def batch_indexer(size, ref_dim, tree, idx, idx_dims, ref_shape, name):
    """The indexer reading (or writing) a batch of blocks at once: (tree, operands,
    result batch dimension) for a ref batched along ``ref_dim`` (or None) indexed by
    operands batched along ``idx_dims``. Batched indices become integer-array indices (a
    ``arange(size)`` one for the ref's batch axis), so each batch member reads its own
    block."""
    from jaxlite._src.prims.batch_util import moveaxis
    from jaxlite._src.prims.shape import iota_p, reshape_p
    full = tree if tree is not None else tuple(("s", 0, n, 1) for n in ref_shape)
    if all(d is None for d in idx_dims):
        if ref_dim is None:
            return tree, list(idx), None
        if tree is None:        # (the whole batch of refs)
            return None, [], ref_dim
        new = tuple(full[:ref_dim]) + (("s", 0, size, 1),) + tuple(full[ref_dim:])
        ints = [k for k, e in enumerate(new) if e[0] == "i"]
        before = sum(1 for e in new[:ref_dim] if e[0] == "s")   # slices before the batch
        if not ints or (ref_dim < ints[0] and ints == list(range(ints[0],
                                                                  ints[0] + len(ints)))):
            return new, list(idx), before
        # the integer indices' broadcast shape comes first when they are separated, or
        # takes their place before the batch axis
        ops, shapes = iter(idx), []
        for e in full:
            if e[0] == "i":
                shapes.append(aval_of_value(next(ops)).shape)
            elif e[1] is None:
                next(ops)
        return new, list(idx), before + len(np.broadcast_shapes(*shapes))
    if any(e[0] == "s" and e[1] is None for e in full):
        raise NotImplementedError(
            f"vmap of `{name}` with a batched slice start (pl.ds with a vmapped start) is "
            "not supported by jaxlite; index with a vmapped integer array instead")
    # every integer index gets a leading batch axis (size 1 where it is not batched) and
    # the same rank, so that NumPy's broadcasting pairs batch members
    it = iter(zip(idx, idx_dims))
    int_ops = []
    for e in full:
        if e[0] == "i":
            int_ops.append(next(it))
    rank = max([len(aval_of_value(o).shape) - (d is not None) for o, d in int_ops] + [0])
    new_ops = []
    for o, d in int_ops:
        a = aval_of_value(o)
        if d is not None:
            o = moveaxis(o, d, 0)
            inner = a.shape[:d] + a.shape[d + 1:]
            shape = (size,) + (1,) * (rank - len(inner)) + tuple(inner)
        else:
            shape = (1,) + (1,) * (rank - len(a.shape)) + tuple(a.shape)
        if tuple(aval_of_value(o).shape) != shape:
            o = reshape_p.bind(o, new_sizes=shape, dimensions=None, sharding=None)
        new_ops.append(o)
    new_tree = list(full)
    if ref_dim is not None:     # the ref's batch axis: indexed by arange(size)
        ar = iota_p.bind(dtype=np.dtype(np.int32), shape=(size,) + (1,) * rank, dimension=0,
                         sharding=None)
        k = sum(1 for e in full[:ref_dim] if e[0] == "i")
        new_tree = new_tree[:ref_dim] + [("i",)] + new_tree[ref_dim:]
        new_ops = new_ops[:k] + [ar] + new_ops[k:]
    ints = [k for k, e in enumerate(new_tree) if e[0] == "i"]
    return tuple(new_tree), new_ops, _batch_pos(new_tree, ints)


def _batch_pos(tree, ints):
    """Where the batch axis lands in the block ``tree`` selects: the front of the broadcast
    integer indices (which carry the batch)."""
    contiguous = ints == list(range(ints[0], ints[0] + len(ints)))
    if not contiguous:
        return 0
    return sum(1 for e in tree[:ints[0]] if e[0] == "s")
