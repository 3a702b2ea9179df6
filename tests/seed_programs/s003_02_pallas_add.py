# Seed 003, "Pallas How? Hello World" and "Pallas Why? Memory Pipeline": an add kernel over
# refs (loads and stores with NumPy indexing), lifted to a JAX function by pallas_call, first
# on whole arrays, then over a grid of (m, n) blocks chosen by BlockSpecs. On CPU the kernels
# run in interpret mode. The seed writes BlockSpec(index_map, block_shape), JAX's older order;
# JAX 0.10.2 takes (block_shape, index_map), as written here (jaxlite accepts both).
# compare: exact
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def add_kernel(x_ref, y_ref, out_ref):
    x = x_ref[:, :]
    y = y_ref[:, :]
    out = x + y
    out_ref[:, :] = out


x, y = jnp.arange(24.0).reshape(4, 6), jnp.ones((4, 6))
assert x.shape == y.shape and x.ndim == 2
jax_add_kernel = pl.pallas_call(
    add_kernel,
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    interpret=True)
z = jax_add_kernel(x, y)
print(z)
print(jax.make_jaxpr(jax_add_kernel)(x, y))

M, N = 2, 3
m, n = x.shape[0] // M, x.shape[1] // N
jax_add_kernel = pl.pallas_call(
    add_kernel,
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    in_specs=[pl.BlockSpec((m, n), lambda i, j: (i, j)),
              pl.BlockSpec((m, n), lambda i, j: (i, j))],
    out_specs=pl.BlockSpec((m, n), lambda i, j: (i, j)),
    grid=(M, N),
    interpret=True)
print(jax_add_kernel(x, y))
print(jax.jit(jax_add_kernel)(x, 2 * y))
print(jax.vmap(jax_add_kernel)(jnp.stack([x, -x]), jnp.stack([y, y])))
print(jax.make_jaxpr(jax_add_kernel)(x, y))
