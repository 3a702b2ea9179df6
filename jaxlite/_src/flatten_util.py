"""``ravel_pytree``: flatten a pytree of arrays into one 1-D array, and back."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes as _dt
from jaxlite._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """Ravel the leaves of ``pytree`` into one 1-D array.

    Returns ``(flat, unravel)``. ``flat`` has the dtype the leaves promote to (JAX's promotion
    of their dtypes, weak types ignored); ``unravel(flat)`` rebuilds a pytree of the same
    structure, shapes and leaf dtypes. ``unravel`` accepts only an array of ``flat``'s dtype and
    raises ``TypeError`` otherwise. Both directions are ordinary jaxlite operations, so they
    can be jitted, vmapped and differentiated.

    Example::

        >>> flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(3)})
        >>> flat.shape
        (7,)
    """
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.lax import namespace as lax

    leaves, treedef = tree_flatten(pytree)
    leaf_dtypes = [_dt.dtype(x, canonicalize=True) for x in leaves]
    shapes = [np.shape(x) for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    if leaves:
        to_dtype = np.dtype(_dt.result_type(*leaf_dtypes))
    else:
        to_dtype = _dt.canonicalize_dtype(np.float64)
    mixed = any(d != to_dtype for d in leaf_dtypes)

    if not leaves:
        flat = jnp.zeros((0,), to_dtype)
    else:
        parts = [jnp.ravel(lax.convert_element_type(x, to_dtype) if mixed else x)
                 for x in leaves]
        flat = parts[0] if len(parts) == 1 else jnp.concatenate(parts)

    def unravel(arr):
        """Rebuild the pytree ``ravel_pytree`` flattened from a 1-D array like ``flat``."""
        arr_dtype = _dt.dtype(arr, canonicalize=True)
        if arr_dtype != to_dtype:
            raise TypeError(f"unravel function given array of dtype {arr_dtype}, but expected "
                            f"dtype {to_dtype}")
        if not leaves:
            return tree_unflatten(treedef, [])
        chunks = lax.split(arr, sizes)
        outs = []
        for chunk, shape, d in zip(chunks, shapes, leaf_dtypes):
            x = jnp.reshape(chunk, shape)
            if mixed and d != to_dtype:
                x = lax.convert_element_type(x, d)
            outs.append(x)
        return tree_unflatten(treedef, outs)

    return flat, unravel
