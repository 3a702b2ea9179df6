"""``jax._src.dtypes``: jaxlite's dtype module (promotion, ``TypePromotionError``, ...)."""
from jaxlite._src.core.dtypes import *  # noqa: F401,F403
from jaxlite._src.core.dtypes import TypePromotionError  # noqa: F401
from jaxlite._src.core.dtypes import ExtendedDType  # noqa: F401
import numpy as _np

DType = _np.dtype
