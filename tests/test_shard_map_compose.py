"""shard_map composed with the other transformations as JAX 0.10.2 composes it: vmap of a
shard_map, scan and remat inside, a subset of manual axes inside jit, a collective matmul
(ppermute ring), and jit(grad) of a shard_map holding a scan (its forward and backward split
into two shard_maps, the residuals passed per device). Values and shardings are JAX's
(stored below, computed on 8 CPU devices)."""
from __future__ import annotations

import json

import pytest

from multidevice import assert_shown, run_snippet, shown_results

BODY = r'''
_show = show
show = lambda name, f: _show(name, f())  # noqa: E731 (the cases are thunks)
x = jnp.arange(64.).reshape(8, 8) / 10
sm = partial(jax.shard_map, mesh=mesh)
show("vmap", lambda: jax.vmap(sm(lambda a: lax.psum(a, 'y'), in_specs=P('x', 'y'), out_specs=P('x')))(jnp.stack([x, 2 * x])))
show("scan_inside", lambda: sm(lambda a: lax.scan(lambda c, r: (c + lax.psum(r, 'y'), None), jnp.zeros(a.shape[1:]), a)[0], in_specs=P('x', 'y'), out_specs=P(None), check_vma=False)(x))
show("remat_inside", lambda: jax.grad(lambda v: sm(jax.checkpoint(lambda a: lax.psum(jnp.sum(jnp.sin(a)), ('x', 'y'))), in_specs=P('x', 'y'), out_specs=P())(v))(x))
show("axis_names_subset", lambda: jax.jit(sm(lambda a: lax.psum(a, 'x'), in_specs=P('x'), out_specs=P(), axis_names={'x'}))(x))
def collective_matmul(a, b):
    # all-gather a over 'x' with ppermute, overlapped with the matmul
    n = 4
    idx = lax.axis_index('x')
    acc = jnp.zeros((a.shape[0] * n, b.shape[1]))
    blk = a
    for i in range(n):
        src = (idx + i) % n
        acc = lax.dynamic_update_slice(acc, blk @ b, (src * a.shape[0], 0))
        blk = lax.ppermute(blk, 'x', [(j, (j - 1) % n) for j in range(n)])
    return acc
show("collective_matmul", lambda: sm(collective_matmul, in_specs=(P('x', None), P(None, 'y')), out_specs=P(None, 'y'), check_vma=False)(x, x.T))
show("jit_grad_shard_map_scan", lambda: jax.jit(jax.grad(lambda v: sm(lambda a: jnp.sum(lax.scan(lambda c, r: (jnp.tanh(c + r), None), jnp.zeros(a.shape[1:]), a)[0]), in_specs=P('x', 'y'), out_specs=P(), check_vma=False)(v)))(x))
'''

JAX = {
    "vmap": [[0.4, 0.6, 0.8, 1.0, 2.0, 2.2],
        "P(None, 'x')"],
    "scan_inside": [[2.4, 2.8, 3.2, 3.6],
        "P(None,)"],
    "remat_inside": [[1.0, 0.995, 0.98, 0.955, 0.921, 0.878],
        "P('x', 'y')"],
    "axis_names_subset": [[9.6, 10.0, 10.4, 10.8, 11.2, 11.6],
        "P()"],
    "collective_matmul": [[1.4, 3.64, 5.88, 8.12, 10.36, 12.6],
        "P(None, 'y')"],
    "jit_grad_shard_map_scan": [[0.07, 0.052, 0.037, 0.025, 0.017, 0.011],
        "P('x', 'y')"],
}


@pytest.fixture(scope="module")
def results():
    return shown_results(BODY)


@pytest.mark.parametrize("name", sorted(JAX))
def test_equals_jax(results, name):
    assert_shown(results[name], JAX[name])


ERRORS = r'''
import json, jaxlite as jax, jaxlite.numpy as jnp
P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
def myf(a): return (a.sum(0), a)
out = []
for call in (lambda: jax.shard_map(myf, mesh=mesh, in_specs=P('x', 'y'),
                                   out_specs=(P(None, 'x'), P('x')), check_vma=False),
             lambda: jax.shard_map(lambda a: a, mesh=mesh, in_specs=P('x', 'y', None),
                                   out_specs=P('x'), check_vma=False)):
    try:
        call()(jnp.ones((8, 8)))
    except ValueError as e:
        out.append(str(e))
print(json.dumps(out))
'''


def test_spec_longer_than_the_rank_is_jaxs_error():
    out = json.loads(run_snippet(ERRORS, n=8).strip().splitlines()[-1])
    assert out[0] == (
        "shard_map applied to the function 'myf' was given an out_specs entry which is too "
        "long to be compatible with the corresponding output value from the function:\n\n"
        "out_specs[0] is P(None, 'x') which has length 2, but myf(*args)[0] has shape "
        "float32[4], which has rank 1 (and 1 < 2)\n\nEntries in out_specs must be of length "
        "no greater than the number of axes in the corresponding output value.\n\nEither "
        "revise the spec to be shorter, or modify 'myf' so that its outputs have sufficient "
        "rank.")
    assert out[1] == (
        "shard_map applied to the function '<lambda>' was given an in_specs entry which is "
        "too long to be compatible with the corresponding input value from the function:\n\n"
        "in_specs is P('x', 'y', None) which has length 3, but the passed args[0], where "
        "args[0] is bound to <lambda>'s parameter 'a', has shape float32[8,8], which has rank "
        "2 (and 2 < 3)\n\nEntries in in_specs must be of length no greater than the number "
        "of axes in the corresponding input value.\n\nEither revise the spec to be shorter, "
        "or modify '<lambda>' so that its inputs have sufficient rank.")
