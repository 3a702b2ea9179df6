# Seed 000, "Sharding an array across multiple devices" and "Computation follows sharding":
# PositionalSharding (removed from current JAX: the golden is jax 0.4.30's output), device_put,
# visualize_array_sharding, and the output shardings of sin and dot (2048x2048 instead of 8192).
# golden: jax 0.4.30
# compare: exact
import jax
import jax.numpy as jnp
import numpy as np

x = jax.random.normal(jax.random.PRNGKey(0), (2048, 2048))
jax.debug.visualize_array_sharding(x)

from jax.experimental import mesh_utils
from jax.sharding import PositionalSharding
devices = mesh_utils.create_device_mesh((8,))
sharding = PositionalSharding(devices)

x = jax.device_put(x, sharding.reshape(8, 1))
jax.debug.visualize_array_sharding(x)
print(repr(sharding))
print(sharding.shape)
print(repr(sharding.reshape(8, 1)))
print(repr(sharding.reshape(4, 2)))
sharding = sharding.reshape(4, 2)
print(sharding)
y = jax.device_put(x, sharding)
jax.debug.visualize_array_sharding(y)
sharding = sharding.reshape(1, 8)
print(sharding)
y = jax.device_put(x, sharding)
jax.debug.visualize_array_sharding(y)
sharding = sharding.reshape(4, 2)
print(sharding.replicate(axis=0, keepdims=True))
y = jax.device_put(x, sharding.replicate(axis=0, keepdims=True))
jax.debug.visualize_array_sharding(y)
print(sharding.replicate(0).shape)
print(sharding.replicate(1).shape)
y = jax.device_put(x, sharding.replicate(1))
jax.debug.visualize_array_sharding(y)

sharding = PositionalSharding(mesh_utils.create_device_mesh((8,)))
x = jax.device_put(x, sharding.reshape(4, 2))
print('Input sharding:')
jax.debug.visualize_array_sharding(x)
y = jnp.sin(x)
print('Output sharding:')
jax.debug.visualize_array_sharding(y)

y = jax.device_put(x, sharding.reshape(4, 2).replicate(1))
z = jax.device_put(x, sharding.reshape(4, 2).replicate(0))
print('LHS sharding:')
jax.debug.visualize_array_sharding(y)
print('RHS sharding:')
jax.debug.visualize_array_sharding(z)
w = jnp.dot(y, z)
print('Output sharding:')
jax.debug.visualize_array_sharding(w)

x_single = jax.device_put(x, jax.devices()[0])
jax.debug.visualize_array_sharding(x_single)
print(np.allclose(jnp.dot(x_single, x_single), jnp.dot(y, z), rtol=1e-4, atol=1e-3))
try:
    jax.device_put(np.ones((5, 3)), sharding.reshape(4, 2))
except ValueError as e:
    print("ValueError:", e)
