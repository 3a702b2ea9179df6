"""igamma/igammac/betainc give JAX's edge values (JAX's own selects, not SciPy's)."""
import numpy as np

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
