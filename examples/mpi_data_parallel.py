"""Data-parallel training across processes ("write your own Horovod", seed 001).

An MLP learns the spectral radius of random 2x2 matrices. Every device takes a slice of
each global batch; the gradients are averaged over all devices of all processes, with
``pmap`` + ``lax.pmean`` (``--mode pmap``) or with a jit over a 1-D mesh whose batch is
sharded (``--mode jit``: the partitioner inserts the gradient all-reduce). The devices see
the same data however they are spread over processes, so both of

    JAXLITE_NUM_CPU_DEVICES=2 python examples/mpi_data_parallel.py      # 1 process x 2
    mpiexec -n 2 python examples/mpi_data_parallel.py                    # 2 processes x 1

end with the same parameters (``--out params.npz`` saves them from process 0).
"""
import argparse
import os
import time

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers, stax
from jaxlite.sharding import NamedSharding, PartitionSpec as P

BATCH = 64


def launched_by_mpi():
    """Whether mpiexec started several processes (MPICH's or Open MPI's variables)."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        if int(os.environ.get(var, "1")) > 1:
            return True
    return False


def spectral_radius(mat):
    return jnp.max(jnp.abs(jnp.linalg.eigvals(mat)))


def build(seed=0):
    init, model = stax.serial(stax.Flatten, stax.Dense(64), stax.Relu, stax.Dense(64),
                              stax.Relu, stax.Dense(1))
    _, params = init(jax.random.PRNGKey(seed), (-1, 2, 2))
    opt_init, opt_update, get_params = optimizers.adam(3e-3)
    return model, opt_init(params), opt_update, get_params


def make_loss(model):
    def loss_fn(params, batch, targets):
        preds = model(params, batch)[:, 0]
        return jnp.mean(jnp.abs(preds - targets))
    return loss_fn


def global_batch(step):
    """The same global batch in every process (and its targets)."""
    key = jax.random.fold_in(jax.random.PRNGKey(1), step)
    batch = np.asarray(jax.random.normal(key, (BATCH, 2, 2)))
    targets = np.max(np.abs(np.linalg.eigvals(batch.astype(np.float64))), -1)
    return batch, targets.astype(np.float32)


def train_pmap(steps, log_every):
    model, opt_state, opt_update, get_params = build()
    loss_fn = make_loss(model)

    def step_fn(step, opt_state, batch, targets):
        params = get_params(opt_state)
        loss, grad = jax.value_and_grad(loss_fn)(params, batch, targets)
        loss, grad = jax.lax.pmean((loss, grad), "batch")
        return opt_update(step, grad, opt_state), loss

    train = jax.pmap(step_fn, "batch", in_axes=(None, None, 0, 0), out_axes=(None, None))
    world, local = jax.device_count(), jax.local_device_count()
    first = jax.process_index() * local          # this process's first device slot
    per_dev = BATCH // world
    for step in range(steps):
        batch, targets = global_batch(step)
        batch = batch.reshape(world, per_dev, 2, 2)[first:first + local]
        targets = targets.reshape(world, per_dev)[first:first + local]
        opt_state, loss = train(step, opt_state, batch, targets)
        if log_every and step % log_every == 0 and jax.process_index() == 0:
            print(f"step {step}; loss {float(loss):.6f}", flush=True)
    return get_params(opt_state), float(loss)


def train_jit(steps, log_every):
    model, opt_state, opt_update, get_params = build()
    loss_fn = make_loss(model)
    mesh = jax.make_mesh((jax.device_count(),), ("batch",))
    data = NamedSharding(mesh, P("batch"))
    replicated = NamedSharding(mesh, P())
    opt_state = jax.device_put(opt_state, replicated)

    @jax.jit
    def train(step, opt_state, batch, targets):
        params = get_params(opt_state)
        loss, grad = jax.value_and_grad(loss_fn)(params, batch, targets)
        return opt_update(step, grad, opt_state), loss

    for step in range(steps):
        batch, targets = global_batch(step)
        batch = jax.make_array_from_callback(batch.shape, data, lambda i: batch[i])
        targets = jax.make_array_from_callback(targets.shape, data, lambda i: targets[i])
        opt_state, loss = train(step, opt_state, batch, targets)
        if log_every and step % log_every == 0 and jax.process_index() == 0:
            print(f"step {step}; loss {float(loss):.6f}", flush=True)
    return get_params(opt_state), float(loss)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--mode", choices=("pmap", "jit"), default="pmap")
    ap.add_argument("--log-every", type=int, default=5)
    ap.add_argument("--out", help="save the final parameters (npz) from process 0")
    args = ap.parse_args()
    if launched_by_mpi():
        jax.distributed.initialize()
    print(f"process {jax.process_index()} of {jax.process_count()}: "
          f"{jax.local_device_count()} of {jax.device_count()} devices", flush=True)
    t0 = time.perf_counter()
    params, loss = (train_pmap if args.mode == "pmap" else train_jit)(args.steps,
                                                                       args.log_every)
    leaves = [np.asarray(p) for p in jax.tree_util.tree_leaves(params)]
    if jax.process_index() == 0:
        print(f"{args.mode}: {args.steps} steps in {time.perf_counter() - t0:.2f} s, "
              f"final loss {loss:.6f}", flush=True)
        if args.out:
            np.savez(args.out, *leaves)
    if jax.distributed.is_initialized():
        jax.distributed.shutdown()


if __name__ == "__main__":
    main()
