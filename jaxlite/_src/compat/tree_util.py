"""``jax._src.tree_util``: jaxlite's pytree module, including the ``_registry`` view of
registered node types (type -> (to_iter, from_iter)) that flax reads, and JAX's
``prefix_errors`` / ``equality_errors`` (flax's struct tests import them)."""
from jaxlite._src.tree_util import *  # noqa: F401,F403
from jaxlite._src.tree_util.errors import (  # noqa: F401
    equality_errors,
    equality_errors_pytreedef,
    prefix_errors,
)
from jaxlite._src.tree_util.treedef import _registry  # noqa: F401
