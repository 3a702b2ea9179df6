"""``vmap``: vectorizing map, as JAX resolves ``in_axes``/``out_axes``."""
from __future__ import annotations

import functools

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.interpreters import batching
from jaxlite._src.tree_util import (broadcast_prefix, tree_flatten, tree_unflatten)

__all__ = ["vmap"]


def _is_none(x):
    return x is None


def _check_axes_spec(axes, name):
    leaves, _ = tree_flatten(axes, is_leaf=_is_none)
    for a in leaves:
        if a is not None and not isinstance(a, int):
            raise TypeError(f"vmap {name} must be an int, None, or (nested) container with "
                            f"those types as leaves, but got {a!r}.")


def _describe(path_name, x, axis):
    a = aval_of_value(x)
    return f"axis {axis} of {path_name} of type {a.str_short(short_dtypes=False)}"


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorize ``fun`` over a new leading (or ``in_axes``) dimension of its arguments.

    ``in_axes``/``out_axes``: an int (negative counts from the end), None (not mapped), or a
    pytree prefix of the arguments/outputs. Keyword arguments are mapped along axis 0.
    ``axis_name`` names the mapped axis for collectives (``lax.psum`` & co).
    """
    if not callable(fun):
        raise TypeError(f"vmap requires a callable argument, got {fun!r}.")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                "the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        leaves, in_tree = tree_flatten((args, kwargs))
        try:
            axes = broadcast_prefix((in_axes, 0) if kwargs else (in_axes, {}),
                                    (args, kwargs), is_leaf=_is_none)
        except ValueError as e:
            raise ValueError(f"vmap in_axes specification must be a tree prefix of the "
                             f"corresponding value, got specification {in_axes} for value "
                             f"tree {tree_flatten(args)[1]}.") from e
        dims, sizes = [], []
        for i, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                dims.append(None)
                continue
            nd = len(aval_of_value(x).shape)
            if not -nd <= ax < nd or nd == 0:
                raise ValueError(f"vmap was requested to map its argument along axis {ax}, "
                                 f"which implies that its rank should be at least "
                                 f"{ax + 1 if ax >= 0 else -ax}, but is only {nd} (its shape "
                                 f"is {aval_of_value(x).shape})")
            d = ax % nd
            dims.append(d)
            sizes.append((aval_of_value(x).shape[d], i, d))
        size = axis_size
        distinct = {s for s, _, _ in sizes}
        if size is None:
            if not sizes:
                raise ValueError("vmap must have at least one non-None value in in_axes")
            if len(distinct) > 1:
                lines = [f"  * one axis had size {s}: {_describe(f'argument {i}', leaves[i], d)}"
                         for s, i, d in sizes]
                raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                                 + "\n".join(lines))
            size = sizes[0][0]
        elif distinct and distinct != {size}:
            raise ValueError(f"vmap got axis_size={size} but the mapped arguments have sizes "
                             f"{sorted(distinct)}.")
        store = {}

        def flat(*xs):
            a, kw = tree_unflatten(in_tree, list(xs))
            out = fun(*a, **kw)
            out_leaves, store["tree"] = tree_flatten(out)
            return out_leaves

        outs, out_dims = batching.batch_fun(flat, size, leaves, dims, None, axis_name,
                                            spmd_axis_name)
        out_tree = store["tree"]
        try:
            want = broadcast_prefix(out_axes, tree_unflatten(out_tree, outs), is_leaf=_is_none)
        except ValueError as e:
            raise ValueError(f"vmap out_axes specification must be a tree prefix of the "
                             f"corresponding value, got specification {out_axes} for value "
                             f"tree {out_tree}.") from e
        res = []
        for o, d, w in zip(outs, out_dims, want):
            if w is None:
                if d is not None:
                    raise ValueError("vmap has mapped output but out_axes is None")
                res.append(o)
                continue
            nd = len(aval_of_value(o).shape) + (1 if d is None else 0)
            if not -nd <= w < nd:
                raise ValueError(f"vmap out_axes {w} is out of bounds for an output of rank "
                                 f"{nd}.")
            w = w % nd
            res.append(batching.broadcast_batch(o, size, w) if d is None else
                       batching.moveaxis(o, d, w))
        return tree_unflatten(out_tree, res)

    return batched
