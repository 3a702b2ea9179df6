"""jaxlite.experimental (mirrors ``jax.experimental``). Re-exports only."""
from jaxlite._src.config import enable_x64  # noqa: F401
from jaxlite.experimental import mesh_utils, shard_map  # noqa: F401


def disable_x64():
    """Context manager disabling 64-bit types within a ``with`` block."""
    return enable_x64(False)
