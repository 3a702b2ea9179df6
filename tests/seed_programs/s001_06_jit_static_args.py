# Seed 001, "JITting our randn" and "How does XLA sum up?": jit with static shape/dtype
# arguments, and sums of aranges eagerly and under jit with a static limit. Timings removed.
# compare: exact
import jax
import jax.numpy as jnp


def randn(rng_key, shape, dtype=float):
    rng_key, subkey = jax.random.split(rng_key)
    rands = jax.random.normal(subkey, shape, dtype=dtype)
    return rng_key, rands


rng_key = jax.random.PRNGKey(0)
jit_randn = jax.jit(randn, static_argnums=(1, 2))
key1, r1 = randn(rng_key, (100, 100))
key2, r2 = jit_randn(rng_key, (100, 100))
print(r2.shape, r2.dtype, bool((r1 == r2).all()), bool((key1 == key2).all()))
print(r2[:2, :3])
key3, r3 = jit_randn(rng_key, (2, 2), complex)
print(repr(r3))


def py_sum_up(limit):
    return sum(range(limit))


def jax_sum_up(limit):
    return jnp.sum(jnp.arange(limit))


def sum_up_const(limit):
    return limit * (limit - 1) // 2


limit = 50000
jit_sum_up = jax.jit(jax_sum_up, static_argnums=(0,))
print([
    ['function', 'result'],
    ['py_sum_up', py_sum_up(limit)],
    ['jax_sum_up', jax_sum_up(limit).item()],
    ['jit_sum_up', jit_sum_up(limit).item()],
    ['sum_up_const', sum_up_const(limit)],
])
print(repr(jax_sum_up(limit)), repr(jit_sum_up(limit)))
