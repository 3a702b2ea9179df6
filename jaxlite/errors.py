"""jaxlite.errors (mirrors ``jax.errors``). Re-exports only."""
from jaxlite._src.core.errors import (  # noqa: F401
    ConcretizationTypeError, JaxRuntimeError, KeyReuseError, NonConcreteBooleanIndexError,
    TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
    UnexpectedTracerError, JAXTypeError, JAXIndexError, InvalidInputException,
    InconclusiveDimensionOperation)
from jaxlite._src.core.ir import JaxprTypeError  # noqa: F401
