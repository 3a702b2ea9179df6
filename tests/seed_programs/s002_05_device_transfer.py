# Seeds 000, 002 and 004: the device listing, and seed 002's "Transfer data between devices"
# on the single CPU device (the seed forces 8 host devices and uses devices("cpu")[1]; here
# index 0).
# compare: exact
import jax
import jax.numpy as jnp

x = jnp.ones((8, 8))

print("global devices:", jax.devices())
print("local devices:", jax.local_devices())
print("cpu devices:", jax.devices("cpu"))
print(jax.device_count(), jax.local_device_count(), jax.default_backend())
dev = jax.devices()[0]
print(str(dev), dev.platform, dev.device_kind, dev.id, dev.process_index)
print("x devices:", x.devices())
print("x device:", x.device)

y = jax.device_put(x, jax.devices("cpu")[0])
z = jax.device_get(y)
print("x devices:", x.devices())
print("y devices:", y.devices())
print("z type:", type(z))
print(z.dtype, z.shape, bool((z == 1).all()))
dc = jax.device_count()
print(f"we have {dc} devices.")
print(repr(jax.random.key(42)))
xs = jax.random.normal(jax.random.key(42), (8 * dc, 8 * dc))
print(xs.devices())
print(repr(xs[0]))
print(jax.tree_util.tree_map(lambda x: x.shape, {"a": xs, "b": (x, z)}))
