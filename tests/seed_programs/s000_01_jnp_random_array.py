# Seed 000, "jax.numpy on TPU (or GPU, or CPU)": a random matrix, its repr, shape and dtype,
# and its conversion to NumPy. The seed uses 8192x8192; 256x256 keeps the program fast (the
# repr is summarised with '...' either way).
# compare: exact (threefry bits and the normal transform are bit-exact with JAX)
import jax
import jax.numpy as jnp
from jax import random
import numpy as np

x = random.normal(random.PRNGKey(0), (256, 256))
print(repr(x))
print(x.shape)
print(x.dtype)

x_cpu = np.array(x)
print(type(x_cpu), x_cpu.dtype, x_cpu.shape)
print(x_cpu[:2, :4])
