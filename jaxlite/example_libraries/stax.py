"""jaxlite.example_libraries.stax (mirrors ``jax.example_libraries.stax``). Re-exports only."""
import functools  # noqa: F401  (JAX's stax has these modules as attributes too)
import math  # noqa: F401

import jaxlite.numpy as jnp  # noqa: F401
from jaxlite import lax, random  # noqa: F401
from jaxlite._src.example_libraries.stax import *  # noqa: F401,F403
