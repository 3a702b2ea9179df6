# Seed 000: an MLP loss, 30 steps of eager grad descent, jit(loss), 30 steps of jit(grad),
# and per-example gradients with jit(vmap(grad(loss), in_axes=(None, 0))).
# Layer sizes [32, 64, 64, 10] and batch 16 instead of [784, 2048 x3, 10] and 128.
# compare: close rtol=1e-5 atol=1e-6 -- float32 matmuls (BLAS vs XLA summation order) and
#   60 gradient steps accumulate last-bit differences.
import jax.numpy as jnp
from jax import random, grad, jit, vmap


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.maximum(outputs, 0)
    return outputs


def loss(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    return jnp.sum((predictions - targets)**2)


def init_layer(key, n_in, n_out):
    k1, k2 = random.split(key)
    W = random.normal(k1, (n_in, n_out)) / jnp.sqrt(n_in)
    b = random.normal(k2, (n_out,))
    return W, b


def init_model(key, layer_sizes, batch_size):
    key, *keys = random.split(key, len(layer_sizes))
    params = list(map(init_layer, keys, layer_sizes[:-1], layer_sizes[1:]))

    key, *keys = random.split(key, 3)
    inputs = random.normal(keys[0], (batch_size, layer_sizes[0]))
    targets = random.normal(keys[1], (batch_size, layer_sizes[-1]))

    return params, (inputs, targets)


layer_sizes = [32, 64, 64, 10]
batch_size = 16

params, batch = init_model(random.PRNGKey(0), layer_sizes, batch_size)
print(loss(params, batch))

step_size = 1e-5

for _ in range(30):
    grads = grad(loss)(params, batch)
    params = [(W - step_size * dW, b - step_size * db)
              for (W, b), (dW, db) in zip(params, grads)]

print(loss(params, batch))

loss_jit = jit(loss)
print(loss_jit(params, batch))

gradfun = jit(grad(loss))

for _ in range(30):
    grads = gradfun(params, batch)
    params = [(W - step_size * dW, b - step_size * db)
              for (W, b), (dW, db) in zip(params, grads)]

print(loss_jit(params, batch))

perexample_grads = jit(vmap(grad(loss), in_axes=(None, 0)))
(dW, db), *_ = perexample_grads(params, batch)
print(dW.shape)
print(db.shape)
print(dW[3, :2, :3])
print(db[3, :4])
