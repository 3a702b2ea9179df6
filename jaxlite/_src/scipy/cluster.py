"""jax.scipy.cluster.vq: vector quantisation (``vq``)."""
from __future__ import annotations

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.numpy.util import promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """Assign codes from a code book to a set of observations
    (``jax.scipy.cluster.vq.vq``).

    Each observation (a row of ``obs``, shape ``(M, N)``; a 1-D ``obs`` holds length-1
    observations) gets the index of the nearest row of ``code_book`` (shape ``(K, N)``) in
    Euclidean distance, the first one on ties. ``check_finite`` is accepted and ignored, as
    in JAX.

    Returns:
      ``(code, dist)``: int32 indices of shape ``(M,)`` and the distances to those codes.
    """
    obs, code_book = promote_dtypes_inexact(jnp.asarray(obs), jnp.asarray(code_book))
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError(f"vq: obs and code_book must be 1-D or 2-D arrays, got rank "
                         f"{obs.ndim}")
    sq = jnp.sum(jnp.square(obs[:, None, :] - code_book[None, :, :]), axis=-1)
    code = jnp.argmin(sq, axis=1)
    dist = jnp.sqrt(jnp.take_along_axis(sq, code[:, None], axis=1)[:, 0])
    return code, dist
