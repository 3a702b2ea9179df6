"""jax.distributed over MPI: several processes, one program (runtime/mpi.py).

The multi-process tests launch ``mpiexec -n 2 python tests/mpi_worker.py SCENARIO`` (each
process writes what it saw to a JSON file) with a subprocess timeout, so a deadlock fails
the test instead of hanging. They are skipped when mpi4py or mpiexec is missing
(``pip install -e ".[mpi]"``). Values are checked against NumPy and against the same
program run by one process with as many devices.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from mpi_worker import ERROR_SCENARIOS  # (the scenarios that end in an error)
from multidevice import device_env, run_snippet

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
WORKER = HERE / "mpi_worker.py"
TIMEOUT = 120
L = 4


def _mpiexec():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    cand = pathlib.Path(sys.executable).parent / "mpiexec"
    return str(cand) if cand.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="needs mpi4py and mpiexec "
                                                       "(pip install -e '.[mpi]')")


def _launcher():
    cmd = [MPIEXEC, "-n", "2"]
    ver = subprocess.run([MPIEXEC, "--version"], capture_output=True, text=True, timeout=30)
    if "Open MPI" in ver.stdout + ver.stderr:
        cmd += ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    return cmd


def run_mpi(tmp_path, scenario, n_local=1, extra_env=None, expect_ok=True):
    """Run ``scenario`` in 2 processes with ``n_local`` devices each; return (per-process
    results, completed process)."""
    out = tmp_path / scenario
    out.mkdir()
    env = device_env(None, dict(JAXLITE_NUM_CPU_DEVICES=str(n_local), **(extra_env or {})))
    proc = subprocess.run(_launcher() + [sys.executable, str(WORKER), scenario, str(out)],
                          capture_output=True, text=True, env=env, cwd=str(ROOT),
                          timeout=TIMEOUT)
    res = []
    for p in range(2):
        f = out / f"{p}.json"
        res.append(json.loads(f.read_text()) if f.exists() else None)
    # after a failed collective the worker leaves without MPI_Finalize once both results are
    # written; the launcher may then kill the slower process on its way out (signal 9): that
    # is not a failure when both processes wrote their result
    left_early = scenario in ERROR_SCENARIOS and all(r is not None for r in res)
    if expect_ok and proc.returncode != 0 and not left_early:
        raise AssertionError(f"mpiexec failed ({proc.returncode}):\n{proc.stdout}\n"
                             f"{proc.stderr}")
    return res, proc


def global_data(ndev):
    return (np.arange(ndev * L * 6).reshape(ndev * L, 6) % 7 - 3).astype(np.float32) * 1.5


# -- without MPI -----------------------------------------------------------------------------

def test_import_never_loads_mpi4py():
    out = run_snippet("""
        import sys, jaxlite, jaxlite.distributed
        from jaxlite.experimental import multihost_utils
        print('mpi4py' in sys.modules, jaxlite.distributed.is_initialized())
    """, n=1)
    assert out.split() == ["False", "False"]


def test_initialize_errors_single_process():
    out = run_snippet("""
        import sys
        import jaxlite as jax
        try:
            jax.distributed.initialize()
        except ValueError as e:
            print("NOLAUNCH", e)
        try:
            jax.distributed.initialize(num_processes=2, process_id=3)
        except ValueError as e:
            print("RANGE", e)
        jax.devices()
        try:
            jax.distributed.initialize(num_processes=1, process_id=0)
        except RuntimeError as e:
            print("LATE", e)
    """, n=1)
    assert "NOLAUNCH" in out and "mpiexec -n N" in out
    assert "RANGE process_id and num_processes must be nonnegative" in out
    assert "LATE jax.distributed.initialize() must be called before any JAX calls" in out


def test_missing_mpi4py_says_what_to_install():
    out = run_snippet("""
        import sys
        sys.modules['mpi4py'] = None          # as if not installed
        import jaxlite as jax
        try:
            jax.distributed.initialize()
        except ImportError as e:
            print(e)
    """, n=1, env={"PMI_RANK": "0", "PMI_SIZE": "2"})
    assert 'pip install "jaxlite[mpi]"' in out and "mpiexec" in out


def test_one_process_distributed_run():
    out = run_snippet("""
        import numpy as np
        import jaxlite as jax
        from jaxlite.experimental import multihost_utils as mh
        jax.distributed.initialize(num_processes=1, process_id=0)
        print(jax.distributed.is_initialized(), jax.process_count(), jax.process_index(),
              jax.device_count(), jax.local_device_count())
        print(mh.process_allgather(np.arange(2)).tolist(),
              mh.process_allgather(np.arange(2), tiled=True).tolist(),
              mh.broadcast_one_to_all(np.arange(2)).tolist())
        mh.sync_global_devices("x")
        jax.distributed.shutdown()
        print(jax.distributed.is_initialized(), jax.local_devices(process_index=0))
    """, n=2)
    lines = out.splitlines()
    assert lines[0] == "True 1 0 2 2"
    assert lines[1] == "[[0, 1]] [0, 1] [0, 1]"
    assert lines[2] == "False [CpuDevice(id=0), CpuDevice(id=1)]"


def test_coordination_client_one_process():
    # jax._src.distributed.global_state.client: JAX's coordination-service API and error
    # texts (those of JAX 0.10.2's client, run the same way with one process); None outside
    # a distributed run
    out = run_snippet("""
        import jaxlite as jax
        from jaxlite._src.compat.distributed import global_state
        print(global_state.client)
        jax.distributed.initialize(num_processes=1, process_id=0)
        c = global_state.client
        def e(f):
            try:
                print("OK", repr(f()))
            except Exception as ex:
                print(type(ex).__name__, "|", str(ex).splitlines()[0].split(" [type.")[0])
        e(lambda: c.key_value_try_get("nokey"))
        e(lambda: c.key_value_set("a/x", "1"))
        e(lambda: c.key_value_set("a/x", "2"))
        e(lambda: c.key_value_set("a/x", "3", allow_overwrite=True))
        e(lambda: c.key_value_set("a/y/z", "4"))
        e(lambda: c.key_value_set_bytes("b", b"\\x00\\x01"))
        e(lambda: c.key_value_try_get("a/x"))
        e(lambda: c.key_value_try_get_bytes("b"))
        e(lambda: c.key_value_dir_get("a"))
        e(lambda: c.key_value_dir_get("a/"))
        e(lambda: c.key_value_dir_get("nothing"))
        e(lambda: c.blocking_key_value_get("a/x", 100))
        e(lambda: c.blocking_key_value_get("missing", 200))
        e(lambda: c.key_value_increment("cnt", 2))
        e(lambda: c.key_value_increment("cnt", 3))
        e(lambda: c.key_value_try_get("cnt"))
        e(lambda: c.key_value_delete("a"))
        e(lambda: c.key_value_dir_get("a"))
        e(lambda: c.key_value_delete("nokey"))
        e(lambda: c.wait_at_barrier("b1", 1000))
        e(lambda: c.wait_at_barrier("b1", 1000))
        e(lambda: c.wait_at_barrier("b2", 1000, process_ids=[0]))
        e(lambda: c.wait_at_barrier("b3", 1000, process_ids=[1]))
        jax.distributed.shutdown()
        print(global_state.client)
    """, n=1)
    assert out.splitlines() == [
        "None",
        "JaxRuntimeError | NOT_FOUND: Config key nokey not found.",
        "OK None",
        "JaxRuntimeError | ALREADY_EXISTS: key a/x already exists.",
        "OK None", "OK None", "OK None", "OK '3'", "OK b'\\x00\\x01'",
        "OK [('a/x', '3'), ('a/y/z', '4')]", "OK [('a/x', '3'), ('a/y/z', '4')]", "OK []",
        "OK '3'",
        "JaxRuntimeError | DEADLINE_EXCEEDED: GetKeyValue() timed out with key: missing and "
        "duration: 200ms",
        "OK 2", "OK 5", "OK '5'", "OK None", "OK []", "OK None", "OK None", "OK None",
        "OK None",
        "JaxRuntimeError | INVALID_ARGUMENT: Unexpected task (1) that is not in the cluster "
        "called the barrier. Barrier Id: b3::0",
        "None"]


def test_eager_grad_of_sharded_array():
    """Residuals of an eager grad that are sharded arrays are staged as constants."""
    out = run_snippet("""
        import numpy as np
        import jaxlite as jax, jaxlite.numpy as jnp
        from jaxlite.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((2,), ('x',))
        x = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P('x')))
        g = jax.grad(lambda a: jnp.sum(jnp.sin(a) ** 2))(x)
        print(np.abs(np.asarray(g) - np.sin(2 * np.arange(8.0))).max() < 1e-5)
    """, n=2)
    assert out.strip() == "True"


# -- two processes -----------------------------------------------------------------------------

def _expected_collectives(n, lc, me):
    g = global_data(n).reshape(n, L, 6)
    gi = g.astype(np.int32)
    S = g.sum(0)
    mine = range(me * lc, (me + 1) * lc)
    blk = L // n
    return {
        "psum": np.stack([S] * lc), "pmean": np.stack([S / n] * lc),
        "pmax": np.stack([g.max(0)] * lc), "pmin": np.stack([g.min(0)] * lc),
        "psum_int": np.stack([gi.sum(0)] * lc), "pmax_int": np.stack([gi.max(0)] * lc),
        "all_gather": np.stack([g] * lc),
        "all_gather_tiled": np.stack([g.reshape(n * L, 6)] * lc),
        "psum_scatter": np.stack([S[k * blk:(k + 1) * blk] for k in mine]),
        "ppermute": np.stack([g[(k - 1) % n] for k in mine]),
        "all_to_all": np.stack([np.concatenate([g[j][k * blk:(k + 1) * blk]
                                                for j in range(n)]) for k in mine]),
        "axis_index": np.array(list(mine)), "axis_size": np.array([n] * lc),
    }


@needs_mpi
@pytest.mark.parametrize("n_local", [1, 2])
def test_collectives_across_processes(tmp_path, n_local):
    res, _ = run_mpi(tmp_path, "collectives", n_local)
    n = 2 * n_local
    for me, r in enumerate(res):
        exp = _expected_collectives(n, n_local, me)
        for k, v in exp.items():
            np.testing.assert_allclose(np.asarray(r[k]), v, rtol=1e-6, err_msg=k)
        g = global_data(n).reshape(n, L, 6)
        big = np.repeat(g.reshape(n, -1), 1000, axis=1).sum(0)[::997]
        np.testing.assert_allclose(r["psum_big"], np.stack([big] * n_local), rtol=1e-6)
        assert r["big_results_kept"] is True and r["small_results_kept"] is True
        # one device per process: small reductions go through persistent MPI collectives
        assert (r["persistent_requests"] > 0) == (n_local == 1)
        huge = np.repeat(g.reshape(n, -1), 4000, axis=1).sum(0)[::3989] * 3
        np.testing.assert_allclose(r["big_result_values"], np.stack([huge] * n_local),
                                   rtol=1e-6)
        nan_max = g.max(0)[0]
        nan_max[0] = np.nan
        np.testing.assert_array_equal(r["pmax_nan"], np.stack([nan_max] * n_local))
        np.testing.assert_array_equal(r["psum_tuple"][0], exp["psum"])
        np.testing.assert_array_equal(r["psum_tuple"][1], exp["psum_int"])
        np.testing.assert_array_equal(r["aot_psum"], exp["psum"])
        assert r["aot_text_has_psum"] is True
    # the same program in one process with all the devices gives the same bits
    single = run_snippet(f"""
        import json, sys
        sys.path.insert(0, {str(HERE)!r})
        import mpi_worker
        print(json.dumps(mpi_worker.scenario_collectives()))
    """, n=n)
    one = json.loads(single)
    for me, r in enumerate(res):
        for k in one:
            if k in ("big_results_kept", "small_results_kept", "aot_text_has_psum",
                     "persistent_requests"):
                continue
            got = np.asarray(r[k] if k != "psum_tuple" else r[k][0])
            want = np.asarray(one[k] if k != "psum_tuple" else one[k][0])
            np.testing.assert_array_equal(got, want[me * n_local:(me + 1) * n_local],
                                          err_msg=k)


@needs_mpi
def test_collectives_without_persistent_requests(tmp_path):
    """Where the MPI library has no persistent collectives (before MPI 4; here forced by
    JAXLITE_MPI_PERSISTENT=0) small reductions go through Iallgather: the same bits."""
    res, _ = run_mpi(tmp_path, "collectives", 1)
    off = tmp_path / "off"
    off.mkdir()
    res_off, _ = run_mpi(off, "collectives", 1, extra_env={"JAXLITE_MPI_PERSISTENT": "0"})
    for r, r_off in zip(res, res_off):
        assert r.pop("persistent_requests") > 0 and r_off.pop("persistent_requests") == 0
        assert r == r_off


@needs_mpi
def test_global_arrays_shard_map_jit_multihost(tmp_path):
    res, _ = run_mpi(tmp_path, "global", 2)
    g = global_data(4)
    blocks = g.reshape(4, L, 6)
    for me, r in enumerate(res):
        assert r["devices"] == [[0, 0], [1, 0], [2, 1], [3, 1]]
        assert r["local"] == [2 * me, 2 * me + 1]
        assert r["counts"] == [4, 2, 2, me] and r["indices"] == [0, 1]
        assert r["mesh_multi"] is True
        assert r["fully_addressable"] is False
        assert r["shards"] == [[2 * me + j, (2 * me + j) * L, (2 * me + j + 1) * L]
                               for j in range(2)]
        assert r["asarray_error"].startswith(
            "Fetching value for `jax.Array` that spans non-addressable (non process local) "
            "devices is not possible.")
        np.testing.assert_array_equal(r["allgather"], g)
        assert r["repr"] == ["Array(shape=(16, 6), dtype=float32)"] * 3
        # shard_map: psum over d (in process), over p (across), over both; all_gather over p
        sum_d, sum_p, sum_all, gat_p, idx = (np.asarray(a) for a in r["shard_map"])
        np.testing.assert_array_equal(sum_d, np.concatenate(
            [blocks[0] + blocks[1], blocks[2] + blocks[3]]))
        np.testing.assert_array_equal(sum_p, np.concatenate(
            [blocks[0] + blocks[2], blocks[1] + blocks[3]]))
        np.testing.assert_array_equal(sum_all, blocks.sum(0))
        np.testing.assert_array_equal(gat_p, np.concatenate(
            [blocks[0], blocks[2], blocks[1], blocks[3]]))
        np.testing.assert_array_equal(idx, [0, 1, 2, 3])
        np.testing.assert_allclose(r["jit_sum"], g.sum(0), rtol=1e-6)
        np.testing.assert_allclose(r["jit_tanh"], np.tanh(g) * 2, rtol=1e-6)
        np.testing.assert_allclose(r["jit_grad"], np.sin(2 * g), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(r["eager_grad"], np.sin(2 * g), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(r["eager_mean"], g.mean(0), rtol=1e-6)
        np.testing.assert_array_equal(r["eager_add"], g + 1)
        np.testing.assert_array_equal(r["reshard"], g)
        assert r["process_local"][0] == [16, 6]
        np.testing.assert_array_equal(r["process_local"][1], g)
        np.testing.assert_array_equal(r["single_device"], g)
        assert r["host_local"][:2] == [[16, 6], [8, 6]]
        np.testing.assert_array_equal(r["host_local"][2], g[me * 8:(me + 1) * 8])
        assert r["broadcast"] == [0, 1, 2] and r["broadcast_src1"] == [10, 11, 12]
        assert r["pag_stack"] == [[0, 0], [1, 1]] and r["pag_tiled"] == [0, 0, 1, 1]


@needs_mpi
@pytest.mark.parametrize("n_local", [1, 2])
def test_big_collectives_through_shared_memory(tmp_path, n_local):
    """Reductions bigger than one gathered message go through shared memory when every
    process is on this machine: values as NumPy computes them in process order, every dtype
    and op (bfloat16, NaN-propagating pmax), several dtypes at once, a growing window; and
    the same bits as through MPI's Allreduce (JAXLITE_MPI_SHARED=0)."""
    import ml_dtypes
    res, _ = run_mpi(tmp_path, "big_reductions", n_local)
    off = tmp_path / "off"
    off.mkdir()
    res_mpi, _ = run_mpi(off, "big_reductions", n_local,
                         extra_env={"JAXLITE_MPI_SHARED": "0"})
    n = 2 * n_local
    base = (np.arange(n_local * 40000).reshape(n_local, 40000) % 101 - 50).astype(
        np.float32) / 8
    for me, r in enumerate(res):
        for name, dt in (("f32", np.float32), ("bf16", ml_dtypes.bfloat16),
                         ("f16", np.float16), ("i32", np.int32)):
            parts = [(base * (p + 1) + 0.3).astype(dt) for p in range(2)]
            # each process first reduces its own devices, then the processes' partials
            local = [p[0] if n_local == 1 else (p[0] + p[1]).astype(dt) for p in parts]
            want_sum = (local[0] + local[1]).astype(dt)
            want_max = np.maximum(parts[0], parts[1]).max(0).astype(dt)
            want_min = np.minimum(parts[0], parts[1]).min(0).astype(dt)
            for got, want in zip(r[name], (want_sum, want_max, want_min)):
                np.testing.assert_array_equal(
                    np.asarray(got), np.stack([want.astype(np.float64)[::401]] * n_local),
                    err_msg=name)
        assert all(row[7] for row in r["pmax_nan"]) and not any(row[6] for row in r["pmax_nan"])
        # a: 1.5 on process 0's devices, 2.5 on process 1's; b: 1 and 3
        np.testing.assert_array_equal(r["mixed"][0], np.full((n_local, 3), 4.0 * n_local))
        np.testing.assert_array_equal(r["mixed"][1], np.full((n_local, 3), 4 * n_local))
        assert r["sizes"] == [3.0 * n_local * n_local * k for k in (1 << 18, 3 << 18, 1 << 16)]
        # device k's y: (arange(30000) % 1000) + 1000 * its process
        ys = [np.arange(n_local * 30000, dtype=np.float32).reshape(n_local, 30000) % 1000
              + 1000 * p for p in range(2)]
        dev = np.concatenate(ys)                       # (n, 30000), device order
        mine = range(me * n_local, (me + 1) * n_local)
        blk = 30000 // n
        want = [np.stack([dev] * n_local),
                np.stack([dev[(k - 1) % n] for k in mine]),
                np.stack([dev.sum(0)[k * blk:(k + 1) * blk] for k in mine]),
                np.stack([np.concatenate([dev[j][k * blk:(k + 1) * blk] for j in range(n)])
                          for k in mine])]
        for got, w in zip(r["gathers"], want):
            np.testing.assert_array_equal(np.asarray(got), w.reshape(n_local, -1)[:, ::997])
        assert r["gathers_kept"] is True
        assert r.pop("through_shared_memory") == 24
        assert res_mpi[me].pop("through_shared_memory") == 0
        assert res_mpi[me] == r


@needs_mpi
def test_mismatched_collectives_name_both_processes(tmp_path):
    res, _ = run_mpi(tmp_path, "mismatch")
    for me, r in enumerate(res):
        err = r["error"]
        assert err.startswith(f"RuntimeError: process {me}: processes reached different "
                              f"collectives")
        assert "process 0: collective #1: psum over axes ('i',) at mpi_worker.py" in err
        assert "process 1: collective #1: pmax over axes ('i',) at mpi_worker.py" in err


@needs_mpi
@pytest.mark.parametrize("scenario,shapes", [
    ("shape_mismatch", ("float32[3]", "float32[5]")),
    # big: through shared memory, where one process must grow the window first
    ("big_mismatch", ("float32[40000]", "float32[160000]"))])
def test_mismatched_shapes_name_both_processes(tmp_path, scenario, shapes):
    res, _ = run_mpi(tmp_path, scenario, extra_env={"JAXLITE_COLLECTIVE_TIMEOUT": "10"})
    for me, r in enumerate(res):
        err = r["error"]
        assert err.startswith(f"RuntimeError: process {me}: processes reached different "
                              f"collectives"), err
        assert "psum over axes ('i',)" in err and all(s in err for s in shapes)


@needs_mpi
def test_missing_process_times_out_with_names(tmp_path):
    res, _ = run_mpi(tmp_path, "timeout", extra_env={"JAXLITE_COLLECTIVE_TIMEOUT": "2"})
    err = res[0]["error"]
    assert err.startswith("CollectiveError: process 0: psum over axes ('i',) at "
                          "mpi_worker.py:")
    assert "not every process arrived within 2 s" in err
    assert 1.5 < res[0]["waited"] < 30


@needs_mpi
def test_initialize_with_jax_arguments(tmp_path):
    res, _ = run_mpi(tmp_path, "init_args", 2)
    for me, r in enumerate(res):
        assert r == {"initialized": True, "again": "distributed.initialize should only be "
                     "called once.", "counts": [2, me, 6]}


@needs_mpi
def test_uncaught_error_aborts_the_job(tmp_path):
    res, proc = run_mpi(tmp_path, "crash", expect_ok=False,
                        extra_env={"JAXLITE_COLLECTIVE_TIMEOUT": "100"})
    assert proc.returncode != 0
    assert "boom in process 1" in proc.stderr
    assert res == [None, None]


@needs_mpi
@pytest.mark.parametrize("mode", ["pmap", "jit"])
def test_example_same_parameters_1x2_and_2x1(tmp_path, mode):
    example = str(ROOT / "examples" / "mpi_data_parallel.py")
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    args = ["--mode", mode, "--steps", "6", "--log-every", "0"]
    one = subprocess.run([sys.executable, example, *args, "--out", str(a)],
                         capture_output=True, text=True, cwd=str(ROOT), timeout=TIMEOUT,
                         env=device_env(None, {"JAXLITE_NUM_CPU_DEVICES": "2"}))
    assert one.returncode == 0, one.stderr
    two = subprocess.run(_launcher() + [sys.executable, example, *args, "--out", str(b)],
                         capture_output=True, text=True, cwd=str(ROOT), timeout=TIMEOUT,
                         env=device_env(None, {"JAXLITE_NUM_CPU_DEVICES": "1"}))
    assert two.returncode == 0, two.stderr
    assert "process 1 of 2: 1 of 2 devices" in two.stdout
    pa, pb = np.load(a), np.load(b)
    assert len(pa.files) == 6
    for k in pa.files:
        np.testing.assert_array_equal(pa[k], pb[k])


@needs_mpi
def test_coordination_client_across_processes(tmp_path):
    # keys set by one process read by the other, directories, counters, reused barrier ids,
    # a barrier waited in another thread meanwhile, and a barrier timeout
    res, _ = run_mpi(tmp_path, "coordination")
    for me, r in enumerate(res):
        assert r["other"] == f"hello from {1 - me}"
        assert r["dir"] == [["proc/0", "hello from 0"], ["proc/1", "hello from 1"]]
        assert r["count_after"] == "3"
        assert r["overwrite"] == f"JaxRuntimeError: ALREADY_EXISTS: key proc/{me} already exists."
        assert r["blob"] == [0, 1, 2, 3, 4] and r["thread_barrier"]
    assert sorted([res[0]["count"], res[1]["count"]]) in ([1, 3], [2, 3])
    assert res[0]["lonely"] == "JaxRuntimeError: DEADLINE_EXCEEDED: Barrier timed out"


@needs_mpi
def test_orbax_checkpoints_across_processes(tmp_path):
    # an array sharded over both processes' devices, saved by orbax (StandardCheckpointer,
    # CheckpointManager) and by GlobalAsyncCheckpointManager, read back with other shardings
    pytest.importorskip("tensorstore")
    pytest.importorskip("orbax.checkpoint")
    res, _ = run_mpi(tmp_path, "orbax", n_local=2)
    g = global_data(4)
    for me, r in enumerate(res):
        devs = [2 * me, 2 * me + 1]
        assert r["std"] == [[d, [[None, None], [None, None]], g.tolist()] for d in devs]
        assert r["std_b"] == ["bfloat16", [0.0, 1.0, 2.0]]
        assert r["steps"] == [1]
        # mesh (2, 2) over devices 0..3, P(None, 'q'): device d holds columns 3*(d % 2) + :3
        assert r["mgr"] == [[d, [[None, None], [3 * (d % 2), 3 * (d % 2) + 3]],
                             (2 * g[:, 3 * (d % 2):3 * (d % 2) + 3]).tolist()] for d in devs]
        assert r["gacm"] == [[d, [[4 * d, 4 * d + 4], [None, None]],
                              g[4 * d:4 * d + 4].tolist()] for d in devs]
    assert res[0]["callback_ran"] == [0] and res[1]["callback_ran"] == []
