"""jaxlite.numpy: the NumPy API on jaxlite arrays (mirrors ``jax.numpy``). Re-exports only."""
from jaxlite._src.numpy.scalar_types import *  # noqa: F401,F403
from jaxlite._src.numpy.creation import *  # noqa: F401,F403
from jaxlite._src.numpy.spacing import *  # noqa: F401,F403
from jaxlite._src.numpy.ufuncs import *  # noqa: F401,F403
from jaxlite._src.numpy.reductions import *  # noqa: F401,F403
from jaxlite._src.numpy.shape_ops import *  # noqa: F401,F403
from jaxlite._src.numpy.sorting import *  # noqa: F401,F403
from jaxlite._src.numpy.linalg_ops import *  # noqa: F401,F403
from jaxlite._src.numpy.indexing import *  # noqa: F401,F403
from jaxlite._src.numpy.vectorize import *  # noqa: F401,F403
from jaxlite._src.numpy import array_methods as _array_methods  # noqa: F401  (installs methods)
from jaxlite._src.runtime.array import Array as ndarray  # noqa: F401
from jaxlite.numpy import linalg as linalg  # noqa: F401
from jaxlite.numpy import fft as fft  # noqa: F401
from jaxlite._src.numpy.extra_creation import *  # noqa: F401,F403
from jaxlite._src.numpy.extra_indexing import *  # noqa: F401,F403
from jaxlite._src.numpy.polynomial import *  # noqa: F401,F403
from jaxlite._src.numpy.windows_io import *  # noqa: F401,F403
from jaxlite._src.numpy.convolution import *  # noqa: F401,F403  (convolve, correlate)
from jaxlite._src.numpy.ufunc_objects import *  # noqa: F401,F403  (add, multiply, ... as jnp.ufunc)
