# Seed 002, "JAX is accelerated NumPy" and "Difference": printing jnp arrays, NumPy functions
# on jnp arrays and back, in-place NumPy updates vs .at[].set. (rich.print -> print.)
# compare: exact
import jax
import jax.numpy as jnp
import numpy as np

print("numpy:", np.asarray([1, 2, 3]))
print("jax:", jnp.asarray([1, 2, 3]))
print("jax->numpy:", np.std(jnp.arange(10)))
print("numpy->jax:", jnp.std(np.arange(10)))
print(repr(np.std(jnp.arange(10))), repr(jnp.std(np.arange(10))))

x = np.arange(10)
jx = jnp.arange(10)
print(f"Original: {x=}")
x[0] = 1
print(f"Inplace replace: {x=}")

jx = jx.at[0].set(1)
print(f"{jx=}")


def in_place_set(x, i, v):
    x[i] = v
    return x


in_place_set(x, 2, 10)
print(f"Inplace replace 2: {x=}")
