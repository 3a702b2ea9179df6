"""jaxlite.numpy: the NumPy API on jaxlite arrays (mirrors ``jax.numpy``). Re-exports only."""
from jaxlite._src.numpy.namespace import *  # noqa: F401,F403
from jaxlite.numpy import linalg as linalg  # noqa: F401
from jaxlite.numpy import fft as fft  # noqa: F401


def __getattr__(name):
    from jaxlite._src.numpy.namespace import _removed_attribute
    raise _removed_attribute(name)
