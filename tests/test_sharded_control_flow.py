"""Control flow (scan, fori_loop, while_loop, cond) inside a jit on sharded inputs: the
partitioner runs the bodies on blocks, so values and output shardings equal JAX 0.10.2's
(stored below, computed on 8 CPU devices): a loop carry keeps its layout, split the way the
body splits it; the scanned dimension of the xs is whole on every device."""
from __future__ import annotations

import pytest

from multidevice import assert_shown, shown_results

BODY = r'''
x = jax.device_put(jnp.arange(32.).reshape(8, 4) / 10, NS(mesh, P("x", "y")))
xs = jax.device_put(jnp.arange(96.).reshape(3, 8, 4) / 50, NS(mesh, P(None, "x")))
show("scan", jax.jit(lambda c, xs: lax.scan(lambda c, x: (jnp.tanh(c * 2 + x), c.sum()), c, xs)[0])(x, xs))
show("scan_ys", jax.jit(lambda c, xs: lax.scan(lambda c, x: (jnp.tanh(c * 2 + x), c.sum(1)), c, xs)[1])(x, xs))
show("fori", jax.jit(lambda c: lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) + i, c))(x))
show("while", jax.jit(lambda c: lax.while_loop(lambda c: c.sum() < 100., lambda c: c * 1.5 + 0.1, c))(x))
show("cond", jax.jit(lambda p, c: lax.cond(p, jnp.sin, lambda v: v.T.T * 2, c))(True, x))
show("cond2", jax.jit(lambda p, c: lax.cond(p, jnp.sin, lambda v: v.T.T * 2, c))(False, x))
show("grad_scan", jax.jit(jax.grad(lambda c: lax.scan(lambda c, x: (jnp.tanh(c * 2 + x), None), c, xs)[0].sum()))(x))
'''

JAX = {
    "scan": [[0.984, 0.994, 0.996, 0.997, 0.997, 0.998],
        "P('x', 'y')"],
    "scan_ys": [[0.6, 2.2, 3.8, 5.4, 7.0, 8.6],
        "P(None, 'x')"],
    "fori": [[3.847, 3.894, 3.933, 3.962, 3.982, 3.995],
        "P('x', 'y')"],
    "while": [[0.25, 0.475, 0.7, 0.925, 1.15, 1.375],
        "P('x', 'y')"],
    "cond": [[0.0, 0.1, 0.199, 0.296, 0.389, 0.479],
        "P('x', 'y')"],
    "cond2": [[0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
        "P('x', 'y')"],
    "grad_scan": [[0.173, 0.034, 0.009, 0.003, 0.001, 0.001],
        "P('x', 'y')"],
}


@pytest.fixture(scope="module")
def results():
    return shown_results(BODY)


@pytest.mark.parametrize("name", sorted(JAX))
def test_equals_jax(results, name):
    assert_shown(results[name], JAX[name])
