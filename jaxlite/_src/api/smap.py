"""``jax.smap``: a ``shard_map`` over one mesh axis, with vmap-style ``in_axes`` /
``out_axes`` (an int: the dimension split over ``axis_name``; None: not split)."""
from __future__ import annotations

import functools

from jaxlite._src import tree_util
from jaxlite._src.api.shard_map import _resolve_mesh, shard_map
from jaxlite._src.sharding.partition_spec import PartitionSpec

__all__ = ["smap", "Infer"]


class _InferFromArgs:
    """``jax.sharding.Infer``: take the split from the arguments' types (Explicit axes)."""

    def __repr__(self):
        return "jax.sharding.Infer"


Infer = _InferFromArgs()


def _axis_spec(axis_name, axis):
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*([None] * axis + [axis_name]))


def _int_leaves(tree):
    return all(isinstance(v, int) for v in tree_util.tree_leaves(tree))


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """Map ``f`` over the mesh axis ``axis_name`` of the context mesh (``jax.set_mesh``):
    each instance gets the block of each argument split along its ``in_axes`` dimension and
    returns blocks joined along ``out_axes`` (None: replicated). Without ``in_axes`` the
    splits come from the arguments' types, which needs ``axis_name`` to be Explicit."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of "
                        "entries corresponding to the positional arguments passed to the "
                        f"function, but got {in_axes}.")
    if in_axes is not Infer and not _int_leaves(in_axes):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not _int_leaves(out_axes):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {out_axes}.")
    spec = functools.partial(_axis_spec, axis_name)
    out_specs = tree_util.tree_map(spec, out_axes, is_leaf=lambda x: x is None)

    @functools.wraps(f)
    def wrapped(*args):
        if in_axes is Infer:
            mesh, _ = _resolve_mesh(None)
            if axis_name not in mesh.explicit_axes:
                kind = dict(zip(mesh.axis_names, mesh.axis_types)).get(axis_name)
                raise TypeError(f"in_axes was not specified when axis_name="
                                f"{frozenset({axis_name})} was of type {kind}")
            in_specs = None
        elif isinstance(in_axes, tuple):
            in_specs = tree_util.tree_map(spec, in_axes, is_leaf=lambda x: x is None)
        else:
            in_specs = tuple(tree_util.tree_map(lambda _: spec(in_axes), a) for a in args)
        return shard_map(f, mesh=None, in_specs=in_specs, out_specs=out_specs,
                         axis_names={axis_name})(*args)
    return wrapped
