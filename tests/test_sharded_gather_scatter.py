"""Gathers and scatters inside a jit on sharded inputs: dimensions a window takes whole keep
their split (an embedding table split over its features, indices split over the batch), the
addressed dimensions are whole, and a scatter's result keeps its operand's layout, so values
and output shardings equal JAX 0.10.2's (stored below, computed on 8 CPU devices)."""
from __future__ import annotations

import pytest

from multidevice import assert_shown, shown_results

BODY = r'''
show = partial(show, n=8)
t = jax.device_put(jnp.arange(64.).reshape(16, 4) / 10, NS(mesh, P(None, "y")))
t2 = jax.device_put(jnp.arange(64.).reshape(16, 4) / 10, NS(mesh, P("x", "y")))
i = jax.device_put(jnp.array([1, 5, 9, 3, 0, 2, 7, 15]), NS(mesh, P("x")))
u = jax.device_put(jnp.ones((8, 4)), NS(mesh, P("x", "y")))
show("embed", jax.jit(lambda t, i: t[i])(t, i))
show("embed_sharded_rows", jax.jit(lambda t, i: t[i])(t2, i))
show("take_along", jax.jit(lambda t: jnp.take_along_axis(t, jnp.argsort(t, axis=0), axis=0))(t2))
show("scatter_add", jax.jit(lambda t, i, u: t.at[i].add(u))(t, i, u))
show("scatter_set_rows", jax.jit(lambda t, i, u: t.at[i].set(u))(t2, i, u))
show("grad_embed", jax.jit(jax.grad(lambda t, i: jnp.sum(t[i] ** 2)))(t, i))
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
    return shown_results(BODY)


@pytest.mark.parametrize("name", sorted(JAX))
def test_equals_jax(results, name):
    assert_shown(results[name], JAX[name])
