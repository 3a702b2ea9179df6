"""jaxlite's error classes, mirroring ``jax.errors``.

Each class's docstring explains when it is raised and how to fix the code; messages name the
user's source line and the traced argument involved where that is known.
"""
from __future__ import annotations

__all__ = [
    "JAXTypeError", "JAXIndexError", "ConcretizationTypeError", "NonConcreteBooleanIndexError",
    "TracerArrayConversionError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "UnexpectedTracerError", "KeyReuseError", "JaxRuntimeError", "InvalidInputException",
    "InconclusiveDimensionOperation", "ShardingTypeError", "CustomVJPException",
]

_DOCS = "https://docs.jax.dev/en/latest/errors.html"


class JAXTypeError(TypeError):
    """Base class for jaxlite's TypeErrors about tracers."""

    def __init__(self, message: str):
        anchor = type(self).__name__.lower()
        super().__init__(f"{message}\nSee {_DOCS}#jax.errors.{type(self).__name__} ({anchor})")


class JAXIndexError(IndexError):
    """Base class for jaxlite's IndexErrors about tracers."""

    def __init__(self, message: str):
        super().__init__(f"{message}\nSee {_DOCS}#jax.errors.{type(self).__name__}")


class ConcretizationTypeError(JAXTypeError):
    """A concrete Python value was needed from a traced (abstract) value.

    Happens under ``jit`` (and other staging transformations) when code branches on, or converts
    to a Python value, something that depends on a traced argument. Fixes: mark the argument
    static with ``static_argnums``/``static_argnames``, use ``jnp.where`` or ``lax.cond`` for
    value-dependent choices, or move the computation outside ``jit``.
    """

    def __init__(self, tracer, context: str = ""):
        from jaxlite._src.core.trace import describe_tracer
        super().__init__(
            f"Abstract tracer value encountered where concrete value is expected: "
            f"{describe_tracer(tracer)}\n{context}".rstrip())


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing (``x[x > 0]``) was used on a traced mask.

    The result's shape would depend on the data, which jit cannot express. Use
    ``jnp.where(mask, x, fill)`` to keep the shape, or pass ``size=`` to ``jnp.nonzero``.
    """

    def __init__(self, tracer):
        from jaxlite._src.core.trace import describe_tracer
        super().__init__(
            "Array boolean indices must be concrete; got "
            f"{describe_tracer(tracer)}\nBoolean-mask indexing gives a result whose shape "
            "depends on the data, which cannot be traced. Use jnp.where(mask, x, 0) to keep "
            "the shape, or jnp.nonzero(mask, size=N) with a static size.")


class TracerArrayConversionError(JAXTypeError):
    """A traced value was converted to a NumPy array (``np.asarray(tracer)``).

    Use ``jax.numpy`` functions instead of NumPy ones on traced values, or move the code
    outside ``jit``; for host-side callbacks use ``jax.pure_callback``.
    """

    def __init__(self, tracer):
        from jaxlite._src.core.trace import describe_tracer
        super().__init__(
            "The numpy.ndarray conversion method __array__() was called on "
            f"{describe_tracer(tracer)}\nThis happens when a NumPy function (np.*) is applied "
            "to a traced value. Use the jax.numpy equivalent (jnp.*) instead.")


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` (an ``if``, ``while``, ``and``/``or``) was applied to a traced value.

    Use ``jnp.where``/``lax.cond``/``lax.while_loop`` for value-dependent control flow, or make
    the argument static with ``static_argnums``.
    """

    def __init__(self, tracer):
        from jaxlite._src.core.trace import describe_tracer
        JAXTypeError.__init__(
            self,
            "Attempted boolean conversion of traced array with shape "
            f"{tracer.aval.str_short()}.\n{describe_tracer(tracer)}\nFix: use jnp.where(cond, "
            "a, b) or lax.cond for value-dependent choices, or mark the argument static with "
            "jit(..., static_argnums=...).")


class TracerIntegerConversionError(JAXTypeError):
    """``int()``/``__index__`` was applied to a traced value (e.g. used as a Python index or size).

    Make the argument static (``static_argnums``) or keep the value as an array
    (e.g. ``lax.dynamic_slice`` instead of Python slicing).
    """

    def __init__(self, tracer):
        from jaxlite._src.core.trace import describe_tracer
        super().__init__(
            "The __index__() method was called on traced array with shape "
            f"{tracer.aval.str_short()}.\n{describe_tracer(tracer)}\nFix: mark the argument "
            "static with jit(..., static_argnums=...), or use lax.dynamic_slice / "
            "lax.dynamic_index_in_dim for data-dependent indexing.")


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that created it (a leaked tracer).

    Typically a traced value was stored in a global, a closure or an object attribute during
    ``jit``/``grad``/``vmap`` tracing and used after the transformation finished. Return values
    from transformed functions explicitly instead of storing them as side effects.
    """

    def __init__(self, message: str):
        super().__init__(message + f"\nSee {_DOCS}#jax.errors.UnexpectedTracerError")


class CustomVJPException(Exception):
    """A ``custom_vjp`` function was differentiated with respect to a value it closes over
    (JAX's ``jax._src.interpreters.ad.CustomVJPException``).

    Raised when the call was staged (under ``jit``, a loop body, ...) with a closed-over
    traced value that the enclosing differentiation perturbs: the custom rule only gives the
    derivative with respect to the function's explicit arguments. Pass the value into the
    ``custom_vjp`` function as an argument and extend its ``fwd``/``bwd`` rules.
    """

    def __init__(self):
        super().__init__(
            "Detected differentiation of a custom_vjp function with respect to a closed-over "
            "value. That isn't supported because the custom VJP rule only specifies how to "
            "differentiate the custom_vjp function with respect to explicit input parameters. "
            "Try passing the closed-over value into the custom_vjp function as an argument, "
            "and adapting the custom_vjp fwd and bwd rules.")


class KeyReuseError(RuntimeError):
    """A PRNG key was used twice (raised only when key-reuse checking is enabled)."""


class JaxRuntimeError(RuntimeError):
    """An error raised while executing a compiled computation."""


class InvalidInputException(ValueError):
    """Invalid input given to a jaxlite API."""


class InconclusiveDimensionOperation(Exception):
    """Raised when we cannot conclusively compute with symbolic dimensions.

    JAX raises it for shape-polymorphic (``jax.export`` symbolic) dimensions when a
    comparison or arithmetic result depends on the unknown value of a dimension variable.
    jaxlite traces with concrete shapes only, so it does not raise it itself; the class
    exists so that code catching it works unchanged.
    """


class ShardingTypeError(Exception):
    """An operation's result sharding cannot be typed (JAX's sharding in types, over mesh
    axes of ``AxisType.Explicit``): operands split in conflicting ways, a dimension the
    operation needs whole that is split, or a result whose sharding is ambiguous. The message
    says how to resolve it: an ``out_sharding=`` argument, ``jax.sharding.reshard`` of an
    operand, or ``jax.sharding.auto_axes`` to let the compiler choose."""


def __getattr__(name):
    # ``JaxprTypeError`` lives with the IR's typechecker (which raises it); imported lazily
    # because the IR module imports this one.
    if name == "JaxprTypeError":
        from jaxlite._src.core.ir import JaxprTypeError
        return JaxprTypeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
