"""One process of a multi-process test (tests/test_mpi.py runs it under ``mpiexec -n 2``).

``python tests/mpi_worker.py SCENARIO OUTDIR``: every process runs the scenario and writes
what it saw to ``OUTDIR/<process index>.json``; the test compares those with NumPy. Error
scenarios leave with ``os._exit`` once their result is written (an MPI job whose processes
failed a collective cannot finalize cleanly).
"""
import json
import os
import sys

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.experimental import multihost_utils as mh
from jaxlite.sharding import NamedSharding, PartitionSpec as P

L = 4   # rows per device


def global_data(ndev, dtype=np.float32):
    """The global input: device k holds rows [k*L, (k+1)*L)."""
    return (np.arange(ndev * L * 6).reshape(ndev * L, 6) % 7 - 3).astype(dtype) * 1.5


def tolist(x):
    return np.asarray(x).tolist()


def scenario_collectives():
    """Every collective under pmap; inputs: this process's rows of the global data."""
    n, me, lc = jax.device_count(), jax.process_index(), jax.local_device_count()
    g = global_data(n).reshape(n, L, 6)
    x = g[me * lc:(me + 1) * lc]
    xi = x.astype(np.int32)
    perm = [(i, (i + 1) % n) for i in range(n)]

    def f(v, vi):
        return {"psum": lax.psum(v, "i"), "pmean": lax.pmean(v, "i"),
                "pmax": lax.pmax(v, "i"), "pmin": lax.pmin(v, "i"),
                "psum_int": lax.psum(vi, "i"), "pmax_int": lax.pmax(vi, "i"),
                "psum_tuple": lax.psum((v, vi), "i"),
                "all_gather": lax.all_gather(v, "i"),
                "all_gather_tiled": lax.all_gather(v, "i", tiled=True),
                "psum_scatter": lax.psum_scatter(v, "i", scatter_dimension=0, tiled=True),
                "ppermute": lax.ppermute(v, "i", perm),
                "all_to_all": lax.all_to_all(v, "i", 0, 0, tiled=True),
                "axis_index": lax.axis_index("i"),
                "axis_size": lax.psum(1, "i")}
    out = jax.pmap(f, "i")(x, xi)
    res = {k: tolist(v) if not isinstance(v, tuple) else [tolist(a) for a in v]
           for k, v in out.items()}
    # ahead of time: the compiled stage runs the same collectives, its text is the
    # per-device program
    comp = jax.pmap(f, "i").lower(x, xi).compile()
    res["aot_psum"] = tolist(comp(x, xi)["psum"])
    res["aot_text_has_psum"] = "psum" in comp.as_text()
    # a reduction too big for one gathered message (MPI reduces it) and NaN in pmax
    big = np.repeat(x.reshape(lc, -1), 1000, axis=1)          # 96 KB per device
    res["psum_big"] = tolist(jax.pmap(lambda v: lax.psum(v, "i"), "i")(big)[:, ::997])
    # results of big reductions held by the caller are never reused as receive buffers
    huge = np.repeat(x.reshape(lc, -1), 4000, axis=1)          # 384 KB per device
    ps = jax.pmap(lambda v: lax.psum(v, "i"), "i")

    def results_kept(v, later):
        """psums of ``v * k`` held by the caller, still equal after ``later`` more."""
        held = [ps(v * k) for k in range(1, 4)]
        copies = [np.array(h) for h in held]
        for k in range(later):
            ps(v - k)
        return all(np.array_equal(np.asarray(h), c) for h, c in zip(held, copies)), held
    res["big_results_kept"], held = results_kept(huge, 6)
    res["big_result_values"] = tolist(held[2][:, ::3989])
    # nor are small ones (gathered into a prepared receive buffer the next call overwrites)
    res["small_results_kept"], _ = results_kept(x, 3)
    from jaxlite._src.runtime import mpi as _mpi
    res["persistent_requests"] = len(_mpi._persistent["reqs"])
    xn = x.copy()
    if me == 0:
        xn[0, 0, 0] = np.nan
    res["pmax_nan"] = tolist(jax.pmap(lambda v: lax.pmax(v, "i"), "i")(xn)[:, 0])
    # grad through a collective: d/dv sum(psum(v)^2) = 2 * n_dev... per device
    gr = jax.pmap(jax.grad(lambda v: jnp.sum(lax.psum(v, "i") ** 2)), "i")(x)
    res["grad_psum"] = tolist(gr)
    return res


def scenario_global():
    """Global view, arrays spanning processes, shard_map over a 2-D mesh, sharded jit,
    make_array_*, multihost_utils."""
    n, me, lc, pc = jax.device_count(), jax.process_index(), jax.local_device_count(), \
        jax.process_count()
    res = {"devices": [[d.id, d.process_index] for d in jax.devices()],
           "local": [d.id for d in jax.local_devices()],
           "counts": [n, lc, pc, me], "indices": jax.process_indices()}
    mesh = jax.make_mesh((pc, lc), ("p", "d"))
    res["mesh_multi"] = mesh.is_multi_process
    g = global_data(n)
    s = NamedSharding(mesh, P(("p", "d")))
    x = jax.make_array_from_callback(g.shape, s, lambda i: g[i])
    res["fully_addressable"] = x.is_fully_addressable
    res["shards"] = [[sh.device.id, sh.index[0].start, sh.index[0].stop]
                     for sh in x.addressable_shards]
    try:
        np.asarray(x)
        res["asarray_error"] = None
    except RuntimeError as e:
        res["asarray_error"] = str(e)
    res["allgather"] = tolist(mh.process_allgather(x))
    res["repr"] = [repr(x), str(x), f"{x}"]
    # shard_map with groups inside a process (d), across processes (p) and over both
    body = lambda b: (lax.psum(b, "d"), lax.psum(b, "p"), lax.psum(b, ("p", "d")),
                      lax.all_gather(b, "p", tiled=True),
                      jnp.reshape(lax.axis_index(("p", "d")), (1,)))
    # (check_vma=False: all_gather's result is typed as varying over "p", which JAX 0.10.2
    # rejects for out_specs P("d"))
    sm = jax.shard_map(body, mesh=mesh, in_specs=P(("p", "d")),
                       out_specs=(P("p"), P("d"), P(), P("d"), P(("p", "d"))), check_vma=False)
    outs = sm(x)
    res["shard_map"] = [tolist(mh.process_allgather(o)) for o in outs]
    # sharded jit: a reduction over the split axis and an elementwise op
    y = jax.jit(lambda a: (jnp.sum(a, 0), jnp.tanh(a) * 2))(x)
    res["jit_sum"] = tolist(y[0])
    res["jit_tanh"] = tolist(mh.process_allgather(y[1]))
    gr = jax.jit(jax.grad(lambda a: jnp.sum(jnp.sin(a) ** 2)))(x)
    res["jit_grad"] = tolist(mh.process_allgather(gr))
    gr = jax.grad(lambda a: jnp.sum(jnp.sin(a) ** 2))(x)      # eagerly: residuals span too
    res["eager_grad"] = tolist(mh.process_allgather(gr))
    res["eager_mean"] = tolist(jnp.mean(x, 0))
    res["eager_add"] = tolist(mh.process_allgather(x + 1))
    rep = jax.device_put(x, NamedSharding(mesh, P()))
    res["reshard"] = tolist(rep)
    # the other constructors
    rows = n * L // pc
    z = jax.make_array_from_process_local_data(s, g[me * rows:(me + 1) * rows])
    res["process_local"] = [list(z.shape), tolist(mh.process_allgather(z))]
    singles = [jax.device_put(g[sh.index], sh.device) for sh in x.addressable_shards]
    w = jax.make_array_from_single_device_arrays(g.shape, s, singles)
    res["single_device"] = tolist(mh.process_allgather(w))
    h = mh.host_local_array_to_global_array(g[me * rows:(me + 1) * rows], mesh, P(("p", "d")))
    back = mh.global_array_to_host_local_array(h, mesh, P(("p", "d")))
    res["host_local"] = [list(h.shape), list(back.shape), tolist(back)]
    res["broadcast"] = tolist(mh.broadcast_one_to_all(np.arange(3) + 10 * me))
    res["broadcast_src1"] = tolist(mh.broadcast_one_to_all(np.arange(3) + 10 * me,
                                                           is_source=me == 1))
    res["pag_stack"] = tolist(mh.process_allgather(np.full(2, me)))
    res["pag_tiled"] = tolist(mh.process_allgather(np.full(2, me), tiled=True))
    mh.sync_global_devices("done")
    return res


def scenario_big_reductions():
    """Reductions too big for one gathered message, of dtypes and ops MPI's own reductions
    do not cover exactly (bfloat16, float16, NaN-propagating max), several operands of
    different dtypes at once, and sizes that grow the shared window (run with and without
    JAXLITE_MPI_SHARED=0: the bits must agree)."""
    import ml_dtypes
    lc, me = jax.local_device_count(), jax.process_index()
    res = {}
    for name, dt in (("f32", np.float32), ("bf16", ml_dtypes.bfloat16), ("f16", np.float16),
                     ("i32", np.int32)):
        base = (np.arange(lc * 40000).reshape(lc, 40000) % 101 - 50).astype(np.float32) / 8
        x = (base * (me + 1) + 0.3).astype(dt)
        s, mx, mn = jax.pmap(lambda v: (lax.psum(v, "i"), lax.pmax(v, "i"),
                                        lax.pmin(v, "i")), "i")(x)
        res[name] = [tolist(np.asarray(a).astype(np.float64)[:, ::401]) for a in (s, mx, mn)]
    xn = np.zeros((lc, 50000), np.float32)
    if me == 1:
        xn[:, 7] = np.nan
    res["pmax_nan"] = tolist(np.isnan(np.asarray(
        jax.pmap(lambda v: lax.pmax(v, "i"), "i")(xn))[:, :9]))
    a = np.full((lc, 30000), me + 1.5, np.float32)
    b = np.full((lc, 30000), 2 * me + 1, np.int32)
    sa, sb = jax.pmap(lambda u, w: lax.psum((u, w), "i"), "i")(a, b)
    res["mixed"] = [tolist(np.asarray(sa)[:, :3]), tolist(np.asarray(sb)[:, :3])]
    sizes = []
    for n in (1 << 18, 3 << 18, 1 << 16):      # grows the window twice, then fits
        y = np.full((lc, n), me + 1, np.float32)
        sizes.append(float(np.asarray(jax.pmap(lambda v: lax.psum(v, "i"), "i")(y)).sum()))
    res["sizes"] = sizes
    # gathers too big for one message: all_gather, ppermute, psum_scatter, all_to_all; the
    # results stay intact after later collectives reuse the shared window
    n = jax.device_count()
    y = np.arange(lc * 30000, dtype=np.float32).reshape(lc, 30000) % 1000 + 1000 * me
    perm = [(i, (i + 1) % n) for i in range(n)]
    outs = jax.pmap(lambda v: (lax.all_gather(v, "i"), lax.ppermute(v, "i", perm),
                               lax.psum_scatter(v, "i", tiled=True),
                               lax.all_to_all(v, "i", 0, 0, tiled=True)), "i")(y)
    first = [np.array(o) for o in outs]
    for k in range(3):
        jax.pmap(lambda v: lax.all_gather(v, "i"), "i")(y + k)
    res["gathers_kept"] = all(np.array_equal(np.asarray(o), f) for o, f in zip(outs, first))
    res["gathers"] = [tolist(o.reshape(lc, -1)[:, ::997]) for o in first]
    from jaxlite._src.runtime import mpi as _mpi
    res["through_shared_memory"] = _mpi._shm["count"]
    return res


def scenario_big_mismatch():
    """Process 1 reduces a bigger operand than process 0 (one of them must grow the shared
    window): both must say so, neither hangs."""
    x = np.ones((jax.local_device_count(), 40000 * (1 + 3 * jax.process_index())), np.float32)
    try:
        jax.pmap(lambda v: lax.psum(v, "i"), "i")(x)
        return {"error": None}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}


def scenario_mismatch():
    """Process 0 runs psum where process 1 runs pmax: both must say so."""
    x = np.ones((jax.local_device_count(), 3), np.float32)
    prim = lax.psum if jax.process_index() == 0 else lax.pmax
    try:
        jax.pmap(lambda v: prim(v, "i"), "i")(x)
        return {"error": None}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}


def scenario_shape_mismatch():
    """The processes psum operands of different shapes."""
    x = np.ones((jax.local_device_count(), 3 + 2 * jax.process_index()), np.float32)
    try:
        jax.pmap(lambda v: lax.psum(v, "i"), "i")(x)
        return {"error": None}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}


def scenario_timeout():
    """Process 1 never reaches the collective: process 0 gives up after the timeout."""
    import time
    x = np.ones((jax.local_device_count(), 3), np.float32)
    if jax.process_index() == 1:
        time.sleep(float(os.environ["JAXLITE_COLLECTIVE_TIMEOUT"]) + 3)
        return {"error": None}
    t0 = time.monotonic()
    try:
        jax.pmap(lambda v: lax.psum(v, "i"), "i")(x)
        return {"error": None}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}", "waited": time.monotonic() - t0}


def scenario_init_args():
    """initialize() was called with JAX's arguments; a second call is refused."""
    try:
        jax.distributed.initialize()
        again = None
    except RuntimeError as e:
        again = str(e)
    return {"initialized": jax.distributed.is_initialized(), "again": again,
            "counts": [jax.process_count(), jax.process_index(), jax.device_count()]}


def scenario_crash():
    """Process 1 raises an uncaught error before a collective process 0 waits in: the job
    aborts instead of waiting for the timeout."""
    x = np.ones((jax.local_device_count(), 3), np.float32)
    if jax.process_index() == 1:
        raise ValueError("boom in process 1")
    jax.pmap(lambda v: lax.psum(v, "i"), "i")(x)
    return {"error": None}


def scenario_coordination():
    """The key-value store and barriers of jax._src.distributed.global_state.client, used
    from the main thread and from another thread at once."""
    import threading
    from jaxlite._src.compat.distributed import global_state
    c = global_state.client
    me, other = jax.process_index(), 1 - jax.process_index()
    res = {}
    c.key_value_set(f"proc/{me}", f"hello from {me}")
    res["other"] = c.blocking_key_value_get(f"proc/{other}", 20000)
    c.wait_at_barrier("both_set", 20000)
    res["dir"] = c.key_value_dir_get("proc")
    res["count"] = c.key_value_increment("count", me + 1)
    c.wait_at_barrier("both_set", 20000)          # the id again: the next barrier of it
    res["count_after"] = c.key_value_try_get("count")
    try:
        c.key_value_set(f"proc/{me}", "again")
        res["overwrite"] = None
    except Exception as e:  # noqa: BLE001 - recorded
        res["overwrite"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    # a barrier in another thread while this one waits on a key
    got = {}
    t = threading.Thread(target=lambda: got.update(
        b=c.wait_at_barrier("from_thread", 20000, process_ids=[0, 1])))
    t.start()
    if me == 0:
        c.key_value_set_bytes("blob", bytes(range(256)))
    res["blob"] = list(c.blocking_key_value_get_bytes("blob", 20000))[:5]
    t.join()
    res["thread_barrier"] = "b" in got
    if me == 0:                                    # process 1 never comes: a timeout
        try:
            c.wait_at_barrier("lonely", 300)
            res["lonely"] = None
        except Exception as e:  # noqa: BLE001 - recorded
            res["lonely"] = f"{type(e).__name__}: {str(e).split('.')[0]}"
    c.wait_at_barrier("end", 20000)
    return res


def scenario_orbax():
    """orbax-checkpoint across the processes: an array sharded over all devices saved by
    StandardCheckpointer and CheckpointManager and restored with other shardings; the
    asynchronous array checkpoint manager with its commit callback."""
    jax.install_as_jax()
    import tempfile
    import orbax.checkpoint as ocp
    from jaxlite.experimental.array_serialization import serialization as ser
    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("x",))
    g = global_data(n)
    a = jax.make_array_from_callback(g.shape, NamedSharding(mesh, P("x")), lambda i: g[i])
    root = mh.broadcast_one_to_all(np.frombuffer(tempfile.mkdtemp().encode().ljust(200),
                                                 np.uint8))
    d = bytes(np.asarray(root)).decode().strip()

    def shards(r):
        return sorted([s.device.id, [[i.start, i.stop] for i in s.index], tolist(s.data)]
                      for s in r.addressable_shards)
    res = {}
    ck = ocp.StandardCheckpointer()
    bv = np.arange(3).astype(jnp.bfloat16)
    b = jax.make_array_from_callback((3,), NamedSharding(mesh, P()), lambda i: bv[i])
    ck.save(os.path.join(d, "std"), {"a": a, "b": b})
    ck.wait_until_finished()
    target = {"a": jax.ShapeDtypeStruct(g.shape, g.dtype, sharding=NamedSharding(mesh, P())),
              "b": jax.ShapeDtypeStruct((3,), jnp.bfloat16,
                                        sharding=NamedSharding(mesh, P()))}
    r = ck.restore(os.path.join(d, "std"), target)
    res["std"] = shards(r["a"])
    res["std_b"] = [str(r["b"].dtype), tolist(r["b"].astype(np.float32))]
    mngr = ocp.CheckpointManager(os.path.join(d, "mgr"),
                                 options=ocp.CheckpointManagerOptions(max_to_keep=1))
    for step in range(2):
        mngr.save(step, args=ocp.args.StandardSave({"a": a * (step + 1)}))
    mngr.wait_until_finished()
    res["steps"] = list(mngr.all_steps())
    half = NamedSharding(jax.make_mesh((2, n // 2), ("p", "q")), P(None, "q"))
    r = mngr.restore(1, args=ocp.args.StandardRestore(
        {"a": jax.ShapeDtypeStruct(g.shape, g.dtype, sharding=half)}))
    res["mgr"] = shards(r["a"])
    mngr.close()
    m = ser.GlobalAsyncCheckpointManager()
    done = []
    m.serialize_with_paths([a], [os.path.join(d, "gacm")],
                           on_commit_callback=lambda: done.append(jax.process_index()))
    m.wait_until_finished()
    res["callback_ran"] = done
    r = m.deserialize_with_paths([NamedSharding(mesh, P("x"))], [os.path.join(d, "gacm")])[0]
    res["gacm"] = shards(r)
    return res


ERROR_SCENARIOS = {"mismatch", "shape_mismatch", "timeout", "big_mismatch"}


def main():
    scenario, outdir = sys.argv[1], sys.argv[2]
    if scenario == "init_args":
        jax.distributed.initialize(coordinator_address="localhost:1234", num_processes=2,
                                   process_id=int(os.environ["PMI_RANK"]),
                                   local_device_ids=[0, 1, 2])
    else:
        jax.distributed.initialize()
    res = globals()[f"scenario_{scenario}"]()
    path = os.path.join(outdir, f"{jax.process_index()}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(res, f)
    os.replace(path + ".tmp", path)     # (whole when the other process sees it)
    if scenario in ERROR_SCENARIOS:
        # (no clean shutdown after a failed collective: leave at once, but only once the
        # other process has written its result too, or mpiexec may end it first)
        import time
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
                os.path.exists(os.path.join(outdir, f"{p}.json")) for p in range(2)):
            time.sleep(0.05)
        sys.stdout.flush()
        os._exit(0)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
