# Seed 000 ("Limitations with jit: value-dependent Python control flow disallowed") and seed
# 001 ("No if x > 0, no jnp.unique, no y[y % 2 == 0] or y[:x]" under jit): the error
# classes JAX raises, and the fixes the seeds name (static_argnums, lax.cond).
# compare: exact
import functools

import jax
import jax.numpy as jnp
from jax import lax


def f(x):
    if x > 0:
        return 2 * x ** 3
    else:
        return 3 * x


def report(fn, *args):
    try:
        fn(*args)
    except Exception as e:
        print(type(e).__name__,
              isinstance(e, jax.errors.ConcretizationTypeError),
              isinstance(e, TypeError), isinstance(e, IndexError))
    else:
        print("no error")


report(jax.jit(f), 3.0)
report(jax.jit(lambda y: jnp.unique(y)), jnp.arange(4))
report(jax.jit(lambda y: y[y % 2 == 0]), jnp.arange(4))
report(jax.jit(lambda y, x: y[:x]), jnp.arange(4), 2)
report(jax.jit(lambda x: int(x)), 2.0)

print(jax.jit(f, static_argnums=0)(3.0))
print(jax.jit(lambda y, x: y[:x], static_argnums=1)(jnp.arange(4), 2))
print(jax.jit(lambda x: lax.cond(x > 0, lambda x: 2 * x ** 3, lambda x: 3 * x, x))(3.0))
print(jax.jit(lambda x: lax.cond(x > 0, lambda x: 2 * x ** 3, lambda x: 3 * x, x))(-3.0))
