"""jaxlite.scipy.fft (mirrors ``jax.scipy.fft``): dct, dctn, idct, idctn. Re-exports only."""
from jaxlite._src.scipy.fft import *  # noqa: F401,F403
