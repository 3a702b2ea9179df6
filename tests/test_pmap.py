"""pmap, shard_map and the collectives on 8 simulated devices.

Every check runs in a subprocess whose device count is set in its environment (the rest of
the suite keeps one device). Values are checked against NumPy models of each collective,
gradients against finite differences, and printed text against real JAX where installed.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from multidevice import TIMEOUT, run, run_json


def test_collectives_match_numpy_models():
    out = run_json("""
    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6) * 1.5 - 7
    r = {}
    pm = lambda f: jax.pmap(f, axis_name='i')
    r['psum'] = pm(lambda v: lax.psum(v, 'i'))(x).tolist()
    r['pmean'] = pm(lambda v: lax.pmean(v, 'i'))(x).tolist()
    r['pmax'] = pm(lambda v: lax.pmax(v, 'i'))(x).tolist()
    r['pmin'] = pm(lambda v: lax.pmin(v, 'i'))(x).tolist()
    r['idx'] = pm(lambda v: lax.axis_index('i'))(x).tolist()
    r['size'] = pm(lambda v: v * 0 + lax.axis_size('i'))(x)[:, 0].tolist()
    r['ag0'] = pm(lambda v: lax.all_gather(v, 'i'))(x).tolist()
    r['ag1'] = pm(lambda v: lax.all_gather(v, 'i', axis=1))(x).tolist()
    r['agt'] = pm(lambda v: lax.all_gather(v, 'i', tiled=True))(x).tolist()
    y = np.arange(8 * 8 * 2, dtype=np.float32).reshape(8, 8, 2)
    r['rs'] = pm(lambda v: lax.psum_scatter(v, 'i'))(y).tolist()
    r['rst'] = pm(lambda v: lax.psum_scatter(v, 'i', tiled=True))(y).tolist()
    perm = [(i, (i + 3) % 8) for i in range(8)]
    r['ppermute'] = pm(lambda v: lax.ppermute(v, 'i', perm))(x).tolist()
    r['partial'] = pm(lambda v: lax.ppermute(v, 'i', [(0, 1), (1, 0)]))(x).tolist()
    r['pshuffle'] = pm(lambda v: lax.pshuffle(v, 'i', [7, 6, 5, 4, 3, 2, 1, 0]))(x).tolist()
    z = np.arange(8 * 8 * 16, dtype=np.float32).reshape(8, 8, 16)
    r['a2a'] = {f'{s}{c}': pm(lambda v, s=s, c=c: lax.all_to_all(v, 'i', s, c, tiled=True))(
        z).tolist() for s in (0, 1) for c in (0, 1)}
    r['a2a_untiled'] = pm(lambda v: lax.all_to_all(v, 'i', 0, 1))(z).tolist()
    print(json.dumps(r))
    """)
    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6) * 1.5 - 7
    tile = lambda v: np.broadcast_to(v, x.shape)  # noqa: E731
    np.testing.assert_allclose(out["psum"], tile(x.sum(0)))
    np.testing.assert_allclose(out["pmean"], tile(x.mean(0)), rtol=1e-6)
    np.testing.assert_allclose(out["pmax"], tile(x.max(0)))
    np.testing.assert_allclose(out["pmin"], tile(x.min(0)))
    assert out["idx"] == list(range(8))
    assert out["size"] == [8.0] * 8
    np.testing.assert_allclose(out["ag0"], np.broadcast_to(x, (8, 8, 6)))
    np.testing.assert_allclose(out["ag1"], np.broadcast_to(x.T[None], (8, 6, 8)))
    np.testing.assert_allclose(out["agt"], np.broadcast_to(x.reshape(-1), (8, 48)))
    y = np.arange(8 * 8 * 2, dtype=np.float32).reshape(8, 8, 2)
    np.testing.assert_allclose(out["rs"], y.sum(0))
    np.testing.assert_allclose(out["rst"], y.sum(0).reshape(8, 1, 2))
    want = np.empty_like(x)
    for i in range(8):
        want[(i + 3) % 8] = x[i]
    np.testing.assert_allclose(out["ppermute"], want)
    want = np.zeros_like(x)
    want[0], want[1] = x[1], x[0]
    np.testing.assert_allclose(out["partial"], want)
    np.testing.assert_allclose(out["pshuffle"], x[::-1])
    z = np.arange(8 * 8 * 16, dtype=np.float32).reshape(8, 8, 16)
    for s in (0, 1):
        for c in (0, 1):
            # member i gets chunk i (along s) of every member j, concatenated along c
            want = [np.concatenate([np.split(z[j], 8, axis=s)[i] for j in range(8)], axis=c)
                    for i in range(8)]
            np.testing.assert_allclose(out["a2a"][f"{s}{c}"], want, err_msg=f"{s}{c}")
    want = [np.stack([z[j][i] for j in range(8)], axis=1) for i in range(8)]
    np.testing.assert_allclose(out["a2a_untiled"], want)


def test_collectives_under_vmap_agree_with_pmap():
    out = run_json("""
    x = np.random.RandomState(0).randn(8, 16).astype(np.float32)
    fs = {
        'psum': lambda v: lax.psum(v, 'i'),
        'ag': lambda v: lax.all_gather(v, 'i', tiled=True),
        'rs': lambda v: lax.psum_scatter(v, 'i', tiled=True),
        'pp': lambda v: lax.ppermute(v, 'i', [(i, (i + 1) % 8) for i in range(8)]),
        'a2a': lambda v: lax.all_to_all(v, 'i', 0, 0, tiled=True),
        'idx': lambda v: v * lax.axis_index('i'),
    }
    r = {k: float(np.abs(np.asarray(jax.pmap(f, axis_name='i')(x)) -
                         np.asarray(jax.vmap(f, axis_name='i')(x))).max())
         for k, f in fs.items()}
    print(json.dumps(r))
    """)
    assert all(v < 1e-5 for v in out.values()), out


def test_pmap_arguments_and_outputs():
    out = run("""
    from functools import partial
    x = jnp.arange(16.).reshape(8, 2)
    print(jax.pmap(lambda a, b: a * b, in_axes=(0, None))(x, 3.0)[:, 0])
    o = jax.pmap(lambda a: (a, a.sum()), out_axes=(1, None))(x)
    print(o[0].shape, o[1])
    print(jax.pmap(lambda a: a * 2, in_axes=1, out_axes=1)(x.T).shape)
    g = jax.pmap(lambda a, n: a * n, static_broadcasted_argnums=1)
    print(g(x, 2)[1], g(x, 3)[1])
    print(jax.pmap(lambda a, b=None: a + b)(x, b=x)[2])
    print(jax.tree_util.tree_map(jnp.shape, jax.pmap(lambda d: {'s': d['a'] + d['b'][0]})(
        {'a': x, 'b': (x,)})))
    print(jax.pmap(lambda: lax.axis_index('i'), axis_name='i', axis_size=4)())
    devs = jax.devices()[4:]
    r = jax.pmap(lambda a: a + 1, devices=devs)(x[:4])
    print(sorted(d.id for d in r.devices()))

    @partial(jax.pmap, axis_name='j')
    def norm(v):
        return v / lax.psum(v, 'j')
    print(np.asarray(norm(jnp.ones(8))))
    o = jax.pmap(lambda a: a * 2)(x)
    print(o.sharding)
    o2 = jax.pmap(lambda a: a + 1)(o)
    bufs1 = [s.data for s in o.addressable_shards]
    print(all(np.shares_memory(np.asarray(a), np.asarray(b)) for a, b in zip(
        [s.data for s in o.addressable_shards], bufs1)))
    print(np.asarray(o2)[3], o2.addressable_shards[3].device, o2.addressable_shards[3].index)
    """)
    lines = out.splitlines()
    assert lines[0] == "[ 0.  6. 12. 18. 24. 30. 36. 42.]"
    assert lines[1] == "(2, 8) 1.0"     # out_axes=None: device 0's value (as JAX)
    assert lines[2] == "(2, 8)"
    assert lines[3] == "[4. 6.] [6. 9.]"
    assert lines[4] == "[ 8. 10.]"
    assert lines[5] == "{'s': (8, 2)}"
    assert lines[6] == "[0 1 2 3]"
    assert lines[7] == "[4, 5, 6, 7]"
    assert lines[8] == "[0.125 0.125 0.125 0.125 0.125 0.125 0.125 0.125]"
    assert lines[9] == ("NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 8, axis_types="
                        "(Auto,)), spec=P('_internal_pmap_axis_name',), memory_kind=device)")
    assert lines[10] == "True"
    assert lines[11] == "[13. 15.] cpu:3 (slice(3, 4, None), slice(None, None, None))"


def test_pmap_output_feeds_pmap_without_copies():
    # on the device threads: each device's block is the shard it already holds
    out = run("""
    jax.config.update("jaxlite_spmd_mode", "threads")
    x = jnp.arange(16.).reshape(8, 2)
    o = jax.pmap(lambda a: a * 2)(x)
    from jaxlite._src.prims import shard_map as sm
    seen = []
    orig = sm._blocks
    def spy(a, s, shape):
        b = orig(a, s, shape)
        seen.append(all(np.shares_memory(u, v) for u, v in zip(b, a._bufs)))
        return b
    sm._blocks = spy
    jax.pmap(lambda a: a + 1)(o)
    print(seen)
    """)
    assert out.strip() == "[True]"


def test_batched_pmap_output_feeds_pmap_without_copies():
    # batched on the caller's thread: the shards are views of one value, read back as is
    out = run("""
    jax.config.update("jaxlite_spmd_mode", "batched")
    x = jnp.arange(16.).reshape(8, 2)
    o = jax.pmap(lambda a: a * 2)(x)
    print(all(np.shares_memory(b, o._value) for b in o._bufs))
    ident = jax.pmap(lambda a: a)(o)
    print(np.shares_memory(ident._value, o._value), ident.sharding == o.sharding)
    """)
    assert out.split() == ["True", "True", "True"]


def test_pmap_traces_once_per_signature():
    out = run("""
    n = []
    def f(a):
        n.append(1)
        return a + 1
    p = jax.pmap(f)
    for _ in range(3):
        p(jnp.ones((8, 2)))
    p(jnp.ones((8, 3)))
    p(jnp.ones((4, 3)))
    print(len(n))
    """)
    assert out.strip() == "3"


def test_pmap_errors():
    out = run("""
    def show(f):
        try:
            f()
        except Exception as e:
            print(type(e).__name__ + ': ' + str(e).splitlines()[0])
    show(lambda: jax.pmap(lambda a: a)(jnp.ones((9, 2))))
    show(lambda: jax.pmap(lambda a, b: a + b)(jnp.ones((8, 2)), jnp.ones((4, 2))))
    show(lambda: jax.pmap(jax.pmap(lambda a: a))(jnp.ones((2, 4))))
    show(lambda: jax.pmap(lambda a: lax.psum(a, 'j'), axis_name='i')(jnp.ones(8)))
    show(lambda: jax.pmap(lambda a: a)())
    """)
    lines = out.splitlines()
    assert lines[0] == ("ValueError: compiling computation that requires 9 logical devices, but "
                        "only 8 XLA devices are available (num_replicas=9, num_partitions=1)")
    assert lines[1].startswith("ValueError: pmap got inconsistent sizes for array axes")
    assert lines[2].startswith("ValueError: Nested per-device maps are not supported")
    assert lines[3].startswith("NameError: unbound axis name: j.")
    assert lines[4].startswith("ValueError: pmap requires at least one argument")


def test_collectives_never_hang():
    out = run("""
    import time
    x = jnp.arange(8.)
    def show(f):
        t = time.time()
        try:
            f()
        except Exception as e:
            print(type(e).__name__, '|', str(e).replace(chr(10), ' '), '|',
                  round(time.time() - t, 1))
    # a collective inside a branch only some devices take
    show(lambda: jax.pmap(lambda v: lax.cond(lax.axis_index('i') < 4,
                                             lambda a: lax.psum(a, 'i'), lambda a: a, v),
                          axis_name='i')(x))
    # devices reaching different collectives at the same point
    show(lambda: jax.pmap(lambda v: lax.cond(lax.axis_index('i') < 4,
                                             lambda a: lax.psum(a, 'i'),
                                             lambda a: lax.pmax(a, 'i'), v),
                          axis_name='i')(x))
    """, env={"JAXLITE_COLLECTIVE_TIMEOUT": "2"})
    lines = out.splitlines()
    assert lines[0].startswith("CollectiveError | psum over axes ('i',) at <string>:")
    assert "finished the program without reaching it" in lines[0]
    assert float(lines[0].rsplit("|", 1)[1]) < 10
    assert lines[1].startswith("CollectiveError | Devices reached different collectives")
    assert "psum over axes ('i',)" in lines[1] and "pmax over axes ('i',)" in lines[1]


def test_device_exception_surfaces_and_releases_others():
    out = run("""
    import time
    from jaxlite._src.runtime import collectives as rc
    devs = jax.devices()
    def prog(i):
        if i == 5:
            raise ZeroDivisionError('device 5 failed')
        return rc.collective('psum', ('i',), 'test', i, lambda m: [sum(v for _, v in m)] * len(m))
    t = time.time()
    try:
        rc.run_spmd(devs, (8,), ('i',), prog, [(i,) for i in range(8)])
    except Exception as e:
        print(type(e).__name__, e, round(time.time() - t, 1))
    # and the timeout when a device is slow to arrive
    def prog2(i):
        if i == 2:
            time.sleep(3)
        return rc.collective('psum', ('i',), 'test', i, lambda m: [0] * len(m))
    t = time.time()
    try:
        rc.run_spmd(devs, (8,), ('i',), prog2, [(i,) for i in range(8)])
    except Exception as e:
        print(type(e).__name__, str(e)[:200], round(time.time() - t, 1))
    """, env={"JAXLITE_COLLECTIVE_TIMEOUT": "1"})
    lines = out.splitlines()
    assert lines[0].startswith("ZeroDivisionError device 5 failed")
    assert float(lines[0].split()[-1]) < 5
    assert lines[1].startswith("CollectiveError psum over axes ('i',) at test: 7 of 8 devices "
                               "arrived")
    assert "device 2 did not arrive within 1 s" in lines[1]


def test_grad_through_pmap_and_collectives_matches_finite_differences():
    out = run_json("""
    x = np.random.RandomState(1).randn(8, 3).astype(np.float32)
    def f(w):
        y = jax.pmap(lambda a, w: jnp.sin(a * w) * lax.psum(a * w, 'i'), axis_name='i',
                     in_axes=(0, None))(x, w)
        return jnp.sum(y ** 2)
    w = jnp.array([0.3, -0.2, 0.5])
    g = np.asarray(jax.grad(f)(w), np.float64)
    eps = 1e-3
    fd = [(float(f(w.at[k].add(eps))) - float(f(w.at[k].add(-eps)))) / (2 * eps)
          for k in range(3)]
    def loss(w, xb):
        return lax.pmean(jnp.sum(jnp.tanh(xb @ w) ** 2), 'i')
    gi = jax.pmap(jax.grad(loss), axis_name='i', in_axes=(None, 0))(w, x)
    print(json.dumps({'g': g.tolist(), 'fd': fd, 'gi': np.asarray(gi).tolist(),
                      'x': x.tolist(), 'w': np.asarray(w).tolist()}))
    """)
    np.testing.assert_allclose(out["g"], out["fd"], rtol=2e-2, atol=2e-2)
    # As in JAX, psum transposes to psum: the cotangent 1/8 of each device's pmean output is
    # summed back to 1, so device i gets the gradient of its own term tanh(x_i.w)**2.
    x, w = np.asarray(out["x"], np.float64), np.asarray(out["w"], np.float64)
    t = np.tanh(x @ w)
    local = (2 * t * (1 - t ** 2))[:, None] * x
    np.testing.assert_allclose(out["gi"], local, rtol=1e-4, atol=1e-6)


def test_transformations_compose_with_pmap():
    out = run_json("""
    x = np.random.RandomState(2).randn(8, 4).astype(np.float32)
    f = lambda a: jnp.sin(a) * 2
    r = {
        'jit_pmap': np.asarray(jax.jit(jax.pmap(f))(x)).tolist(),
        'pmap_jit': np.asarray(jax.pmap(jax.jit(f))(x)).tolist(),
        'pmap_vmap': np.asarray(jax.pmap(jax.vmap(f))(x)).tolist(),
        'vmap_pmap': np.asarray(jax.vmap(jax.pmap(f))(np.stack([x, x + 1]))).tolist(),
        'vmap_pmap_axis1': np.asarray(jax.vmap(jax.pmap(f), in_axes=1, out_axes=1)(
            np.stack([x, x + 1], 1))).tolist(),
        'ref': np.asarray(np.sin(x) * 2).tolist(),
    }
    print(json.dumps(r))
    """)
    ref = np.asarray(out["ref"])
    for k in ("jit_pmap", "pmap_jit", "pmap_vmap"):
        np.testing.assert_allclose(out[k], ref, rtol=1e-6, err_msg=k)
    np.testing.assert_allclose(out["vmap_pmap"][0], ref, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["vmap_pmap_axis1"])[:, 0], ref, rtol=1e-6)


def test_shard_map_seed_003_matmul_and_psum_over_one_axis():
    out = run("""
    from functools import partial
    from jaxlite.sharding import Mesh, PartitionSpec as P
    from jaxlite.experimental import mesh_utils
    from jaxlite.experimental.shard_map import shard_map
    devices = mesh_utils.create_device_mesh((4, 2))
    mesh = Mesh(devices, axis_names=('x', 'y'))
    a = jnp.arange(8 * 16.).reshape(8, 16)
    b = jnp.arange(16 * 4.).reshape(16, 4)

    @partial(shard_map, mesh=mesh, in_specs=(P('x', 'y'), P('y', None)),
             out_specs=P('x', None))
    def matmul_basic(a_block, b_block):
        c_partialsum = jnp.dot(a_block, b_block)
        c_block = lax.psum(c_partialsum, 'y')
        return c_block

    c = matmul_basic(a, b)
    print(np.allclose(c, jnp.dot(a, b), atol=1e-2, rtol=1e-2))
    print(c.sharding)
    print(jax.jit(matmul_basic)(a, b).shape)
    # (all_gather's result is typed as varying over its axes: JAX 0.10.2 rejects out_specs=P()
    # for it unless check_vma=False)
    f = jax.shard_map(lambda v: lax.all_gather(v, ('x', 'y'), tiled=True), mesh=mesh,
                      in_specs=P(('x', 'y')), out_specs=P(), check_vma=False)
    print(np.asarray(f(jnp.arange(16.))))
    """)
    lines = out.splitlines()
    assert lines[0] == "True"
    assert lines[1] == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), "
                        "spec=P('x', None), memory_kind=device)")
    assert lines[2] == "(8, 4)"
    assert lines[3] == "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15.]"


def _jax_text(code):
    jax = pytest.importorskip("jax")
    del jax
    e = dict(os.environ)
    e["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    p = subprocess.run([sys.executable, "-c", "import jax, jax.numpy as jnp, numpy as np\n"
                        "from jax import lax\n" + textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    return p.stdout


JAXPR_CASES = """
x = jnp.ones((8, 3))
print(jax.make_jaxpr(jax.pmap(lambda a: lax.psum(a, 'i'), axis_name='i'))(x))
print(jax.make_jaxpr(jax.pmap(lambda a, b: a * b, in_axes=(0, None)))(x, 2.0))
print(jax.make_jaxpr(jax.pmap(lambda a: a * 2, in_axes=1, out_axes=1))(x.T))
print(jax.make_jaxpr(jax.vmap(jax.pmap(lambda a: a * 2)))(jnp.ones((3, 8))))
print(jax.make_jaxpr(jax.pmap(lambda a: lax.all_gather(a, 'i'), axis_name='i'))(x))
print(jax.make_jaxpr(jax.pmap(lambda a: lax.axis_index('i') + a, axis_name='i'))(jnp.ones(8)))
"""


def test_pmap_jaxpr_text_matches_jax():
    theirs = _jax_text(JAXPR_CASES)
    ours = run(JAXPR_CASES)
    assert ours == theirs
