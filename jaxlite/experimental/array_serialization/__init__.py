"""jaxlite.experimental.array_serialization (mirrors ``jax.experimental.array_serialization``):
arrays written to and read from TensorStore (an optional dependency; its submodules raise a
ModuleNotFoundError naming it when it is absent). Re-exports only."""
