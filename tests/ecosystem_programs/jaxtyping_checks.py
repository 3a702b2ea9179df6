# requires: jaxtyping
"""jaxtyping's array annotations on jaxlite arrays (isinstance checks, shape binding)."""
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, PyTree, Shaped, jaxtyped

x = jnp.ones((3, 4))
print(isinstance(x, Float[Array, "3 4"]), isinstance(x, Float[Array, "4 3"]),
      isinstance(x, Int[Array, "3 4"]), isinstance(jnp.arange(3), Int[Array, " n"]),
      isinstance(x, Shaped[Array, "..."]))


@jaxtyped(typechecker=None)
def f(a: Float[Array, "b n"], b: Float[Array, " n"]) -> Float[Array, " b"]:
    return a @ b


print(f(x, jnp.arange(4.0)))
print(jax.jit(f)(x, jnp.arange(4.0)))
print(isinstance({"a": x}, PyTree[Float[Array, "3 4"]]))
