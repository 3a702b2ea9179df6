"""jaxlite.random (mirrors ``jax.random``): threefry-based PRNG keys and samplers,
bit-exact with JAX. Re-exports only."""
from jaxlite._src.random.keys import (  # noqa: F401
    key, PRNGKey, split, fold_in, clone, key_data, wrap_key_data, key_impl, key_dtype)
from jaxlite._src.random.samplers import (  # noqa: F401
    bits, uniform, normal, truncated_normal, bernoulli, randint, permutation, choice, gumbel,
    categorical, exponential, laplace, logistic, cauchy, rademacher, maxwell,
    double_sided_maxwell, weibull_min, rayleigh, wald, geometric, triangular, lognormal,
    pareto)
from jaxlite._src.random.multivariate import multivariate_normal, orthogonal  # noqa: F401
from jaxlite._src.random.distributions import (  # noqa: F401
    gamma, loggamma, beta, dirichlet, chisquare, f, t, generalized_normal, ball, poisson,
    binomial, multinomial)
from jaxlite._src.random.gamma import random_gamma_p  # noqa: F401
from jaxlite._src.core.dtypes import prng_key as _prng_key  # noqa: F401
