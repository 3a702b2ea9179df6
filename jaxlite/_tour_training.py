"""The tour's last step: seed 001's case study, an MLP taught to compute spectral radii.

stax builds the model (Dense(64)/Relu three times, then Dense(1)), vmap batches it, the
target is ``max(abs(eigvals(m)))`` of random complex 2x2 matrices, and adam(3e-4) trains it
from the gradient of the mean absolute error (conjugated, for steepest descent on complex
inputs). The same program runs unchanged on JAX and prints the same losses.
"""
from __future__ import annotations

import sys
import time

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers, stax


def _progress(step, steps, t0, width=30):
    """A one-line progress bar on stderr (only when it is a terminal)."""
    if not sys.stderr.isatty():
        return
    done = (step + 1) * width // steps
    rate = (step + 1) / max(time.perf_counter() - t0, 1e-9)
    sys.stderr.write(f"\r  [{'#' * done}{'.' * (width - done)}] {step + 1}/{steps} "
                     f"({rate:.0f} steps/s)")
    if step + 1 == steps:
        sys.stderr.write("\r" + " " * (width + 40) + "\r")
    sys.stderr.flush()


def spectral_radius(mat):
    """The largest eigenvalue magnitude of a square matrix."""
    return jnp.max(jnp.abs(jnp.linalg.eigvals(mat)))


def _flatten():
    """A stax layer flattening one example (written by hand in the seed)."""
    def init_fun(rng_key, input_shape):
        return (int(jnp.prod(jnp.array(list(input_shape)))),), ()

    def apply_fun(params, inputs, **kwargs):
        return inputs.ravel()
    return init_fun, apply_fun


def train_spectral_radius(steps=2000, batch_size=64, seed=0, log=print):
    """Train the seed's MLP for ``steps`` adam steps; returns (losses, params, model)."""
    input_shape = (2, 2)
    rng_key = jax.random.PRNGKey(seed)

    @jax.jit
    def randn(rng_key):
        rng_key, subkey = jax.random.split(rng_key)
        return rng_key, jax.random.normal(subkey, (batch_size,) + input_shape, dtype=complex)

    model_init, model = stax.serial(_flatten(), stax.Dense(64), stax.Relu, stax.Dense(64),
                                    stax.Relu, stax.Dense(64), stax.Relu, stax.Dense(1))
    model = jax.vmap(model, in_axes=(None, 0))   # handle a batch of matrices
    rng_key, subkey = jax.random.split(rng_key)
    _, params = model_init(subkey, input_shape)
    opt_init, opt_update, get_params = optimizers.adam(3e-4)
    batched_radius = jax.vmap(spectral_radius)

    def batch_loss(params, batch):
        return jnp.mean(jnp.abs(model(params, batch) - batched_radius(batch)))

    @jax.jit
    def train_batch(step, opt_state, batch):
        loss, grad = jax.value_and_grad(batch_loss)(get_params(opt_state), batch)
        grad = jax.tree_util.tree_map(jnp.conj, grad)   # steepest descent on complex inputs
        return opt_update(step, grad, opt_state), loss

    opt_state = opt_init(params)
    losses, every = [], max(1, steps // 10)
    t0 = time.perf_counter()
    for step in range(steps):
        rng_key, batch = randn(rng_key)
        opt_state, loss = train_batch(step, opt_state, batch)
        losses.append(float(loss))
        if step % every == 0 or step == steps - 1:
            recent = losses[-every:]
            log(f"step {step:5d}  loss {losses[-1]:.4f}  (mean of the last {len(recent):4d}: "
                f"{sum(recent) / len(recent):.4f})")
        _progress(step, steps, t0)
    return losses, get_params(opt_state), jax.jit(model)


def run(steps=2000):
    """The tour section: train, report the time and compare a prediction with the truth."""
    t0 = time.perf_counter()
    losses, params, model = train_spectral_radius(steps)
    took = time.perf_counter() - t0
    print(f"{steps} adam steps (batch 64, jit(value_and_grad) of a vmapped stax model) in "
          f"{took:.1f} s: {1e3 * took / steps:.2f} ms per step")
    m = jnp.array([[1.0, -1.0], [1.0, 1.0]])
    print(f"spectral radius of [[1, -1], [1, 1]]: exact {spectral_radius(m).item():.4f}, "
          f"model {model(params, m[None])[0].item():.4f}")
    return losses
