"""jax.numpy shape manipulation: values vs NumPy, jaxprs vs JAX, jit vs eager, errors."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
XI = np.arange(6, dtype=np.int32).reshape(2, 3)


def _same(got, want):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    np.testing.assert_allclose(g, w.astype(g.dtype), rtol=1e-6, atol=1e-6)


CASES = {
    "reshape": lambda m: m.reshape(X, (4, -1)),
    "reshape_F": lambda m: m.reshape(X, (4, 6), order="F"),
    "ravel": lambda m: m.ravel(X), "ravel_F": lambda m: m.ravel(X, order="F"),
    "transpose": lambda m: m.transpose(X), "transpose_axes": lambda m: m.transpose(X, (1, 0, 2)),
    "permute_dims": lambda m: m.permute_dims(X, (2, 0, 1)),
    "matrix_transpose": lambda m: m.matrix_transpose(X),
    "swapaxes": lambda m: m.swapaxes(X, 0, 2), "moveaxis": lambda m: m.moveaxis(X, (0, 1), (-1, 0)),
    "rollaxis": lambda m: m.rollaxis(X, 2, 1), "squeeze": lambda m: m.squeeze(X[:, :1], 1),
    "squeeze_all": lambda m: m.squeeze(X[:1, :, :1]), "expand_dims": lambda m: m.expand_dims(X, (-1, 0)),
    "broadcast_to": lambda m: m.broadcast_to(X[:, :1], (5, 2, 3, 4)),
    "broadcast_arrays": lambda m: m.broadcast_arrays(X, X[0, 0], 1.0),
    "concatenate": lambda m: m.concatenate([X, X], axis=2),
    "concatenate_none": lambda m: m.concatenate([X, X[0]], axis=None),
    "concatenate_array": lambda m: m.concatenate(X, axis=1),
    "concat": lambda m: m.concat([XI, XI], axis=0),
    "stack": lambda m: m.stack([X, X], -1), "stack_array": lambda m: m.stack(X, 1),
    "hstack": lambda m: m.hstack([X, X]), "vstack": lambda m: m.vstack([X[0, 0], X[1, 1]]),
    "dstack": lambda m: m.dstack([X[0], X[1]]),
    "column_stack": lambda m: m.column_stack([X[0, 0], X[0, 1]]),
    "block": lambda m: m.block([[X[0], X[1]], [X[1], X[0]]]),
    "split": lambda m: m.split(X, [1, 3], axis=2), "split_n": lambda m: m.split(X, 2, axis=2),
    "array_split": lambda m: m.array_split(X, 3, axis=2), "hsplit": lambda m: m.hsplit(X, 3),
    "vsplit": lambda m: m.vsplit(X, 2), "dsplit": lambda m: m.dsplit(X, 2),
    "tile": lambda m: m.tile(X, (2, 1, 1, 2)), "tile_int": lambda m: m.tile(XI, 2),
    "repeat": lambda m: m.repeat(X, 2, axis=1), "repeat_flat": lambda m: m.repeat(XI, 3),
    "flip": lambda m: m.flip(X, (0, 2)), "flip_all": lambda m: m.flip(X),
    "fliplr": lambda m: m.fliplr(X), "flipud": lambda m: m.flipud(X),
    "rot90": lambda m: m.rot90(X), "rot90_k": lambda m: m.rot90(X, 3, axes=(1, 2)),
    "rot90_2": lambda m: m.rot90(X, 2), "roll": lambda m: m.roll(X, (2, -1), (1, 2)),
    "roll_flat": lambda m: m.roll(X, 5),
    "pad": lambda m: m.pad(X, 1), "pad_pairs": lambda m: m.pad(X, ((1, 0), (0, 2), (1, 1))),
    "pad_const": lambda m: m.pad(X, ((1, 0), (0, 2), (1, 1)),
                                 constant_values=((1, 2), (3, 4), (5, 6))),
    "pad_edge": lambda m: m.pad(X, 2, mode="edge"),
    "pad_reflect": lambda m: m.pad(X, 4, mode="reflect"),
    "pad_reflect_odd": lambda m: m.pad(X, 2, mode="reflect", reflect_type="odd"),
    "pad_symmetric": lambda m: m.pad(X, (3, 1), mode="symmetric"),
    "pad_wrap": lambda m: m.pad(X, 5, mode="wrap"), "pad_mean": lambda m: m.pad(X, 1, mode="mean"),
    "pad_minimum": lambda m: m.pad(X, 1, mode="minimum", stat_length=2),
    "pad_maximum_int": lambda m: m.pad(XI, 2, mode="maximum"),
    "append": lambda m: m.append(X, X[:1], axis=0), "append_flat": lambda m: m.append(XI, 7),
    "delete_int": lambda m: m.delete(X, 1, axis=1), "delete_flat": lambda m: m.delete(XI, -1),
    "resize": lambda m: m.resize(X, (5, 7)), "resize_small": lambda m: m.resize(XI, (4,)),
    "trim_zeros": lambda m: m.trim_zeros(np.array([0, 0, 1, 2, 0])),
    "trim_zeros_f": lambda m: m.trim_zeros(np.array([0, 0, 1, 2, 0]), "f"),
    "atleast_1d": lambda m: m.atleast_1d(1.0), "atleast_2d": lambda m: m.atleast_2d(X[0, 0]),
    "atleast_3d": lambda m: m.atleast_3d(X[0, 0]), "atleast_3d_2": lambda m: m.atleast_3d(XI),
    "atleast_multi": lambda m: m.atleast_2d(X[0, 0], 3.0),
}
# Cases built on gather/scatter (values against NumPy).
INDEXING_VALUE = {
    "repeat_array": lambda m: m.repeat(X, np.array([1, 0, 2]), axis=1),
    "pad_linear_ramp": lambda m: m.pad(X, 2, mode="linear_ramp", end_values=(1, 2)),
    "pad_median": lambda m: m.pad(X, 1, mode="median"),
    "insert": lambda m: m.insert(X, 1, 7., axis=1),
    "insert_array": lambda m: m.insert(X, np.array([0, 2, 2]), np.array([7., 8., 9.]), axis=2),
    "delete_array": lambda m: m.delete(X, np.array([0, 2]), axis=1),
    "delete_slice": lambda m: m.delete(X, slice(1, 3), axis=2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_vs_numpy(case):
    _same(CASES[case](jnp), CASES[case](np))


@pytest.mark.parametrize("case", sorted(INDEXING_VALUE))
def test_values_vs_numpy_indexing(case):
    _same(INDEXING_VALUE[case](jnp), INDEXING_VALUE[case](np))


def test_unstack_and_metadata():
    _same(jnp.unstack(X, axis=1), tuple(np.moveaxis(X, 1, 0)))
    assert jnp.shape(X) == (2, 3, 4) and jnp.shape(3.0) == ()
    assert jnp.ndim(X) == 3 and jnp.ndim([1, 2]) == 1
    assert jnp.size(X) == 24 and jnp.size(X, 1) == 3 and jnp.size(X, (0, 2)) == 8
    assert jnp.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    y = jnp.asarray(XI)
    assert y.reshape(3, 2).shape == (3, 2) and y.reshape((-1,)).shape == (6,)


def test_pad_callable_mode():
    def padder(vector, pad_width, iaxis, kwargs):
        vector = vector.at[:pad_width[0]].set(-1) if pad_width[0] else vector
        return vector
    _same(jnp.pad(XI, 1, mode=padder), np.pad(XI, 1, mode=lambda v, pw, i, k: (
        v.__setitem__(slice(None, pw[0]), -1) if pw[0] else None)))


def test_dtypes_and_weak_types():
    assert jnp.concatenate([np.ones(2, np.int8), np.ones(2, np.float32)]).dtype == np.float32
    assert jnp.stack([1, 2.0]).dtype == np.float32
    assert jnp.concatenate([XI, XI], dtype=np.float32).dtype == np.float32
    assert jnp.reshape(2.0, (1,)).weak_type
    assert not jnp.reshape(jnp.float32(2), (1,)).weak_type
    assert jnp.pad(jnp.asarray(XI), 1).dtype == np.int32


def test_reshape_of_numpy_input_uses_its_method():
    """As JAX: jnp.reshape forwards a NumPy array or scalar to its own ``reshape`` method,
    so the result stays a NumPy array (its dtype kept), eagerly and under jit (no tracer:
    numpyro's validation checks ``isinstance(mask, Tracer)`` on such results)."""
    r = jnp.reshape(np.arange(6.0), (2, -1))
    assert type(r) is np.ndarray and r.dtype == np.float64 and r.shape == (2, 3)
    r = jnp.reshape(np.float32(2), (1,))
    assert type(r) is np.ndarray and r.dtype == np.float32
    assert type(jnp.reshape(np.arange(6), (3, 2), order="A")) is np.ndarray
    np.testing.assert_array_equal(jnp.reshape(XI, (3, 2), order="F"),
                                  np.reshape(XI, (3, 2), order="F"))
    seen = []

    def f(a):
        seen.append((type(jnp.reshape(XI, (-1,))), type(jnp.reshape(a, (-1,))),
                     type(jnp.reshape(2.0, (1,)))))
        return a
    jaxlite.jit(f)(XI)
    assert seen[0][0] is np.ndarray
    assert issubclass(seen[0][1], jaxlite.core.Tracer)
    assert issubclass(seen[0][2], jaxlite.core.Tracer)   # a Python scalar has no method
    with pytest.raises(TypeError, match="reshape requires ndarray or scalar"):
        jnp.reshape([1, 2], (2,))


def test_reshape_of_numpy_input_vs_jax():
    jax = pytest.importorskip("jax")
    for a, shape, order in [(np.arange(6.0), (2, 3), "C"), (np.float32(2), (1,), "C"),
                            (XI, (3, 2), "F"), (np.arange(6), (3, 2), "A")]:
        want = jax.numpy.reshape(a, shape, order=order)
        got = jnp.reshape(a, shape, order=order)
        assert type(got) is type(want) and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    out = []
    jax.jit(lambda: out.append(type(jax.numpy.reshape(XI, (-1,)))) or 0)()
    jaxlite.jit(lambda: out.append(type(jnp.reshape(XI, (-1,)))) or 0)()
    assert out[0] is out[1] is np.ndarray


def test_jit_matches_eager():
    fns = [lambda a: jnp.reshape(a, (4, 6), order="F"), lambda a: jnp.rot90(a, axes=(1, 2)),
           lambda a: jnp.pad(a, 2, mode="reflect"), lambda a: jnp.roll(a, 3),
           lambda a: jnp.tile(a, 2), lambda a: jnp.split(a, 2, axis=2),
           lambda a: jnp.moveaxis(a, 0, -1), lambda a: jnp.block([[a, a]])]
    for f in fns:
        _same(jaxlite.jit(f)(X), f(X))
    _same(jaxlite.jit(lambda a, s: jnp.roll(a, s, axis=1))(X, 2), np.roll(X, 2, axis=1))


def test_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError, match="cannot reshape array"):
        jnp.reshape(x, (4, 2))
    with pytest.raises(TypeError, match="can only specify one unknown"):
        jnp.reshape(x, (-1, -1))
    with pytest.raises(TypeError, match="Cannot concatenate arrays with shapes"):
        jnp.concatenate([jnp.ones((2, 3)), jnp.ones((3, 3))], axis=1)
    with pytest.raises(TypeError, match="different numbers of dimensions"):
        jnp.concatenate([jnp.ones((2, 3)), jnp.ones(3)])
    with pytest.raises(ValueError, match="All input arrays must have the same shape"):
        jnp.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(ValueError, match="cannot select an axis to squeeze"):
        jnp.squeeze(x, 0)
    with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
        jnp.broadcast_to(x, (4, 3))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.broadcast_shapes((2, 3), (4, 3))
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        jnp.split(jnp.ones(5), 2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.moveaxis(x, 0, 5)
    with pytest.raises(ValueError, match="Axes must be different"):
        jnp.rot90(x, axes=(0, 0))
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode"):
        jnp.pad(x, 1, mode="nope")
    with pytest.raises(ValueError, match="unsupported keyword arguments"):
        jnp.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        jnp.delete(x, [0, 1])


# ----------------------------------------------------------------------------- vs JAX
JAXPR_CASES = {
    "reshape": lambda m, a: m.reshape(a, (3, 2)), "reshape_m1": lambda m, a: m.reshape(a, (-1,)),
    "reshape_meth": lambda m, a: a.reshape(6, 1), "ravel": lambda m, a: m.ravel(a),
    "transpose": lambda m, a: m.transpose(a), "matrix_transpose": lambda m, a: m.matrix_transpose(a),
    "permute_dims": lambda m, a: m.permute_dims(a, (1, 0)), "swapaxes": lambda m, a: m.swapaxes(a, 0, 1),
    "moveaxis": lambda m, a: m.moveaxis(a, 0, -1), "rollaxis": lambda m, a: m.rollaxis(a, 1),
    "squeeze": lambda m, a: m.squeeze(a[None]), "expand_dims": lambda m, a: m.expand_dims(a, (0, 2)),
    "broadcast_to": lambda m, a: m.broadcast_to(a, (4, 2, 3)),
    "broadcast_arrays": lambda m, a: m.broadcast_arrays(a, a[0]),
    "concatenate": lambda m, a: m.concatenate([a, a], axis=1),
    "concatenate_none": lambda m, a: m.concatenate([a, a], axis=None),
    "hstack": lambda m, a: m.hstack([a, a]), "vstack": lambda m, a: m.vstack([a, a[0]]),
    "dstack": lambda m, a: m.dstack([a, a]), "block": lambda m, a: m.block([[a, a], [a, a]]),
    "column_stack": lambda m, a: m.column_stack([a[0], a[1]]),
    "repeat": lambda m, a: m.repeat(a, 2, axis=1), "repeat_flat": lambda m, a: m.repeat(a, 2),
    "flip": lambda m, a: m.flip(a), "fliplr": lambda m, a: m.fliplr(a),
    "rot90": lambda m, a: m.rot90(a), "rot90_2": lambda m, a: m.rot90(a, 2),
    "atleast_2d": lambda m, a: m.atleast_2d(a[0]), "atleast_3d": lambda m, a: m.atleast_3d(a),
    "append": lambda m, a: m.append(a, a, axis=0), "delete": lambda m, a: m.delete(a, 1, axis=1),
    "stack": lambda m, a: m.stack([a, a], axis=1),
    "split": lambda m, a: m.split(a, 3, axis=1),
    "unstack": lambda m, a: m.unstack(a),
    "tile": lambda m, a: m.tile(a, (2, 1)),
    "roll": lambda m, a: m.roll(a, 1),
    "pad": lambda m, a: m.pad(a, 1),
    "pad_edge": lambda m, a: m.pad(a, 2, mode="edge"),
    "resize": lambda m, a: m.resize(a, (4, 4)),
}


def _jaxprs(fn):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = str(jax.make_jaxpr(lambda a: fn(jjnp, a))(x))
    got = str(jaxlite.make_jaxpr(lambda a: fn(jnp, a))(x))
    return got, want


@pytest.mark.parametrize("case", sorted(JAXPR_CASES))
def test_jaxpr_vs_jax(case):
    got, want = _jaxprs(JAXPR_CASES[case])
    assert got == want

