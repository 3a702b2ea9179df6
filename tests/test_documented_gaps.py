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


def test_list_index_raises_type_error_as_jax():
    x = jnp.arange(5)
    with pytest.raises(TypeError, match=r"use `arr\[array\(seq\)\]` instead"):
        x[[-1]]
    with pytest.raises(TypeError, match=r"use `arr\[tuple\(seq\)\]` instead"):
        x[[slice(None)]]
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x.at[[1]].set(3)
    # lists inside a tuple stay index arrays
    np.testing.assert_array_equal(np.asarray(jnp.arange(6).reshape(2, 3)[[0, 1], [1, 2]]),
                                  [1, 5])


# -- rounding, frexp, shifts, bit casts


def test_rint_and_round_of_complex_round_each_part():
    z = jnp.array([1.5 + 2.5j, -0.5 - 1.5j], jnp.complex64)
    np.testing.assert_array_equal(np.asarray(jnp.rint(z)), np.rint(np.asarray(z)))
    np.testing.assert_allclose(np.asarray(jnp.round(jnp.array([1.56 + 2.54j]), 1)),
                               [1.6 + 2.5j], rtol=1e-6)


def test_frexp_special_values_and_subnormals():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, 8.0, 0.75, -3.5, 1e-40, -1e-42,
                  3.4e38, 7.999999], np.float32)
    m, e = jnp.frexp(x)
    mm, ee = np.frexp(x)
    np.testing.assert_array_equal(np.asarray(m), mm)
    np.testing.assert_array_equal(np.asarray(e), np.where(np.isfinite(x), ee, 0))
    assert np.asarray(e).dtype == np.int32
    rng = np.random.RandomState(0)
    r = (rng.randn(2000) * 10.0 ** rng.randint(-40, 38, 2000)).astype(np.float32)
    m, e = jax.jit(jnp.frexp)(r)
    np.testing.assert_array_equal(np.asarray(m), np.frexp(r)[0])
    np.testing.assert_array_equal(np.asarray(e), np.frexp(r)[1])


def test_shift_right_arithmetic_replicates_sign_bit_of_unsigned():
    x = jnp.array([0xF0000000, 0x70000000], jnp.uint32)
    out = lax.shift_right_arithmetic(x, jnp.array([4, 4], jnp.uint32))
    np.testing.assert_array_equal(np.asarray(out), [0xFF000000, 0x07000000])
    assert int(lax.shift_right_arithmetic(jnp.uint8(200), jnp.uint8(9))) == 255
    assert int(lax.shift_right_arithmetic(jnp.int32(-8), jnp.int32(-1))) == -1
    assert int(lax.shift_right_arithmetic(jnp.int32(-8), jnp.int32(40))) == -1
    assert int(lax.shift_right_arithmetic(jnp.int32(8), jnp.int32(40))) == 0


def test_bitcast_convert_type_same_and_different_widths():
    f = jnp.array([1.0, 2.0], jnp.float32)
    assert int(lax.bitcast_convert_type(1.0, jnp.int32)) == 0x3F800000
    halves = lax.bitcast_convert_type(f, jnp.int16)
    assert halves.shape == (2, 2)
    np.testing.assert_array_equal(np.asarray(halves), np.asarray(f).view(np.int16).reshape(2, 2))
    back = lax.bitcast_convert_type(halves, jnp.float32)
    np.testing.assert_array_equal(np.asarray(back), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(jax.jit(lax.bitcast_convert_type,
                                                     static_argnums=1)(f, jnp.uint8)),
                                  np.asarray(f).view(np.uint8).reshape(2, 4))
    with pytest.raises(ValueError, match=r"but 3 \* 16 != 32"):
        lax.bitcast_convert_type(jnp.ones((3, 3), jnp.int16), jnp.float32)
    assert "bitcast_convert_type[new_dtype=uint8]" in str(
        jax.make_jaxpr(lambda x: lax.bitcast_convert_type(x, jnp.uint8))(f))


def test_bfloat16_dots_with_batch_dimensions():
    rng = np.random.RandomState(0)
    a = rng.randn(2, 3, 16).astype(jnp.bfloat16)
    b = rng.randn(5, 16).astype(jnp.bfloat16)
    c = rng.randn(2, 16, 4).astype(jnp.bfloat16)
    # float32 accumulation rounded once to bfloat16; BLAS's summation order varies with the
    # processor, so compare within one bfloat16 step rather than bit for bit
    want = np.einsum("ijk,lk->ijl", a.astype(np.float32), b.astype(np.float32))
    got = jnp.inner(a, b)
    assert got.dtype == jnp.bfloat16 and got.shape == (2, 3, 5)
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(np.asarray(jnp.matmul(a, c), np.float32),
                               np.matmul(a.astype(np.float32), c.astype(np.float32)),
                               rtol=1e-2, atol=1e-2)


# -- split, axes


@pytest.mark.parametrize("fn", ["split", "array_split"])
@pytest.mark.parametrize("points", [[-3], [5, 2], [12]])
def test_split_rejects_bad_split_points(fn, points):
    with pytest.raises(ValueError, match="Sizes passed to split must be nonnegative"):
        getattr(jnp, fn)(jnp.arange(10), points)


def test_split_points_in_range_still_work():
    parts = jnp.split(jnp.arange(10), [3, 3, 7])
    assert [p.shape[0] for p in parts] == [3, 0, 4, 3]
    with pytest.raises(ValueError, match="Sum of sizes 11 must be equal to dimension 0"):
        lax.split(jnp.arange(10), (3, 8))


def test_bad_axis_is_a_plain_value_error():
    for f in (lambda: jnp.sum(jnp.ones(3), axis=2), lambda: jnp.moveaxis(jnp.ones(3), 2, 0),
              lambda: jnp.expand_dims(jnp.ones(3), 3), lambda: jnp.cumsum(jnp.ones(3), 1)):
        with pytest.raises(ValueError) as info:
            f()
        assert type(info.value) is ValueError
    with pytest.raises(IndexError):
        jnp.swapaxes(jnp.ones(3), 0, 3)


def test_softmax_jaxpr_is_jax_default():
    text = str(jax.make_jaxpr(jax.nn.softmax)(jnp.ones(3)))
    assert "custom_jvp_call" not in text and "stop_gradient" in text
    x = jnp.array([1.0, 2.0, 5.0])
    g = jax.grad(lambda x: jax.nn.softmax(x)[2])(x)
    y = np.exp(np.array([1.0, 2.0, 5.0])) / np.exp(np.array([1.0, 2.0, 5.0])).sum()
    np.testing.assert_allclose(np.asarray(g), y[2] * ((np.arange(3) == 2) - y), rtol=1e-5)
    jax.config.update("jax_softmax_custom_jvp", True)
    try:
        assert "custom_jvp_call" in str(jax.make_jaxpr(jax.nn.softmax)(jnp.ones(3)))
        np.testing.assert_allclose(np.asarray(jax.grad(lambda x: jax.nn.softmax(x)[2])(x)),
                                   np.asarray(g), rtol=1e-5)
    finally:
        jax.config.update("jax_softmax_custom_jvp", False)


# -- error texts


def _true(x):
    return (x, x)


def _false(x):
    return (x, x.astype(jnp.int32))


def _message(f):
    with pytest.raises(TypeError) as info:
        f()
    return str(info.value)


def test_cond_type_mismatch_names_branches_and_path():
    msg = _message(lambda: lax.cond(True, _true, _false, 1.0))
    line = _true.__code__.co_firstlineno
    assert msg == (
        "cond branches must have equal output types but they differ.\n\n"
        f"true_fun is _true at {__file__}:{line}\n"
        f"false_fun is _false at {__file__}:{line + 4}\n\n"
        "The output of true_fun at path [1] has type float32[] but the corresponding output "
        "of false_fun has type int32[], so the dtypes do not match.\n\n"
        "Revise true_fun and/or false_fun so that all output types match.")
    msg = _message(lambda: lax.cond(True, lambda x: {"a": x, "b": jnp.ones(3)},
                                    lambda x: {"a": x, "b": jnp.ones(4)}, 1.0))
    assert ("The output of true_fun at path ['b'] has type float32[3] but the corresponding "
            "output of false_fun has type float32[4], so the shapes do not match.") in msg
    msg = _message(lambda: lax.cond(True, lambda x: x, lambda x: (x, x), 1.0))
    assert msg.startswith("cond branch outputs must have the same pytree structure")
    assert ("true_fun output is a pytree leaf but false_fun output is a <class 'tuple'>, so "
            "their Python types differ.") in msg
    msg = _message(lambda: lax.switch(1, [lambda x: x, lambda x: x.astype(jnp.int32)], 1.0))
    assert "The output of branch 0 has type float32[] but the corresponding output of " \
           "branch1 has type int32[], so the dtypes do not match." in msg


def test_loop_carry_mismatch_names_the_carry_part():
    msg = _message(lambda: lax.scan(lambda c, x: ((c[0], c[1].astype(jnp.int32)), x),
                                    (1.0, 2.0), jnp.ones(3)))
    assert msg == (
        "scan body function carry input and carry output must have equal types, but they "
        "differ:\n\nThe input carry component c[1] has type float32[] but the corresponding "
        "output carry component has type int32[], so the dtypes do not match.\n\n"
        "Revise the function so that all output types match the corresponding input types.")
    msg = _message(lambda: lax.while_loop(lambda c: c[0] < 3,
                                          lambda c: (c[0] + 1, c[1].astype(jnp.int32)),
                                          (0, 1.0)))
    assert msg.startswith("while_loop body function carry input and carry output must have")
    assert "The input carry component c[1] has type float32[]" in msg
    msg = _message(lambda: lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), 1.0))
    assert "The input carry component loop_carry[1] has type float32[]" in msg
    msg = _message(lambda: lax.scan(lambda c, x: ((c, c), x), 1.0, jnp.ones(3)))
    assert "must have the same pytree structure" in msg and \
        "The input carry c is a <class " in msg and "so their Python types differ" in msg


def test_grad_errors_say_grad():
    with pytest.raises(TypeError, match="^grad requires real- or complex-valued inputs"):
        jax.grad(lambda x: x)(1)
    with pytest.raises(TypeError, match="^grad requires real- or complex-valued inputs"):
        jax.value_and_grad(lambda x: x)(1)
    with pytest.raises(TypeError, match="argnums=3 requires at least 4 positional"):
        jax.grad(lambda x: x, argnums=3)(1.0)


def test_tri_defaults_to_float32_under_x64():
    jax.config.update("jax_enable_x64", True)
    try:
        assert jnp.tri(3).dtype == np.float32 and jnp.eye(2).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)


def test_log_compiles(caplog):
    import logging
    jax.config.update("jax_log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING):
            jax.jit(lambda x: x * 2)(jnp.ones(3))
    finally:
        jax.config.update("jax_log_compiles", False)
    text = caplog.text
    assert "Finished tracing <lambda> for jit in" in text
    assert ("Compiling jit(<lambda>) with global shapes and types (ShapedArray(float32[3]),). "
            "Argument mapping: (UnspecifiedValue,).") in text


# -- traceback filtering


def _user_fn(x):
    return jnp.dot(x, jnp.ones(4))


def _frames(e):
    tb, out = e.__traceback__, []
    while tb is not None:
        out.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return out


def test_tracebacks_hide_jaxlite_frames():
    import os
    pkg = os.path.dirname(jax.__file__)
    with pytest.raises(TypeError) as info:
        jax.jit(jax.grad(lambda x: _user_fn(x).sum()))(jnp.ones(3))
    files = _frames(info.value)
    # the user's frames, then only the jaxlite function the user's last line called
    assert [f.startswith(pkg) for f in files][-1] and sum(f.startswith(pkg) for f in files) == 1
    assert __file__ in files
    assert any("JAX_TRACEBACK_FILTERING=off" in n for n in info.value.__notes__)
    for fn in (lambda: jax.vmap(_user_fn)(jnp.ones((2, 3))),
               lambda: lax.scan(lambda c, x: (c + _user_fn(x), None), 0.0, jnp.ones((2, 3)))):
        with pytest.raises(TypeError) as info:
            fn()
        assert sum(f.startswith(pkg) for f in _frames(info.value)) == 1


def test_traceback_filtering_off_keeps_every_frame():
    import os
    pkg = os.path.dirname(jax.__file__)
    jax.config.update("jax_traceback_filtering", "off")
    try:
        with pytest.raises(TypeError) as info:
            jax.jit(_user_fn)(jnp.ones(3))
    finally:
        jax.config.update("jax_traceback_filtering", "auto")
    assert sum(f.startswith(pkg) for f in _frames(info.value)) > 3


# -- siblings found by comparing derivatives at special points with JAX


def test_hypot_is_scaled_and_differentiable_at_zero():
    big = np.float32(1e30)
    assert float(jnp.hypot(big, big)) == pytest.approx(float(big) * np.sqrt(2), rel=1e-6)
    assert float(jnp.hypot(np.float32(1e-30), np.float32(1e-30))) > 0
    assert float(jnp.hypot(jnp.inf, jnp.nan)) == np.inf
    assert float(jax.grad(lambda x: jnp.hypot(x, 0.0))(0.0)) == 0.5
    assert float(jax.grad(lambda x: jnp.hypot(x, x))(0.0)) == 1.0
    np.testing.assert_allclose(float(jax.grad(lambda x: jnp.hypot(x, 3.0))(4.0)), 0.8,
                               rtol=1e-6)


def test_xlogy_family_derivatives_follow_jax_rules():
    import jaxlite.scipy.special as sp
    # d/dy x*log1p(y) at x = 0 is x / (1 + y) = 0, so the second derivative in x is 1/(1+y)
    h = jax.grad(jax.grad(lambda x: sp.xlog1py(x, x)))(0.0)
    assert float(h) == 2.0
    assert float(jax.grad(sp.entr)(0.0)) == np.inf
    assert float(jax.grad(sp.logit)(0.0)) == np.inf
    np.testing.assert_allclose([float(v) for v in jax.grad(sp.xlogy, (0, 1))(2.0, 3.0)],
                               [np.log(3.0), 2 / 3], rtol=1e-6)


def test_digamma_is_nan_at_its_poles():
    import jaxlite.scipy.special as sp
    out = np.asarray(sp.digamma(jnp.array([0.0, -1.0, -0.0, -2.5])))
    assert np.isnan(out[:3]).all() and np.isfinite(out[3])


@pytest.mark.parametrize("a, b, cls, text", [
    ((4,), (2, 2), ValueError, "Incompatible shapes for broadcasting: shapes=[(4,), (2, 2)]"),
    ((2, 1, 3), (4, 2), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(2, 1, 3), (4, 2)]"),
    ((3,), (4,), TypeError, "mul got incompatible shapes for broadcasting: (3,), (4,)."),
])
def test_jnp_broadcast_errors_are_jaxs(a, b, cls, text):
    # jnp raises ValueError where ranks must be promoted, lax's TypeError where they match
    with pytest.raises(cls) as e:
        jnp.ones(a) * jnp.ones(b)
    assert str(e.value) == text


# ------------------------------------------------ TypePromotionError under 'strict' (as JAX)

def test_strict_promotion_errors_list_dtypes_as_jax():
    """JAX builds the error's dtype tuple from a set of the operands' lattice nodes, so its
    order follows the process's hash seed; jaxlite builds the same set, so in one process
    the texts are identical (and the error is raised for the same operand combinations)."""
    import itertools
    jax_ = _jax()

    def operands(m):
        j = m.numpy
        return [j.int32(1), j.float32(1), j.uint8(1), j.bfloat16(1), j.float16(1),
                j.complex64(1), j.bool_(True), 1, 1.0, 1j, j.ones(2, j.int16),
                j.asarray(1.0) * 1]

    def outcomes(m, fn):
        out = []
        with m.numpy_dtype_promotion("strict"):
            for x, y in itertools.product(operands(m), repeat=2):
                try:
                    out.append(str(fn(m, x, y)))
                except Exception as e:   # noqa: BLE001 - the class and text are compared
                    out.append(f"{type(e).__name__}: {e}")
        return out

    for fn in (lambda m, x, y: m.numpy.add(x, y).dtype,
               lambda m, x, y: m.numpy.result_type(x, y, m.numpy.int8(1)),
               lambda m, x, y: m.numpy.where(True, x, y).dtype):
        ours, theirs = outcomes(jax, fn), outcomes(jax_, fn)
        assert ours == theirs
        assert any("TypePromotionError: Input dtypes (" in o for o in ours)


def test_optimizer_state_keeps_jax_tuples():
    # JAX builds OptimizerState's flat states and subtrees with unzip2: tuples, in init,
    # update and pack_optimizer_state alike (visible in tree_structure and in pickles)
    from jaxlite.example_libraries import optimizers
    init, update, _ = optimizers.momentum(0.1, 0.9)
    params = (jnp.ones(2), [jnp.zeros(3), {"a": jnp.ones(1)}])
    st = init(params)
    assert type(st.packed_state) is tuple and type(st.subtree_defs) is tuple
    assert str(jax.tree_util.tree_structure(st.packed_state)) == \
        "PyTreeDef(([*, *], [*, *], [*, *]))"
    st = update(0, params, st)
    assert type(st.packed_state) is tuple
    packed = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(st))
    assert type(packed.packed_state) is tuple
    jax_ = pytest.importorskip("jax")
    from jax.example_libraries import optimizers as jopt
    jinit, jupdate, _ = jopt.momentum(0.1, 0.9)
    nparams = jax.tree_util.tree_map(np.asarray, params)
    jst = jupdate(0, nparams, jinit(nparams))
    assert str(jax.tree_util.tree_structure(st)).replace("jaxlite", "jax") == \
        str(jax_.tree_util.tree_structure(jst)).replace("jaxlite", "jax")


def test_eager_clamp_checks_bound_dtypes_as_jit_does():
    from jaxlite import lax
    with pytest.raises(TypeError, match="lax.clamp requires arguments to have the same dtypes, "
                                        "got float32, int32, float32."):
        lax.clamp(0., jnp.arange(3), 1.)
    np.testing.assert_array_equal(lax.clamp(0., jnp.arange(3.), 1.), [0., 1., 1.])
    np.testing.assert_array_equal(lax.clamp(0, jnp.arange(3), 1), [0, 1, 1])
