"""The jaxlite tour: ``python -m jaxlite.tour`` shows what jaxlite does, step by step.

jax.numpy on the CPU device, jit with its speedup and readable generated code, and
make_jaxpr's programs, grad, vmap'd per-example gradients, and finally a small network
trained with stax and adam, each next to NumPy where timing matters.
"""
from __future__ import annotations

import time

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp


def _time(fn, n=5):
    fn()
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _section(title):
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def main(steps: int | None = None):
    """Run the tour; ``steps`` sets the length of the final training run (default 2000)."""
    _section("jax.numpy on the CPU device")
    print("devices:", jax.devices())
    x = jnp.arange(12.0).reshape(3, 4)
    print("x =", repr(x))
    y = jnp.dot(x, jnp.cos(x.T))
    print("jnp.dot(x, jnp.cos(x.T))[:2, :2] =\n", y[:2, :2])
    print("indexing y[1:, ::-1, None].shape =", y[1:, ::-1, None].shape)
    print("arrays are immutable: x.at[0, 0].set(100.)[0] =", x.at[0, 0].set(100.0)[0])

    _section("jit: trace once, generate NumPy code, run fast")
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [(jnp.asarray(rng.standard_normal((m, n), dtype=np.float32) / np.sqrt(m)),
               jnp.asarray(rng.standard_normal(n, dtype=np.float32)))
              for m, n in zip(sizes[:-1], sizes[1:])]
    batch = (jnp.asarray(rng.standard_normal((128, 784), dtype=np.float32)),
             jnp.asarray(rng.standard_normal((128, 10), dtype=np.float32)))

    def loss(params, batch):
        inputs, targets = batch
        for w, b in params:
            outputs = jnp.dot(inputs, w) + b
            inputs = jnp.maximum(outputs, 0)
        return jnp.sum((outputs - targets) ** 2)

    loss_jit = jax.jit(loss)
    t0 = time.perf_counter()
    print("loss =", loss_jit(params, batch))
    print(f"first jit call (trace + compile + run): {1e3 * (time.perf_counter() - t0):.1f} ms")
    t_eager = _time(lambda: loss(params, batch))
    t_jit = _time(lambda: loss_jit(params, batch))
    np_params = [(np.asarray(w), np.asarray(b)) for w, b in params]
    np_batch = tuple(np.asarray(a) for a in batch)

    def np_loss():
        inputs, targets = np_batch
        for w, b in np_params:
            outputs = inputs @ w + b
            inputs = np.maximum(outputs, 0)
        return np.sum((outputs - targets) ** 2)

    t_np = _time(np_loss)
    print(f"MLP loss: eager {t_eager * 1e3:.2f} ms, jit {t_jit * 1e3:.2f} ms, "
          f"NumPy {t_np * 1e3:.2f} ms")

    def small(x):
        return jnp.sum(jnp.tanh(x) * 2.0 + jnp.sin(x) ** 2)

    print("\nThe code jit generated for a small function (readable, steppable in pdb):")
    print(jax.jit(small).lower(jnp.ones(3)).compile().as_text())

    _section("make_jaxpr: the program jaxlite traced")

    def l1_distance(x, y):
        return jnp.sum(jnp.abs(x - y))

    print(jax.make_jaxpr(l1_distance)(jnp.ones(3), jnp.ones(3)))
    print("vmap(vmap(l1_distance)) is one batched program, not a loop:")
    print(jax.make_jaxpr(jax.vmap(jax.vmap(l1_distance, (0, None)), (None, 0)))(
        jnp.ones((3, 4)), jnp.ones((5, 4))))

    _section("grad: derivatives of Python functions, control flow included")

    def f(x):
        if x > 0:
            return 2 * x ** 3
        return 3 * x

    print("grad(f)(-3.14) =", jax.grad(f)(-3.14), "  grad(f)(3.14) =", jax.grad(f)(3.14))
    print("grad(grad(grad(f)))(3.14) =", jax.grad(jax.grad(jax.grad(f)))(3.14))
    grad_jit = jax.jit(jax.grad(loss))
    t0 = time.perf_counter()
    grad_jit(params, batch)
    print(f"jit(grad(loss)) of the MLP: first call {1e3 * (time.perf_counter() - t0):.1f} ms, "
          f"then {_time(lambda: grad_jit(params, batch)) * 1e3:.2f} ms per call")
    n_dots = str(jax.make_jaxpr(jax.grad(loss))(params, batch)).count("dot_general")
    print(f"its jaxpr holds {n_dots} dot_generals: 3 forward, 5 backward (no wasted work)")

    _section("vmap: per-example gradients")
    per_example = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0)))
    xs, ys = batch
    one_batch = (xs[:, None], ys[:, None])
    (dW, db), *_ = per_example(params, one_batch)
    print("per-example gradient of the first layer:", dW.shape, db.shape)
    t_pe = _time(lambda: per_example(params, one_batch), n=3)
    print(f"jit(vmap(grad)) over 128 examples: {t_pe * 1e3:.1f} ms")

    _section("Training: an MLP learns spectral radii (seed 001's case study)")
    from jaxlite._tour_training import run
    run(2000 if steps is None else steps)


if __name__ == "__main__":
    main()
