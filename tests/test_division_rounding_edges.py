"""Edge cases found by comparing random jnp calls with JAX 0.10.2: integer division and
remainder by zero, CPython-style float floor division, rounding of bools, ldexp's dtype
rules and derivative, dtype errors of lax's binary primitives, axes of 0-d arrays.
Expected values are JAX's (written down here, so the tests stand without JAX)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

INTS = np.array([0, -1, 3, -3, 1, 7], np.int32)
ZEROS = np.zeros(6, np.int32)


def test_integer_division_by_zero_as_jax():
    # XLA: x / 0 = -1 and rem(x, 0) = x; jnp then corrects by the signs
    np.testing.assert_array_equal(jnp.floor_divide(INTS, ZEROS), [-1, -2, -2, -2, -2, -2])
    np.testing.assert_array_equal(jnp.remainder(INTS, ZEROS), np.zeros(6))
    np.testing.assert_array_equal(jnp.fmod(INTS, ZEROS), np.zeros(6))
    q, r = jnp.divmod(INTS, ZEROS)
    np.testing.assert_array_equal(q, [-1, -2, -2, -2, -2, -2])
    np.testing.assert_array_equal(r, np.zeros(6))
    u = np.array([0, 3], np.uint32)
    np.testing.assert_array_equal(jnp.floor_divide(u, u * 0), [4294967295] * 2)
    np.testing.assert_array_equal(jnp.remainder(u, u * 0), [0, 0])
    # nonzero divisors keep Python's semantics
    a, b = np.array([-7, 7, -7, 7], np.int32), np.array([2, -2, -2, 2], np.int32)
    np.testing.assert_array_equal(jnp.floor_divide(a, b), np.floor_divide(a, b))
    np.testing.assert_array_equal(jnp.remainder(a, b), np.remainder(a, b))
    np.testing.assert_array_equal(jnp.fmod(a, b), np.fmod(a, b))


def test_float_floor_division_is_cpython_divmod():
    x = np.array([-np.inf, np.inf, 5., -5., np.nan, 0., 1., -1., 7.5], np.float32)
    y = np.array([6, 0, 0, np.inf, 1, 0, .1, .1, -2], np.float32)
    q = jnp.floor_divide(x, y)
    np.testing.assert_array_equal(q, [np.nan, np.inf, np.inf, -1., np.nan, np.nan, 9., -10.,
                                      -4.])
    np.testing.assert_array_equal(q, np.floor_divide(x, y))     # NumPy agrees here
    q2, r2 = jnp.divmod(x, y)
    np.testing.assert_array_equal(q2, q)
    np.testing.assert_array_equal(r2, jnp.remainder(x, y))
    assert float(jnp.floor_divide(np.float32(1), np.float32(0.1))) == 9.0
    with pytest.raises(TypeError, match="floor_divide does not support complex"):
        jnp.floor_divide(np.complex64(1), np.complex64(1))


def test_rounding_keeps_bools_and_ints():
    b = np.array([True, False])
    for f in (jnp.floor, jnp.ceil, jnp.trunc):
        assert f(b).dtype == np.bool_
        assert f(INTS).dtype == np.int32
    with pytest.raises(ValueError, match="not inexact"):
        jnp.round(b)
    with pytest.raises(NotImplementedError, match="decimals < 0"):
        jnp.round(INTS, -1)
    np.testing.assert_array_equal(jnp.round(INTS), INTS)


@pytest.mark.filterwarnings("ignore:overflow")
def test_ldexp_types_values_and_derivative():
    m = np.array([1e-30, 3., -0., np.inf, 1.5, 0.7], np.float32)
    e = np.array([120, -2, 5, 3, 200, 10], np.int32)
    np.testing.assert_array_equal(jnp.ldexp(m, e), np.ldexp(m, e))
    assert float(jnp.ldexp(np.float32(3), True)) == 6.0
    with pytest.raises(ValueError, match="ldexp not supported for input types"):
        jnp.ldexp(m, m)
    with pytest.raises(ValueError, match="ldexp not supported"):
        jnp.ldexp(np.complex64(1), 2)
    g = jax.grad(lambda z: jnp.sum(jnp.ldexp(z, e)))(m)
    # (zero and inf pass through: derivative 1; 1.5 * 2**200 overflows)
    # (2**e through XLA's exp2, exp(e ln 2): a few ulp from the power of two, as in JAX)
    np.testing.assert_allclose(g, [2.0 ** 120, .25, 1, 1, np.inf, 1024], rtol=1e-5)
    # frexp's mantissa moves with x / 2**e
    g = jax.grad(lambda z: jnp.sum(jnp.frexp(z)[0]))(m)
    np.testing.assert_allclose(g, [2.0 ** 99, .25, 1, 1, .5, 1], rtol=1e-5)


def test_lax_binary_dtype_errors_name_the_position():
    b = np.array([True])
    for f, name in ((lax.add, "add"), (lax.mul, "mul"), (lax.sub, "sub")):
        with pytest.raises(TypeError, match=f"{name} does not accept dtype bool at position 0. "
                           "Accepted dtypes at position 0 are subtypes of integer, floating, "
                           "complexfloating."):
            f(b, b)
    with pytest.raises(TypeError, match="rem does not accept dtype complex64 at position 0. "
                       "Accepted dtypes at position 0 are subtypes of integer, floating."):
        lax.rem(np.complex64(1), np.complex64(1))
    with pytest.raises(TypeError, match=r"^sin does not accept dtype int32. Accepted dtypes "
                       "are subtypes of floating, complexfloating.$"):
        lax.sin(np.int32(1))
    np.testing.assert_array_equal(lax.max(b, b), b)     # max/min/comparisons take bools
    with pytest.raises(TypeError, match="mul does not accept dtype bool"):
        jnp.kron(b, b)
    np.testing.assert_array_equal(jnp.multiply(b, b), b)   # jnp's multiply of bools: and


def test_nextafter_has_no_derivative():
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'nextafter'"):
        jax.grad(jnp.spacing)(1.0)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'nextafter'"):
        jax.grad(lambda x: jnp.nextafter(x, 2.0))(1.0)


def test_axes_of_scalars_and_polyval_coefficients():
    x = np.float32(2.0)
    for f in (jnp.cumsum, jnp.cumprod, jnp.nancumsum, jnp.nancumprod):
        with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
            f(x, axis=0)
        np.testing.assert_array_equal(f(x), [2.0])     # no axis: flattened first
    with pytest.raises(ValueError, match="^axis 0 is out of bounds for array of dimension 0$"):
        jnp.take_along_axis(x, np.int32(0), axis=0)
    with pytest.raises(ValueError, match="^axis 5 is out of bounds for array of dimension 1$"):
        jnp.take(np.arange(3.), np.array([0]), axis=5)
    with pytest.raises(IndexError):
        jnp.polyval(np.float32(1), np.arange(3.))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "divmod"])
def test_division_matches_jax(name):
    jax_np = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(0)
    for dt in (np.int32, np.uint8, np.float32, np.int8):
        x = rng.integers(-20, 20, 64).astype(dt)
        y = rng.integers(-3, 4, 64).astype(dt)
        if dt == np.float32:
            x[:4] = [np.inf, -np.inf, np.nan, 0]
            y[:4] = [2, 0, 1, 0]
        want = getattr(jax_np, name)(x, y)
        got = getattr(jnp, name)(x, y)
        for w, g in zip(want if name == "divmod" else (want,), got if name == "divmod" else
                        (got,)):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=str(dt))


@pytest.mark.parametrize("shapes", [((6, 5), (1, 5)), ((6, 5), (6, 1)), ((6, 5), ()),
                                    ((2, 6, 5), (2, 1, 5))])
def test_broadcast_divisors_multiply_by_the_reciprocal(shapes):
    """``a / b`` with ``b`` broadcast over the result (size-1 dimensions, rank 0): XLA's
    simplifier computes ``a * (1 / b)``, eagerly (jnp's ops run as one program) and under
    jit, in float32 and float64; a divisor of the result's shape divides."""
    import jaxlite as jax
    import jaxlite.numpy as jnp
    rng = np.random.default_rng(1)
    for dt in (np.float32, np.float64):
        with jax.experimental.enable_x64(dt == np.float64):
            a = (rng.random(shapes[0]) + 0.1).astype(dt)
            b = (rng.random(shapes[1]) + 0.1).astype(dt)
            want = a * (dt(1) / b)
            assert not np.array_equal(want, a / b)        # (the test can fail)
            for got in (jnp.asarray(a) / jnp.asarray(b), jax.jit(jnp.divide)(a, b)):
                np.testing.assert_array_equal(np.asarray(got), want)
            full = np.broadcast_to(b, a.shape).copy()
            np.testing.assert_array_equal(np.asarray(jax.jit(jnp.divide)(a, full)), a / full)
            jax_ = pytest.importorskip("jax")
            with jax_.enable_x64(dt == np.float64):
                ref = np.asarray(jax_.jit(jax_.numpy.divide)(a, b))
                np.testing.assert_array_equal(ref, want)


@pytest.mark.parametrize("shapes", [((64,), (64,)), ((6, 5), (6, 1)), ((6, 5), (5,)),
                                    ((6, 5), ())])
def test_division_by_a_square_root_is_rsqrt_under_jit(shapes):
    """Under jit ``a / sqrt(b)`` (the root possibly broadcast) is ``a * rsqrt(b)`` as XLA's
    simplifier rewrites it, with XLA's float32 rsqrt; eagerly (one op at a time) it
    divides."""
    import jaxlite as jax
    import jaxlite.numpy as jnp
    from jaxlite._src.cpu_math.rsqrt import rsqrt_f32
    rng = np.random.default_rng(2)
    a = (rng.random(shapes[0]) + 0.1).astype(np.float32)
    b = (rng.random(shapes[1]) + 0.1).astype(np.float32)

    def f(a, b):
        return a / jnp.sqrt(b)
    bb = np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))
    want = np.multiply(a, np.broadcast_to(rsqrt_f32(b), bb.shape))
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(a, b)), want)
    assert "rsqrt" in jax.jit(f).lower(a, b).compile().as_text()
    eager = np.asarray(f(jnp.asarray(a), jnp.asarray(b)))
    root = np.sqrt(b)
    np.testing.assert_array_equal(eager, a / root if b.shape == a.shape else
                                  a * (np.float32(1) / root))
    jax_ = pytest.importorskip("jax")
    np.testing.assert_array_equal(np.asarray(jax_.jit(
        lambda a, b: a / jax_.numpy.sqrt(b))(a, b)), want)
