"""Gathers and scatters inside a jit on sharded inputs: dimensions a window takes whole keep
their split (an embedding table split over its features, indices split over the batch), the
addressed dimensions are whole, and a scatter's result keeps its operand's layout, so values
and output shardings equal JAX 0.10.2's (stored below, computed on 8 CPU devices)."""
from __future__ import annotations

import json

import pytest

from multidevice import run_snippet

PROGRAM = r'''
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
out = {}
P = jax.sharding.PartitionSpec
NS = jax.sharding.NamedSharding
mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
t = jax.device_put(jnp.arange(64.).reshape(16, 4) / 10, NS(mesh, P(None, "y")))
t2 = jax.device_put(jnp.arange(64.).reshape(16, 4) / 10, NS(mesh, P("x", "y")))
i = jax.device_put(jnp.array([1, 5, 9, 3, 0, 2, 7, 15]), NS(mesh, P("x")))
u = jax.device_put(jnp.ones((8, 4)), NS(mesh, P("x", "y")))
def show(name, y):
    out[name] = [np.round(np.asarray(y), 3).ravel()[:8].tolist(), str(y.sharding.spec)]
show("embed", jax.jit(lambda t, i: t[i])(t, i))
show("embed_sharded_rows", jax.jit(lambda t, i: t[i])(t2, i))
show("take_along", jax.jit(lambda t: jnp.take_along_axis(t, jnp.argsort(t, axis=0), axis=0))(t2))
show("scatter_add", jax.jit(lambda t, i, u: t.at[i].add(u))(t, i, u))
show("scatter_set_rows", jax.jit(lambda t, i, u: t.at[i].set(u))(t2, i, u))
show("grad_embed", jax.jit(jax.grad(lambda t, i: jnp.sum(t[i] ** 2)))(t, i))
print(json.dumps(out))
'''

JAX = {
    "embed": [[0.4, 0.5, 0.6, 0.7, 2.0, 2.1, 2.2, 2.3],
        "P('x', 'y')"],
    "embed_sharded_rows": [[0.4, 0.5, 0.6, 0.7, 2.0, 2.1, 2.2, 2.3],
        "P('x', 'y')"],
    "take_along": [[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
        "P('x', 'y')"],
    "scatter_add": [[1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7],
        "P(None, 'y')"],
    "scatter_set_rows": [[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        "P('x', 'y')"],
    "grad_embed": [[0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4],
        "P(None, 'y')"],
}


@pytest.fixture(scope="module")
def results():
    return json.loads(run_snippet(PROGRAM, n=8).strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(JAX))
def test_equals_jax(results, name):
    import numpy as np
    vals, spec = results[name]
    np.testing.assert_allclose(vals, JAX[name][0], atol=2e-3)
    assert spec == JAX[name][1]
