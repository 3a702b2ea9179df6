# Seed 002, "JIT": a linear model trained by grad on a dict of params, eagerly and with
# jax.jit(train_step), 50 steps each. Timings removed; rich.print -> print.
# compare: exact
import jax
import jax.numpy as jnp


def model(params, x):
  return params["w"] * x + params["b"]


def loss_function(params, x, y):
  return ((model(params, x) - y) ** 2).mean()


def train_step(params, x, y, lr):
  grads = jax.grad(loss_function)(params, x, y)
  return {"w": params["w"] - lr * grads["w"],
          "b": params["b"] - lr * grads["b"]}


def train(x, y, lr, num_steps):
  params = {"w": 0.0, "b": 0.0}
  for i in range(num_steps):
    params = train_step(params, x, y, lr)
  return params


train_step_jit = jax.jit(train_step)


def train_jit(x, y, lr, num_steps):
  params = {"w": 0.0, "b": 0.0}
  for i in range(num_steps):
    params = train_step_jit(params, x, y, lr)
  return params


xs = jnp.array([1, 2, 3, 4, 5]) / 2
ys = jnp.array([2, 4, 6, 8, 10]) / 2

p1 = train(xs, ys, 0.01, 50)
p2 = train_jit(xs, ys, 0.01, 50)

print("no jit:", p1)
print("jit:", p2)
