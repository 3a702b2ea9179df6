"""jaxlite.experimental.mesh_utils (mirrors ``jax.experimental.mesh_utils``). Re-exports only."""
from jaxlite._src.sharding.mesh import create_device_mesh, create_hybrid_device_mesh  # noqa: F401
