# requires: equinox
import jax, jax.numpy as jnp, equinox as eqx, optax
key = jax.random.PRNGKey(0)
k1, k2 = jax.random.split(key)
model = eqx.nn.MLP(2, 1, 8, 2, key=k1)
X = jax.random.normal(k2, (16, 2)); y = jnp.sin(X[:, :1]) + X[:, 1:] ** 2
@eqx.filter_value_and_grad
def loss(m, x, y): return jnp.mean((jax.vmap(m)(x) - y) ** 2)
opt = optax.adam(1e-2)
state = opt.init(eqx.filter(model, eqx.is_array))
@eqx.filter_jit
def step(m, s):
    l, g = loss(m, X, y)
    u, s = opt.update(g, s, m)
    return eqx.apply_updates(m, u), s, l
for i in range(20):
    model, state, l = step(model, state)
print(float(l))
