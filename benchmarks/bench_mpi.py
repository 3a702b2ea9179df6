"""Collectives across processes (jax.distributed over MPI) against raw mpi4py, and the
data-parallel training step of examples/mpi_data_parallel.py spread two ways.

    python benchmarks/bench_mpi.py          # launches `mpiexec -n 2` itself

Prints, for psum of a float32 scalar and of a 4 MB buffer across 2 processes, the time per
collective of raw mpi4py (a chain of blocking Allreduces, each into a new buffer as a psum
makes) and of jaxlite (a chain of psums inside one pmap, so the per-call dispatch is
amortized; the program without psums is subtracted), and jaxlite's overhead (also as the
median of differences within rounds that time both back to back: the 4 MB Allreduce itself
varies more between rounds than the overhead). With every process on one machine, jaxlite's
reductions above 64 KiB go through MPI shared memory instead of Allreduce
(JAXLITE_MPI_SHARED=0 times the Allreduce path); then the time of one training step with
2 processes x 1 device and with 1 process x 2 devices, and their ratio. Targets: overhead <= 20 us per collective, ratio
<= 1.2.
"""
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]


def best_of(fn, reps, rounds=30):
    """Seconds per call of ``fn``: the best of ``rounds`` rounds of ``reps`` calls (and the
    median round). On a shared machine the best round is what the code costs; the median
    adds the time other processes held the cores."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    times.sort()
    return times[0], times[len(times) // 2]


def psum_numbers():
    """{label: (raw best, raw median, jaxlite best, jaxlite median, overhead median)} seconds
    per psum for the scalar and the 4 MB buffer (run under MPI). Each round times raw
    mpi4py's chain, then jaxlite's, back to back, so the per-round difference (the overhead)
    sees the same machine state: a 4 MB Allreduce alone varies by more than the overhead
    between rounds on a shared machine."""
    import jaxlite as jax
    from jaxlite import lax
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    out = {}
    for label, shape, k, rounds in (("scalar", (), 20, 40), ("4MB", (1 << 20,), 4, 24)):
        x = np.ones(shape, np.float32)

        last = [x]

        def raw_psum():     # as the chain of psums: a new array from the previous one
            r = np.empty_like(x)
            comm.Allreduce(last[0], r, op=MPI.SUM)
            last[0] = r

        def chain(v, n):
            for _ in range(n):
                v = lax.psum(v, "i")
            return v
        with_k = jax.pmap(lambda v: chain(v, k), "i")
        without = jax.pmap(lambda v: chain(v, 0), "i")
        xs = x[None]
        with_k(xs)
        without(xs)
        raws, ours, over = [], [], []
        for _ in range(rounds):
            comm.Barrier()
            raw = best_of(raw_psum, k, 1)[0]
            comm.Barrier()
            t_k = best_of(lambda: with_k(xs).block_until_ready(), 1, 1)[0]
            comm.Barrier()
            t_0 = best_of(lambda: without(xs).block_until_ready(), 1, 1)[0]
            ours.append((t_k - t_0) / k)
            raws.append(raw)
            over.append(ours[-1] - raw)
        med = [sorted(v)[len(v) // 2] for v in (raws, ours, over)]
        out[label] = (min(raws), med[0], min(ours), med[1], med[2])
    return out


def local_chain():
    """Seconds per psum of a scalar over one device of one process (no MPI): what jaxlite's
    collective machinery costs before any communication."""
    import jaxlite as jax
    from jaxlite import lax
    k = 20

    def chain(v, n):
        for _ in range(n):
            v = lax.psum(v, "i")
        return v
    with_k = jax.pmap(lambda v: chain(v, k), "i")
    without = jax.pmap(lambda v: chain(v, 0), "i")
    xs = np.ones((1,), np.float32)
    with_k(xs)
    without(xs)
    t_k = best_of(lambda: with_k(xs).block_until_ready(), 1, 40)
    t_0 = best_of(lambda: without(xs).block_until_ready(), 1, 40)
    return (t_k[0] - t_0[0]) / k


def step_time():
    """Seconds per data-parallel training step (pmap + pmean) in this set-up."""
    import jaxlite as jax
    import mpi_data_parallel as ex
    model, opt_state, opt_update, get_params = ex.build()
    loss_fn = ex.make_loss(model)

    def step_fn(step, opt_state, batch, targets):
        params = get_params(opt_state)
        loss, grad = jax.value_and_grad(loss_fn)(params, batch, targets)
        loss, grad = jax.lax.pmean((loss, grad), "batch")
        return opt_update(step, grad, opt_state), loss
    train = jax.pmap(step_fn, "batch", in_axes=(None, None, 0, 0), out_axes=(None, None))
    world, local = jax.device_count(), jax.local_device_count()
    first = jax.process_index() * local
    batch, targets = ex.global_batch(0)
    batch = batch.reshape(world, -1, 2, 2)[first:first + local]
    targets = targets.reshape(world, -1)[first:first + local]
    state = [opt_state]

    def one():
        state[0], loss = train(0, state[0], batch, targets)
        loss.block_until_ready()
    for _ in range(3):
        one()
    return best_of(one, 1, 40)


def worker(what):
    import jaxlite as jax
    if int(os.environ.get("PMI_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))) > 1:
        jax.distributed.initialize()
    res = psum_numbers() if what == "psum" else {"step": step_time()} if what == "step" \
        else {"local": local_chain()}
    if jax.process_index() == 0:
        print("RESULT " + json.dumps(res), flush=True)


def launch(cmd, env_devices):
    env = dict(os.environ, JAXLITE_NUM_CPU_DEVICES=str(env_devices),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("XLA_FLAGS", None)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[7:])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2])
    mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
    if not mpiexec.exists():
        raise SystemExit('needs mpiexec: pip install -e ".[mpi]"')
    me = [sys.executable, __file__, "--worker"]
    ver = subprocess.run([str(mpiexec), "--version"], capture_output=True, text=True).stdout
    # one core per process: two processes time-sharing one core would measure the scheduler
    mpi = [str(mpiexec)] + (["-bind-to", "core"] if "HYDRA" in ver else []) + ["-n", "2"]
    ps = launch(mpi + me + ["psum"], 1)
    print("psum across 2 processes, us per collective: best round (median round); overhead:")
    print("jaxlite - raw: difference of the best rounds (median of the per-round differences)")
    print("                       raw mpi4py          jaxlite            overhead")
    for label, (rb, rm, jb, jm, om) in ps.items():
        print(f"  {label:<12} {rb * 1e6:9.1f} ({rm * 1e6:8.1f}) {jb * 1e6:9.1f} "
              f"({jm * 1e6:8.1f}) {(jb - rb) * 1e6:8.1f} ({om * 1e6:8.1f})"
              f"   target <= 20")
    local = launch(me + ["local"], 1)["local"]
    print(f"  (jaxlite's psum on one device of one process, no MPI: {local * 1e6:.1f} us)")
    two = launch(mpi + me + ["step"], 1)["step"]
    one = launch(me + ["step"], 2)["step"]
    print("data-parallel training step (pmap + pmean, 64 matrices), ms: best (median)")
    print(f"  1 process  x 2 devices   {one[0] * 1e3:7.2f} ({one[1] * 1e3:6.2f})")
    print(f"  2 processes x 1 device   {two[0] * 1e3:7.2f} ({two[1] * 1e3:6.2f})   ratio "
          f"{two[0] / one[0]:.2f} ({two[1] / one[1]:.2f})   target <= 1.2")
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")

if __name__ == "__main__":
    main()
