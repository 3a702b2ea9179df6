"""The helpers of ``jax.api_util`` that libraries use to build transformations: the axis
specs of pmap/vmap-like APIs (``flatten_axes``), donation masks, static-argument partials
and ``safe_map``."""
from __future__ import annotations

from jaxlite._src import tree_util
from jaxlite._src.interpreters.wrapped_fun import WrappedFun

__all__ = ["flatten_axes", "donation_vector", "rebase_donate_argnums", "argnums_partial",
           "safe_map"]


def safe_map(f, *args):
    """``list(map(f, *args))``, raising when the argument lengths differ."""
    args = [list(a) for a in args]
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"safe_map() argument lengths differ: "
                             f"{[len(x) for x in args]}")
    return list(map(f, *args))


class _Leaf:
    def __repr__(self):
        return "pytree leaf"


def flatten_axes(name, treedef, axis_tree, *, kws=False, tupled_args=False):
    """The flat list (one per leaf of ``treedef``) of the axis spec ``axis_tree``, a tree
    prefix of ``treedef`` with ints and Nones at its leaves (``name`` is used in errors,
    e.g. ``"vmap in_axes"``)."""
    leaves, axis_def = tree_util.tree_flatten(axis_tree, is_leaf=lambda x: x is None)
    try:
        axes = tree_util.broadcast_flattened_prefix_with_treedef(leaves, axis_def, treedef)
    except ValueError:
        if kws:
            treedef = tree_util.treedef_children(treedef)[0]
            axis_tree = axis_tree[0]
        hint = ""
        if tupled_args:
            hint = (f" Note that {name} that are non-trivial pytrees should always be "
                    "wrapped in a tuple representing the argument list.")
        dummy = treedef.unflatten([_Leaf()] * treedef.num_leaves)
        errors = list(tree_util.prefix_errors(axis_tree, dummy))
        details = "\n  ".join(e(name).args[0] for e in errors)
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value; {hint}\n  Mismatch details ({len(errors)} found):\n  "
                         f"{details}") from None
    return list(axes)


def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True) -> tuple:
    """One bool per leaf of the ``(args, kwargs)`` structure ``in_tree``: whether it is
    donated (positional argument in ``donate_argnums``, keyword in ``donate_argnames``)."""
    res = []
    if kws:
        args_tree, kwargs_tree = tree_util.treedef_children(in_tree)
    else:
        args_tree, kwargs_tree = in_tree, None
    for i, arg in enumerate(args_tree.children()):
        res.extend((i in donate_argnums,) * arg.num_leaves)
    if kwargs_tree is not None:
        nd = kwargs_tree.node_data()
        keys = nd[1] if nd is not None else ()
        for key, val in zip(keys, kwargs_tree.children()):
            res.extend((key in donate_argnames,) * val.num_leaves)
    return tuple(res)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple:
    """``donate_argnums`` renumbered among the non-static arguments
    (``rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)``)."""
    static = sorted(set(static_argnums))
    out = []
    for d in sorted(set(donate_argnums)):
        if d in static:
            continue
        out.append(d - sum(1 for s in static if s < d))
    return tuple(out)


def argnums_partial(f, dyn_argnums, args, require_static_args_hashable=True):
    """(``f`` with the arguments not in ``dyn_argnums`` fixed, the dynamic arguments):
    ``f`` is a WrappedFun (``jax.extend.linear_util.wrap_init``)."""
    dyn = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    n = len(args)
    dyn = tuple(sorted(d % n if -n <= d < n else _out_of_range(d, n) for d in dyn))
    fixed = {}
    for i, a in enumerate(args):
        if i in dyn:
            continue
        if require_static_args_hashable:
            try:
                hash(a)
            except TypeError:
                raise ValueError(
                    "Non-hashable static arguments are not supported, as this can lead to "
                    f"unexpected cache-misses. Static argument (index {i}) of type "
                    f"{type(a)} for function {f.__name__} is non-hashable.") from None
        fixed[i] = a

    def partial_wrapper(call, *dyn_args, **kw):
        it = iter(dyn_args)
        full = [fixed[i] if i in fixed else next(it) for i in range(n)]
        return call(*full, **kw)
    if not isinstance(f, WrappedFun):
        raise TypeError(f"argnums_partial expects a WrappedFun (linear_util.wrap_init), got "
                        f"{type(f).__name__}")
    return f.wrap(partial_wrapper), tuple(args[i] for i in dyn)


def _out_of_range(d, n):
    raise ValueError(f"argnum {d} out of range for {n} arguments")
