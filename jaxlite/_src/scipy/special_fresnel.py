"""The Fresnel integrals ``S(x) = int_0^x sin(pi t^2 / 2) dt`` and
``C(x) = int_0^x cos(pi t^2 / 2) dt`` (``jax.scipy.special.fresnel``).

Written for jaxlite from the classical expansions (DLMF 7.6, 7.12), in three ranges of
``a = |x|`` (both functions are odd):

* ``a < 1``: the Maclaurin series ``C = x P(x^4)``, ``S = x^3 Q(x^4)`` whose coefficients
  ``(-1)^k (pi/2)^(2k) / ((2k)! (4k+1))`` and ``(-1)^k (pi/2)^(2k+1) / ((2k+1)! (4k+3))``
  are built below from that formula (its alternating terms cancel too much further out).
* ``1 <= a < a_asym``: Taylor steps from the nearest node ``x0 = k/16``. With
  ``d = a - x0`` (exact), ``C(a) + i S(a) = C(x0) + i S(x0) + exp(i pi x0^2/2) J`` where
  ``J = int_0^d exp(i pi (x0 h + h^2/2)) dh``. The integrand's Taylor coefficients obey
  ``(n+1) c_(n+1) = i pi (x0 c_n + c_(n-1))`` (it solves ``g' = i pi (x0 + h) g``), so ``J``
  is a short power series in ``d`` (``|pi x0 d| <= 0.6``). The node values ``S(x0)``,
  ``C(x0)``, ``sin/cos(pi x0^2/2)`` are computed once, on first use, from the Maclaurin
  series in 60-digit decimal arithmetic (the cancellation costs at most ~25 digits there).
  As the step ``|J| <= 1/32`` is small next to ``S, C >= 0.3`` on this range, the results
  are within ~2 ulps.
* ``a >= a_asym``: the auxiliary functions ``f``, ``g`` with ``C = 1/2 + f sin(u) - g cos(u)``,
  ``S = 1/2 - f cos(u) - g sin(u)``, ``u = pi x^2 / 2``, from their asymptotic series in
  ``z = pi x^2``: ``f ~ 1/(pi x) sum (-1)^m (4m-1)!! / z^2m``,
  ``g ~ 1/(pi^2 x^3) sum (-1)^m (4m+1)!! / z^2m``.

``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)`` are evaluated with the phase ``x^2 / 2`` reduced
modulo 2 exactly: ``x`` is split Dekker-style into a high and a low half whose products are
exact, each product is reduced with ``fmod`` (exact), and only the final sum rounds. So the
values stay accurate for large ``x`` (where ``x^2`` is not representable), and so are the
derivatives ``S' = sin(pi x^2 / 2)``, ``C' = cos(pi x^2 / 2)`` (the custom JVP rule, itself
differentiable). float16/bfloat16 are computed in float32, as JAX does.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["fresnel"]


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _c(v, like):
    return np.asarray(v, like.dtype)


def _maclaurin_coefficients(terms):
    """Coefficients (highest power of ``x^4`` first) of ``P`` and ``Q`` above."""
    half_pi = np.pi / 2
    p = [(-1) ** k * half_pi ** (2 * k) / (math.factorial(2 * k) * (4 * k + 1))
         for k in range(terms)]
    q = [(-1) ** k * half_pi ** (2 * k + 1) / (math.factorial(2 * k + 1) * (4 * k + 3))
         for k in range(terms)]
    return p[::-1], q[::-1]


_NODES_PER_UNIT = 16
_PI_DIGITS = ("3.14159265358979323846264338327950288419716939937510582097494459230781640628"
              "62089986280348253421170679")


class _Plan:
    """Ranges and expansion lengths for one working precision (chosen so that the
    float32/float64 results stay within a few ulps of the true values)."""

    def __init__(self, bits):
        double = bits == 64
        self.series_end = 1.0
        self.asym_start = 6.0 if double else 3.0
        self.asym_terms = 10 if double else 7
        self.taylor_terms = 18 if double else 9
        self.series_p, self.series_q = _maclaurin_coefficients(16 if double else 9)
        self.mant = 53 if double else 24
        self.splitter = float(2 ** ((self.mant + 1) // 2) + 1)
        self.dtype = np.float64 if double else np.float32
        self._nodes = None

    def nodes(self):
        """``(S(x0), C(x0), sin(pi x0^2/2), cos(pi x0^2/2))`` at ``x0 = k/16`` for
        ``k = 0 .. 16 a_asym`` (4 rows), in this plan's dtype."""
        if self._nodes is None:
            count = int(self.asym_start * _NODES_PER_UNIT) + 1
            self._nodes = _node_values(count).astype(self.dtype)
        return self._nodes


def _node_values(count, digits=60):
    """The node table of ``_Plan.nodes`` in float64, from 60-digit decimal series."""
    import decimal
    ctx = decimal.Context(prec=digits)
    D = decimal.Decimal
    pi = D(_PI_DIGITS)
    tiny = D(10) ** (10 - digits)
    out = np.zeros((4, count))
    for k in range(count):
        x0 = ctx.divide(D(k), D(_NODES_PER_UNIT))
        u = ctx.multiply(ctx.multiply(ctx.divide(pi, D(2)), x0), x0)
        # int_0^x0 of cos/sin(pi t^2/2) = x0 sum_n (+-) u^n / (n! (2n+1)), by n mod 4
        sums = [D(0), D(0)]                    # C, S
        term, n = D(1), 0                      # u^n / n!
        while n <= u or term > tiny:
            piece = ctx.divide(term, D(2 * n + 1))
            sums[n % 2] = (ctx.add if n % 4 < 2 else ctx.subtract)(sums[n % 2], piece)
            n += 1
            term = ctx.divide(ctx.multiply(term, u), D(n))
        # sin/cos(u): u / pi = k^2 / (2 * 16^2) reduced modulo 2 exactly
        period = 4 * _NODES_PER_UNIT ** 2
        r = ctx.multiply(ctx.divide(D((k * k) % period), D(period // 2)), pi)
        trig = [D(0), D(0)]                    # cos, sin
        term, m = D(1), 0
        while term > tiny or m <= 2 * r:
            trig[m % 2] = (ctx.add if m % 4 < 2 else ctx.subtract)(trig[m % 2], term)
            m += 1
            term = ctx.divide(ctx.multiply(term, r), D(m))
        out[:, k] = [float(ctx.multiply(x0, sums[1])), float(ctx.multiply(x0, sums[0])),
                     float(trig[1]), float(trig[0])]
    return out


_PLANS = {32: _Plan(32), 64: _Plan(64)}


def _horner(coeffs, v):
    acc = _np().full_like(v, coeffs[0])
    for a in coeffs[1:]:
        acc = acc * v + _c(a, v)
    return acc


def _half_square_phase(a, plan):
    """``t`` in [0, 2) with ``t = a^2 / 2 (mod 2)`` for ``a >= 0``, reduced exactly."""
    jnp = _np()
    # from 2^(mant+1) on every float is an even integer, so a^2 / 2 = 0 (mod 2)
    huge = a >= _c(2.0 ** (plan.mant + 1), a)
    a = jnp.where(huge, _c(0, a), a)
    spread = a * _c(plan.splitter, a)
    hi = spread - (spread - a)
    lo = a - hi
    two = _c(2, a)
    t = (jnp.fmod(hi * hi * _c(0.5, a), two) + jnp.fmod(hi * lo, two)
         + jnp.fmod(lo * lo * _c(0.5, a), two))
    t = jnp.fmod(t, two)                       # in (-2, 2): lo may be negative
    return jnp.where(t < 0, t + two, t)


def _sincos_half_square(a, plan):
    """``(sin(pi a^2 / 2), cos(pi a^2 / 2))`` for ``a >= 0`` (NaN stays NaN)."""
    jnp = _np()
    t = _half_square_phase(a, plan)
    quarter = jnp.round(t * _c(2, t))          # t = quarter/2 + r, |r| <= 1/4
    r = t - quarter * _c(0.5, t)
    s0, c0 = jnp.sin(_c(np.pi, r) * r), jnp.cos(_c(np.pi, r) * r)
    q = jnp.fmod(quarter, _c(4, t))
    s = jnp.where(q == 0, s0, jnp.where(q == 1, c0, jnp.where(q == 2, -s0, -c0)))
    c = jnp.where(q == 0, c0, jnp.where(q == 1, -s0, jnp.where(q == 2, -c0, s0)))
    return s, c


def _taylor_from_nodes(a, plan):
    """``(S, C)`` by a Taylor step from the nearest node (for 1 <= a < asym_start)."""
    jnp = _np()
    table = plan.nodes()
    last = table.shape[1] - 1
    k = jnp.clip(jnp.floor(a * _c(_NODES_PER_UNIT, a) + _c(0.5, a)), 0, last)
    x0 = k / _c(_NODES_PER_UNIT, a)
    d = a - x0                                  # exact: |d| <= 1/32
    k = k.astype(np.int32)
    s0, c0, sin0, cos0 = (jnp.take(jnp.asarray(row), k) for row in table)
    pd = _c(np.pi, a) * d
    # b_n = c_n d^n: b_(n+1) = i pi d (x0 b_n + d b_(n-1)) / (n+1); J = d sum b_n / (n+1)
    b_re, b_im = jnp.ones_like(a), jnp.zeros_like(a)
    p_re, p_im = jnp.zeros_like(a), jnp.zeros_like(a)
    j_re, j_im = b_re, b_im
    for n in range(plan.taylor_terms - 1):
        w_re = x0 * b_re + d * p_re
        w_im = x0 * b_im + d * p_im
        p_re, p_im = b_re, b_im
        b_re = -pd * w_im / _c(n + 1, a)
        b_im = pd * w_re / _c(n + 1, a)
        j_re = j_re + b_re / _c(n + 2, a)
        j_im = j_im + b_im / _c(n + 2, a)
    j_re, j_im = j_re * d, j_im * d
    return s0 + sin0 * j_re + cos0 * j_im, c0 + cos0 * j_re - sin0 * j_im


def _auxiliary(a, s, c, plan):
    """``(S, C)`` from the asymptotic series of the auxiliary functions (large a)."""
    jnp = _np()
    z = _c(np.pi, a) * a * a
    w = _c(1, a) / z
    w2 = w * w
    f_sum = g_sum = jnp.ones_like(a)
    f_term, g_term = f_sum, g_sum
    for m in range(plan.asym_terms - 1):
        f_term = -f_term * _c((4 * m + 1) * (4 * m + 3), a) * w2
        g_term = -g_term * _c((4 * m + 3) * (4 * m + 5), a) * w2
        f_sum, g_sum = f_sum + f_term, g_sum + g_term
    f = f_sum / (_c(np.pi, a) * a)
    g = g_sum * w / (_c(np.pi, a) * a)   # 1/(pi^2 a^3) = w / (pi a)
    half = _c(0.5, a)
    return half - f * c - g * s, half + f * s - g * c


def _fresnel_impl(x):
    """``(S(x), C(x))`` for real floating ``x`` (float32 or float64)."""
    jnp = _np()
    plan = _PLANS[64 if x.dtype == np.float64 else 32]
    a = jnp.abs(x)
    in_series = a < _c(plan.series_end, a)
    in_asym = a >= _c(plan.asym_start, a)
    # every range sees only arguments of its own (finite) range
    a_series = jnp.where(in_series, a, _c(0.5, a))
    a_mid = jnp.where(jnp.logical_or(in_series, in_asym), _c(2, a), a)
    a_mid = jnp.where(jnp.isnan(a_mid), _c(2, a), a_mid)
    a_asym = jnp.where(in_asym & jnp.isfinite(a), a, _c(2 * plan.asym_start, a))

    v = a_series * a_series
    v = v * v
    c_series = a_series * _horner(plan.series_p, v)
    s_series = a_series * a_series * a_series * _horner(plan.series_q, v)

    s_mid, c_mid = _taylor_from_nodes(a_mid, plan)

    s_asy, c_asy = _sincos_half_square(a_asym, plan)
    s_asy, c_asy = _auxiliary(a_asym, s_asy, c_asy, plan)
    half = _c(0.5, a)
    s_asy = jnp.where(jnp.isinf(a), half, s_asy)
    c_asy = jnp.where(jnp.isinf(a), half, c_asy)

    s_out = jnp.where(in_series, s_series, jnp.where(in_asym, s_asy, s_mid))
    c_out = jnp.where(in_series, c_series, jnp.where(in_asym, c_asy, c_mid))
    neg = x < 0
    nan = jnp.isnan(x)
    s_out = jnp.where(nan, x, jnp.where(neg, -s_out, s_out))
    c_out = jnp.where(nan, x, jnp.where(neg, -c_out, c_out))
    return s_out, c_out


def _sincos_of_x(x):
    """``(sin(pi x^2 / 2), cos(pi x^2 / 2))`` (both even in x), differentiable."""
    plan = _PLANS[64 if x.dtype == np.float64 else 32]
    return _sincos_half_square(_np().abs(x), plan)


_FRESNEL = []


def _fresnel_custom():
    if not _FRESNEL:
        from jaxlite._src.api.custom_derivatives import custom_jvp

        @custom_jvp
        def fresnel(x):
            return _fresnel_impl(x)

        @fresnel.defjvp
        def _fresnel_jvp(primals, tangents):
            (x,), (dx,) = primals, tangents
            s, c = _sincos_of_x(x)
            return fresnel(x), (s * dx, c * dx)

        _FRESNEL.append(fresnel)
    return _FRESNEL[0]


def fresnel(x):
    """The Fresnel integrals ``(S(x), C(x))``, ``S(x) = int_0^x sin(pi t^2 / 2) dt`` and
    ``C(x) = int_0^x cos(pi t^2 / 2) dt`` (``scipy.special.fresnel``), for real ``x``.

    Integer inputs become the default float type; float16/bfloat16 are computed in float32
    and rounded back; results are never weakly typed. Differentiable (``S' = sin(pi x^2/2)``,
    ``C' = cos(pi x^2/2)``, to any order), jittable and batchable. Complex inputs raise
    ``NotImplementedError``."""
    from jaxlite._src.lax import elementwise as lax_ew
    (x,) = promote_args_inexact("fresnel", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    out_dtype = x.dtype
    work = np.float64 if out_dtype == np.float64 else np.float32
    x = lax_ew._convert_element_type(x, work, weak_type=False)
    s, c = _fresnel_custom()(x)
    if work != out_dtype:
        s = lax_ew._convert_element_type(s, out_dtype, weak_type=False)
        c = lax_ew._convert_element_type(c, out_dtype, weak_type=False)
    return s, c
