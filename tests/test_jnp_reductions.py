"""jax.numpy reductions and statistics: values vs NumPy, dtypes/weak types and jaxprs vs JAX,
jit vs eager, and JAX's errors."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

RNG = np.random.RandomState(0)


def _works(fn):
    try:
        fn()
        return True
    except Exception:  # noqa: BLE001 - probing for features owned elsewhere
        return False


# Probes for pieces owned by other parts of jaxlite (tests needing them xfail until ready).
_BOOL_REDUCE_OK = _works(lambda: jnp.all(jnp.ones(2)))
_COMPLEX_REAL_OK = _works(lambda: jnp.real(jnp.ones(2, jnp.complex64)))
_SCATTER_OK = _works(lambda: jnp.zeros(3).at[jnp.array([0, 1])].add(1.0))


def _require(ok, what):
    if not ok:
        pytest.xfail(f"needs {what} (not available yet)")
SHAPES = [(5,), (2, 3), (2, 3, 4)]
DTYPES = [np.float32, np.int32, np.int8, np.uint8, np.bool_, np.complex64]


def _rand(shape, dtype):
    if dtype == np.bool_:
        return RNG.rand(*shape) > 0.5
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.randn(*shape) + 1j * RNG.randn(*shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.randint(0, 5, shape).astype(dtype)
    return RNG.randn(*shape).astype(dtype)


def _close(x, y, tol=1e-5):
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape, (x.shape, y.shape)
    np.testing.assert_allclose(x.astype(np.complex128) if x.dtype.kind == "c" else
                               x.astype(np.float64), np.asarray(y, dtype=x.dtype).astype(
                                   np.complex128 if x.dtype.kind == "c" else np.float64),
                               rtol=tol, atol=tol)


def _axes(shape):
    return [None, 0, -1, tuple(range(len(shape)))] + ([(0, -1)] if len(shape) > 1 else [])


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any", "mean"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_monoid_values(name, dtype, shape):
    x = _rand(shape, dtype)
    if name in ("max", "min") and dtype == np.complex64:
        pytest.skip("complex ordering")
    if name in ("all", "any"):
        _require(_BOOL_REDUCE_OK, "reduce_and/reduce_or eager impl")
        if dtype == np.complex64:
            _require(_COMPLEX_REAL_OK, "lax.real eager impl")
    ref = x
    if name in ("all", "any") and dtype == np.complex64:
        ref = x.real  # JAX (and jaxlite) test complex truthiness on the real part
    for axis in _axes(shape):
        for keepdims in (False, True):
            want = getattr(np, name)(ref, axis=axis, keepdims=keepdims)
            got = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
            _close(got, want, 1e-4)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_moments(name, dtype):
    x = _rand((3, 4), dtype)
    for axis in (None, 0, (0, 1)):
        for ddof in (0, 1):
            _close(getattr(jnp, name)(x, axis=axis, ddof=ddof),
                   getattr(np, name)(x, axis=axis, ddof=ddof), 1e-4)
    _close(jnp.var(x, correction=1, keepdims=True), np.var(x, ddof=1, keepdims=True), 1e-4)
    assert np.isnan(np.asarray(jnp.var(np.ones(1, np.float32), ddof=1)))


def test_where_initial_dtype():
    _require(_BOOL_REDUCE_OK, "reduce_and/reduce_or eager impl")
    x = _rand((3, 4), np.float32)
    m = x > 0
    _close(jnp.sum(x, where=m), np.sum(x, where=m))
    _close(jnp.max(x, axis=0, where=m, initial=-10.), np.max(x, axis=0, where=m, initial=-10.))
    _close(jnp.min(x, initial=-5.), np.min(x, initial=-5.))
    _close(jnp.mean(x, axis=1, where=m), np.mean(x, axis=1, where=m))
    _close(jnp.sum(x, dtype=np.int32), np.sum(x, dtype=np.int32))
    _close(jnp.prod(x, axis=1, initial=2.), np.prod(x, axis=1, initial=2.))
    _close(jnp.all(x, where=m), np.all(x, where=m))
    _close(jnp.var(x, where=m), np.var(x, where=m), 1e-4)
    _close(jnp.std(x, axis=0, mean=jnp.mean(x, 0, keepdims=True)), np.std(x, axis=0), 1e-4)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(name):
    x = _rand((3, 4, 2), np.float32)
    for axis in (None, 0, 1, -1):
        _close(getattr(jnp, name)(x, axis=axis), getattr(np, name)(x, axis=axis))
        _close(getattr(jnp, name)(x, axis=axis, keepdims=True),
               getattr(np, name)(x, axis=axis, keepdims=True))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_cumulative(name, dtype):
    x = _rand((3, 4), dtype)
    if name.startswith("nan") and dtype == np.float32:
        x[0, 1] = np.nan
    for axis in (None, 0, 1, -1):
        _close(getattr(jnp, name)(x, axis=axis), getattr(np, name)(x, axis=axis), 1e-4)
    _close(jnp.cumsum(x, axis=1, dtype=np.float32), np.cumsum(x, axis=1, dtype=np.float32))


def test_cumulative_array_api():
    x = _rand((3, 4), np.float32)
    _close(jnp.cumulative_sum(x, axis=1, include_initial=True),
           np.cumulative_sum(x, axis=1, include_initial=True), 1e-5)
    _close(jnp.cumulative_prod(x[0], include_initial=True),
           np.cumulative_prod(x[0], include_initial=True), 1e-5)
    with pytest.raises(ValueError):
        jnp.cumulative_sum(x)


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean",
                                  "nanvar", "nanstd", "nanargmax", "nanargmin"])
def test_nan_reductions(name):
    if name in ("nanmax", "nanmin", "nanargmax", "nanargmin"):
        _require(_BOOL_REDUCE_OK, "reduce_and/reduce_or eager impl")
    x = _rand((3, 4), np.float32)
    x[0, 0] = x[2, 3] = np.nan
    for axis in (None, 0, 1):
        _close(getattr(jnp, name)(x, axis=axis), getattr(np, name)(x, axis=axis), 1e-4)
    if name in ("nanmax", "nanmin"):
        assert np.isnan(np.asarray(getattr(jnp, name)(np.full(3, np.nan, np.float32))))


def test_misc_stats():
    x = _rand((3, 4), np.float32)
    _close(jnp.ptp(x, axis=1), np.ptp(x, axis=1))
    _close(jnp.count_nonzero(x > 0, axis=0), np.count_nonzero(x > 0, axis=0))
    w = np.abs(_rand((4,), np.float32)) + 0.1
    _close(jnp.average(x, axis=1, weights=w), np.average(x, axis=1, weights=w), 1e-5)
    a, s = jnp.average(x, axis=0, returned=True)
    a2, s2 = np.average(x, axis=0, returned=True)
    _close(a, a2)
    _close(s, s2)
    _close(jnp.diff(x, axis=0), np.diff(x, axis=0))
    _close(jnp.diff(x, n=2, prepend=0., append=1.), np.diff(x, n=2, prepend=0., append=1.))
    _close(jnp.ediff1d(x, to_begin=np.array([1.]), to_end=np.array([2., 3.])),
           np.ediff1d(x, to_begin=np.array([1.]), to_end=np.array([2., 3.])))
    for got, want in zip(jnp.gradient(x), np.gradient(x)):
        _close(got, want, 1e-5)
    _close(jnp.gradient(x[0], np.array([0., 1., 3., 4.])), np.gradient(x[0],
                                                                     np.array([0., 1., 3., 4.])))
    _close(jnp.trapezoid(x), np.trapezoid(x), 1e-5)
    _close(jnp.trapezoid(x, x=np.array([0., 1., 3., 4.])),
           np.trapezoid(x, x=np.array([0., 1., 3., 4.])), 1e-5)
    _close(jnp.cov(x), np.cov(x), 1e-4)
    _close(jnp.cov(x, rowvar=False, bias=True), np.cov(x, rowvar=False, bias=True), 1e-4)
    fw = np.array([1, 2, 1, 3])
    _close(jnp.cov(x, fweights=fw, aweights=w), np.cov(x, fweights=fw, aweights=w), 1e-4)


def test_histograms():
    _require(_SCATTER_OK, "scatter (.at[].add with index arrays)")
    x = _rand((20,), np.float32)
    c, e = jnp.histogram(x, bins=5)
    c2, e2 = np.histogram(x, bins=5)
    _close(e, e2, 1e-5)
    _close(c, c2.astype(np.float32))
    _close(jnp.digitize(x, np.array([-1., 0., 1.])), np.digitize(x, np.array([-1., 0., 1.])))
    _close(jnp.bincount(np.array([0, 1, 1, 4])), np.bincount(np.array([0, 1, 1, 4])))
    _close(jnp.interp(np.array([0.5, 2.5, 7.]), np.array([0., 1., 3.]), np.array([1., 2., 0.])),
           np.interp(np.array([0.5, 2.5, 7.]), np.array([0., 1., 3.]), np.array([1., 2., 0.])))


def test_quantiles():
    _require(_BOOL_REDUCE_OK, "reduce_and/reduce_or eager impl")
    x = _rand((3, 5), np.float32)
    for method in ("linear", "lower", "higher", "nearest", "midpoint"):
        _close(jnp.quantile(x, 0.3, axis=1, method=method),
               np.quantile(x, 0.3, axis=1, method=method), 1e-5)
    _close(jnp.median(x), np.median(x))
    _close(jnp.median(x, axis=0, keepdims=True), np.median(x, axis=0, keepdims=True))
    _close(jnp.percentile(x, np.array([10., 90.]), axis=(0, 1)),
           np.percentile(x, np.array([10., 90.]), axis=(0, 1)), 1e-5)
    x[1, 2] = np.nan
    _close(jnp.nanmedian(x, axis=1), np.nanmedian(x, axis=1))
    _close(jnp.nanpercentile(x, 40, axis=1), np.nanpercentile(x, 40, axis=1), 1e-5)


# ----------------------------------------------------------------------------- jit
def test_jit_matches_eager():
    x = _rand((3, 4), np.float32)
    fns = [lambda a: jnp.sum(a, axis=1), lambda a: jnp.var(a, ddof=1),
           lambda a: jnp.cumsum(a, 0), lambda a: jnp.nanmean(a), lambda a: jnp.argmax(a, 1),
           lambda a: jnp.max(a, where=a > 0, initial=0.), lambda a: jnp.cov(a),
           lambda a: jnp.diff(a)]
    for f in fns:
        _close(jaxlite.jit(f)(x), f(x), 1e-5)


# ----------------------------------------------------------------------------- errors
def test_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="duplicate value"):
        jnp.sum(x, axis=(0, 0))
    with pytest.raises(ValueError, match="zero-size array"):
        jnp.max(jnp.ones((0, 3)), axis=0)
    with pytest.raises(ValueError, match="where must be None or a boolean"):
        jnp.sum(x, where=x)
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.max(x, where=x > 0)
    with pytest.raises(ValueError, match="initial value must be a scalar"):
        jnp.sum(x, initial=jnp.ones(2))
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.sum"):
        jnp.sum(x, out=x)
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum([1, 2])
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jnp.argmax(jnp.ones(0))
    with pytest.raises(ValueError, match="ddof and correction"):
        jnp.var(x, ddof=1, correction=1)


# ----------------------------------------------------------------------------- vs JAX
def _jax():
    return pytest.importorskip("jax")


DTYPE_CASES = {
    "sum_f": lambda m: m.sum(m.ones(3)), "sum_i8": lambda m: m.sum(m.ones(3, m.int8)),
    "sum_u8": lambda m: m.sum(m.ones(3, m.uint8)), "sum_b": lambda m: m.sum(m.ones(3, bool)),
    "sum_weak": lambda m: m.sum(1.0), "mean_i": lambda m: m.mean(2),
    "mean_f16": lambda m: m.mean(m.ones(3, m.float16)), "prod_f16": lambda m: m.prod(
        m.float16(2)), "max_weak": lambda m: m.max(3), "var_i": lambda m: m.var(2),
    "var_c": lambda m: m.var(m.ones(3, m.complex64)), "argmax": lambda m: m.argmax(3.0),
    "all": lambda m: m.all(2.0), "cumsum_i8": lambda m: m.cumsum(m.int8(3)),
    "cumsum_b": lambda m: m.cumsum(m.ones(2, bool)), "count_nonzero": lambda m: m.count_nonzero(
        m.ones(3)), "nansum_i": lambda m: m.nansum(m.ones(3, m.int16)),
    "average": lambda m: m.average(m.ones(3, m.int32)), "median_i": lambda m: m.median(
        m.ones(3, m.int32)),
}


@pytest.mark.parametrize("case", sorted(DTYPE_CASES))
def test_dtype_and_weak_type_vs_jax(case):
    jax = _jax()
    if case == "all":
        _require(_BOOL_REDUCE_OK, "reduce_and/reduce_or eager impl")
    import jax.numpy as jjnp
    want = DTYPE_CASES[case](jjnp)
    got = DTYPE_CASES[case](jnp)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.weak_type == want.weak_type
    assert got.shape == want.shape
    del jax


JAXPR_CASES = {
    "sum": lambda m, a: m.sum(a), "sum_axis_keep": lambda m, a: m.sum(a, axis=1, keepdims=True),
    "sum_int8": lambda m, a: m.sum(a.astype(m.int8)), "sum_initial": lambda m, a: m.sum(
        a, initial=1.), "sum_f16": lambda m, a: m.sum(a.astype(m.float16)),
    "max": lambda m, a: m.max(a, axis=0), "min_keep": lambda m, a: m.min(a, keepdims=True),
    "all": lambda m, a: m.all(a), "any": lambda m, a: m.any(a, axis=0),
    "mean": lambda m, a: m.mean(a), "mean_axis": lambda m, a: m.mean(a, axis=1),
    "mean_int": lambda m, a: m.mean(a.astype(m.int32), axis=1),
    "argmax": lambda m, a: m.argmax(a), "argmax_keep": lambda m, a: m.argmax(a, 1, keepdims=True),
    "cumsum": lambda m, a: m.cumsum(a), "cumsum_axis": lambda m, a: m.cumsum(a, axis=1),
    "cumprod": lambda m, a: m.cumprod(a, axis=0), "cumsum_bool": lambda m, a: m.cumsum(a > 0, 1),
    "cumulative_sum": lambda m, a: m.cumulative_sum(a, axis=1, include_initial=True),
    "ptp": lambda m, a: m.ptp(a), "count_nonzero": lambda m, a: m.count_nonzero(a, axis=0),
    "diff": lambda m, a: m.diff(a), "ediff1d": lambda m, a: m.ediff1d(a),
    "cov": lambda m, a: m.cov(a), "average": lambda m, a: m.average(a, axis=0, weights=a[:, 0]),
    "var": lambda m, a: m.var(a),
    "std": lambda m, a: m.std(a, axis=0, ddof=1),
    "sum_where": lambda m, a: m.sum(a, where=a > 0),
    "nansum": lambda m, a: m.nansum(a),
    "nanmax": lambda m, a: m.nanmax(a),
    "nanmean": lambda m, a: m.nanmean(a),
    "nanvar": lambda m, a: m.nanvar(a),
    "nanargmax": lambda m, a: m.nanargmax(a, axis=0),
    "mean_where": lambda m, a: m.mean(a, where=a > 0),
    "prod": lambda m, a: m.prod(a, axis=0),
    "gradient": lambda m, a: m.gradient(a),
    "trapezoid": lambda m, a: m.trapezoid(a),
    "median": lambda m, a: m.median(a),
    "quantile": lambda m, a: m.quantile(a, 0.3, axis=0),
}


def _jaxprs(fn):
    jax = _jax()
    import jax.numpy as jjnp
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = str(jax.make_jaxpr(lambda a: fn(jjnp, a))(x))
    got = str(jaxlite.make_jaxpr(lambda a: fn(jnp, a))(x))
    return got, want


@pytest.mark.parametrize("case", sorted(JAXPR_CASES))
def test_jaxpr_vs_jax(case):
    got, want = _jaxprs(JAXPR_CASES[case])
    assert got == want



_SPECIALS = np.array([1, -1, 0, -0.0, np.nan, np.inf, -np.inf, 2], np.float32)


def _complex_case(rng, shape):
    x = np.empty(shape, np.complex64)
    x.real = rng.choice(_SPECIALS, shape)
    x.imag = rng.choice(_SPECIALS, shape)
    return x


def _lex_fold(x, largest):
    # the reduction JAX's HLO states: from (-inf|+inf) + 0j, take each element in turn
    # unless the accumulator beats it (comparisons with NaN are false)
    acc = complex(-np.inf if largest else np.inf, 0)
    for e in x.ravel().tolist():
        if acc.real == e.real:
            keep = acc.imag > e.imag if largest else acc.imag < e.imag
        else:
            keep = acc.real > e.real if largest else acc.real < e.real
        acc = acc if keep else e
    return np.complex64(acc)


def test_complex_max_min_fold_as_xla_with_nans_and_signed_zeros():
    rng = np.random.default_rng(0)
    for n in (2, 3, 7, 32):
        for _ in range(40):
            x = _complex_case(rng, (n,))
            for largest, f in ((True, jnp.max), (False, jnp.min)):
                got = np.asarray(f(jnp.asarray(x))).reshape(1).view(np.uint64)
                want = np.array([_lex_fold(x, largest)]).view(np.uint64)
                assert got[0] == want[0], (x, largest)
    # one element: the element itself (XLA drops a reduction over length 1)
    x = np.array([complex(np.inf, 1)], np.complex64)
    assert complex(jnp.min(jnp.asarray(x))) == complex(np.inf, 1)


def test_complex_max_min_vs_jax():
    jax_ = pytest.importorskip("jax")
    rng = np.random.default_rng(1)
    for shape, axes in [((5,), (0,)), ((3, 4), (1,)), ((4, 3), (0,)), ((2, 3, 4), (0, 2)),
                        ((1, 3, 3), (0,)), ((6, 5), (0, 1))]:
        for _ in range(20):
            x = _complex_case(rng, shape)
            for name in ("max", "min"):
                want = np.asarray(getattr(jax_.numpy, name)(x, axis=axes))
                got = np.asarray(getattr(jnp, name)(jnp.asarray(x), axis=axes))
                np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
                jitted = jaxlite.jit(lambda v, f=getattr(jnp, name): f(v, axis=axes))
                np.testing.assert_array_equal(np.asarray(jitted(x)).view(np.uint64),
                                              want.view(np.uint64))
