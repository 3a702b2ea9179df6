"""``jax._src.interpreters.pxla``: JAX's lowering of sharded computations to XLA
executables. jaxlite has no XLA executables, so of this module it keeps only ``Index`` (the
type of a shard's index); the executable machinery (result handlers, compile options, mesh
executables) raises AttributeError naming what is missing and why."""
from __future__ import annotations

__all__ = ["Index"]

# a shard's position in its array: an int, a slice, or a tuple of them (one per dimension)
Index = int | slice | tuple[int | slice, ...]

_XLA_ONLY = {
    "global_aval_to_result_handler", "global_avals_to_results_handler",
    "global_result_handlers", "create_compile_options", "MeshComputation", "MeshExecutable",
    "are_hlo_shardings_equal", "is_hlo_sharding_replicated", "op_sharding_to_indices",
}
_REMOVED = {"MapTracer", "PmapExecutable", "parallel_callable", "shard_args", "Chunked"}


def __getattr__(name):
    if name in _REMOVED:
        raise AttributeError(f"jax.interpreters.pxla.{name} was removed in JAX v0.10.0.")
    if name in _XLA_ONLY:
        raise AttributeError(
            f"jax.interpreters.pxla.{name} is part of XLA's executables (deprecated in JAX "
            "since v0.8.2), which jaxlite does not have: it runs programs on NumPy without "
            "compiling them to XLA. Use the public API (jax.jit, jax.device_put, "
            "jax.make_array_from_single_device_arrays) instead.")
    raise AttributeError(f"module 'jax.interpreters.pxla' (jaxlite) has no attribute {name!r}")
