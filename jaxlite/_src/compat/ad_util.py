"""``jax._src.ad_util``: the AD values and the ``stop_gradient`` primitive."""
from jaxlite._src.prims.ad_util import Zero, add_tangents as add_jaxvals  # noqa: F401
from jaxlite._src.prims.custom import stop_gradient_p  # noqa: F401
