"""igamma/igammac/betainc give JAX's edge values (JAX's own selects, not SciPy's) and agree
with JAX's lax algorithms (live comparison skips without jax)."""
import numpy as np
import pytest

import jaxlite.numpy as jnp
from jaxlite import lax

NAN, INF = np.nan, np.inf
V = np.array([NAN, INF, 0.0, 1e-30, 1e30, 2.0, -1.0], np.float32)


def test_igamma_edges():
    # a = inf: log x * inf - lgamma(inf) is nan, so P is nan (SciPy says 0)
    assert np.isnan(np.asarray(lax.igamma(jnp.float32(INF), jnp.float32(2.0))))
    r = np.asarray(lax.igamma(jnp.full(7, 2.0, jnp.float32), jnp.asarray(V)))
    assert np.isnan(r[0]) and r[1] == 1 and r[2] == 0 and np.isnan(r[6])


def test_igammac_edges():
    r = np.asarray(lax.igammac(jnp.full(7, 2.0, jnp.float32), jnp.asarray(V)))
    assert np.isnan(r[0]) and r[1] == 0 and r[2] == 1 and np.isnan(r[6])
    assert np.asarray(lax.igammac(jnp.float32(0.0), jnp.float32(2.0))) == 0


def test_betainc_edges():
    assert np.asarray(lax.betainc(jnp.float32(INF), jnp.float32(2.0), jnp.float32(0.5))) == 0
    assert np.asarray(lax.betainc(jnp.float32(2.0), jnp.float32(INF), jnp.float32(0.5))) == 1


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_igamma_family_matches_jax(name, dt):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(1)
    a = np.concatenate([V, np.exp(rng.uniform(-4, 4, 30))]).astype(dt)
    A, X = (m.ravel() for m in np.meshgrid(a, a))
    with jax.experimental.enable_x64():
        want = np.asarray(getattr(jax.lax, name)(jax.numpy.asarray(A), jax.numpy.asarray(X)))
    got = np.asarray(getattr(lax, name)(jnp.asarray(A), jnp.asarray(X)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-4 if dt == np.float32 else 1e-9,
                               atol=1e-30)
