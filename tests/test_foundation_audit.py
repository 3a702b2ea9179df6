"""Audit of issue 2 (the foundation) against real JAX: ``.at[]`` options and weak types,
operator dtypes, the signatures of jax.numpy / jax.lax functions and Array methods, error
classes for bad arguments, and a few jit/tracer error details."""
import inspect
import pickle
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax


@pytest.fixture
def jax():
    """Real JAX (tests comparing against it are skipped when it is missing)."""
    return pytest.importorskip("jax")


# ----------------------------------------------------------------------------- .at[]
AT_CALLS = {
    "set_weak": lambda m: m.asarray(1.0).at[()].set(5),
    "set_strong_into_weak": lambda m: m.asarray(1.0).at[()].set(m.float32(5)),
    "divide_weak": lambda m: m.asarray(1.0).at[()].divide(2),
    "power_weak": lambda m: m.asarray(3.0).at[()].power(2),
    "add_float_to_int": lambda m: m.asarray([1, 3]).at[1].add(0.6),
    "mul_float_to_int": lambda m: m.asarray([1, 3]).at[1].multiply(1.5),
    "get_no_wrap": lambda m: m.arange(4.0).at[-1].get(wrap_negative_indices=False),
    "get_no_wrap_fill": lambda m: m.arange(4.0).at[m.array([-1, 1])].get(
        wrap_negative_indices=False, mode="fill"),
    "set_no_wrap": lambda m: m.arange(4.0).at[-1].set(9.0, wrap_negative_indices=False),
    "add_no_wrap": lambda m: m.arange(4.0).at[m.array([-1, 1])].add(
        1.0, wrap_negative_indices=False, out_sharding=None),
    "apply_no_wrap": lambda m: m.arange(4.0).at[m.array([-1, 1])].apply(
        lambda v: v + 1, wrap_negative_indices=False),
    "min_clip": lambda m: m.arange(4).at[m.array([7, 0])].min(-3, mode="clip"),
    "seed_index": lambda m: m.arange(24.0).reshape(4, 3, 2)[[0, 2, 1, 0], ..., ::-1, None],
}


@pytest.mark.parametrize("name", sorted(AT_CALLS))
def test_at_and_indexing_vs_jax(jax, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert repr(AT_CALLS[name](jnp)) == repr(AT_CALLS[name](jax.numpy))


def test_at_unsafe_cast_warns_as_jax():
    with pytest.warns(FutureWarning, match="scatter inputs have incompatible types: cannot "
                      "safely cast value from dtype=float32 to dtype=int32"):
        jnp.asarray([1, 2]).at[0].set(2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.asarray([1, 2], jnp.int8).at[0].set(3)   # a weak int fits: no warning


def test_at_method_signatures_vs_jax(jax):
    ours, ref = jnp.ones(2).at[0], jax.numpy.ones(2).at[0]
    for name in ("get", "set", "add", "subtract", "multiply", "mul", "divide", "power",
                 "min", "max", "apply"):
        assert _params(getattr(ours, name)) == _params(getattr(ref, name)), name


def test_shift_and_floordiv_and_pow_weak_types():
    assert repr(jnp.asarray(-7) // 2) == "Array(-4, dtype=int32, weak_type=True)"
    assert repr(jnp.asarray(3) ** jnp.asarray(2)) == "Array(9, dtype=int32, weak_type=True)"
    assert repr(jnp.array([True]) << True) == "Array([2], dtype=int32)"
    assert repr(jnp.array([True]) >> jnp.array([False])) == "Array([1], dtype=int32)"
    with pytest.raises(TypeError):
        jnp.left_shift(1.0, 2)


# ----------------------------------------------------------------------------- helpers
def _params(f):
    """(name, kind, default) of each parameter of ``f`` (annotations ignored)."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind.name, repr(p.default) if p.default is not p.empty else "-")
            for p in sig.parameters.values()]


# ----------------------------------------------------------------------------- signatures
# Deliberate differences from JAX's signatures, one reason each. Positional-only parameter
# names are never compared (callers cannot spell them).
JNP_SIGNATURE_ALLOWED = {
    # jaxlite keeps NumPy's pre-2.0 keyword aliases a/a_min/a_max (JAX removed them)
    "clip",
    # JAX deprecates copy/order/ndmin as positional arguments (a *args shim); jaxlite takes
    # them positionally without the deprecation warning
    "array",
    # passes extra NumPy arguments through to numpy.save
    "save",
    # private parameter whose default is JAX's own lax.dot_general
    "einsum",
}
LAX_SIGNATURE_ALLOWED = {
    # JAX's default is a private sentinel object; jaxlite's is its own sentinel
    "cond", "switch",
    # out_dtype (new in JAX 0.10) is not implemented
    "mul",
    # `to=` of all_gather (JAX 0.10 varying-manual-axes typing) is not implemented
    "all_gather",
    # JAX's is a bare (*args) wrapper of its primitive; jaxlite names the operands (a, x)
    "random_gamma_grad",
}


def _public_sig(f):
    p = _params(f)
    return None if p is None else [x for x in p if x[1] != "POSITIONAL_ONLY"] + \
        [("#positional-only", len([x for x in p if x[1] == "POSITIONAL_ONLY"]))]


def _signature_mismatches(ref_mod, our_mod, allowed):
    bad = []
    for name in sorted(n for n in dir(ref_mod) if not n.startswith("_")):
        rf, lf = getattr(ref_mod, name), getattr(our_mod, name, None)
        if lf is None or name in allowed or not callable(rf) or inspect.isclass(rf):
            continue
        a, b = _public_sig(rf), _public_sig(lf)
        if a is not None and b is not None and a != b:
            bad.append((name, a, b))
    return bad


def test_jnp_names_and_signatures_vs_jax(jax):
    import jax.numpy as jjnp
    missing = sorted(n for n in dir(jjnp) if not n.startswith("_") and not hasattr(jnp, n))
    assert not missing
    assert not _signature_mismatches(jjnp, jnp, JNP_SIGNATURE_ALLOWED)


# jax.lax names jaxlite does not provide yet (each would need a new primitive or a feature
# jaxlite lacks: tokens/effects, ragged all-to-all, send/recv; custom_linear_solve and
# custom_root are composites of custom_jvp and linear_call, so no linear_solve_p).
LAX_MISSING_KNOWN = {
    "approx_top_k_p", "copy_p", "cumlogsumexp_p", "dce_sink", "dce_sink_p", "device_put_p",
    "eq_to_p", "le_to_p", "linear_solve_p", "lt_to_p",
    "precv", "psend", "ragged_all_to_all", "ragged_all_to_all_p", "reduce_p",
    "reduce_window_p", "rng_uniform", "rng_uniform_p", "scaled_dot", "select_and_scatter_p", "shape_as_value", "sharding_constraint_p", "stage", "stage_p",
}


def test_lax_names_and_signatures_vs_jax(jax):
    import jax.lax as jlax
    missing = {n for n in dir(jlax) if not n.startswith("_") and not hasattr(lax, n)}
    assert missing <= LAX_MISSING_KNOWN, sorted(missing - LAX_MISSING_KNOWN)
    assert not _signature_mismatches(jlax, lax, LAX_SIGNATURE_ALLOWED)


def test_array_public_names_vs_jax(jax):
    ref = {n for n in dir(jax.Array) if not n.startswith("_")}
    assert not sorted(ref - set(dir(jaxlite.Array)))


# ----------------------------------------------------------------------------- ufunc objects
UFUNC_CALLS = {
    "add_reduce": lambda m, x: m.add.reduce(x, axis=1),
    "multiply_outer": lambda m, x: m.multiply.outer(x[0], x[1]),
    "maximum_accumulate": lambda m, x: m.maximum.accumulate(x, axis=0),
    "minimum_reduce": lambda m, x: m.minimum.reduce(x, axis=None),
    "logaddexp_reduce": lambda m, x: m.logaddexp.reduce(x, axis=0, keepdims=True),
    "logaddexp2_reduce": lambda m, x: m.logaddexp2.reduce(x, axis=1),
    "add_at_bool": lambda m, x: m.add.at(m.zeros(3, bool), m.array([0, 0]), True,
                                         inplace=False),
    "subtract_at": lambda m, x: m.subtract.at(m.arange(3), 1, 5, inplace=False),
    "bitwise_and_reduce": lambda m, x: m.bitwise_and.reduce(m.array([7, 5, 3], "uint8")),
    "logical_xor_reduce": lambda m, x: m.logical_xor.reduce(m.array([True, True, False])),
    "negative": lambda m, x: m.negative(m.int8(3)),
}


@pytest.mark.parametrize("name", sorted(UFUNC_CALLS))
def test_ufunc_objects_vs_jax(jax, name):
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    want, got = UFUNC_CALLS[name](jax.numpy, x), UFUNC_CALLS[name](jnp, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_binary_ufuncs_are_ufunc_objects(jax):
    names = [n for n in dir(jax.numpy) if isinstance(getattr(jax.numpy, n), jax.numpy.ufunc)]
    assert len(names) >= 14
    for n in names:
        u = getattr(jnp, n)
        assert isinstance(u, jnp.ufunc), n
        assert (u.nin, u.nout, u.identity) == (getattr(jax.numpy, n).nin,
                                                getattr(jax.numpy, n).nout,
                                                getattr(jax.numpy, n).identity), n


# ----------------------------------------------------------------------------- lax additions
def test_lax_reduce_vs_jax(jax):
    jl = jax.lax
    x = np.random.RandomState(0).randn(3, 5, 4).astype(np.float32)
    xi = np.random.RandomState(1).randint(-50, 50, (3, 5)).astype(np.int32)
    cases = [
        lambda L: L.reduce(x, np.float32(0), L.add, (0, 2)),
        lambda L: L.reduce(xi, np.int32(-1), L.bitwise_and, (1,)),
        lambda L: L.reduce(x, np.float32(-np.inf), lambda a, b: L.max(a, b) * 1.0, (1,)),
        lambda L: L.reduce((x, x), (np.float32(0), np.float32(1)),
                           lambda a, b: (a[0] + b[0], a[1] * b[1]), (0, 1))[1],
        lambda L: L.reduce(x[:, :0], np.float32(7), lambda a, b: a + b, (1,)),
    ]
    for c in cases:
        np.testing.assert_allclose(np.asarray(c(lax)), np.asarray(c(jl)), rtol=1e-5,
                                   atol=1e-6)
    assert str(jaxlite.make_jaxpr(lambda v: lax.reduce(v, 0.0, lax.add, (1,)))(x)) == \
        str(jax.make_jaxpr(lambda v: jl.reduce(v, 0.0, jl.add, (1,)))(x))
    g = jaxlite.grad(lambda v: lax.reduce(v, 1.0, lambda a, b: a * b, (0,)).sum())(x[0])
    gj = jax.grad(lambda v: jl.reduce(v, 1.0, lambda a, b: a * b, (0,)).sum())(x[0])
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-4)


def test_lax_misc_additions_vs_jax(jax):
    jl = jax.lax
    x = np.random.RandomState(0).randn(3, 5).astype(np.float32)
    for L in (lax, jl):
        assert L.dtype(1.0) == np.float32 and L.dtype(np.float64(1)) == np.float32
        assert L.broadcast_shapes((2, 1), (3,)) == (2, 3)
    pairs = [
        lambda L: L.cumlogsumexp(np.array([-1000.0, 0.0, 1.0], np.float32)),
        lambda L: L.cumlogsumexp(x, axis=1, reverse=True),
        lambda L: L.approx_max_k(x, 2)[1],
        lambda L: L.approx_min_k(x, 2, reduction_dimension=0)[0],
        lambda L: L.dynamic_update_index_in_dim(x, x[0] * 0, -1, 0),
        lambda L: L.dynamic_slice(x, (-2, 1), (2, 3)),
        lambda L: L.dynamic_update_slice(x, np.ones((1, 2), np.float32), (-1, -2)),
        lambda L: L.dynamic_index_in_dim(x, -1, axis=1, keepdims=False),
        lambda L: L.dot(x, x.T, precision=None),
        lambda L: L.dot(x[None], x[None], dimension_numbers=(((2,), (2,)), ((0,), (0,)))),
        lambda L: L.sin(x, accuracy=L.Tolerance(atol=1e-3)),
        lambda L: L.round(x * 3, L.RoundingMethod.TO_NEAREST_EVEN),
        lambda L: L.cond(True, lambda o: o is None, lambda o: False, operand=None),
    ]
    for c in pairs:
        np.testing.assert_allclose(np.asarray(c(lax)), np.asarray(c(jl)), rtol=1e-5,
                                   atol=1e-5)
    traced = jaxlite.jit(lambda i: lax.dynamic_slice(x, (i, 0), (2, 2)))(-2)
    np.testing.assert_array_equal(np.asarray(traced), x[1:3, :2])
    with pytest.raises(ValueError, match="allow_negative_indices=False"):
        lax.dynamic_slice(x, (-1, 0), (1, 1), allow_negative_indices=False)
    with pytest.raises(ValueError, match="dimension_numbers must be specified"):
        lax.dot(x[None], x[None])
    with pytest.raises(ValueError, match="floating"):
        lax.approx_max_k(np.arange(3), 1)
    with pytest.raises(TypeError, match="no positional operands"):
        lax.cond(True, lambda o: o, lambda o: o, 1, operand=2)
    assert lax.optimization_barrier((1, 2)) == (1, 2)


def test_jnp_signature_fixes_behave():
    a = jnp.arange(6).reshape(2, 3)
    idx = jnp.array([[-1], [0]])
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(a, idx)), [[2], [3]])
    out = jnp.take_along_axis(a, idx, 1, wrap_negative_indices=False)
    assert int(out[0, 0]) == np.iinfo(np.int32).min   # out of bounds: filled
    with pytest.raises(ValueError, match="complex"):
        jnp.isposinf(jnp.array([1j]))
    with pytest.raises(NotImplementedError):
        jnp.isneginf(jnp.ones(2), out=np.ones(2))
    assert jnp.isdtype(dtype=jnp.float32, kind="real floating")
    assert jnp.zeros(2, out_sharding=None).shape == (2,)
    assert float(jnp.trunc(x=-1.5)) == -1.0


# ----------------------------------------------------------------------------- bad arguments
def _lax(m):
    return lax if m is jnp else __import__("jax").lax


BAD_ARGS = {
    "sum_axis_oob": lambda m: m.sum(m.ones((2,3)), axis=2),
    "reshape_bad": lambda m: m.reshape(m.ones(6), (4,)),
    "concat_mismatch": lambda m: m.concatenate([m.ones((2,3)), m.ones((2,4))]),
    "matmul_mismatch": lambda m: m.matmul(m.ones((2,3)), m.ones((4,2))),
    "add_broadcast": lambda m: m.ones(3) + m.ones(4),
    "transpose_bad": lambda m: m.transpose(m.ones((2,3)), (0,0)),
    "squeeze_non1": lambda m: m.squeeze(m.ones((2,3)), 0),
    "swapaxes_oob": lambda m: m.swapaxes(m.ones((2,3)), 0, 5),
    "moveaxis_oob": lambda m: m.moveaxis(m.ones((2,3)), 3, 0),
    "stack_mismatch": lambda m: m.stack([m.ones(2), m.ones(3)]),
    "split_uneven": lambda m: m.split(m.ones(5), 2),
    "take_axis_oob": lambda m: m.take(m.ones(3), m.array([0]), axis=1),
    "einsum_bad": lambda m: m.einsum("ij,jk->ik", m.ones((2,3)), m.ones((4,2))),
    "dot_mismatch": lambda m: m.dot(m.ones(3), m.ones(4)),
    "argmax_axis": lambda m: m.argmax(m.ones(3), axis=1),
    "cumsum_axis": lambda m: m.cumsum(m.ones(3), axis=1),
    "sort_axis": lambda m: m.sort(m.ones(3), axis=2),
    "where_shape": lambda m: m.where(m.ones(3) > 0, m.ones(4), 0),
    "expand_dims": lambda m: m.expand_dims(m.ones(3), 3),
    "broadcast_to": lambda m: m.broadcast_to(m.ones(3), (4,)),
    "bitwise_float": lambda m: m.bitwise_and(m.ones(3), 1),
    "astype_bad": lambda m: m.ones(3).astype("foo"),
    "zeros_neg": lambda m: m.zeros(-1),
    "arange_none": lambda m: m.arange(None),
    "array_str": lambda m: m.array("abc"),
    "asarray_list_mixed": lambda m: m.asarray([1, [2]]),
    "lax_add_dtype": lambda m: _lax(m).add(m.ones(2), m.ones(2, "int32")),
    "lax_add_shape": lambda m: _lax(m).add(m.ones(2), m.ones(3)),
    "lax_reshape": lambda m: _lax(m).reshape(m.ones(6), (4,)),
    "lax_transpose": lambda m: _lax(m).transpose(m.ones((2,3)), (0,)),
    "lax_slice": lambda m: _lax(m).slice(m.ones(3), (0,), (5,)),
    "lax_concat": lambda m: _lax(m).concatenate([m.ones(2), m.ones((2,1))], 0),
    "lax_dot_general": lambda m: _lax(m).dot_general(m.ones((2, 3)), m.ones((4, 2)),
                                                     (((1,), (0,)), ((), ()))),
    "lax_reduce_sum_axes": lambda m: _lax(m).reduce_sum(m.ones(3), (1,)),
    "lax_bcast_in_dim": lambda m: _lax(m).broadcast_in_dim(m.ones(3), (2,4), (1,)),
    "lax_convert_bad": lambda m: _lax(m).convert_element_type(m.ones(3), "foo"),
    "lax_select_shape": lambda m: _lax(m).select(m.ones(3) > 0, m.ones(3), m.ones(2)),
    "lax_pad_bad": lambda m: _lax(m).pad(m.ones(3), 0., [(1, 1, 0), (0, 0, 0)]),
    "lax_integer_pow_int_neg": lambda m: _lax(m).integer_pow(m.ones(3, "int32"), -1),
    "lax_sin_int": lambda m: _lax(m).sin(m.ones(3, "int32")),
    "lax_iota_bad": lambda m: _lax(m).iota("float32", -1),
    "lax_dyn_slice_len": lambda m: _lax(m).dynamic_slice(m.ones((2,3)), (0,), (1,)),
}
# JAX's lax.reshape error is a ValueError raised by its MLIR verifier; jaxlite's shape rule
# raises the TypeError the other lax shape rules use.
BAD_ARGS_DIFFERENT = {"lax_reshape"}


@pytest.mark.parametrize("name", sorted(BAD_ARGS))
def test_bad_argument_error_classes_vs_jax(jax, name):
    """jaxlite raises the class JAX raises (not a subclass such as NumPy's AxisError)."""
    def err(m):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                BAD_ARGS[name](m)
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return e
        return None
    want, got = err(jax.numpy), err(jnp)
    assert want is not None
    if name in BAD_ARGS_DIFFERENT:
        assert isinstance(got, TypeError)
    else:
        assert type(got) is type(want), (got, want)
