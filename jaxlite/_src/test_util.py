"""Numerical gradient checking (``jax.test_util.check_grads``).

The procedure is JAX's, step for step, so a check that passes (or fails) in JAX does the same
here: one random direction per check drawn from ``RandomState(0)`` in the argument's dtype,
central differences computed in that dtype, inner products in that dtype, and tolerances per
dtype (scaled by the number of elements compared)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.tree_util import tree_leaves, tree_map

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4
# default gradient tolerances (atol and rtol) per dtype
_GRAD_TOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
             np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3,
             np.dtype(np.complex128): 1e-5}
_LOW_PRECISION_TOL = 1e-1   # bfloat16 and the float8 types


def _dtype(x):
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if type(x) in (bool, int, float, complex):
        from jaxlite._src.core import dtypes
        return np.dtype(dtypes.python_scalar_dtype(x))
    return np.asarray(x).dtype


def _is_py_scalar(x):
    return type(x) in (bool, int, float, complex)


def _tolerance(dtype, tol):
    if tol is not None and not isinstance(tol, dict):
        return tol
    from jaxlite._src.core.dtypes import canonicalize_dtype
    dtype = np.dtype(canonicalize_dtype(dtype))
    table = dict(_GRAD_TOL)
    table.update({np.dtype(k): v for k, v in (tol or {}).items()})
    if dtype in table:
        return table[dtype]
    return 0 if dtype.kind in "biu" else _LOW_PRECISION_TOL


def _close(x, y, atol, rtol, err_msg):
    a, b = np.asarray(x), np.asarray(y)
    assert a.shape == b.shape, (a.shape, b.shape)
    at = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol)) * a.size
    rt = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol)) * b.size
    if a.dtype.kind == "V" or b.dtype.kind == "V":   # ml_dtypes floats
        a, b = a.astype(np.float32), b.astype(np.float32)
    kw = {k: v for k, v in (("atol", at), ("rtol", rt)) if v}
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, err_msg=err_msg, **kw)


def _check_close(xs, ys, atol, rtol, err_msg):
    tree_map(lambda x, y: _close(x, y, atol, rtol, err_msg), xs, ys)


def _rand_like(rng, x):
    dtype, shape = _dtype(x), np.shape(x)
    r = np.asarray(rng.randn(*shape), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        r = r + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return r.item() if _is_py_scalar(x) else r


def _typed(fn):
    """``fn`` on NumPy values, kept in the first argument's dtype (and a Python scalar when
    all arguments are)."""
    def wrapped(*args):
        out = np.array(fn(*args), dtype=_dtype(args[0]))
        return out.item() if all(_is_py_scalar(a) for a in args) else out
    return wrapped


def _scale(xs, a):
    def mul(x):
        dt = _dtype(x)
        out = np.multiply(np.asarray(x), np.array(a, dt), dtype=dt)
        return out.item() if _is_py_scalar(x) else out
    return tree_map(mul, xs)


def _diff(xs, ys):
    """``x - y`` with ``inf - inf == 0``, computed in double precision (JAX subtracts in x's
    dtype; the wider difference loses nothing to cancellation, so the check depends less on
    the last bits of ``f``)."""
    def sub(x, y):
        x, y = np.asarray(x), np.asarray(y)
        wide = np.complex128 if np.iscomplexobj(x) or np.iscomplexobj(y) else np.float64
        with np.errstate(invalid="ignore"):
            return np.where(np.equal(x, y), np.array(0, wide),
                            np.subtract(x, y, dtype=wide))
    return tree_map(sub, xs, ys)


def _inner(xs, ys):
    parts = [np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
             for x, y in zip(tree_leaves(xs), tree_leaves(ys))]
    out = parts[0]
    for p in parts[1:]:
        out = np.add(out, p)
    return out


def _conj(xs):
    return tree_map(_typed(np.conj), xs)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """Central finite difference of ``f`` at ``primals`` along ``tangents`` (in the values'
    own dtypes, as JAX computes it)."""
    delta = _scale(tangents, eps)
    up = f(*tree_map(_typed(lambda a, b: a + b), primals, delta))
    down = f(*tree_map(_typed(lambda a, b: a - b), primals, delta))
    return tree_map(lambda d, u: (d * (0.5 / eps)).astype(_dtype(u)), _diff(up, down), up)


def _check_dtypes(xs, ys):
    from jaxlite._src.core.dtypes import canonicalize_dtype
    tree_map(lambda x, y: _assert_same(canonicalize_dtype(_dtype(x)),
                                       canonicalize_dtype(_dtype(y))), xs, ys)


def _assert_same(a, b):
    assert a == b, (a, b)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Compare ``f_jvp(args, tangents)`` (e.g. ``partial(jax.jvp, f)``) with ``f`` and with
    finite differences along one random direction."""
    atol = _GRAD_TOL if atol is None else atol
    rtol = _GRAD_TOL if rtol is None else rtol
    rng = np.random.RandomState(0)
    tangent = tree_map(lambda x: _rand_like(rng, x), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes(v_out, t_out)
    v_want = f(*args)
    _check_dtypes(v_out, v_want)
    t_want = numerical_jvp(f, args, tangent, eps=eps)
    _check_close(v_out, v_want, atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    _check_close(t_out, t_want, atol, rtol, f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check ``f_vjp`` (e.g. ``partial(jax.vjp, f)``): ``<vjp(ct), t> == <ct, jvp(t)>`` with
    the JVP by finite differences along one random direction."""
    atol = _GRAD_TOL if atol is None else atol
    rtol = _GRAD_TOL if rtol is None else rtol
    rng = np.random.RandomState(0)
    v_out, vjpfun = f_vjp(*args)
    _check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(lambda x: _rand_like(rng, x), args)
    t_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_map(lambda x: _rand_like(rng, x), v_out)
    # JAX's convention: no implicit conjugation, so compare conj(vjp(conj(ct)))
    ct_out = _conj(vjpfun(_conj(cotangent)))
    _check_close(_inner(tangent, ct_out), _inner(t_out, cotangent), atol, rtol,
                 f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


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
            fmsg = f"JVP of {msg}" if msg else "JVP"
            fn_jvp = lambda a, t: jvp(fn, a, t)  # noqa: E731
            check_jvp(fn, fn_jvp, xs, atol, rtol, eps, fmsg)
            if k > 1:
                _check(fn_jvp, (xs, xs), k - 1, fmsg)
        if "rev" in modes:
            rmsg = f"VJP of {msg}" if msg else "VJP"
            check_vjp(fn, lambda *a: vjp(fn, *a), xs, atol, rtol, eps, rmsg)
            if k > 1:
                def f_vjp(*a):
                    out, pull = vjp(fn, *a)
                    return pull(out)
                _check(f_vjp, xs, k - 1, rmsg)

    _check(f, args, order, "")
