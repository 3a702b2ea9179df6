"""jaxlite.numpy.fft (mirrors ``jax.numpy.fft``). Re-exports only."""
from jaxlite._src.numpy.fft import *  # noqa: F401,F403
