# Seed 002, "Use jit with sharding": PositionalSharding from a device array, device_put,
# visualize_array_sharding for several layouts, jit(cos) on sharded vs single-device data,
# pmap(cos), and jit(in_shardings=, out_shardings=) moving the result to another layout
# (512x512 instead of 4096x4096; device sets printed sorted, since set order follows hashing).
# golden: jax 0.4.30
# compare: exact
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import mesh_utils
from jax.sharding import PositionalSharding

dc = jax.device_count()
print(f"we have {dc} devices.")
xs = jax.random.normal(jax.random.key(42), (8 * dc * 8, 8 * dc * 8))
dmesh = mesh_utils.create_device_mesh((dc,))
dmesh = np.asarray(jax.devices()).reshape((dc,))
sharding = PositionalSharding(dmesh)
sharding = sharding.reshape((-1, 1))
print(sorted(xs.devices(), key=lambda d: d.id))
xs = jax.device_put(xs, sharding)
print(sorted(xs.devices(), key=lambda d: d.id))
jax.debug.visualize_array_sharding(xs)
xs = jax.device_put(xs, sharding.reshape(1, -1))
jax.debug.visualize_array_sharding(xs)
xs = jax.device_put(xs, sharding.reshape(dc // 2, -1))
jax.debug.visualize_array_sharding(xs)

xsc0 = jax.device_put(xs, jax.devices()[0])
cos = jax.jit(jnp.cos)
r = cos(xsc0).block_until_ready()
rr = cos(xs).block_until_ready()
print(type(r.sharding).__name__, sorted(d.id for d in r.devices()))
print(type(rr.sharding).__name__, sorted(d.id for d in rr.devices()))
print(np.allclose(np.asarray(r), np.asarray(rr)))
pcos = jax.pmap(jnp.cos)
pxs = xsc0.reshape(dc, -1, xsc0.shape[-1])
rrr = pcos(pxs).block_until_ready()
print(rrr.shape, np.allclose(np.asarray(rrr).reshape(r.shape), np.asarray(r)))

xs = jax.device_put(xs, sharding.reshape(dc, -1))


def f(x):
    return jnp.sin(x)


print("before:")
jax.debug.visualize_array_sharding(xs)
out = jax.jit(f, in_shardings=sharding.reshape(dc, -1),
              out_shardings=sharding.reshape(-1, dc))(xs)
print("after:")
jax.debug.visualize_array_sharding(out)
print(np.allclose(np.asarray(out), np.sin(np.asarray(xsc0)), atol=1e-6))
