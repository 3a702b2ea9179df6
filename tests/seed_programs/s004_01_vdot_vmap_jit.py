# Seed 004, "Compare vmap and pmap", single-device parts: vdot, vmap over 2-D batches,
# reshaping by local_device_count, jit(vmap(dot)) and its jaxpr. The seed's 20_000_000 rows
# are 2000 here.
# compare: close rtol=1e-6 atol=1e-7 -- vmapped vdot of length-3 vectors: XLA's CPU dot
#   computes each as an FMA chain (fma(a2, b2, fma(a1, b1, a0*b0))), jaxlite's NumPy
#   contraction rounds every product, so about a third of the results differ in the last bit.
import jax
import jax.numpy as jnp
from jax import random

print(jax.local_devices())


def dot(v: jax.Array, u: jax.Array):
    return jnp.vdot(v, u)


print(repr(dot(jnp.ones(shape=(3,)), jnp.ones(shape=(3,)))))

arr = random.normal(random.PRNGKey(42), shape=(2_000, 3))
v = arr[:1_000, :]
u = arr[1_000:, :]
print((v.shape, u.shape))

dot_vmap = jax.vmap(dot)
res = dot_vmap(v, u)
print(res.shape)
print(res[:4])

v_parallel = v.reshape(jax.local_device_count(), -1, 3)
u_parallel = u.reshape(jax.local_device_count(), -1, 3)
print((v_parallel.shape, u_parallel.shape))
print(jax.make_jaxpr(dot)(v_parallel[0], u_parallel[0]))
res = jax.vmap(jax.vmap(dot))(v_parallel, u_parallel)
print(res.shape)


def dot(v1, v2):
    return jnp.vdot(v1, v2)


rng_key = random.PRNGKey(42)
vs = random.normal(rng_key, shape=(16, 3))
v1s = vs[:8, :]
v2s = vs[8:, :]

print(repr(jax.vmap(dot)(v1s, v2s)))

dot_v = jax.jit(jax.vmap(dot))
x = dot_v(v1s, v2s)
print(repr(x))
print(jax.make_jaxpr(dot_v)(v1s, v2s))
