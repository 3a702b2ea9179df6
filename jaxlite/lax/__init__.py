"""jaxlite.lax: the primitive-level operators (mirrors ``jax.lax``). Re-exports only."""
from jaxlite._src.lax.namespace import *  # noqa: F401,F403
from jaxlite._src.numpy.ufuncs import cumlogsumexp  # noqa: F401,E402  (a scan of jnp.logaddexp)
from jaxlite._src.random.rng_bit_generator import (  # noqa: F401,E402
    RandomAlgorithm, rng_bit_generator, rng_bit_generator_p)
from jaxlite.lax import linalg  # noqa: F401,E402  (jax.lax.linalg)
from jaxlite._src.random.gamma import random_gamma_grad  # noqa: F401,E402


def __getattr__(name):
    from jaxlite._src.lax.namespace import _removed_attribute
    raise _removed_attribute(name)
