"""``jax.checkpoint`` / ``jax.remat``, ``checkpoint_name`` and ``jax.checkpoint_policies``."""
from __future__ import annotations

import functools
import types
import weakref

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.tree_util import tree_flatten, tree_unflatten
from jaxlite._src.api.wrapping import wraps

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies"]


def _static_indices(static_argnums, nargs):
    """``static_argnums`` checked as JAX checks it at call time, as non-negative indices."""
    if type(static_argnums) is int:
        static_argnums = (static_argnums,)
    elif not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must "
                        f"be an int, tuple of ints or, bool, but got value {static_argnums}")
    if not all(-nargs <= d < nargs for d in static_argnums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can "
                         "only take integer values greater than or equal to `-len(args)` and "
                         f"less than `len(args)`, but got {static_argnums}, while `len(args)` "
                         f"= {nargs}")
    return frozenset(d % nargs for d in static_argnums)


def _trace(fun, args, kwargs, static):
    """(ClosedJaxpr, closed-over tracers, dynamic leaves, out_tree) of ``fun`` on ``args``
    with the arguments at ``static`` fixed and the others abstract.

    As JAX's ``checkpoint``, the jaxpr is cached per function, static values, input
    structure, avals and tracing configuration; only jaxprs that closed over no tracer are
    cached, and only when the static values hash."""
    from jaxlite._src.config import config
    from jaxlite._src.interpreters.staging import (DebugInfo, closed_jaxpr_from_trace,
                                                   trace_to_jaxpr)
    n = len(args)
    dyn_idx = [i for i in range(n) if i not in static]
    leaves, in_tree = tree_flatten(([args[i] for i in dyn_idx], kwargs))
    avals = [aval_of_value(x) for x in leaves]
    key = None
    try:
        key = (in_tree, tuple(avals), tuple((i, type(args[i]), args[i]) for i in sorted(static)),
               config.trace_context())
        hit = _TRACE_CACHE.get(fun, {}).get(key)
    except (TypeError, ValueError):   # unhashable static values, or no weak reference
        key, hit = None, None
    if hit is not None:
        return hit[0], [], leaves, hit[1]
    store = {}

    def flat(*xs):
        dyn, kw = tree_unflatten(in_tree, list(xs))
        full = list(args)
        for i, v in zip(dyn_idx, dyn):
            full[i] = v
        out_leaves, store["tree"] = tree_flatten(fun(*full, **kw))
        return out_leaves

    di = DebugInfo.from_function(fun, [""] * len(leaves), "checkpoint / remat")
    jaxpr, tconsts, consts = trace_to_jaxpr(flat, avals, di)
    closed = closed_jaxpr_from_trace(jaxpr, tconsts, consts)
    if key is not None and not tconsts:
        try:
            _TRACE_CACHE.setdefault(fun, {})[key] = (closed, store["tree"])
        except TypeError:
            pass
    return closed, list(tconsts), leaves, store["tree"]


# user function -> {(in_tree, avals, static values, config): (ClosedJaxpr, out_tree)}
_TRACE_CACHE = weakref.WeakKeyDictionary()


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """Make ``fun`` recompute its intermediate values on the backward pass instead of
    storing them (``policy(prim, *avals, **params) -> bool`` says which values may be saved;
    see ``checkpoint_policies``). Values and derivatives are unchanged.

    As in JAX, every call traces ``fun`` (its arguments, but those in ``static_argnums``,
    are tracers even outside any transformation: Python control flow on them raises) and
    binds the ``remat2`` primitive."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)

    @wraps(fun)
    def wrapped(*args, **kwargs):
        from jaxlite._src.prims.remat import remat_p
        static = _static_indices(static_argnums, len(args))
        closed, tconsts, leaves, out_tree = _trace(fun, args, kwargs, static)
        outs = remat_p.bind(*tconsts, *leaves, jaxpr=closed, prevent_cse=prevent_cse,
                            differentiated=False, policy=policy)
        return tree_unflatten(out_tree, outs)

    return wrapped


remat = checkpoint


def checkpoint_name(x, name):
    """``x`` tagged with ``name``, so ``save_only_these_names(name)`` may keep it."""
    from jaxlite._src.prims.operands import asarray_value
    from jaxlite._src.prims.remat import name_p
    from jaxlite._src.tree_util import tree_map
    return tree_map(lambda v: name_p.bind(asarray_value(v), name=name), x)


# ----------------------------------------------------------------------------- policies

def _is_dot(prim):
    return prim.name == "dot_general"


def everything_saveable(*_, **__):
    """Save every intermediate value (no recomputation)."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing: recompute everything on the backward pass."""
    return False


class DotsSaveable:
    """Save the results of matrix multiplications (only those without batch dimensions
    when ``only_if_no_batch_dims``)."""

    def __init__(self, only_if_no_batch_dims=False):
        self.only_if_no_batch_dims = only_if_no_batch_dims

    def __call__(self, prim, *_, **params):
        if not _is_dot(prim):
            return False
        if not self.only_if_no_batch_dims:
            return True
        (_, _), (lb, rb) = params["dimension_numbers"]
        return not lb and not rb

    def __repr__(self):
        return f"DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})"

    def __eq__(self, other):
        return type(other) is DotsSaveable and \
            other.only_if_no_batch_dims == self.only_if_no_batch_dims

    def __hash__(self):
        return hash((DotsSaveable, self.only_if_no_batch_dims))


dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


class SaveOnlyTheseNames:
    """A policy saving only values tagged by ``checkpoint_name`` with one of the names."""

    def __init__(self, saveable_names):
        self.saveable_names = frozenset(saveable_names)

    def __call__(self, prim, *_, **params):
        return prim.name == "name" and params["name"] in self.saveable_names

    def __repr__(self):
        return f"SaveOnlyTheseNames(saveable_names={self.saveable_names!r})"

    def __eq__(self, other):
        return type(other) is SaveOnlyTheseNames and other.saveable_names == \
            self.saveable_names

    def __hash__(self):
        return hash((SaveOnlyTheseNames, self.saveable_names))


def save_only_these_names(*names):
    """A policy saving only values tagged by ``checkpoint_name`` with one of ``names``."""
    return SaveOnlyTheseNames(names)


class SaveAnyNamesButThese:
    """A policy saving values tagged by ``checkpoint_name`` except those named in
    ``names``."""

    def __init__(self, names):
        self.names = frozenset(names)

    def __call__(self, prim, *_, **params):
        return prim.name == "name" and params["name"] not in self.names

    def __repr__(self):
        return f"SaveAnyNamesButThese(names={self.names!r})"

    def __eq__(self, other):
        return type(other) is SaveAnyNamesButThese and other.names == self.names

    def __hash__(self):
        return hash((SaveAnyNamesButThese, self.names))


def save_any_names_but_these(*names):
    """A policy saving every named value except those in ``names``."""
    return SaveAnyNamesButThese(names)


def save_anything_except_these_names(*names_not_to_save):
    """Save any values (not just named ones) excluding the names given; as in JAX, this
    currently saves everything."""
    return lambda *_, **__: True


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Like ``dots_with_no_batch_dims_saveable`` but offloading the saved values from
    memory space ``offload_src`` to ``offload_dst``. jaxlite's devices have one memory
    space, so offloaded values are simply saved."""
    return DotsSaveable(True)


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src, offload_dst):
    """Like ``save_only_these_names`` for both name lists (offloading is saving in
    jaxlite's single memory space); the two lists must not intersect, as in JAX."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} "
            f"and the intersection={both}")
    return SaveOnlyTheseNames(saved | offloaded)


def save_from_both_policies(policy_1, policy_2):
    """A policy saving what either policy saves."""
    def policy(prim, *avals, **params):
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    save_from_both_policies=save_from_both_policies)
