"""``jax.custom_batching``: ``custom_vmap`` (a function with its own vmap rule) and
``sequential_vmap`` (batched by a loop over the batch)."""
from __future__ import annotations

import functools

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.interpreters.staging import (DebugInfo, closed_jaxpr_from_trace,
                                               trace_to_jaxpr)
from jaxlite._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["custom_vmap", "sequential_vmap"]


def _broadcast_prefix(prefix, tree, what):
    """The leaves of the boolean pytree ``prefix`` repeated over ``tree``'s leaves."""
    leaves = []
    p_leaves, p_tree = tree_flatten(prefix)
    if p_tree.num_leaves == 1 and not p_tree.children() and isinstance(p_leaves[0], bool):
        return p_leaves * tree_flatten(tree)[1].num_leaves
    try:
        subtrees = p_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(f"custom_vmap: {what} must be a bool or a pytree prefix of the "
                         f"outputs; {e}") from None
    for b, sub in zip(p_leaves, subtrees):
        leaves.extend([bool(b)] * tree_flatten(sub)[1].num_leaves)
    return leaves


class custom_vmap:
    """A function with a custom batching rule: ``f = custom_vmap(fun)``, then
    ``@f.def_vmap`` on ``rule(axis_size, in_batched, *args) -> (out, out_batched)``.
    ``in_batched`` mirrors the arguments with a bool per leaf; batched arguments have the
    batch dimension first, and the rule says which outputs are batched (a bool or a pytree
    prefix of the outputs). Outside ``vmap`` the function runs as written. Differentiating
    it differentiates the function as written (JAX supports only forward mode here; jaxlite
    also reverse mode)."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        """Set the batching rule (returns it, so it can be used as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        from jaxlite._src.prims.custom_batching import custom_vmap_call_p
        if kwargs:
            raise TypeError("custom_vmap functions take positional arguments only, got "
                            f"keywords {sorted(kwargs)}")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using def_vmap.")
        leaves, in_tree = tree_flatten(args)
        store = {}

        def flat(*xs):
            out = self.fun(*tree_unflatten(in_tree, list(xs)))
            out_leaves, store["out_tree"] = tree_flatten(out)
            return out_leaves
        avals = [aval_of_value(x) for x in leaves]
        di = DebugInfo.from_function(self.fun, [""] * len(avals), "custom_vmap")
        jaxpr, tconsts, consts = trace_to_jaxpr(flat, avals, di)
        closed = closed_jaxpr_from_trace(jaxpr, tconsts, consts)
        out_tree = store["out_tree"]
        n_consts = len(tconsts)
        rule = self.vmap_rule
        name = getattr(self.fun, "__name__", "custom_vmap")

        def flat_rule(axis_size, batched, *xs):
            if any(batched[:n_consts]):
                raise ValueError(
                    f"custom_vmap function {name} closes over a value that is batched by an "
                    "enclosing vmap; pass it as an argument instead.")
            # as JAX: a list with one entry (a pytree of bools) per argument
            in_b = list(tree_unflatten(in_tree, list(batched[n_consts:])))
            out, out_b = rule(axis_size, in_b, *tree_unflatten(in_tree, list(xs[n_consts:])))
            out_leaves, tree = tree_flatten(out)
            if tree != out_tree:
                raise TypeError(f"custom_vmap rule of {name} returned outputs of structure "
                                f"{tree}; the function returns {out_tree}.")
            return out_leaves, _broadcast_prefix(out_b, out, "out_batched")
        flat_rule.__name__ = getattr(rule, "__name__", "vmap_rule")
        outs = custom_vmap_call_p.bind(*tconsts, *leaves, call_jaxpr=closed, rule=flat_rule,
                                       name=name)
        return tree_unflatten(out_tree, outs)


def sequential_vmap(f):
    """``f`` as a ``custom_vmap`` function batched by a loop over the batch (``lax.map``):
    useful for functions whose batched form would be too large or is not supported."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_flatten(args)
        flags, _ = tree_flatten(in_batched)
        batched = [x for x, b in zip(leaves, flags) if b]

        def one(bs):
            it = iter(bs)
            return f(*tree_unflatten(tree, [next(it) if b else x
                                             for x, b in zip(leaves, flags)]))
        from jaxlite._src.lax.control_flow import map as lax_map
        return lax_map(one, batched), True
    return f
