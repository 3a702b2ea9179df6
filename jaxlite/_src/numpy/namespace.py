"""The ``jax.numpy`` namespace as code under ``jaxlite._src`` uses it:
``from jaxlite._src.numpy import namespace as jnp``.

The public ``jaxlite.numpy`` re-exports it (with its own ``linalg`` and ``fft`` submodules).
Modules inside ``_src/numpy`` import the module defining a name instead, since this one
imports them all.
"""
from jaxlite._src.numpy.scalar_types import *  # noqa: F401,F403
from jaxlite._src.numpy.creation import *  # noqa: F401,F403
from jaxlite._src.numpy.spacing import *  # noqa: F401,F403
from jaxlite._src.numpy.ufuncs import *  # noqa: F401,F403
from jaxlite._src.numpy.ufuncs_float_parts import *  # noqa: F401,F403
from jaxlite._src.numpy.reductions import *  # noqa: F401,F403
from jaxlite._src.numpy.cumulative import *  # noqa: F401,F403
from jaxlite._src.numpy.statistics import *  # noqa: F401,F403
from jaxlite._src.numpy.differences import *  # noqa: F401,F403
from jaxlite._src.numpy.histograms import *  # noqa: F401,F403
from jaxlite._src.numpy.shape_ops import *  # noqa: F401,F403
from jaxlite._src.numpy.joining import *  # noqa: F401,F403
from jaxlite._src.numpy.array_edit import *  # noqa: F401,F403
from jaxlite._src.numpy.sorting import *  # noqa: F401,F403
from jaxlite._src.numpy.searching import *  # noqa: F401,F403
from jaxlite._src.numpy.setops import *  # noqa: F401,F403
from jaxlite._src.numpy.linalg_ops import *  # noqa: F401,F403
from jaxlite._src.numpy.indexing import *  # noqa: F401,F403
from jaxlite._src.numpy.vectorize import *  # noqa: F401,F403
from jaxlite._src.numpy import array_methods as _array_methods  # noqa: F401  (installs methods)
from jaxlite._src.runtime.array import Array as ndarray  # noqa: F401
from jaxlite._src.numpy.extra_creation import *  # noqa: F401,F403
from jaxlite._src.numpy.extra_indexing import *  # noqa: F401,F403
from jaxlite._src.numpy.polynomial import *  # noqa: F401,F403
from jaxlite._src.numpy.windows_io import *  # noqa: F401,F403
from jaxlite._src.numpy.convolution import *  # noqa: F401,F403  (convolve, correlate)
from jaxlite._src.numpy.ufunc_objects import *  # noqa: F401,F403  (add, multiply, ... as jnp.ufunc)

__all__ = sorted(n for n in dir() if not n.startswith("_"))

# jnp.linalg and jnp.fft for code under _src (the public package has its own submodules)
from jaxlite._src.numpy import fft, linalg  # noqa: F401,E402


from jaxlite._src.deprecations import removed_attribute as _removed  # noqa: E402

_REMOVED = {
    "fix": "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0. "
           "Use jax.numpy.trunc instead.",
}


def _removed_attribute(name):
    """The AttributeError for ``jaxlite.numpy.<name>`` (JAX's hint for names it removed)."""
    return _removed("jaxlite.numpy", _REMOVED, name)
