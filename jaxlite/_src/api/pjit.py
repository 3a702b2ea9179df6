"""``jax.experimental.pjit.pjit``: JAX's former name of sharded ``jit`` (deprecated in JAX
0.10 in favour of ``jax.jit``, which takes the same arguments)."""
from __future__ import annotations

from jaxlite._src.api.jit import jit

__all__ = ["pjit", "PJIT_DEPRECATION"]

PJIT_DEPRECATION = ("jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` "
                    "instead.")


def pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None,
         static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
         device=None, backend=None, inline=False, compiler_options=None):
    """``jax.jit`` under its old name: ``in_shardings``/``out_shardings`` may be shardings
    or PartitionSpecs (resolved against the mesh set with ``jax.set_mesh`` or ``with
    mesh:``)."""
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings,
               static_argnums=static_argnums, static_argnames=static_argnames,
               donate_argnums=donate_argnums, donate_argnames=donate_argnames,
               keep_unused=keep_unused, device=device, backend=backend, inline=inline,
               compiler_options=compiler_options)
