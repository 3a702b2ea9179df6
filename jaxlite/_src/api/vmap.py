"""``vmap``: vectorizing map, as JAX resolves ``in_axes``/``out_axes``."""
from __future__ import annotations


from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.interpreters import batching
from jaxlite._src.tree_util import (broadcast_prefix, tree_flatten, tree_unflatten)
from jaxlite._src.traceback_util import api_boundary
from jaxlite._src.api.wrapping import wraps

__all__ = ["vmap"]


def _is_none(x):
    return x is None


def _check_axes_spec(axes, name):
    leaves, _ = tree_flatten(axes, is_leaf=_is_none)
    for a in leaves:
        if a is not None and not isinstance(a, int):
            raise TypeError(f"vmap {name} must be an int, None, or (nested) container with "
                            f"those types as leaves, but got {a!r}.")


def _leaf_names(fun, args, kwargs):
    """JAX's names of the flat argument leaves: ``argument a['k']`` (by parameter name) and
    ``kwargs['b']``, each with its type."""
    import inspect
    from jaxlite._src.tree_util import tree_flatten_with_path
    from jaxlite._src.tree_util import keystr
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None

    def arg_name(path):
        i = path[0].idx
        if params is None or i >= len(params):
            return f"args{keystr(path)}"
        return f"argument {params[i]}" + (keystr(path[1:]) if len(path) > 1 else "")

    def typ(x):
        try:
            return aval_of_value(x).str_short(short_dtypes=False)
        except TypeError:
            return "unknown"
    names = [f"{arg_name(p)} of type {typ(x)}" for p, x in tree_flatten_with_path(args)[0]]
    names += [f"kwargs{keystr(p)} of type {typ(x)}"
              for p, x in tree_flatten_with_path(kwargs)[0]]
    return names


def _inconsistent_sizes(fun, args, kwargs, mapped, axis_size):
    """JAX's error for mapped axes of different sizes: ``mapped`` is (size, leaf, axis) per
    mapped leaf."""
    import collections
    names = _leaf_names(fun, args, kwargs)
    counts = collections.Counter(s for s, _, _ in mapped).most_common()
    first = {}
    for s, i, d in mapped:
        first.setdefault(s, (i, d))
    msg = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};\n")
    for k, (sz, ct) in enumerate(counts):
        i, d = first[sz]
        if ct == 1:
            msg.append(f"  * one axis had size {sz}: axis {d} of {names[i]};\n")
        else:
            msg.append(f"  * {'most' if k == 0 else 'some'} axes ({ct} of them) had size "
                       f"{sz}, e.g. axis {d} of {names[i]};\n")
    return ValueError("".join(msg)[:-2])


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
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                        "to the positional arguments passed to the function, but got "
                        f"{in_axes}.")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")

    @wraps(fun)
    @api_boundary
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
            sizes.append((aval_of_value(x).shape[d], i, ax))
        size = axis_size
        distinct = {s for s, _, _ in sizes}
        if not leaves and size is None:
            raise ValueError("vmap wrapped function must be passed at least one argument "
                             "containing an array or axis_size must be specified, got empty "
                             f"*args={args} and **kwargs={kwargs}")
        if size is None:
            if not sizes:
                raise ValueError("vmap must have at least one non-None value in in_axes or "
                                 "axis_size must be specified")
            if len(distinct) > 1:
                raise _inconsistent_sizes(fun, args, kwargs, sizes, None)
            size = sizes[0][0]
        elif distinct and distinct != {size}:
            raise _inconsistent_sizes(fun, args, kwargs, sizes, size)
        store = {}

        def flat(*xs):
            a, kw = tree_unflatten(in_tree, list(xs))
            out = fun(*a, **kw)
            out_leaves, store["tree"] = tree_flatten(out)
            return out_leaves

        outs, out_dims = batching.batch_fun(flat, size, leaves, dims, None, axis_name,
                                            spmd_axis_name, per_device=False)
        out_tree = store["tree"]
        try:
            want = broadcast_prefix(out_axes, tree_unflatten(out_tree, outs), is_leaf=_is_none)
        except ValueError as e:
            raise ValueError(f"vmap out_axes specification must be a tree prefix of the "
                             f"corresponding value, got specification {out_axes} for value "
                             f"tree {out_tree}.") from e
        res = []
        for k, (o, d, w) in enumerate(zip(outs, out_dims, want)):
            if w is None:
                if d is not None:
                    from jaxlite._src.tree_util import tree_flatten_with_path
                    from jaxlite._src.tree_util import keystr
                    path = tree_flatten_with_path(tree_unflatten(out_tree, outs))[0][k][0]
                    raise ValueError(f"at vmap out_axes{keystr(path)}, got axis spec None but "
                                     f"output was batched on axis {d}")
                res.append(o)
                continue
            nd = len(aval_of_value(o).shape) + (1 if d is None else 0)
            if not -nd <= w < nd:
                raise ValueError(f"axis {w} is out of bounds for array of dimension {nd}")
            w = w % nd
            res.append(batching.broadcast_batch(o, size, w) if d is None else
                       batching.moveaxis(o, d, w))
        return tree_unflatten(out_tree, res)

    return batched
