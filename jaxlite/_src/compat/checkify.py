"""``jax._src.checkify``: functionalised checks (``checkify``, ``Error``, the error sets)."""
from typing import TypeVar

from jaxlite._src.checkify.core import check, checkify, check_error, debug_check  # noqa: F401
from jaxlite._src.checkify.errors import (  # noqa: F401
    Error, JaxException, user_checks, nan_checks, index_checks, div_checks, float_checks,
    automatic_checks, all_checks, FailedCheckError)
import jaxlite._src.checkify.rules as _rules  # noqa: F401  (registers the rules)

Out = TypeVar("Out")
