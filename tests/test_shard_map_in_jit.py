"""shard_map inside a jit whose inputs are sharded over the same mesh: the shard_map body
joins the partitioned per-device program (operands laid out as in_specs ask, results as
out_specs say), so the results and their shardings equal JAX 0.10.2's (stored below)."""
from __future__ import annotations

import json

import pytest

from multidevice import run_snippet

PROGRAM = r'''
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
P = jax.sharding.PartitionSpec
NS = jax.sharding.NamedSharding
mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
other = jax.make_mesh((8,), ("z",), axis_types=(jax.sharding.AxisType.Auto,))
x = jax.device_put(jnp.arange(32.).reshape(8, 4), NS(mesh, P("x", "y")))
f = jax.shard_map(lambda a: lax.psum(a, "y") * 2, mesh=mesh, in_specs=P("x", "y"),
                  out_specs=P("x", None))
out = {}
def rec(name, y):
    out[name] = [np.round(np.asarray(y), 3).tolist(), str(y.sharding.spec)]
rec("jit", jax.jit(f)(x))
rec("composed", jax.jit(lambda a: f(jnp.sin(a)) + 1)(x))
rec("relayout", jax.jit(f)(jax.device_put(x, NS(mesh, P(None, "x")))))
rec("grad", jax.jit(jax.grad(lambda a: jnp.sum(f(a) ** 2)))(x))
h = jax.shard_map(lambda a: a * lax.axis_index("z"), mesh=other, in_specs=P("z"),
                  out_specs=P("z"))
rec("other_mesh", jax.jit(lambda a: h(a.reshape(32)))(x))
print(json.dumps(out))
'''

JAX = {
    "jit": [[[4.0, 8.0], [20.0, 24.0], [36.0, 40.0], [52.0, 56.0], [68.0, 72.0],
             [84.0, 88.0], [100.0, 104.0], [116.0, 120.0]], "P('x',)"],
}


@pytest.fixture(scope="module")
def results():
    return json.loads(run_snippet(PROGRAM, n=8).strip().splitlines()[-1])


def test_output_sharding_follows_out_specs(results):
    assert results["jit"] == JAX["jit"]


def test_values_equal_the_unsharded_computation(results):
    import numpy as np
    a = np.arange(32.).reshape(8, 4)

    def f(v):
        return (v[:, :2] + v[:, 2:]) * 2
    np.testing.assert_allclose(results["composed"][0], np.round(f(np.sin(a)) + 1, 3),
                               atol=2e-3)
    assert results["composed"][1] == "P('x',)"
    assert results["relayout"][0] == JAX["jit"][0]
    # d/da sum((2 (a_l + a_r))^2) = 8 (a_l + a_r) on both halves
    s = a[:, :2] + a[:, 2:]
    np.testing.assert_allclose(results["grad"][0], np.concatenate([8 * s, 8 * s], 1))
    np.testing.assert_allclose(results["other_mesh"][0], np.arange(32.) * np.repeat(
        np.arange(8), 4))
