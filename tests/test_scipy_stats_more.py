"""jax.scipy.stats: the per-distribution modules (importable like JAX's), mode, rankdata,
sem and gaussian_kde -- against SciPy/NumPy references and golden values, through
jit/vmap/grad, and against JAX (values, dtypes, weak types, errors) when it is installed."""
import dataclasses
import importlib
import pickle
import types

import numpy as np
import pytest
import scipy.stats as sst

import jaxlite
import jaxlite.numpy as jnp
from jaxlite._src.scipy.stats import FAMILIES
from jaxlite.scipy import stats as ST

A = np.asarray


def _jax():
    return pytest.importorskip("jax")


# ------------------------------------------------------------------ distribution modules

def test_family_modules_import_like_jax():
    import jaxlite.scipy.stats.norm as norm
    from jaxlite.scipy.stats import norm as norm2
    from jaxlite.scipy.stats.norm import logpdf
    from jaxlite.scipy.stats.gumbel_r import cdf as gumbel_cdf
    assert isinstance(norm, types.ModuleType) and norm is norm2 and norm.__name__ == \
        "jaxlite.scipy.stats.norm"
    assert logpdf is norm.logpdf
    np.testing.assert_allclose(float(logpdf(0.5)), sst.norm.logpdf(0.5), rtol=1e-6)
    np.testing.assert_allclose(float(gumbel_cdf(0.5)), sst.gumbel_r.cdf(0.5), rtol=1e-6)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_module(family):
    mod = importlib.import_module(f"jaxlite.scipy.stats.{family}")
    assert getattr(ST, family) is mod
    public = sorted(n for n in vars(mod) if not n.startswith("_"))
    assert public == sorted(FAMILIES[family])
    for name in public:
        fn = getattr(mod, name)
        assert fn.__doc__, f"{family}.{name} has no docstring"
        assert fn.__name__ == name and fn.__module__ == mod.__name__
        assert pickle.loads(pickle.dumps(fn)) is fn


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_names_match_jax(family):
    jax = _jax()
    theirs = getattr(jax.scipy.stats, family)
    assert isinstance(theirs, types.ModuleType)
    want = sorted(n for n in dir(theirs) if not n.startswith("_"))
    assert sorted(FAMILIES[family]) == want


def test_stats_namespace_matches_jax():
    jax = _jax()
    ours = sorted(n for n in dir(ST) if not n.startswith("_"))
    theirs = sorted(n for n in dir(jax.scipy.stats) if not n.startswith("_"))
    assert ours == theirs


# ------------------------------------------------------------------------------- mode

def _scipy_mode(x, axis):
    res = sst.mode(x, axis=axis, keepdims=False)
    return res.mode, res.count


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_mode_vs_scipy(axis):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, size=(7, 9))
    m, c = ST.mode(x, axis=axis)
    want_m, want_c = _scipy_mode(x, axis)
    np.testing.assert_array_equal(A(m), want_m)
    np.testing.assert_array_equal(A(c), want_c)
    assert m.dtype == np.int32 and c.dtype == np.int32
    xf = x.astype(np.float32) / 2
    m, c = ST.mode(xf, axis=axis, keepdims=True)
    want = sst.mode(xf, axis=axis, keepdims=True)
    np.testing.assert_array_equal(A(m), want.mode)
    np.testing.assert_array_equal(A(c), want.count)


def test_mode_ties_nans_and_empty():
    m, c = ST.mode(jnp.array([3, 3, 1, 1, 2]))
    assert (int(m), int(c)) == (1, 2)                       # the smallest tied value
    m, c = ST.mode(jnp.array([1.0, 2.0, 2.0, np.nan, np.nan, np.nan]))
    assert np.isnan(float(m)) and int(c) == 3               # NaNs count as one value
    m, c = ST.mode(jnp.array([np.nan, np.nan, 2.0, 2.0]))
    assert float(m) == 2.0 and int(c) == 2
    m, c = ST.mode(jnp.zeros((0, 3), jnp.int32))
    assert m.shape == c.shape == (3,) and m.dtype == c.dtype == np.float32
    assert np.all(np.isnan(A(m))) and np.all(A(c) == 0)
    m, c = ST.mode(jnp.zeros((2, 0)), axis=0)
    assert m.shape == (0,) and c.dtype == np.int32
    res = ST.mode(jnp.array([2, 2, 5]))
    assert type(res).__name__ == "ModeResult" and res._fields == ("mode", "count")
    assert res.mode is res[0]


def test_mode_types_shapes_and_transforms():
    m, c = ST.mode(3.0)
    assert m.weak_type and not c.weak_type and m.shape == ()
    m, _ = ST.mode(np.ones((2, 3, 4), np.float16), axis=None, keepdims=True)
    assert m.shape == (1, 1, 1) and m.dtype == np.float16
    m, _ = ST.mode(jnp.array([True, False, True]))
    assert m.dtype == np.bool_ and bool(m)
    x = jnp.array([[3, 1, 3], [2, 2, 1]])
    m, c = jaxlite.jit(ST.mode, static_argnums=1)(x, 1)
    np.testing.assert_array_equal(A(m), [3, 2])
    m, c = jaxlite.vmap(ST.mode)(x)
    np.testing.assert_array_equal(A(c), [2, 2])
    g = jaxlite.grad(lambda v: ST.mode(v)[0])(jnp.array([3.0, 1.0, 3.0]))
    np.testing.assert_array_equal(A(g), [1, 0, 0])          # the first modal element


def test_mode_errors():
    with pytest.raises(TypeError, match="mode requires ndarray or scalar arguments"):
        ST.mode([1, 2], nan_policy="omit")
    with pytest.raises(NotImplementedError, match="Logic for `nan_policy` of omit"):
        ST.mode(jnp.array([1, 2]), axis=5, nan_policy="omit")
    with pytest.raises(NotImplementedError, match="we cannot know whether `x` contains"):
        ST.mode(jnp.array([1, 2]), nan_policy="raise")
    with pytest.raises(ValueError, match="Illegal nan_policy value 'foo'"):
        ST.mode(jnp.array([1, 2]), nan_policy="foo")
    with pytest.raises(ValueError, match="out of bounds"):
        ST.mode(jnp.array([1, 2]), axis=1)
    with pytest.raises(TypeError):
        ST.mode(jnp.array([1, 2]), axis=(0,))


# --------------------------------------------------------------------------- rankdata

METHODS = ["average", "min", "max", "dense", "ordinal"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_rankdata_vs_scipy(method, axis):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, size=(6, 8)).astype(np.float32)
    got = ST.rankdata(x, method, axis=axis)
    want = sst.rankdata(x, method, axis=axis)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(A(got), want)


def test_rankdata_nans_scalars_and_errors():
    got = ST.rankdata(jnp.array([[1.0, np.nan, 0.0], [1.0, 2.0, 3.0]]), axis=1)
    np.testing.assert_array_equal(A(got), [[np.nan] * 3, [1, 2, 3]])
    assert ST.rankdata(3.0).shape == (1,)
    assert ST.rankdata(jnp.zeros((2, 0)), axis=1).shape == (2, 0)
    np.testing.assert_array_equal(A(ST.rankdata(jnp.array([1 + 1j, 1 - 1j]))), [2, 1])
    g = jaxlite.grad(lambda v: ST.rankdata(v).sum())(jnp.array([1.0, 2.0]))
    np.testing.assert_array_equal(A(g), [0, 0])
    r = jaxlite.jit(ST.rankdata, static_argnames="method")(jnp.array([3, 1, 3]), method="max")
    np.testing.assert_array_equal(A(r), [3, 1, 3])
    r = jaxlite.vmap(ST.rankdata)(jnp.array([[3, 1], [2, 2]]))
    np.testing.assert_array_equal(A(r), [[2, 1], [1.5, 1.5]])
    with pytest.raises(ValueError, match="unknown method 'foo'"):
        ST.rankdata(jnp.array([1, 2]), "foo")
    with pytest.raises(TypeError, match="rankdata requires ndarray"):
        ST.rankdata([1, 2], nan_policy="omit")
    with pytest.raises(NotImplementedError, match="omit"):
        ST.rankdata(jnp.array([1, 2]), "foo", nan_policy="omit")
    with pytest.raises(ValueError, match="out of bounds"):
        ST.rankdata(jnp.array(1.0), axis=0)


def test_rankdata_float64(x64):
    got = ST.rankdata(jnp.array([1, 2, 2], jnp.int32))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(A(got), [1, 2.5, 2.5])
    m, c = ST.mode(jnp.array([1, 2, 2]))
    assert c.dtype == np.int64


# -------------------------------------------------------------------------------- sem

@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_sem_vs_scipy(axis, ddof):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 7))
    got = ST.sem(x.astype(np.float32), axis=axis, ddof=ddof)
    np.testing.assert_allclose(A(got), sst.sem(x, axis=axis, ddof=ddof), rtol=2e-6)
    xn = x.copy()
    xn[0, 1] = xn[3, 4] = xn[2, 2] = np.nan
    got = ST.sem(xn.astype(np.float32), axis=axis, ddof=ddof, nan_policy="omit")
    np.testing.assert_allclose(A(got), sst.sem(xn, axis=axis, ddof=ddof, nan_policy="omit"),
                               rtol=2e-6)
    prop = ST.sem(xn.astype(np.float32), axis=axis, ddof=ddof)
    np.testing.assert_array_equal(np.isnan(A(prop)), np.isnan(sst.sem(xn, axis=axis,
                                                                       ddof=ddof)))


def test_sem_shapes_types_grad_and_errors():
    x = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    assert ST.sem(x, axis=None, keepdims=True).shape == (1, 1)
    assert ST.sem(x, axis=1, keepdims=True).shape == (2, 1)
    assert ST.sem(jnp.array([1, 2], jnp.int8)).dtype == np.float32
    assert ST.sem(jnp.array([1, 2], jnp.float16)).dtype == np.float16
    assert ST.sem(jnp.array([1 + 1j, 2, 4])).dtype == np.complex64
    assert np.isnan(float(ST.sem(jnp.array([3.0]))))
    v = jnp.array([1.0, 2.0, 4.0])
    g = jaxlite.grad(ST.sem)(v)
    h = 1e-3
    fd = [(float(ST.sem(v.at[i].add(h))) - float(ST.sem(v.at[i].add(-h)))) / (2 * h)
          for i in range(3)]
    np.testing.assert_allclose(A(g), fd, rtol=1e-2)
    g = jaxlite.grad(lambda a: ST.sem(a, nan_policy="omit"))(jnp.array([1.0, 2.0, np.nan,
                                                                        4.0]))
    np.testing.assert_allclose(A(g)[[0, 1, 3]], A(jaxlite.grad(ST.sem)(v)), rtol=1e-5)
    assert float(A(g)[2]) == 0
    with pytest.raises(ValueError, match="raise is not supported"):
        ST.sem(x, nan_policy="raise")
    with pytest.raises(TypeError, match="sem requires ndarray"):
        ST.sem([1.0, 2.0])
    with pytest.raises(IndexError):
        ST.sem(3.0)
    with pytest.raises(TypeError):
        ST.sem(x, axis=(0,))


# ----------------------------------------------------------------------- gaussian_kde

def _data():
    rng = np.random.default_rng(4)
    d1 = rng.normal(size=40)
    d2 = rng.normal(size=(2, 35)) * np.array([[1.0], [0.5]])
    d2[1] += 0.6 * d2[0]
    w = rng.uniform(0.1, 1.0, size=35)
    return d1, d2, w


BANDWIDTHS = [None, "scott", "silverman", 0.3, lambda kde: kde.neff ** -0.2]


@pytest.mark.parametrize("bw", range(len(BANDWIDTHS)))
@pytest.mark.parametrize("weighted", [False, True])
def test_kde_vs_scipy(x64, bw, weighted):
    d1, d2, w = _data()
    bw_method = BANDWIDTHS[bw]
    for data, wts in [(d2, w if weighted else None),
                      (d1, np.linspace(1, 2, 40) if weighted else None)]:
        ours = ST.gaussian_kde(data, bw_method, wts)
        ref = sst.gaussian_kde(data, bw_method, wts)
        assert (ours.d, ours.n) == (ref.d, ref.n)
        np.testing.assert_allclose(float(ours.neff), ref.neff, rtol=1e-12)
        np.testing.assert_allclose(A(ours.covariance), ref.covariance, rtol=1e-12)
        np.testing.assert_allclose(A(ours.inv_cov), ref.inv_cov, rtol=1e-10)
        np.testing.assert_allclose(A(ours.weights), ref.weights, rtol=1e-12)
        pts = np.random.default_rng(5).normal(size=(ref.d, 9)) * 1.5
        np.testing.assert_allclose(A(ours(pts)), ref(pts), rtol=1e-11)
        np.testing.assert_allclose(A(ours.pdf(pts)), ref.pdf(pts), rtol=1e-11)
        np.testing.assert_allclose(A(ours.logpdf(pts)), ref.logpdf(pts), rtol=1e-11)
        mean, cov = np.full(ref.d, 0.2), np.eye(ref.d) * 0.7
        np.testing.assert_allclose(float(ours.integrate_gaussian(mean, cov)),
                                   ref.integrate_gaussian(mean, cov), rtol=1e-11)
        other = data + 0.4
        np.testing.assert_allclose(float(ours.integrate_kde(ST.gaussian_kde(other))),
                                   ref.integrate_kde(sst.gaussian_kde(other)), rtol=1e-11)
        if ref.d == 1:
            for lo, hi in [(-1.0, 0.5), (-np.inf, 0.3), (2.0, 6.0), (-9.0, -4.0)]:
                np.testing.assert_allclose(float(ours.integrate_box_1d(lo, hi)),
                                           ref.integrate_box_1d(lo, hi), rtol=1e-9)


def test_kde_logpdf_far_from_data():
    d1, _, _ = _data()
    kde = ST.gaussian_kde(d1.astype(np.float32))
    lp = A(kde.logpdf(jnp.array([40.0])))
    assert np.isfinite(lp).all() and lp[0] < -1000        # the density underflows, not this
    assert float(kde.pdf(jnp.array([40.0]))[0]) == 0.0


def test_kde_points_shapes():
    _, d2, _ = _data()
    kde = ST.gaussian_kde(d2.astype(np.float32))
    assert kde(np.zeros((2, 5), np.float32)).shape == (5,)
    assert kde(np.zeros(2, np.float32)).shape == (1,)      # one point of length d
    with pytest.raises(ValueError, match="points have dimension 5, dataset has dimension 2"):
        kde(np.zeros((5, 2), np.float32))
    with pytest.raises(ValueError, match="points have dimension 1"):
        kde(0.5)
    with pytest.raises(TypeError, match="evaluate requires ndarray"):
        kde([0.5, 0.2])
    with pytest.raises(TypeError, match="logpdf requires ndarray"):
        kde.logpdf([0.5, 0.2])


def test_kde_is_a_frozen_pytree_dataclass():
    d1, _, _ = _data()
    kde = ST.gaussian_kde(d1.astype(np.float32))
    assert dataclasses.is_dataclass(kde)
    assert [f.name for f in dataclasses.fields(kde)] == ["neff", "dataset", "weights",
                                                         "covariance", "inv_cov"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        kde.dataset = None
    leaves, tree = jaxlite.tree_util.tree_flatten(kde)
    assert len(leaves) == 5 and leaves[1] is kde.dataset
    again = jaxlite.tree_util.tree_unflatten(tree, leaves)
    assert isinstance(again, ST.gaussian_kde) and again.dataset is kde.dataset
    assert kde.tree_flatten()[1] is None
    odd = ST.gaussian_kde.tree_unflatten(None, [1, 2, 3, 4, 5])
    assert (odd.neff, odd.dataset, odd.inv_cov) == (1, 2, 5)
    assert repr(kde).startswith("gaussian_kde(neff=")
    pts = jnp.array([[0.1, 0.5, -1.0]])
    np.testing.assert_allclose(A(jaxlite.jit(lambda k, x: k(x))(kde, pts)), A(kde(pts)),
                               rtol=1e-6)
    doubled = jaxlite.tree_util.tree_map(lambda v: v, kde)
    assert isinstance(doubled, ST.gaussian_kde)


def test_kde_transforms(x64):
    d1, _, _ = _data()
    data = jnp.asarray(d1[:12])
    # gradient of the log-density w.r.t. the data, vs central differences
    f = lambda dd: ST.gaussian_kde(dd).logpdf(jnp.array([0.3]))[0]    # noqa: E731
    g = A(jaxlite.grad(f)(data))
    h = 1e-6
    fd = [(float(f(data.at[i].add(h))) - float(f(data.at[i].add(-h)))) / (2 * h)
          for i in range(12)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    # w.r.t. the query point: d/dx log p(x)
    kde = ST.gaussian_kde(data)
    gx = jaxlite.grad(lambda x: kde.logpdf(x)[0])(jnp.array([0.3]))
    fx = (float(kde.logpdf(jnp.array([0.3 + h]))[0]) -
          float(kde.logpdf(jnp.array([0.3 - h]))[0])) / (2 * h)
    np.testing.assert_allclose(float(A(gx)[0]), fx, rtol=1e-6)
    # vmap over datasets and jit of the whole construction
    stack = jnp.stack([data, data + 1])
    got = jaxlite.vmap(lambda dd: ST.gaussian_kde(dd).pdf(jnp.array([0.5])))(stack)
    want = [sst.gaussian_kde(A(s)).pdf(0.5) for s in stack]
    np.testing.assert_allclose(A(got)[:, 0], np.ravel(want), rtol=1e-12)
    jitted = jaxlite.jit(lambda dd: ST.gaussian_kde(dd, "silverman").logpdf(0.5))(data)
    np.testing.assert_allclose(A(jitted), sst.gaussian_kde(A(data), "silverman").logpdf(0.5),
                               rtol=1e-12)


def test_kde_resample():
    _, d2, w = _data()
    kde = ST.gaussian_kde(d2.astype(np.float32), weights=w.astype(np.float32))
    key = jaxlite.random.key(0)
    assert kde.resample(key).shape == (2,)
    assert kde.resample(key, (4,)).shape == (2, 4)
    assert kde.resample(key, (2, 3)).shape == (2, 2, 3)
    np.testing.assert_array_equal(A(kde.resample(key, (5,))), A(kde.resample(key, (5,))))
    big = A(kde.resample(jaxlite.random.key(7), (40000,)), np.float64)
    # the mixture's mean is the weighted data mean, its covariance the weighted data
    # covariance (biased) plus the kernel covariance
    wn = w / w.sum()
    mean = d2 @ wn
    centred = d2 - mean[:, None]
    cov = (centred * wn) @ centred.T + A(kde.covariance)
    np.testing.assert_allclose(big.mean(axis=1), mean, atol=0.03)
    np.testing.assert_allclose(np.cov(big), cov, atol=0.04)


def test_kde_errors_and_unsupported():
    d1, d2, _ = _data()
    kde = ST.gaussian_kde(d1.astype(np.float32))
    with pytest.raises(NotImplementedError, match="only 1D box integrations"):
        kde.integrate_box(-1.0, 1.0)
    with pytest.raises(NotImplementedError, match="changing the bandwidth method"):
        kde.set_bandwidth("silverman")
    with pytest.raises(ValueError, match="only handles 1D pdfs"):
        ST.gaussian_kde(d2.astype(np.float32)).integrate_box_1d(0.0, 1.0)
    with pytest.raises(ValueError, match="KDEs are not the same dimensionality"):
        kde.integrate_kde(ST.gaussian_kde(d2.astype(np.float32)))
    with pytest.raises(ValueError, match="mean does not have dimension 1"):
        kde.integrate_gaussian(jnp.zeros(2), jnp.eye(1))
    with pytest.raises(ValueError, match="covariance does not have dimension 1"):
        kde.integrate_gaussian(jnp.zeros(1), jnp.eye(2))
    with pytest.raises(ValueError, match="`bw_method` should be"):
        ST.gaussian_kde(d1, "foo")
    with pytest.raises(ValueError, match="`bw_method` should be"):
        ST.gaussian_kde(d1, jnp.array([2.0, 3.0]))
    with pytest.raises(ValueError, match="`weights` input should be of length n"):
        ST.gaussian_kde(d1, weights=np.ones(3))
    with pytest.raises(ValueError, match="`weights` input should be one-dimensional"):
        ST.gaussian_kde(d1, weights=np.ones((2, 40)))
    with pytest.raises(ValueError, match="should have multiple elements"):
        ST.gaussian_kde(3.0)
    with pytest.raises(ValueError, match="shape"):
        ST.gaussian_kde(np.ones((2, 3, 4)))
    with pytest.raises(NotImplementedError, match="complex"):
        ST.gaussian_kde(np.array([1 + 1j, 2, 3]))
    with pytest.raises(TypeError, match="gaussian_kde requires ndarray"):
        ST.gaussian_kde([1.0, 2.0, 3.0])


# ------------------------------------------------------------------------------ vs JAX

def _compare(ours, theirs, rtol=2e-6):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _compare(o, t, rtol)
        return
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert ours.weak_type == theirs.weak_type
    np.testing.assert_allclose(A(ours), A(theirs), rtol=rtol, equal_nan=True)


def _cases():
    rng = np.random.default_rng(6)
    ints = rng.integers(0, 4, size=(3, 5, 6))
    floats = ints.astype(np.float32)
    floats[0, 1, 2] = np.nan
    floats[1, :, 3] = np.nan
    return [ints, floats, ints[0, 0], np.float32(2.0), np.array([True, False, True]),
            np.zeros((0,)), np.zeros((2, 0)), ints.astype(np.uint8)]


def test_mode_rankdata_sem_match_jax():
    jax = _jax()
    js = jax.scipy.stats
    for arr in _cases():
        nd = arr.ndim
        for axis in [None] + list(range(-nd, nd)):
            for kd in (False, True):
                _compare(tuple(ST.mode(arr, axis=axis, keepdims=kd)),
                         tuple(js.mode(arr, axis=axis, keepdims=kd)))
                for policy in ("propagate", "omit"):
                    _compare(ST.sem(arr, axis=axis, keepdims=kd, nan_policy=policy),
                             js.sem(arr, axis=axis, keepdims=kd, nan_policy=policy))
            for method in METHODS:
                _compare(ST.rankdata(arr, method, axis=axis),
                         js.rankdata(arr, method, axis=axis))
    _compare(tuple(ST.mode(3)), tuple(js.mode(3)))
    _compare(tuple(ST.mode(3.0, keepdims=True)), tuple(js.mode(3.0, keepdims=True)))


def test_errors_match_jax():
    jax = _jax()
    js = jax.scipy.stats
    calls = [("mode", ([1, 2],), dict(nan_policy="omit")),
             ("mode", (np.array([1, 2]),), dict(nan_policy="omit")),
             ("mode", (np.array([1, 2]),), dict(nan_policy="raise")),
             ("mode", (np.array([1, 2]),), dict(nan_policy="bad")),
             ("mode", (np.array([1, 2]),), dict(axis=2)),
             ("rankdata", (np.array([1, 2]), "foo"), {}),
             ("rankdata", ([1, 2],), dict(nan_policy="omit")),
             ("rankdata", (np.array([1, 2]), "foo"), dict(nan_policy="omit")),
             ("rankdata", (np.array([1, 2]),), dict(nan_policy="raise")),
             ("sem", (np.array([1.0, 2.0]),), dict(nan_policy="raise")),
             ("sem", ([1.0, 2.0],), {}),
             ("sem", (3.0,), {})]
    for name, args, kw in calls:
        with pytest.raises(Exception) as theirs:
            getattr(js, name)(*args, **kw)
        with pytest.raises(theirs.type) as ours:
            getattr(ST, name)(*args, **kw)
        want = str(theirs.value).split(";")[0][:40]
        if theirs.type is not IndexError:          # JAX's IndexError has no useful text
            assert want in str(ours.value), (name, kw, str(ours.value), want)


def test_kde_matches_jax():
    jax = _jax()
    d1, d2, w = _data()
    js = jax.scipy.stats
    for data, kw in [(d1.astype(np.float32), {}), (d2.astype(np.float32), {}),
                     (d2.astype(np.float32), dict(weights=w.astype(np.float32))),
                     (d1.astype(np.float32), dict(bw_method="silverman")),
                     (d1.astype(np.float32), dict(bw_method=0.4))]:
        ours, theirs = ST.gaussian_kde(data, **kw), js.gaussian_kde(data, **kw)
        for field in ("neff", "dataset", "weights", "covariance", "inv_cov"):
            _compare(getattr(ours, field), getattr(theirs, field), rtol=2e-5)
        assert (ours.d, ours.n) == (theirs.d, theirs.n)
        pts = np.random.default_rng(8).normal(size=(ours.d, 6)).astype(np.float32)
        for method in ("evaluate", "pdf", "logpdf", "__call__"):
            _compare(getattr(ours, method)(pts), getattr(theirs, method)(pts), rtol=2e-5)
        mean, cov = np.zeros(ours.d, np.float32), np.eye(ours.d, dtype=np.float32)
        _compare(ours.integrate_gaussian(mean, cov), theirs.integrate_gaussian(mean, cov),
                 rtol=2e-5)
        _compare(ours.integrate_kde(ST.gaussian_kde(data + 0.5)),
                 theirs.integrate_kde(js.gaussian_kde(data + 0.5)), rtol=2e-5)
        if ours.d == 1:
            _compare(ours.integrate_box_1d(-1, 1), theirs.integrate_box_1d(-1, 1), rtol=2e-5)
        for shape in [(), (5,)]:       # JAX's draws for the same key
            np.testing.assert_allclose(A(ours.resample(jaxlite.random.key(3), shape)),
                                       A(theirs.resample(jax.random.key(3), shape)),
                                       rtol=1e-5, atol=1e-6)
        # gradients w.r.t. the estimator's leaves (inv_cov compared symmetrised: the
        # Cholesky factorisation reads one triangle, JAX and jaxlite split it differently)
        go = jaxlite.grad(lambda k: k.logpdf(pts).sum())(ours)
        gt = jax.grad(lambda k: k.logpdf(pts).sum())(theirs)
        for field in ("dataset", "weights"):
            np.testing.assert_allclose(A(getattr(go, field)), A(getattr(gt, field)),
                                       rtol=1e-4, atol=1e-5)
        sym = lambda m: A(m) + A(m).T    # noqa: E731
        np.testing.assert_allclose(sym(go.inv_cov), sym(gt.inv_cov), rtol=1e-4, atol=1e-5)
