# Seed 000, "Explicit SPMD parallelism with pmap" on 8 simulated devices: random matrices
# drawn per device, pmap(jnp.dot), the psum all-reduce (matrices 256x256 instead of 8192).
# compare: close rtol=1e-5 atol=1e-4 -- the matmul sums in BLAS's order, not XLA's
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax, pmap, random

print(jax.devices())
keys = random.split(random.PRNGKey(0), 8)
mats = pmap(lambda key: random.normal(key, (256, 256)))(keys)
print(mats.shape)
print(mats[3, :2, :4])
result = pmap(jnp.dot)(mats, mats)
print(result.shape)
print(result[5, :2, :4])
print(result.sharding)


@partial(pmap, axis_name='i')
def allreduce_sum(x):
    return lax.psum(x, 'i')


print(allreduce_sum(jnp.ones(8)))
