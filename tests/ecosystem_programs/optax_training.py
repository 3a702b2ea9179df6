# requires: optax
import jax, jax.numpy as jnp, optax
print(jax.__version__, jax.__version_info__)
key = jax.random.PRNGKey(0)
X = jax.random.normal(key, (32, 3)); w_true = jnp.array([1., -2., .5]); y = X @ w_true
params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
def loss(p): return jnp.mean((X @ p["w"] + p["b"] - y) ** 2)
opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(optax.cosine_decay_schedule(0.1, 100)))
state = opt.init(params)
@jax.jit
def step(p, s):
    l, g = jax.value_and_grad(loss)(p)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, l
for i in range(50):
    params, state, l = step(params, state)
print(float(l), params["w"])
