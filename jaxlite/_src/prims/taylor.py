"""Taylor-mode rules (``jax.experimental.jet``): helpers the primitives' ``jet`` rules are
written with, as ad_util.py is for their JVP rules.

A rule is ``jet(primals, series, **params) -> (primal_out, series_out)``: ``series[i]`` holds
the Taylor coefficients ``[c1, ..., cK]`` of operand ``i`` *not* scaled by factorials
(``x(t) = x0 + c1 t + c2 t^2 + ...``), and the result is the coefficients of the output in the
same form. The recurrences are the classic ones of Taylor arithmetic (products are Cauchy
products; exp, log, sin/cos, logistic come from the ODE each satisfies), the ones JAX's jet
uses, so values agree with JAX's to rounding. A primitive without a rule is expanded by the
jet interpreter through nested forward-mode derivatives of that one primitive.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import aval_of_value

__all__ = ["linear", "bilinear", "exp", "log", "sin", "cos", "sinh", "cosh", "logistic",
           "tanh", "div", "pow", "integer_pow", "chooser"]


def _ew():
    from jaxlite._src.prims import elementwise
    return elementwise


def _c(x, v):
    """The constant ``v`` as a weakly typed scalar of ``x``'s dtype."""
    from jaxlite._src.runtime.array import ArrayImpl
    return ArrayImpl(np.asarray(v, aval_of_value(x).dtype), True)


def _add(a, b):
    return _ew().add_p.bind(a, b)


def _mul(a, b):
    return _ew().mul_p.bind(a, b)


def _sub(a, b):
    return _ew().sub_p.bind(a, b)


def _div(a, b):
    return _ew().div_p.bind(a, b)


def _scale(a, s):
    return _mul(a, _c(a, s))


def _sum(terms):
    out = terms[0]
    for t in terms[1:]:
        out = _add(out, t)
    return out


def _is_series_operand(x) -> bool:
    return dtypes.issubdtype(aval_of_value(x).dtype, np.inexact)


def linear(prim):
    """The rule of a primitive linear in its inexact operands (integer operands, such as
    indices or a select's predicate, are passed through unchanged)."""
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        live = [_is_series_operand(p) for p in primals]
        terms = []
        for k in range(len(series[0])):
            args = [s[k] if on else p for p, s, on in zip(primals, series, live)]
            terms.append(prim.bind(*args, **params))
        if prim.multiple_results:
            return out, [list(t) for t in zip(*terms)]
        return out, terms
    return rule


def bilinear(prim):
    """The rule of a primitive bilinear in its two operands (mul, dot_general): the Cauchy
    product of their series."""
    def rule(primals, series, **params):
        (x, y), (xs, ys) = primals, series
        u, w = [x] + list(xs), [y] + list(ys)
        v = [_sum([prim.bind(u[j], w[k - j], **params) for j in range(k + 1)])
             for k in range(len(u))]
        return v[0], v[1:]
    return rule


def _ode_series(y0, dy_coeffs, u):
    """Coefficients of y with y' = d(x) x' where ``dy_coeffs(k, v)`` gives coefficient ``k``
    of d(x) from the coefficients of y found so far (``v``)."""
    v = [y0] + [None] * (len(u) - 1)
    for k in range(1, len(u)):
        v[k] = _scale(_sum([_scale(_mul(dy_coeffs(k - j, v), u[j]), j)
                            for j in range(1, k + 1)]), 1.0 / k)
    return v


def exp(primals, series, **_):
    """exp: y' = y x'."""
    (x,), (xs,) = primals, series
    u = [x] + list(xs)
    v = _ode_series(_ew().exp_p.bind(x), lambda i, v: v[i], u)
    return v[0], v[1:]


def log(primals, series, **_):
    """log: x y' = x' (solved for y's coefficients)."""
    (x,), (xs,) = primals, series
    u = [x] + list(xs)
    v = [_ew().log_p.bind(x)] + [None] * len(xs)
    for k in range(1, len(u)):
        conv = [_scale(_mul(v[j], u[k - j]), j) for j in range(1, k)]
        rest = u[k] if not conv else _sub(u[k], _scale(_sum(conv), 1.0 / k))
        v[k] = _div(rest, x)
    return v[0], v[1:]


def _sin_cos(primals, series, sign, s_prim, c_prim):
    (x,), (xs,) = primals, series
    u = [x] + list(xs)
    s = [s_prim.bind(x)] + [None] * len(xs)
    c = [c_prim.bind(x)] + [None] * len(xs)
    for k in range(1, len(u)):
        s[k] = _scale(_sum([_scale(_mul(u[j], c[k - j]), j) for j in range(1, k + 1)]),
                      1.0 / k)
        c[k] = _scale(_sum([_scale(_mul(u[j], s[k - j]), j) for j in range(1, k + 1)]),
                      sign / k)
    return s, c


def sin(primals, series, **_):
    """sin (with cos alongside): s' = c x', c' = -s x'."""
    s, _ = _sin_cos(primals, series, -1.0, _ew().sin_p, _ew().cos_p)
    return s[0], s[1:]


def cos(primals, series, **_):
    """cos (with sin alongside)."""
    _, c = _sin_cos(primals, series, -1.0, _ew().sin_p, _ew().cos_p)
    return c[0], c[1:]


def sinh(primals, series, **_):
    """sinh (with cosh alongside): s' = c x', c' = s x'."""
    s, _ = _sin_cos(primals, series, 1.0, _ew().sinh_p, _ew().cosh_p)
    return s[0], s[1:]


def cosh(primals, series, **_):
    """cosh (with sinh alongside)."""
    _, c = _sin_cos(primals, series, 1.0, _ew().sinh_p, _ew().cosh_p)
    return c[0], c[1:]


def _logistic_series(x, u):
    v = [_ew().logistic_p.bind(x)] + [None] * (len(u) - 1)
    one_minus = _sub(_c(v[0], 1), v[0])
    e = [_mul(v[0], one_minus)] + [None] * (len(u) - 1)   # coefficients of y' / x' = y(1-y)
    for k in range(1, len(u)):
        v[k] = _scale(_sum([_scale(_mul(e[k - j], u[j]), j) for j in range(1, k + 1)]),
                      1.0 / k)
        e[k] = _sub(_mul(one_minus, v[k]), _sum([_mul(v[j], v[k - j])
                                                 for j in range(1, k + 1)]))
    return v


def logistic(primals, series, **_):
    """logistic: y' = y (1 - y) x'."""
    (x,), (xs,) = primals, series
    v = _logistic_series(x, [x] + list(xs))
    return v[0], v[1:]


def tanh(primals, series, **_):
    """tanh(x) = 2 logistic(2x) - 1."""
    (x,), (xs,) = primals, series
    u = [_scale(x, 2.0)] + [_scale(t, 2.0) for t in xs]
    v = _logistic_series(u[0], u)
    return _sub(_scale(v[0], 2.0), _c(v[0], 1)), [_scale(t, 2.0) for t in v[1:]]


def div(primals, series, **_):
    """x / y: the coefficients of v with v y = x."""
    (x, y), (xs, ys) = primals, series
    u, w = [x] + list(xs), [y] + list(ys)
    v = [None] * len(u)
    for k in range(len(u)):
        rest = u[k] if k == 0 else _sub(u[k], _sum([_mul(v[j], w[k - j]) for j in range(k)]))
        v[k] = _div(rest, y)
    return v[0], v[1:]


def _series_mul(a, b):
    """Cauchy product of two coefficient lists (primal first) of equal length."""
    return [_sum([_mul(a[j], b[k - j]) for j in range(k + 1)]) for k in range(len(a))]


def pow(primals, series, **_):
    """x ** y = exp(y log x): the series of z = y log x, then exp's recurrence."""
    ew = _ew()
    x, y = primals
    xs, ys = series
    l0, ls = log([x], [xs])
    u = _series_mul([y] + list(ys), [l0] + list(ls))
    v = _ode_series(ew.pow_p.bind(x, y), lambda i, v: v[i], u)
    return v[0], v[1:]


def _pow_by_squaring(u, n):
    """The series of x ** n (n >= 1) from that of x, by squaring."""
    if n == 1:
        return u
    if n % 2 == 0:
        return _pow_by_squaring(_series_mul(u, u), n // 2)
    return _series_mul(u, _pow_by_squaring(_series_mul(u, u), (n - 1) // 2))


def integer_pow(primals, series, *, y):
    """x ** n for an integer n, through repeated squaring (products of series); a negative
    n through the series of 1 / x."""
    (x,), (xs,) = primals, series
    u = [x] + list(xs)
    if y == 0:
        from jaxlite._src.prims import ad_util
        one = _add(_mul(x, _c(x, 0)), _c(x, 1))
        return one, [ad_util.zeros_like_aval(aval_of_value(x)) for _ in xs]
    if y < 0:
        r0, rs = div([_add(_mul(x, _c(x, 0)), _c(x, 1)), x],
                     [[_mul(t, _c(t, 0)) for t in xs], list(xs)])
        u = [r0] + list(rs)
    v = _pow_by_squaring(u, abs(y))
    return v[0], v[1:]


def chooser(reduce_prim):
    """reduce_max / reduce_min: the series of the chosen elements (averaged over ties)."""
    def rule(primals, series, *, axes, **params):
        from jaxlite._src.prims import conversion, reductions, shape
        (x,), (xs,) = primals, series
        out = reduce_prim.bind(x, axes=axes, **params)
        keep = tuple(1 if i in axes else d for i, d in enumerate(aval_of_value(x).shape))
        hit = _ew().eq_p.bind(x, shape.reshape_p.bind(out, new_sizes=keep, dimensions=None,
                                                      sharding=None))
        dt = aval_of_value(x).dtype
        hit = conversion.convert_element_type_p.bind(hit, new_dtype=dt, weak_type=False,
                                                     sharding=None)
        count = reductions.reduce_sum_p.bind(hit, axes=tuple(axes), out_sharding=None)
        return out, [_div(reductions.reduce_sum_p.bind(_mul(t, hit), axes=tuple(axes),
                                                       out_sharding=None), count)
                     for t in xs]
    return rule
