"""The tour runs end to end (with a short training run), and its training step gives the
losses JAX gives for the same program."""
import contextlib
import io

import numpy as np
import pytest

from jaxlite import tour
from jaxlite._tour_training import train_spectral_radius


def test_tour_runs_with_few_steps():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tour.main(steps=12)
    text = out.getvalue()
    for title in ("jax.numpy on the CPU device", "jit:", "make_jaxpr", "grad:", "vmap:",
                  "Training:"):
        assert title in text
    assert "12 adam steps" in text and "spectral radius of [[1, -1], [1, 1]]" in text


def test_training_loss_falls():
    losses, _, _ = train_spectral_radius(steps=150, log=lambda s: None)
    assert np.mean(losses[-30:]) < 0.8 * np.mean(losses[:10])


def _jax_losses(steps):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.example_libraries import optimizers, stax

    def flatten():
        return (lambda k, s: ((int(np.prod(s)),), ()),
                lambda p, x, **kw: x.ravel())
    model_init, model = stax.serial(flatten(), stax.Dense(64), stax.Relu, stax.Dense(64),
                                    stax.Relu, stax.Dense(64), stax.Relu, stax.Dense(1))
    model = jax.vmap(model, in_axes=(None, 0))
    key = jax.random.PRNGKey(0)
    key, sub = jax.random.split(key)
    _, params = model_init(sub, (2, 2))
    opt_init, opt_update, get_params = optimizers.adam(3e-4)
    radius = jax.vmap(lambda m: jnp.max(jnp.abs(jnp.linalg.eigvals(m))))

    def loss_fn(p, b):
        return jnp.mean(jnp.abs(model(p, b) - radius(b)))

    @jax.jit
    def step_fn(i, state, b):
        loss, g = jax.value_and_grad(loss_fn)(get_params(state), b)
        return opt_update(i, jax.tree_util.tree_map(jnp.conj, g), state), loss

    state, losses = opt_init(params), []
    for i in range(steps):
        key, sub = jax.random.split(key)
        b = jax.random.normal(sub, (64, 2, 2), dtype=complex)
        state, loss = step_fn(i, state, b)
        losses.append(float(loss))
    return losses


def test_training_matches_jax():
    theirs = _jax_losses(25)
    ours, _, _ = train_spectral_radius(steps=25, log=lambda s: None)
    np.testing.assert_allclose(ours, theirs, rtol=2e-4)
