"""Special functions the samplers need, computed as XLA computes them on CPU.

``erf_inv_p`` (named ``erf_inv_xla``, apart from lax's SciPy-based ``erf_inv``) is a primitive (Giles' polynomial approximations, XLA's coefficients and
branch points), with a chunked NumPy impl because ``normal`` runs it over whole sample
arrays. ``erf_p`` (``erf_xla``) likewise reproduces XLA's
float32 erf (a rational approximation evaluated with fused multiply-adds). ``lgamma`` is a
composition of lax operations following XLA's Lanczos expansion with reflection.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.prims.base import check_dtype_kind

__all__ = ["erf_inv_p", "erf_inv", "erf_p", "erf", "lgamma"]

_F32_LT5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
            0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_F32_GE5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
            0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

_F64_LT625 = (-3.6444120640178196996e-21, -1.685059138182016589e-19,
              1.2858480715256400167e-18, 1.115787767802518096e-17,
              -1.333171662854620906e-16, 2.0972767875968561637e-17,
              6.6376381343583238325e-15, -4.0545662729752068639e-14,
              -8.1519341976054721522e-14, 2.6335093153082322977e-12,
              -1.2975133253453532498e-11, -5.4154120542946279317e-11,
              1.051212273321532285e-09, -4.1126339803469836976e-09,
              -2.9070369957882005086e-08, 4.2347877827932403518e-07,
              -1.3654692000834678645e-06, -1.3882523362786468719e-05,
              0.0001867342080340571352, -0.00074070253416626697512,
              -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356)
_F64_LT16 = (2.2137376921775787049e-09, 9.0756561938885390979e-08,
             -2.7517406297064545428e-07, 1.8239629214389227755e-08,
             1.5027403968909827627e-06, -4.013867526981545969e-06,
             2.9234449089955446044e-06, 1.2475304481671778723e-05,
             -4.7318229009055733981e-05, 6.8284851459573175448e-05,
             2.4031110387097893999e-05, -0.0003550375203628474796,
             0.00095328937973738049703, -0.0016882755560235047313,
             0.0024914420961078508066, -0.0037512085075692412107,
             0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635)
_F64_GE16 = (-2.7109920616438573243e-11, -2.5556418169965252055e-10,
             1.5076572693500548083e-09, -3.7894654401267369937e-09,
             7.6157012080783393804e-09, -1.4960026627149240478e-08,
             2.9147953450901080826e-08, -6.7711997758452339498e-08,
             2.2900482228026654717e-07, -9.9298272942317002539e-07,
             4.5260625972231537039e-06, -1.9681778105531670567e-05,
             7.5995277030017761139e-05, -0.00021503011930044477347,
             -0.00013871931833623122026, 1.0103004648645343977, 4.8499064014085844221)

_CHUNK = 1 << 16


def _horner(coefs, w, dt):
    p = np.multiply(w, dt.type(coefs[0]))
    for c in coefs[1:-1]:
        p += dt.type(c)
        p *= w
    p += dt.type(coefs[-1])
    return p


def _erf_inv_block(x):
    dt = x.dtype
    w = np.multiply(x, x)
    np.negative(w, out=w)
    np.log1p(w, out=w)
    np.negative(w, out=w)
    if dt.itemsize <= 4:
        far = w >= dt.type(5.0)
        t = np.subtract(w, dt.type(2.5))
        p = _horner(_F32_LT5, t, dt)
        if far.any():   # |x| > 0.9966: the tail polynomial in sqrt(w), on few elements
            idx = np.nonzero(far)
            p[idx] = _horner(_F32_GE5, np.sqrt(w[idx]) - dt.type(3.0), dt)
    else:
        sw = np.sqrt(w)
        p = np.where(w < 6.25, _horner(_F64_LT625, w - 3.125, dt),
                     np.where(w < 16.0, _horner(_F64_LT16, sw - 3.25, dt),
                              _horner(_F64_GE16, sw - 5.0, dt)))
    p *= x
    edge = np.abs(x) == dt.type(1)
    if edge.any():
        p[edge] = x[edge] * dt.type(np.inf)
    return p


def erf_inv_impl(x):
    """NumPy erf_inv as XLA computes it (f32 arithmetic for f16/bf16/f32, f64 for f64)."""
    from jaxlite._src.random import kernels as K
    x = np.asarray(x)
    dt = x.dtype
    work = x if dt in (np.float32, np.float64) else x.astype(np.float32)
    flat = np.ascontiguousarray(work).reshape(-1)
    out = np.empty(flat.shape, work.dtype)

    def run(lo, hi):
        s = K.scratch()
        for c in range(lo, hi, K.CHUNK):
            e = min(c + K.CHUNK, hi)
            if work.dtype == np.float32:
                K.erf_inv_f32(flat[c:e], out[c:e], s)
            else:
                out[c:e] = _erf_inv_block(flat[c:e])

    K.parallel_chunks(run, flat.shape[0])
    out = out.reshape(x.shape)
    return out if out.dtype == dt else out.astype(dt)


class ErfInv(Primitive):
    """Elementwise inverse error function with XLA's CPU arithmetic (``lax.erf_inv`` as
    JAX computes it; bit-exact for float32, which the samplers need)."""
    name = "erf_inv_xla"

    def sharding_rule(self, avals, **params):
        """Elementwise: operand dimension k is output dimension k."""
        from jaxlite._src.prims.base import elementwise_sharding_rule
        return elementwise_sharding_rule(avals)

    def impl(self, x):
        return erf_inv_impl(x)

    def abstract_eval(self, x):
        check_dtype_kind("erf_inv_xla", "float", x.dtype)
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents):
        (x,), (t,) = primals, tangents
        y = self.bind(x)
        c = lax_shape.full((), np.sqrt(np.pi) / 2.0, x.dtype)
        return y, lax.mul(t, lax.mul(c, lax.exp(lax.mul(y, y))))

    def batch(self, size, args, dims):
        return self.bind(args[0]), dims[0]


erf_inv_p = ErfInv()


def erf_inv(x):
    """Elementwise inverse error function."""
    return erf_inv_p.bind(x)


def _c(x, v):
    return lax_shape.full((), v, x.dtype)


def _poly(x, coefs):
    p = _c(x, coefs[0])
    for c in coefs[1:]:
        p = lax.add(lax.mul(p, x), _c(x, c))
    return p


_ERF_ALPHA = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
              0.18520832239976145, 1.128379143519084)
_ERF_BETA = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
             0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0)


def _fma32(a, b, c):
    """float32 fused multiply-add (the float64 product of two float32 values is exact)."""
    return (a.astype(np.float64) * b + np.float64(c)).astype(np.float32)


def erf_impl(x):
    """NumPy erf as XLA's CPU backend computes it: Eigen's rational approximation with
    fused multiply-adds for float32 (narrower floats go through float32); libm for
    float64."""
    x = np.asarray(x)
    if x.dtype == np.float64:
        import scipy.special
        return scipy.special.erf(x)
    xf = x.astype(np.float32)
    x2 = xf * xf
    p = _fma32(x2, np.float32(_ERF_ALPHA[0]), _ERF_ALPHA[1])
    for c in _ERF_ALPHA[2:]:
        p = _fma32(x2, p, np.float32(c))
    p = xf * p
    q = _fma32(x2, np.float32(_ERF_BETA[0]), _ERF_BETA[1])
    for c in _ERF_BETA[2:]:
        q = _fma32(x2, q, np.float32(c))
    r = np.where(np.abs(xf) >= np.float32(3.832506856900711), np.copysign(np.float32(1), xf),
                 p / q)
    return np.asarray(r, x.dtype)


class ErfXla(Primitive):
    """Elementwise error function with XLA's CPU arithmetic (as ``lax.erf`` in JAX)."""
    name = "erf_xla"

    def sharding_rule(self, avals, **params):
        """Elementwise: operand dimension k is output dimension k."""
        from jaxlite._src.prims.base import elementwise_sharding_rule
        return elementwise_sharding_rule(avals)

    def impl(self, x):
        return erf_impl(x)

    def abstract_eval(self, x):
        check_dtype_kind("erf_xla", "float", x.dtype)
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents):
        (x,), (t,) = primals, tangents
        c = lax_shape.full((), 2.0 / np.sqrt(np.pi), x.dtype)
        return self.bind(x), lax.mul(t, lax.mul(c, lax.exp(lax.neg(lax.mul(x, x)))))

    def batch(self, size, args, dims):
        return self.bind(args[0]), dims[0]


erf_p = ErfXla()


def erf(x):
    """Elementwise error function (XLA's float32 approximation)."""
    return erf_p.bind(x)


_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS_COEFS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                  771.3234287776530788486528258894, -176.61502916214059906584551354,
                  12.507343278686904814458936853, -0.13857109526572011689554707,
                  9.984369578019570859563e-6, 1.50563273514931155834e-7)


def lgamma(x):
    """Elementwise log|Gamma(x)| (XLA's Lanczos approximation with reflection)."""
    one_half = _c(x, 0.5)
    one = _c(x, 1.0)
    need_reflect = lax.lt(x, one_half)
    z = lax.select(need_reflect, lax.neg(x), lax.sub(x, one))
    acc = _c(x, _LANCZOS_BASE)
    for i, coef in enumerate(_LANCZOS_COEFS):
        acc = lax.add(acc, lax.div(_c(x, coef), lax.add(z, _c(x, i + 1))))
    gph = _c(x, _LANCZOS_G + 0.5)
    t = lax.add(z, gph)
    log_t = lax.add(_c(x, np.log(_LANCZOS_G + 0.5)), lax.log1p(lax.div(z, gph)))
    log_y = lax.add(lax.add(_c(x, np.log(np.sqrt(2 * np.pi))),
                            lax.mul(lax.sub(lax.add(z, one_half), lax.div(t, log_t)), log_t)),
                    lax.log(acc))
    abs_x = lax.abs(x)
    frac = lax.sub(abs_x, lax.floor(abs_x))
    reduced = lax.select(lax.gt(frac, one_half), lax.sub(one, frac), frac)
    denom = lax.log(lax.sin(lax.mul(_c(x, np.pi), reduced)))
    reflection = lax.select(lax.is_finite(denom),
                            lax.sub(lax.sub(_c(x, np.log(np.pi)), denom), log_y),
                            lax.neg(denom))
    result = lax.select(need_reflect, reflection, log_y)
    is_inf = lax.eq(abs_x, _c(x, np.inf))
    return lax.select(is_inf, lax_shape.full_like(x, np.inf), result)


class FusedMultiplyAdd(Primitive):
    """``x * y + z`` rounded once, as XLA's CPU backend computes a multiply feeding an add
    (it contracts them into an FMA). Exact for float32 and narrower (the float64 product of
    float32 values is exact); float64 rounds twice."""
    name = "fused_multiply_add"

    def sharding_rule(self, avals, **params):
        """Elementwise: operand dimension k is output dimension k."""
        from jaxlite._src.prims.base import elementwise_sharding_rule
        return elementwise_sharding_rule(avals)

    def impl(self, x, y, z):
        dt = np.result_type(x, y, z)
        if dt.itemsize <= 4:
            r = np.asarray(x, np.float64) * np.asarray(y, np.float64) + np.asarray(z, np.float64)
            return np.asarray(r.astype(np.float32), dt)
        return np.asarray(x * y + z, dt)

    def abstract_eval(self, x, y, z):
        from jaxlite._src.prims.base import broadcast_shapes_or_scalar
        if not x.dtype == y.dtype == z.dtype:
            raise TypeError("fused_multiply_add requires arguments to have the same dtypes")
        check_dtype_kind("fused_multiply_add", "float", x.dtype)
        shape = broadcast_shapes_or_scalar("fused_multiply_add", [x.shape, y.shape, z.shape])
        return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type and z.weak_type)

    def jvp(self, primals, tangents):
        from jaxlite._src.prims import ad_util as u
        x, y, z = primals
        tx, ty, tz = tangents
        out = self.bind(x, y, z)
        terms = []
        if not u.is_zero(tx):
            terms.append(lax.mul(tx, y))
        if not u.is_zero(ty):
            terms.append(lax.mul(x, ty))
        if not u.is_zero(tz):
            terms.append(tz)
        shape = tuple(u.aval(out).shape)
        if not terms:
            return out, u.zeros(u.aval(out))
        t = u.bcast(terms[0], shape)
        for s in terms[1:]:
            t = lax.add(t, u.bcast(s, shape))
        return out, t

    def batch(self, size, args, dims):
        from jaxlite._src.prims.base import broadcast_batcher
        return broadcast_batcher(self, size, args, dims, {})


fma_p = FusedMultiplyAdd()


def fma(x, y, z):
    """``x * y + z`` with one rounding (XLA CPU's contraction of multiply-add)."""
    return fma_p.bind(x, y, z)
