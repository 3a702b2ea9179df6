"""jaxlite.example_libraries (mirrors ``jax.example_libraries``). Re-exports only."""
