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


# complex operands with NaNs: JAX 0.10.2's values (its lowering compares the real parts,
# then the imaginary parts where those are equal, and picks y when the comparison is false)
_CA = np.array([1 + 1j, complex(np.nan, 0), complex(np.nan, np.nan), 2, 1 + 2j, 3 + 1j],
               np.complex64)
_CB = np.array([complex(np.nan, 0), 1 + 1j, 2, complex(np.nan, np.nan), 1 + 3j, 3 + 0j],
               np.complex64)
_C_MAX = [complex(np.nan, 0), 1 + 1j, 2, complex(np.nan, np.nan), 1 + 3j, 3 + 1j]
_C_MIN = [complex(np.nan, 0), 1 + 1j, 2, complex(np.nan, np.nan), 1 + 2j, 3 + 0j]


@pytest.mark.parametrize("fn,want", [(jnp.maximum, _C_MAX), (jnp.minimum, _C_MIN),
                                     (lax.max, _C_MAX), (lax.min, _C_MIN)])
@pytest.mark.parametrize("wrap", ["eager", "jit", "vmap"])
def test_complex_max_min_with_nans_pick_as_xla(fn, want, wrap):
    f = {"eager": fn, "jit": jax.jit(fn), "vmap": jax.vmap(fn)}[wrap]
    got = np.asarray(f(_CA, _CB))
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got, np.array(want, np.complex64))


def test_complex_max_in_a_fused_jit_chain():
    # a longer chain on a bigger array (tier 1's buffer reuse and NumPy chunks)
    a = np.tile(_CA, 500)
    b = np.tile(_CB, 500)
    got = jax.jit(lambda a, b: jnp.maximum(a * 2, jnp.minimum(b + 1, a)) * 3)(a, b)
    a2, b1 = a * 2, b + 1
    inner = np.where(np.where(b1.real == a.real, b1.imag < a.imag, b1.real < a.real), b1, a)
    want = np.where(np.where(a2.real == inner.real, a2.imag > inner.imag,
                             a2.real > inner.real), a2, inner) * 3
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.complex64))


def test_polygamma_rejects_complex_and_float_orders():
    import jaxlite.scipy.special as sp
    with pytest.raises(ValueError, match="polygamma does not support complex-valued"):
        sp.polygamma(1, np.array([1 + 1j], np.complex64))
    with pytest.raises(ValueError, match="Argument `n` to polygamma must be of integer "
                                         "type. Got dtype float32"):
        sp.polygamma(1.0, np.float32(2.0))
    np.testing.assert_allclose(sp.polygamma(1, np.float32(1.0)), np.pi ** 2 / 6, rtol=1e-6)


def test_zeta_without_q_is_not_implemented():
    # JAX has no Riemann zeta: q=None raises NotImplementedError (it used to be q=1 here)
    import jaxlite.scipy.special as sp
    with pytest.raises(NotImplementedError, match="pass q != None to compute the Hurwitz"):
        sp.zeta(np.float32(2.0))
    np.testing.assert_allclose(sp.zeta(np.float32(2.0), 1.0), np.pi ** 2 / 6, rtol=1e-6)


def test_log_softmax_keeps_integer_dtypes_until_exp():
    # JAX shifts by the maximum in x's own dtype: bools cannot be subtracted (TypeError, as
    # softmax), uint8 wraps around (0 - 1 = 255, exp(255) = inf in float32: all -inf)
    with pytest.raises(TypeError, match="sub does not accept dtype bool"):
        jax.nn.log_softmax(np.array([True, False]))
    got = jax.nn.log_softmax(np.array([1, 0, 1], np.uint8))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.full(3, -np.inf, np.float32))
    x = np.array([1, 0, 1], np.int32)
    got = jax.nn.log_softmax(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, x - np.log(np.exp(x).sum()), rtol=1e-6)


@pytest.mark.parametrize("fn", [jnp.arctan2, lax.atan2, jax.jit(jnp.arctan2)])
def test_atan2_of_complex_operands(fn):
    # JAX accepts complex operands (XLA: atan2(x, y) = -i log((y + i x) / sqrt(y^2 + x^2)));
    # values from JAX 0.10.2
    x = np.array([1 + 1j, 1, 1j, 2 - 1j], np.complex64)
    y = np.array([1 + 1j, 0, 1, 0.5 + 3j], np.complex64)
    got = fn(x, y)
    assert got.dtype == np.complex64
    want = np.array([np.pi / 4, np.pi / 2, 2.7640405 - 0.7704774j], np.complex64)
    np.testing.assert_allclose(np.asarray(got)[[0, 1, 3]], want, rtol=1e-6, atol=1e-6)
    assert np.isnan(np.asarray(got)[2])     # (1j, 1): 0 / 0 inside the log, as in JAX


_DN = (((0,), (0,)), ((), ()))


@pytest.mark.parametrize("operand,pref,want", [
    (np.array([True, True, False]), np.int32, 2),          # bools counted, not or-ed
    (np.array([True, True, False]), np.float32, 2.0),
    (np.array([100, 100], np.int8), np.int32, 20000),      # accumulated in int32
    (np.array([200, 200], np.uint8), np.int32, 80000),
    (np.array([1000, 1000], np.float16), np.float32, 2e6)])  # float16 would overflow
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_dot_general_computes_in_the_preferred_type(operand, pref, want, wrap):
    # JAX 0.10.2 (XLA:CPU) values
    f = lambda a: lax.dot_general(a, a, _DN, preferred_element_type=pref)
    got = (jax.jit(f) if wrap == "jit" else f)(operand)
    assert got.dtype == np.dtype(pref)
    assert got == want
    if operand.dtype == bool:
        assert jnp.einsum("i,i->", operand, operand, preferred_element_type=pref) == want


@pytest.mark.parametrize("dtype,pref,msg", [
    ("float32", "int32", "Input type is incompatible with `preferred_element_type`"),
    ("float32", "complex64", "Input type is incompatible with `preferred_element_type`"),
    ("float32", "float16", "must not be narrower than the original type"),
    ("int8", "uint8", "must have the same signedness as the original type"),
    ("int8", "uint32", "must have the same signedness as the original type")])
def test_conv_rejects_preferred_types_as_jax(dtype, pref, msg):
    m = np.ones((1, 1, 4), dtype)
    with pytest.raises(TypeError, match=msg):
        lax.conv_general_dilated(m, m[:, :, :2], (1,), "SAME", preferred_element_type=pref)


@pytest.mark.parametrize("dtype,pref", [("bool", "float32"), ("bool", "int32"),
                                        ("int8", "int32"), ("int8", "float32")])
def test_conv_computes_in_the_preferred_type(dtype, pref):
    m = np.ones((1, 1, 4), dtype)
    got = lax.conv_general_dilated(m, m[:, :, :2], (1,), "SAME", preferred_element_type=pref)
    assert got.dtype == np.dtype(pref)
    np.testing.assert_array_equal(got, np.array([[[2, 2, 2, 1]]], pref))   # (JAX's values)


@pytest.mark.parametrize("x,weak", [(np.int32(1), True), (np.array(1, np.int32), True),
                                    (np.array([1, 2], np.int32), False),
                                    (np.array([1, 2], np.uint8), False),
                                    (np.array([True, False]), False)])
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_logaddexp2_weak_type_of_promoted_arrays(x, weak, wrap):
    # JAX's logaddexp2 scales by a constant that is weak only for a weakly typed scalar:
    # a weak float array (an integer array promoted with a Python float) gives a strong
    # result (logaddexp has no such constant: its result stays weak)
    f = lambda a: jnp.logaddexp2(a, 1.66)
    got = (jax.jit(f) if wrap == "jit" else f)(x)
    assert got.dtype == np.float32 and got.weak_type == weak
    assert jnp.logaddexp(x, 1.66).weak_type


def test_cumlogsumexp_dtype_errors_as_jax():
    # JAX 0.10.2: bool fails its dtype rule; integers pass it but its lowering cannot
    # convert the -inf initial value (OverflowError), eagerly and under jit
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype bool"):
        lax.cumlogsumexp(np.array([True, False]))
    for f in (lax.cumlogsumexp, jax.jit(lax.cumlogsumexp)):
        with pytest.raises(OverflowError, match="cannot convert float infinity to integer"):
            f(np.array([1, 2], np.int32))
    np.testing.assert_allclose(lax.cumlogsumexp(np.array([1.0, 2.0], np.float32)),
                               [1.0, np.logaddexp(1.0, 2.0)], rtol=1e-6)
