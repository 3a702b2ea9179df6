"""``lax.custom_linear_solve`` and ``lax.custom_root``: solves differentiated implicitly.

Both follow JAX's definitions: the value is whatever the user's ``solve`` computes (it need
not be differentiable: a ``while_loop`` solver is fine); derivatives come from the implicit
function theorem at the solution.

- ``custom_linear_solve(matvec, b, solve, transpose_solve)``: ``x = A^-1 b`` with
  ``dx = A^-1 (db - dA x)``. The tangent solve is a ``linear_call`` whose transpose is
  ``transpose_solve`` applied to ``vecmat`` (A's transpose, by ``linear_transpose``), so reverse
  mode never differentiates through ``solve``.
- ``custom_root(f, guess, solve, tangent_solve)``: ``x*`` with ``f(x*) = 0`` and
  ``dx* = -(df/dx)^-1 (df/dtheta dtheta)``, the tangent system solved by ``tangent_solve``.

Values ``matvec`` / ``f`` close over (weights, tracers of enclosing transformations) are
hoisted with ``closure_convert`` and differentiated as explicit arguments.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.api.ad import closure_convert, jvp, linear_transpose
from jaxlite._src.api.custom_derivatives import custom_jvp, linear_call
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.prims.ad_util import zeros_like_aval
from jaxlite._src.prims.elementwise import neg_p, sub_p

__all__ = ["custom_linear_solve", "custom_root"]


def _shapes(tree):
    return [np.shape(x) for x in tree_util.tree_leaves(tree)]


def _check(name, expected_name, got, want, has_aux=False):
    """JAX's structure and shape checks of what a user function returned."""
    if has_aux:
        if not (isinstance(got, tuple) and len(got) == 2):
            raise TypeError(f"{name}() with has_aux=True must return a pair (solution, aux), "
                            f"got {type(got).__name__}")
        got = got[0]
    gt, wt = tree_util.tree_structure(got), tree_util.tree_structure(want)
    if gt != wt:
        raise TypeError(f"{name}() output pytree structure must match {expected_name}, got "
                        f"{gt} and {wt}.")
    if _shapes(got) != _shapes(want):
        raise ValueError(f"{name}() output shapes must match {expected_name}, got "
                         f"{_shapes(got)} and {_shapes(want)}")


def _sub(a, b):
    return tree_util.tree_map(lambda u, v: sub_p.bind(u, v), a, b)


def _zeros_like(tree):
    return tree_util.tree_map(lambda v: zeros_like_aval(aval_of_value(v)), tree)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """Solve ``matvec(x) == b`` with ``solve(matvec, b)``, differentiating implicitly.

    ``solve`` (and ``transpose_solve(vecmat, b)`` for reverse mode, defaulting to ``solve``
    when ``symmetric=True``) need not be differentiable; ``matvec`` must be linear in ``x``
    and differentiable in the values it closes over. With ``has_aux`` the solvers return
    ``(x, aux)`` and so does this function (aux gets zero derivative)."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    _check("matvec", "b", matvec(b), b)
    mv, mv_consts = closure_convert(matvec, b)

    def checked_solve(r):
        out = solve(matvec, r)
        _check("solve", "b", out, b, has_aux)
        return out
    # what the solvers close over becomes explicit (non-differentiated) arguments
    sv, sv_consts = closure_convert(checked_solve, b)
    if transpose_solve is not None:
        vecmat_t = linear_transpose(matvec, b)

        def checked_tsolve(r):
            out = transpose_solve(lambda y: vecmat_t(y)[0], r)
            _check("transpose_solve", "b", out, b, has_aux)
            return _first(out, has_aux)
        tv, tv_consts = closure_convert(checked_tsolve, b)
    else:
        tv, tv_consts = None, ()
    n_mv, n_sv = len(mv_consts), len(sv_consts)

    def split(consts):
        return consts[:n_mv], consts[n_mv:n_mv + n_sv], consts[n_mv + n_sv:]

    def transpose_with(consts, ct):
        if tv is None:
            raise TypeError("transpose_solve required for backwards mode automatic "
                            "differentiation of custom_linear_solve: pass transpose_solve=, "
                            "or symmetric=True when matvec is symmetric.")
        return tv(ct, *split(consts)[2])

    def tangent_solve(consts, rhs):
        # linear in rhs, transposed by transpose_solve: reverse mode never enters ``solve``
        return linear_call(lambda c, r: _first(sv(r, *split(c)[1]), has_aux),
                           transpose_with, consts, rhs)

    @custom_jvp
    def _solve(consts, rhs):
        return sv(rhs, *split(consts)[1])

    @_solve.defjvp
    def _solve_jvp(primals, tangents):
        consts, rhs = primals
        dconsts, drhs = tangents
        out = _solve(consts, rhs)
        x = _first(out, has_aux)
        dmv = drhs
        if n_mv:
            _, dmv = jvp(lambda *c: mv(x, *c), tuple(consts[:n_mv]), tuple(dconsts[:n_mv]))
            dmv = _sub(drhs, dmv)
        dx = tangent_solve(consts, dmv)
        if has_aux:
            return out, (dx, _zeros_like(out[1]))
        return out, dx

    return _solve(list(mv_consts) + list(sv_consts) + list(tv_consts), b)


def _first(out, has_aux):
    return out[0] if has_aux else out


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """A root of ``f`` found by ``solve(f, initial_guess)``, differentiable with respect to
    the values ``f`` closes over by the implicit function theorem: the tangent system
    ``g(x) = y`` (``g``: ``f`` linearized at the root) is solved by ``tangent_solve(g, y)``
    (e.g. ``lambda g, y: y / g(1.0)`` for scalars). With ``has_aux`` ``solve`` returns
    ``(root, aux)`` and so does this function."""
    _check("f", "initial_guess", f(initial_guess), initial_guess)
    fc, f_consts = closure_convert(f, initial_guess)

    def checked_solve(g):
        out = solve(f, g)
        _check("solve", "initial_guess", out, initial_guess, has_aux)
        return out
    sv, sv_consts = closure_convert(checked_solve, initial_guess)

    def lin_solve(x, y):
        g = lambda z: jvp(f, (x,), (z,))[1]   # noqa: E731  (f linearized at x)
        sol = tangent_solve(g, y)
        _check("tangent_solve", "x", sol, initial_guess)
        return sol
    ls, ls_consts = closure_convert(lin_solve, initial_guess, initial_guess)
    n_f, n_sv = len(f_consts), len(sv_consts)

    @custom_jvp
    def _root(consts, guess):
        return sv(guess, *consts[n_f:n_f + n_sv])

    @_root.defjvp
    def _root_jvp(primals, tangents):
        consts, guess = primals
        dconsts, _ = tangents
        out = _root(consts, guess)
        x = _first(out, has_aux)
        if n_f:
            _, rhs = jvp(lambda *c: fc(x, *c), tuple(consts[:n_f]), tuple(dconsts[:n_f]))
        else:
            rhs = _zeros_like(x)
        sol = ls(x, rhs, *consts[n_f + n_sv:])
        dx = tree_util.tree_map(lambda t: neg_p.bind(t), sol)
        if has_aux:
            return out, (dx, _zeros_like(out[1]))
        return out, dx

    return _root(list(f_consts) + list(sv_consts) + list(ls_consts), initial_guess)
