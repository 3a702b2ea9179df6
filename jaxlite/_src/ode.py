"""``jax.experimental.ode.odeint``: adaptive Dormand-Prince (5th order, 4th-order error
estimate) integration of ``dy/dt = func(y, t, *args)``, reporting ``y`` at the requested
times by 4th-order dense output, with gradients by the adjoint method (a second integration,
backwards in time, of the state, its cotangent and the cotangents of ``t`` and ``args``).

The step-size control follows the usual scheme (Hairer, Norsett & Wanner, "Solving ODEs I",
II.4): a first step from the initial derivative estimates, an RMS error ratio against
``atol + rtol * max(|y0|, |y1|)``, a step accepted when the ratio is at most 1, and the next
step scaled by ``0.9 * ratio**(-1/5)`` clipped to [0.2, 10] (never below 1 after an accepted
step). Everything is written with jnp and lax, so the solver jits, vmaps and (through its
custom VJP) differentiates.
"""
from __future__ import annotations

import functools

import numpy as np

from jaxlite._src.api.ad import closure_convert, vjp
from jaxlite._src.api.custom_derivatives import custom_vjp
from jaxlite._src.flatten_util import ravel_pytree
from jaxlite._src.lax.control_flow import scan, while_loop
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

# Dormand-Prince 5(4): nodes, stage coefficients, 5th-order weights, 4th-order weights.
_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = [[],
      [1 / 5],
      [3 / 40, 9 / 40],
      [44 / 45, -56 / 15, 32 / 9],
      [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
      [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
      [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
_B5 = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_B4 = np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100,
                1 / 40])
# weights giving y at the middle of a step (for the 4th-order dense output)
_BMID = np.array([6025192743 / 30085553152, 0, 51252292925 / 65400821598,
                  -2691868925 / 45128329728, 187940372067 / 1594534317056,
                  -1776094331 / 19743644256, 11237099 / 235043384]) / 2


def _rk_step(fun, y0, f0, t0, dt):
    """One Dormand-Prince step: (y1, f1, error estimate, stage derivatives k[7, n])."""
    dt_ = dt.astype(y0.dtype)
    ks = [f0]
    for i in range(1, 7):
        acc = y0
        for a, k in zip(_A[i], ks):
            if a:
                acc = acc + dt_ * jnp.asarray(a, y0.dtype) * k
        ks.append(fun(acc, t0 + dt * _C[i]))
    k = jnp.stack(ks)
    y1 = y0 + dt_ * jnp.dot(jnp.asarray(_B5, y0.dtype), k)
    err = dt_ * jnp.dot(jnp.asarray(_B5 - _B4, y0.dtype), k)
    return y1, ks[-1], err, k


def _dense_coeffs(y0, y1, k, dt):
    """Coefficients (highest power first) of the quartic through the step, in s = (t -
    t0) / dt: it matches y and y' at both ends and y at the middle."""
    dt_ = dt.astype(y0.dtype)
    ymid = y0 + dt_ * jnp.dot(jnp.asarray(_BMID, y0.dtype), k)
    f0, f1 = k[0], k[-1]
    a = -2 * dt_ * f0 + 2 * dt_ * f1 - 8 * y0 - 8 * y1 + 16 * ymid
    b = 5 * dt_ * f0 - 3 * dt_ * f1 + 18 * y0 + 14 * y1 - 32 * ymid
    c = -4 * dt_ * f0 + dt_ * f1 - 11 * y0 - 5 * y1 + 16 * ymid
    return jnp.stack([a, b, c, dt_ * f0, y0])


def _error_ratio(err, y0, y1, rtol, atol):
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean((err / tol.astype(err.dtype)) ** 2))


def _next_step(dt, ratio):
    shrink = jnp.where(ratio < 1, 1.0, 0.2)
    factor = jnp.minimum(10.0, jnp.maximum(ratio ** (-1.0 / 5) * 0.9, shrink))
    return jnp.where(ratio == 0, dt * 10.0, dt * factor)


def _first_step(fun, t0, y0, f0, rtol, atol, order=4):
    scale = (atol + jnp.abs(y0) * rtol).astype(y0.dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def _integrate(fun, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The solution (flat state) at every time of ``ts``."""
    def f(y, t):
        return fun(y, t, *args)

    def to_time(carry, target):
        def more(state):
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, err, k = _rk_step(f, y, fy, t, dt)
            ratio = _error_ratio(err, y, y1, rtol, atol)
            new_dt = jnp.clip(_next_step(dt, ratio), 0.0, hmax)
            ok = ratio <= 1.0
            return (i + 1, jnp.where(ok, y1, y), jnp.where(ok, f1, fy),
                    jnp.where(ok, t + dt, t), new_dt, jnp.where(ok, t, last_t),
                    jnp.where(ok, _dense_coeffs(y, y1, k, dt), coeffs))
        _, *carry = while_loop(more, step, (0,) + tuple(carry))
        _, _, t, _, last_t, coeffs = carry
        s = ((target - last_t) / (t - last_t)).astype(coeffs.dtype)
        return tuple(carry), jnp.polyval(coeffs, s)

    f0 = f(y0, ts[0])
    dt = jnp.clip(_first_step(f, ts[0], y0, f0, rtol, atol), 0.0, hmax)
    coeffs = jnp.stack([y0] * 5)
    _, ys = scan(to_time, (y0, f0, ts[0], dt, ts[0], coeffs), ts[1:])
    return jnp.concatenate([y0[None], ys])


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(fun, rtol, atol, mxstep, hmax, y0, ts, *args):
    return _integrate(fun, rtol, atol, mxstep, hmax, y0, ts, *args)


def _odeint_fwd(fun, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _integrate(fun, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(fun, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res
    ys, ts, g = jnp.asarray(ys), jnp.asarray(ts), jnp.asarray(g)

    def adjoint_dynamics(state, t, *args):
        # runs backwards: time is negated, and the state's cotangent and the cotangents of
        # the arguments grow by the vector-Jacobian product of the dynamics
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(fun, y, -t, *args)
        return (-y_dot, *pullback(y_bar))

    def interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = jnp.dot(fun(ys[i], ts[i], *args), g[i])
        t0_bar = t0_bar - t_bar
        state = (ys[i], y_bar, t0_bar, args_bar)
        out = _solve(adjoint_dynamics, rtol, atol, mxstep, hmax, state,
                     jnp.stack([-ts[i], -ts[i - 1]]), *args)
        _, y_bar, t0_bar, args_bar = tree_map(lambda x: x[1], out)
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_t_bars = scan(interval, init,
                                                 jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([t0_bar[None], rev_t_bars[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Integrate ``dy/dt = func(y, t, *args)`` from ``y0`` (any pytree of float arrays) at
    ``t[0]``, returning the state at every time of the increasing array ``t`` (each leaf
    gets a leading dimension ``len(t)``). ``rtol``/``atol`` bound the local error, ``mxstep``
    the number of steps between two output times, ``hmax`` the step size. Differentiable
    in ``y0``, ``t`` and ``args`` (adjoint method)."""
    for a in tree_leaves(args):
        if not (hasattr(a, "dtype") or isinstance(a, (int, float, complex, bool))):
            raise TypeError(f"odeint: the extra arguments must be arrays or pytrees of "
                            f"arrays, got {type(a).__name__} {a!r}; close over other "
                            "Python values in func instead.")
    t = jnp.asarray(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a 1-D array of times, got shape {t.shape}")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _solve(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """``_odeint`` on the flattened state, the result unflattened (stacked leaves)."""
    from jaxlite._src.api.vmap import vmap
    flat_y0, unravel = ravel_pytree(y0)

    def flat_func(y, t, *a):
        return ravel_pytree(func(unravel(y), t, *a))[0]
    ys = _odeint(flat_func, rtol, atol, mxstep, hmax, flat_y0, ts, *args)
    return vmap(unravel)(ys)
