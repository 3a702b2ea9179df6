# Seed 000: jnp.dot of a random matrix with cos of its transpose, then fancy indexing
# z = y[[0, 2, 1, 0], ..., ::-1, None]. 256x256 instead of 8192x8192.
# compare: close rtol=2e-6 atol=2e-5 -- a 256-term float32 dot product: XLA's CPU matmul and
#   NumPy's BLAS sum in different orders, so the last bits differ.
import jax
import jax.numpy as jnp
from jax import random

x = random.normal(random.PRNGKey(0), (256, 256))
y = jnp.dot(x, jnp.cos(x.T))
z = y[[0, 2, 1, 0], ..., ::-1, None]
print(z.shape, z.dtype)
print(z[:3, :3])
