"""lax.ragged_all_to_all and lax.psend/precv under shard_map and pmap (several devices, in
a subprocess). XLA:CPU implements neither (JAX 0.10.2 raises on CPU), so values are checked
against JAX's documented example and a NumPy reference of the documented semantics."""
import json

import numpy as np
import pytest

from multidevice import run_snippet

SNIPPET = r"""
import json
from functools import partial
import numpy as np
import jaxlite as jax, jaxlite.numpy as jnp
P = jax.sharding.PartitionSpec
out = {}
mesh2 = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))

# the example of JAX's docstring: two members
operand = jnp.array([[1, 2, 2], [3, 4, 0]], jnp.float32)
output = jnp.zeros((2, 4), jnp.float32)
idx = [jnp.array(a, jnp.int32) for a in ([[0, 1], [0, 1]], [[1, 2], [1, 1]],
                                         [[0, 0], [1, 2]], [[1, 1], [2, 1]])]

@partial(jax.shard_map, mesh=mesh2, in_specs=P("x"), out_specs=P("x"))
def f(op, o, a, b, c, d):
    return jax.lax.ragged_all_to_all(op[0], o[0], a[0], b[0], c[0], d[0], axis_name="x")[None]

out["doc"] = np.asarray(f(operand, output, *idx)).tolist()
out["doc_jit"] = np.asarray(jax.jit(f)(operand, output, *idx)).tolist()
out["doc_pmap"] = np.asarray(jax.pmap(
    lambda *a: jax.lax.ragged_all_to_all(*a, axis_name="i"), axis_name="i",
    devices=jax.devices()[:2])(operand, output, *idx)).tolist()
w = jnp.arange(8.).reshape(2, 4)
g = jax.grad(lambda op, o: (f(op, o, *idx) * w).sum(), argnums=(0, 1))(operand, output)
out["grad"] = [np.asarray(t).tolist() for t in g]
out["vmap"] = np.asarray(jax.vmap(lambda op, o: f(op, o, *idx))(
    jnp.stack([operand, operand + 10]), jnp.stack([output, output - 1]))).tolist()

# four members, two slices per destination, random sizes
n, k, rows, width = 4, 2, 12, 3
rng = np.random.RandomState(0)
ops = rng.randn(n, rows, width).astype(np.float32)
outs = rng.randn(n, 16, width).astype(np.float32)
send = rng.randint(0, 3, size=(n, n * k)).astype(np.int32)
in_off = np.zeros_like(send)
for s in range(n):
    in_off[s] = np.concatenate([[0], np.cumsum(send[s])[:-1]])
out_off = np.zeros_like(send)
recv = np.zeros_like(send)
for dst in range(n):   # receivers lay out what they get in source order
    pos = 0
    for src in range(n):
        for i in range(dst * k, (dst + 1) * k):
            out_off[src, i] = pos
            recv[dst, src * k + i - dst * k] = send[src, i]
            pos += send[src, i]
mesh4 = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("x",))
f4 = jax.shard_map(
    lambda *a: jax.lax.ragged_all_to_all(*[v[0] for v in a], axis_name="x")[None],
    mesh=mesh4, in_specs=P("x"), out_specs=P("x"))
out["random"] = np.asarray(f4(ops, outs, in_off, send, out_off, recv)).tolist()
out["random_in"] = [ops.tolist(), outs.tolist(), in_off.tolist(), send.tolist(),
                    out_off.tolist()]

def err(fn):
    try:
        fn()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
bad = [idx[0], idx[1] * 3, idx[2], idx[3]]
out["oob"] = err(lambda: f(operand, output, *bad))
out["float_offsets"] = err(lambda: f(operand, output, idx[0].astype(jnp.float32), *idx[1:]))
out["vmap_axis"] = err(lambda: jax.vmap(
    lambda *a: jax.lax.ragged_all_to_all(*a, axis_name="v"), axis_name="v")(
        operand, output, *idx))

# psend / precv: a shift along the axis, and the errors
perm = [(0, 1), (1, 2), (2, 3)]
@partial(jax.shard_map, mesh=mesh4, in_specs=P("x"), out_specs=P("x"))
def shift(x):
    tok = jax.lax.psend(x, "x", perm)
    return jax.lax.precv(tok, jax.ShapeDtypeStruct(x.shape, x.dtype), "x", perm)
x = jnp.arange(8.)
out["shift"] = np.asarray(shift(x)).tolist()
out["shift_jit"] = np.asarray(jax.jit(shift)(x)).tolist()
out["shift_jaxpr"] = str(jax.make_jaxpr(shift)(x))
@partial(jax.shard_map, mesh=mesh4, in_specs=P("x"), out_specs=P("x"))
def lonely(x):
    return jax.lax.precv(jax.lax.create_token(), jax.ShapeDtypeStruct(x.shape, x.dtype),
                         "x", perm)
out["no_send"] = err(lambda: lonely(x))
out["unbound"] = err(lambda: jax.lax.psend(x, "x", perm))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def res():
    return json.loads(run_snippet(SNIPPET, n=4).strip().splitlines()[-1])


def _reference(ops, outs, in_off, send, out_off):
    """The documented semantics, written out in NumPy."""
    ops, outs = np.asarray(ops), np.asarray(outs)
    n = len(ops)
    k = len(in_off[0]) // n
    res = outs.copy()
    for src in range(n):
        for i in range(len(in_off[src])):
            dst, a, s, b = i // k, in_off[src][i], send[src][i], out_off[src][i]
            res[dst, b:b + s] = ops[src, a:a + s]
    return res


def test_documented_example(res):
    # JAX's docstring: axis index 0 -> [1, 3, 0, 0], axis index 1 -> [2, 2, 4, 0]
    want = [[1, 3, 0, 0], [2, 2, 4, 0]]
    assert res["doc"] == want and res["doc_jit"] == want and res["doc_pmap"] == want


def test_random_against_numpy_reference(res):
    np.testing.assert_array_equal(np.asarray(res["random"], np.float32),
                                  _reference(*res["random_in"]))


def test_gradients(res):
    # d/d operand: each sent row gets the weight of the output row it lands in; d/d output:
    # the weights of the rows nothing overwrote
    assert res["grad"] == [[[0, 4, 5], [1, 6, 0]], [[0, 0, 2, 3], [0, 0, 0, 7]]]


def test_vmap_over_another_axis(res):
    assert res["vmap"] == [[[1, 3, 0, 0], [2, 2, 4, 0]],
                           [[11, 13, -1, -1], [12, 12, 14, -1]]]


def test_errors(res):
    assert res["oob"].startswith("ValueError: ragged_all_to_all: member 0 sends rows [1, 7)")
    assert res["float_offsets"] == ("ValueError: ragged_all_to_all input_offsets must be "
                                    "integer type.")
    assert res["vmap_axis"].startswith("NotImplementedError: ragged_all_to_all over an axis "
                                       "name bound by vmap")


def test_psend_precv(res):
    assert res["shift"] == [0, 0, 0, 1, 2, 3, 4, 5]
    assert res["shift_jit"] == res["shift"]
    assert "psend[axis_name=('x',) perm=((0, 1), (1, 2), (2, 3))]" in res["shift_jaxpr"]
    assert "d:Tok = psend" in res["shift_jaxpr"] and "precv[" in res["shift_jaxpr"]
    assert res["no_send"].startswith("RuntimeError: precv over axis ('x',) with perm")
    assert res["unbound"].startswith("NameError: unbound axis name: x.")
