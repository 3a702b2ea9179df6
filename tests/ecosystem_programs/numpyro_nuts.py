# requires: numpyro
import jax, jax.numpy as jnp, numpyro, numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS
def model(x, y=None):
    w = numpyro.sample("w", dist.Normal(0., 1.))
    b = numpyro.sample("b", dist.Normal(0., 1.))
    numpyro.sample("y", dist.Normal(w * x + b, 0.5), obs=y)
x = jnp.linspace(-1, 1, 20); y = 2 * x + 0.3
mcmc = MCMC(NUTS(model), num_warmup=50, num_samples=50, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), x, y)
s = mcmc.get_samples()
print(s["w"][:5], s["w"].mean(), s["b"].mean())
