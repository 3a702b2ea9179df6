"""jax.scipy.optimize: ``minimize`` with BFGS and (experimental) L-BFGS.

Both methods are written here from Nocedal & Wright, *Numerical Optimization* (2nd ed.):
BFGS is Algorithm 6.1 with the inverse-Hessian update (6.17); L-BFGS is Algorithm 7.5 with
the two-loop recursion (Algorithm 7.4) and the scaling gamma_k = s'y / y'y of (7.20); the
step length comes from the line search of Algorithm 3.5 with the ``zoom`` of Algorithm 3.6,
which returns a step satisfying the strong Wolfe conditions (3.7). Trial steps inside the
zoom interval come from the minimiser of a cubic through three known points (one of them
with its slope), falling back to a quadratic and then to bisection when the minimiser lies
too close to an end of the interval (safeguarding, section 3.5).

Every loop is a ``lax.while_loop`` over a pytree state, so ``minimize`` runs under ``jit``
(and ``vmap``) like JAX's; as in JAX it is not differentiable in reverse mode.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.api.ad import value_and_grad
from jaxlite._src.core import dtypes

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """Object holding optimization results.

    Parameters:
      x: final solution.
      success: ``True`` if optimization succeeded.
      status: integer solver specific return code. 0 means converged (nominal),
        1=max BFGS iters reached, 3=zoom failed, 4=saddle point reached,
        5=max line search iters reached, -1=undefined
      fun: final function value.
      jac: final jacobian array.
      hess_inv: final inverse Hessian estimate.
      nfev: integer number of function calls used.
      njev: integer number of gradient evaluations.
      nit: integer number of iterations of the optimization algorithm.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


_METHODS = ("bfgs", "l-bfgs-experimental-do-not-rely-on-this")


def minimize(fun: Callable, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimization of scalar function of one or more variables (``jax.scipy.optimize.
    minimize``).

    Args:
      fun: the objective, ``fun(x, *args) -> scalar`` with ``x`` a 1-D array.
      x0: initial guess, a 1-D array of shape ``(n,)``.
      args: a tuple of extra arguments passed to ``fun``.
      method: ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"`` (case-insensitive).
      tol: tolerance on the gradient norm (sets ``gtol`` unless ``options`` has one).
      options: solver options. BFGS: ``maxiter``, ``norm``, ``gtol``,
        ``line_search_maxiter``. L-BFGS: ``maxiter``, ``norm``, ``maxcor``, ``ftol``,
        ``gtol``, ``maxfun``, ``maxgrad``, ``maxls``.

    Gradients of ``fun`` come from autodiff. Runs under ``jit``; not differentiable.

    Returns:
      An :class:`OptimizeResults`.
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    if not isinstance(method, str) or method.lower() not in _METHODS:
        raise ValueError(f"Method {method} not recognized")
    options = dict(options)
    if tol is not None:
        options.setdefault("gtol", tol)

    def objective(x):
        return fun(x, *args)

    if method.lower() == "bfgs":
        bad = set(options) - {"maxiter", "norm", "gtol", "line_search_maxiter"}
        if bad:
            raise TypeError(f"minimize_bfgs() got an unexpected keyword argument "
                            f"'{sorted(bad)[0]}'")
        r = _bfgs(objective, x0, **options)
        return OptimizeResults(x=r["x"], success=r["converged"] & ~r["failed"],
                               status=r["status"], fun=r["f"], jac=r["g"],
                               hess_inv=r["H"], nfev=r["nfev"], njev=r["ngev"], nit=r["k"])
    bad = set(options) - {"maxiter", "norm", "maxcor", "ftol", "gtol", "maxfun", "maxgrad",
                          "maxls"}
    if bad:
        raise TypeError(f"_minimize_lbfgs() got an unexpected keyword argument "
                        f"'{sorted(bad)[0]}'")
    r = _lbfgs(objective, x0, **options)
    # the search runs on the steepest-ascent direction conj(grad) of a real function of a
    # complex x; report JAX's gradient
    jac = jnp.conj(r["g"]) if dtypes.issubdtype(r["g"].dtype, np.complexfloating) else r["g"]
    return OptimizeResults(x=r["x"], success=r["converged"] & ~r["failed"],
                           status=r["status"], fun=r["f"], jac=jac, hess_inv=None,
                           nfev=r["nfev"], njev=r["ngev"], nit=r["k"])


# ----------------------------------------------------------------------------- helpers
def _check_x0(x0, complex_ok):
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise TypeError(f"minimize: x0 must be a 1-D array of shape (n,), got shape "
                        f"{tuple(x0.shape)}; flatten it (x0.ravel()) and reshape inside fun.")
    if not dtypes.issubdtype(x0.dtype, np.inexact):
        raise TypeError(f"grad requires real- or complex-valued inputs (input dtype that is "
                        f"a sub-dtype of np.inexact), but got {x0.dtype.name}. If you want "
                        f"to use Boolean- or integer-valued inputs, use vjp or set allow_int "
                        f"to True.")
    if not complex_ok and dtypes.issubdtype(x0.dtype, np.complexfloating):
        raise TypeError("minimize(method='BFGS') needs a real x0; use "
                        "method='l-bfgs-experimental-do-not-rely-on-this' for complex x.")
    return x0


def _norm(v, order):
    if order == np.inf or order == jnp.inf:
        return jnp.max(jnp.abs(v))
    if order == -np.inf:
        return jnp.min(jnp.abs(v))
    return jnp.sum(jnp.abs(v) ** order) ** (1.0 / order)


def _rdot(a, b):
    """The real inner product ``Re(a^H b)`` (the plain dot product for real vectors)."""
    return jnp.real(jnp.vdot(a, b))


def _int(v):
    """A weakly-typed integer scalar (JAX reports counts and status codes as weak ints)."""
    return lax.convert_element_type(v, dtypes.canonicalize_dtype(np.int64)) if not \
        isinstance(v, int) else jnp.asarray(v)


def _cubic_argmin(a, fa, da, b, fb, c, fc):
    """Minimiser of the cubic through ``(a, fa)`` with slope ``da`` at ``a`` and through
    ``(b, fb)``, ``(c, fc)``; NaN when that cubic has no local minimum."""
    u, v = b - a, c - a
    ru = fb - fa - da * u          # = A u^3 + B u^2
    rv = fc - fa - da * v          # = A v^3 + B v^2
    det = u * u * v * v * (u - v)
    A = (v * v * ru - u * u * rv) / det
    B = (u ** 3 * rv - v ** 3 * ru) / det
    disc = B * B - 3.0 * A * da
    t = (-B + jnp.sqrt(disc)) / (3.0 * A)
    return a + t


def _quad_argmin(a, fa, da, b, fb):
    """Minimiser of the parabola with value ``fa`` and slope ``da`` at ``a`` through
    ``(b, fb)``; NaN or outside the interval when it opens downward."""
    u = b - a
    curv = (fb - fa - da * u) / (u * u)
    return a - da / (2.0 * curv)


# ----------------------------------------------------------------------------- line search
_BRACKET, _ZOOM, _DONE = 0, 1, 2


def _line_search(fun_vg, x, p, f0, g0, maxiter, f_prev=None, c1=1e-4, c2=0.9):
    """Strong-Wolfe line search along ``p`` from ``x`` (Nocedal & Wright Alg. 3.5/3.6).

    One ``lax.while_loop``; every pass evaluates ``fun`` (value and gradient) once, at the
    next extrapolated step while the minimum is not yet bracketed and at an interpolated
    step inside the bracket afterwards. Returns a dict with the accepted step ``a``, the
    value and gradient there, the number of evaluations, ``failed`` and a status (0: ok,
    3: the bracket collapsed or the interpolation broke down, 5: ``maxiter`` evaluations
    without a Wolfe point).

    The first trial step is 1, or with ``f_prev`` (the value at the previous iterate) the
    step a quadratic interpolation of the last decrease predicts, ``min(1, 1.01 * 2 (f0 -
    f_prev) / phi'(0))`` (N&W eq. 3.60), when that is a positive number."""
    rdt = jnp.real(f0).dtype
    d0 = _rdot(g0, p)
    zero = jnp.zeros((), rdt)
    one = jnp.ones((), rdt)

    def phi(a):
        f, g = fun_vg(x + a.astype(x.dtype) * p)
        return f, g, _rdot(g, p)

    a_first = one
    if f_prev is not None:
        guess = 1.01 * 2.0 * (f0 - f_prev) / d0
        a_first = jnp.where(jnp.isfinite(guess) & (guess > 0), jnp.minimum(one, guess), one)
    state = dict(
        phase=_int(_BRACKET), i=_int(0), status=_int(0),
        a_next=a_first.astype(rdt),
        # the previous bracketing point (lo while zooming), its value and slope
        a_lo=zero, f_lo=f0, d_lo=d0, g_lo=g0,
        # the other end of the bracket and the point it replaced (for the cubic)
        a_hi=zero, f_hi=f0, a_rec=zero, f_rec=f0, have_rec=jnp.array(False),
        a=zero, f=f0, g=g0)

    def cond(s):
        return (s["phase"] != _DONE) & (s["i"] < maxiter)

    def trial_step(s):
        lo, hi = s["a_lo"], s["a_hi"]
        width = hi - lo
        left, right = jnp.minimum(lo, hi), jnp.maximum(lo, hi)
        cub = _cubic_argmin(lo, s["f_lo"], s["d_lo"], hi, s["f_hi"], s["a_rec"], s["f_rec"])
        qua = _quad_argmin(lo, s["f_lo"], s["d_lo"], hi, s["f_hi"])
        m_c, m_q = 0.2 * jnp.abs(width), 0.1 * jnp.abs(width)
        ok_c = s["have_rec"] & (cub > left + m_c) & (cub < right - m_c)
        ok_q = (qua > left + m_q) & (qua < right - m_q)
        return jnp.where(ok_c, cub, jnp.where(ok_q, qua, lo + 0.5 * width))

    def body(s):
        zooming = s["phase"] == _ZOOM
        a = jnp.where(zooming, trial_step(s), s["a_next"])
        f, g, d = phi(a)
        armijo_bad = (f > f0 + c1 * a * d0) | ~jnp.isfinite(f)
        curv_ok = jnp.abs(d) <= -c2 * d0
        n = dict(s, i=s["i"] + 1)

        # --- bracketing (Alg. 3.5): previous point is (a_lo, f_lo, d_lo)
        up = armijo_bad | ((s["i"] > 0) & (f >= s["f_lo"]))
        br_done = ~up & curv_ok
        down = ~up & ~br_done & (d >= 0)
        br_more = ~up & ~br_done & ~down
        # --- zoom (Alg. 3.6)
        zm_hi = armijo_bad | (f >= s["f_lo"])
        zm_done = ~zm_hi & curv_ok
        zm_flip = ~zm_hi & ~zm_done & (d * (s["a_hi"] - s["a_lo"]) >= 0)
        zm_lo = ~zm_hi & ~zm_done

        done = jnp.where(zooming, zm_done, br_done)
        # new (lo, hi, rec) for each case; ``new`` is the point just evaluated
        new_to_hi = jnp.where(zooming, zm_hi, up)
        new_to_lo = jnp.where(zooming, zm_lo, down | br_more)
        old_lo_to_hi = jnp.where(zooming, zm_flip, down)

        n["a_hi"] = jnp.where(new_to_hi, a, jnp.where(old_lo_to_hi, s["a_lo"], s["a_hi"]))
        n["f_hi"] = jnp.where(new_to_hi, f, jnp.where(old_lo_to_hi, s["f_lo"], s["f_hi"]))
        # the point dropped from the bracket becomes the third point of the cubic
        rec_a = jnp.where(zooming, jnp.where(new_to_hi | zm_flip, s["a_hi"], s["a_lo"]),
                          s["a_hi"])
        rec_f = jnp.where(zooming, jnp.where(new_to_hi | zm_flip, s["f_hi"], s["f_lo"]),
                          s["f_hi"])
        n["a_rec"] = jnp.where(zooming, rec_a, s["a_rec"])
        n["f_rec"] = jnp.where(zooming, rec_f, s["f_rec"])
        n["have_rec"] = zooming
        n["a_lo"] = jnp.where(new_to_lo, a, s["a_lo"])
        n["f_lo"] = jnp.where(new_to_lo, f, s["f_lo"])
        n["d_lo"] = jnp.where(new_to_lo, d, s["d_lo"])
        n["g_lo"] = jnp.where(new_to_lo, g, s["g_lo"])
        n["a_next"] = jnp.where(br_more, 2.0 * a, s["a_next"])
        starts_zoom = ~zooming & (up | down)
        n["phase"] = jnp.where(done, _DONE, jnp.where(starts_zoom, _ZOOM, s["phase"]))
        n["a"] = jnp.where(done, a, s["a"])
        n["f"] = jnp.where(done, f, s["f"])
        n["g"] = jnp.where(done, g, s["g"])
        # a bracket that no longer holds a representable step cannot be zoomed further
        collapsed = (n["phase"] == _ZOOM) & (
            (jnp.abs(n["a_hi"] - n["a_lo"]) <= jnp.finfo(rdt).eps * jnp.abs(n["a_lo"]))
            | ~jnp.isfinite(d))
        n["status"] = jnp.where(collapsed & ~done, 3, s["status"])
        n["phase"] = jnp.where(collapsed & ~done, _DONE, n["phase"])
        return n

    s = lax.while_loop(cond, body, state)
    found = (s["phase"] == _DONE) & (s["status"] == 0)
    status = jnp.where(found, 0, jnp.where(s["status"] != 0, s["status"], 5))
    status = jnp.asarray(status)
    # on failure report the best point seen (the low end of the bracket)
    return dict(a=jnp.where(found, s["a"], s["a_lo"]),
                f=jnp.where(found, s["f"], s["f_lo"]),
                g=jnp.where(found, s["g"], s["g_lo"]),
                nfev=s["i"], failed=~found, status=status)


# ----------------------------------------------------------------------------- BFGS
def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    x0 = _check_x0(x0, complex_ok=False)
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = x0.shape[0]
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    eye = jnp.eye(n, dtype=x0.dtype)
    init = dict(converged=_norm(g0, norm) < gtol, failed=jnp.array(False), k=_int(0),
                nfev=_int(1), ngev=_int(1), x=x0, f=f0, g=g0, H=eye, status=_int(0),
                f_prev=f0 + jnp.linalg.norm(g0) / 2)

    def cond(s):
        return ~s["converged"] & ~s["failed"] & (s["k"] < maxiter)

    def body(s):
        p = -(s["H"] @ s["g"])
        ls = _line_search(vg, s["x"], p, s["f"], s["g"], line_search_maxiter,
                          f_prev=s["f_prev"])
        step = ls["a"].astype(x0.dtype) * p
        x1 = s["x"] + step
        y = ls["g"] - s["g"]
        sy = jnp.dot(y, step)
        rho = 1.0 / sy
        # inverse-Hessian update (N&W 6.17) written as H - (v s' + s v') + ... expanded:
        # (I - rho s y') H (I - rho y s') + rho s s'
        Hy = s["H"] @ y
        yHy = jnp.dot(y, Hy)
        H1 = (s["H"] - rho * (jnp.outer(step, Hy) + jnp.outer(Hy, step))
              + (rho * rho * yHy + rho) * jnp.outer(step, step))
        H1 = jnp.where(jnp.isfinite(rho), H1, s["H"])
        failed = ls["failed"]
        keep = lambda new, old: jnp.where(failed, old, new)  # noqa: E731
        g1 = keep(ls["g"], s["g"])
        return dict(converged=_norm(g1, norm) < gtol, failed=failed, k=s["k"] + 1,
                    nfev=s["nfev"] + ls["nfev"], ngev=s["ngev"] + ls["nfev"],
                    x=keep(x1, s["x"]), f=keep(ls["f"], s["f"]), g=g1,
                    H=keep(H1, s["H"]), status=jnp.where(failed, ls["status"], s["status"]),
                    f_prev=s["f"])

    s = lax.while_loop(cond, body, init)
    # JAX's precedence: convergence, then the iteration budget, then a failed search
    s["status"] = jnp.where(s["converged"], 0,
                            jnp.where(s["k"] >= maxiter, 1,
                                      jnp.where(s["failed"], s["status"], -1)))
    return s


# ----------------------------------------------------------------------------- L-BFGS
def _lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
           gtol=1e-5, maxfun=None, maxgrad=None, maxls=20):
    x0 = _check_x0(x0, complex_ok=True)
    n = x0.shape[0]
    big = np.iinfo(np.int32).max
    maxiter = big if maxiter is None else maxiter
    maxfun = big if maxfun is None else maxfun
    maxgrad = big if maxgrad is None else maxgrad
    is_complex = dtypes.issubdtype(x0.dtype, np.complexfloating)
    if is_complex:
        # f real of a complex x: descend along conj of the holomorphic-style gradient
        def vg(x):
            f, g = value_and_grad(fun)(x)
            return f, jnp.conj(g)
    else:
        vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    rdt = jnp.real(f0).dtype
    m = int(maxcor)
    init = dict(converged=_norm(g0, norm) < gtol, failed=jnp.array(False), k=_int(0),
                nfev=_int(1), ngev=_int(1), x=x0, f=f0, g=g0, status=_int(0),
                S=jnp.zeros((m, n), x0.dtype), Y=jnp.zeros((m, n), x0.dtype),
                rho=jnp.zeros((m,), rdt), gamma=jnp.ones((), rdt))

    # as JAX's L-BFGS, ``maxiter`` bounds the iteration count from above only after it has
    # been exceeded: maxiter=k runs k + 1 iterations
    def cond(s):
        return (~s["converged"] & ~s["failed"] & (s["k"] <= maxiter)
                & (s["nfev"] < maxfun) & (s["ngev"] < maxgrad))

    def direction(s):
        # two-loop recursion (N&W Alg. 7.4); history slot (k - 1) mod m is the newest
        count = jnp.minimum(s["k"], m)

        def first(j, c):
            q, alpha = c
            idx = (s["k"] - 1 - j) % m
            use = j < count
            a_j = s["rho"][idx] * _rdot(s["S"][idx], q)
            a_j = jnp.where(use, a_j, 0.0)
            q = q - a_j.astype(q.dtype) * s["Y"][idx]
            return q, alpha.at[idx].set(a_j)

        q, alpha = lax.fori_loop(0, m, first, (s["g"], jnp.zeros((m,), rdt)))
        r = s["gamma"].astype(q.dtype) * q

        def second(j, r):
            idx = (s["k"] - count + j) % m
            use = j < count
            b = s["rho"][idx] * _rdot(s["Y"][idx], r)
            upd = (alpha[idx] - b).astype(r.dtype) * s["S"][idx]
            return jnp.where(use, r + upd, r)

        r = lax.fori_loop(0, m, second, r)
        return -r

    def body(s):
        p = direction(s)
        ls = _line_search(vg, s["x"], p, s["f"], s["g"], maxls)
        step = ls["a"].astype(x0.dtype) * p
        y = ls["g"] - s["g"]
        sy = _rdot(y, step)
        yy = _rdot(y, y)
        failed = ls["failed"]
        slot = s["k"] % m
        ok = ~failed
        keep = lambda new, old: jnp.where(ok, new, old)  # noqa: E731
        f1 = keep(ls["f"], s["f"])
        g1 = keep(ls["g"], s["g"])
        small_drop = ok & ((s["f"] - f1) < ftol)
        return dict(converged=(_norm(g1, norm) < gtol) | small_drop, failed=failed,
                    k=s["k"] + 1, nfev=s["nfev"] + ls["nfev"], ngev=s["ngev"] + ls["nfev"],
                    x=keep(s["x"] + step, s["x"]), f=f1, g=g1,
                    status=jnp.where(failed, ls["status"], s["status"]),
                    S=s["S"].at[slot].set(step), Y=s["Y"].at[slot].set(y),
                    rho=s["rho"].at[slot].set(1.0 / sy), gamma=sy / yy)

    s = lax.while_loop(cond, body, init)
    s["status"] = jnp.where(
        s["converged"], 0, jnp.where(
            s["failed"], s["status"], jnp.where(
                s["k"] > maxiter, 1, jnp.where(
                    s["nfev"] >= maxfun, 2, jnp.where(s["ngev"] >= maxgrad, 3, -1)))))
    return s
