# requires: equinox
"""equinox's internals built on JAX's extension API: error_if (a callback primitive),
checkpointed while loops (custom_vjp + closure conversion), unvmap primitives."""
import jax
import jax.numpy as jnp
import equinox as eqx
import equinox.internal as eqxi


def f(x):
    x = eqx.error_if(x, x < 0, "negative!")
    return x * 2


print(jax.jit(f)(jnp.array([1., 2.])))
try:
    jax.jit(f)(jnp.array([-1., 2.]))
except Exception as e:  # noqa: BLE001 - which exception class differs by backend
    print("raised", "negative!" in str(e))


def body(c):
    return c[0] + 1, c[1] * 1.1


out = eqxi.while_loop(lambda c: c[0] < 5, body, (0, jnp.array(1.)), max_steps=10,
                      kind="checkpointed")
print(out)
print(jax.grad(lambda x: eqxi.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x),
                                         (0, jnp.array(1.)), max_steps=10,
                                         kind="checkpointed")[1])(1.1))
print(jax.vmap(f)(jnp.array([1., 2.])))
print(eqxi.unvmap_any(jnp.array([False, True])), jax.vmap(eqxi.unvmap_all)(jnp.array([True, False])))
