"""Numerical gradient checking (``jax.test_util.check_grads``)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.tree_util import tree_flatten, tree_map

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4
_TOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
        np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5}


def _np(x):
    return np.asarray(x)


def _tol(tol, leaves):
    if tol is not None:
        return tol
    from jaxlite._src.core.dtypes import canonicalize_dtype
    return max([_TOL.get(np.dtype(canonicalize_dtype(_np(x).dtype)), 1e-1) for x in leaves]
               or [1e-5])


def _rand_like(rng, x):
    x = _np(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        return np.asarray(rng.randn(*x.shape) + 1j * rng.randn(*x.shape)).astype(x.dtype)
    return np.asarray(rng.randn(*x.shape)).astype(x.dtype)


def _add(xs, ys, scale):
    return tree_map(lambda x, y: (_np(x) + scale * _np(y)).astype(_np(x).dtype), xs, ys)


def _inner(xs, ys):
    """Real inner product <x, y> = Re(sum(conj(x) * y)) over matching pytrees."""
    xl, yl = tree_flatten(xs)[0], tree_flatten(ys)[0]
    return sum(np.real(np.sum(np.conj(_np(x).astype(np.complex128)) *
                              _np(y).astype(np.complex128))) for x, y in zip(xl, yl))


def _conj(xs):
    return tree_map(lambda x: np.conj(_np(x)) if np.iscomplexobj(_np(x)) else _np(x), xs)


def _check_close(a, b, atol, rtol, msg):
    al, bl = tree_flatten(a)[0], tree_flatten(b)[0]
    for x, y in zip(al, bl):
        np.testing.assert_allclose(_np(x).astype(np.complex128), _np(y).astype(np.complex128),
                                   atol=atol, rtol=rtol, err_msg=msg)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """Central finite difference of ``f`` at ``primals`` along ``tangents``."""
    up = f(*_add(primals, tangents, eps))
    down = f(*_add(primals, tangents, -eps))
    return tree_map(lambda u, d: (_np(u).astype(np.complex128 if np.iscomplexobj(u)
                                                 else np.float64) - _np(d)) / (2 * eps),
                    up, down)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Compare ``f_jvp(args, tangents)`` with ``f`` and with finite differences."""
    rng = np.random.RandomState(0)
    leaves = tree_flatten(args)[0]
    atol, rtol = _tol(atol, leaves), _tol(rtol, leaves)
    tangent = tree_map(lambda x: _rand_like(rng, x), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal")
    t_num = numerical_jvp(f, args, tangent, eps)
    _check_close(t_out, t_num, atol, rtol, f"{err_msg} tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check ``<vjp(ct), t> == <ct, jvp(t)>`` with the JVP by finite differences."""
    rng = np.random.RandomState(1)
    leaves = tree_flatten(args)[0]
    atol, rtol = _tol(atol, leaves), _tol(rtol, leaves)
    v_out, vjpfun = f_vjp(*args)
    _check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal")
    tangent = tree_map(lambda x: _rand_like(rng, x), args)
    cotangent = tree_map(lambda x: _rand_like(rng, x), v_out)
    # JAX's convention: no implicit conjugation, so compare conj(vjp(conj(ct)))
    ct_out = _conj(vjpfun(_conj(cotangent)))
    ip = _inner(tangent, ct_out)
    ip_expected = _inner(numerical_jvp(f, args, tangent, eps), cotangent)
    np.testing.assert_allclose(ip, ip_expected, atol=atol, rtol=rtol,
                               err_msg=f"{err_msg} VJP inner product")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check the derivatives of ``f`` at ``args`` (a tuple) against finite differences, in
    forward and/or reverse mode, up to ``order``. Raises AssertionError on mismatch."""
    from jaxlite._src.api.ad import jvp, vjp
    eps = eps or EPS
    args = tuple(args)
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"Unknown check_grads mode {m!r}; use 'fwd' and/or 'rev'.")

    def _check(fn, xs, k, msg):
        if "fwd" in modes:
            fmsg = f"{msg} JVP of order {order - k + 1}"
            check_jvp(fn, lambda a, t: jvp(fn, a, t), xs, atol, rtol, eps, fmsg)
            if k > 1:
                _check(lambda *p_and_t: jvp(fn, p_and_t[0], p_and_t[1])[1],
                       (xs, xs), k - 1, fmsg)
        if "rev" in modes:
            rmsg = f"{msg} VJP of order {order - k + 1}"
            check_vjp(fn, lambda *a: vjp(fn, *a), xs, atol, rtol, eps, rmsg)
            if k > 1:
                def f_vjp(*a):
                    out, pull = vjp(fn, *a)
                    return pull(out)
                _check(f_vjp, xs, k - 1, rmsg)

    _check(f, args, order, "")



