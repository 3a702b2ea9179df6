"""jaxlite.export (mirrors ``jax.export``): exporting jitted functions as data. Re-exports
only."""
from jaxlite._src.export.exported import (  # noqa: F401
    DisabledSafetyCheck, Exported, export, deserialize, register_pytree_node_serialization,
    register_namedtuple_serialization, maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version, default_export_platform)
from jaxlite._src.export.shape_poly import (  # noqa: F401
    SymbolicScope, is_symbolic_dim, symbolic_shape, symbolic_args_specs)

__all__ = ["DisabledSafetyCheck", "Exported", "export", "deserialize",
           "register_pytree_node_serialization", "register_namedtuple_serialization",
           "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "default_export_platform",
           "SymbolicScope", "is_symbolic_dim", "symbolic_shape", "symbolic_args_specs"]
