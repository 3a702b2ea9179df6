"""jaxlite.experimental.checkify (mirrors ``jax.experimental.checkify``): functionalised
run-time checks. Re-exports only."""
from jaxlite._src.checkify.core import (  # noqa: F401
    check, checkify, check_error, debug_check)
from jaxlite._src.checkify.errors import (  # noqa: F401
    Error, ErrorCategory, JaxRuntimeError, init_error, user_checks, nan_checks, index_checks,
    div_checks, float_checks, automatic_checks, all_checks, DivisionByZeroError, NaNError,
    OOBError, FailedCheckError)
import jaxlite._src.checkify.rules as _rules  # noqa: F401,E402  (registers the rules)
