# Seed 001, "Randomness in JAX": threading a key through randn.
# compare: exact
import jax

seed = 0
rng_key = jax.random.PRNGKey(seed)


def randn(rng_key, shape, dtype=float):
    rng_key, subkey = jax.random.split(rng_key)
    rands = jax.random.normal(subkey, shape, dtype=dtype)
    return rng_key, rands


rng_key, rands = randn(rng_key, (2, 3))
print(repr(rands))

_, rands = randn(rng_key, (2, 3))
print(repr(rands))

rng_key, rands = randn(rng_key, (2, 3))
print(repr(rands))

rng_key, rands = randn(rng_key, (2, 3))
print(repr(rands))
print(repr(rng_key))
print(jax.random.split(rng_key, 3))
