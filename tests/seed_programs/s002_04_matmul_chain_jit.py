# Seed 002, "Performance": a chain of matmuls on NumPy, jnp and jit. The seed only prints
# timings; here the (removed) timings are replaced by checks that the three agree. The
# matrix is 100x100 scaled to [0, 0.02) so the chain of 11 products stays finite.
# compare: close rtol=1e-5 atol=1e-30 -- float32 matmul chains summed in different orders.
import jax
import jax.numpy as jnp
import numpy as np

np.random.seed(42)

arr = np.random.random(10000).reshape(-1, 100).astype("float32") * 0.02
jrr = jnp.array(arr)


def _func(x):
  return x @ x @ x @ x @ x @ x @ x @ x @ x @ x @ x


def func(x):
  return (_func(x) * _func(x) + _func(x) * _func(x)) / _func(x)


r_np = func(arr)
r_jnp = func(jrr).block_until_ready()
jit_func = jax.jit(func)
r_jit = jit_func(jrr).block_until_ready()
print(type(r_np).__name__, r_np.dtype, type(r_jnp).__name__, r_jnp.dtype, r_jit.shape)
print(r_jnp[:2, :3])
print(r_jit[:2, :3])
print(np.allclose(r_np, r_jnp, rtol=1e-4), np.allclose(r_np, r_jit, rtol=1e-4))
