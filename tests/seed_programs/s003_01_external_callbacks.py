# Seed 003, "External Callbacks: The Simple Case": jax.debug.callback for debugging and
# jax.pure_callback for side-effect-free host code, eagerly, under jit, vmap and grad.
# compare: exact
import jax
import jax.numpy as jnp
import numpy as np


def python_fn(arg1, arg2):
    print("python_fn got", arg1, "and", arg2)


arg1, arg2 = jnp.arange(3.0), 2

# for debugging
jax.debug.callback(python_fn, arg1, arg2)


@jax.jit
def f(x, y):
    jax.debug.callback(python_fn, x, y)
    return x * y


print(f(arg1, arg2))
jax.effects_barrier()
jax.vmap(lambda x: jax.debug.callback(python_fn, x, arg2))(arg1)
jax.effects_barrier()


# for no-side-effect callbacks
def host_fn(x, n):
    return (np.asarray(x) ** np.asarray(n)).astype(np.float32)


shape, dtype = arg1.shape, arg1.dtype
out_shape = jax.ShapeDtypeStruct(shape, dtype)
print(out_shape)
print(jax.pure_callback(host_fn, out_shape, arg1, arg2))
print(jax.jit(lambda x: jax.pure_callback(host_fn, out_shape, x, arg2))(arg1))
print(jax.vmap(lambda x: jax.pure_callback(host_fn, jax.ShapeDtypeStruct((), dtype), x, arg2,
                                           vmap_method="sequential"))(arg1))
print(jax.make_jaxpr(lambda x: jax.pure_callback(host_fn, out_shape, x, arg2))(arg1))
try:
    jax.grad(lambda x: jax.pure_callback(host_fn, jax.ShapeDtypeStruct((), dtype), x, 2))(1.0)
except ValueError as e:
    print("ValueError:", e)
