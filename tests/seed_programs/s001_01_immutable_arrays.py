# Seed 001, "Mutating Immutable Arrays" and the closure interlude.
# compare: exact
import jax.numpy as jnp
import numpy as np

x = np.eye(2)
x[0, 0] = 2
x[:, -1] *= -3
print(repr(x))

x = jnp.eye(2)
try:
    x[0, 0] = 2
except TypeError:
    pass
else:
    raise TypeError('array is mutable')
x = x.at[0, 0].set(2)
x = x.at[:, -1].multiply(-3)
print(repr(x))


def create_counter():
    count = 0

    def inc():
        nonlocal count
        count += 1
        return count

    return inc


counter = create_counter()
print(', '.join(map(str, [counter(), counter(), counter()])))
