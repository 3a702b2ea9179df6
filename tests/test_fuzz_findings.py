"""Disagreements with JAX found by tools/fuzz_vs_jax.py (random programs run on both), each
written down from JAX 0.10.2's behaviour."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


@pytest.mark.parametrize("fn", ["sigmoid", "silu", "swish", "glu"])
@pytest.mark.parametrize("dtype", ["int32", "bool", "uint8"])
def test_logistic_activations_reject_integers(fn, dtype):
    # JAX: lax.logistic takes floating or complex operands only, and these do not promote
    x = jnp.array([0, 1, 1, 0], dtype)
    with pytest.raises(TypeError, match=f"logistic does not accept dtype {dtype}"):
        getattr(jax.nn, fn)(x)


@pytest.mark.parametrize("dtype,want", [
    ("int32", [0, 1, -1, 1]), ("uint8", [255, 255, 1, 1]), ("float32", [0, 1, -1, 0.5])])
def test_hard_tanh_keeps_the_dtype(dtype, want):
    # (uint8: JAX compares with -1 as 255, so x < -1 holds below 255: 0 and 1 become 255)
    x = np.array([0, 1, -5, 0.5 if dtype == "float32" else 7]).astype(dtype)
    got = jax.nn.hard_tanh(x)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.array(want, dtype))


@pytest.mark.parametrize("fn,want_dtype", [
    ("relu", "int32"), ("leaky_relu", "float32"), ("soft_sign", "float32"),
    ("sparse_plus", "float32"), ("hard_silu", "float32"), ("log_sigmoid", "float32"),
    ("elu", "float32"), ("mish", "float32"), ("squareplus", "float32")])
def test_activation_dtypes_of_integer_inputs(fn, want_dtype):
    # JAX's result dtypes: each function computes in the input's dtype and promotes only
    # where a float constant or float op meets it
    assert getattr(jax.nn, fn)(jnp.arange(-2, 3)).dtype == np.dtype(want_dtype)


@pytest.mark.parametrize("call", [
    lambda: lax.dynamic_slice_in_dim(jnp.arange(1), 0, 2),
    lambda: lax.dynamic_slice(jnp.arange(3), (1,), (4,)),
    lambda: jax.jit(lambda x: lax.dynamic_slice(x, (0,), (4,)))(jnp.arange(3)),
    lambda: jax.vmap(lambda x: lax.dynamic_slice_in_dim(x, 0, 3))(jnp.ones((2, 2)))])
def test_dynamic_slice_bigger_than_the_operand_raises(call):
    # JAX raises TypeError (never a clamped, shorter result)
    with pytest.raises(TypeError, match="slice_sizes must be less than or equal to operand"):
        call()


def test_dynamic_slice_negative_size_raises():
    with pytest.raises(TypeError, match="greater than or equal to zero"):
        lax.dynamic_slice(jnp.arange(3), (0,), (-1,))


def test_copysign_rejects_complex():
    with pytest.raises(TypeError, match="copysign does not support complex-valued inputs"):
        jnp.copysign(jnp.ones(3), 1j)


def test_fix_was_removed():
    # JAX 0.10 removed jnp.fix (deprecated in 0.9) with this hint
    assert not hasattr(jnp, "fix")
    with pytest.raises(AttributeError, match="Use jax.numpy.trunc instead"):
        jnp.fix  # noqa: B018


C = np.array([1 + 1j, -1 + 0.5j], np.complex64)


@pytest.mark.parametrize("call,match", [
    (lambda: jnp.fabs(C), "ufunc 'fabs' does not support complex dtypes"),
    (lambda: jnp.heaviside(C, C), "lt does not accept dtype complex64 at position 0"),
    (lambda: lax.lt(C, C), "Accepted dtypes at position 0 are subtypes of integer, floating, "
                           "bool"),
    (lambda: jax.jit(lax.ge)(C, C), "ge does not accept dtype complex64"),
])
def test_ordering_ops_reject_complex(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_equality_and_max_of_complex_still_work():
    # eq/ne/max/min/sort of complex are defined (lexicographic order) in JAX
    np.testing.assert_array_equal(lax.eq(C, C), [True, True])
    np.testing.assert_array_equal(jnp.max(C), C[0])
    np.testing.assert_array_equal(jnp.sort(C[::-1]), C[::-1])


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("jit", [False, True])
def test_lax_cumulative_rejects_bool(name, jit):
    f = getattr(lax, name)
    with pytest.raises(TypeError, match=f"{name} does not accept dtype bool. Accepted dtypes "
                                        "are subtypes of number."):
        (jax.jit(f) if jit else f)(jnp.array([True, False]))
    # jnp's versions promote booleans to int first
    assert getattr(jnp, name if name in ("cumsum", "cumprod") else "cumsum")(
        jnp.array([True, True])).dtype == jnp.int32


def test_reduce_window_sum_rejects_bool():
    with pytest.raises(TypeError, match="operand to reduce_window_sum must have a number "
                                        "dtype, got bool"):
        lax.reduce_window(jnp.array([True, False]), False, lax.add, (2,), (1,), "SAME")


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("op,init,want", [
    ("add", 0.0, [1, 3, 5]), ("max", -np.inf, [1, 2, 3]), ("min", np.inf, [0, 1, 2])])
def test_reduce_window_of_bfloat16(op, init, want, jit):
    # (jit crashed: the window identities did not know bfloat16)
    def f(x):
        return lax.reduce_window(x, init, getattr(lax, op), (2,), (1,), "VALID")
    got = (jax.jit(f) if jit else f)(jnp.arange(4, dtype=jnp.bfloat16))
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(got, np.float32), want)


def test_jnp_comparisons_of_complex_order_by_real_then_imaginary():
    # jnp's <, <=, >, >= take complex operands (lax's do not)
    c = jnp.array([1 + 1j, -1 + 0.5j, 1 + 0j, 1 - 1j], jnp.complex64)
    d = c[::-1]
    re, im, dre, dim = c.real, c.imag, d.real, d.imag
    want_lt = np.where(re == dre, im < dim, re < dre)
    np.testing.assert_array_equal(c < d, want_lt)
    np.testing.assert_array_equal(jnp.greater_equal(c, d), ~want_lt)
    np.testing.assert_array_equal(jax.jit(jnp.less_equal)(c, 1), [False, True, True, True])
    np.testing.assert_array_equal(jax.nn.relu(c), jnp.maximum(c, 0))


def test_top_k_rejects_complex():
    with pytest.raises(ValueError, match="top_k is not compatible with complex inputs"):
        lax.top_k(jnp.array([1 + 1j, 2j]), 1)


@pytest.mark.parametrize("call", [
    lambda x: x.at[jnp.array([-9, 9])].get(mode="clip"), lambda x: x[jnp.array([0, 2])],
    lambda x: jnp.take(x, jnp.array([0])), lambda x: x.at[jnp.array([0])].add(jnp.ones(1)),
    lambda x: lax.dynamic_slice(x, (jnp.int32(1),), (2,)),
    lambda x: lax.dynamic_update_slice(x, jnp.ones(1), (jnp.int32(0),))])
@pytest.mark.parametrize("jit", [False, True])
def test_indexing_keeps_the_operands_weak_type(call, jit):
    # an int32 index (strongly typed) does not make a weakly typed operand's result strong
    x = jnp.array([1, 2, 3], jnp.uint8) + 3.0      # float32, weakly typed
    assert x.weak_type
    assert (jax.jit(call) if jit else call)(x).weak_type


@pytest.mark.parametrize("jit", [False, True])
def test_dynamic_update_slice_checks_as_jax(jit):
    def dus(x, u):
        return lax.dynamic_update_slice_in_dim(x, u, 0, 0)
    f = jax.jit(dus) if jit else dus
    with pytest.raises(TypeError, match="lax.dynamic_update_slice requires arguments to "
                                        "have the same dtypes, got bool, int32."):
        f(jnp.array([True, False]), jnp.array([2]))
    with pytest.raises(TypeError, match="update shape must be smaller than operand shape"):
        f(jnp.ones(2), jnp.ones(3))


def _stack_with_nan():
    return np.stack([np.eye(3, dtype=np.float32) * 2, np.full((3, 3), np.nan, np.float32),
                     np.diag(np.arange(1, 4, dtype=np.float32))])


@pytest.mark.parametrize("fn,want_good", [
    (lambda m: jnp.linalg.svd(m, compute_uv=False), [[2, 2, 2], [3, 2, 1]]),
    (lambda m: jnp.linalg.svd(m)[1], [[2, 2, 2], [3, 2, 1]]),
    (lambda m: jnp.linalg.eigh(m)[0], [[2, 2, 2], [1, 2, 3]]),
    (lambda m: jnp.linalg.norm(m, 2, axis=(1, 2)), [2, 3]),
    (lambda m: jax.vmap(lambda a: jnp.linalg.norm(a, 2))(m), [2, 3])])
def test_one_nan_matrix_does_not_spoil_the_batch(fn, want_good):
    # JAX decomposes each matrix of a batch on its own: only the NaN one gives NaNs
    got = np.asarray(fn(_stack_with_nan()))
    np.testing.assert_allclose(got[[0, 2]], want_good, rtol=1e-5)
    assert np.isnan(got[1]).all()


def test_eigvals_of_a_nan_matrix_are_nan_without_lapack_noise(capfd):
    w = np.asarray(jnp.linalg.eigvals(_stack_with_nan()))
    assert np.isnan(w[1].real).all() and np.isnan(w[1].imag).all()
    np.testing.assert_allclose(np.sort(w[2].real), [1, 2, 3], rtol=1e-5)
    assert "illegal value" not in capfd.readouterr().err


@pytest.mark.parametrize("jit", [False, True])
def test_select_n_checks_as_jax(jit):
    f = jax.jit(lax.select_n) if jit else lax.select_n
    with pytest.raises(TypeError, match=r"lax.select requires arguments to have the same "
                                        r"dtypes, got bool, int32. \(Tip: jnp.where"):
        f(jnp.array([True]), jnp.array([True]), jnp.array([1]))
    with pytest.raises(TypeError, match=r"select cases must have the same shapes, got "
                                        r"\[\(1,\), \(2,\)\]"):
        f(jnp.array(True), jnp.ones(1), jnp.ones(2))
    with pytest.raises(TypeError, match="select with boolean `which` cannot have > 2 cases"):
        f(jnp.array(True), jnp.ones(1), jnp.ones(1), jnp.ones(1))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
def test_lax_cumulative_axis_errors(name):
    f = getattr(lax, name)
    with pytest.raises(ValueError, match=r"axis 0 is out of bounds for array of shape \(\)"):
        jax.grad(lambda x: f(x, axis=0))(1.0)       # (was an IndexError in the JVP rule)
    with pytest.raises(ValueError, match="XLA operations do not allow negative axes"):
        f(jnp.ones((2, 3)), axis=-1)


def test_zeta_differentiates_in_both_arguments():
    # JAX differentiates an Euler-Maclaurin expansion of zeta(x, q); compare with central
    # differences of zeta itself in float64
    import jaxlite.scipy.special as sp
    with jax.enable_x64():
        x, q = jnp.array([1.5, 3.3, 7.0]), jnp.array([0.5, 2.0, 10.0])
        gx, gq = jax.vmap(jax.grad(sp.zeta, (0, 1)))(x, q)
        h = 1e-6
        np.testing.assert_allclose(gx, (sp.zeta(x + h, q) - sp.zeta(x - h, q)) / (2 * h),
                                   rtol=1e-6)
        np.testing.assert_allclose(gq, -x * sp.zeta(x + 1, q), rtol=1e-9)


def test_zeta_derivatives_are_jaxs_bits():
    jax_ref = pytest.importorskip("jax")
    import jax.scipy.special as jsp
    import jaxlite.scipy.special as sp
    x = np.array([1.5, 2.0, 3.3, 7.0, 30.0], np.float32)
    q = np.array([0.5, 1.0, 2.0, 10.0, 0.1], np.float32)
    want = jax_ref.vmap(jax_ref.grad(jsp.zeta, (0, 1)))(x, q)
    got = jax.vmap(jax.grad(sp.zeta, (0, 1)))(x, q)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
