# Seed 004, "Compare vmap and pmap" on 8 simulated devices: the backend, vdot under vmap and
# pmap, the error for a mapped axis larger than the device count (jaxlite words it as the
# seed shows), pmap(vmap(dot)), and the jaxprs of the jit/pmap/vmap compositions
# (1000 rows per device instead of 1.25M).
# compare: close rtol=1e-5 atol=1e-6 -- vdot sums 3 products in BLAS's order, not XLA's
import jax
import jax.numpy as jnp
from jax import random

try:
    from jax.lib import xla_bridge  # the seed's spelling (gone from current JAX)
    platform = xla_bridge.get_backend().platform
except ImportError:
    platform = jax.default_backend()
print(platform)
print(len(jax.local_devices()))


def dot(v: jax.Array, u: jax.Array):
    return jnp.vdot(v, u)


print(dot(jnp.ones(shape=(3,)), jnp.ones(shape=(3,))))
arr = random.normal(random.PRNGKey(42), shape=(16_000, 3))
v = arr[:8_000, :]
u = arr[8_000:, :]
print(v.shape, u.shape)
dot_vmap = jax.vmap(dot)
res = dot_vmap(v, u)
print(res.shape)
dot_pmap = jax.pmap(dot)
try:
    res = dot_pmap(v, u)
except ValueError as e:
    print("ValueError raised")
v_parallel = v.reshape(jax.local_device_count(), -1, 3)
u_parallel = u.reshape(jax.local_device_count(), -1, 3)
print(v_parallel.shape, u_parallel.shape)
res = dot_pmap(v_parallel, u_parallel)
print(res.shape)
print(jax.make_jaxpr(dot_pmap)(v_parallel, u_parallel))
dot_parallel = jax.pmap(jax.vmap(dot))
res = dot_parallel(v_parallel, u_parallel)
print(res.shape)

rng_key = random.PRNGKey(42)
vs = random.normal(rng_key, shape=(16, 3))
v1s = vs[:8, :]
v2s = vs[8:, :]
print(jax.vmap(dot)(v1s, v2s))
print(jax.pmap(dot)(v1s, v2s))
dot_v = jax.jit(jax.vmap(dot))
dot_pjo = jax.jit(jax.pmap(dot))
dot_pji = jax.pmap(jax.jit(dot))
dot_p = jax.pmap(dot)
for f in (dot_v, dot_pjo, dot_pji, dot_p):
    print(f(v1s, v2s))
for f in (dot_v, dot_pjo, dot_pji, dot_p):
    print(jax.make_jaxpr(f)(v1s, v2s))
