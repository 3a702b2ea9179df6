# Seed 000, "Automatic differentiation": grad through Python control flow, and third order.
# compare: exact
from jax import grad


def f(x):
    if x > 0:
        return 2 * x ** 3
    else:
        return 3 * x


x = -3.14

print(grad(f)(x))
print(grad(f)(-x))
print(grad(grad(grad(f)))(-x))
