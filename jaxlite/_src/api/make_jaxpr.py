"""``make_jaxpr`` and ``eval_shape``: trace a function without running it."""
from __future__ import annotations


from jaxlite._src.config import config
from jaxlite._src import tree_util
from jaxlite._src.api.hi_args import eval_shape_with_hi_leaves, has_hi_leaves
from jaxlite._src.core.avals import ShapeDtypeStruct, abstract_arg, aval_of_value
from jaxlite._src.sharding.types import typed_aval
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from jaxlite._src.traceback_util import api_boundary
from jaxlite._src.api.wrapping import wraps

__all__ = ["make_jaxpr", "eval_shape", "out_info"]


def _trace_flat(fun, args, kwargs, static_argnums, traced_for):
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else \
        tuple(static_argnums)
    n = len(args)
    static_argnums = tuple(i % n if n else i for i in static_argnums)
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_argnums)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    avals = [typed_aval(x, abstract_arg(x) or aval_of_value(x)) for x in leaves]
    store = []

    def flat_fun(*tracers):
        dargs, dkwargs = tree_util.tree_unflatten(in_tree, list(tracers))
        it = iter(dargs)
        full = [args[i] if i in static_argnums else next(it) for i in range(n)]
        out = fun(*full, **dkwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        store.append(out_tree)
        return out_leaves

    if traced_for == "make_jaxpr" and config._flags["jax_no_tracing"].value:
        raise RuntimeError(f"re-tracing function {fun!r} for `jit`, but 'no_tracing' is set")
    di = DebugInfo.from_function(fun, None, traced_for)
    jaxpr, tconsts, consts = trace_to_jaxpr(flat_fun, avals, di,
                                            originals=traced_for == "make_jaxpr")
    # as JAX: tracers of enclosing traces the function closes over are constants of the
    # ClosedJaxpr (its consts then hold those tracers)
    closed = ClosedJaxpr(jaxpr, list(tconsts) + list(consts))
    return closed, store[0]


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False,
               abstracted_axes=None):
    """Return a function that traces ``fun`` and gives its ClosedJaxpr (printed in JAX's
    text format). With ``return_shape=True`` it also returns the output's pytree of
    ShapeDtypeStructs."""
    @wraps(fun)
    @api_boundary
    def make_jaxpr_f(*args, **kwargs):
        closed, out_tree = _trace_flat(fun, args, kwargs, static_argnums, "make_jaxpr")
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in closed.out_avals]
            return closed, tree_util.tree_unflatten(out_tree, shapes)
        return closed
    make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
    return make_jaxpr_f


def eval_shape(fun, *args, **kwargs):
    """The shape and dtype of ``fun(*args, **kwargs)`` as a pytree of ShapeDtypeStructs,
    computed by tracing only (no FLOPs are spent). Arguments may be ShapeDtypeStructs, and
    values of hijax types (traced as their arrays; a hijax result is given as its type)."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    if has_hi_leaves(leaves):
        return eval_shape_with_hi_leaves(eval_shape, lambda a, k: fun(*a, **k), leaves,
                                         in_tree)
    closed, out_tree = _trace_flat(fun, args, kwargs, (), "eval_shape")
    return out_info(closed, out_tree)


def out_info(closed, out_tree):
    """The results of ``closed`` (unflattened by ``out_tree``) as ShapeDtypeStructs (eval_shape,
    and the stages' ``out_info``); a result typed over Explicit mesh axes keeps that sharding,
    on the abstract mesh."""
    return tree_util.tree_unflatten(out_tree, [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=a.sharding)
        for a in closed.out_avals])
