"""The multi-device runtime of jaxlite itself (no JAX needed): device executor threads and
their thread-safety, values of computations on sharded arrays against NumPy, buffer sharing
of replicas, the device count from the environment, and jaxlite's own behaviour where it
departs from JAX on purpose. Everything multi-device runs in subprocesses with the device
count set in their environment (tests/multidevice.py); each groups many checks.
"""
import os
import textwrap

import pytest

from multidevice import run_snippet

PRELUDE = """
import threading, time, sys, pickle, warnings
import numpy as np
import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.sharding import (Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding,
                              PositionalSharding, AxisType)
from jaxlite._src.runtime import devices as _devices, dispatch as _dispatch
devs = jax.devices()
assert len(devs) == 8, devs
"""


def run(code, n=8, env=None):
    return run_snippet(PRELUDE + textwrap.dedent(code), n=n, env=env)


def test_device_threads_run_each_shard():
    out = run("""
    # one long-lived thread per device, the same one on every call
    f = lambda: (_devices.current_device(), threading.current_thread().name,
                 threading.get_ident())
    first = _devices.run_on_devices(devs, f, [()] * 8)
    again = _devices.run_on_devices(devs, f, [()] * 8)
    assert [r[0] for r in first] == devs, first
    assert [r[1] for r in first] == [f"jaxlite-device-{i}" for i in range(8)]
    assert [r[2] for r in first] == [r[2] for r in again]
    assert _devices.current_device() is None
    before = threading.active_count()
    for _ in range(50):
        _devices.run_on_devices(devs, lambda: None, [()] * 8)
    assert threading.active_count() == before

    # an eager op on a 4x2-sharded array runs each shard on its device's thread
    seen = []
    real = _dispatch.run_on_devices
    def spy(ds, fn, args):
        def wrapped(*a):
            seen.append((_devices.current_device(), threading.current_thread().name))
            return fn(*a)
        return real(ds, wrapped, args)
    _dispatch.run_on_devices = spy
    mesh = jax.make_mesh((4, 2), ('x', 'y'))
    v = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    x = jax.device_put(v, NamedSharding(mesh, P('x', 'y')))
    y = jnp.sin(x)
    _dispatch.run_on_devices = real
    assert sorted(d.id for d, _ in seen) == list(range(8)), seen
    assert all(name == f"jaxlite-device-{d.id}" for d, name in seen), seen
    assert y.sharding == NamedSharding(mesh, P('x', 'y'))
    for s in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(s.data), np.asarray(jnp.sin(v))[s.index])

    # a task on the calling device's own thread runs inline (no self-deadlock)
    def nested():
        return _devices.run_on_devices([_devices.current_device(), devs[0]],
                                       lambda: _devices.current_device().id, [(), ()])
    r = _devices.run_on_devices(devs[2:4], nested, [(), ()])
    assert r == [[2, 0], [3, 0]], r
    print("ok")
    """)
    assert out.strip() == "ok"


def test_device_errors_surface_with_traceback():
    out = run("""
    import traceback
    def task(i):
        if i == 5:
            raise KeyError("device five")
        return i
    try:
        _devices.run_on_devices(devs, task, [(i,) for i in range(8)])
    except KeyError as e:
        tb = "".join(traceback.format_tb(e.__traceback__))
        assert "in task" in tb, tb
    else:
        raise AssertionError("no error")
    # a secondary error (another device released because one failed) is not the one raised
    class Released(RuntimeError):
        _jaxlite_secondary = True
    def task2(i):
        if i == 1:
            raise Released("released")
        if i == 6:
            time.sleep(0.05)
            raise ValueError("the cause")
        return i
    try:
        _devices.run_on_devices(devs, task2, [(i,) for i in range(8)])
    except ValueError as e:
        assert str(e) == "the cause"
    # the executors survive
    assert _devices.run_on_devices(devs, task, [(i,) for i in range(4)] + [(0,)] * 4) == \\
        [0, 1, 2, 3, 0, 0, 0, 0]
    print("ok")
    """)
    assert out.strip() == "ok"


def test_thread_safety_many_small_ops_from_many_threads():
    out = run("""
    mesh = jax.make_mesh((4, 2), ('x', 'y'))
    rng = np.random.default_rng(1)
    v = rng.standard_normal((16, 8)).astype(np.float32)
    xs = {
        'xy': jax.device_put(v, NamedSharding(mesh, P('x', 'y'))),
        'x': jax.device_put(v, NamedSharding(mesh, P('x'))),
        'rep': jax.device_put(v, NamedSharding(mesh, P())),
        'pos': jax.device_put(v, PositionalSharding(devs).reshape(4, 2).replicate(1)),
    }
    singles = [jax.device_put(v, d) for d in devs]
    f = jax.jit(lambda a, b: jnp.tanh(a) * b + 1.0)
    errors, counts = [], [0] * 8
    def worker(t):
        try:
            for it in range(60):
                x = xs[list(xs)[(t + it) % 4]]
                r = jnp.sin(x) + x * 2.0
                np.testing.assert_allclose(np.asarray(r), np.sin(v) + v * 2.0, rtol=1e-6)
                s = jnp.sum(x, axis=0)
                np.testing.assert_allclose(np.asarray(s), v.sum(0), rtol=1e-5, atol=1e-5)
                j = f(x, x)
                np.testing.assert_allclose(np.asarray(j), np.tanh(v) * v + 1, rtol=1e-6)
                d = singles[(t + it) % 8]
                q = (d * 3.0 - 1.0)
                assert q.devices() == {devs[(t + it) % 8]}, q.devices()
                np.testing.assert_allclose(np.asarray(q), v * 3 - 1, rtol=1e-6)
                out = _devices.run_on_devices(devs, lambda k: (_devices.current_device().id, k),
                                              [(t * 1000 + it,)] * 8)
                assert out == [(i, t * 1000 + it) for i in range(8)], out
                counts[t] += 1
        except BaseException as e:
            errors.append((t, repr(e)))
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    t0 = time.time()
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads), "deadlock: threads still running"
    assert errors == [], errors
    assert counts == [60] * 8, counts
    print("ok")
    """)
    assert out.strip() == "ok"


def test_values_against_numpy():
    out = run("""
    rng = np.random.default_rng(2)
    v = rng.standard_normal((8, 8)).astype(np.float32)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    # (Auto axes: over Explicit ones JAX rejects some of these ops with ShardingTypeError,
    # tests/test_explicit_sharding.py covers that)
    mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    amesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    pos = PositionalSharding(devs).reshape(4, 2)
    shardings = [NamedSharding(mesh, P('x', 'y')), NamedSharding(mesh, P('x')),
                 NamedSharding(mesh, P(None, 'y')), NamedSharding(mesh, P(('x', 'y'))),
                 NamedSharding(amesh, P('y', 'x')), NamedSharding(mesh, P()),
                 pos, pos.replicate(0), pos.replicate(1), SingleDeviceSharding(devs[5])]
    ops = {
        'sin': (lambda a: jnp.sin(a), lambda a: np.sin(a)),
        'affine': (lambda a: a * 2.5 - 1, lambda a: a * 2.5 - 1),
        'square': (lambda a: a * a, lambda a: a * a),
        'where': (lambda a: jnp.where(a > 0, a, -a), lambda a: np.abs(a)),
        'sum0': (lambda a: a.sum(0), lambda a: a.sum(0)),
        'sum1': (lambda a: a.sum(1), lambda a: a.sum(1)),
        'max': (lambda a: a.max(), lambda a: a.max()),
        'T': (lambda a: a.T, lambda a: a.T),
        'matmul': (lambda a: a @ w, lambda a: a @ w),
        'gram': (lambda a: a.T @ a, lambda a: a.T @ a),
        'reshape': (lambda a: a.reshape(4, 16), lambda a: a.reshape(4, 16)),
        'slice': (lambda a: a[2:6, ::2], lambda a: a[2:6, ::2]),
        'bcast': (lambda a: a + w[:, :1], lambda a: a + w[:, :1]),
        'cumsum': (lambda a: jnp.cumsum(a, 1), lambda a: np.cumsum(a, 1)),
        'astype': (lambda a: a.astype(jnp.int32), lambda a: a.astype(np.int32)),
        'compare': (lambda a: a > 0.1, lambda a: a > 0.1),
        'select': (lambda a: jnp.where(a > 0, a, w[:, :1]), lambda a: np.where(a > 0, a, w[:, :1])),
        'clip': (lambda a: jnp.clip(a, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
        'pow': (lambda a: a ** 2 + 2 ** a, lambda a: a ** 2 + 2 ** a),
        'keepdims': (lambda a: a - a.mean(1, keepdims=True), lambda a: a - a.mean(1, keepdims=True)),
        'argmax': (lambda a: jnp.argmax(a, 0), lambda a: np.argmax(a, 0)),
        'sort': (lambda a: jnp.sort(a, 1), lambda a: np.sort(a, 1)),
        'concat': (lambda a: jnp.concatenate([a, a * 2], 1), lambda a: np.concatenate([a, a * 2], 1)),
        'stack': (lambda a: jnp.stack([a, a]), lambda a: np.stack([a, a])),
        'gather': (lambda a: a[jnp.array([3, 1, 7])], lambda a: a[[3, 1, 7]]),
        'outer': (lambda a: a[:, :, None] * a[:, None, :], lambda a: a[:, :, None] * a[:, None, :]),
        'einsum': (lambda a: jnp.einsum('ij,jk->ik', a, a.T), lambda a: a @ a.T),
        'logsumexp': (lambda a: jax.nn.logsumexp(a, 1), lambda a: np.log(np.exp(a).sum(1))),
        'int': (lambda a: (a * 10).astype(jnp.int32) // 3 % 5,
                lambda a: (a * 10).astype(np.int32) // 3 % 5),
    }
    n = 0
    for s in shardings:
        x = jax.device_put(v, s)
        assert x.sharding == s
        np.testing.assert_array_equal(np.asarray(x), v)
        for name, (jf, nf) in ops.items():
            for mode, fn in (('eager', jf), ('jit', jax.jit(jf))):
                r = fn(x)
                want = nf(v)
                np.testing.assert_allclose(np.asarray(r), want, rtol=2e-5, atol=2e-5,
                                           err_msg=f"{name} {mode} {s}")
                assert r.devices() <= set(s.device_set), (name, s, r.devices())
                # every shard holds exactly the slice of the result its index names
                for sh in r.addressable_shards:
                    np.testing.assert_array_equal(np.asarray(sh.data), np.asarray(r)[sh.index])
                n += 1
    # two operands with different shardings over the same devices (and a split row vector)
    u = rng.standard_normal((8, 8)).astype(np.float32)
    row = rng.standard_normal(8).astype(np.float32)
    for s1 in shardings[:9]:
        a = jax.device_put(v, s1)
        for s2 in shardings[:9]:
            b = jax.device_put(u, s2)
            if isinstance(s2, NamedSharding) and len(s2.spec) > 1:
                rs = NamedSharding(s2.mesh, P(s2.spec[1]))   # the row split as b's columns
            else:
                rs = NamedSharding(mesh, P('y'))
            r_row = jax.device_put(row, rs)
            for name, r, want in (('add', a + b, v + u), ('mul', b * a, u * v),
                                  ('matmul', a @ b, v @ u), ('row', a - r_row, v - row)):
                np.testing.assert_allclose(np.asarray(r), want, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} {s1} {s2}")
                for sh in r.addressable_shards:
                    np.testing.assert_array_equal(np.asarray(sh.data), np.asarray(r)[sh.index])
    print(n, len(shardings) * len(ops) * 2)
    """)
    done, want = out.split()
    assert done == want and int(done) >= 500, out


def test_addressable_device_assignment_and_single_device_memory_kind():
    # JAX's private Sharding._addressable_device_assignment (orbax reads it): this process's
    # devices in the sharding's order, a tuple; make_single_device_sharding takes memory_kind
    out = run("""
    mesh = jax.make_mesh((4, 2), ('x', 'y'))
    s = NamedSharding(mesh, P('y', 'x'))
    print(s._addressable_device_assignment == s._device_assignment == tuple(devs))
    print(SingleDeviceSharding(devs[3])._addressable_device_assignment)
    print(jax.sharding.make_single_device_sharding(devs[1], memory_kind='pinned_host'))
    print(jax.sharding.make_single_device_sharding(devs[1]) == SingleDeviceSharding(devs[1]))
    """)
    assert out.split("\n")[:4] == [
        "True", "(CpuDevice(id=3),)",
        "SingleDeviceSharding(device=CpuDevice(id=1), memory_kind=pinned_host)", "True"]


def test_replicas_share_one_buffer():
    out = run("""
    mesh = jax.make_mesh((4, 2), ('x', 'y'))
    v = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    r = jax.device_put(v, NamedSharding(mesh, P()))
    datas = [np.asarray(s.data) for s in r.addressable_shards]
    assert len(datas) == 8
    assert all(np.shares_memory(datas[0], d) for d in datas[1:])
    assert np.shares_memory(np.asarray(r), datas[0])     # assembling a replica: no copy
    assert not np.shares_memory(np.asarray(r), v)        # device_put copied the NumPy input
    v[0, 0] = -1.0                                        # ... once: later writes don't show
    assert float(r[0, 0]) == 0.0
    assert not np.asarray(r).flags.writeable and not datas[3].flags.writeable
    # a jaxlite array replicated over 8 devices is not copied at all
    a = jnp.arange(1024.0)
    ra = jax.device_put(a, NamedSharding(mesh, P()))
    assert all(np.shares_memory(np.asarray(s.data), np.asarray(a)) for s in ra.addressable_shards)
    # P('x') over (4, 2): each pair of replicas shares the buffer of its block
    h = jax.device_put(v, NamedSharding(mesh, P('x')))
    by_block = {}
    for s in h.addressable_shards:
        by_block.setdefault(s.index[0].start, []).append(np.asarray(s.data))
    assert len(by_block) == 4
    assert all(len(b) == 2 and np.shares_memory(b[0], b[1]) for b in by_block.values())
    # every device holds a C-contiguous block, as a real device would (a strided view would
    # slow every kernel on it); blocks of a jaxlite array that are contiguous stay views
    g = jax.device_put(v, NamedSharding(mesh, P('x', 'y')))
    assert all(np.asarray(s.data).flags.c_contiguous for s in g.addressable_shards)
    assert all(np.asarray(s.data).flags.c_contiguous for s in jnp.sin(g).addressable_shards)
    ja = jnp.asarray(v)
    gj = jax.device_put(ja, NamedSharding(mesh, P(('x', 'y'))))
    assert all(np.shares_memory(np.asarray(s.data), np.asarray(ja)) for s in gj.addressable_shards)
    # re-placing with an equivalent sharding reuses the buffers
    same = jax.device_put(h, NamedSharding(mesh, P('x', None)))
    assert same.sharding.spec == P('x', None)
    assert all(np.shares_memory(np.asarray(p.data), np.asarray(q.data))
               for p, q in zip(h.addressable_shards, same.addressable_shards))
    # replicated positional / pmap-style layouts share too
    rp = jax.device_put(a, PositionalSharding(devs).replicate())
    assert all(np.shares_memory(np.asarray(s.data), np.asarray(a)) for s in rp.addressable_shards)
    # one copy of a NumPy input, even replicated 8 times (tracemalloc sees NumPy's buffers)
    import tracemalloc
    big = np.ones(2 ** 21, np.float32)                    # 8 MiB
    tracemalloc.start()
    rb = jax.device_put(big, NamedSharding(mesh, P()))
    sb = jax.device_put(big, NamedSharding(mesh, P(('x', 'y'))))
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2.2 * big.nbytes, (peak, big.nbytes)   # two puts, one copy each
    # the 0.4-era device_put_replicated and make_array_from_callback copy the caller's data
    src = np.arange(4.0)
    dr = jax.device_put_replicated(src, devs)
    cb = jax.make_array_from_callback((4,), NamedSharding(mesh, P('x')), lambda i: src[i])
    src[:] = -1
    assert np.asarray(dr).tolist() == [[0.0, 1.0, 2.0, 3.0]] * 8
    assert np.asarray(cb).tolist() == [0.0, 1.0, 2.0, 3.0]
    # delete releases every shard
    h.delete()
    assert h.is_deleted()
    for fn in (lambda: h.addressable_shards, lambda: np.asarray(h), lambda: h + 1):
        try:
            fn()
        except RuntimeError as e:
            assert "Array has been deleted with shape=float32[64@x,64]" in str(e), e
        else:
            raise AssertionError("deleted array still usable")
    assert r.block_until_ready() is r and r.copy_to_host_async() is None
    assert jax.block_until_ready({'r': r})['r'] is r
    print("ok")
    """)
    assert out.strip() == "ok"


def test_device_count_comes_from_the_environment():
    count = "import jaxlite as jax; print(jax.device_count(), jax.local_device_count())"
    assert run_snippet(count, n=None).split() == ["1", "1"]
    assert run_snippet(count, n=4).split() == ["4", "4"]
    assert run_snippet(count, n=None, env={"JAXLITE_NUM_CPU_DEVICES": "3"}).split() == \
        ["3", "3"]
    # read at first backend use, as JAX: setting XLA_FLAGS after import still counts (the
    # seed 002 cell does this) ...
    late = ("import os, jaxlite as jax, jaxlite.numpy as jnp\n"
            "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n"
            "x = jnp.ones(3)\nprint(jax.device_count())")
    assert run_snippet(late, n=None).strip() == "8"
    # ... but not after it
    too_late = ("import os, jaxlite as jax, jaxlite.numpy as jnp\nx = jnp.ones(3) + 1\n"
                "print(jax.device_count())\n"
                "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n"
                "print(jax.device_count())")
    assert run_snippet(too_late, n=None).split() == ["1", "1"]
    bad = ("import jaxlite as jax\ntry:\n    jax.devices()\nexcept ValueError as e:\n"
           "    print(e)")
    assert "JAXLITE_NUM_CPU_DEVICES must be a positive integer" in \
        run_snippet(bad, n=None, env={"JAXLITE_NUM_CPU_DEVICES": "many"})


def test_this_process_keeps_one_device():
    """Multi-device tests set the count in their subprocesses only."""
    if "XLA_FLAGS" in os.environ or "JAXLITE_NUM_CPU_DEVICES" in os.environ:
        pytest.skip("the device count is set for the whole test run")
    import jaxlite as jax
    assert jax.device_count() == 1 and jax.devices()[0].id == 0


def test_jaxlite_departures_and_extras():
    out = run("""
    mesh = jax.make_mesh((4, 2), ('x', 'y'))
    def raises(exc, fn, text=""):
        try:
            fn()
        except exc as e:
            assert text in str(e), (text, str(e))
        else:
            raise AssertionError(f"no {exc.__name__}")
    # JAX 0.10.2 raises a bare AssertionError for a spec longer than the array's rank
    raises(ValueError, lambda: jax.device_put(np.ones(8), NamedSharding(mesh, P('x', 'y'))),
           "is only valid for values of rank at least 2, but was applied to a value of rank 1")
    raises(ValueError, lambda: jax.device_put(np.ones(()), NamedSharding(mesh, P('x'))),
           "For scalars the PartitionSpec should be P()")
    # JAX accepts repeated mesh axis names (and then prints a broken mesh)
    raises(ValueError, lambda: Mesh(np.array(devs).reshape(2, 4), ('a', 'a')), "unique")
    # the deprecated `with mesh:` does not give bare PartitionSpecs a mesh (as JAX 0.10)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with mesh:
            raises(ValueError, lambda: jax.device_put(np.ones(8), P('x')),
                   "Please set a mesh via `jax.set_mesh`")
            assert jax.sharding.get_abstract_mesh().empty
    assert any(issubclass(i.category, DeprecationWarning) for i in w)
    # seed 003's spelling, jax.sharding.use_mesh
    with jax.sharding.use_mesh(mesh):
        x = jax.device_put(np.ones((8, 2)), P('x'))
        assert x.sharding == NamedSharding(mesh, P('x'))
        assert jax.sharding.get_abstract_mesh() == mesh.abstract_mesh
    assert jax.sharding.get_abstract_mesh().empty
    # `with jax.set_mesh` sets the mesh of this thread only
    other = {}
    with jax.set_mesh(mesh):
        t = threading.Thread(target=lambda: other.setdefault('m', jax.sharding.get_abstract_mesh()))
        t.start(); t.join()
        assert jax.sharding.get_abstract_mesh() == mesh.abstract_mesh
    assert other['m'].empty, other
    # set_mesh without `with` sets the mesh for the process
    jax.set_mesh(mesh)
    assert jax.sharding.get_mesh() is mesh
    assert jax.device_put(np.ones(8), P('y')).sharding.spec == P('y')
    jax.set_mesh(None)
    assert jax.sharding.get_mesh().empty
    # NamedSharding.with_spec (jaxlite's name for update(spec=))
    s = NamedSharding(mesh, P('x'))
    assert s.with_spec(P('y')) == NamedSharding(mesh, P('y'))
    # pickling keeps meshes, specs, shardings and sharded arrays
    for obj in (mesh, P('x', None, ('x', 'y')), s, SingleDeviceSharding(devs[3]),
                PositionalSharding(devs).reshape(4, 2).replicate(0), devs[6],
                NamedSharding(mesh, P('y'), memory_kind='pinned_host')):
        assert pickle.loads(pickle.dumps(obj)) == obj, obj
    xs = jax.device_put(np.arange(16.).reshape(8, 2), s)
    back = pickle.loads(pickle.dumps(xs))
    assert back.sharding == s and np.array_equal(np.asarray(back), np.asarray(xs))
    # jax_default_device: a device, a platform name or None; anything else is refused
    jax.config.update('jax_default_device', 'cpu')
    assert jnp.ones(2).devices() == {devs[0]}
    jax.config.update('jax_default_device', devs[4])
    assert jnp.ones(2).devices() == {devs[4]}
    with jax.default_device(devs[6]):
        assert jnp.ones(2).devices() == {devs[6]}
    jax.config.update('jax_default_device', None)
    assert jnp.ones(2).devices() == {devs[0]}
    raises(ValueError, lambda: jax.config.update('jax_default_device', 3), "must be a Device")
    jax.config.update('jax_default_device', None)
    # the default device is per thread inside `with jax.default_device`
    seen = {}
    def other():
        seen['dev'] = jnp.ones(1).devices()
    with jax.default_device(devs[2]):
        t = threading.Thread(target=other)
        t.start(); t.join()
        assert jnp.ones(1).devices() == {devs[2]}
    assert seen['dev'] == {devs[0]}, seen
    # a fully replicated PositionalSharding places arrays of any rank (seed 000 relies on it)
    rep = PositionalSharding(devs).reshape(8, 1).replicate()
    assert jax.device_put(np.ones(5), rep).is_fully_replicated
    # P is not a tuple, but indexes, iterates and concatenates like one
    p = P('x', None)
    assert not isinstance(p, tuple) and list(p) == ['x', None] and p[0] == 'x'
    assert p + ('y',) == P('x', None, 'y') and ('y',) + p == P('y', 'x', None)
    assert len(P()) == 0 and P(('x',)) == P('x') and P(()) == P(None)
    print("ok")
    """)
    assert out.strip() == "ok"


def test_set_mesh_places_results_on_the_mesh():
    # JAX 0.10.2: a computation none of whose operands is committed runs on the devices of
    # the concrete mesh of jax.set_mesh and gives NamedSharding(mesh, P()) results (eager
    # ops, jit calls, jnp creation, random keys); device_put without a device does not; a
    # committed operand on other devices raises; outside the mesh nothing changes.
    out = run("""
    mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    rep = NamedSharding(mesh, P())
    made_outside = jnp.ones(8)
    on_dev0 = jax.device_put(np.ones(8), devs[0])
    with jax.set_mesh(mesh):
        vals = {'ones': jnp.ones((4, 2)), 'array': jnp.array([1., 2.]),
                'asarray': jnp.asarray(np.ones(3)), 'scalar': jnp.float32(3),
                'arange': jnp.arange(4), 'add': made_outside + 1, 'neg': -made_outside,
                'jit': jax.jit(lambda a: a * 2)(made_outside),
                'jit_const': jax.jit(lambda: jnp.ones(3))(),
                'grad': jax.grad(lambda a: a ** 2)(3.),
                'scan': jax.lax.scan(lambda c, a: (c + a, a), 0., jnp.arange(3.))[0],
                'key': jax.random.key(0), 'normal': jax.random.normal(jax.random.key(0), (4,))}
        for name, v in vals.items():
            assert v.sharding == rep and repr(v.sharding.spec) == 'P()', (name, v.sharding)
            assert v.committed and v.devices() == set(devs), name
        assert np.array_equal(np.asarray(vals['add']), np.full(8, 2.))
        assert float(vals['grad']) == 6.0
        # an op on replicated operands is computed once: its replicas share one buffer
        r = jnp.sin(vals['ones']) @ vals['ones'].T
        assert len({id(b) for b in r._shard_buffers().values()}) == 1
        np.testing.assert_allclose(np.asarray(r), np.sin(np.ones((4, 2))) @ np.ones((2, 4)))
        # (a jitted function called again takes the same path: no fast path skips placement)
        f = jax.jit(lambda a: a + 1)
        for _ in range(3):
            assert f(made_outside).sharding == rep
        s = jax.device_put(np.ones((4, 2)), P('x'))
        assert (s * 2).sharding == NamedSharding(mesh, P('x'))
        assert jax.device_put(np.ones(3)).sharding == SingleDeviceSharding(devs[0])
        try:
            on_dev0 + 1
        except ValueError as e:
            assert str(e) == ("Received incompatible devices for jitted computation. Got "
                              "argument x of add with shape float32[8] and with device ids [0] "
                              "on platform CPU and jit's context mesh with device ids "
                              "[0, 1, 2, 3, 4, 5, 6, 7] on platform CPU"), str(e)
        else:
            raise AssertionError("no error")
    assert (made_outside + 1).sharding == SingleDeviceSharding(devs[0])
    assert not (made_outside + 1).committed
    assert jax.jit(lambda a: a * 2)(made_outside).sharding == SingleDeviceSharding(devs[0])
    with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
        assert jnp.ones(3).sharding == SingleDeviceSharding(devs[0])
    # set process-wide (no `with`): the same, and the device threads' own work is unplaced
    jax.set_mesh(mesh)
    s = jax.device_put(np.arange(16.), P('x'))
    assert (s * 2).sharding == NamedSharding(mesh, P('x'))
    assert np.array_equal(np.asarray(s * 2), np.arange(16.) * 2) and float(s.sum()) == 120.
    assert (made_outside + 1).sharding == NamedSharding(mesh, P())
    jax.set_mesh(None)
    assert (made_outside + 1).sharding == SingleDeviceSharding(devs[0])
    print("ok")
    """)
    assert out.strip() == "ok"
