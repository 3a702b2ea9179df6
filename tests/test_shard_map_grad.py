"""grad through shard_map and pmap: the cotangent of an output replicated over mesh axes
is shared among its replicas, and a replicated input sums its devices' cotangents, so the
gradients equal JAX 0.10.2's (stored below; computed on 8 CPU devices)."""
from __future__ import annotations

import json

import pytest

from multidevice import run_snippet

PROGRAM = r'''
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jnp.arange(32.).reshape(8, 4) / 10
w = jnp.arange(4.) / 3
r = {}
f = jax.pmap(lambda w, v: lax.pmean(jnp.sum(jnp.sin(w * v)), 'i'), axis_name='i',
             in_axes=(None, 0), out_axes=None)
r["pmap_out_axes_none"] = jax.grad(f)(w, x)
f = jax.pmap(lambda w, v: jnp.sum(jnp.sin(w * v)), axis_name='i', in_axes=(None, 0))
r["pmap_replicated_input"] = jax.grad(lambda w: jnp.sum(f(w, x)))(w)
for cv in (True, False):
    g = jax.shard_map(lambda a: lax.psum(a, "y") * 2, mesh=mesh, in_specs=P("x", "y"),
                      out_specs=P("x", None), check_vma=cv)
    r[f"psum_y_{cv}"] = jax.grad(lambda a: jnp.sum(g(a)))(x)
    g = jax.shard_map(lambda a: lax.psum(a * a, ("x", "y")), mesh=mesh, in_specs=P("x", "y"),
                      out_specs=P(), check_vma=cv)
    r[f"psum_xy_{cv}"] = jax.grad(lambda a: jnp.sum(g(a)))(x)
g = jax.shard_map(lambda w, v: lax.psum(jnp.sum(jnp.sin(w * v)), ('x', 'y')), mesh=mesh,
                  in_specs=(P(), P('x', None)), out_specs=P(), check_vma=False)
r["replicated_in_and_out"] = jax.grad(g)(w, x)
g = jax.shard_map(lambda w, v: w * 3, mesh=mesh, in_specs=(P(), P('x', None)), out_specs=P(),
                  check_vma=False)
r["identity_like"] = jax.grad(lambda w: jnp.sum(g(w, x)))(w)
g = jax.shard_map(lambda v: lax.psum(v, 'x'), mesh=mesh, in_specs=P('x', 'y'),
                  out_specs=P(None, 'y'), check_vma=False)
r["psum_x_out_y"] = jax.grad(lambda v: jnp.sum(g(v) ** 2))(x)
g = jax.shard_map(lambda v: lax.all_gather(v, 'x', tiled=True), mesh=mesh,
                  in_specs=P('x', 'y'), out_specs=P(None, 'y'), check_vma=False)
r["all_gather"] = jax.grad(lambda v: jnp.sum(g(v) * jnp.arange(8.)[:, None]))(x)
print(json.dumps({k: np.round(np.asarray(v), 4).ravel()[:8].tolist() for k, v in r.items()}))
'''

JAX = {
    "pmap_out_axes_none": [1.4, 1.1252, 0.1977, -0.7822],
    "pmap_replicated_input": [11.2, 9.0015, 1.5817, -6.2579],
    "psum_y_True": [2.0] * 8,
    "psum_y_False": [2.0] * 8,
    "psum_xy_True": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4],
    "psum_xy_False": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4],
    "replicated_in_and_out": [22.4, 18.003, 3.1634, -12.5159],
    "identity_like": [3.0, 3.0, 3.0, 3.0],
    "psum_x_out_y": [9.6, 10.4, 11.2, 12.0, 12.8, 13.6, 14.4, 15.2],
    "all_gather": [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
}


@pytest.fixture(scope="module")
def results():
    return json.loads(run_snippet(PROGRAM, n=8).strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(JAX))
def test_grad_equals_jax(results, name):
    import numpy as np
    np.testing.assert_allclose(results[name], JAX[name], rtol=1e-4, atol=1e-4)
