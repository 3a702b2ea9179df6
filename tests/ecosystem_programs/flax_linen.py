# requires: flax
import jax, jax.numpy as jnp, flax.linen as nn, optax
class M(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(8)(x); x = nn.relu(x); x = nn.LayerNorm()(x)
        return nn.Dense(1)(x)
m = M(); key = jax.random.PRNGKey(0)
X = jax.random.normal(key, (16, 3)); y = X.sum(1, keepdims=True)
params = m.init(key, X)
tx = optax.sgd(0.05); st = tx.init(params)
@jax.jit
def step(p, s):
    l, g = jax.value_and_grad(lambda p: jnp.mean((m.apply(p, X) - y) ** 2))(p)
    u, s = tx.update(g, s); return optax.apply_updates(p, u), s, l
for i in range(20): params, st, l = step(params, st)
print(float(l))
