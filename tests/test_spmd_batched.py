"""Small pmap/shard_map calls run as one batched program on the calling thread
(``jaxlite_spmd_mode``): every program must give what the per-device threads give (values,
dtypes, shardings), and the programs the batched form could get wrong must keep running on
the device threads."""
from __future__ import annotations

import json

import pytest

from multidevice import run_snippet

CASES = r'''
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from functools import partial
from jaxlite import lax
from jaxlite.sharding import Mesh, PartitionSpec as P, NamedSharding
from jaxlite._src.prims import shard_map as sm

r = np.random.RandomState(0)
X = jnp.asarray(r.randn(8, 3, 4).astype(np.float32))
Y = jnp.asarray(r.randn(8, 5).astype(np.float32))
I = jnp.arange(8 * 6, dtype=jnp.int32).reshape(8, 6)
mesh2 = Mesh(np.asarray(jax.devices()).reshape(4, 2), ("x", "y"))

def pm(f, **kw):
    return jax.pmap(f, axis_name="i", **kw)

CASES = {
  "psum": (pm(lambda v: lax.psum(v, "i")), (X,)),
  "pmean_tree": (pm(lambda t: lax.pmean(t, "i")), ({"a": X, "b": (Y,)},)),
  "pmax_pmin": (pm(lambda v: (lax.pmax(v, "i"), lax.pmin(v, "i"))), (Y,)),
  "int_psum": (pm(lambda v: lax.psum(v, "i")), (I,)),
  "all_gather": (pm(lambda v: lax.all_gather(v, "i")), (Y,)),
  "all_gather_axis1_tiled": (pm(lambda v: lax.all_gather(v, "i", axis=1, tiled=True)), (X,)),
  "psum_scatter": (pm(lambda v: lax.psum_scatter(v, "i")), (jnp.ones((8, 8, 2)) * Y[:, :1, None],)),
  "psum_scatter_big": (pm(lambda v: (lax.psum_scatter(v, "i"), lax.psum_scatter(v, "i", tiled=True))),
                       (jnp.asarray(r.randn(8, 8, 1024).astype(np.float32)),)),
  "psum_scatter_tiled": (pm(lambda v: lax.psum_scatter(v, "i", tiled=True)), (jnp.tile(Y, (1, 8)).reshape(8, 40)[:, :16],)),
  "ppermute_cycle": (pm(lambda v: lax.ppermute(v, "i", [(k, (k + 1) % 8) for k in range(8)])), (X,)),
  "ppermute_partial": (pm(lambda v: lax.ppermute(v, "i", [(0, 3), (5, 1)])), (Y,)),
  "pshuffle": (pm(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0, 7, 6, 5, 4])), (Y,)),
  "all_to_all": (pm(lambda v: lax.all_to_all(v, "i", 0, 1)), (jnp.arange(8 * 8 * 3.).reshape(8, 8, 3),)),
  "all_to_all_tiled": (pm(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True)), (jnp.arange(8 * 2 * 16.).reshape(8, 2, 16),)),
  "axis_index_size": (pm(lambda v: v * lax.axis_index("i") + lax.axis_size("i")), (Y,)),
  "in_axes_none_out_axes_none": (pm(lambda w, v: (jnp.dot(v, w), lax.pmean(jnp.sum(w), "i")),
                                    in_axes=(None, 0), out_axes=(0, None)), (jnp.ones((5, 2)), Y)),
  "in_axes_1_out_axes_1": (pm(lambda v: jnp.sin(v) * 2, in_axes=1, out_axes=1), (jnp.ones((3, 8)) * 0.5,)),
  "grad_pmean": (pm(lambda w, v: jax.grad(lambda w: lax.pmean(jnp.sum(jnp.tanh(v @ w) ** 2), "i"))(w),
                    in_axes=(None, 0)), (jnp.ones((5, 2)) * 0.1, Y)),
  "grad_mlp_pmean": (pm(lambda w, v: lax.pmean(jax.grad(lambda w: jnp.sum(jnp.tanh(v @ w) ** 2))(w), "i"),
                        in_axes=(None, 0)), (jnp.asarray(r.randn(5, 7).astype(np.float32)),
                                             jnp.asarray(r.randn(8, 16, 5).astype(np.float32)))),
  "random": (pm(lambda k: jax.random.normal(k, (3,))), (jax.random.split(jax.random.PRNGKey(0), 8),)),
  "scan_with_collective": (pm(lambda v: lax.scan(lambda c, _: (lax.psum(c, "i") * 0.1, c), v, None, length=3)), (Y,)),
  "cond_no_collective": (pm(lambda v: lax.cond(v[0] > 0, jnp.sin, jnp.cos, v)), (Y,)),
  "while_no_collective": (pm(lambda v: lax.while_loop(lambda c: c[0] < 3., lambda c: c + 1., v)), (Y,)),
  "shard_map_2d_psum_both": (jax.shard_map(lambda a: lax.psum(a, ("x", "y")), mesh=mesh2,
                                           in_specs=P("x", "y"), out_specs=P()), (jnp.arange(32.).reshape(8, 4),)),
  "shard_map_matmul_psum_y": (jax.shard_map(lambda a, b: lax.psum(a @ b, "y"), mesh=mesh2,
                                            in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None)),
                              (jnp.arange(8 * 16.).reshape(8, 16), jnp.arange(16 * 4.).reshape(16, 4))),
  "shard_map_spec_order_yx": (jax.shard_map(lambda a: a * lax.axis_index("y") + lax.axis_index("x"), mesh=mesh2,
                                            in_specs=P(("y", "x")), out_specs=P(("y", "x"))), (jnp.arange(16.),)),
  "shard_map_gather_one_axis": (jax.shard_map(lambda a: lax.all_gather(a, "x", tiled=True), mesh=mesh2,
                                              in_specs=P("x", "y"), out_specs=P(None, "y"), check_vma=False), (jnp.arange(32.).reshape(8, 4),)),
  "jit_of_pmap": (jax.jit(pm(lambda v: lax.psum(v * 2, "i"))), (Y,)),
  "shard_map_axis_index_tuple": (jax.shard_map(lambda a: a + lax.axis_index(("y", "x")), mesh=mesh2,
                                               in_specs=P(("x", "y")), out_specs=P(("x", "y"))),
                                 (jnp.zeros(8, jnp.int32),)),
}

from jaxlite._src.prims.shard_map_batched import BatchedRunner
calls = []
orig = BatchedRunner.__call__
BatchedRunner.__call__ = lambda self, a: calls.append(1) or orig(self, a)

def run(name, mode):
    jax.config.update("jaxlite_spmd_mode", mode)
    f, args = CASES[name]
    calls.clear()
    out = f(*args)
    leaves = jax.tree_util.tree_leaves(out)
    return ([np.asarray(l).tolist() for l in leaves], [str(np.asarray(l).dtype) for l in leaves],
            [repr(getattr(l, "sharding", None)) for l in leaves], len(calls))

res = {}
for name in CASES:
    got = {}
    for mode in ("threads", "batched"):
        try:
            got[mode] = run(name, mode)
        except Exception as e:
            got[mode] = f"{type(e).__name__}: {e}"
    res[name] = got
print(json.dumps(res))
'''


@pytest.fixture(scope="module")
def results():
    return json.loads(run_snippet(CASES, n=8).strip().splitlines()[-1])


NAMES = ["psum", "pmean_tree", "pmax_pmin", "int_psum", "all_gather", "all_gather_axis1_tiled",
         "psum_scatter", "psum_scatter_big", "psum_scatter_tiled", "ppermute_cycle", "ppermute_partial", "pshuffle",
         "all_to_all", "all_to_all_tiled", "axis_index_size", "in_axes_none_out_axes_none",
         "in_axes_1_out_axes_1", "grad_pmean", "grad_mlp_pmean", "random", "scan_with_collective",
         "cond_no_collective", "while_no_collective", "shard_map_2d_psum_both",
         "shard_map_matmul_psum_y", "shard_map_spec_order_yx", "shard_map_gather_one_axis",
         "jit_of_pmap", "shard_map_axis_index_tuple"]


@pytest.mark.parametrize("name", NAMES)
def test_batched_equals_threads(results, name):
    import numpy as np
    got = results[name]
    threads, batched = got["threads"], got["batched"]
    assert not isinstance(threads, str), threads
    assert not isinstance(batched, str), batched
    (tv, td, ts, tcalls), (bv, bd, bs, bcalls) = threads, batched
    assert (tcalls, bcalls) == (0, 1)      # each mode ran as asked
    assert td == bd and ts == bs
    for a, b in zip(tv, bv):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6, atol=1e-6)
    if name in EXACT:       # the device sums add up in the per-device programs' order
        for a, b in zip(tv, bv):
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


@pytest.fixture(scope="module")
def results_tier2():
    """The same programs with tier 2 (fused kernels) built at the first call."""
    return json.loads(run_snippet(CASES, n=8, env={"JAXLITE_TIER": "2"}).strip()
                      .splitlines()[-1])


@pytest.mark.parametrize("name", sorted(["grad_pmean", "grad_mlp_pmean",
                                         "in_axes_none_out_axes_none", "pmean_tree"]))
def test_batched_tier2_equals_threads(results_tier2, name):
    """Tier 2 of a batched program keeps every op and its order: the threads' bits."""
    import numpy as np
    threads, batched = results_tier2[name]["threads"], results_tier2[name]["batched"]
    assert not isinstance(batched, str), batched
    for a, b in zip(threads[0], batched[0]):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


# Programs whose batched form must give the threads' bits: all of them (each device's
# sums, products and contractions run as its own program would: BatchTrace.per_device;
# the gradient sums over the devices are not folded into one contraction:
# compiler/passes.py keep_sum_order).
EXACT = set(NAMES)


GUARDED = r'''
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.prims import shard_map as sm
from jaxlite._src.prims.shard_map_batched import BatchedRunner
jax.config.update("jaxlite_spmd_mode", "batched")
calls = []
orig = BatchedRunner.__call__
def spy(self, args):
    calls.append(1)
    return orig(self, args)
BatchedRunner.__call__ = spy
Y = jnp.arange(8.)
out = {}
def check(name, f, *args):
    calls.clear()
    try:
        f(*args)
        out[name] = ("ok", len(calls))
    except Exception as e:
        out[name] = (type(e).__name__, len(calls))
check("plain", jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i"), Y)
check("callback", jax.pmap(lambda v: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float32), v)), Y)
check("debug_print", jax.pmap(lambda v: jax.debug.print("{}", v) or v), Y)
check("collective_in_cond", jax.pmap(lambda v: lax.cond(v > 3, lambda u: lax.psum(u, "i"), lambda u: u, v),
                                     axis_name="i"), Y)
check("groups", jax.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1, 2, 3], [4, 5, 6, 7]]),
                         axis_name="i"), Y)
print(json.dumps(out))
'''


def test_unsafe_programs_stay_on_device_threads():
    out = json.loads(run_snippet(GUARDED, n=8).strip().splitlines()[-1])
    assert out["plain"] == ["ok", 1]
    assert out["callback"][1] == 0
    assert out["debug_print"][1] == 0
    # a collective only some devices reach: the device threads report it (no batched value)
    assert out["collective_in_cond"] == ["CollectiveError", 0]
    assert out["groups"][1] == 0


def test_auto_mode_picks_threads_for_big_data():
    out = run_snippet(r'''
import numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite._src.prims.shard_map_batched import BatchedRunner, BATCHED_MAX_BYTES
calls = []
orig = BatchedRunner.__call__
BatchedRunner.__call__ = lambda self, a: calls.append(1) or orig(self, a)
f = jax.pmap(jnp.cos)
f(jnp.ones((8, 4)))
small = len(calls)
f(jnp.ones((8, BATCHED_MAX_BYTES // 8)))
print(small, len(calls))
''', n=8)
    assert out.split() == ["1", "1"]


def test_vmap_axis_index_over_a_tuple_of_names_counts_row_major():
    import numpy as np
    import jaxlite as jax
    import jaxlite.numpy as jnp
    from jaxlite import lax
    nv = lambda f: jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")  # noqa: E731
    x = jnp.zeros((2, 3))
    i, j = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(nv(lambda v: lax.axis_index(("i", "j")))(x), i * 3 + j)
    np.testing.assert_array_equal(nv(lambda v: lax.axis_index(("j", "i")))(x), j * 2 + i)
    np.testing.assert_array_equal(nv(lambda v: lax.axis_size(("i", "j")) + 0 * v)(x), 6)


@pytest.mark.parametrize("call", [
    lambda lax, v: lax.all_gather(v, ("i", "j")),
    lambda lax, v: lax.ppermute(v, ("i", "j"), [(0, 1), (1, 0)]),
    lambda lax, v: lax.psum_scatter(v, ("i", "j")),
    lambda lax, v: lax.all_to_all(v, ("i", "j"), 0, 0),
])
def test_vmap_collectives_over_a_tuple_of_names_refuse(call):
    import jaxlite as jax
    import jaxlite.numpy as jnp
    from jaxlite import lax
    nv = lambda f: jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")  # noqa: E731
    with pytest.raises(NotImplementedError, match="one name at a time"):
        nv(lambda v: call(lax, v))(jnp.ones((2, 3, 6)))


# Each device's own program, whether the devices run on their threads or batched on the
# caller's thread: float sums of 4096+ elements take YNNPACK's order and smaller ones XLA's
# tree (prims/reductions.py), so a sum over the stacked devices would round otherwise; a
# matmul of a stack is another BLAS call; a division by an unbatched scalar a
# multiplication by its reciprocal.
PER_DEVICE = r'''
import json, sys, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import Mesh, NamedSharding, PartitionSpec as P
D = len(jax.devices())
mesh = Mesh(np.asarray(jax.devices()), ("d",))
r = np.random.RandomState(0)
W = r.randn(8, 3).astype(np.float32)
K = r.randn(3, 1, 5).astype(np.float32)
rows = lambda v: v[:v.shape[0] // 8 * 8].reshape(-1, 8)
FUNS = {
  "sum": jnp.sum, "sum_rows": lambda v: jnp.sum(rows(v), axis=0),
  "sum_cols": lambda v: jnp.sum(rows(v), axis=1), "mean": jnp.mean, "var": jnp.var,
  "prod": lambda v: jnp.prod(1 + v / 64), "cumsum": jnp.cumsum, "cumprod": lambda v: jnp.cumprod(1 + v / 64),
  "max": jnp.max, "min_rows": lambda v: jnp.min(rows(v), axis=0), "argmax": jnp.argmax,
  "norm": jnp.linalg.norm, "logsumexp": jax.nn.logsumexp, "softmax": jax.nn.softmax,
  "dot": lambda v: v @ v, "matmul": lambda v: rows(v) @ W,
  "conv": lambda v: lax.conv_general_dilated(v.reshape(1, 1, -1)[:, :, :64], K, (1,), "VALID"),
  "div_const": lambda v: jnp.sum(v) / 3.0,
  "grad": jax.grad(lambda v: jnp.sum(jnp.tanh(rows(v) @ W) ** 2) / 7.0),
}
SIZES = [int(s) for s in sys.argv[1:]]
one = {name: jax.jit(f) for name, f in FUNS.items()}
bad, count = [], 0
for n in SIZES:
    x = r.randn(D, n).astype(np.float32)
    x[:, ::7] = np.where(x[:, ::7] > 0, 0.0, -0.0)       # signed zeros: max/min ties
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    for name, f in FUNS.items():
        want = np.stack([np.asarray(one[name](x[i])) for i in range(D)])
        got = {}
        for mode in ("threads", "batched"):
            jax.config.update("jaxlite_spmd_mode", mode)
            got["pmap_" + mode] = jax.pmap(f)(x)
            got["shard_map_" + mode] = jax.shard_map(
                lambda v: f(v[0])[None], mesh=mesh, in_specs=P("d"), out_specs=P("d"))(xs)
        jax.config.update("jaxlite_spmd_mode", "auto")
        got["jit_of_pmap"] = jax.jit(jax.pmap(f))(x)
        got["jit_sharded"] = jax.jit(jax.vmap(f), in_shardings=NamedSharding(mesh, P("d")),
                                     out_shardings=NamedSharding(mesh, P("d")))(xs) \
            if name in ("sum_cols", "cumsum", "max", "argmax", "softmax") else None
        for how, g in got.items():
            if g is None:
                continue
            count += 1
            g = np.asarray(g)
            if g.dtype != want.dtype or g.shape != want.shape or \
                    not np.array_equal(g.view(np.uint8), want.view(np.uint8)):
                bad.append([name, n, how])
print(json.dumps({"bad": bad, "count": count}))
'''


@pytest.mark.parametrize("devices,sizes,tier", [
    (2, [2047, 2048, 2049, 4095, 4096, 4097], None),
    (4, [1023, 1024, 1025, 4096, 5000], None),
    (4, [1000, 1024, 4096], "2")])     # (tier 2's fused kernels from the first call)
def test_each_device_gets_its_own_programs_bits(devices, sizes, tier):
    """pmap, shard_map and a sharded jit over emulated devices give each device exactly
    what that device's block gives alone under jit (bit for bit, signed zeros included),
    on the device threads and batched, for sizes around YNNPACK's 4096 elements."""
    code = PER_DEVICE.replace("sys.argv[1:]", repr([str(s) for s in sizes]))
    env = {"JAXLITE_TIER": tier} if tier else None
    out = json.loads(run_snippet(code, n=devices, env=env).strip().splitlines()[-1])
    assert out["count"] > 100
    assert out["bad"] == []


MESH_2D = r'''
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite.sharding import Mesh, PartitionSpec as P
mesh = Mesh(np.asarray(jax.devices()).reshape(2, 2), ("x", "y"))
r = np.random.RandomState(0)
bad = []
for n in (1000, 2048, 4096):
    x = r.randn(2 * 2, 2 * n).astype(np.float32)
    W = r.randn(n, 3).astype(np.float32)
    for name, f in [("sum", lambda b: jnp.sum(b)[None, None]), ("sum0", lambda b: jnp.sum(b, axis=0)[None]),
                    ("mean1", lambda b: jnp.mean(b, axis=1)[None]), ("matmul", lambda b: (b @ W)[None])]:
        want = {(i, j): np.asarray(jax.jit(f)(x[2 * i:2 * i + 2, n * j:n * j + n]))
                for i in range(2) for j in range(2)}
        for mode in ("threads", "batched"):
            jax.config.update("jaxlite_spmd_mode", mode)
            got = np.asarray(jax.shard_map(lambda b: f(b)[None], mesh=mesh, in_specs=P("x", "y"),
                                           out_specs=P("x", "y"))(x))
            bad += [[name, n, mode, i, j] for (i, j), w in want.items()
                    if not np.array_equal(got[i, j], w.reshape(got[i, j].shape))]
print(json.dumps(bad))
'''


def test_each_device_of_a_2d_mesh_gets_its_own_programs_bits():
    """Over a (2, 2) mesh the batched form batches twice (two device axes): each block's
    sums and products still equal that block's own jit bit for bit."""
    assert json.loads(run_snippet(MESH_2D, n=4).strip().splitlines()[-1]) == []


def test_psum_of_negative_zeros_is_positive_zero_in_both_modes():
    """XLA's all-reduce adds from +0.0: a psum of -0.0s is +0.0 (JAX 0.10.2 on 2 CPU
    devices), on the device threads as in the batched form."""
    out = run_snippet(r'''
import numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
x = jnp.asarray(np.full((2, 3), -0.0, np.float32))
for mode in ("threads", "batched"):
    jax.config.update("jaxlite_spmd_mode", mode)
    r = jax.pmap(lambda v: (lax.psum(v, "i"), lax.psum(v[0], "i")), axis_name="i")(x)
    print(mode, int(np.signbit(np.asarray(r[0])).any()), int(np.signbit(np.asarray(r[1])).any()))
''', n=2)
    assert out.split() == ["threads", "0", "0", "batched", "0", "0"]
