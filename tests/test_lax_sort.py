"""lax.sort / sort_key_val / top_k: values vs NumPy over dtypes (NaN, -0.0, complex order),
multi-operand sorts, stability, jit vs eager, weak types, JAX's errors, and differential
tests against JAX itself."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax

RNG = np.random.RandomState(0)


def _f32_special():
    return np.array([np.nan, -np.nan, -0.0, 0.0, -np.inf, np.inf, 1, -1, 0.0, -0.0, np.nan,
                     2.5, -2.5], np.float32)


def _rand(shape, dtype):
    if dtype == np.bool_:
        return RNG.rand(*shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return RNG.randint(0, 5, size=shape).astype(dtype)  # many ties
    if np.dtype(dtype).kind == "c":
        re = RNG.randint(-2, 3, size=shape)
        im = RNG.randint(-2, 3, size=shape)
        return (re + 1j * im).astype(dtype)
    x = RNG.randint(-3, 4, size=shape).astype(dtype)
    x.flat[::5] = np.nan
    x.flat[1::7] = -0.0
    return x


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    if a.dtype.kind in "fc":
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    else:
        np.testing.assert_array_equal(a, b)


def _np_sort_keys(x):
    """Reference keys for JAX's sort order (NumPy floats: NaN last, -0 == 0)."""
    if x.dtype.kind == "c":
        return [np.real(x), np.imag(x)]
    return [x]


def _np_argsort(x, axis):
    keys = _np_sort_keys(x)
    return np.lexsort(keys[::-1], axis=axis)


DTYPES = [np.float32, np.int32, np.uint8, np.bool_, np.complex64, np.float16]


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_values(dtype, dimension):
    x = _rand((4, 7), dtype)
    perm = _np_argsort(x, dimension)
    _bits_equal(lax.sort(x, dimension=dimension), np.take_along_axis(x, perm, dimension))
    k, v = lax.sort_key_val(x, np.broadcast_to(np.arange(x.shape[dimension]).reshape(
        (-1, 1) if dimension == 0 else (1, -1)), x.shape).astype(np.int32), dimension)
    _bits_equal(k, np.take_along_axis(x, perm, dimension))
    np.testing.assert_array_equal(v, perm)


def test_sort_float_total_order():
    x = _f32_special()
    s, idx = lax.sort_key_val(x, np.arange(x.size, dtype=np.int32))
    # -0.0 and 0.0 are equal (stable: input order kept), every NaN equal and last
    np.testing.assert_array_equal(idx, [4, 12, 7, 2, 3, 8, 9, 6, 11, 5, 0, 1, 10])
    _bits_equal(s, x[np.asarray(idx)])  # a permutation: signs of zeros and NaNs kept
    assert np.signbit(np.asarray(s)[11])


def test_sort_complex_order():
    c = np.array([1 + 2j, 1 + 1j, complex(np.nan, 0), complex(0, np.nan), -1j,
                  complex(-0.0, 0), 0j, complex(np.nan, -1), complex(1, np.nan)], np.complex64)
    _, idx = lax.sort_key_val(c, np.arange(c.size, dtype=np.int32))
    # lexicographic (real, imag) with the float order on each part
    np.testing.assert_array_equal(idx, [4, 5, 6, 3, 1, 0, 8, 7, 2])


def test_sort_multi_operand_num_keys():
    a = RNG.randint(0, 3, size=(3, 12)).astype(np.int32)
    b = RNG.randint(0, 3, size=(3, 12)).astype(np.float32)
    c = RNG.randn(3, 12).astype(np.float32)
    out = lax.sort((a, b, c), dimension=1, num_keys=2)
    assert isinstance(out, tuple) and len(out) == 3
    perm = np.lexsort((b, a), axis=1)
    for o, ref in zip(out, (a, b, c)):
        _bits_equal(o, np.take_along_axis(ref, perm, 1))
    out1 = lax.sort([a, b, c], dimension=1, num_keys=1)
    perm1 = np.argsort(a, axis=1, kind="stable")
    for o, ref in zip(out1, (a, b, c)):
        _bits_equal(o, np.take_along_axis(ref, perm1, 1))
    out3 = lax.sort((a, b, c), dimension=0, num_keys=3)
    perm3 = np.lexsort((c, b, a), axis=0)
    _bits_equal(out3[2], np.take_along_axis(c, perm3, 0))


def test_sort_stability():
    keys = np.array([2, 1, 2, 1, 0, 2, 0, 1] * 3, np.int32)
    vals = np.arange(keys.size, dtype=np.int32)
    for stable in (True, False):
        _, v = lax.sort_key_val(keys, vals, is_stable=stable)
        np.testing.assert_array_equal(v, np.argsort(keys, kind="stable"))
    _, v = lax.sort_key_val(np.array([0.0, -0.0, 0.0, -0.0], np.float32),
                            np.arange(4, dtype=np.int32))
    np.testing.assert_array_equal(v, [0, 1, 2, 3])


def test_sort_single_returns_array_and_shapes():
    x = _rand((2, 3, 4), np.float32)
    s = lax.sort(x, dimension=1)
    assert isinstance(s, jaxlite.Array) and s.shape == (2, 3, 4)
    _bits_equal(s, np.take_along_axis(x, _np_argsort(x, 1), 1))
    empty = np.zeros((0, 3), np.float32)
    assert lax.sort(empty, dimension=0).shape == (0, 3)
    assert lax.top_k(np.zeros((3, 0), np.float32), 0)[0].shape == (3, 0)


# ----------------------------------------------------------------------------- top_k
def _np_top_k(x, k, axis=-1):
    """Reference: XLA's total order (-NaN < -inf < ... < -0 < 0 < ... < NaN), ties by index."""
    if x.dtype.kind == "f":
        bits = x.astype(np.float32).view(np.int32).astype(np.int64)
        key = np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)
    else:
        key = x.astype(np.int64)
    order = np.argsort(-key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16,
                                   np.int8])
def test_top_k_values(dtype):
    x = _rand((3, 9), dtype)
    for k in (0, 1, 4, 9):
        vals, idx = lax.top_k(x, k)
        wv, wi = _np_top_k(x, k)
        _bits_equal(vals, wv)
        np.testing.assert_array_equal(idx, wi)
        assert np.asarray(idx).dtype == np.int32
    vals, idx = lax.top_k(x, 2, axis=0)
    wv, wi = _np_top_k(x, 2, axis=0)
    _bits_equal(vals, wv)
    np.testing.assert_array_equal(idx, wi)


def test_top_k_total_order():
    x = _f32_special()
    vals, idx = lax.top_k(x, x.size)
    np.testing.assert_array_equal(idx, [0, 10, 5, 11, 6, 3, 8, 2, 9, 7, 12, 4, 1])
    _bits_equal(vals, x[np.asarray(idx)])
    # the documented example
    v, i = lax.top_k(jnp.array([9., 3., 6., 4., 10.]), 3)
    np.testing.assert_array_equal(v, [10., 9., 6.])
    np.testing.assert_array_equal(i, [4, 0, 2])


# ----------------------------------------------------------------------------- jit, weak types
def test_jit_matches_eager():
    x = _rand((3, 8), np.float32)
    y = _rand((3, 8), np.int32)
    f = jaxlite.jit(lambda a, b: (lax.sort((b, a), dimension=1, num_keys=2),
                                  lax.top_k(a, 3), lax.sort(a, dimension=0)))
    got = f(x, y)
    want = (lax.sort((y, x), dimension=1, num_keys=2), lax.top_k(x, 3),
            lax.sort(x, dimension=0))
    for g, w in zip(jaxlite.tree_util.tree_leaves(got), jaxlite.tree_util.tree_leaves(want)):
        _bits_equal(g, w)


def test_weak_types():
    w = jnp.asarray(2.0) * jnp.ones(3)  # strong f32
    assert not lax.sort(w).weak_type
    weak = lax.mul(jnp.asarray(2.0), 1.0)
    assert weak.weak_type
    assert lax.sort(lax.broadcast(weak, (3,))).weak_type
    k, v = lax.sort_key_val(lax.broadcast(weak, (3,)), np.arange(3, dtype=np.int32))
    assert k.weak_type and not v.weak_type
    vals, idx = lax.top_k(lax.broadcast(weak, (3,)), 2)
    assert vals.weak_type and not idx.weak_type


def test_jaxpr_printing():
    x = np.ones((2, 5), np.float32)
    s = str(jaxlite.make_jaxpr(lambda a: lax.top_k(a, 3))(x))
    assert "top_k[axis=1 k=3] a" in s
    s = str(jaxlite.make_jaxpr(lambda a: lax.sort(a, 0))(x))
    assert "sort[dimension=0 is_stable=True num_keys=1] a" in s


# ----------------------------------------------------------------------------- errors
def test_errors():
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="axis 1 is out of bounds for array of dimension 1"):
        lax.sort(x, dimension=1)
    with pytest.raises(ValueError, match=r"num_keys=2 must be between 1 and len\(operand\)=1"):
        lax.sort([x], num_keys=2)
    with pytest.raises(ValueError, match="num_keys=0 must be between 1"):
        lax.sort([x], num_keys=0)
    with pytest.raises(ValueError, match="num_keys=2 must equal 1 for a single operand."):
        lax.sort(x, num_keys=2)
    with pytest.raises(TypeError, match="Sort requires at least one operand"):
        lax.sort([])
    with pytest.raises(TypeError, match=r"Arguments to sort must have equal shapes, got: "
                                        r"\(3,\) \(4,\)"):
        lax.sort((x, np.ones(4)))
    with pytest.raises(TypeError, match="Arguments to sort must have equal shapes"):
        lax.sort_key_val(x, 2)
    with pytest.raises(ValueError, match="axis -1 is out of bounds for array of dimension 0"):
        lax.sort(np.float32(1))
    with pytest.raises(ValueError, match="k argument to top_k must be no larger than size "
                                         r"along axis; got k=4 with shape=\[3\] and axis=0"):
        lax.top_k(x, 4)
    with pytest.raises(ValueError, match="k argument to top_k must be nonnegative, got -1"):
        lax.top_k(x, -1)
    with pytest.raises(ValueError, match="top_k is not compatible with complex inputs."):
        lax.top_k(x.astype(np.complex64), 1)
    with pytest.raises(ValueError, match="axis -1 is out of bounds for array of dimension 0"):
        lax.top_k(np.float32(1), 1)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        lax.top_k(x, 1, axis=2)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        lax.top_k(x, 1.5)
    # the same errors under tracing
    with pytest.raises(TypeError, match="Arguments to sort must have equal shapes"):
        jaxlite.jit(lambda a, b: lax.sort_key_val(a, b))(x, np.ones(2))
    with pytest.raises(ValueError, match="k argument to top_k must be no larger"):
        jaxlite.jit(lambda a: lax.top_k(a, 5))(x)


def test_primitive_abstract_eval_errors():
    from jaxlite._src.core.avals import ShapedArray
    from jaxlite._src.prims.sort import sort_p, top_k_p
    a = ShapedArray((2, 3), np.dtype(np.float32))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        sort_p.abstract_eval(a, dimension=2, is_stable=True, num_keys=1)
    with pytest.raises(ValueError, match="num_keys=3 must be between 1"):
        sort_p.abstract_eval(a, a, dimension=0, is_stable=True, num_keys=3)
    with pytest.raises(TypeError, match="top_k operand must have >= 1 dimension"):
        top_k_p.abstract_eval(ShapedArray((), np.dtype(np.float32)), k=0, axis=0)
    with pytest.raises(ValueError, match="axis argument out of range"):
        top_k_p.abstract_eval(a, k=1, axis=2)


# ----------------------------------------------------------------------------- vs JAX
def _jax():
    return pytest.importorskip("jax")


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_vs_jax(dtype):
    jax = _jax()
    x = _rand((3, 10), dtype)
    vals = np.broadcast_to(np.arange(10, dtype=np.int32), x.shape)
    for dim in (0, 1):
        want = jax.lax.sort_key_val(x, vals, dimension=dim)
        got = lax.sort_key_val(x, vals, dimension=dim)
        _bits_equal(got[0], np.asarray(want[0]))
        np.testing.assert_array_equal(got[1], np.asarray(want[1]))


def test_special_values_vs_jax():
    jax = _jax()
    x = _f32_special()
    i = np.arange(x.size, dtype=np.int32)
    _bits_equal(lax.sort(x), np.asarray(jax.lax.sort(x)))
    np.testing.assert_array_equal(lax.sort_key_val(x, i)[1], jax.lax.sort_key_val(x, i)[1])
    for got, want in zip(lax.top_k(x, x.size), jax.lax.top_k(x, x.size)):
        _bits_equal(got, np.asarray(want))
    c = np.array([1 + 2j, complex(np.nan, 0), complex(0, np.nan), -1j, complex(-0.0, 0),
                  complex(np.nan, -1), complex(1, np.nan)], np.complex64)
    ic = np.arange(c.size, dtype=np.int32)
    np.testing.assert_array_equal(lax.sort_key_val(c, ic)[1], jax.lax.sort_key_val(c, ic)[1])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16])
def test_top_k_vs_jax(dtype):
    jax = _jax()
    x = _rand((4, 9), dtype)
    for k, axis in ((3, -1), (9, 1), (2, 0)):
        got = lax.top_k(x, k, axis=axis)
        want = jax.lax.top_k(x, k, axis=axis)
        assert isinstance(got, list) and isinstance(want, list)
        _bits_equal(got[0], np.asarray(want[0]))
        np.testing.assert_array_equal(got[1], np.asarray(want[1]))


def test_multi_key_vs_jax():
    jax = _jax()
    a = _rand((2, 12), np.float32)
    b = _rand((2, 12), np.int32)
    c = _rand((2, 12), np.complex64)
    for nk in (1, 2, 3):
        got = lax.sort((a, b, c), dimension=1, num_keys=nk)
        want = jax.lax.sort((a, b, c), dimension=1, num_keys=nk)
        for g, w in zip(got, want):
            _bits_equal(g, np.asarray(w))


JAXPR_CASES = {
    "sort": lambda L, a: L.sort(a),
    "sort_dim0": lambda L, a: L.sort(a, dimension=0, is_stable=False),
    "sort_multi": lambda L, a: L.sort((a, a * 2, a), dimension=1, num_keys=2),
    "sort_key_val": lambda L, a: L.sort_key_val(a, a),
    "top_k": lambda L, a: L.top_k(a, 3),
    "top_k_axis0": lambda L, a: L.top_k(a, 1, axis=0),
}


@pytest.mark.parametrize("case", sorted(JAXPR_CASES))
def test_jaxpr_vs_jax(case):
    jax = _jax()
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    want = str(jax.make_jaxpr(lambda a: JAXPR_CASES[case](jax.lax, a))(x))
    got = str(jaxlite.make_jaxpr(lambda a: JAXPR_CASES[case](lax, a))(x))
    assert got == want
