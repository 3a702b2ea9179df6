"""Extended dtypes defined with JAX's rules protocol (a ``_rules`` class: physical element
aval, convert_to/convert_from, tangent_dtype, add, zero), as flax's fp8 meta dtypes are:
``lax.convert_element_type`` to and from them binds ``to_edtype``/``from_edtype`` and the
rules decide, as in JAX 0.10.2 (jaxpr text and error texts below are JAX's). The dtype is
defined here, not imported from a library."""
import dataclasses
from functools import partial

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import core, lax
from jaxlite._src.core import dtypes


class MaxRules:
    """Like flax's Fp8MetaTyRules: float data, tangents of the same dtype accumulated by
    max."""

    @staticmethod
    def physical_element_aval(dtype):
        return core.ShapedArray((), dtype.float_dtype)

    @staticmethod
    def convert_from(edt, other):
        return edt.float_dtype == other

    @staticmethod
    def convert_to(other, edt):
        return edt.float_dtype == other

    @staticmethod
    def add(dt, x, y):
        f = partial(lax.convert_element_type, new_dtype=dt.float_dtype)
        return lax.convert_element_type(lax.max(f(x), f(y)), dt)

    @staticmethod
    def zero(dt):
        return lax.convert_element_type(np.array(-np.inf, dt.float_dtype), dt)

    @staticmethod
    def tangent_dtype(dtype):
        return dtype


class maxgrad(jax.dtypes.extended):
    pass


@dataclasses.dataclass(frozen=True)
class MaxGrad(dtypes.ExtendedDType):
    float_dtype: np.dtype
    _rules: type = MaxRules
    type: type = maxgrad

    def __repr__(self):
        return f"maxgrad{np.dtype(self.float_dtype).itemsize * 8}"

    name = property(__repr__)


MG32 = MaxGrad(np.dtype("float32"))


def _round_trip(x):
    return lax.convert_element_type(lax.convert_element_type(x, MG32), np.float32) * 2


def test_convert_to_and_from_jaxpr():
    assert str(jax.make_jaxpr(_round_trip)(jnp.ones(3))) == """{ lambda ; a:f32[3]. let
    b:maxgrad32[3] = to_edtype[edtype=maxgrad32] a
    c:f32[3] = from_edtype[dtype=float32] b
    d:f32[3] = mul c 2.0:f32[]
  in (d,) }"""
    np.testing.assert_array_equal(jax.jit(_round_trip)(jnp.arange(3.)), [0., 2., 4.])
    np.testing.assert_array_equal(jax.jit(jax.vmap(_round_trip))(jnp.ones((2, 3))),
                                  np.full((2, 3), 2.))
    # the same dtype: nothing to do
    assert str(jax.make_jaxpr(lambda x: lax.convert_element_type(
        lax.convert_element_type(x, MG32), MG32))(jnp.ones(2))).count("to_edtype") == 1


def test_conversion_errors_are_jaxs():
    with pytest.raises(ValueError, match="^Cannot convert_element_type from int32 to "
                                         "maxgrad32\n"):
        jax.make_jaxpr(lambda x: lax.convert_element_type(x, MG32))(jnp.ones(3, jnp.int32))
    with pytest.raises(ValueError, match="^Cannot convert_element_type from maxgrad32 to "
                                         "int32\n"):
        jax.make_jaxpr(lambda x: lax.convert_element_type(
            lax.convert_element_type(x, MG32), np.int32))(jnp.ones(3))
    with pytest.raises(ValueError, match="cannot directly convert between extended dtypes: "
                                         "from maxgrad32 to maxgrad16.*\n"
                                         "maxgrad32 -> float32 -> float16 -> maxgrad16"):
        jax.make_jaxpr(lambda x: lax.convert_element_type(
            lax.convert_element_type(x, MG32), MaxGrad(np.dtype("float16"))))(jnp.ones(3))


def test_tangents_accumulate_with_the_dtypes_add():
    # d/ds of x * s**3 with s used through the max-accumulating dtype in three scan steps:
    # the three contributions x * s**2 are max-ed (4.5), not summed (13.5); ordinary float
    # uses of the converted value still sum (h: 3x + x)
    def g(x, s):
        sm = lax.convert_element_type(s, MG32)
        return lax.scan(lambda c, _: (c * lax.convert_element_type(sm, np.float32), None),
                        x, None, length=3)[0]

    gx, gs = jax.jit(jax.grad(g, (0, 1)))(2.0, 1.5)
    assert (float(gx), float(gs)) == (3.375, 4.5)

    def h(x, s):
        a = lax.convert_element_type(lax.convert_element_type(s, MG32), np.float32)
        return x * a * 3. + x * a

    hx, hs = jax.jit(jax.grad(h, (0, 1)))(2.0, 1.5)
    assert (float(hx), float(hs)) == (6.0, 8.0)


def test_matches_jax():
    rjax = pytest.importorskip("jax")
    from jax._src import core as jcore
    from jax._src import dtypes as jdtypes

    class JRules(MaxRules):
        @staticmethod
        def physical_element_aval(dtype):
            return jcore.ShapedArray((), dtype.float_dtype)

    class jmaxgrad(jdtypes.extended):
        pass

    @dataclasses.dataclass(frozen=True)
    class JMaxGrad(jdtypes.ExtendedDType):
        float_dtype: np.dtype
        _rules: type = JRules
        type: type = jmaxgrad

        def __repr__(self):
            return f"maxgrad{np.dtype(self.float_dtype).itemsize * 8}"

        name = property(__repr__)

    jmg = JMaxGrad(np.dtype("float32"))

    def jround(x):
        c = rjax.lax.convert_element_type
        return c(c(x, jmg), np.float32) * 2

    want = str(rjax.make_jaxpr(jround)(rjax.numpy.ones(3)))
    assert str(jax.make_jaxpr(_round_trip)(jnp.ones(3))) == want


def test_supports_inf():
    import ml_dtypes
    assert dtypes.supports_inf(np.float32) and dtypes.supports_inf(ml_dtypes.float8_e5m2)
    assert not dtypes.supports_inf(ml_dtypes.float8_e4m3fn)
    assert not dtypes.supports_inf(ml_dtypes.float8_e4m3fnuz)
    assert not dtypes.supports_inf(np.int32)
