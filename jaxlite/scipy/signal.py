"""jaxlite.scipy.signal (mirrors ``jax.scipy.signal``): convolutions, detrending and spectral
analysis (stft, istft, csd, welch). Re-exports only."""
from jaxlite._src.scipy.signal import *  # noqa: F401,F403
from jaxlite._src.scipy.signal_spectral import *  # noqa: F401,F403
