"""``jax.extend.core.primitives``: jaxlite's built-in primitive objects under JAX's
``<name>_p`` names (``sin_p``, ``dot_general_p``, ``pjit_p``, ``while_p`` ...), read from
the primitive registry once every primitive family is loaded."""
from __future__ import annotations

import jaxlite._src.api.checkpoint  # noqa: F401  (remat)
import jaxlite._src.debugging.callbacks  # noqa: F401  (registers the callback primitives)
import jaxlite._src.lax  # noqa: F401  (loads every primitive family)
import jaxlite._src.random  # noqa: F401
from jaxlite._src.core.primitive import registry

# JAX names of primitives whose jaxlite name differs from the JAX variable's stem. jaxlite
# stages every call of a closed jaxpr as ``jit``, so JAX's other call primitives (``call_p``,
# ``closed_call_p``) name that one primitive.
_ALIASES = {"jit": ("pjit_p", "jit_p", "call_p", "closed_call_p"),
            "add_any": ("add_jaxvals_p", "add_any_p"), "remat2": ("remat_p", "remat2_p")}


def _exported():
    out = {}
    for name, prim in registry.items():
        for var in _ALIASES.get(name, (name.replace("-", "_") + "_p",)):
            out[var] = prim
    return out


globals().update(_exported())
__all__ = sorted(_exported())
