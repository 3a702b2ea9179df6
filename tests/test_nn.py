"""jax.nn and jax.scipy.special: values and gradients against JAX (when installed) and
closed forms; jit and vmap consistency."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.test_util import check_grads

X = np.linspace(-3.3, 3.1, 13).astype(np.float32)
ACTS = ["relu", "relu6", "sigmoid", "softplus", "sparse_plus", "sparse_sigmoid", "soft_sign",
        "silu", "swish", "log_sigmoid", "leaky_relu", "hard_sigmoid", "hard_silu",
        "hard_swish", "hard_tanh", "tanh", "elu", "celu", "selu", "gelu", "squareplus",
        "mish", "identity"]


@pytest.mark.parametrize("name", ACTS)
def test_activation_vs_jax(name):
    rjax = pytest.importorskip("jax")
    ours = getattr(jax.nn, name)(X)
    theirs = getattr(rjax.nn, name)(X)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-6, atol=2e-7)
    assert ours.dtype == theirs.dtype
    g_ours = jax.grad(lambda v: jnp.sum(getattr(jax.nn, name)(v)))(X)
    g_theirs = rjax.grad(lambda v: rjax.numpy.sum(getattr(rjax.nn, name)(v)))(X)
    np.testing.assert_allclose(np.asarray(g_ours), np.asarray(g_theirs), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("name", ["softplus", "gelu", "elu", "selu", "silu", "mish",
                                  "log_sigmoid", "squareplus", "celu"])
def test_activation_check_grads(name):
    with jax.enable_x64():
        check_grads(getattr(jax.nn, name), (X.astype(np.float64) + 0.05,), 2)


def test_softmax_family():
    x = np.random.RandomState(0).randn(3, 5).astype(np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(jax.nn.softmax(x), e / e.sum(-1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(jax.nn.log_softmax(x), np.log(e / e.sum(-1, keepdims=True)),
                               rtol=1e-5, atol=1e-6)
    lse = np.log(np.exp(x).sum(0))
    np.testing.assert_allclose(jax.nn.logsumexp(x, axis=0), lse, rtol=1e-6)
    np.testing.assert_allclose(jax.scipy.special.logsumexp(x, b=np.ones_like(x) * 2),
                               np.log(2 * np.exp(x).sum()), rtol=1e-6)
    np.testing.assert_allclose(jax.nn.logmeanexp(x), np.log(np.exp(x).mean()), rtol=1e-6)
    mask = x > 0
    out = np.asarray(jax.nn.softmax(x, where=mask))
    assert np.all(out[~mask] == 0)
    np.testing.assert_allclose(out.sum(-1), np.where(mask.any(-1), 1.0, 0.0), rtol=1e-6)
    with jax.enable_x64():
        check_grads(lambda v: jax.nn.softmax(v)[..., 0], (x.astype(np.float64),), 2)
        check_grads(lambda v: jax.nn.log_softmax(v, axis=0), (x.astype(np.float64),), 1)
    np.testing.assert_allclose(jax.vmap(jax.nn.softmax)(x), jax.nn.softmax(x), rtol=1e-6)


def test_one_hot_standardize_glu():
    np.testing.assert_array_equal(jax.nn.one_hot(jnp.array([0, 2, -1, 3]), 3),
                                  np.eye(4, 3)[[0, 2, 3, 3]] * np.array([[1], [1], [0], [0]]))
    np.testing.assert_array_equal(jax.nn.one_hot(jnp.array([1, 0]), 2, axis=0),
                                  [[0, 1], [1, 0]])
    z = np.asarray(jax.nn.standardize(jnp.arange(6.0).reshape(2, 3)))
    np.testing.assert_allclose(z.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(jax.nn.glu(jnp.arange(4.0)),
                               np.arange(2.0) / (1 + np.exp(-np.arange(2.0, 4.0))), rtol=1e-6)


def test_dot_product_attention_vs_reference():
    rng = np.random.RandomState(0)
    q, k, v = (rng.randn(2, 4, 3, 8).astype(np.float32) for _ in range(3))
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(8)
    causal = np.tril(np.ones((4, 4), bool))
    for is_causal in (False, True):
        lg = np.where(causal, logits, -1e30) if is_causal else logits
        p = np.exp(lg - lg.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        want = np.einsum("bnts,bsnh->btnh", p, v)
        got = jax.nn.dot_product_attention(q, k, v, is_causal=is_causal)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


SPECIAL = ["erf", "erfc", "gammaln", "digamma", "expit", "ndtr", "i0e", "i1e", "i0", "i1",
           "entr"]


@pytest.mark.parametrize("name", SPECIAL)
def test_scipy_special_vs_jax(name):
    rjax = pytest.importorskip("jax")
    import jax.scipy.special  # noqa: F401
    x = np.linspace(0.1, 3.0, 9).astype(np.float32)
    ours = getattr(jax.scipy.special, name)(x)
    theirs = getattr(rjax.scipy.special, name)(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5, atol=1e-6)


def test_scipy_special_closed_forms():
    from scipy import special as sc
    x = np.linspace(0.1, 0.9, 5)
    sp = jax.scipy.special
    np.testing.assert_allclose(sp.erfinv(x), sc.erfinv(x), rtol=1e-5)
    np.testing.assert_allclose(sp.logit(x), sc.logit(x), rtol=1e-5)
    np.testing.assert_allclose(sp.xlogy(x, x), x * np.log(x), rtol=1e-5)
    np.testing.assert_allclose(sp.xlogy(0.0, 0.0), 0.0)
    # (float32 cancellation: JAX's betaln is 1e-5 off SciPy's at 0.7 too, jaxlite has its bits)
    np.testing.assert_allclose(sp.betaln(x, 2 * x), sc.betaln(x, 2 * x), rtol=2e-5)
    np.testing.assert_allclose(sp.multigammaln(x + 2, 3), sc.multigammaln(x + 2, 3)
                               if np.ndim(x) == 0 else [sc.multigammaln(v + 2, 3) for v in x],
                               rtol=1e-5)
    np.testing.assert_allclose(sp.gammainc(2.0, x), sc.gammainc(2.0, x), rtol=1e-5)
    np.testing.assert_allclose(sp.ndtri(x), sc.ndtri(x), rtol=1e-4)
    np.testing.assert_allclose(sp.log_ndtr(np.array([-10.0, -1.0, 2.0])),
                               sc.log_ndtr(np.array([-10.0, -1.0, 2.0])), rtol=1e-4)
    np.testing.assert_allclose(sp.gamma(np.array([0.5, 3.0, -0.5])),
                               sc.gamma(np.array([0.5, 3.0, -0.5])), rtol=1e-5)


def test_scipy_stats_vs_scipy():
    import scipy.stats as ss
    js = jax.scipy.stats
    x = np.linspace(0.1, 0.9, 5)
    k = np.arange(4.0)
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    checks = [
        (js.norm.logpdf(x, 0.2, 1.5), ss.norm.logpdf(x, 0.2, 1.5)),
        (js.norm.cdf(x), ss.norm.cdf(x)), (js.norm.ppf(x), ss.norm.ppf(x)),
        (js.norm.sf(x), ss.norm.sf(x)), (js.norm.pdf(x), ss.norm.pdf(x)),
        (js.beta.logpdf(x, 2.0, 3.0), ss.beta.logpdf(x, 2, 3)),
        (js.beta.cdf(x, 2.0, 3.0), ss.beta.cdf(x, 2, 3)),
        (js.gamma.logpdf(x, 2.0), ss.gamma.logpdf(x, 2)),
        (js.gamma.cdf(x, 2.0), ss.gamma.cdf(x, 2)), (js.t.logpdf(x, 3.0), ss.t.logpdf(x, 3)),
        (js.poisson.logpmf(k, 2.0), ss.poisson.logpmf(k, 2)),
        (js.poisson.cdf(k, 2.0), ss.poisson.cdf(k, 2)),
        (js.binom.logpmf(k, 5.0, 0.3), ss.binom.logpmf(k, 5, 0.3)),
        (js.laplace.cdf(x - 0.5), ss.laplace.cdf(x - 0.5)),
        (js.logistic.logpdf(x), ss.logistic.logpdf(x)), (js.cauchy.logpdf(x), ss.cauchy.logpdf(x)),
        (js.expon.cdf(x), ss.expon.cdf(x)), (js.chi2.logpdf(x, 3.0), ss.chi2.logpdf(x, 3)),
        (js.uniform.logpdf(x, 0.0, 0.5), ss.uniform.logpdf(x, 0, 0.5)),
        (js.bernoulli.logpmf(np.array([0.0, 1.0]), 0.3), ss.bernoulli.logpmf([0, 1], 0.3)),
        (js.multivariate_normal.logpdf(np.array([0.3, 0.1]), np.zeros(2), cov),
         ss.multivariate_normal.logpdf([0.3, 0.1], np.zeros(2), cov)),
        (js.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), np.array([1.0, 2.0, 3.0])),
         ss.dirichlet.logpdf([0.2, 0.3, 0.5], [1, 2, 3])),
        (js.geom.logpmf(k + 1, 0.3), ss.geom.logpmf(k + 1, 0.3)),
        (js.pareto.logpdf(x + 1, 2.0), ss.pareto.logpdf(x + 1, 2)),
    ]
    for i, (ours, want) in enumerate(checks):
        np.testing.assert_allclose(np.asarray(ours), want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"check {i}")
    g = jax.grad(lambda m: jnp.sum(js.norm.logpdf(jnp.asarray(x), m, 1.0)))(0.3)
    np.testing.assert_allclose(g, np.sum(x - 0.3), rtol=1e-5)
