"""Audit of jax.nn, jax.scipy.{special,stats,linalg} and example_libraries against issue 5
sections 2-3 (complements test_nn.py, test_scipy_linalg.py, test_example_libraries.py):
every public name exists with JAX's signature; the stats distributions and the special
functions added from JAX's formulations match JAX (and SciPy, without JAX) in value and
gradient; dot_product_attention's options match JAX."""
import inspect

import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as sst

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import nn
from jaxlite.scipy import special as S
from jaxlite.scipy import stats as ST

A = np.asarray


def _jax():
    return pytest.importorskip("jax")


def _params(fn):
    return [(p.name, p.kind, None if p.default is inspect.Parameter.empty else repr(p.default))
            for p in inspect.signature(fn).parameters.values()]


INVENTORY = {
    "nn": """relu relu6 sigmoid softplus sparse_plus sparse_sigmoid soft_sign silu swish
        log_sigmoid leaky_relu hard_sigmoid hard_silu hard_swish hard_tanh tanh elu celu selu
        gelu glu squareplus mish identity softmax log_softmax logmeanexp logsumexp standardize
        one_hot dot_product_attention log1mexp""",
    "nn.initializers": """constant delta_orthogonal glorot_normal glorot_uniform he_normal
        he_uniform kaiming_normal kaiming_uniform lecun_normal lecun_uniform normal ones
        orthogonal truncated_normal uniform variance_scaling xavier_normal xavier_uniform
        zeros Initializer""",
    "scipy.special": """bernoulli beta betainc betaln boxcox boxcox1p comb dawsn digamma entr
        erf erfc erfcx erfinv exp1 expi expit expn factorial gamma gammainc gammaincc gammaln
        gammasgn hyp1f1 hyp2f1 i0 i0e i1 i1e kl_div log_ndtr log_softmax logit loggamma
        logsumexp multigammaln ndtr ndtri owens_t poch polygamma rel_entr sici softmax spence
        sph_harm_y wofz xlog1py xlogy zeta bessel_jn""",
    "scipy.linalg": """block_diag cho_factor cho_solve cholesky circulant companion
        convolution_matrix det dft eigh eigh_tridiagonal expm expm_frechet fiedler
        fiedler_companion funm hadamard helmert hessenberg hankel hilbert inv invhilbert
        invpascal leslie lu lu_factor lu_solve pascal polar qr qr_multiply rsf2csf schur solve
        solve_sylvester solve_triangular sqrtm svd toeplitz""",
    "example_libraries.stax": """AvgPool BatchNorm Dense Dropout FanInConcat FanOut GeneralConv
        GeneralConvTranspose MaxPool SumPool elementwise parallel serial shape_dependent Conv
        ConvTranspose Conv1DTranspose FanInSum Flatten Identity Relu Tanh Softmax LogSoftmax
        Gelu Elu LeakyRelu Sigmoid Softplus Exp""",
    "example_libraries.optimizers": """JoinPoint Optimizer OptimizerState adagrad adam adamax
        clip_grads constant exponential_decay inverse_time_decay l2_norm make_schedule
        momentum nesterov optimizer pack_optimizer_state piecewise_constant polynomial_decay
        rmsprop rmsprop_momentum sgd sm3 unpack_optimizer_state""",
}
NAMES = [(m, n) for m, names in INVENTORY.items() for n in names.split()]
# not yet implemented (reported in issue 5's audit)
MISSING = {("scipy.special", "fresnel")}
# jaxlite's scipy.linalg.eigh also takes JAX's newer keyword-only subset_by_index
EXTRA_KWARGS = {("scipy.linalg", "eigh"): {"subset_by_index"}}


def _module(prefix, name):
    import importlib
    return importlib.import_module(f"{prefix}.{name}")


# removed because their first versions were translated from JAX's source; being rewritten
NOT_YET = set()   # (all rewritten; kept so a future removal can list names here)

NOT_YET_STATS = set()   # every jax.scipy.stats function of the audit is implemented


def _skip_not_yet(*items):
    """Skip a test of functions listed as not implemented yet (and only those)."""
    gone = [i for i in items if i in NOT_YET or i in NOT_YET_STATS]
    if gone:
        pytest.skip(f"not implemented yet: {gone}")


@pytest.mark.parametrize("mod,name", NAMES, ids=[f"{m}.{n}" for m, n in NAMES])
def test_name_exists_with_jax_signature(mod, name):
    if (mod, name) in NOT_YET and not hasattr(_module("jaxlite", mod), name):
        pytest.skip(f"jaxlite.{mod}.{name} is not implemented yet")
    ours = getattr(_module("jaxlite", mod), name)
    if not inspect.isclass(ours):
        assert ours.__doc__, f"{mod}.{name} has no docstring"
    try:
        jax = _module("jax", mod)
    except ImportError:
        return
    theirs = getattr(jax, name)
    if inspect.isclass(theirs) or not callable(theirs):
        return
    try:
        ref = _params(theirs)
    except (TypeError, ValueError):
        return
    # stax/initializer defaults are functions (compared by name)
    norm = [(n, k, d if d is None or " at 0x" not in d else d.split(" at ")[0])
            for n, k, d in ref]
    mine = [(n, k, d if d is None or " at 0x" not in d else d.split(" at ")[0])
            for n, k, d in _params(ours) if n not in EXTRA_KWARGS.get((mod, name), ())]
    assert mine == norm


# -------------------------------------------------------------------- jax.scipy.stats

X = np.array([-1.5, 0.2, 0.7, 2.5], np.float32)
POS = np.array([0.1, 0.7, 1.5, 4.0], np.float32)
U01 = np.array([0.05, 0.3, 0.6, 0.95], np.float32)
K = np.array([0., 1., 3., 6.], np.float32)
# dist -> {function names: argument tuple}
STATS = {
    "norm": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (X, 0.3, 1.7),
             ("ppf", "isf"): (U01, 0.3, 1.7)},
    "cauchy": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (X, 0.3, 1.7),
               ("ppf", "isf"): (U01, 0.3, 1.7)},
    "logistic": {("logpdf", "pdf", "cdf", "sf"): (X, 0.3, 1.7),
                 ("ppf", "isf"): (U01, 0.3, 1.7)},
    "laplace": {("logpdf", "pdf", "cdf"): (X, 0.3, 1.7)},
    "gumbel_l": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (X, 0.3, 1.7),
                 ("ppf",): (U01, 0.3, 1.7)},
    "gumbel_r": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (X, 0.3, 1.7),
                 ("ppf",): (U01, 0.3, 1.7)},
    "expon": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (POS, 0.05, 1.3),
              ("ppf",): (U01, 0.05, 1.3)},
    "uniform": {("logpdf", "pdf", "cdf"): (X, -1.0, 3.0), ("ppf",): (U01, -1.0, 3.0)},
    "pareto": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (POS + 1, 2.5, 0.0, 1.0),
               ("ppf",): (U01, 2.5, 0.0, 1.0)},
    "gamma": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (POS, 2.5, 0.0, 1.5)},
    "chi2": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (POS, 3.0, 0.0, 1.0)},
    "beta": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (U01, 2.0, 3.5)},
    "t": {("logpdf", "pdf"): (X, 4.0, 0.1, 1.2)},
    "gennorm": {("logpdf", "pdf", "cdf"): (X, 1.5)},
    "truncnorm": {("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"): (X / 2, -1.0, 1.5)},
    "vonmises": {("logpdf", "pdf"): (X, 2.0)},
    "wrapcauchy": {("logpdf", "pdf"): (POS, 0.4)},
    "poisson": {("logpmf", "pmf", "cdf"): (K, 2.5), ("entropy",): (np.float32([0.5, 3.]),)},
    "bernoulli": {("logpmf", "pmf", "cdf"): (np.float32([0, 1, 1, 0]), 0.3),
                  ("ppf",): (U01, 0.3)},
    "binom": {("logpmf", "pmf"): (K, 8.0, 0.3)},
    "nbinom": {("logpmf", "pmf"): (K, 5.0, 0.4)},
    "geom": {("logpmf", "pmf"): (K + 1, 0.3)},
    "betabinom": {("logpmf", "pmf"): (K, 8.0, 2.0, 3.0)},
    "dirichlet": {("logpdf", "pdf"): (np.float32([0.2, 0.3, 0.5]), np.float32([1.5, 2., 3.]))},
    "multivariate_normal": {("logpdf", "pdf"): (
        np.float32([[0.1, 0.2], [1., -1.]]), np.float32([0., 0.5]),
        np.float32([[2., 0.3], [0.3, 1.]]))},
    "multinomial": {("logpmf", "pmf"): (np.int32([2, 3, 5]), np.int32(10),
                                        np.float32([0.2, 0.3, 0.5]))},
}
STATS_CASES = [(d, f, args) for d, spec in STATS.items() for fs, args in spec.items()
               for f in fs]
# SciPy names where they differ
SCIPY_DIST = {"gennorm": "gennorm", "wrapcauchy": "wrapcauchy", "vonmises": "vonmises"}


@pytest.mark.parametrize("dist,fn,args", STATS_CASES,
                         ids=[f"{d}.{f}" for d, f, _ in STATS_CASES])
def test_stats_vs_jax(dist, fn, args):
    _skip_not_yet((dist, fn))
    jax = _jax()
    ours = A(getattr(getattr(ST, dist), fn)(*args))
    theirs = A(getattr(getattr(jax.scipy.stats, dist), fn)(*args))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("dist,fn,args", [
    c for c in STATS_CASES if c[0] not in ("multinomial", "truncnorm", "multivariate_normal",
                                          "dirichlet", "bernoulli", "poisson") or
    c[1] in ("logpmf", "pmf", "cdf")], ids=lambda v: v if isinstance(v, str) else "")
def test_stats_vs_scipy(dist, fn, args):
    _skip_not_yet((dist, fn))
    """Without JAX: the same values as scipy.stats (float64 reference)."""
    ours = A(getattr(getattr(ST, dist), fn)(*args)).astype(np.float64)
    ref_dist = getattr(sst, SCIPY_DIST.get(dist, dist))
    a64 = [np.asarray(a, np.float64) for a in args]
    if dist == "beta":   # scipy's beta(x, a, b, loc, scale)
        ref = getattr(ref_dist, fn)(*a64)
    else:
        ref = getattr(ref_dist, fn)(*a64)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)


def test_truncnorm_vs_scipy():
    _skip_not_yet(("truncnorm", "cdf"))
    x = np.float32([-0.9, 0.0, 0.5, 1.4])
    for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        np.testing.assert_allclose(A(getattr(ST.truncnorm, fn)(x, -1.0, 1.5)),
                                   getattr(sst.truncnorm, fn)(x.astype(float), -1.0, 1.5),
                                   rtol=1e-4, atol=1e-5)


def test_stats_grads_vs_jax():
    jax = _jax()
    for dist, fn, args in (("gumbel_r", "logpdf", (0.7, 0.3, 1.7)),
                           ("truncnorm", "logpdf", (0.3, -1.0, 1.5)),
                           ("cauchy", "logcdf", (0.7, 0.3, 1.7)),
                           ("gamma", "logsf", (1.2, 2.5)),
                           ("vonmises", "logpdf", (0.4, 2.0)),
                           ("nbinom", "logpmf", (3.0, 5.0, 0.4))):
        if (dist, fn) in NOT_YET_STATS:
            continue
        ours = jaxlite.grad(getattr(getattr(ST, dist), fn))(*args)
        theirs = jax.grad(getattr(getattr(jax.scipy.stats, dist), fn))(*args)
        np.testing.assert_allclose(float(ours), float(theirs), rtol=1e-4, err_msg=dist)


# ------------------------------------------------------------------ jax.scipy.special

P4 = np.float32([0.3, 1.7, 4.2, 12.5])
R4 = np.float32([-2.0, 0.1, 3.0, 30.0])
SPECIAL = [
    ("beta", (P4, P4[::-1]), lambda a, b: ss.beta(a, b)),
    ("boxcox", (P4, np.float32(0.5)), ss.boxcox),
    ("boxcox1p", (P4, np.float32(0.5)), ss.boxcox1p),
    ("comb", (np.float32([5, 10, 7, 20]), np.float32([2, 3, 7, 4])), ss.comb),
    ("factorial", (np.float32([0, 3, 5, 10]),), ss.factorial),
    ("kl_div", (P4, P4[::-1]), ss.kl_div),
    ("rel_entr", (P4, P4[::-1]), ss.rel_entr),
    ("poch", (P4, P4[::-1] / 4), ss.poch),
    ("gammasgn", (np.float32([-2.5, -1.5, 0.5, 3.]),), ss.gammasgn),
    ("loggamma", (P4,), ss.loggamma),
    ("erfcx", (R4,), ss.erfcx),
    ("dawsn", (R4,), ss.dawsn),
    ("exp1", (P4,), ss.exp1),
    ("expi", (R4,), ss.expi),
    ("expn", (np.int32([1, 2, 3, 5]), P4), ss.expn),
    ("spence", (P4,), ss.spence),
    ("sici", (P4,), ss.sici),
    ("owens_t", (P4 / 4, P4[::-1] / 4), ss.owens_t),
    ("hyp1f1", (P4 / 4, P4[::-1] / 2, np.float32([0.1, 0.5, -1., 2.])), ss.hyp1f1),
    ("hyp2f1", (np.float32([1, 0.5, 2, 1.5]), P4 / 4, np.float32([3, 2.5, 5, 4]),
                np.float32([0.1, 0.5, -0.3, 0.9])), ss.hyp2f1),
    ("wofz", (np.complex64([1 + 1j, 0.5 - 2j, 3, 10 + 0.1j]),), ss.wofz),
    ("log_ndtr", (np.float32([-30., -6., -1., 0.5, 4.]),), ss.log_ndtr),
]


def _stack(v):
    return np.stack([A(a) for a in v]) if isinstance(v, tuple) else A(v)


@pytest.mark.parametrize("name,args,ref", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_vs_scipy(name, args, ref):
    _skip_not_yet(("scipy.special", name))
    ours = _stack(getattr(S, name)(*args))
    want = _stack(ref(*[np.asarray(a, np.complex128 if np.iscomplexobj(a) else np.float64)
                        for a in args]))
    np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name,args,ref", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_vs_jax(name, args, ref):
    _skip_not_yet(("scipy.special", name))
    jax = _jax()
    ours, theirs = getattr(S, name)(*args), getattr(jax.scipy.special, name)(*args)
    assert _stack(ours).dtype == _stack(theirs).dtype
    np.testing.assert_allclose(_stack(ours), _stack(theirs), rtol=5e-5, atol=1e-6)


def test_special_integer_args_and_arrays_vs_jax():
    _skip_not_yet(*[("scipy.special", n) for n in ("bernoulli", "bessel_jn", "sph_harm_y")])
    jax = _jax()
    # (JAX's float32 B_4 is off by ~3e-6; jaxlite's exact values are checked vs SciPy)
    np.testing.assert_allclose(A(S.bernoulli(8)), A(jax.scipy.special.bernoulli(8)), rtol=1e-5)
    np.testing.assert_allclose(A(S.bernoulli(8)), ss.bernoulli(8), rtol=1e-6)
    x = np.float32([4.2, 7.0, 12.5])   # (JAX's own recurrence gives NaN for small x)
    np.testing.assert_allclose(A(S.bessel_jn(x, v=2)), A(jax.scipy.special.bessel_jn(x, v=2)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A(S.bessel_jn(x, v=2))[2], ss.jv(2, x.astype(float)),
                               rtol=1e-4, atol=1e-6)
    n, m = np.array([1, 2]), np.array([0, 1])
    th, ph = np.float32([0.3, 0.5]), np.float32([0.1, 0.2])
    np.testing.assert_allclose(A(S.sph_harm_y(n, m, th, ph)),
                               A(jax.scipy.special.sph_harm_y(n, m, th, ph)), rtol=1e-5)
    np.testing.assert_allclose(A(S.sph_harm_y(n, m, th, ph)),
                               ss.sph_harm_y(n, m, th.astype(float), ph.astype(float)),
                               rtol=1e-4)
    z = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(A(S.softmax(z)), A(jax.scipy.special.softmax(z)))
    np.testing.assert_allclose(A(S.log_softmax(z)), A(jax.scipy.special.log_softmax(z)))


def test_special_grads_vs_jax():
    jax = _jax()
    for name, argnum, args in (("expi", 0, (1.3,)), ("exp1", 0, (0.7,)), ("erfcx", 0, (0.4,)),
                               ("dawsn", 0, (0.8,)), ("poch", 0, (1.3, 2.2)),
                               ("hyp1f1", 2, (0.5, 1.5, 0.3)), ("owens_t", 1, (0.4, 0.6)),
                               ("loggamma", 0, (2.5,)),  # (JAX's spence grad is NaN)
                               ("kl_div", 0, (0.5, 1.5)), ("boxcox", 0, (1.5, 0.3))):
        if ("scipy.special", name) in NOT_YET:
            continue
        ours = jaxlite.grad(getattr(S, name), argnums=argnum)(*args)
        theirs = jax.grad(getattr(jax.scipy.special, name), argnums=argnum)(*args)
        np.testing.assert_allclose(float(ours), float(theirs), rtol=1e-4, err_msg=name)


# ---------------------------------------------------------------------- jax.nn

def _attention_inputs():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(2, 5, 4, 8)).astype(np.float32),
            rng.normal(size=(2, 6, 2, 8)).astype(np.float32),
            rng.normal(size=(2, 6, 2, 8)).astype(np.float32))


ATTENTION = [dict(), dict(is_causal=True), dict(local_window_size=(1, 2)),
             dict(local_window_size=1, is_causal=True),
             dict(query_seq_lengths=np.int32([3, 5]), key_value_seq_lengths=np.int32([4, 6])),
             dict(return_residual=True),
             dict(return_residual=True, key_value_seq_lengths=np.int32([2, 6]))]


@pytest.mark.parametrize("kw", ATTENTION, ids=[str(sorted(k)) for k in ATTENTION])
def test_dot_product_attention_options_vs_jax(kw):
    jax = _jax()
    q, k, v = _attention_inputs()
    ours = jaxlite.nn.dot_product_attention(q, k, v, **kw)
    theirs = jax.nn.dot_product_attention(q, k, v, **kw)
    ours, theirs = (ours, theirs) if isinstance(theirs, tuple) else ((ours,), (theirs,))
    for o, t in zip(ours, theirs):
        assert A(o).shape == A(t).shape
        np.testing.assert_allclose(A(o), A(t), rtol=1e-5, atol=1e-6)


def test_dot_product_attention_lengths_and_window_by_hand():
    """Without JAX: lengths/window masks equal an explicit boolean mask; padded query rows
    are zero; the residual is the logsumexp of the scaled logits."""
    q, k, v = _attention_inputs()
    kvl, ql = np.int32([4, 6]), np.int32([3, 5])
    t, s = np.arange(5)[:, None], np.arange(6)[None]
    mask = ((s < kvl[:, None, None]) & (s >= t - 1) & (s <= t + 2))[:, None]
    got = A(nn.dot_product_attention(q, k, v, key_value_seq_lengths=kvl, query_seq_lengths=ql,
                                     local_window_size=(1, 2)))
    want = A(nn.dot_product_attention(q, k, v, mask=mask))
    want = want * (np.arange(5)[None, :] < ql[:, None])[:, :, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    _, res = nn.dot_product_attention(q, k, v, return_residual=True)
    kk = np.repeat(k, 2, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, kk) / np.sqrt(8)
    np.testing.assert_allclose(A(res), ss.logsumexp(logits, -1).transpose(0, 2, 1), rtol=1e-5)


def test_standardize_stable_algorithm():
    x = np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32) + 1000
    got = A(nn.standardize(x, algorithm="stable")).astype(np.float64)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, want, atol=2e-3)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(x, algorithm="nope")
