# Seed 002, "Transfer data between devices": the seed forces 8 host devices through XLA_FLAGS
# after `import jax` (honoured because the backend starts at first use), lists the devices,
# moves x to device 1 and back to the host. Then x split over all 8 devices (its device set
# prints in hash order: compared as a set).
# compare: exact
import jax
import jax.numpy as jnp
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

x = jnp.ones((8, 8))

#1. check devices
print("global devices:", jax.devices())
print("local devices:", jax.local_devices())
# you can specify the device type
print("cpu devices:", jax.devices("cpu"))

#2. check the device of x
print("x devices:", x.devices())

# Put x to a specific device
y = jax.device_put(x, jax.devices("cpu")[1])
# Get y back to host (numpy array)
z = jax.device_get(y)
print("x devices:", x.devices())
print("y devices:", y.devices())
print("z type:", type(z))

print(y.committed, x.committed, y.sharding)
print((y + 1).devices(), (y * x).devices(), type(jax.device_get({"y": y, "n": 1})["y"]))
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("i",))
w = jax.device_put(x, NamedSharding(mesh, P("i")))
print("w devices:", w.devices())
print(w.sharding)
print([(s.device.id, s.index) for s in w.addressable_shards[:2]])
print(type(jax.device_get(w)), bool((jax.device_get(w) == z).all()))
