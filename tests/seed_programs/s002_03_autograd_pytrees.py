# Seed 002, "autograd" and "vmap and pmap": grad, value_and_grad and hessian of scalar and
# dict-input functions, and vmap of a grad over a tuple of batched inputs.
# compare: exact
import jax
import jax.numpy as jnp


def f(x):
  return x ** 3


print(jax.grad(f)(10.0))  # 3x^2
print(jax.value_and_grad(f)(10.0))  # (x^3, 3x^2)
print(jax.grad(jax.grad(f))(10.0))  # (3x^2)' = 6x


def f(xy):
  return xy["x"] ** xy["y"]


x = jnp.array(2.)
y = jnp.array(3.)

print(jax.value_and_grad(f)({"x": x, "y": y}))
# Higher order derivatives
print(jax.hessian(f)({"x": x, "y": y}))


@jax.grad
def f2(xy):
  x, y = xy
  return x ** y


xs = jnp.array([2., 2.])
ys = jnp.array([3., 3.])

grads = []
for x, y in zip(xs, ys):
  grads.append(f2((x, y)))
print("For-loop:", grads)

vmap_grads = jax.vmap(f2)
print("vmap:", vmap_grads((xs, ys)))
