"""The remaining jax.numpy names (diagonals, triangles, index grids, index arithmetic,
functional updates, ufunc, polynomials, windows, bits, I/O, printing): values, dtypes and weak
types vs NumPy and JAX (x64 off and on), jit vs eager, and JAX's errors for traced arguments
where concrete values are required."""
import io
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.config import config
from jaxlite.errors import ConcretizationTypeError

X = np.arange(12, dtype=np.float32).reshape(3, 4)
V = np.arange(1, 4, dtype=np.float32)
P = np.array([1., -3., 2.], np.float32)
Q = np.array([2., 1.], np.float32)
BITS = np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1], [0, 1, 1, 0, 1, 0, 1, 0, 0]], np.int32)
U8 = np.array([[3, 255], [128, 7]], np.uint8)
XX = np.linspace(0, 1, 10).astype(np.float32)
YY = (3 * XX ** 2 + 1).astype(np.float32)
PH = (np.cumsum(np.ones(10)) * 2).astype(np.float32)
ufn = {}


def _uf(m):
    # one ufunc object per module, so equality/hash are stable
    if m not in ufn:
        ufn[m] = m.frompyfunc(lambda a, b: a * b + 1, 2, 1)
    return ufn[m]


# name -> (function of the numpy-like module, numpy-comparable?, traceable args or None)
CASES = {
    "diag_1d": lambda m: m.diag(V, 1), "diag_1d_neg": lambda m: m.diag(V, -2),
    "diag_2d": lambda m: m.diag(X, 1), "diagflat": lambda m: m.diagflat(X[:2, :2], -1),
    "diagflat_pos": lambda m: m.diagflat(V, 2),
    "diag_indices": lambda m: m.diag_indices(3, 3),
    "diag_indices_from": lambda m: m.diag_indices_from(np.ones((2, 2))),
    "tril": lambda m: m.tril(X, 1), "triu": lambda m: m.triu(np.ones((2, 3, 4)), -1),
    "triu_int": lambda m: m.triu(np.arange(9).reshape(3, 3)),
    "tril_indices": lambda m: m.tril_indices(4, 1, 3),
    "triu_indices": lambda m: m.triu_indices(3, -1, 5),
    "tril_indices_from": lambda m: m.tril_indices_from(X, -1),
    "triu_indices_from": lambda m: m.triu_indices_from(X, 2),
    "mask_indices": lambda m: m.mask_indices(3, m.triu, 1),
    "indices": lambda m: m.indices((2, 3)), "indices_sparse": lambda m: m.indices((2, 3),
                                                                                  sparse=True),
    "indices_int8": lambda m: m.indices((2,), dtype=np.int8),
    "ix_": lambda m: m.ix_(np.array([0, 2]), np.array([1, 3])),
    "mgrid": lambda m: m.mgrid[0:3, 0:4], "mgrid_complex": lambda m: m.mgrid[0:1:5j],
    "mgrid_float": lambda m: m.mgrid[0:3:0.5, 0:2], "ogrid": lambda m: m.ogrid[0:3, 0:4],
    "r_": lambda m: m.r_[np.array([1, 2]), 0, 3:6],
    "r_directive": lambda m: m.r_["0,2", np.array([1, 2]), np.array([3, 4])],
    "r_row": lambda m: m.r_["r", np.array([1., 2])],
    "c_": lambda m: m.c_[np.array([1, 2]), np.array([3, 4])], "c_2d": lambda m: m.c_[X, X],
    "fromfunction": lambda m: m.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int),
    "vander": lambda m: m.vander(V), "vander_inc": lambda m: m.vander(V, 4, increasing=True),
    "vander_int": lambda m: m.vander(np.array([1, 2, 3]), 2),
    "unravel_index": lambda m: m.unravel_index(np.array([3, 7, 11]), (3, 4)),
    "ravel_multi_index": lambda m: m.ravel_multi_index((np.array([0, 2]), np.array([1, 3])),
                                                       (3, 4)),
    "ravel_multi_index_F": lambda m: m.ravel_multi_index(
        (np.array([0, 5]), np.array([1, 3])), (3, 4), mode="clip", order="F"),
    "put": lambda m: m.put(X, np.array([0, 5, 7]), np.array([9., 8.]), inplace=False),
    "put_wrap": lambda m: m.put(X, np.array([0, 13]), 1., mode="wrap", inplace=False),
    "put_along_axis": lambda m: m.put_along_axis(X, np.array([[0], [1], [2]]), 99., axis=1,
                                                 inplace=False),
    "place": lambda m: m.place(X, X > 5, np.array([1., 2.]), inplace=False),
    "choose": lambda m: m.choose(np.array([0, 1, 2, 1]),
                                 [np.arange(4), np.arange(4) * 10, np.arange(4) * 100]),
    "choose_clip": lambda m: m.choose(np.array([[0, 4], [1, -1]]),
                                      [np.float32(1.), np.array([2., 3.], np.float32)],
                                      mode="clip"),
    "apply_along_axis": lambda m: m.apply_along_axis(lambda v: v.sum() * v[0], 1, X),
    "apply_along_axis_0": lambda m: m.apply_along_axis(lambda v: v[::-1], 0,
                                                       np.ones((2, 3, 4)) * np.arange(4)),
    "apply_over_axes": lambda m: m.apply_over_axes(m.sum, np.ones((2, 3, 4)), [0, 2]),
    "astype": lambda m: m.astype(X, np.int32),
    "astype_complex_bool": lambda m: m.astype(np.array([0j, 1j]), bool),
    "roots": lambda m: m.sort(m.roots(P).real), "roots_zeros": lambda m: m.sort(
        m.roots(np.array([0., 0., 1., -3., 2.])).real),
    "poly": lambda m: m.poly(np.array([1., 2., 3.])), "polyadd": lambda m: m.polyadd(P, Q),
    "polysub": lambda m: m.polysub(Q, P), "polymul": lambda m: m.polymul(P, Q),
    "polydiv": lambda m: m.polydiv(P, Q), "polyder": lambda m: m.polyder(P),
    "polyder_int": lambda m: m.polyder(np.array([1, 2, 3, 4]), 2),
    "polyint": lambda m: m.polyint(P, 2, k=np.array([1., 2.])),
    "polyval": lambda m: m.polyval(P, np.arange(4.)),
    "polyfit": lambda m: m.polyfit(XX, YY, 2),
    "unwrap": lambda m: m.unwrap(PH), "unwrap_period": lambda m: m.unwrap(
        np.array([0, 3, 6, 1, 4]), period=5),
    "bartlett": lambda m: m.bartlett(7), "blackman": lambda m: m.blackman(6),
    "hamming": lambda m: m.hamming(5), "hanning": lambda m: m.hanning(1),
    "kaiser": lambda m: m.kaiser(6, 2.5), "i0": lambda m: m.i0(np.linspace(-3, 3, 7)),
    "packbits": lambda m: m.packbits(BITS),
    "packbits_axis": lambda m: m.packbits(BITS, axis=1, bitorder="little"),
    "unpackbits": lambda m: m.unpackbits(U8),
    "unpackbits_count": lambda m: m.unpackbits(U8, axis=1, count=11, bitorder="little"),
    "frombuffer": lambda m: m.frombuffer(b"\x01\x02\x03\x04", dtype=np.uint8),
    "fromstring": lambda m: m.fromstring("1 2 3", dtype=np.float32, sep=" "),
}
NO_NUMPY = {"mask_indices", "fromfunction", "polyfit", "choose_clip", "astype",
            "astype_complex_bool",  # NumPy differs in dtype/semantics or API
            "polydiv",  # NumPy trims the remainder's leading zeros, JAX keeps them
            "unwrap_period"}  # integer input with odd period: JAX's rounding differs


def _check(got, want, exact_dtype=True, rtol=1e-5, atol=1e-5):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w, exact_dtype, rtol, atol)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if exact_dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g, w.astype(g.dtype), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", [n for n in CASES if n not in NO_NUMPY])
def test_values_vs_numpy(name):
    got = CASES[name](jnp)
    import numpy
    try:
        want = CASES[name](numpy)
    except (TypeError, AttributeError, ValueError):
        pytest.skip("NumPy has no equivalent call")
    _check(got, want, exact_dtype=False, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("use_x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("name", list(CASES))
def test_vs_jax(name, use_x64):
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    with config.override("jax_enable_x64", use_x64):
        rjax.config.update("jax_enable_x64", use_x64)
        try:
            got = CASES[name](jnp)
            want = CASES[name](rjnp)
        finally:
            rjax.config.update("jax_enable_x64", False)
    tol = 1e-3 if name == "polyfit" else 1e-5
    _check(got, want, rtol=tol, atol=tol)
    for g, w in zip(*(x if isinstance(x, (tuple, list)) else [x] for x in (got, want))):
        assert getattr(g, "weak_type", False) == getattr(w, "weak_type", False), name


JIT_CASES = {
    "diag": (lambda v: jnp.diag(v, 1), (V,)), "diag2": (lambda x: jnp.diag(x), (X,)),
    "diagflat": (lambda v: jnp.diagflat(v, -1), (V,)),
    "tril": (lambda x: jnp.tril(x, -1), (X,)), "triu": (lambda x: jnp.triu(x, 1), (X,)),
    "fill_diagonal": (lambda x, v: jnp.fill_diagonal(x, v, inplace=False), (X, V[:2])),
    "vander": (lambda v: jnp.vander(v, 3), (V,)),
    "unravel_index": (lambda i: jnp.unravel_index(i, (3, 4)), (np.array([1, 5, 30]),)),
    "ravel_multi_index": (lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="wrap"),
                          (np.array([1, 5]), np.array([0, 7]))),
    "put": (lambda x, i: jnp.put(x, i, 5., inplace=False), (X, np.array([1, 3]))),
    "put_along_axis": (lambda x, i: jnp.put_along_axis(x, i, 0., axis=0, inplace=False),
                       (X, np.array([[2, 0, 1, 1]]))),
    "place": (lambda x: jnp.place(x, x > 4, np.array([-1., -2.]), inplace=False), (X,)),
    "choose": (lambda a: jnp.choose(a, [V, V * 2], mode="wrap"), (np.array([0, 1, 3]),)),
    "apply_along_axis": (lambda x: jnp.apply_along_axis(jnp.cumsum, 0, x), (X,)),
    "roots_nostrip": (lambda p: jnp.roots(p, strip_zeros=False).real, (P,)),
    "poly": (jnp.poly, (V,)), "polyval": (jnp.polyval, (P, V)),
    "polyadd": (jnp.polyadd, (P, Q)), "polymul": (jnp.polymul, (P, Q)),
    "polydiv": (jnp.polydiv, (P, Q)), "polyint": (jnp.polyint, (P,)),
    "polyder": (jnp.polyder, (P,)), "polyfit": (lambda x, y: jnp.polyfit(x, y, 2), (XX, YY)),
    "unwrap": (jnp.unwrap, (PH,)), "kaiser": (lambda b: jnp.kaiser(5, b), (np.float32(3.),)),
    "i0": (jnp.i0, (V,)), "packbits": (jnp.packbits, (BITS,)),
    "unpackbits": (lambda u: jnp.unpackbits(u, axis=0), (U8,)),
    "ufunc_reduce": (lambda x: _uf(jnp).reduce(x, axis=1), (X,)),
    "ufunc_accumulate": (lambda x: _uf(jnp).accumulate(x), (X,)),
    "ufunc_outer": (lambda a: _uf(jnp).outer(a, a), (V,)),
    "ufunc_at": (lambda x: _uf(jnp).at(x, np.array([0, 0, 2]), 2., inplace=False), (V,)),
}


@pytest.mark.parametrize("name", list(JIT_CASES))
def test_jit_matches_eager(name):
    f, args = JIT_CASES[name]
    _check(jax.jit(f)(*args), f(*args), rtol=1e-5, atol=1e-5)


def test_ufunc_methods_vs_jax():
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    for meth, call in [("call", lambda u: u(X, 2.)), ("reduce", lambda u: u.reduce(X, axis=1)),
                       ("reduce_none", lambda u: u.reduce(X, axis=None, keepdims=True)),
                       ("accumulate", lambda u: u.accumulate(X, axis=1)),
                       ("outer", lambda u: u.outer(np.arange(3.), np.arange(2.))),
                       ("at", lambda u: u.at(X[0], np.array([0, 0, 2]), 2., inplace=False)),
                       ("reduceat", lambda u: u.reduceat(np.arange(8.),
                                                         np.array([0, 4, 1, 5])))]:
        _check(call(_uf(jnp)), call(_uf(rjnp)))
    del rjax
    u = _uf(jnp)
    assert repr(u) == "<jnp.ufunc '<lambda>'>" and u.nin == 2 and u.nout == 1
    assert isinstance(u, jnp.ufunc) and u == u and hash(u) == hash(u)
    with pytest.raises(NotImplementedError):
        u.at(X, 0, 1.)
    with pytest.raises(ValueError, match="only supported for binary"):
        jnp.frompyfunc(jnp.sin, 1, 1).reduce(X)


def _traced_error(f, *args):
    with pytest.raises(ConcretizationTypeError):
        jax.jit(f)(*args)


def test_concrete_arguments_required():
    _traced_error(lambda k: jnp.diag(V, k), 1)
    _traced_error(lambda n: jnp.tril_indices(n), 3)
    _traced_error(lambda n: jnp.diag_indices(n), 3)
    _traced_error(lambda a: jnp.choose(a, [V, V]), np.array([0, 1, 0]))
    _traced_error(lambda i: jnp.ravel_multi_index((i,), (3,)), np.array([1]))
    _traced_error(lambda p: jnp.roots(p), P)
    _traced_error(lambda m: jnp.hanning(m), 4)
    _traced_error(lambda s: jnp.mgrid[0:s], 3)
    # (polyder's ``m`` is a static argument of its jit, as JAX's: a tracer is JAX's
    # unhashable-static-argument error)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.jit(lambda m: jnp.polyder(P, m))(1)


def test_errors():
    with pytest.raises(ValueError, match="must be at least 2D"):
        jnp.tril(V)
    with pytest.raises(ValueError, match="1d or 2d"):
        jnp.diag(np.ones((2, 2, 2)))
    with pytest.raises(NotImplementedError, match="immutable"):
        jnp.fill_diagonal(X, 1.)
    with pytest.raises(ValueError, match="in-place"):
        jnp.put(X, 0, 1.)
    with pytest.raises(ValueError, match="in-place"):
        jnp.place(X, X > 1, 0.)
    with pytest.raises(ValueError, match="in-place"):
        jnp.put_along_axis(X, np.zeros((3, 1), int), 0., axis=1)
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.choose(np.array([0, 5]), [V[:2], V[:2]])
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((np.array([4]),), (3,))
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.ix_(X)
    with pytest.raises(TypeError, match="unsigned byte"):
        jnp.unpackbits(BITS)
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(X)
    with pytest.raises(ValueError, match="complex"):
        jnp.unwrap(np.array([1j]))
    with pytest.raises(NotImplementedError, match="fromiter"):
        jnp.fromiter(iter([1]), float)
    with pytest.raises(NotImplementedError, match="fromfile"):
        jnp.fromfile("x")
    with pytest.raises(ValueError, match="string directive"):
        jnp.r_[V, "r"]
    with pytest.raises(TypeError, match="requires ndarray"):
        jnp.diag([1, 2])


def test_x64_dtypes(x64):
    assert jnp.indices((2,)).dtype == np.int64
    assert jnp.diag_indices(2)[0].dtype == np.int64
    assert jnp.hanning(4).dtype == np.float64
    assert jnp.polyval(np.array([1., 2.]), 3.).dtype == np.float64
    assert jnp.roots(np.array([1., -3., 2.])).dtype == np.complex128
    assert jnp.unravel_index(np.array([3]), (2, 2))[0].dtype == np.int64


def test_misc_helpers():
    assert jnp.iterable([1]) and not jnp.iterable(3)
    assert jnp.s_[1:2] == slice(1, 2) and jnp.index_exp[1] == (1,)
    assert issubclass(jnp.ComplexWarning, RuntimeWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", jnp.ComplexWarning)
        with pytest.raises(jnp.ComplexWarning):
            warnings.warn("x", np.exceptions.ComplexWarning)
    f = io.BytesIO()
    jnp.save(f, jnp.arange(3.))
    f.seek(0)
    out = jnp.load(f)
    assert isinstance(out, jax.Array) and out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(np.arange(3.))), np.arange(3.))
    assert jnp.array_repr(jnp.arange(3)) == "array([0, 1, 2], dtype=int32)"
    assert jnp.array_str(jnp.ones(2)) == "[1. 1.]"
    assert "precision" in jnp.get_printoptions()
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
    f = io.BytesIO()
    jnp.savez(f, a=jnp.ones(2))
    f.seek(0)
    assert np.load(f)["a"].shape == (2,)


def test_grads():
    from jaxlite.test_util import check_grads
    with config.override("jax_enable_x64", True):
        x = np.array([-2., -0.7, 0.4, 1.5])  # (i0's custom JVP zeroes the tangent at 0)
        check_grads(jnp.i0, (x,), order=2, modes=("fwd", "rev"))
        check_grads(lambda p: jnp.polyval(p, x), (np.array([1., -2., 3.]),), order=2)
        check_grads(lambda m: jnp.tril(m, 1) + jnp.diag(jnp.diag(m)), (np.ones((3, 3)),),
                    order=1)
        check_grads(lambda v: jnp.put(jnp.zeros(5), np.array([1, 3]), v, inplace=False),
                    (np.array([1., 2.]),), order=1)
    assert float(jax.grad(jnp.i0)(0.0)) == 0.0


def test_vmap():
    got = jax.vmap(lambda v: jnp.diag(v))(np.stack([V, V * 2]))
    _check(got, np.stack([np.diag(V), np.diag(V * 2)]))
    got = jax.vmap(lambda p: jnp.polyval(p, 2.))(np.stack([P, P * 3]))
    _check(got, np.array([np.polyval(P, 2.), np.polyval(P * 3, 2.)], np.float32))
    got = jax.vmap(lambda x: jnp.tril(x))(np.stack([X[:, :3], X[:, 1:]]))
    _check(got, np.stack([np.tril(X[:, :3]), np.tril(X[:, 1:])]))


JAXPR_CASES = {
    "diag": (lambda m: (lambda v: m.diag(v, 1)), (V,)),
    "vander": (lambda m: m.vander, (V,)),
    "polyval": (lambda m: m.polyval, (V, V)),
    "i0": (lambda m: m.i0, (V,)),
    "hanning": (lambda m: (lambda: m.hanning(4)), ()),
    "fill_diagonal": (lambda m: (lambda x: m.fill_diagonal(x, 2., inplace=False)), (X,)),
}


@pytest.mark.parametrize("name", list(JAXPR_CASES))
def test_jaxpr_vs_jax(name):
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    mk, args = JAXPR_CASES[name]
    assert str(jax.make_jaxpr(mk(jnp))(*args)) == str(rjax.make_jaxpr(mk(rjnp))(*args))
