"""User-defined derivatives: ``custom_jvp``, ``custom_vjp``, ``custom_gradient``,
``linear_call`` and ``lax.stop_gradient``.

Called on concrete values outside any transformation, a custom function simply runs. Under a
trace it binds ``custom_jvp_call``/``custom_vjp_call`` carrying the traced primal function
and the user's rules (wrapped to work on flat lists of arrays).
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.trace import ctx
from jaxlite._src.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "linear_call", "stop_gradient",
           "SymbolicZero", "zero_from_primal", "CustomVJPPrimal",
           "custom_vjp_primal_tree_values"]


class SymbolicZero:
    """A zero tangent or cotangent that was never materialised, as seen by custom rules
    defined with ``symbolic_zeros=True``; attributes (shape, dtype, ...) come from its
    ``aval``."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return "SymbolicZero"

    def __getattr__(self, name):
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(val):
        """The symbolic zero tangent of the primal value ``val``."""
        from jaxlite._src.interpreters.ad import tangent_aval
        return SymbolicZero(tangent_aval(aval_of_value(val)))


def zero_from_primal(val, symbolic_zeros=False):
    """Zero tangents shaped like the pytree ``val``: SymbolicZero leaves if
    ``symbolic_zeros``, else arrays of zeros."""
    from jaxlite._src.interpreters.ad import tangent_aval, zeros_like_aval

    def leaf(x):
        t = tangent_aval(aval_of_value(x))
        return SymbolicZero(t) if symbolic_zeros else zeros_like_aval(t)
    return tree_map(leaf, val)


class CustomVJPPrimal:
    """A primal argument of a ``custom_vjp`` forward rule defined with
    ``symbolic_zeros=True``: its ``value`` and whether it is ``perturbed``."""
    __slots__ = ("value", "perturbed")

    def __init__(self, value, perturbed):
        self.value, self.perturbed = value, perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed!r})"


def custom_vjp_primal_tree_values(tree):
    """The pytree ``tree`` of CustomVJPPrimal records with each replaced by its value."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree, is_leaf=lambda x: type(x) is CustomVJPPrimal)


def _to_internal_zero(t):
    from jaxlite._src.interpreters.ad import Zero
    return Zero(t.aval) if type(t) is SymbolicZero else t


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_UNKNOWN = object()


def _n_positional(fun):
    """The number of parameters of ``fun`` when all are plain positional ones, else None."""
    if isinstance(fun, functools.partial):
        return None
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    return len(params) if all(p.kind in _POSITIONAL for p in params) else None


def _resolve_args(cf, args, kwargs):
    # As JAX's resolve_kwargs: bind to the signature and apply its defaults even without
    # keywords, so a defaulted positional parameter named in nondiff_argnums is present.
    # A call passing every parameter by position needs no binding (the common, eager case).
    fun = cf.fun
    if not kwargs:
        n = cf._n_positional
        if n is _UNKNOWN:
            n = cf._n_positional = _n_positional(fun)
        if len(args) == n:
            return tuple(args)
    if isinstance(fun, functools.partial):
        fun = lambda *args, **kwargs: None  # a partial's signature is opaque
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        if isinstance(e, ValueError) and not kwargs:  # no signature to bind to
            return tuple(args)
        raise TypeError(f"The function {getattr(fun, '__name__', fun)} decorated with a "
                        f"custom derivative was called with arguments that do not match its "
                        f"signature: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError("keyword-only arguments are not supported by custom_jvp/custom_vjp "
                        "functions; make them positional.")
    return tuple(ba.args)


def _split(args, nondiff_argnums):
    nondiff = [args[i] for i in nondiff_argnums]
    dyn = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, dyn


def _merge(nondiff_argnums, nondiff, dyn):
    out, nd, dy = [], iter(nondiff), iter(dyn)
    for i in range(len(nondiff) + len(dyn)):
        out.append(next(nd) if i in nondiff_argnums else next(dy))
    return out


def _trace(fun, nondiff_argnums, nondiff, dyn_leaves, in_tree, traced_for):
    from jaxlite._src.interpreters.staging import (DebugInfo, closed_jaxpr_from_trace,
                                                   trace_to_jaxpr)
    store = {}

    def flat(*leaves):
        dyn = tree_unflatten(in_tree, list(leaves))
        out = fun(*_merge(nondiff_argnums, nondiff, dyn))
        out_leaves, store["tree"] = tree_flatten(out)
        return out_leaves

    avals = [aval_of_value(x) for x in dyn_leaves]
    di = DebugInfo.from_function(fun, [""] * len(avals), traced_for)
    jaxpr, tconsts, consts = trace_to_jaxpr(flat, avals, di)
    closed = closed_jaxpr_from_trace(jaxpr, tconsts, consts)
    return closed, tconsts, store["tree"]


def _float0_zeros(x):
    return np.zeros(np.shape(x), dtypes.float0)


class _CustomFunction:
    """Shared machinery of custom_jvp and custom_vjp: argument handling and tracing."""
    _n_positional = _UNKNOWN    # (its function's positional parameter count, on first call)

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.symbolic_zeros = False

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _stage(self, args, kind):
        """(nondiff args, dynamic args, their leaves and tree, the traced ClosedJaxpr, the
        closed-over tracers, the output tree) for a call under a trace."""
        nondiff, dyn = _split(args, self.nondiff_argnums)
        dyn_leaves, in_tree = tree_flatten(dyn)
        closed, tconsts, out_tree = _trace(self.fun, self.nondiff_argnums, nondiff,
                                           dyn_leaves, in_tree, kind)
        return nondiff, dyn, dyn_leaves, in_tree, closed, tconsts, out_tree


class custom_jvp(_CustomFunction):
    """A function with a custom forward-mode derivative rule (``jax.custom_jvp``).

    Define the rule with ``@f.defjvp`` (``rule(primals, tangents) -> (out, tangent_out)``)
    or ``f.defjvps(*per_argument_rules)``. Reverse mode works by transposing the rule.
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the JVP rule ``jvp(*nondiff_args, primals, tangents)``; returns ``jvp``."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """Set one rule per argument: ``jvps[i](tangent_i, primal_out, *primals)`` (None for
        arguments with zero derivative); the contributions are summed."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            out = self(*primals)
            contribs = [r(t, out, *primals) for r, t in zip(jvps, tangents) if r is not None]
            if not contribs:
                return out, tree_map(lambda o: np.zeros(np.shape(o), aval_of_value(o).dtype),
                                     out)
            total = contribs[0]
            for c in contribs[1:]:
                total = tree_map(lambda a, b: a + b, total, c)
            return out, total
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defjvp.")
        args = _resolve_args(self, args, kwargs)
        if ctx.trace is None:
            return self.fun(*args)
        from jaxlite._src.prims.custom import custom_jvp_call_p
        nondiff, dyn, dyn_leaves, in_tree, closed, tconsts, out_tree = self._stage(
            args, "custom_jvp")
        nc = len(tconsts)
        rule, nd_idx, name = self.jvp, self.nondiff_argnums, self.__name__
        symbolic = self.symbolic_zeros

        def jvp_flat(primals, tangents):
            from jaxlite._src.interpreters import ad
            p = tree_unflatten(in_tree, primals[nc:])
            if symbolic:
                ts = [SymbolicZero(t.aval) if type(t) is ad.Zero else t
                      for t in tangents[nc:]]
            else:
                ts = [(_float0_zeros(pr) if not dtypes.issubdtype(aval_of_value(pr).dtype,
                                                                   np.inexact)
                       else ad.instantiate(t)) for pr, t in zip(primals[nc:], tangents[nc:])]
            t = tree_unflatten(in_tree, ts)
            res = rule(*nondiff, tuple(p), tuple(t)) if nd_idx else rule(tuple(p), tuple(t))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError("Custom JVP rule must produce a pair (list or tuple of length "
                                f"two) representing primal and tangent outputs, but got {res}.")
            out_p, tree_p = tree_flatten(res[0])
            out_t, tree_t = tree_flatten(res[1], is_leaf=lambda x: type(x) is SymbolicZero)
            out_t = [_to_internal_zero(t) for t in out_t]
            if tree_p != out_tree or tree_t != out_tree:
                raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                                "equal container (pytree) structures and matching the output "
                                f"of the function, but got {tree_p} and {tree_t} for "
                                f"{out_tree}.")
            out_t = [ad.Zero(ad.tangent_aval(aval_of_value(o))) if type(t) is ad.Zero or
                     aval_of_value(t).dtype == dtypes.float0 else t
                     for o, t in zip(out_p, out_t)]
            return out_p, out_t

        jvp_flat.__name__ = getattr(rule, "__name__", "jvp")
        outs = custom_jvp_call_p.bind(*tconsts, *dyn_leaves, call_jaxpr=closed, jvp=jvp_flat,
                                      name=name, symbolic_zeros=self.symbolic_zeros)
        return tree_unflatten(out_tree, outs)


_PY_SCALARS = (bool, int, float, complex)
_ARRAY_RES = object()   # marks an array residual in custom_vjp's residual layout


class custom_vjp(_CustomFunction):
    """A function with a custom reverse-mode rule (``jax.custom_vjp``): ``f.defvjp(fwd,
    bwd)`` with ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, out_cotangent) ->
    tuple of argument cotangents`` (None for a zero cotangent)."""

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Set the forward and backward rules."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defvjp.")
        args = _resolve_args(self, args, kwargs)
        if ctx.trace is None:
            return self.fun(*args)
        from jaxlite._src.prims.custom import custom_vjp_call_p
        nondiff, dyn, dyn_leaves, in_tree, closed, tconsts, out_tree = self._stage(
            args, "custom_vjp")
        nc = len(tconsts)
        fwd, bwd, nd_idx = self.fwd, self.bwd, self.nondiff_argnums
        cell = {}
        # Staged into a jaxpr (jit, a loop body, ...), the closed-over tracers become the
        # call's leading operands; differentiating the jaxpr later with respect to one of them
        # has no rule (``bwd`` covers the explicit arguments only): JAX's CustomVJPException.
        # Bound directly under grad/jvp instead, ``fwd`` runs on the closed-over tracer itself.
        from jaxlite._src.interpreters.staging import StagingTrace
        staged = nc and isinstance(ctx.trace, StagingTrace)

        symbolic = self.symbolic_zeros
        # what bwd_flat needs of the arguments: their structure and shapes (not the values:
        # the rule lives on in the jaxpr and must not keep this trace's tracers alive)
        dyn_specs = []
        for a in dyn:
            a_leaves, a_tree = tree_flatten(a)
            dyn_specs.append((a_tree, [aval_of_value(al).shape for al in a_leaves]))
        dyn_structure = tree_flatten(tuple(dyn))[1]
        n_dyn = len(dyn)

        def fwd_flat(primals, perturbed=None):
            from jaxlite._src.prims.operands import asarray_value
            if staged and perturbed is not None and any(perturbed[:nc]):
                from jaxlite._src.core.errors import CustomVJPException
                raise CustomVJPException()
            leaves = primals[nc:]
            if symbolic:
                pert = perturbed[nc:] if perturbed is not None else [True] * len(leaves)
                leaves = [CustomVJPPrimal(v, bool(p)) for v, p in zip(leaves, pert)]
            dyn_args = tree_unflatten(in_tree, leaves)
            res = fwd(*_merge(nd_idx, nondiff, list(dyn_args)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError("Custom VJP fwd rule must produce a pair (list or tuple of "
                                "length two) representing primal outputs and residuals "
                                "(values stored from the forward pass for use on the "
                                f"backward pass), got {res}.")
            out, residuals = res
            out_leaves, tree = tree_flatten(out)
            if tree != out_tree:
                raise TypeError("Custom VJP fwd rule must produce primal outputs with the "
                                f"same container (pytree) structure as the primal function: "
                                f"got {tree}, expected {out_tree}.")
            res_leaves, cell["res_tree"] = tree_flatten(residuals)
            # Python scalars among the residuals (flags such as "perturbed") reach bwd as
            # the Python objects they are, as in JAX; arrays become residual operands
            cell["res_static"] = [r if type(r) in _PY_SCALARS else _ARRAY_RES
                                  for r in res_leaves]
            return out_leaves, [asarray_value(r) for r in res_leaves
                                if type(r) not in _PY_SCALARS]

        def bwd_flat(res_leaves, cts):
            from jaxlite._src.interpreters.ad import Zero
            cts = [SymbolicZero(c.aval) if type(c) is Zero else c for c in cts]
            it = iter(res_leaves)
            res_leaves = [next(it) if r is _ARRAY_RES else r for r in cell["res_static"]]
            residuals = tree_unflatten(cell["res_tree"], res_leaves)
            ct = tree_unflatten(out_tree, cts)
            got = bwd(*nondiff, residuals, ct) if nd_idx else bwd(residuals, ct)
            if not isinstance(got, (tuple, list)) or len(got) != n_dyn:
                raise TypeError(
                    "Custom VJP bwd rule must produce an output with the same container "
                    "(pytree) structure as the args tuple of the primal function, and in "
                    "particular must produce a tuple of length equal to the number of "
                    "arguments to the primal function, but got bwd output structure "
                    f"{tree_flatten(got)[1]} for primal input structure "
                    f"{dyn_structure}.")
            flat = []
            for g, (a_tree, a_shapes) in zip(got, dyn_specs):
                if g is None:
                    flat.extend([None] * len(a_shapes))
                    continue
                # as JAX: the cotangent tree's leaves (None: no cotangent) each stand for
                # the argument's subtree at that place (a None argument subtree takes none)
                dummy = tree_unflatten(a_tree, [object()] * len(a_shapes))
                part = []

                def append(x, d, part=part):
                    n = len(tree_flatten(d)[0])
                    part.extend([None if x is None or type(x) is SymbolicZero else x] * n)
                    return x
                try:
                    tree_map(append, g, dummy, is_leaf=lambda x: x is None)
                except (ValueError, TypeError):
                    raise TypeError(
                        "Custom VJP bwd rule must produce an output with the same container "
                        "(pytree) structure as the args tuple of the primal function; got "
                        f"{tree_flatten(g)[1]} for an argument of structure {a_tree}."
                    ) from None
                for gl, shape in zip(part, a_shapes):
                    if gl is not None and np.shape(gl) != shape:
                        raise ValueError(
                            f"Custom VJP bwd rule must produce an output with shapes/dtypes "
                            f"as expected by the primal function: got a cotangent of shape "
                            f"{np.shape(gl)} for an input of shape {shape}.")
                    flat.append(gl)
            return [None] * nc + flat

        fwd_flat.__name__ = getattr(fwd, "__name__", "fwd")
        bwd_flat.__name__ = getattr(bwd, "__name__", "bwd")
        outs = custom_vjp_call_p.bind(*tconsts, *dyn_leaves, call_jaxpr=closed, fwd=fwd_flat,
                                      bwd=bwd_flat, name=self.__name__,
                                      symbolic_zeros=self.symbolic_zeros)
        return tree_unflatten(out_tree, outs)


# ----------------------------------------------------------------------------- custom_gradient

class _TracedVJP:
    """The residuals of a ``custom_gradient`` function: the values its VJP function closed
    over (children of this pytree node, so custom_vjp saves them as residuals) and, as static
    data, that function traced to a jaxpr plus where its ``None`` cotangents go."""
    __slots__ = ("values", "closed", "ct_tree", "none_mask")

    def __init__(self, values, closed, ct_tree, none_mask):
        self.values, self.closed = list(values), closed
        self.ct_tree, self.none_mask = ct_tree, none_mask


def _flatten_traced_vjp(r):
    return r.values, (r.closed, r.ct_tree, r.none_mask)


def _unflatten_traced_vjp(aux, values):
    return _TracedVJP(values, *aux)


def _register_traced_vjp():
    from jaxlite._src.tree_util import register_pytree_node
    register_pytree_node(_TracedVJP, _flatten_traced_vjp, _unflatten_traced_vjp)


_register_traced_vjp()


def _value_and_rule(fun, args, kwargs):
    res = fun(*args, **kwargs)
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(
            f"A function decorated with custom_gradient must return a pair (output, vjp_fn) "
            f"where vjp_fn maps an output cotangent to a tuple of argument cotangents; "
            f"{getattr(fun, '__name__', fun)} returned {type(res).__name__} {res!r}.")
    return res


def _trace_vjp_rule(rule, ans):
    """Trace the user's VJP function ``rule`` on abstract cotangents of ``ans``: the values it
    closes over that belong to an enclosing trace become the residuals."""
    from jaxlite._src.interpreters.ad import tangent_aval
    from jaxlite._src.interpreters.staging import (DebugInfo, closed_jaxpr_from_trace,
                                                   trace_to_jaxpr)
    if not callable(rule):
        raise TypeError(
            "A function decorated with custom_gradient must return a pair (output, vjp_fn) "
            f"whose second element is callable; got {type(rule).__name__} {rule!r}.")
    _, out_tree = tree_flatten(ans)
    ct_avals = [tangent_aval(aval_of_value(x)) for x in tree_flatten(ans)[0]]
    store = {}

    def flat(*ct_leaves):
        got = rule(tree_unflatten(out_tree, list(ct_leaves)))
        if not isinstance(got, (tuple, list)):
            got = (got,)      # a bare cotangent stands for a 1-tuple
        leaves, store["tree"] = tree_flatten(tuple(got), is_leaf=lambda x: x is None)
        store["none"] = tuple(x is None for x in leaves)
        return [x for x in leaves if x is not None]

    di = DebugInfo.from_function(rule, ["g"] * len(ct_avals), "custom_gradient fwd")
    jaxpr, tconsts, consts = trace_to_jaxpr(flat, ct_avals, di)
    closed = closed_jaxpr_from_trace(jaxpr, tconsts, consts)
    return _TracedVJP(tconsts, closed, store["tree"], store["none"])


def custom_gradient(fun):
    """Define a function's reverse-mode derivative by returning it alongside the value
    (``jax.custom_gradient``, after TensorFlow's ``tf.custom_gradient``).

    ``fun(*args)`` must return ``(value, vjp_fn)`` where ``vjp_fn(cotangent_of_value)``
    returns a tuple with one cotangent per positional argument (``None`` for a zero one; a
    bare value is accepted when there is a single argument). ``vjp_fn`` may close over
    intermediate values of the forward computation to share work with it, but it is traced
    abstractly: Python control flow on those values or on the cotangent raises a
    concretization error. The result is a ``custom_vjp`` function: it works under ``grad``,
    ``vjp``, ``jit`` and ``vmap`` and nests; forward mode (``jvp``, ``jacfwd``) raises
    ``TypeError`` as in JAX.

    >>> @custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: (g * x,)
    >>> f(3.0), grad(f)(3.0)     # doctest: +SKIP
    (9.0, 3.0)

    Unlike JAX, keyword arguments are accepted when they name parameters of ``fun``
    (they are bound to their positions).
    """
    def wrapped_fun(*args, **kwargs):
        return _value_and_rule(fun, args, kwargs)[0]

    try:
        wrapped_fun.__signature__ = inspect.signature(fun)
    except (TypeError, ValueError):
        pass

    def fwd(*args):
        ans, rule = _value_and_rule(fun, args, {})
        return ans, _trace_vjp_rule(rule, ans)

    def bwd(res, ct):
        from jaxlite._src.interpreters.eval import eval_jaxpr
        closed = res.closed
        outs = iter(eval_jaxpr(closed.jaxpr, closed.consts, *res.values,
                               *tree_flatten(ct)[0]))
        leaves = [None if is_none else next(outs) for is_none in res.none_mask]
        return tree_unflatten(res.ct_tree, leaves)

    f = custom_vjp(wrapped_fun)
    f.defvjp(fwd, bwd)
    f.__doc__ = fun.__doc__
    return f


# ----------------------------------------------------------------------------- linear_call

def linear_call(fun, fun_transpose, residual_args, linear_args):
    """Call a linear function with a custom implementation of its transpose
    (``jax.custom_derivatives.linear_call``).

    ``fun(residual_args, linear_args)`` must be linear in ``linear_args`` (it may be
    anything in ``residual_args``); ``fun_transpose(residual_args, out_cotangent)`` is its
    transpose with respect to ``linear_args``: it returns a pytree with the structure,
    shapes and dtypes of ``linear_args``. Both arguments are passed as pytrees, not
    unpacked. The result is ``fun(residual_args, linear_args)``.

    Transposition (``linear_transpose``, the backward pass of ``grad``/``vjp``) calls
    ``fun_transpose`` instead of transposing ``fun``; the transpose of that call is again a
    ``linear_call``, of ``fun`` with ``fun_transpose`` as its transpose, so transposing
    twice gives back the original. Forward mode pushes tangents of ``linear_args`` through
    ``fun``. It works under ``jit`` and prints in jaxprs as ``linear_call[callee=...
    num_callee_consts=... num_res=... transpose_thunk=...]`` as in JAX.

    Beyond JAX 0.10.2 (which raises there): ``vmap`` works (``fun`` and ``fun_transpose``
    are batched), and a nonzero tangent of ``residual_args`` is differentiated through
    ``fun`` with ordinary forward mode.

    >>> def f(r, x): return x / r
    >>> def t(r, ct): return ct / r
    >>> def div_add(x, denom): return x + linear_call(f, t, denom, x)
    >>> div_add(9., 3.)                      # doctest: +SKIP
    Array(12., dtype=float32, weak_type=True)
    """
    res_leaves, res_tree = tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_flatten(linear_args)
    outs, out_tree = _bind_linear_call(fun, fun_transpose, res_tree, res_leaves, lin_tree,
                                       lin_leaves)
    return tree_unflatten(out_tree, outs)


def _bind_linear_call(fun, fun_t, res_tree, res_leaves, lin_tree, lin_leaves):
    """Trace ``fun`` on (residuals, linear inputs) and bind ``linear_call``; returns (flat
    outputs, output tree). The transpose thunk does the same with the roles swapped."""
    from jaxlite._src.interpreters.staging import (DebugInfo, closed_jaxpr_from_trace,
                                                   trace_to_jaxpr)
    from jaxlite._src.prims.operands import asarray_value
    from jaxlite._src.prims.linear_call import linear_call_p
    for x in list(res_leaves) + list(lin_leaves):
        _check_jax_value(x)
    n_res = len(res_leaves)
    avals = [aval_of_value(x) for x in list(res_leaves) + list(lin_leaves)]
    lin_avals = avals[n_res:]
    store = {}

    def flat(*leaves):
        out = fun(tree_unflatten(res_tree, list(leaves[:n_res])),
                  tree_unflatten(lin_tree, list(leaves[n_res:])))
        out_leaves, store["tree"] = tree_flatten(out)
        return [asarray_value(o) for o in out_leaves]

    di = DebugInfo.from_function(fun, [""] * len(avals), "linear_call")
    jaxpr, tconsts, consts = trace_to_jaxpr(flat, avals, di)
    callee = closed_jaxpr_from_trace(jaxpr, tconsts, consts)
    out_tree = store["tree"]

    def transpose_thunk(res, cts):
        lin_cts, got_tree = _bind_linear_call(fun_t, fun, res_tree, res, out_tree, cts)
        name = getattr(fun_t, "__name__", fun_t)
        if got_tree != lin_tree:
            raise TypeError(
                f"The transpose function {name} given to linear_call must return a pytree "
                f"with the structure of linear_args, {lin_tree}; it returned {got_tree}.")
        for i, (c, a) in enumerate(zip(lin_cts, lin_avals)):
            ca = aval_of_value(c)
            if ca.shape != a.shape:
                raise ValueError(
                    f"The transpose function {name} given to linear_call returned a "
                    f"cotangent of shape {ca.shape} for linear argument {i} of shape "
                    f"{a.shape}; it must match linear_args in shape and dtype.")
        return lin_cts

    outs = linear_call_p.bind(*tconsts, *res_leaves, *lin_leaves, callee=callee,
                              num_callee_consts=len(tconsts), num_res=n_res,
                              transpose_thunk=transpose_thunk)
    return outs, out_tree


def _check_jax_value(x):
    try:
        aval_of_value(x)
    except TypeError:
        raise TypeError(f"Error interpreting argument to linear_call as a JAX value: "
                        f"{x!r} of type {type(x).__name__} is not an array.") from None


def stop_gradient(x):
    """``x`` with a zero derivative: gradients do not flow through it (applied to every
    inexact leaf of a pytree)."""
    from jaxlite._src.prims.operands import asarray_value
    from jaxlite._src.prims.custom import stop_gradient_p

    def leaf(v):
        v = asarray_value(v)
        if not dtypes.issubdtype(v.dtype, np.inexact):
            return v
        return stop_gradient_p.bind(v)
    return tree_map(leaf, x)
