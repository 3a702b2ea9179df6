"""jaxlite.ad_checkpoint (mirrors ``jax.ad_checkpoint``). Re-exports only."""
from jaxlite._src.api.checkpoint import (  # noqa: F401
    checkpoint, remat, checkpoint_name, checkpoint_policies)
