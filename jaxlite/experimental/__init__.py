"""jaxlite.experimental (mirrors ``jax.experimental``). Re-exports only."""
from jaxlite._src.config import enable_x64  # noqa: F401
from jaxlite._src.debugging.callbacks import io_callback  # noqa: F401
from jaxlite.experimental import mesh_utils, shard_map, multihost_utils  # noqa: F401
from jaxlite._src.extend.hijax import cur_qdd  # noqa: F401


def disable_x64():
    """Context manager disabling 64-bit types within a ``with`` block."""
    return enable_x64(False)
