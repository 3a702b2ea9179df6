"""NumPy indexing, .at[] updates, take/take_along_axis and lax gather/scatter: values against
NumPy, jit against eager, jaxprs and errors against JAX when installed."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

RNG = np.random.RandomState(0)
X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

GET_CASES = [
    (1,), (-1,), (slice(None, None, -1),), (Ellipsis, 2), (None, 1, None),
    ([0, 2],), ([[0, 1], [2, 0]],), (slice(None), [1, 3]), ([0, 2], [1, 3]),
    (0, slice(None), [1, 2]),          # non-adjacent advanced -> front
    ([2, 0], slice(1, 3), [4, 0]),     # non-adjacent advanced
    (slice(None), [1, 3], [0, 4]),     # adjacent advanced
    ([-1, -3],), (Ellipsis, [0, -1]), (slice(None, None, 2), [1, 0]),
    ([[0], [2]], slice(None), [0, 1, 2]),  # broadcast advanced
    (X[:, 0, 0] > 10,), (X[:, :, 0] > 7,), (X > 30,),  # boolean masks
    (np.array([1, 0]), Ellipsis, slice(None, None, -2)),
    ([0, 1, 2, 1], Ellipsis, slice(None, None, -1), None),
    (True,), (False,), (1, True),
]


@pytest.mark.parametrize("idx", GET_CASES, ids=[str(i)[:40] for i in range(len(GET_CASES))])
def test_getitem_matches_numpy(idx):
    want = X[idx]
    got = jnp.asarray(X)[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("idx", [c for c in GET_CASES if not any(
    isinstance(i, np.ndarray) and i.dtype == np.bool_ for i in c)][:18])
def test_getitem_jit_matches_eager(idx):
    f = jax.jit(lambda x: x[idx])
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(X))), X[idx])


def test_traced_index_arrays():
    f = jax.jit(lambda x, i: x[i, :, i])
    i = np.array([2, -1, 0])
    np.testing.assert_array_equal(np.asarray(f(X, i)), X[i, :, i])
    g = jax.jit(lambda x, k: x[k])
    np.testing.assert_array_equal(np.asarray(g(X, 2)), X[2])


def test_out_of_bounds_gather_clamps():
    x = jnp.arange(5.0)
    np.testing.assert_array_equal(np.asarray(x[jnp.array([0, 7, -9])]), [0.0, 4.0, 0.0])
    np.testing.assert_array_equal(
        np.asarray(x.at[jnp.array([1, 7])].get(mode="fill", fill_value=-1)), [1.0, -1.0])
    assert np.isnan(np.asarray(x.at[jnp.array([9])].get(mode="fill"))[0])
    # a static integer out of bounds clamps too (JAX: a dynamic_slice), except on an empty axis
    assert float(x[7]) == 4.0 and float(x[-9]) == 0.0
    assert float(jax.jit(lambda x: x[7])(x)) == 4.0
    np.testing.assert_array_equal(np.asarray(jnp.arange(12).reshape(3, 4)[5, 1:3]), [9, 10])
    assert np.isnan(float(x.at[7].get(mode="fill")))
    np.testing.assert_array_equal(np.asarray(x.at[7].set(1.0)), np.arange(5.0))   # dropped
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.ones((0,))[0]


def test_seed_example():
    y = jnp.arange(24).reshape(4, 3, 2)
    ny = np.arange(24).reshape(4, 3, 2)
    np.testing.assert_array_equal(np.asarray(y[[0, 2, 1, 0], ..., ::-1, None]),
                                  ny[[0, 2, 1, 0], ..., ::-1, None])


UPDATE_CASES = [(1,), (slice(1, 3),), (slice(None, None, 2), 1), ([0, 2],), ([0, 0, 2],),
                (Ellipsis, [1, 1, 3]), (slice(None), [0, 3], 2), (-1, None),
                (slice(None, None, -1),), ([2, 0], slice(1, 3), [4, 0])]


def _np_update(x, idx, v, op):
    out = x.copy()
    if op == "set":
        out[idx] = v
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                 "max": np.maximum, "subtract": np.subtract}[op]
        ufunc.at(out, idx, v)
    return out


@pytest.mark.parametrize("op", ["set", "add", "multiply", "min", "max", "subtract"])
@pytest.mark.parametrize("idx", UPDATE_CASES, ids=[str(i) for i in range(len(UPDATE_CASES))])
def test_at_updates_match_numpy(idx, op):
    v = np.float32(3.5) if op != "multiply" else np.float32(2.0)
    want = _np_update(X, idx, v, op)
    got = getattr(jnp.asarray(X).at[idx], op)(v)
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jax.jit(lambda x: getattr(x.at[idx], op)(v))(X)
    np.testing.assert_array_equal(np.asarray(jitted), want)


def test_at_array_values_and_dtype():
    x = jnp.zeros((3, 4), jnp.int32)
    upd = np.arange(8).reshape(2, 4)
    out = x.at[jnp.array([2, 0])].set(upd)
    want = np.zeros((3, 4), np.int32)
    want[[2, 0]] = upd
    np.testing.assert_array_equal(np.asarray(out), want)
    assert out.dtype == jnp.int32
    assert x.at[1].add(2.7).dtype == jnp.int32


def test_at_out_of_bounds_dropped_or_clipped():
    x = jnp.zeros(4)
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([1, 9])].add(1.0)),
                                  [0, 1, 0, 0])
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([1, 9])].add(1.0, mode="clip")),
                                  [0, 1, 0, 1])
    np.testing.assert_array_equal(np.asarray(x.at[7].set(5.0)), [0, 0, 0, 0])


def test_at_divide_power_apply_get():
    x = jnp.arange(1.0, 6.0)
    np.testing.assert_allclose(np.asarray(x.at[jnp.array([0, 0, 4])].divide(2.0)),
                               [0.25, 2, 3, 4, 2.5])
    np.testing.assert_allclose(np.asarray(x.at[1:3].power(2)), [1, 4, 9, 4, 5])
    np.testing.assert_allclose(np.asarray(x.at[jnp.array([1, 1, 3])].apply(jnp.negative)),
                               [1, -2, 3, -4, 5])
    np.testing.assert_allclose(np.asarray(x.at[::2].get()), [1, 3, 5])


def test_immutable_item_assignment():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"\.at"):
        x[0] = 1.0


def test_index_errors():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match="integer or boolean"):
        x[jnp.array([0.5])]
    with pytest.raises(IndexError, match="Too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="ellipsis"):
        x[..., ...]
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(lambda a: a[a > 3])(x)
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.ones(4, bool)]
    with pytest.raises(ValueError, match="broadcast"):
        x.at[0].set(jnp.ones(7))


def test_take_and_take_along_axis():
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = np.array([0, -1, 2])
    np.testing.assert_array_equal(np.asarray(jnp.take(a, idx, axis=1)), np.take(a, idx, 1))
    np.testing.assert_array_equal(np.asarray(jnp.take(a, idx)), np.take(a, idx))
    out = np.asarray(jnp.take(a, np.array([0, 9]), axis=0))
    assert np.isnan(out[1]).all()
    np.testing.assert_array_equal(np.asarray(jnp.take(a, np.array([0, 9]), axis=0,
                                                      mode="clip")), a[[0, 2]])
    np.testing.assert_array_equal(np.asarray(jnp.take(a, np.array([5]), mode="wrap")),
                                  [5.0])
    order = np.argsort(-a, axis=1)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(a, order, axis=1)),
                                  np.take_along_axis(a, order, axis=1))
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(a, np.array([[1], [0], [2]]), 1)),
        np.take_along_axis(a, np.array([[1], [0], [2]]), 1))
    with pytest.raises(ValueError, match="same number of dimensions"):
        jnp.take_along_axis(a, np.array([0]), 1)


def test_lax_gather_scatter_direct():
    x = jnp.arange(12.0).reshape(3, 4)
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0, 1))
    out = lax.gather(x, jnp.array([[1, 1], [2, 3]]), dn, (1, 2))
    np.testing.assert_array_equal(np.asarray(out), [[5, 6], [10, 11]])  # start clamped
    out = lax.gather(x, jnp.array([[1, 1], [2, 3]]), dn, (1, 2), mode="fill")
    assert np.isnan(np.asarray(out)[1]).all()
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    out = lax.scatter_add(x, jnp.array([[0], [0]]), jnp.ones((2, 4)), sdn)
    np.testing.assert_array_equal(np.asarray(out)[0], [2, 3, 4, 5])
    with pytest.raises(TypeError, match="same dtype"):
        lax.scatter_add(x, jnp.array([[0]]), jnp.ones((1, 4), jnp.int32), sdn)
    with pytest.raises(TypeError, match="integer"):
        lax.gather(x, jnp.array([[0.0]]), dn, (1, 2))


def test_gather_batching_dims():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([[[1], [2]], [[0], [0]]])  # per batch: two row indices
    dn = lax.GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
    out = np.asarray(lax.gather(x, idx, dn, (1, 1, 4)))
    want = np.stack([x[b][idx[b, :, 0]] for b in range(2)])
    np.testing.assert_array_equal(out, want)


# ----------------------------------------------------------------------------- vs JAX

JAXPR_CASES = {
    "int_array": (lambda x, i: x[i], (np.ones((3, 4), np.float32), np.array([0, 2]))),
    "list_and_slice": (lambda x: x[jnp.array([0, 2]), 1:], (np.ones((3, 4), np.float32),)),
    "at_add": (lambda x, i: x.at[i].add(1.0), (np.ones((3, 4), np.float32),
                                                np.array([0, 2]))),
    "at_set_slice": (lambda x: x.at[1:3].set(2.0), (np.ones((5, 4), np.float32),)),
    "at_set_int": (lambda x: x.at[1].set(2.0), (np.ones((5, 4), np.float32),)),
    "at_strided_mul": (lambda x: x.at[::2, 1].mul(2.0), (np.ones((5, 4), np.float32),)),
}


@pytest.mark.parametrize("name", sorted(JAXPR_CASES))
def test_jaxpr_matches_jax(name):
    rjax = pytest.importorskip("jax")
    rjnp = pytest.importorskip("jax.numpy")
    fn, args = JAXPR_CASES[name]
    ours = str(jax.make_jaxpr(fn)(*args))
    import jaxlite.numpy as ljnp
    src_globals = fn.__globals__
    src_globals["jnp"] = rjnp
    try:
        theirs = str(rjax.make_jaxpr(fn)(*args))
    finally:
        src_globals["jnp"] = ljnp
    assert ours == theirs


@pytest.mark.parametrize("idx", GET_CASES[:16], ids=[str(i) for i in range(16)])
def test_getitem_values_match_jax(idx):
    rjnp = pytest.importorskip("jax.numpy")
    theirs = rjnp.asarray(X)[idx]
    ours = jnp.asarray(X)[idx]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_traced_slice_bounds_raise_index_error():
    # JAX: IndexError "Slice entries must be static integers"; the fix is a static argument.
    for fn in (lambda y, x: y[:x], lambda y, x: y[x:], lambda y, x: y[::x]):
        with pytest.raises(IndexError, match="Slice entries must be static integers"):
            jax.jit(fn)(jnp.arange(4), 2)
    np.testing.assert_array_equal(jax.jit(lambda y, x: y[:x], static_argnums=1)(
        jnp.arange(4), 2), [0, 1])
    np.testing.assert_array_equal(jnp.arange(4)[:jnp.array(2)], [0, 1])


def test_empty_advanced_index_of_an_empty_operand_under_jit():
    """x[idx, :] with x of shape (0, 1) and an empty idx: JAX makes no gather for an empty
    result (whose windows would not fit the empty operand) and returns zeros of the result's
    shape; the same under jit (lineax's LU solve of a 0x0 system in diffrax)."""
    x = jnp.zeros((0, 1))
    i = jnp.zeros(0, jnp.int32)
    for f in (lambda x, i: x[i, :], lambda x, i: x[i], lambda x, i: x[i, i[:, None]]):
        for g in (f, jax.jit(f)):
            out = g(x, i)
            assert out.shape == f(np.zeros((0, 1)), np.zeros(0, int)).shape   # NumPy's
            assert out.dtype == x.dtype
