"""jaxlite.scipy (mirrors ``jax.scipy``). Re-exports only."""
from jaxlite.scipy import cluster as cluster  # noqa: F401
from jaxlite.scipy import fft as fft  # noqa: F401
from jaxlite.scipy import integrate as integrate  # noqa: F401
from jaxlite.scipy import interpolate as interpolate  # noqa: F401
from jaxlite.scipy import linalg as linalg  # noqa: F401
from jaxlite.scipy import ndimage as ndimage  # noqa: F401
from jaxlite.scipy import signal as signal  # noqa: F401
from jaxlite.scipy import sparse as sparse  # noqa: F401
from jaxlite.scipy import special as special  # noqa: F401
from jaxlite.scipy import stats as stats  # noqa: F401
