# requires: chex
import jax, jax.numpy as jnp, chex
@chex.dataclass
class P:
    a: chex.Array
    b: chex.Array
p = P(a=jnp.ones(3), b=jnp.zeros((2, 2)))
chex.assert_shape(p.a, (3,)); chex.assert_rank(p.b, 2); chex.assert_type(p.a, float)
chex.assert_trees_all_close(p, jax.tree_util.tree_map(lambda x: x * (1 + 1e-7), p))
@chex.chexify
@jax.jit
def f(x):
    chex.assert_tree_all_finite(x)
    return x * 2
print(jax.tree_util.tree_map(lambda x: x * 2, p))
@jax.jit
def g(x):
    chex.assert_max_traces(1)
    return x + 1
print(chex.assert_equal(1, 1), g(jnp.ones(2)))
try:
    chex.assert_shape(p.a, (4,))
except AssertionError as e:
    print("AssertionError", str(e)[:60])
