# Seed 001, "vmap: No Batching Required": norms of 15 edges summed by loops and batched, and
# the spectral radius of random 3x3 matrices looped, jitted, vmapped and manually batched
# (24 matrices instead of 128). Timings removed; the results are printed instead.
# compare: close rtol=1e-6 atol=1e-6 -- float32 sums of norms in different orders (loop vs
#   reduction) and LAPACK geev eigenvalues of nonsymmetric matrices.
import jax
import jax.numpy as jnp


def randn(rng_key, shape, dtype=float):
    rng_key, subkey = jax.random.split(rng_key)
    rands = jax.random.normal(subkey, shape, dtype=dtype)
    return rng_key, rands


jit_randn = jax.jit(randn, static_argnums=(1, 2))
rng_key = jax.random.PRNGKey(0)
rng_key, edges = randn(rng_key, (15, 3))
norm_sum = 0
for edge in edges:
    norm_sum += jnp.linalg.norm(edge)
print(repr(norm_sum))
print(repr(sum(jnp.linalg.norm(edge) for edge in edges)))
print(repr(jnp.sum(jnp.array([jnp.linalg.norm(edge) for edge in edges]))))

norms = jnp.linalg.norm(edges, axis=-1)  # shape: (15,)
norm_sum = jnp.sum(norms)
print(norms.shape, repr(norm_sum))


def jax_spectral_radius(mat):
    eigvals = jnp.linalg.eigvals(mat)
    spectral_radius = jnp.max(jnp.abs(eigvals))
    return spectral_radius


rng_key, batch = jit_randn(rng_key, (24, 3, 3))
assert jax_spectral_radius(batch).shape != (24,)


def looped_spectral_radius(batch):
    return list(map(jax_spectral_radius, batch))


jit_looped_spectral_radius = jax.jit(looped_spectral_radius)
batched_spectral_radius = jax.vmap(jax_spectral_radius)
jit_batched_spectral_radius = jax.jit(batched_spectral_radius)


def jax_manually_batched_spectral_radius(mat):
    eigvals = jnp.linalg.eigvals(mat)
    spectral_radius = jnp.max(jnp.abs(eigvals), -1)
    return spectral_radius


jax_jit_manually_batched_spectral_radius = jax.jit(jax_manually_batched_spectral_radius)

looped = looped_spectral_radius(batch)
jit_looped = jit_looped_spectral_radius(batch)
print(type(jit_looped).__name__, len(jit_looped), repr(jit_looped[0]))
print(jnp.stack(looped)[:6])
print(jnp.stack(jit_looped)[:6])
print(batched_spectral_radius(batch)[:6])
print(jit_batched_spectral_radius(batch)[:6])
print(jax_manually_batched_spectral_radius(batch)[:6])
print(jax_jit_manually_batched_spectral_radius(batch)[:6])
