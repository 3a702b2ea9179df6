"""The ``jax.lax`` namespace as code under ``jaxlite._src`` uses it:
``from jaxlite._src.lax import namespace as lax``.

It gathers lax's operators, the primitives they bind and ``stop_gradient``. The public
``jaxlite.lax`` re-exports all of it, plus the two lax functions defined above the lax layer
(``cumlogsumexp``, a scan of jnp.logaddexp, and ``rng_bit_generator``, with the other bit
generators in random/). Modules inside ``_src/lax`` import the module defining a name instead.
"""
from jaxlite._src.lax.elementwise import *  # noqa: F401,F403
from jaxlite._src.lax.shape import *  # noqa: F401,F403
from jaxlite._src.lax.reductions import *  # noqa: F401,F403
from jaxlite._src.lax.dot import *  # noqa: F401,F403
from jaxlite._src.lax.indexing import *  # noqa: F401,F403
from jaxlite._src.lax.sort import *  # noqa: F401,F403
from jaxlite._src.prims.elementwise import *  # noqa: F401,F403  (the *_p primitives)
from jaxlite._src.prims.shape import *  # noqa: F401,F403
from jaxlite._src.prims.dynamic_slice import *  # noqa: F401,F403
from jaxlite._src.prims.reductions import *  # noqa: F401,F403
from jaxlite._src.prims.dot import *  # noqa: F401,F403
from jaxlite._src.prims.gather import *  # noqa: F401,F403
from jaxlite._src.prims.scatter import *  # noqa: F401,F403
from jaxlite._src.prims.sort import *  # noqa: F401,F403
from jaxlite._src.api.custom_derivatives import stop_gradient  # noqa: F401
from jaxlite._src.prims.custom import stop_gradient_p  # noqa: F401
from jaxlite._src.lax.parallel import *  # noqa: F401,F403
from jaxlite._src.lax.control_flow import *  # noqa: F401,F403
from jaxlite._src.lax.solves import custom_linear_solve, custom_root  # noqa: F401
from jaxlite._src.lax.extras import *  # noqa: F401,F403
from jaxlite._src.lax.ragged import *  # noqa: F401,F403
from jaxlite._src.lax.conv_patches import *  # noqa: F401,F403
from jaxlite._src.lax.composite import composite  # noqa: F401
from jaxlite._src.prims.tokens import (  # noqa: F401
    create_token, create_token_p, after_all, after_all_p)
from jaxlite._src.prims.misc_ops import (  # noqa: F401
    mulhi_p, empty_p, optimization_barrier_p, reduce_precision_p)
from jaxlite._src.lax.special import *  # noqa: F401,F403
from jaxlite._src.prims.special import *  # noqa: F401,F403  (erf_p, lgamma_p, ...)
from jaxlite._src.prims.collectives import *  # noqa: F401,F403  (psum_p, ...)
from jaxlite._src.prims.control import cond_p, while_p  # noqa: F401
from jaxlite._src.prims.scan import scan_p  # noqa: F401
from jaxlite._src.prims.joins import *  # noqa: F401,F403  (split_p, stack_p, ...)
from jaxlite._src.lax.fft import *  # noqa: F401,F403  (fft, fft_p, FftType)
from jaxlite._src.lax.convolution import *  # noqa: F401,F403  (conv_general_dilated, ...)
from jaxlite._src.lax.windowed import *  # noqa: F401,F403  (reduce_window, ...)
from jaxlite._src.lax.parallel import axis_size  # noqa: F401  (axis_name, as jax.lax)
from jaxlite._src.lax.generic_reduce import *  # noqa: F401,F403  (reduce, approx_max_k, ...)


from jaxlite._src.deprecations import removed_attribute as _removed  # noqa: E402

_REMOVED = {
    "pvary": "jax.lax.pvary was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; use "
             "`jax.lax.pcast(..., to='varying')",
}


def _removed_attribute(name):
    """The AttributeError for ``jaxlite.lax.<name>`` (JAX's hint for names it removed)."""
    return _removed("jaxlite.lax", _REMOVED, name)


from jaxlite._src.prims.collectives_extra import ragged_all_to_all_p  # noqa: F401,E402
from jaxlite._src.prims.sharding_constraint import sharding_constraint_p  # noqa: F401,E402
