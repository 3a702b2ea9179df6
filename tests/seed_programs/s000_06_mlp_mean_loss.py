# Seed 000, "Examples: neural networks" on one device: loss with jnp.mean, jit(loss),
# jit(grad(loss)), 30 SGD steps, with batch and params put on jax.devices()[0].
# Layer sizes [32, 128, 128, 10] and batch 32 instead of 8192s.
# compare: close rtol=1e-5 atol=1e-6 -- float32 matmuls summed in a different order than XLA.
import jax
import jax.numpy as jnp


def predict(params, inputs):
  for W, b in params:
    outputs = jnp.dot(inputs, W) + b
    inputs = jnp.maximum(outputs, 0)
  return outputs


def loss(params, batch):
  inputs, targets = batch
  predictions = predict(params, inputs)
  return jnp.mean(jnp.sum((predictions - targets)**2, axis=-1))


loss_jit = jax.jit(loss)
gradfun = jax.jit(jax.grad(loss))


def init_layer(key, n_in, n_out):
    k1, k2 = jax.random.split(key)
    W = jax.random.normal(k1, (n_in, n_out)) / jnp.sqrt(n_in)
    b = jax.random.normal(k2, (n_out,))
    return W, b


def init_model(key, layer_sizes, batch_size):
    key, *keys = jax.random.split(key, len(layer_sizes))
    params = list(map(init_layer, keys, layer_sizes[:-1], layer_sizes[1:]))

    key, *keys = jax.random.split(key, 3)
    inputs = jax.random.normal(keys[0], (batch_size, layer_sizes[0]))
    targets = jax.random.normal(keys[1], (batch_size, layer_sizes[-1]))

    return params, (inputs, targets)


layer_sizes = [32, 128, 128, 10]
batch_size = 32

params, batch = init_model(jax.random.PRNGKey(0), layer_sizes, batch_size)
batch = jax.device_put(batch, jax.devices()[0])
params = jax.device_put(params, jax.devices()[0])
print(type(params), type(params[0]), params[0][0].devices())
print(loss_jit(params, batch))

step_size = 1e-5

for _ in range(30):
  grads = gradfun(params, batch)
  params = [(W - step_size * dW, b - step_size * db)
            for (W, b), (dW, db) in zip(params, grads)]

print(loss_jit(params, batch))
