"""A linear solve with implicit derivatives (the rules of JAX's ``lax.custom_linear_solve``).

``custom_linear_solve(matvec, b, solve, transpose_solve, symmetric)`` returns
``solve(matvec, b)``, but differentiates it as the solution of ``A x = b`` rather than through
the solver's iterations: with ``A`` given by ``matvec`` (linear in its vector argument, and
possibly closing over differentiable values ``c``),

- forward:  ``dx = A^{-1} (db - (dA) x)``, computed by the same solve;
- reverse:  the solve is linear in ``b`` and its transpose is ``A^{-T}``, computed by
  ``transpose_solve`` with the transposed ``matvec`` (``solve`` itself when
  ``symmetric``);
- vmap: the solve, its transpose and ``matvec`` are batched as jaxprs.

The iterative solvers of ``jax.scipy.sparse.linalg`` (cg, gmres, bicgstab) are written with
``lax.while_loop``, which reverse mode cannot go through; this primitive is what makes them
differentiable in both modes, at any order, under ``jit`` and ``vmap``.

It is one primitive, ``custom_linear_solve``, whose operands are
``[*solve_consts, *transpose_consts, *matvec_consts, *b]``: the first two groups are values
the solvers close over (treated as constants: no derivative flows to them, as in JAX), the
third the values ``matvec`` closes over (differentiated through ``matvec``), and the last
the right-hand side.
"""
from __future__ import annotations

from jaxlite._src.api.ad import linear_transpose
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.interpreters import ad
from jaxlite._src.interpreters.eval import eval_jaxpr
from jaxlite._src.interpreters.staging import trace_to_jaxpr
from jaxlite._src.tree_util import tree_flatten, tree_unflatten
from jaxlite._src.core.avals import aval_of_value

__all__ = ["custom_linear_solve"]


# ----------------------------------------------------------------------------- tracing
def _open(jaxpr, tconsts, cvals):
    """A ClosedJaxpr whose constants (closed-over tracers first, then arrays) are leading
    inputs, and the list of those constants."""
    consts = list(tconsts) + list(cvals)
    opened = jaxpr.replace(constvars=[], invars=list(jaxpr.constvars) + list(jaxpr.invars))
    return ClosedJaxpr(opened, []), consts


def _trace(fun, avals):
    jaxpr, tconsts, cvals = trace_to_jaxpr(fun, avals)
    return _open(jaxpr, tconsts, cvals)


def _run(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _flat_vec_fun(fun, tree):
    """``fun`` on a pytree of ``tree``'s structure, as a function of flat leaves."""
    def flat(*leaves):
        out = fun(tree_unflatten(tree, list(leaves)))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"custom_linear_solve: the linear operator must return a value of "
                            f"the same structure as its argument, got {out_tree} for {tree}.")
        for o, v in zip(out_leaves, leaves):
            ao, av = aval_of_value(o), aval_of_value(v)
            if ao.shape != av.shape or ao.dtype != av.dtype:
                raise TypeError(
                    f"the linear operator must return arrays of the shape and dtype of its "
                    f"argument: it maps {av.str_short()} to {ao.str_short()}. Give b (and x0) "
                    f"the operator's dtype, e.g. b.astype({ao.dtype.name}).")
        return out_leaves
    return flat


# ----------------------------------------------------------------------------- primitive
class CustomLinearSolve(Primitive):
    """``x = solve(A, b)`` with the derivatives of ``A^{-1} b`` (see the module docstring).

    Params: ``solve_jaxpr`` ([*solve_consts, *matvec_consts, *b] -> x),
    ``transpose_jaxpr`` ([*transpose_consts, *matvec_consts, *ct] -> A^{-T} ct),
    ``matvec_jaxpr`` / ``tmatvec_jaxpr`` ([*matvec_consts, *v] -> A v / A^T v) and the
    group sizes ``n_solve``, ``n_transpose``, ``n_matvec``."""
    name = "custom_linear_solve"
    multiple_results = True

    @staticmethod
    def _split(args, n_solve, n_transpose, n_matvec):
        i, j, k = n_solve, n_solve + n_transpose, n_solve + n_transpose + n_matvec
        return args[:i], args[i:j], args[j:k], args[k:]

    def impl(self, *args, solve_jaxpr, n_solve, n_transpose, n_matvec, **_):
        from jaxlite._src.prims.call import jit_p
        s, _, c, b = self._split(args, n_solve, n_transpose, n_matvec)
        return jit_p.compiled(solve_jaxpr, "linear_solve")(*s, *c, *b)

    def abstract_eval(self, *avals, solve_jaxpr, **_):
        return solve_jaxpr.out_avals

    def eager_out_avals(self, vals, params):
        return params["solve_jaxpr"].out_avals

    def eager(self, args, params):
        import numpy as np
        from jaxlite._src.core.primitive import eager_operand
        from jaxlite._src.runtime.array import ArrayImpl
        vals = [eager_operand(a)[0] if type(a) is not ArrayImpl else a._value for a in args]
        outs = self.impl(*vals, **params)
        return [ArrayImpl(np.asarray(o, a.dtype), a.weak_type)
                for o, a in zip(outs, params["solve_jaxpr"].out_avals)]

    def lower_py(self, ctx, ins, solve_jaxpr, n_solve, n_transpose, n_matvec, **_):
        fn = ctx.compile_sub(solve_jaxpr, "linear_solve")
        s, _, c, b = self._split(list(ins), n_solve, n_transpose, n_matvec)
        return f"{fn}({', '.join(s + c + b)})"

    def pp_params(self, params):
        return [("const_lengths", (params["n_solve"], params["n_transpose"],
                                   params["n_matvec"])),
                ("solve_jaxpr", params["solve_jaxpr"])]

    def jvp(self, primals, tangents, **params):
        n_s, n_t, n_c = params["n_solve"], params["n_transpose"], params["n_matvec"]
        s, t, c, b = self._split(list(primals), n_s, n_t, n_c)
        _, _, dc, db = self._split(list(tangents), n_s, n_t, n_c)
        x = self.bind(*primals, **params)
        rhs = [ad.instantiate(d) if type(d) is ad.Zero else d for d in db]
        live = [i for i, d in enumerate(dc) if type(d) is not ad.Zero
                and ad.tangent_aval(aval_of_value(c[i])).dtype.kind != "V"]
        if live:
            mv = params["matvec_jaxpr"]

            def mv_of_live(*cl):
                full = list(c)
                for i, v in zip(live, cl):
                    full[i] = v
                return _run(mv, *full, *x)
            _, dax = ad.jvp_flat(mv_of_live, [c[i] for i in live], [dc[i] for i in live])
            from jaxlite._src.lax import elementwise as lx
            rhs = [r if type(d) is ad.Zero else lx.sub(r, d) for r, d in zip(rhs, dax)]
        elif all(type(d) is ad.Zero for d in db):
            return x, [ad.Zero(ad.tangent_aval(aval_of_value(o))) for o in x]
        dx = self.bind(*s, *t, *c, *rhs, **params)
        return x, dx

    def transpose(self, cts, *args, **params):
        n_s, n_t, n_c = params["n_solve"], params["n_transpose"], params["n_matvec"]
        s, t, c, b = self._split(list(args), n_s, n_t, n_c)
        if any(type(a) is ad.UndefinedPrimal for a in list(s) + list(t) + list(c)):
            raise ValueError("custom_linear_solve is linear only in its right-hand side b; "
                             "it cannot be transposed with respect to the operator.")
        if params["transpose_jaxpr"] is None:
            raise TypeError("transpose_solve required for backwards mode automatic "
                            "differentiation of custom_linear_solve")
        cts = [ad.instantiate(ct) for ct in cts]
        swapped = dict(params, solve_jaxpr=params["transpose_jaxpr"],
                       transpose_jaxpr=params["solve_jaxpr"],
                       matvec_jaxpr=params["tmatvec_jaxpr"],
                       tmatvec_jaxpr=params["matvec_jaxpr"], n_solve=n_t, n_transpose=n_s)
        out = self.bind(*t, *s, *c, *cts, **swapped)
        return [None] * (n_s + n_t + n_c) + [o if type(a) is ad.UndefinedPrimal else None
                                             for o, a in zip(out, b)]

    def batch(self, size, args, dims, **params):
        from jaxlite._src.interpreters.batching import (batch_jaxpr, bdim_at_front,
                                                        broadcast_batch)
        n_s, n_t, n_c = params["n_solve"], params["n_transpose"], params["n_matvec"]
        args = [a if d is None else bdim_at_front(a, d, size) for a, d in zip(args, dims)]
        dims = [None if d is None else 0 for d in dims]
        k = n_s + n_t + n_c
        # the right-hand side (and so x) is batched whenever anything is
        args = args[:k] + [a if d is not None else broadcast_batch(a, size, 0)
                           for a, d in zip(args[k:], dims[k:])]
        dims = dims[:k] + [0] * (len(args) - k)
        ds, dt, dc, db = self._split(dims, n_s, n_t, n_c)
        new = dict(params,
                   solve_jaxpr=batch_jaxpr(params["solve_jaxpr"], size, ds + dc + db),
                   transpose_jaxpr=None if params["transpose_jaxpr"] is None else
                   batch_jaxpr(params["transpose_jaxpr"], size, dt + dc + db),
                   matvec_jaxpr=batch_jaxpr(params["matvec_jaxpr"], size, dc + db),
                   tmatvec_jaxpr=batch_jaxpr(params["tmatvec_jaxpr"], size, dc + db))
        outs = self.bind(*args, **new)
        return outs, [0] * len(outs)


custom_linear_solve_p = CustomLinearSolve()


# ----------------------------------------------------------------------------- API
def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False):
    """Solve ``matvec(x) = b`` with ``solve(matvec, b)``, differentiated implicitly.

    Args:
      matvec: the linear operator, a function of a pytree shaped like ``b``.
      b: the right-hand side (a pytree of arrays).
      solve: ``solve(matvec, b) -> x`` (any algorithm; it is never differentiated).
      transpose_solve: ``transpose_solve(vecmat, b) -> x`` solving with the transposed
        operator ``vecmat``; needed for reverse mode unless ``symmetric``.
      symmetric: the operator is symmetric, so ``solve`` serves as its own transpose.

    Returns:
      ``x``, with the structure of ``b``.
    """
    b_leaves, tree = tree_flatten(b)
    b_avals = [aval_of_value(v) for v in b_leaves]
    nb = len(b_leaves)
    mv_jaxpr, mvc = _trace(_flat_vec_fun(matvec, tree), b_avals)
    n_c = len(mvc)
    c_avals = [aval_of_value(v) for v in mvc]

    def mv_from(cs):
        return lambda v: tree_unflatten(tree, _run(mv_jaxpr, *cs, *tree_flatten(v)[0]))

    def tmv_flat(*args):
        cs, vs = args[:n_c], args[n_c:]
        lin = lambda *v: _run(mv_jaxpr, *cs, *v)  # noqa: E731
        return list(linear_transpose(lin, *vs)(list(vs)))

    if symmetric:
        tmv_jaxpr = mv_jaxpr
    else:
        tmv_jaxpr, extra = _trace(tmv_flat, c_avals + b_avals)
        assert not extra, "transposing a closed jaxpr captured constants"

    def tmv_from(cs):
        return lambda v: tree_unflatten(tree, _run(tmv_jaxpr, *cs, *tree_flatten(v)[0]))

    def solve_flat(*args):
        cs, bs = args[:n_c], args[n_c:]
        x = solve(mv_from(cs), tree_unflatten(tree, list(bs)))
        x_leaves, x_tree = tree_flatten(x)
        if x_tree != tree or len(x_leaves) != nb:
            raise TypeError(f"custom_linear_solve: solve must return a value of the structure "
                            f"of b ({tree}), got {x_tree}.")
        return x_leaves

    s_jaxpr, s_consts = _trace(solve_flat, c_avals + b_avals)

    if symmetric:
        t_jaxpr, t_consts = s_jaxpr, s_consts
    elif transpose_solve is None:
        t_jaxpr, t_consts = None, []
    else:
        def tsolve_flat(*args):
            cs, bs = args[:n_c], args[n_c:]
            x = transpose_solve(tmv_from(cs), tree_unflatten(tree, list(bs)))
            return tree_flatten(x)[0]
        t_jaxpr, t_consts = _trace(tsolve_flat, c_avals + b_avals)
    out = custom_linear_solve_p.bind(
        *s_consts, *t_consts, *mvc, *b_leaves, solve_jaxpr=s_jaxpr, transpose_jaxpr=t_jaxpr,
        matvec_jaxpr=mv_jaxpr, tmatvec_jaxpr=tmv_jaxpr, n_solve=len(s_consts),
        n_transpose=len(t_consts), n_matvec=n_c)
    return tree_unflatten(tree, out)
