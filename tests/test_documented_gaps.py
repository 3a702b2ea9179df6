"""Behaviour JAX documents and jaxlite once got wrong (found by running JAX's documented
programs and random programs against JAX). Each test states JAX 0.10.2's result; where real
JAX is installed, the same call is also run there."""
import math

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _jax():
    try:
        import jax as real
        return real
    except ImportError:
        pytest.skip("jax not installed")


# -- derivatives of logaddexp, softplus, sinc


@pytest.mark.parametrize("fn", ["logaddexp", "logaddexp2"])
def test_logaddexp_grad_at_equal_arguments_is_half(fn):
    f = getattr(jnp, fn)
    g = jax.grad(f, (0, 1))(1.0, 1.0)
    assert [float(v) for v in g] == [0.5, 0.5]
    assert all(v.weak_type for v in g)
    # away from the diagonal: d/dx1 = exp(x1 - out) (base 2 for logaddexp2)
    x1, x2 = np.float32(0.3), np.float32(-1.2)
    out = np.logaddexp(x1, x2) if fn == "logaddexp" else np.logaddexp2(x1, x2)
    base = np.e if fn == "logaddexp" else 2.0
    np.testing.assert_allclose(float(jax.grad(f)(x1, x2)), base ** (x1 - out), rtol=1e-6)


def test_logaddexp_infinities_and_nans():
    assert float(jnp.logaddexp(-jnp.inf, -jnp.inf)) == -np.inf
    assert float(jnp.logaddexp(jnp.inf, jnp.inf)) == np.inf
    assert math.isnan(float(jnp.logaddexp(jnp.nan, 1.0)))
    # the tangent never turns inf - inf into NaN
    assert float(jax.grad(jnp.logaddexp)(jnp.inf, 1.0)) == 1.0
    # JAX's rule replaces +inf by 0 on both sides: exp(1 - 0)
    np.testing.assert_allclose(float(jax.grad(jnp.logaddexp, 1)(jnp.inf, 1.0)), np.e,
                               rtol=1e-6)


def test_logaddexp_complex_matches_numpy():
    a = np.array([1 + 2j, -3 + 1j, 0.5 - 4j], np.complex64)
    b = np.array([2 - 1j, 3j, -0.5 + 2j], np.complex64)
    got = np.asarray(jnp.logaddexp(a, b))
    want = np.log(np.exp(a.astype(np.complex128)) + np.exp(b.astype(np.complex128)))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert np.all(np.abs(got.imag) <= np.pi)


def test_softplus_and_log_sigmoid_grad_at_zero():
    assert float(jax.grad(jax.nn.softplus)(0.0)) == 0.5
    assert float(jax.grad(jax.nn.log_sigmoid)(0.0)) == 0.5


def test_logaddexp_jaxpr_is_a_custom_jvp_call():
    text = str(jax.make_jaxpr(jnp.logaddexp)(1.0, 2.0))
    assert "custom_jvp_call" in text and "name=logaddexp" in text
    assert "jvp=_logaddexp_jvp" in text


def test_sinc_derivatives_at_zero():
    # JAX's docstring: (d/dx)^k sinc(0) for k = 1..5
    want = [0.0, -(np.pi ** 2) / 3, 0.0, np.pi ** 4 / 5, 0.0]
    f = jnp.sinc
    for k, w in enumerate(want, 1):
        f = jax.grad(f)
        np.testing.assert_allclose(float(f(0.0)), w, rtol=1e-5, atol=1e-6, err_msg=f"k={k}")
    x = np.linspace(-3, 3, 13).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.sinc(x)), np.sinc(x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(jnp.sinc))(x[x != 0])),
                               [(np.cos(np.pi * v) * np.pi * v - np.sin(np.pi * v)) /
                                (np.pi * v ** 2) for v in x[x != 0]], rtol=1e-4, atol=1e-5)


def test_logaddexp_grads_against_jax():
    real = _jax()
    xs = [(1.0, 1.0), (0.3, -2.0), (-np.inf, 0.0), (5.0, 5.0)]
    for a, b in xs:
        for fn in ("logaddexp", "logaddexp2"):
            got = jax.grad(getattr(jnp, fn), (0, 1))(a, b)
            want = real.grad(getattr(real.numpy, fn), (0, 1))(a, b)
            np.testing.assert_allclose([float(v) for v in got], [float(v) for v in want],
                                       rtol=1e-6, err_msg=f"{fn}{a, b}")


# -- angle, imag


def test_angle_of_negative_reals_is_plus_pi():
    assert float(jnp.angle(-1.0)) == np.float32(np.pi)
    np.testing.assert_array_equal(np.asarray(jnp.angle(jnp.array([-1.0, -2.0, 0.0, 3.0]))),
                                  np.float32([np.pi, np.pi, 0, 0]))
    assert float(jnp.angle(jnp.array(-1, jnp.int32))) == np.float32(np.pi)


def test_imag_of_reals_is_positive_zero():
    out = np.asarray(jnp.imag(jnp.array([-1.0, np.nan, np.inf])))
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])
    assert not np.signbit(out).any()


# -- indexing


def test_static_out_of_bounds_index_clamps():
    x = jnp.arange(10)
    assert int(x[11]) == 9 and int(x[-11]) == 0
    y = jnp.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(y[5, 1:3]), [9, 10])
    assert int(y[1, 7]) == 7


def test_asarray_none_raises_value_error():
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jnp.asarray(None)
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jnp.array(None)
